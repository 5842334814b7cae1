// heom::lead_currents: the particle current from the system into each fermionic lead, read off the
// first tier of the hierarchy.
#ifndef HEOM_SOLVER_LEAD_CURRENTS_HPP
#define HEOM_SOLVER_LEAD_CURRENTS_HPP

#include <Kokkos_Core.hpp>

#include <functional>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/model/model.hpp"
#include "heom/solver/detail/lead_current_terms.hpp"
#include "heom/solver/solver.hpp"

namespace heom {

/// Per bath b, I_b = -i sum over b's exponents k of s_k tr(O_k rho_{e_k}) with s_k = +1 and O_k = Q
/// for a + exponent, s_k = -1 and O_k = Q^dagger for a - exponent, and rho_{e_k} the ADO of label e_k
/// (QuTiP's documented single-impurity example). For Q = d it is d<N_b>/dt of the lead: the particle
/// current from the system into it (negative where the lead feeds the system). Zero for a bosonic
/// bath, and for every bath at depth 0. `ado(a)` gives ADO a's n x n block.
std::vector<complex> lead_currents(const Model& model, const Hierarchy& hierarchy,
                                   const std::function<Matrix(int ado)>& ado);

/// The same from every ADO on a device, ADO 0 first (one device's Solver::ados(), or a Snapshot's
/// with SolverOptions::observe_all_ados): only the first-tier blocks it reads are copied to the host.
template <class ExecSpace>
std::vector<complex> lead_currents(const ExecSpace& exec, const Model& model, const Hierarchy& hierarchy,
                                   const AdoView<ExecSpace>& ados) {
  const int n = model.dimension();
  if (ados.extent(0) != static_cast<std::size_t>(hierarchy.size()) || ados.extent(1) != static_cast<std::size_t>(n) ||
      ados.extent(2) != static_cast<std::size_t>(n))
    throw Error("lead_currents: needs all " + std::to_string(hierarchy.size()) + " ADOs as square blocks, got " +
                std::to_string(ados.extent(0)) + " of " + std::to_string(ados.extent(1)) + "x" +
                std::to_string(ados.extent(2)));
  return lead_currents(model, hierarchy, [&](int a) {
    return copy_rho_to_host(exec, AdoView<ExecSpace>(ados.data() + std::size_t(a) * n * n, 1, n, n));
  });
}

}  // namespace heom

#endif
