// Whole-or-nothing HDF5 files, and the temporary files a signal handler removes.
#include "io/hdf5_support.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

namespace heom::io::hdf5 {
namespace {

/// The temporary files being written, one slot per writer (several devices of one process write their
/// checkpoints at once). A slot's name is complete before `used` is set, so a signal handler reads
/// whole names only.
struct Unfinished {
  static constexpr int slots = 64;
  static constexpr std::size_t longest = 4096;
  std::atomic<bool> used[slots] = {};
  char name[slots][longest] = {};

  int claim(const std::string& path) {
    if (path.size() >= longest) return -1;
    for (int s = 0; s < slots; ++s) {
      bool expected = false;
      if (m_claimed[s].compare_exchange_strong(expected, true)) {
        std::memcpy(name[s], path.c_str(), path.size() + 1);
        used[s].store(true);
        return s;
      }
    }
    return -1;  // (more writers than slots: those files are not removed on a second signal)
  }
  void release(int s) {
    if (s < 0) return;
    used[s].store(false);
    m_claimed[s].store(false);
  }

 private:
  std::atomic<bool> m_claimed[slots] = {};
};

Unfinished unfinished;

}  // namespace

void write_atomically(const std::string& path, const std::function<void(hid_t)>& contents,
                      const std::function<void()>& before_rename) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become exceptions, not stderr noise
  static std::atomic<int> serial{0};
  const std::string temporary = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  const int slot = unfinished.claim(temporary);
  try {
    {
      Handle file(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
                  "create " + temporary);
      contents(file);
      check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush " + temporary);
    }
    if (before_rename) before_rename();
  } catch (const Error& e) {
    std::remove(temporary.c_str());
    unfinished.release(slot);
    throw Error("cannot write " + path + ": " + e.what());
  }
  const bool renamed = std::rename(temporary.c_str(), path.c_str()) == 0;
  if (!renamed) std::remove(temporary.c_str());
  unfinished.release(slot);
  if (!renamed) throw Error("cannot write " + path + ": renaming the finished temporary file failed");
}

}  // namespace heom::io::hdf5

namespace heom::io {

void remove_unfinished_files() noexcept {
  for (int s = 0; s < hdf5::Unfinished::slots; ++s)
    if (hdf5::unfinished.used[s].load()) ::unlink(hdf5::unfinished.name[s]);
}

}  // namespace heom::io
