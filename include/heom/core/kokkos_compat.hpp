// The one place where heom bridges API differences between Kokkos 3.4 and 4.x (Kokkos Kernels' sparse
// part: kokkos_sparse_compat.hpp, beside it, for the code that uses the assembled operator).
#ifndef HEOM_CORE_KOKKOS_COMPAT_HPP
#define HEOM_CORE_KOKKOS_COMPAT_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "heom/core/backend/device_runtime.hpp"
#include "heom/core/backend/instances.hpp"
#include "heom/core/backend_traits.hpp"

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

#if !defined(KOKKOS_VERSION) || KOKKOS_VERSION < 30401
#error "heom needs Kokkos 3.4.01 or newer"
#endif

/// HEOM_IF_ON_HOST((statements)): the statements in a host compilation only, for a host-only call
/// (a host reduction's loop) in a KOKKOS_FUNCTION that host backends alone take that way; nvcc
/// would warn about it in the device pass.
#if KOKKOS_VERSION >= 40000
#define HEOM_IF_ON_HOST(CODE) KOKKOS_IF_ON_HOST(CODE)
#elif defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define HEOM_IF_ON_HOST(CODE)
#else
#define HEOM_IF_ON_HOST(CODE) \
  { HEOM_IMPL_STRIP_PARENS CODE }
#define HEOM_IMPL_STRIP_PARENS(...) __VA_ARGS__
#endif

#if KOKKOS_VERSION >= 40100
#include <Kokkos_Profiling_ScopedRegion.hpp>
#endif

namespace heom::impl {

/// A Kokkos Tools region for the scope it lives in: pushed at construction, popped however the scope
/// ends (an exception included). Kokkos::Profiling::ScopedRegion where Kokkos has it (4.1 on).
#if KOKKOS_VERSION >= 40100
using ScopedRegion = Kokkos::Profiling::ScopedRegion;
#else
class ScopedRegion {
 public:
  explicit ScopedRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(const ScopedRegion&) = delete;
  ScopedRegion& operator=(const ScopedRegion&) = delete;
};
#endif

/// Finite check usable inside kernels (Kokkos 3.4 has it in Kokkos::Experimental).
KOKKOS_INLINE_FUNCTION bool is_finite(double x) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::isfinite(x);
#else
  return Kokkos::Experimental::isfinite(x);
#endif
}

/// Square root usable inside kernels (Kokkos 3.4 has it in Kokkos::Experimental).
KOKKOS_INLINE_FUNCTION double sqrt(double x) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::sqrt(x);
#else
  return Kokkos::Experimental::sqrt(x);
#endif
}

/// The command-line argument that sets Kokkos' host thread count (renamed in Kokkos 4.0).
inline std::string kokkos_threads_argument(int threads) {
#if KOKKOS_VERSION >= 40000
  return "--kokkos-num-threads=" + std::to_string(threads);
#else
  return "--kokkos-threads=" + std::to_string(threads);
#endif
}

/// Whether run_partitioned runs several parts on ExecSpace with this Kokkos (its cases below).
template <class ExecSpace>
constexpr bool can_partition() {
#if KOKKOS_VERSION >= 40300 && defined(KOKKOS_ENABLE_CUDA)
  return BackendTraits<ExecSpace>::is_host || backend::is_gpu_backend<ExecSpace>;
#elif KOKKOS_VERSION >= 40300
  return BackendTraits<ExecSpace>::is_host;
#elif KOKKOS_VERSION < 40000 && defined(KOKKOS_ENABLE_OPENMP)
  return std::is_same<ExecSpace, Kokkos::OpenMP>::value;
#else
  return false;
#endif
}

/// The GPU of each of `parts` devices of one process, among `visible` GPUs (CUDA_VISIBLE_DEVICES
/// applies): part p on gpu_ids[p % gpu_ids.size()], so that parts may share a GPU (each with its own
/// stream), or on GPU p when gpu_ids is empty. Throws std::invalid_argument, naming what is wrong,
/// for an id that is not a visible GPU, or for more parts than visible GPUs when none are named.
inline std::vector<int> gpu_placement(int parts, const std::vector<int>& gpu_ids, int visible) {
  const std::string seen = "this process sees " + std::to_string(visible) + " GPU" + (visible == 1 ? "" : "s") +
                           " (CUDA_VISIBLE_DEVICES applies)";
  for (int id : gpu_ids)
    if (id < 0 || id >= visible) throw std::invalid_argument("GPU " + std::to_string(id) + " is not there: " + seen);
  if (gpu_ids.empty() && parts > visible)
    throw std::invalid_argument(std::to_string(parts) + " devices asked for, but " + seen +
                                "; name GPUs to share (device ids) to run several devices on one");
  std::vector<int> placement(static_cast<std::size_t>(parts));
  for (int p = 0; p < parts; ++p) placement[p] = gpu_ids.empty() ? p : gpu_ids[p % gpu_ids.size()];
  return placement;
}

/// What each of `parts` devices of one process may allocate, measured before any starts: the free
/// memory of its memory (the host's, or its GPU's, gpu_placement) shared equally among the devices on
/// it. Throws std::invalid_argument as gpu_placement.
template <class ExecSpace>
std::vector<std::uint64_t> memory_shares(const ExecSpace& exec, int parts, const std::vector<int>& gpu_ids) {
  std::vector<std::uint64_t> shares(static_cast<std::size_t>(parts));
  if constexpr (backend::is_gpu_backend<ExecSpace>) {
    if (parts > 1 || !gpu_ids.empty()) {
      const std::vector<int> placement = gpu_placement(parts, gpu_ids, backend::visible_gpus());
      for (int p = 0; p < parts; ++p)
        shares[p] = backend::gpu_available_memory(placement[p]) /
                    static_cast<std::uint64_t>(std::count(placement.begin(), placement.end(), placement[p]));
      return shares;
    }
  }
  const std::uint64_t available = BackendTraits<ExecSpace>::available_memory(exec);
  for (auto& share : shares) share = available / static_cast<std::uint64_t>(parts);
  return shares;
}

/// Runs part(instance, p) for p = 0 .. parts - 1 at the same time, each on its own host thread with its
/// own execution-space instance. On a CPU, simulated devices share the host's threads: Kokkos 3.4
/// partitions the OpenMP pool (OpenMP::partition_master, which needs parts <= the pool's threads),
/// Kokkos 4.3 and later partition the space. On GPUs (Kokkos 4.3 and later), part p runs on a
/// stream of GPU gpu_placement(parts, gpu_ids, visible_gpus())[p], its host thread set to that GPU;
/// every View a part allocates must be made for its instance (impl::allocate). Throws
/// std::invalid_argument for a placement that cannot be, std::runtime_error where this Kokkos cannot
/// run several parts. `part` must not throw.
template <class ExecSpace, class Part>
void run_partitioned(const ExecSpace& exec, int parts, const Part& part, const std::vector<int>& gpu_ids = {}) {
  if constexpr (backend::is_gpu_backend<ExecSpace>) {
    if (parts > 1 || !gpu_ids.empty()) {
      const std::vector<int> placement = gpu_placement(parts, gpu_ids, backend::visible_gpus());
#if KOKKOS_VERSION >= 40300
      const backend::GpuInstances<ExecSpace> instances(placement);
      std::vector<std::thread> threads;
      for (int p = 0; p < parts; ++p)
        threads.emplace_back([&, p]() {
          try {  // (for what the part asks of the runtime itself; its kernels run on its instance's GPU)
            backend::set_current_gpu(instances.gpu(p));
          } catch (...) {
          }
          part(instances[p], p);
        });
      for (auto& t : threads) t.join();
      return;
#else
      if (parts > 1)
        throw std::runtime_error("several GPUs in one process need Kokkos 4.3 or later, and this is Kokkos " +
                                 std::to_string(KOKKOS_VERSION) + "; run one rank per GPU with mpirun");
      if (placement.front() != backend::gpu_of(exec))
        throw std::runtime_error("a GPU other than Kokkos' own (" + std::to_string(backend::gpu_of(exec)) +
                                 ") needs Kokkos 4.3 or later; choose it with --kokkos-device-id");
#endif
    }
  }
  (void)gpu_ids;
  if (parts == 1) {
    part(exec, 0);
    return;
  }
#if KOKKOS_VERSION >= 40300
  if constexpr (BackendTraits<ExecSpace>::is_host) {
    const auto instances = Kokkos::Experimental::partition_space(exec, std::vector<int>(parts, 1));
    std::vector<std::thread> threads;
    for (int p = 0; p < parts; ++p) threads.emplace_back([&, p]() { part(instances[p], p); });
    for (auto& t : threads) t.join();
    return;
  }
#elif KOKKOS_VERSION < 40000 && defined(KOKKOS_ENABLE_OPENMP)
  if constexpr (std::is_same<ExecSpace, Kokkos::OpenMP>::value) {
    const int threads = exec.concurrency();
    if (parts > threads)
      throw std::runtime_error(std::to_string(parts) + " simulated devices need at least as many OpenMP threads, and " +
                               "Kokkos runs " + std::to_string(threads));
    // Partitions run inside an OpenMP parallel region: nesting must be on. OpenMP may still grant
    // fewer partitions (OMP_THREAD_LIMIT, OMP_DYNAMIC): then none runs, rather than some waiting
    // forever for the missing ones.
    const int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(levels > 2 ? levels : 2);
    int granted = parts;
    Kokkos::OpenMP::partition_master(
        [&](int p, int partitions) {
          if (partitions == parts) {
            part(Kokkos::OpenMP(), p);
          } else {
#pragma omp atomic write
            granted = partitions;
          }
        },
        parts, threads / parts);
    omp_set_max_active_levels(levels);
    if (granted != parts)
      throw std::runtime_error("OpenMP ran " + std::to_string(granted) + " partitions of its threads for " +
                               std::to_string(parts) + " simulated devices (check OMP_THREAD_LIMIT, OMP_DYNAMIC)");
    return;
  }
#endif
  (void)part;
  throw std::runtime_error(std::string("several devices in one process are not available on ") + ExecSpace::name() +
                           " with Kokkos " + std::to_string(KOKKOS_VERSION) +
                           (BackendTraits<ExecSpace>::is_host ? " (Kokkos 3.4 OpenMP, or Kokkos 4.3 and later, can)"
                                                              : " (Kokkos 4.3 and later can)") +
                           "; run one rank per device with mpirun");
}

}  // namespace heom::impl

#endif
