// heom's kernels and solver, compiled once for Kokkos::Serial (when Kokkos has it).
#include "heom/generator/assembled_operator.hpp"
#include "heom/generator/generator_definitions.hpp"
#include "heom/heom.hpp"
#include "heom/solver/detail/hierarchy_krylov.hpp"

#if defined(KOKKOS_ENABLE_SERIAL)
namespace heom {
template class Generator<Kokkos::Serial>;
template class AssembledOperator<Kokkos::Serial>;
template class Propagator<Kokkos::Serial>;
template class HierarchyState<Kokkos::Serial>;
template class Observation<Kokkos::Serial>;
template class Solver<Kokkos::Serial>;
template class impl::HierarchyKrylov<Kokkos::Serial>;
}  // namespace heom
#endif
