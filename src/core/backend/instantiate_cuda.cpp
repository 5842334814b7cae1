// heom's kernels and solver, compiled once for Kokkos::Cuda (when Kokkos has it).
#include "heom/generator/assembled_operator.hpp"
#include "heom/generator/generator_definitions.hpp"
#include "heom/heom.hpp"
#include "heom/solver/detail/hierarchy_krylov.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
namespace heom {
template class Generator<Kokkos::Cuda>;
template class AssembledOperator<Kokkos::Cuda>;
template class Propagator<Kokkos::Cuda>;
template class HierarchyState<Kokkos::Cuda>;
template class Observation<Kokkos::Cuda>;
template class Solver<Kokkos::Cuda>;
template class impl::HierarchyKrylov<Kokkos::Cuda>;
}  // namespace heom
#endif
