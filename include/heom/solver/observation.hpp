// heom::Observation: what a propagation hands its observer at each output time (rho alone, every ADO,
// the currents into fermionic leads), and the buffers that takes, made once for many runs.
#ifndef HEOM_SOLVER_OBSERVATION_HPP
#define HEOM_SOLVER_OBSERVATION_HPP

#include <cstdint>
#include <vector>

#include "heom/core/backends.hpp"
#include "heom/integrator/integrator.hpp"
#include "heom/solver/detail/lead_current_terms.hpp"
#include "heom/solver/hierarchy_state.hpp"
#include "heom/solver/propagator.hpp"
#include "heom/solver/snapshot.hpp"

namespace heom {

template <class ExecSpace>
class Observation {
 public:
  using vector_type = typename Generator<ExecSpace>::vector_type;
  using ado_list = typename Integrator<ExecSpace>::ado_list;

  /// What the propagator's options ask observers to see: every ADO (SolverOptions::observe_all_ados,
  /// and always in a batch: every member's rho), the lead currents (observe_lead_currents), else rho
  /// alone; with the adaptive methods, the buffer the state is interpolated into (a full vector, or
  /// where rho and the currents' first tier are all, those ADOs' blocks).
  explicit Observation(const Propagator<ExecSpace>& propagator);

  /// The snapshot of `v` (the state, or an interpolation of it into buffer()) at time t: its ADOs and,
  /// where observed, the currents (collective on a split hierarchy: every device calls it).
  Snapshot<ExecSpace> snapshot(double t, const vector_type& v) const;
  /// Writes a state's integrator's dense output at t into buffer(): the ADOs observed
  /// (interpolate_ados), or all. False where its method has no dense output.
  bool interpolate(const Integrator<ExecSpace>& integrator, double t) const;
  const vector_type& buffer() const { return m_output; }
  /// The leading elements of the state that interpolation writes into buffer() (0: none).
  std::int64_t output_elements() const { return static_cast<std::int64_t>(m_output.extent(0)); }

 private:
  /// Each member's lead currents from the full state or interpolated vector v (collective on a split
  /// hierarchy; only the device that holds rho gets them).
  std::vector<std::vector<complex>> lead_currents(const vector_type& v) const;

  std::shared_ptr<const impl::PropagatorParts<ExecSpace>> m_parts;
  int m_observed_ados = 1;                                  // the ADOs a snapshot shows: rho, or all of them
  vector_type m_output;                                     // dense-output buffer
  ado_list m_interpolated_ados;                             // its ADOs the observers read, when not all
  std::vector<impl::LeadCurrentTerm> m_lead_current_terms;  // this device's, when observed
  // The terms' ADOs of every member (member-major, local indices), and their blocks gathered there
  // and on the host: one copy per output.
  ado_list m_lead_current_ados;
  vector_type m_lead_current_blocks;
  typename vector_type::HostMirror m_lead_current_blocks_host;
};

#define HEOM_EXTERN_OBSERVATION(E) extern template class Observation<E>;
HEOM_FOR_EACH_BACKEND(HEOM_EXTERN_OBSERVATION)
#undef HEOM_EXTERN_OBSERVATION

}  // namespace heom

#endif
