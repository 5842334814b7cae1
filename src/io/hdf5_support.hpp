// HDF5 through the C library for the program's files (output, checkpoints): RAII handles, errors
// turned into heom::Error, and files written whole or not at all.
#ifndef HEOM_IO_HDF5_SUPPORT_HPP
#define HEOM_IO_HDF5_SUPPORT_HPP

#include <hdf5.h>

#include <functional>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/integrator/options.hpp"

namespace heom::io::hdf5 {

/// An HDF5 identifier closed by `close` when it goes out of scope.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : m_id(id), m_close(close) {
    if (id < 0) throw Error("HDF5: cannot " + what);
  }
  Handle(Handle&& other) noexcept : m_id(other.m_id), m_close(other.m_close) { other.m_id = -1; }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  ~Handle() {
    if (m_id >= 0) m_close(m_id);
  }
  operator hid_t() const { return m_id; }

 private:
  hid_t m_id;
  herr_t (*m_close)(hid_t);
};

inline void check(herr_t status, const std::string& what) {
  if (status < 0) throw Error("HDF5: cannot " + what);
}

/// Creation properties (`kind`: H5P_DATASET_CREATE, H5P_GROUP_CREATE) without the modification
/// times HDF5 records by default: the same contents make the same bytes (a resumed run's output
/// equals an uninterrupted one's).
inline Handle untimed(hid_t kind) {
  Handle properties(H5Pcreate(kind), H5Pclose, "create property list");
  check(H5Pset_obj_track_times(properties, 0), "turn off modification times");
  return properties;
}

inline Handle create_group(hid_t file, const char* name) {
  const Handle properties = untimed(H5P_GROUP_CREATE);
  return Handle(H5Gcreate2(file, name, H5P_DEFAULT, properties, H5P_DEFAULT), H5Gclose, std::string("create ") + name);
}

/// {r: f8, i: f8}: the layout h5py (and numpy) read as complex128.
inline Handle complex_type() {
  Handle t(H5Tcreate(H5T_COMPOUND, 2 * sizeof(double)), H5Tclose, "create the complex type");
  check(H5Tinsert(t, "r", 0, H5T_NATIVE_DOUBLE), "define the complex type");
  check(H5Tinsert(t, "i", sizeof(double), H5T_NATIVE_DOUBLE), "define the complex type");
  return t;
}

inline void write_dataset(hid_t file, const char* name, hid_t type, const std::vector<hsize_t>& dims,
                          const void* data) {
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
               std::string("create the dataspace of ") + name);
  const Handle properties = untimed(H5P_DATASET_CREATE);
  Handle set(H5Dcreate2(file, name, type, space, H5P_DEFAULT, properties, H5P_DEFAULT), H5Dclose,
             std::string("create ") + name);
  check(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), std::string("write ") + name);
}

/// Variable-length UTF-8 strings: h5py reads them as str (fixed-length ones come back as bytes).
inline Handle string_type() {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "create a string type");
  check(H5Tset_size(type, H5T_VARIABLE), "size a string type");
  check(H5Tset_cset(type, H5T_CSET_UTF8), "set a string type's encoding");
  return type;
}

inline void write_string_dataset(hid_t file, const char* name, const std::string& text) {
  const Handle type = string_type();
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar dataspace");
  const Handle properties = untimed(H5P_DATASET_CREATE);
  Handle set(H5Dcreate2(file, name, type, space, H5P_DEFAULT, properties, H5P_DEFAULT), H5Dclose,
             std::string("create ") + name);
  const char* data = text.c_str();
  // One element to convert: HDF5's default conversion buffers (1 MB each, for the type conversion
  // and its background) would be a small run's largest allocation, and its peak memory.
  Handle transfer(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "create a transfer property list");
  check(H5Pset_buffer(transfer, 4096, nullptr, nullptr), "size the conversion buffer");
  check(H5Dwrite(set, type, H5S_ALL, H5S_ALL, transfer, &data), std::string("write ") + name);
}

/// The HDF5 type of T in memory (the H5T_NATIVE_* that names it): the type of what T's values are
/// stored as, so that each call names the C++ type alone.
template <class T>
hid_t native_type() {
  if constexpr (std::is_same<T, double>::value) return H5T_NATIVE_DOUBLE;
  if constexpr (std::is_same<T, int>::value) return H5T_NATIVE_INT;
  if constexpr (std::is_same<T, long long>::value) return H5T_NATIVE_LLONG;
  if constexpr (std::is_same<T, unsigned long long>::value) return H5T_NATIVE_ULLONG;
  static_assert(std::is_same<T, double>::value || std::is_same<T, int>::value || std::is_same<T, long long>::value ||
                    std::is_same<T, unsigned long long>::value,
                "hdf5::native_type: a type heom does not store");
}

/// `count` elements of T at `data` as dataset `name`, of shape `dims`.
template <class T>
inline void write_dataset(hid_t file, const char* name, const std::vector<hsize_t>& dims, const T* data) {
  write_dataset(file, name, native_type<T>(), dims, data);
}

template <class T>
inline void write_attribute(hid_t object, const char* name, const T& value) {
  const hid_t type = native_type<T>();
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar dataspace");
  Handle attribute(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                   std::string("create attribute ") + name);
  check(H5Awrite(attribute, type, &value), std::string("write attribute ") + name);
}

inline void write_attribute(hid_t object, const char* name, const std::string& value) {
  const Handle type = string_type();
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "create a scalar dataspace");
  Handle attribute(H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                   std::string("create attribute ") + name);
  const char* data = value.c_str();
  check(H5Awrite(attribute, type, &data), std::string("write attribute ") + name);
}

inline void write_strings(hid_t file, const char* name, const std::vector<std::string>& values) {
  std::vector<const char*> pointers;
  for (const std::string& v : values) pointers.push_back(v.c_str());
  write_dataset(file, name, string_type(), {static_cast<hsize_t>(values.size())}, pointers.data());
}

inline std::vector<hsize_t> dataset_dims(hid_t set, const std::string& name) {
  Handle space(H5Dget_space(set), H5Sclose, "read the shape of " + name);
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) throw Error("HDF5: cannot read the rank of " + name);
  std::vector<hsize_t> dims(rank);
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

inline std::string read_string(hid_t set_or_attribute, bool attribute, const std::string& name) {
  const Handle type = string_type();
  char* data = nullptr;
  if (attribute)
    check(H5Aread(set_or_attribute, type, &data), "read " + name);
  else
    check(H5Dread(set_or_attribute, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &data), "read " + name);
  std::string value = data ? data : "";
  H5free_memory(data);
  return value;
}

inline std::string read_string_attribute(hid_t file, const char* name) {
  Handle a(H5Aopen(file, name, H5P_DEFAULT), H5Aclose, std::string("open attribute ") + name);
  return read_string(a, true, name);
}

template <class T>
inline T read_attribute(hid_t file, const char* name) {
  Handle a(H5Aopen(file, name, H5P_DEFAULT), H5Aclose, std::string("open attribute ") + name);
  T value{};
  check(H5Aread(a, native_type<T>(), &value), std::string("read attribute ") + name);
  return value;
}

/// A run's step statistics as the attributes steps, rejected_steps and rhs_evaluations (of an output
/// file or a checkpoint alike).
inline void write_statistics(hid_t object, const IntegratorStatistics& statistics) {
  const long long steps = statistics.steps, rejected = statistics.rejected, rhs = statistics.rhs_evaluations;
  write_attribute(object, "steps", steps);
  write_attribute(object, "rejected_steps", rejected);
  write_attribute(object, "rhs_evaluations", rhs);
}

inline IntegratorStatistics read_statistics(hid_t object) {
  IntegratorStatistics statistics;
  statistics.steps = read_attribute<long long>(object, "steps");
  statistics.rejected = read_attribute<long long>(object, "rejected_steps");
  statistics.rhs_evaluations = read_attribute<long long>(object, "rhs_evaluations");
  return statistics;
}

/// The folder `path` is in ("." for a bare name).
std::string folder_of(const std::string& path);

/// HDF5 as Debian builds it is not thread-safe: every call into it holds this lock (the devices of one
/// process write their checkpoints at once).
std::mutex& library_lock();

/// A new file at `path` written over time (an ensemble's, as its members finish): created as a
/// temporary file in the same folder, renamed over `path` by commit() (synced before the rename and
/// the folder after it; `before_rename` runs between the two, without the library lock). Destroyed
/// uncommitted, or by a signal (remove_unfinished_files), it removes the temporary file and leaves
/// `path` as it was. Calls on id() hold library_lock(). Throws heom::Error (the caller names the path).
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  hid_t id() const { return m_file; }
  const std::string& temporary() const { return m_temporary; }
  void commit(const std::function<void()>& before_rename = {});

 private:
  std::string m_path, m_temporary;
  int m_slot = -1;
  hid_t m_file = -1;
  bool m_committed = false;
};

/// Writes a new file at `path` with `contents`: into a temporary file in the same folder, renamed
/// over `path` only when complete, so that an interrupted or failed write leaves `path` as it was.
/// The file is synced to disk before the rename and the folder after it. `before_rename` runs between
/// the two, without the library lock (several devices meet there). Throws heom::Error naming the path.
void write_atomically(const std::string& path, const std::function<void(hid_t)>& contents,
                      const std::function<void()>& before_rename = {});

}  // namespace heom::io::hdf5

#endif
