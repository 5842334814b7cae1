// Whole-or-nothing HDF5 files, and the temporary files a signal handler removes.
#include "io/hdf5_support.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

namespace heom::io::hdf5 {
namespace {

/// The temporary files being written, one slot per writer (several devices of one process write their
/// checkpoints at once). Each slot is a sequence lock: a writer makes `version` odd while it changes
/// the name, so that a signal handler, which cannot wait, only removes a name it read whole.
struct Unfinished {
  static constexpr int slots = 64;
  static constexpr std::size_t longest = 4096;
  std::atomic<bool> claimed[slots] = {};
  std::atomic<unsigned> version[slots] = {};  // odd: changing; even and nonzero name: in use
  char name[slots][longest] = {};

  int claim(const std::string& path) {
    if (path.size() >= longest) return -1;
    for (int s = 0; s < slots; ++s) {
      bool expected = false;
      if (claimed[s].compare_exchange_strong(expected, true)) {
        version[s].fetch_add(1);
        std::memcpy(name[s], path.c_str(), path.size() + 1);
        version[s].fetch_add(1);
        return s;
      }
    }
    return -1;  // (more writers than slots: their files are not removed on a second signal)
  }
  void release(int s) {
    if (s < 0) return;
    version[s].fetch_add(1);
    name[s][0] = '\0';
    version[s].fetch_add(1);
    claimed[s].store(false);
  }
  /// Async-signal-safe.
  void remove_all() noexcept {
    char copy[longest];
    for (int s = 0; s < slots; ++s) {
      const unsigned before = version[s].load();
      if (before % 2 != 0) continue;
      std::memcpy(copy, name[s], longest);
      copy[longest - 1] = '\0';
      if (copy[0] != '\0' && version[s].load() == before) ::unlink(copy);
    }
  }
};

Unfinished unfinished;
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<unsigned>::is_always_lock_free,
              "a signal handler reads the registry");

/// Makes `path`'s data (a folder's: its entries) durable before the caller goes on.
void sync_to_disk(const std::string& path, bool folder) {
  const int fd = ::open(path.c_str(), folder ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

std::mutex& library_lock() {
  static std::mutex lock;
  return lock;
}

AtomicFile::AtomicFile(const std::string& path)
    // One fixed temporary name per file: a write killed outright leaves it, and the next write replaces it.
    : m_path(path), m_temporary(path + ".tmp"), m_slot(unfinished.claim(m_temporary)) {
  const std::lock_guard<std::mutex> lock(library_lock());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become exceptions, not stderr noise
  m_file = H5Fcreate(m_temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (m_file < 0) {
    std::remove(m_temporary.c_str());
    unfinished.release(m_slot);
    throw Error("HDF5: cannot create " + m_temporary);
  }
}

AtomicFile::~AtomicFile() {
  if (m_file >= 0) {
    const std::lock_guard<std::mutex> lock(library_lock());
    H5Fclose(m_file);
  }
  if (m_committed) return;
  std::remove(m_temporary.c_str());
  unfinished.release(m_slot);
}

void AtomicFile::commit(const std::function<void()>& before_rename) {
  {
    const std::lock_guard<std::mutex> lock(library_lock());
    check(H5Fflush(m_file, H5F_SCOPE_GLOBAL), "flush " + m_temporary);
    H5Fclose(m_file);
    m_file = -1;
  }
  sync_to_disk(m_temporary, false);
  if (before_rename) before_rename();
  m_committed = true;
  const bool renamed = std::rename(m_temporary.c_str(), m_path.c_str()) == 0;
  if (!renamed) std::remove(m_temporary.c_str());
  unfinished.release(m_slot);
  if (!renamed) throw Error("renaming the finished temporary file failed");
  sync_to_disk(folder_of(m_path), true);
}

void write_atomically(const std::string& path, const std::function<void(hid_t)>& contents,
                      const std::function<void()>& before_rename) {
  try {
    AtomicFile file(path);
    {
      const std::lock_guard<std::mutex> lock(library_lock());
      contents(file.id());
    }
    file.commit(before_rename);
  } catch (const Error& e) {
    throw Error("cannot write " + path + ": " + e.what());
  }
}

}  // namespace heom::io::hdf5

namespace heom::io {

void remove_unfinished_files() noexcept { hdf5::unfinished.remove_all(); }

}  // namespace heom::io
