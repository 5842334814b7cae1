// BackendTraits<ExecSpace>: the seam between heom's kernels and a Kokkos backend. Every decision that
// depends on the backend (team shape, which kernels may run, whether the integrator's update rides
// on the generator's pass, which exchange a rank uses) is a named member here; kernels, integrators
// and the program read these members and nothing else.
#ifndef HEOM_CORE_BACKEND_TRAITS_HPP
#define HEOM_CORE_BACKEND_TRAITS_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

#include "heom/config.hpp"
#include "heom/core/double8.hpp"
#include "heom/core/backend/instances.hpp"

namespace heom {

/// Element type of every device View of ADOs.
using device_complex = Kokkos::complex<double>;

/// How work is laid out on a backend. CPUs: one thread owns an ADO, and host-only kernels (plain
/// loops over a block in registers) may run. GPUs: a team of threads shares each ADO's elements.
/// A host backend can be given the device shape, so that the path a GPU runs is tested on a CPU.
enum class KernelShape { host, device };

/// The shape a backend runs by default: host where the host can run the kernels' threads itself
/// (Serial, OpenMP, Threads), device otherwise.
template <class ExecSpace>
inline constexpr KernelShape native_shape =
    Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible ? KernelShape::host : KernelShape::device;

template <class ExecSpace, KernelShape Shape = native_shape<ExecSpace>>
struct BackendTraits {
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using device_type = Kokkos::Device<execution_space, memory_space>;
  /// Row-major Views in the backend's memory: an ADO [n][n] block is contiguous.
  template <class DataType>
  using view = Kokkos::View<DataType, Kokkos::LayoutRight, device_type>;
  using index_type = std::int64_t;
  using range_policy = Kokkos::RangePolicy<execution_space, Kokkos::IndexType<index_type>>;
  using team_policy = Kokkos::TeamPolicy<execution_space>;
  using member_type = typename team_policy::member_type;
  using scratch_view = Kokkos::View<device_complex*, typename execution_space::scratch_memory_space,
                                    Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  /// The host can read and write this backend's memory directly (Serial, OpenMP, Threads).
  static constexpr bool is_host = Kokkos::SpaceAccessibility<execution_space, Kokkos::HostSpace>::accessible;
  static_assert(is_host || Shape == KernelShape::device, "a device backend cannot run the host shape");

  /// The host shape: one thread per ADO. The generator's host kernels (a whole block per thread, in
  /// registers: the general and the Hermitian form for n = 2..8) may run; integrators update each ADO
  /// right after the generator has written its derivative, on the thread that wrote it
  /// (Generator::apply_then), while both are still in that core's cache; reductions over ADOs sum
  /// whole blocks in host loops (a functor's blocks()) rather than element by element across a team.
  static constexpr bool host_shape = Shape == KernelShape::host;
  /// The generator's n = 2 kernel and the integrators' loops that keep each ADO in one AVX-512
  /// register may run.
  static constexpr bool two_level_kernel = host_shape && HEOM_HAS_DOUBLE8;
  /// Exchanges between ranks may go through NCCL (device buffers): a CUDA backend in a build with
  /// the NCCL back end.
  static constexpr bool nccl_exchange = HEOM_ENABLE_NCCL && backend::is_gpu_backend<execution_space>;

  /// Threads that share one ADO's n x n block in the portable kernel. On CPUs one thread owns a
  /// whole ADO (the block is small and stays in L1); on GPUs a team covers the block's elements, a
  /// warp at least.
  static int team_size(int block_elements) {
    if (Shape == KernelShape::host) return 1;
    int size = 32;
    while (size < block_elements && size < 256) size *= 2;
    return size;
  }

  /// Consecutive ADOs one team works through: on CPUs a run of them amortizes a team's start and
  /// keeps neighbours in cache; on GPUs each team takes one ADO.
  static int ados_per_team(int /*block_elements*/) { return Shape == KernelShape::host ? 64 : 1; }

  /// Threads per team of a reduction over chunks of ADOs (one chunk per team).
  static constexpr int reduction_team_size = Shape == KernelShape::host ? 1 : 128;

  /// Scratch level for `bytes` per team: level 0 (on-chip on GPUs) when it fits comfortably.
  static int scratch_level(std::size_t bytes) { return bytes <= 32 * 1024 ? 0 : 1; }

  /// Bytes the backend's memory space can still allocate (on a GPU, the instance's); 0 when unknown.
  static std::uint64_t available_memory(const execution_space& exec) { return backend::available_memory(exec); }

  /// e.g. "OpenMP, 2 threads".
  static std::string describe(const execution_space& exec) {
    const int c = exec.concurrency();
    return std::string(execution_space::name()) + ", " + std::to_string(c) +
           (is_host ? " threads" : " concurrent threads");
  }
};

}  // namespace heom

#endif
