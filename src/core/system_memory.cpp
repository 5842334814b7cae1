// Reads the memory a process may still allocate from Linux's /proc and cgroup files.
#include "heom/core/system_memory.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace heom {
namespace {

/// First number in a file, or 0 (also for "max", cgroup v2's "no limit").
std::uint64_t read_number(const char* path) {
  std::ifstream in(path);
  std::uint64_t value = 0;
  if (!(in >> value)) return 0;
  return value;
}

std::uint64_t meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      std::uint64_t kib = 0;
      fields >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

std::uint64_t cgroup_headroom() {
  // cgroup v2, then v1; a huge v1 limit means none.
  std::uint64_t limit = read_number("/sys/fs/cgroup/memory.max");
  std::uint64_t used = read_number("/sys/fs/cgroup/memory.current");
  if (limit == 0) {
    limit = read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    used = read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes");
    if (limit >= (std::uint64_t(1) << 60)) limit = 0;
  }
  if (limit == 0) return 0;
  return limit > used ? limit - used : 1;
}

}  // namespace

std::uint64_t host_available_memory() {
  const std::uint64_t a = meminfo_available();
  const std::uint64_t b = cgroup_headroom();
  if (a == 0) return b;
  if (b == 0) return a;
  return std::min(a, b);
}

}  // namespace heom
