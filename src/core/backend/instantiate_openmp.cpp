// heom's kernels and solver, compiled once for Kokkos::OpenMP (when Kokkos has it).
#include "heom/generator/assembled_operator.hpp"
#include "heom/generator/generator_definitions.hpp"
#include "heom/heom.hpp"
#include "heom/solver/detail/hierarchy_krylov.hpp"

#if defined(KOKKOS_ENABLE_OPENMP)
namespace heom {
template class Generator<Kokkos::OpenMP>;
template class AssembledOperator<Kokkos::OpenMP>;
template class Propagator<Kokkos::OpenMP>;
template class HierarchyState<Kokkos::OpenMP>;
template class Observation<Kokkos::OpenMP>;
template class Solver<Kokkos::OpenMP>;
template class impl::HierarchyKrylov<Kokkos::OpenMP>;
}  // namespace heom
#endif
