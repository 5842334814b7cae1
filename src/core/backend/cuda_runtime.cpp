// heom::backend's device runtime for CUDA builds (device_runtime.hpp), on the CUDA runtime and, for
// the GPU of a stream, its driver API.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>

#include "heom/core/backend/cuda_status.hpp"
#include "heom/core/backend/device_runtime.hpp"
#include "heom/core/error.hpp"

namespace heom::backend {

int visible_gpus() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // (clears the error, which CUDA would report again at the next call)
    return 0;
  }
  return count;
}

std::uint64_t gpu_available_memory(int gpu) {
  int current = 0;
  if (gpu >= 0 && (cudaGetDevice(&current) != cudaSuccess || cudaSetDevice(gpu) != cudaSuccess)) {
    (void)cudaGetLastError();
    return 0;
  }
  std::size_t free_bytes = 0, total_bytes = 0;
  const bool known = cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
  if (gpu >= 0) (void)cudaSetDevice(current);
  if (known) return free_bytes;
  (void)cudaGetLastError();
  return 0;
}

void set_current_gpu(int gpu) { check_cuda(cudaSetDevice(gpu), "cudaSetDevice"); }

int current_gpu() {
  int gpu = 0;
  check_cuda(cudaGetDevice(&gpu), "cudaGetDevice");
  return gpu;
}

int gpu_of_stream(void* stream) {
  CUcontext context = nullptr;
  CUdevice device = 0;
  if (cuStreamGetCtx(static_cast<cudaStream_t>(stream), &context) != CUDA_SUCCESS ||
      cuCtxPushCurrent(context) != CUDA_SUCCESS)
    throw Error("cannot find the GPU of a device's stream");
  const CUresult found = cuCtxGetDevice(&device);
  cuCtxPopCurrent(&context);
  if (found != CUDA_SUCCESS) throw Error("cannot find the GPU of a device's stream");
  return static_cast<int>(device);
}

std::string copy_between_gpus(void* to, const void* from, std::size_t bytes) {
  // (On the calling thread's default stream, waited for: the sender may reuse its buffer, and the
  // receiver's kernels read this one, on their own streams, once the copy returns.)
  cudaError_t status = cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, nullptr);
  if (status == cudaSuccess) status = cudaStreamSynchronize(nullptr);
  if (status == cudaSuccess) return {};
  (void)cudaGetLastError();
  return std::string("cudaMemcpyAsync: ") + cudaGetErrorString(status);
}

void* create_stream(int gpu) {
  set_current_gpu(gpu);
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  return stream;
}

void destroy_stream(void* stream) { (void)cudaStreamDestroy(static_cast<cudaStream_t>(stream)); }

bool enable_peer_access(int from, int to) {
  int can = 0;
  if (from == to || cudaDeviceCanAccessPeer(&can, from, to) != cudaSuccess || !can) {
    (void)cudaGetLastError();
    return false;
  }
  set_current_gpu(from);
  // (Optional: without it CUDA stages the copies through the host. Too many peers, say.)
  if (cudaDeviceEnablePeerAccess(to, 0) == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

struct ExchangeStreams::Handles {
  int gpu = -1;
  cudaStream_t copies = nullptr;
  cudaEvent_t sends_ready = nullptr, received = nullptr;
  ~Handles() {
    if (sends_ready) (void)cudaEventDestroy(sends_ready);
    if (received) (void)cudaEventDestroy(received);
    if (copies) (void)cudaStreamDestroy(copies);
  }
};

ExchangeStreams::ExchangeStreams() : m_handles(std::make_unique<Handles>()) {}
ExchangeStreams::~ExchangeStreams() = default;

bool ExchangeStreams::made() const { return m_handles->copies != nullptr; }

void ExchangeStreams::make(void* compute) {
  Handles& h = *m_handles;
  h.gpu = gpu_of_stream(compute);  // (its instance's GPU: the thread's current one may have moved)
  set_current_gpu(h.gpu);
  check_cuda(cudaStreamCreateWithFlags(&h.copies, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaEventCreateWithFlags(&h.sends_ready, cudaEventDisableTiming), "cudaEventCreate");
  check_cuda(cudaEventCreateWithFlags(&h.received, cudaEventDisableTiming), "cudaEventCreate");
}

void ExchangeStreams::use_gpu() const { set_current_gpu(m_handles->gpu); }

void ExchangeStreams::record_sends_ready(void* compute) {
  check_cuda(cudaEventRecord(m_handles->sends_ready, static_cast<cudaStream_t>(compute)), "cudaEventRecord");
}

void ExchangeStreams::wait_for_sends(const ExchangeStreams& sender) {
  check_cuda(cudaStreamWaitEvent(m_handles->copies, sender.m_handles->sends_ready, 0), "cudaStreamWaitEvent");
}

void ExchangeStreams::copy(void* to, const void* from, std::size_t bytes) {
  check_cuda(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, m_handles->copies), "cudaMemcpyAsync");
}

void ExchangeStreams::record_received() {
  check_cuda(cudaEventRecord(m_handles->received, m_handles->copies), "cudaEventRecord");
}

void ExchangeStreams::make_wait_for_received(void* compute, const ExchangeStreams& part) const {
  check_cuda(cudaStreamWaitEvent(static_cast<cudaStream_t>(compute), part.m_handles->received, 0),
             "cudaStreamWaitEvent");
}

void ExchangeStreams::synchronize() const {
  if (m_handles->copies) (void)cudaStreamSynchronize(m_handles->copies);
  (void)cudaGetLastError();
}

}  // namespace heom::backend
