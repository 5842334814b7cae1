// The Kokkos command-line arguments a program passes for its own settings, spelled as the Kokkos
// heom is built with spells them.
#ifndef HEOM_CORE_KOKKOS_ARGUMENTS_HPP
#define HEOM_CORE_KOKKOS_ARGUMENTS_HPP

#include <string>

#include "heom/core/kokkos_compat.hpp"

namespace heom {

/// The argument that sets Kokkos' host thread count ("--kokkos-num-threads=N"; "--kokkos-threads=N"
/// before Kokkos 4.0).
inline std::string kokkos_threads_argument(int threads) { return impl::kokkos_threads_argument(threads); }

/// The argument that chooses the GPU Kokkos runs on ("--kokkos-device-id=N", as Kokkos 3.4 and 4
/// both spell it).
inline std::string kokkos_device_argument(int gpu) { return "--kokkos-device-id=" + std::to_string(gpu); }

}  // namespace heom

#endif
