// Checkpoint files: writing one part, and gathering a device's ADOs from the parts that hold them.
#include "io/checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>

#include <unistd.h>

#include "heom/core/error.hpp"
#include "io/hdf5_support.hpp"

namespace heom::io {
namespace {

using namespace hdf5;

constexpr const char* format_name = "heom checkpoint 1";

/// The length of the 1-D dataset `set` (named `name`); throws if it is not 1-D.
hsize_t length_of(hid_t set, const std::string& name) {
  const auto dims = dataset_dims(set, name);
  if (dims.size() != 1) throw Error(name + " is not a list");
  return dims[0];
}

std::vector<std::string> read_strings(hid_t file, const char* name) {
  Handle set(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose, std::string("open ") + name);
  std::vector<char*> data(length_of(set, name), nullptr);
  const Handle type = string_type();
  if (!data.empty()) check(H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), std::string("read ") + name);
  std::vector<std::string> out;
  for (char* s : data) {
    out.emplace_back(s ? s : "");
    H5free_memory(s);
  }
  return out;
}

std::vector<double> read_doubles(hid_t file, const char* name) {
  Handle set(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose, std::string("open ") + name);
  std::vector<double> out(length_of(set, name));
  if (!out.empty())
    check(H5Dread(set, hdf5::native_type<double>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()),
          std::string("read ") + name);
  return out;
}

/// Opens the 1-D dataset `name`, which must have `length` elements.
Handle open_vector(hid_t file, const std::string& name, hsize_t length) {
  Handle set(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose, "open " + name);
  const hsize_t found = length_of(set, name);
  if (found != length)
    throw Error(name + " has " + std::to_string(found) + " elements, expected " + std::to_string(length));
  return set;
}

/// Elements [offset, offset + count) of the 1-D complex dataset `name` into `out`; its length must be
/// `length`. (Its checksums are verified as it is read.)
void read_complex_range(hid_t file, const std::string& name, hsize_t length, hsize_t offset, hsize_t count,
                        complex* out) {
  const Handle set = open_vector(file, name, length);
  if (count == 0) return;
  Handle file_space(H5Dget_space(set), H5Sclose, "read the shape of " + name);
  check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &offset, nullptr, &count, nullptr), "select " + name);
  Handle memory_space(H5Screate_simple(1, &count, nullptr), H5Sclose, "create a dataspace");
  check(H5Dread(set, complex_type(), memory_space, file_space, H5P_DEFAULT, out),
        "read " + name + " (it is damaged: a checksum fails)");
}

/// A dataset in chunks of up to about 1 MiB (along its first dimension), each with a Fletcher-32
/// checksum that HDF5 verifies on every read: a damaged checkpoint fails to read instead of resuming
/// from wrong numbers.
void write_checksummed(hid_t file, const std::string& name, hid_t type, const std::vector<hsize_t>& dims,
                       const void* data) {
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
               "create the dataspace of " + name);
  const Handle properties = untimed(H5P_DATASET_CREATE);
  hsize_t row = H5Tget_size(type);  // bytes of one index of the first dimension
  for (std::size_t d = 1; d < dims.size(); ++d) row *= dims[d];
  if (row > 0 && dims[0] > 0) {
    std::vector<hsize_t> chunk = dims;
    chunk[0] = std::max<hsize_t>(1, std::min<hsize_t>(dims[0], (hsize_t(1) << 20) / row));
    check(H5Pset_chunk(properties, static_cast<int>(chunk.size()), chunk.data()), "chunk " + name);
    check(H5Pset_fletcher32(properties), "checksum " + name);
  }
  Handle set(H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, properties, H5P_DEFAULT), H5Dclose,
             "create " + name);
  check(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "write " + name);
}

/// Writes each vector into /integrator/vectors as the solver hands it over.
class DatasetWriter : public VectorStore {
 public:
  explicit DatasetWriter(hid_t file) : m_file(file), m_type(complex_type()) {}
  void put(const std::string& name, std::vector<complex>&& elements) override {
    write_checksummed(m_file, "/integrator/vectors/" + name, m_type, {static_cast<hsize_t>(elements.size())},
                      elements.data());
    names.push_back(name);
    elements = {};  // (freed before the next is copied)
  }
  void require(const std::string&, std::size_t) const override { throw Error("DatasetWriter: write only"); }
  std::vector<complex> get(const std::string&) const override { throw Error("DatasetWriter: write only"); }
  std::vector<std::string> names;

 private:
  hid_t m_file;
  Handle m_type;
};

/// The file of c.part: the vectors from `save`, then everything else (c.solver is set from it).
void write_contents(hid_t file, Checkpoint& c, const std::function<SolverState(VectorStore&)>& save) {
  create_group(file, "/integrator");
  create_group(file, "/integrator/vectors");
  DatasetWriter writer(file);
  c.solver = save(writer);
  const SolverState& s = c.solver;
  const IntegratorState& in = s.integrator;
  std::vector<std::string> names, values;
  for (const auto& [name, value] : s.fingerprint) {
    names.push_back(name);
    values.push_back(value);
  }
  create_group(file, "/fingerprint");
  write_strings(file, "/fingerprint/names", names);
  write_strings(file, "/fingerprint/values", values);
  write_dataset(file, "/partition", {static_cast<hsize_t>(c.partition.size())}, c.partition.data());
  names.clear();
  std::vector<double> scalars;
  for (const auto& [name, value] : in.scalars) {
    names.push_back(name);
    scalars.push_back(value);
  }
  write_strings(file, "/integrator/scalar_names", names);
  write_checksummed(file, "/integrator/scalar_values", H5T_NATIVE_DOUBLE, {static_cast<hsize_t>(scalars.size())},
                    scalars.data());
  write_strings(file, "/integrator/vector_names", writer.names);
  const Handle ctype = complex_type();
  if (c.part == 0) {
    write_string_dataset(file, "/input", c.input_text);
    create_group(file, "/output");
    const hsize_t n = static_cast<hsize_t>(std::lround(std::sqrt(c.block)));
    std::vector<complex> rho;
    for (const Matrix& m : c.rho) rho.insert(rho.end(), m.data(), m.data() + n * n);
    write_checksummed(file, "/output/rho", ctype, {static_cast<hsize_t>(c.rho.size()), n, n}, rho.data());
    if (!c.current.empty() && !c.rho.empty())
      write_checksummed(file, "/output/current", ctype,
                        {static_cast<hsize_t>(c.rho.size()), static_cast<hsize_t>(c.current.size() / c.rho.size())},
                        c.current.data());
  }
  write_attribute(file, "format", std::string(format_name));
  write_attribute(file, "part", c.part);
  write_attribute(file, "parts", c.parts);
  write_attribute(file, "sequence", c.sequence);
  write_attribute(file, "time", in.time);
  write_attribute(file, "first_ado", s.first_ado);
  write_attribute(file, "num_ados", s.num_ados);
  write_attribute(file, "total_ados", s.total_ados);
  write_attribute(file, "block", c.block);
  write_attribute(file, "hermitian", static_cast<int>(s.hermitian));
  write_attribute(file, "method", std::string(to_string(in.method)));
  write_statistics(file, in.statistics);
  write_attribute(file, "wall_time_s", c.wall_time_s);
}

/// A part's header: everything but the vectors and the output.
Checkpoint read_header(hid_t file) {
  if (H5Aexists(file, "format") <= 0 || read_string_attribute(file, "format") != format_name)
    throw Error("it is not a heom checkpoint");
  Checkpoint c;
  SolverState& s = c.solver;
  IntegratorState& in = s.integrator;
  c.part = read_attribute<int>(file, "part");
  c.parts = read_attribute<int>(file, "parts");
  c.sequence = read_attribute<long long>(file, "sequence");
  c.block = read_attribute<int>(file, "block");
  c.wall_time_s = read_attribute<double>(file, "wall_time_s");
  in.time = read_attribute<double>(file, "time");
  s.first_ado = read_attribute<long long>(file, "first_ado");
  s.num_ados = read_attribute<long long>(file, "num_ados");
  s.total_ados = read_attribute<long long>(file, "total_ados");
  s.hermitian = read_attribute<int>(file, "hermitian") != 0;
  in.method = parse_method(read_string_attribute(file, "method"));
  in.statistics = read_statistics(file);
  const std::vector<std::string> names = read_strings(file, "/fingerprint/names"),
                                 values = read_strings(file, "/fingerprint/values");
  if (names.size() != values.size()) throw Error("its fingerprint is damaged");
  for (std::size_t i = 0; i < names.size(); ++i) s.fingerprint.emplace_back(names[i], values[i]);
  {
    Handle set(H5Dopen2(file, "/partition", H5P_DEFAULT), H5Dclose, "open /partition");
    c.partition.resize(length_of(set, "/partition"));
    check(H5Dread(set, hdf5::native_type<long long>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, c.partition.data()),
          "read /partition");
  }
  const std::vector<std::string> scalar_names = read_strings(file, "/integrator/scalar_names");
  const std::vector<double> scalar_values = read_doubles(file, "/integrator/scalar_values");
  if (scalar_names.size() != scalar_values.size()) throw Error("its integrator values are damaged");
  for (std::size_t i = 0; i < scalar_names.size(); ++i) in.scalars[scalar_names[i]] = scalar_values[i];
  if (c.parts < 1 || c.part < 0 || c.part >= c.parts || c.partition.size() != static_cast<std::size_t>(c.parts) + 1 ||
      c.partition.front() != 0 || c.partition.back() != s.total_ados || c.block < 1 ||
      !std::is_sorted(c.partition.begin(), c.partition.end()) || s.first_ado != c.partition[c.part] ||
      s.num_ados != c.partition[c.part + 1] - c.partition[c.part])
    throw Error("its partition is damaged");
  return c;
}

/// Throws unless `header` is part `p` of the checkpoint whose part 0 (at `path`) is `first`.
void require_part_of(const Checkpoint& header, int p, const Checkpoint& first, const std::string& path) {
  if (header.part != p || header.parts != first.parts || header.sequence != first.sequence ||
      header.solver.integrator.time != first.solver.integrator.time || header.partition != first.partition ||
      header.solver.fingerprint != first.solver.fingerprint)
    throw Error("it is not part " + std::to_string(p) + " of the same checkpoint as " + path +
                " (the run stopped between writing them?)");
}

Handle open_existing(const std::string& name) {
  if (::access(name.c_str(), R_OK) != 0) throw Error("it does not exist or cannot be read");
  return Handle(H5Fopen(name.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose,
                "open it (it is truncated, or not an HDF5 file)");
}

/// A device's vectors of a checkpoint, each read when asked for from the parts that hold its ADOs.
class PartsReader : public VectorStore {
 public:
  PartsReader(std::string path, const Checkpoint& first, long long first_ado, long long num_ados,
              std::vector<std::string> names)
      : m_path(std::move(path)),
        m_first(first),
        m_first_ado(first_ado),
        m_num_ados(num_ados),
        m_names(std::move(names)) {
    m_first.rho.clear();  // (its header alone is needed)
  }

  void put(const std::string&, std::vector<complex>&&) override { throw Error("checkpoint: read only"); }

  void require(const std::string& name, std::size_t size) const override {
    if (std::find(m_names.begin(), m_names.end(), name) == m_names.end())
      throw Error("checkpoint " + m_path + ": the vector '" + name + "' is missing");
    if (size != static_cast<std::size_t>(m_num_ados) * m_first.block)
      throw Error("checkpoint " + m_path + ": the vector '" + name + "' has " +
                  std::to_string(static_cast<std::size_t>(m_num_ados) * m_first.block) + " elements, expected " +
                  std::to_string(size));
  }

  std::vector<complex> get(const std::string& name) const override {
    const std::lock_guard<std::mutex> lock(library_lock());
    const hsize_t block = static_cast<hsize_t>(m_first.block);
    std::vector<complex> out(static_cast<std::size_t>(m_num_ados) * block);
    const std::vector<long long>& bounds = m_first.partition;
    std::string reading = m_path;
    try {
      for (int p = 0; p < m_first.parts; ++p) {
        const long long lo = std::max(m_first_ado, bounds[p]), hi = std::min(m_first_ado + m_num_ados, bounds[p + 1]);
        if (lo >= hi) continue;
        reading = checkpoint_part_path(m_path, p, m_first.sequence);
        const Handle part = open_existing(reading);
        require_part_of(read_header(part), p, m_first, m_path);
        read_complex_range(part, "/integrator/vectors/" + name, static_cast<hsize_t>(bounds[p + 1] - bounds[p]) * block,
                           static_cast<hsize_t>(lo - bounds[p]) * block, static_cast<hsize_t>(hi - lo) * block,
                           out.data() + static_cast<std::size_t>(lo - m_first_ado) * block);
      }
    } catch (const Error& e) {
      throw Error("checkpoint " + reading + ": " + e.what());
    }
    return out;
  }

 private:
  std::string m_path;
  Checkpoint m_first;  // part 0's header
  long long m_first_ado, m_num_ados;
  std::vector<std::string> m_names;
};

}  // namespace

std::string with_suffix(const std::string& path, const std::string& suffix) {
  const bool h5 = path.size() > 3 && path.compare(path.size() - 3, 3, ".h5") == 0;
  return (h5 ? path.substr(0, path.size() - 3) : path) + suffix + ".h5";
}

std::string checkpoint_part_path(const std::string& path, int part, long long sequence) {
  if (part == 0) return path;
  return with_suffix(path, ".part" + std::to_string(part) + (sequence % 2 != 0 ? "-odd" : "-even"));
}

void write_checkpoint(const std::string& path, Checkpoint checkpoint,
                      const std::function<SolverState(VectorStore&)>& save,
                      const std::function<void()>& before_rename) {
  write_atomically(
      checkpoint_part_path(path, checkpoint.part, checkpoint.sequence),
      [&](hid_t file) { write_contents(file, checkpoint, save); }, before_rename);
}

Checkpoint read_checkpoint(const std::string& path, long long first_ado, long long num_ados, bool with_output) {
  const std::lock_guard<std::mutex> lock(library_lock());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  std::string reading = path;
  try {
    const Handle file = open_existing(path);
    Checkpoint c = read_header(file);
    if (c.part != 0) throw Error("it is part " + std::to_string(c.part) + " of a checkpoint; give part 0's file");
    const hsize_t block = static_cast<hsize_t>(c.block);
    {
      Handle set(H5Dopen2(file, "/output/rho", H5P_DEFAULT), H5Dclose, "open /output/rho");
      const auto dims = dataset_dims(set, "/output/rho");
      if (dims.size() != 3 || dims[1] != dims[2] || dims[1] * dims[2] != block)
        throw Error("/output/rho has the wrong shape");
      c.outputs = static_cast<long long>(dims[0]);
      if (with_output) {
        std::vector<complex> flat(dims[0] * dims[1] * dims[2]);
        if (!flat.empty())
          check(H5Dread(set, complex_type(), H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data()), "read /output/rho");
        const int n = static_cast<int>(dims[1]);
        for (hsize_t t = 0; t < dims[0]; ++t) {
          Matrix m(n, n);
          std::copy(flat.begin() + t * n * n, flat.begin() + (t + 1) * n * n, m.data());
          c.rho.push_back(m);
        }
      }
    }
    if (with_output && H5Lexists(file, "/output/current", H5P_DEFAULT) > 0) {
      Handle set(H5Dopen2(file, "/output/current", H5P_DEFAULT), H5Dclose, "open /output/current");
      const auto dims = dataset_dims(set, "/output/current");
      if (dims.size() != 2 || static_cast<long long>(dims[0]) != c.outputs)
        throw Error("/output/current has the wrong shape");
      c.current.resize(dims[0] * dims[1]);
      if (!c.current.empty())
        check(H5Dread(set, complex_type(), H5S_ALL, H5S_ALL, H5P_DEFAULT, c.current.data()), "read /output/current");
    }
    const std::vector<std::string> vector_names = read_strings(file, "/integrator/vector_names");
    const auto part_length = [&](int p) { return static_cast<hsize_t>(c.partition[p + 1] - c.partition[p]) * block; };
    if (num_ados < 0) {
      // Every part is there, belongs to this checkpoint, and holds every vector at its length.
      for (int p = 0; p < c.parts; ++p) {
        reading = checkpoint_part_path(path, p, c.sequence);
        const Handle part = p == 0 ? Handle(H5Freopen(file), H5Fclose, "reopen it") : open_existing(reading);
        if (p > 0) require_part_of(read_header(part), p, c, path);
        for (const std::string& name : vector_names) open_vector(part, "/integrator/vectors/" + name, part_length(p));
      }
      return c;
    }

    // This device's ADOs, read from the parts that hold them as the solver asks for each vector.
    if (first_ado < 0 || first_ado + num_ados > c.solver.total_ados)
      throw Error("it holds " + std::to_string(c.solver.total_ados) + " ADOs, not ADOs " + std::to_string(first_ado) +
                  ".." + std::to_string(first_ado + num_ados - 1));
    c.vectors = std::make_shared<PartsReader>(path, c, first_ado, num_ados, vector_names);
    c.solver.first_ado = first_ado;
    c.solver.num_ados = num_ados;
    c.part = -1;  // (gathered: no longer one part's)
    return c;
  } catch (const Error& e) {
    throw Error("checkpoint " + reading + ": " + e.what());
  }
}

void remove_checkpoint(const std::string& path) {
  std::remove(path.c_str());
  std::remove((path + ".tmp").c_str());
  // Parts 1, 2, ... of both alternating names, up to the first part of which neither exists.
  for (int p = 1;; ++p) {
    bool any = false;
    for (long long parity : {0, 1}) {
      const std::string part = checkpoint_part_path(path, p, parity);
      any = (std::remove(part.c_str()) == 0) || any;
      any = (std::remove((part + ".tmp").c_str()) == 0) || any;
    }
    if (!any) break;
  }
}

}  // namespace heom::io
