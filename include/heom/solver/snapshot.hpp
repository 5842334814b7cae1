// What observers of a propagation see: the ADOs at an output time (heom::AdoView, heom::Snapshot),
// and rho copied to the host.
#ifndef HEOM_SOLVER_SNAPSHOT_HPP
#define HEOM_SOLVER_SNAPSHOT_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <functional>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/matrix.hpp"

namespace heom {

/// ADOs at one time, [ado][n][n] on the device (ADO 0 is rho), or [ado][n][1] in the ground-column
/// shape (AdoShape: column 0 of each). Valid during the call it is passed to, or, from
/// HierarchyState::ados(), until the state changes.
template <class ExecSpace>
using AdoView = Kokkos::View<const device_complex***, Kokkos::LayoutRight,
                             typename BackendTraits<ExecSpace>::device_type, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// Copy of ADO 0 (the reduced density matrix) to the host: n x n, also from ground columns (the
/// columns they leave out are zero).
template <class ExecSpace>
Matrix copy_rho_to_host(const ExecSpace& exec, const AdoView<ExecSpace>& ados) {
  const int n = static_cast<int>(ados.extent(1)), columns = static_cast<int>(ados.extent(2));
  auto rho_device = Kokkos::subview(ados, 0, Kokkos::ALL, Kokkos::ALL);
  // (A vector: a View of its own would be zero-filled in a parallel region, a fork and join dearer than
  // this copy.)
  std::vector<device_complex> buffer(std::size_t(n) * columns);
  Kokkos::View<device_complex**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(
      buffer.data(), n, columns);
  Kokkos::deep_copy(exec, host, rho_device);
  exec.fence();
  Matrix rho(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < columns; ++j) rho(i, j) = complex(host(i, j).real(), host(i, j).imag());
  return rho;
}

/// What an observer sees at an output time.
template <class ExecSpace>
struct Snapshot {
  double time;
  /// Every ADO when SolverOptions::observe_all_ados or in a batch (every member's, member by member),
  /// otherwise ADO 0 alone (extent(0) == 1).
  AdoView<ExecSpace> ados;
  ExecSpace exec;
  /// A batch's ADOs per member (member m's rho is ADO m * ados_per_member).
  int ados_per_member = 0;
  /// With SolverOptions::observe_lead_currents, [member][bath]: the particle current from the system
  /// into each bath's lead (heom::lead_currents; 0 for bosonic baths); otherwise empty.
  std::vector<std::vector<complex>> lead_currents;
  /// rho(time) on the host (a batch: member `member`'s).
  Matrix rho(int member = 0) const {
    if (member == 0) return copy_rho_to_host(exec, ados);
    // (Pointer arithmetic: the View's data may be a GPU's, which the host must not index.)
    const std::size_t first = static_cast<std::size_t>(member) * ados_per_member;
    return copy_rho_to_host(exec, AdoView<ExecSpace>(ados.data() + first * ados.extent(1) * ados.extent(2),
                                                     ados.extent(0) - first, ados.extent(1), ados.extent(2)));
  }
};

/// Called at each output time of a run.
template <class ExecSpace>
using Observer = std::function<void(const Snapshot<ExecSpace>&)>;
/// Called after every accepted step with the time reached (progress reports).
using StepCallback = std::function<void(double)>;

}  // namespace heom

#endif
