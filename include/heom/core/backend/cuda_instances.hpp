// The CUDA backend's execution-space instances (instances.hpp): Kokkos::Cuda's stream and GPU, and
// CUDA instances on several GPUs of one process.
#ifndef HEOM_CORE_BACKEND_CUDA_INSTANCES_HPP
#define HEOM_CORE_BACKEND_CUDA_INSTANCES_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <vector>

#include "heom/core/backend/device_runtime.hpp"
#include "heom/core/backend/instances.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
namespace heom::backend {

template <>
inline constexpr bool is_gpu_backend<Kokkos::Cuda> = true;

inline void* native_stream(const Kokkos::Cuda& exec) { return exec.cuda_stream(); }

inline int gpu_of(const Kokkos::Cuda& exec) { return exec.cuda_device(); }

#if KOKKOS_VERSION >= 40300
/// One stream per part, each on its part's GPU, and a Kokkos::Cuda instance on each (Kokkos 4.3 and
/// later take the GPU from the stream); peer access between every two of the GPUs that allow it.
template <>
class GpuInstances<Kokkos::Cuda> {
 public:
  explicit GpuInstances(const std::vector<int>& placement) : m_placement(placement) {
    m_caller_gpu = current_gpu();
    try {
      for (int gpu : placement) {
        m_streams.push_back(create_stream(gpu));
        m_instances.emplace_back(static_cast<cudaStream_t>(m_streams.back()));
      }
      for (int from : placement)
        for (int to : placement) (void)enable_peer_access(from, to);
    } catch (...) {
      release();
      throw;
    }
  }
  ~GpuInstances() { release(); }
  GpuInstances(const GpuInstances&) = delete;
  GpuInstances& operator=(const GpuInstances&) = delete;

  const Kokkos::Cuda& operator[](std::size_t p) const { return m_instances[p]; }
  int gpu(std::size_t p) const { return m_placement[p]; }

 private:
  void release() {
    for (auto& instance : m_instances) {
      try {
        instance.fence();
      } catch (...) {  // (a failed GPU: its part has reported the failure already)
      }
    }
    m_instances.clear();  // (before their streams go)
    for (void* stream : m_streams) destroy_stream(stream);
    m_streams.clear();
    try {
      set_current_gpu(m_caller_gpu);
    } catch (...) {
    }
  }
  int m_caller_gpu = 0;
  std::vector<int> m_placement;
  std::vector<void*> m_streams;
  std::vector<Kokkos::Cuda> m_instances;
};
#endif

}  // namespace heom::backend
#endif

#endif
