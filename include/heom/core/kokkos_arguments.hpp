// The Kokkos command-line arguments a program passes for its own settings, spelled as the Kokkos
// heom is built with spells them.
#ifndef HEOM_CORE_KOKKOS_ARGUMENTS_HPP
#define HEOM_CORE_KOKKOS_ARGUMENTS_HPP

#include <string>

#include "heom/core/detail/kokkos_compat.hpp"

namespace heom {

/// The argument that sets Kokkos' host thread count ("--kokkos-num-threads=N"; "--kokkos-threads=N"
/// before Kokkos 4.0).
inline std::string kokkos_threads_argument(int threads) { return impl::kokkos_threads_argument(threads); }

}  // namespace heom

#endif
