// The one check of a CUDA runtime call's status, for the code that calls the runtime (the CUDA
// backend and the NCCL communicator).
#ifndef HEOM_CORE_BACKEND_CUDA_STATUS_HPP
#define HEOM_CORE_BACKEND_CUDA_STATUS_HPP

#include <cuda_runtime_api.h>

#include <string>

#include "heom/core/error.hpp"

namespace heom::backend {

/// Throws heom::Error "CUDA: what: the runtime's message" unless `status` is success, clearing the
/// runtime's record of the error (which it would report again at the next call).
inline void check_cuda(cudaError_t status, const std::string& what) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();
  throw Error("CUDA: " + what + ": " + cudaGetErrorString(status));
}

}  // namespace heom::backend

#endif
