// The Kokkos side of the device runtime (device_runtime.hpp): whether an execution space is a GPU
// backend's, its instance's native stream, GPU and free memory. For the host backends these answer
// "no GPU"; each GPU backend's file (cuda_instances.hpp) adds its execution space's answers and the
// instances of several GPUs of one process (GpuInstances).
#ifndef HEOM_CORE_BACKEND_INSTANCES_HPP
#define HEOM_CORE_BACKEND_INSTANCES_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

#include "heom/core/backend/device_runtime.hpp"
#include "heom/core/system_memory.hpp"

namespace heom::backend {

/// Whether ExecSpace runs on a GPU through a runtime of device_runtime.hpp.
template <class ExecSpace>
inline constexpr bool is_gpu_backend = false;

/// The native stream of a GPU instance, for work ordered with its kernels; nullptr on host backends.
template <class ExecSpace>
void* native_stream(const ExecSpace&) {
  return nullptr;
}

/// The GPU of an instance (-1 on host backends).
template <class ExecSpace>
int gpu_of(const ExecSpace&) {
  return -1;
}

/// Instances of ExecSpace on several GPUs of one process, one per part of a placement (defined by each
/// GPU backend's file for its execution space; see run_partitioned).
template <class ExecSpace>
class GpuInstances;

}  // namespace heom::backend

// (Each GPU backend's answers, before the templates below that read them.)
#if defined(KOKKOS_ENABLE_CUDA)
#include "heom/core/backend/cuda_instances.hpp"
#endif

namespace heom::backend {

/// Bytes the instance's memory space can still allocate (a GPU's, or the host's); 0 when unknown.
template <class ExecSpace>
std::uint64_t available_memory(const ExecSpace& exec) {
  if constexpr (std::is_same<typename ExecSpace::memory_space, Kokkos::HostSpace>::value)
    return host_available_memory();
  return is_gpu_backend<ExecSpace> ? gpu_available_memory(gpu_of(exec)) : 0;
}

}  // namespace heom::backend

#endif
