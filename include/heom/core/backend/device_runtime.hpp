// What heom asks of a GPU's runtime beside Kokkos, in one small interface: the GPUs a process sees and
// their free memory, the current GPU of a thread, the GPU of a stream, copies between GPUs, and the
// streams and events that order the in-process halo exchange on the GPUs. Host types alone (no
// Kokkos, no runtime headers).
//
// One implementation per backend, beside this file: cuda_runtime.cpp (CUDA builds), host_runtime.cpp
// (builds without a GPU backend: no GPUs). A HIP port adds hip_runtime.cpp and hip_instances.hpp
// (the execution-space instances of several GPUs, as cuda_instances.hpp), and a branch for its
// execution space in BackendTraits and impl::run_partitioned.
#ifndef HEOM_CORE_BACKEND_DEVICE_RUNTIME_HPP
#define HEOM_CORE_BACKEND_DEVICE_RUNTIME_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace heom::backend {

/// The GPUs this process sees (0 without a GPU backend, or where its runtime finds none).
int visible_gpus();
/// Bytes GPU `gpu` (-1: the calling thread's current one) can still allocate; 0 where unknown.
std::uint64_t gpu_available_memory(int gpu = -1);
/// Makes `gpu` the calling thread's current GPU; throws heom::Error naming what failed.
void set_current_gpu(int gpu);
/// The calling thread's current GPU; throws heom::Error naming what failed.
int current_gpu();
/// The GPU a native stream (BackendTraits' instance's) belongs to.
int gpu_of_stream(void* stream);
/// Copies `bytes` from one GPU buffer to another (between GPUs, or within one), and waits for it.
/// Returns what went wrong, empty if nothing did.
std::string copy_between_gpus(void* to, const void* from, std::size_t bytes);
/// A stream on GPU `gpu` that does not wait for the legacy default stream, for an execution-space
/// instance of its own; released with destroy_stream.
void* create_stream(int gpu);
void destroy_stream(void* stream);
/// Lets GPU `from` read and write GPU `to`'s memory directly where the hardware allows it (CUDA stages
/// copies through the host otherwise); false where it does not.
bool enable_peer_access(int from, int to);

/// One part's means of ordering an in-process exchange on its GPU: a stream its incoming copies run
/// on (beside its kernels), an event after its pack (its sends are ready, and its halo no longer
/// read) and one after its incoming copies. Made on the part's own thread, for the GPU of its stream.
class ExchangeStreams {
 public:
  ExchangeStreams();
  ~ExchangeStreams();
  ExchangeStreams(const ExchangeStreams&) = delete;
  ExchangeStreams& operator=(const ExchangeStreams&) = delete;

  /// Whether the stream and events exist (made at a part's first exchange).
  bool made() const;
  /// Makes them on the GPU of `compute` (the part's kernels' stream).
  void make(void* compute);
  /// Makes this part's GPU the thread's current one.
  void use_gpu() const;
  /// Records "sends ready" after the work enqueued on `compute`.
  void record_sends_ready(void* compute);
  /// The copy stream waits for `sender`'s sends to be ready (its own included).
  void wait_for_sends(const ExchangeStreams& sender);
  /// Copies on the copy stream, after what it waits for.
  void copy(void* to, const void* from, std::size_t bytes);
  /// Records "received" after the copies enqueued.
  void record_received();
  /// `compute` waits for `part`'s copies (what arrived there, or what it read from here).
  void make_wait_for_received(void* compute, const ExchangeStreams& part) const;
  /// Waits, on the host, for every copy enqueued (errors are dropped: a failing part cleans up).
  void synchronize() const;

 private:
  struct Handles;
  std::unique_ptr<Handles> m_handles;
};

}  // namespace heom::backend

#endif
