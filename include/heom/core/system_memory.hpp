// How much host memory a run may still allocate (for the hierarchy's memory plan; a GPU's:
// backend::gpu_available_memory).
#ifndef HEOM_CORE_SYSTEM_MEMORY_HPP
#define HEOM_CORE_SYSTEM_MEMORY_HPP

#include <cstdint>

namespace heom {

/// Available host memory in bytes: the smaller of /proc/meminfo's MemAvailable and what the
/// process's cgroup limit leaves; 0 when neither can be read.
std::uint64_t host_available_memory();

}  // namespace heom

#endif
