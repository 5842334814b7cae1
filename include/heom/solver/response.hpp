// Third-order (and first-order) optical response of an exciton aggregate in the impulsive limit, from the
// whole hierarchy: each interaction multiplies every ADO by a dipole operator from the left or the
// right, and between interactions the hierarchy propagates (Mukamel's Liouville pathways; the bath's
// correlations with the system come along).
//
//   heom::ExcitonManifolds m = heom::build_manifolds(aggregate);
//   heom::Propagator<Exec> propagator(exec, m.model, /*depth=*/3);
//   heom::ResponseOptions options;
//   options.waiting_times = {0.0, 100.0};
//   options.t1_step = options.t3_step = 5.0;
//   options.t1_points = options.t3_points = 64;
//   heom::ThirdOrderResponse r = heom::third_order_response(propagator, m, options);
#ifndef HEOM_SOLVER_RESPONSE_HPP
#define HEOM_SOLVER_RESPONSE_HPP

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/model/aggregate.hpp"
#include "heom/solver/response_options.hpp"
#include "heom/solver/hierarchy_state.hpp"
#include "heom/solver/observation.hpp"
#include "heom/solver/propagator.hpp"

namespace heom {

/// The third-order response of the aggregate whose manifolds `manifolds` are, propagated by
/// `propagator` (a propagator of manifolds.model: one model on one device, square ADO blocks, the even
/// hierarchy), from the ground state in equilibrium with the baths (|g><g|, every other ADO zero).
/// Per signal and first dipole component one propagation through the t1 points; from each t1 point one
/// through the waiting times per second interaction and second component; from each waiting time one
/// through t3 per pathway and component tuple (ResponseWork counts them). The bleach and stimulated
/// emission radiate in t3 from |e><g| (held as ground columns), and where the two-exciton states are
/// apart from the rest they run on the model without them (without_two_excitons), made here beside
/// `propagator`; otherwise stimulated emission and excited-state absorption share their first two
/// legs. `progress`, when given, sees the t3 propagations done and their total. Throws
/// heom::OptionError for options that are refused, heom::Error for a propagator that does not fit.
template <class ExecSpace>
ThirdOrderResponse third_order_response(const Propagator<ExecSpace>& propagator, const ExcitonManifolds& manifolds,
                                        const ResponseOptions& options,
                                        const std::function<void(std::int64_t, std::int64_t)>& progress = {});

/// The first-order response J(t) = tr[mu- exp(L t) (mu+ |g><g|)] at t = 0, step, ... (points of them),
/// averaged over orientations (the sum over the three components, / 3): the dipole correlation of the
/// absorption spectrum sigma(w) = Re int_0^inf J(t) exp(i w t) dt, by the same machinery.
template <class ExecSpace>
std::vector<complex> first_order_response(const Propagator<ExecSpace>& propagator, const ExcitonManifolds& manifolds,
                                          double step, int points);

}  // namespace heom

#include "heom/solver/detail/response_definitions.hpp"

#endif
