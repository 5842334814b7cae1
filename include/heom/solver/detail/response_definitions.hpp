// Definitions of heom::third_order_response and heom::first_order_response (response.hpp).
#ifndef HEOM_SOLVER_DETAIL_RESPONSE_DEFINITIONS_HPP
#define HEOM_SOLVER_DETAIL_RESPONSE_DEFINITIONS_HPP

#include <optional>
#include <string>
#include <vector>

#include "heom/core/to_device.hpp"
#include "heom/solver/response.hpp"

namespace heom {
namespace impl {

/// Throws heom::Error (after `what`) unless the propagator is one that a response runs on: of the
/// manifolds' dimension, one model on one device, square blocks, the even hierarchy.
template <class ExecSpace>
void check_response_propagator(const Propagator<ExecSpace>& propagator, const ExcitonManifolds& manifolds,
                               const std::string& what) {
  const int n = manifolds.dimension();
  if (propagator.model().dimension() != n)
    throw Error(what + ": the propagator's model has " + std::to_string(propagator.model().dimension()) +
                " levels but the manifolds " + std::to_string(n));
  if (propagator.members() != 1 || propagator.distribution())
    throw Error(what + ": one model on one device (not a batch or a split hierarchy)");
  if (propagator.options().generator.shape != AdoShape::square)
    throw Error(what + ": needs square blocks (the waiting time holds populations, not ground columns)");
  if (propagator.options().generator.parity != Parity::even) throw Error(what + ": needs the even hierarchy");
}

/// |g><g|: the ground state, in equilibrium with baths that do not couple to it.
inline Matrix ground_state(int n) {
  Matrix rho(n, n);
  rho(0, 0) = 1.0;
  return rho;
}

/// The dipole's parts of one Cartesian component: raising from g, raising from the one-exciton
/// manifold, and lowering (the adjoint of both), which the last field is traced against.
struct DipoleParts {
  Matrix raise_ground, raise_one, lower;
};

inline std::array<DipoleParts, 3> dipole_parts(const ExcitonManifolds& m) {
  std::array<DipoleParts, 3> parts;
  for (int c = 0; c < 3; ++c) {
    parts[c].raise_ground = m.raise_ground[c];
    parts[c].raise_one = m.raise_one[c];
    Matrix raise = m.raise_ground[c];
    raise += m.raise_one[c];
    parts[c].lower = raise.adjoint();
  }
  return parts;
}

/// The traced operator sum_l w_l mu-_l, weighting each component.
inline Matrix weighted_lower(const std::array<DipoleParts, 3>& parts, const std::array<double, 3>& w) {
  Matrix a(parts[0].lower.rows(), parts[0].lower.cols());
  for (int l = 0; l < 3; ++l) {
    if (w[l] == 0.0) continue;
    Matrix term = parts[l].lower;
    term *= w[l];
    a += term;
  }
  return a;
}

/// Column 0 of every ADO of `square` ([ado][n][n]) into `column` ([ado][n][1]).
template <class ExecSpace>
void copy_ground_columns(const ExecSpace& exec, const AdoView<ExecSpace>& square,
                         const Kokkos::View<device_complex***, Kokkos::LayoutRight,
                                            typename BackendTraits<ExecSpace>::device_type>& column) {
  const std::int64_t n = static_cast<std::int64_t>(square.extent(1));
  Kokkos::parallel_for(
      "heom::response::ground_columns",
      Kokkos::RangePolicy<ExecSpace>(exec, 0, static_cast<std::int64_t>(square.extent(0)) * n),
      KOKKOS_LAMBDA(const std::int64_t e) { column(e / n, e % n, 0) = square(e / n, e % n, 0); });
}

/// The propagator of `square`'s model, depth and options in the ground-column shape.
template <class ExecSpace>
Propagator<ExecSpace> ground_column_propagator(const Propagator<ExecSpace>& square) {
  SolverOptions options = square.options();
  options.generator.shape = AdoShape::ground_column;
  return Propagator<ExecSpace>(square.exec(), square.model(), square.hierarchy().depth(), options);
}

/// The legs of the response `r` asks for whose pathway `wanted` accepts, propagated by `propagator`
/// (of `manifolds`' model) for the component tuples `needed`, added into r.values; `done` counts the
/// t3 legs for `progress` (of `total`).
template <class ExecSpace, class Wanted>
void propagate_pathways(const Propagator<ExecSpace>& propagator, const ExcitonManifolds& manifolds,
                        const ComponentTuples& needed, const Polarization& polarization, const Wanted& wanted,
                        ThirdOrderResponse& r, std::int64_t& done, std::int64_t total,
                        const std::function<void(std::int64_t, std::int64_t)>& progress) {
  const std::array<DipoleParts, 3> dipole = dipole_parts(manifolds);
  // The operator traced after each component tuple (i, j, k): sum_l w_ijkl mu-_l.
  std::array<std::array<std::array<Matrix, 3>, 3>, 3> traced;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) {
        if (!needed[i][j][k]) continue;
        std::array<double, 3> w{};
        for (int l = 0; l < 3; ++l) w[l] = manifolds.has_component(l) ? polarization.weight(i, j, k, l) : 0.0;
        traced[i][j][k] = weighted_lower(dipole, w);
      }
  auto needs_prefix = [&](int i, int j) { return needed[i][j][0] || needed[i][j][1] || needed[i][j][2]; };
  // Which second interaction a pathway follows: the ground state's (bleach) or the excited one's.
  auto excited = [](Pathway p) { return p != Pathway::ground_state_bleach; };

  const int n = manifolds.dimension();
  HierarchyState<ExecSpace> x = propagator.make_state(), y = propagator.make_state(), z = propagator.make_state();
  Observation<ExecSpace> observation(propagator);
  // The bleach and stimulated emission radiate in t3 from |e><g|: each ADO's column 0 alone, n numbers
  // instead of n^2, propagated in the ground-column shape.
  bool radiate_from_ground = false;
  for (const Pathway p : r.pathways)
    radiate_from_ground = radiate_from_ground || (wanted(p) && p != Pathway::excited_state_absorption);
  std::optional<Propagator<ExecSpace>> columns;
  std::optional<HierarchyState<ExecSpace>> z_column;
  std::optional<Observation<ExecSpace>> column_observation;
  Kokkos::View<device_complex***, Kokkos::LayoutRight, typename BackendTraits<ExecSpace>::device_type> column_ados;
  if (radiate_from_ground) {
    columns.emplace(ground_column_propagator(propagator));
    z_column.emplace(columns->make_state());
    column_observation.emplace(*columns);
    column_ados = allocate<decltype(column_ados)>(propagator.exec(), "heom::response::column_ados",
                                                  columns->generator().num_ados(), n, 1);
  }
  std::vector<double> times(r.t3.size());
  for (std::size_t s = 0; s < r.signals.size(); ++s) {
    const bool rephasing = r.signals[s] == ResponseSignal::rephasing;
    for (int i = 0; i < 3; ++i) {
      bool used = false;
      for (int j = 0; j < 3; ++j) used = used || needs_prefix(i, j);
      if (!used) continue;
      // k1: the bra (rephasing: rho mu-) or the ket (non-rephasing: mu+ rho) leaves g.
      x.set_rho(ground_state(n));
      if (rephasing)
        x.apply_operator(dipole[i].lower, Side::right);
      else
        x.apply_operator(dipole[i].raise_ground, Side::left);
      ++r.propagations;
      for (std::size_t a = 0; a < r.t1.size(); ++a) {
        propagator.run_until(x, r.t1[a]);
        for (const bool second_excited : {false, true}) {
          bool any = false;
          for (const Pathway p : r.pathways) any = any || (wanted(p) && excited(p) == second_excited);
          if (!any) continue;
          for (int j = 0; j < 3; ++j) {
            if (!needs_prefix(i, j)) continue;
            // k2: back to g (bleach: the coherence's excited side returns) or on to the one-exciton
            // manifold (the other side is excited too): mu+ from the right or mu- from the left.
            y.set_ados(x.ados(), x.time());
            y.apply_operator(rephasing ? dipole[j].raise_ground : dipole[j].lower,
                             rephasing != second_excited ? Side::right : Side::left);
            ++r.propagations;
            for (std::size_t b = 0; b < r.waiting_times.size(); ++b) {
              const double t2_end = r.t1[a] + r.waiting_times[b];
              propagator.run_until(y, t2_end);
              for (std::size_t p = 0; p < r.pathways.size(); ++p) {
                const Pathway pathway = r.pathways[p];
                if (!wanted(pathway) || excited(pathway) != second_excited) continue;
                for (int k = 0; k < 3; ++k) {
                  if (!needed[i][j][k]) continue;
                  // k3: into the coherence that radiates in t3 (|e><g|, or |f><e'| for absorption).
                  z.set_ados(y.ados(), y.time());
                  switch (pathway) {
                    case Pathway::ground_state_bleach:
                      z.apply_operator(dipole[k].raise_ground, Side::left);  // |g><g| -> |e><g|
                      break;
                    case Pathway::stimulated_emission:
                      z.apply_operator(dipole[k].raise_ground, Side::right);  // |e><e'| -> |e><g|
                      break;
                    case Pathway::excited_state_absorption:
                      z.apply_operator(dipole[k].raise_one, Side::left);  // |e><e'| -> |f><e'|
                      break;
                  }
                  ++r.propagations;
                  for (std::size_t c = 0; c < r.t3.size(); ++c) times[c] = t2_end + r.t3[c];
                  const Matrix& a_op = traced[i][j][k];
                  const double sign = pathway == Pathway::excited_state_absorption ? -1.0 : 1.0;
                  std::size_t c = 0;
                  const auto observe = [&](const Snapshot<ExecSpace>& snap) {
                    r.values[r.index(static_cast<int>(s), static_cast<int>(p), static_cast<int>(b), static_cast<int>(a),
                                     static_cast<int>(c++))] += sign * (a_op * snap.rho()).trace();
                  };
                  if (pathway == Pathway::excited_state_absorption) {
                    propagator.run(z, times, observation, observe);
                  } else {
                    copy_ground_columns(propagator.exec(), z.ados(), column_ados);
                    z_column->set_ados(column_ados, z.time());
                    columns->run(*z_column, times, *column_observation, observe);
                  }
                  if (progress) progress(++done, total);
                }
              }
            }
          }
        }
      }
    }
  }
  for (const HierarchyState<ExecSpace>* state : {&x, &y, &z, z_column ? &*z_column : nullptr}) {
    if (!state) continue;
    r.statistics.steps += state->statistics().steps;
    r.statistics.rejected += state->statistics().rejected;
    r.statistics.rhs_evaluations += state->statistics().rhs_evaluations;
  }
}

}  // namespace impl

template <class ExecSpace>
ThirdOrderResponse third_order_response(const Propagator<ExecSpace>& propagator, const ExcitonManifolds& manifolds,
                                        const ResponseOptions& options,
                                        const std::function<void(std::int64_t, std::int64_t)>& progress) {
  const std::string what = "third_order_response";
  impl::check_response_propagator(propagator, manifolds, what);
  require_valid(options.validate(), what);
  ThirdOrderResponse r = zero_response(manifolds, options);
  const ComponentTuples needed = needed_components(manifolds, options.polarization);
  const ResponseWork work = response_work(manifolds, options);
  std::int64_t done = 0;
  if (work.one_exciton_levels > 0) {
    // The bleach and stimulated emission never visit the two-exciton states: they run on the model
    // without them (FMO: 8 levels instead of 29), excited-state absorption on the whole one.
    const ExcitonManifolds one = *without_two_excitons(manifolds);
    const Propagator<ExecSpace> small(propagator.exec(), one.model, propagator.hierarchy().depth(),
                                      propagator.options());
    impl::propagate_pathways(
        small, one, needed, options.polarization, [](Pathway p) { return p != Pathway::excited_state_absorption; }, r,
        done, work.t3_legs, progress);
    impl::propagate_pathways(
        propagator, manifolds, needed, options.polarization,
        [](Pathway p) { return p == Pathway::excited_state_absorption; }, r, done, work.t3_legs, progress);
  } else {
    impl::propagate_pathways(
        propagator, manifolds, needed, options.polarization, [](Pathway) { return true; }, r, done, work.t3_legs,
        progress);
  }
  return r;
}

template <class ExecSpace>
std::vector<complex> first_order_response(const Propagator<ExecSpace>& propagator, const ExcitonManifolds& manifolds,
                                          double step, int points) {
  const std::string what = "first_order_response";
  impl::check_response_propagator(propagator, manifolds, what);
  if (!(step > 0.0) || !std::isfinite(step)) throw OptionError({"step", "must be finite and > 0"}, what);
  if (points < 1) throw OptionError({"points", "must be >= 1"}, what);
  const std::array<impl::DipoleParts, 3> dipole = impl::dipole_parts(manifolds);
  std::vector<double> times(points);
  for (int c = 0; c < points; ++c) times[c] = c * step;
  std::vector<complex> j(points, 0.0);
  HierarchyState<ExecSpace> x = propagator.make_state();
  Observation<ExecSpace> observation(propagator);
  for (int c = 0; c < 3; ++c) {
    if (!manifolds.has_component(c)) continue;
    x.set_rho(impl::ground_state(manifolds.dimension()));
    x.apply_operator(dipole[c].raise_ground, Side::left);
    std::size_t k = 0;
    propagator.run(x, times, observation,
                   [&](const Snapshot<ExecSpace>& s) { j[k++] += (dipole[c].lower * s.rho()).trace() / 3.0; });
  }
  return j;
}

}  // namespace heom

#endif
