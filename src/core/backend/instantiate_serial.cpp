// heom's kernels and solver, compiled once for Kokkos::Serial (when Kokkos has it).
#include "heom/generator/assembled_operator.hpp"
#include "heom/generator/generator_definitions.hpp"
#include "heom/heom.hpp"

#if defined(KOKKOS_ENABLE_SERIAL)
namespace heom {
template class Generator<Kokkos::Serial>;
template class AssembledOperator<Kokkos::Serial>;
template class Propagator<Kokkos::Serial>;
template class HierarchyState<Kokkos::Serial>;
template class Observation<Kokkos::Serial>;
template class Solver<Kokkos::Serial>;
}  // namespace heom
#endif
