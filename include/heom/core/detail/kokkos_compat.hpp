// The one place where heom bridges API differences between Kokkos 3.4 and 4.x (Kokkos Kernels' sparse
// part: kokkos_sparse_compat.hpp, beside it, for the code that uses the assembled operator).
#ifndef HEOM_CORE_DETAIL_KOKKOS_COMPAT_HPP
#define HEOM_CORE_DETAIL_KOKKOS_COMPAT_HPP

#include <Kokkos_Core.hpp>

#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

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

namespace heom::impl {

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
#if KOKKOS_VERSION >= 40300
  return BackendTraits<ExecSpace>::is_host;
#elif KOKKOS_VERSION < 40000 && defined(KOKKOS_ENABLE_OPENMP)
  return std::is_same<ExecSpace, Kokkos::OpenMP>::value;
#else
  return false;
#endif
}

/// Runs part(instance, p) for p = 0 .. parts - 1 at the same time, each on its own host thread with its
/// own execution-space instance: one simulated device per share of the host's threads. Kokkos 3.4
/// partitions the OpenMP pool (OpenMP::partition_master, which needs parts <= the pool's threads);
/// Kokkos 4.3 and later partition the space. Throws std::runtime_error where neither is possible,
/// and for GPUs: several GPUs in one process need every allocation made for its device's instance,
/// which heom does not do yet (one rank per GPU does it). `part` must not throw.
template <class ExecSpace, class Part>
void run_partitioned(const ExecSpace& exec, int parts, const Part& part) {
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
  throw std::runtime_error(
      std::string("several devices in one process are not available on ") + ExecSpace::name() + " with Kokkos " +
      std::to_string(KOKKOS_VERSION) +
      (BackendTraits<ExecSpace>::is_host ? " (Kokkos 3.4 OpenMP, or Kokkos 4.3 and later, can)" : "") +
      "; run one rank per device with mpirun");
}

}  // namespace heom::impl

#endif
