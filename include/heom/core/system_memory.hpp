// How much host or GPU memory a run may still allocate (for the hierarchy's memory plan).
#ifndef HEOM_CORE_SYSTEM_MEMORY_HPP
#define HEOM_CORE_SYSTEM_MEMORY_HPP

#include <cstdint>

namespace heom {

/// Available host memory in bytes: the smaller of /proc/meminfo's MemAvailable and what the
/// process's cgroup limit leaves; 0 when neither can be read.
std::uint64_t host_available_memory();

/// Free memory of CUDA device `gpu` (the calling thread's current device when -1) in bytes
/// (cudaMemGetInfo); 0 in a build without CUDA or when it cannot be read.
std::uint64_t cuda_available_memory(int gpu = -1);

}  // namespace heom

#endif
