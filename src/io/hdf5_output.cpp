// The program's output file (HDF5).
#include "io/hdf5_output.hpp"

#include <cmath>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "heom/config.hpp"
#include "heom/core/error.hpp"
#include "io/hdf5_support.hpp"

namespace heom::io {
namespace {

using namespace hdf5;

/// /ensemble; `streamed`: its group and per-member datasets are already there (EnsembleFile).
void write_ensemble(hid_t file, const EnsembleRecord& e, hsize_t nt, hsize_t n, hid_t ctype, bool streamed) {
  const Handle group = streamed ? Handle(H5Gopen2(file, "/ensemble", H5P_DEFAULT), H5Gclose, "open /ensemble")
                                : create_group(file, "/ensemble");
  const hsize_t members = static_cast<hsize_t>(e.members), parameters = e.parameter_names.size();
  write_attribute(group, "members", e.members);
  write_attribute(group, "realizations", e.realizations);
  write_attribute(group, "sweep_points", e.sweep_points);
  write_attribute(group, "seed", e.seed);
  write_attribute(group, "energy_unit", e.energy_unit);
  if (!streamed) {
    // (the input's H: a [response]'s run is on its manifolds, of another dimension)
    const hsize_t nh = members > 0 ? static_cast<hsize_t>(std::llround(std::sqrt(
                                         static_cast<double>(e.hamiltonians.size()) / static_cast<double>(members))))
                                   : n;
    write_dataset(file, "/ensemble/hamiltonian", ctype, {members, nh, nh}, e.hamiltonians.data());
    write_dataset(file, "/ensemble/steps", {members}, e.steps.data());
    write_dataset(file, "/ensemble/worker", {members}, e.workers.data());
  }
  if (!e.site_energy_sigma.empty())
    write_dataset(file, "/ensemble/site_energy_sigma", {static_cast<hsize_t>(e.site_energy_sigma.size())},
                  e.site_energy_sigma.data());
  if (parameters > 0) {
    write_strings(file, "/ensemble/parameter_names", e.parameter_names);
    if (!streamed) write_dataset(file, "/ensemble/parameters", {members, parameters}, e.parameters.data());
    write_dataset(file, "/ensemble/sweep_mean", ctype, {static_cast<hsize_t>(e.sweep_points), nt, n, n},
                  e.sweep_mean.data());
  }
  if (!e.member_rho.empty()) write_dataset(file, "/ensemble/rho", ctype, {members, nt, n, n}, e.member_rho.data());
  if (!e.sweep_current.empty())
    write_dataset(file, "/ensemble/sweep_current", ctype,
                  {static_cast<hsize_t>(e.sweep_points), nt, e.sweep_current.size() / (e.sweep_points * nt)},
                  e.sweep_current.data());
  if (!e.member_current.empty())
    write_dataset(file, "/ensemble/current", ctype, {members, nt, e.member_current.size() / (members * nt)},
                  e.member_current.data());
}

void write_steady(hid_t file, const SteadyRecord& s, const RunRecord& r, hid_t ctype) {
  const hsize_t n = static_cast<hsize_t>(r.dimension);
  const Handle group = create_group(file, "/steady");
  write_dataset(file, "/steady/rho", ctype, {n, n}, s.rho.data());
  if (!s.current.empty()) write_dataset(file, "/steady/current", ctype, {s.current.size()}, s.current.data());
  if (!s.ados.empty()) {
    const hsize_t na = static_cast<hsize_t>(r.num_ados), k = static_cast<hsize_t>(r.num_exponents);
    write_dataset(file, "/steady/ados", ctype, {na, n, n}, s.ados.data());
    if (k > 0) write_dataset(file, "/steady/ado_labels", {na, k}, s.ado_labels.data());
  }
  write_attribute(group, "residual", s.residual);
  write_attribute(group, "rate", s.rate);
  write_attribute(group, "tolerance", s.tolerance);
  write_attribute(group, "iterations", s.iterations);
  write_attribute(group, "cycles", s.cycles);
  write_attribute(group, "preconditioner", s.preconditioner);
  write_attribute(group, "fell_back", static_cast<int>(s.fell_back));
}

void write_spectrum(hid_t file, const SpectrumRecord& s, hid_t ctype) {
  const Handle group = create_group(file, "/spectrum");
  const hsize_t nw = s.omega.size(), nt = s.t.size();
  write_dataset(file, "/spectrum/omega", {nw}, s.omega.data());
  write_dataset(file, "/spectrum/intensity", {nw}, s.intensity.data());
  write_dataset(file, "/spectrum/t", {nt}, s.t.data());
  write_dataset(file, "/spectrum/correlation", ctype, {nt}, s.correlation.data());
  if (!s.member_intensity.empty())
    write_dataset(file, "/spectrum/member_intensity", {static_cast<hsize_t>(s.member_intensity.size() / nw), nw},
                  s.member_intensity.data());
  write_attribute(group, "kind", s.kind);
  write_attribute(group, "definition", s.definition);
  write_attribute(group, "frequency_unit", s.frequency_unit);
  write_attribute(group, "window", s.window);
  write_attribute(group, "padding", s.padding);
  write_attribute(group, "dipole_strength", s.dipole_strength);
  write_attribute(group, "method", s.method);
  if (s.method == "frequency") {
    write_attribute(group, "solves", s.solves);
    write_attribute(group, "iterations", s.iterations);
  }
}

void write_response(hid_t file, const ResponseRecord& r, hid_t ctype) {
  const Handle group = create_group(file, "/response");
  const hsize_t ns = r.signals.size(), np = r.pathways.size(), nw = r.waiting_times.size(), n1 = r.t1.size(),
                n3 = r.t3.size();
  write_dataset(file, "/response/t1", {n1}, r.t1.data());
  write_dataset(file, "/response/waiting_times", {nw}, r.waiting_times.data());
  write_dataset(file, "/response/t3", {n3}, r.t3.data());
  write_strings(file, "/response/signals", r.signals);
  write_strings(file, "/response/pathways", r.pathways);
  write_dataset(file, "/response/values", ctype, {ns, np, nw, n1, n3}, r.values.data());
  write_attribute(group, "polarization", r.polarization);
  write_attribute(group, "definition", r.definition);
  write_attribute(group, "propagations", r.propagations);
  if (r.omega1.empty()) return;
  const Handle spectra = create_group(file, "/spectrum2d");
  const hsize_t m1 = r.omega1.size(), m3 = r.omega3.size();
  write_dataset(file, "/spectrum2d/omega1", {m1}, r.omega1.data());
  write_dataset(file, "/spectrum2d/omega3", {m3}, r.omega3.data());
  write_dataset(file, "/spectrum2d/waiting_times", {nw}, r.waiting_times.data());
  write_strings(file, "/spectrum2d/signals", r.signals);
  write_dataset(file, "/spectrum2d/absorptive", {nw, m1, m3}, r.absorptive.data());
  write_dataset(file, "/spectrum2d/signal_spectra", ctype, {ns, nw, m1, m3}, r.signal_spectra.data());
  write_attribute(spectra, "frequency_unit", r.frequency_unit);
  write_attribute(spectra, "window", r.window);
  write_attribute(spectra, "padding", r.padding);
  write_attribute(spectra, "definition",
                  std::string("S(w1, T, w3) = int int R(t3, T, t1) W(t1) W(t3) exp(i w3 t3 -+ i w1 t1) dt1 dt3 (- for "
                              "rephasing); absorptive = Re of the signals' sum"));
}

void write_contents(hid_t file, const RunRecord& r, bool streamed = false) {
  const hsize_t nt = r.times.size(), n = static_cast<hsize_t>(r.dimension);
  const Handle ctype = complex_type();
  if (nt > 0) {
    write_dataset(file, "/t", {nt}, r.times.data());
    std::vector<complex> rho;
    rho.reserve(nt * n * n);
    for (const Matrix& m : r.rho) rho.insert(rho.end(), m.data(), m.data() + n * n);
    write_dataset(file, "/rho", ctype, {nt, n, n}, rho.data());
    if (!r.drive.empty()) write_dataset(file, "/drive", ctype, {nt, r.drive.size() / nt}, r.drive.data());
    if (!r.current.empty()) write_dataset(file, "/current", ctype, {nt, r.current.size() / nt}, r.current.data());
  }
  if (r.steady) write_steady(file, *r.steady, r, ctype);
  if (r.spectrum) write_spectrum(file, *r.spectrum, ctype);
  if (r.response) write_response(file, *r.response, ctype);
  write_string_dataset(file, "/input", r.input_text);
  if (!r.partition.empty())
    write_dataset(file, "/partition", {static_cast<hsize_t>(r.partition.size())}, r.partition.data());
  if (r.has_ados) {
    const hsize_t na = static_cast<hsize_t>(r.num_ados), k = static_cast<hsize_t>(r.num_exponents);
    write_dataset(file, "/ados_final", ctype, {na, n, n}, r.ados_final.data());
    if (k > 0) write_dataset(file, "/ado_labels", {na, k}, r.ado_labels.data());
  }
  if (r.ensemble) write_ensemble(file, *r.ensemble, nt, n, ctype, streamed);
  write_attribute(file, "heom_version", std::string(HEOM_VERSION_STRING));
  write_attribute(file, "units", r.units);
  write_attribute(file, "time_unit", r.time_unit);
  write_attribute(file, "dimension", r.dimension);
  write_attribute(file, "num_exponents", r.num_exponents);
  write_attribute(file, "depth", r.depth);
  write_attribute(file, "num_ados", r.num_ados);
  write_attribute(file, "backend", r.backend);
  write_attribute(file, "generator_kernel", r.generator_kernel);
  write_attribute(file, "threads", r.threads);
  write_attribute(file, "devices", r.devices);
  write_attribute(file, "wall_time_s", r.wall_time_s);
  write_attribute(file, "method", r.method);
  write_attribute(file, "rtol", r.rtol);
  write_attribute(file, "atol", r.atol);
  write_attribute(file, "step", r.step);
  write_statistics(file, r.statistics);
}

}  // namespace

std::string output_problem(const std::string& path, std::uint64_t bytes) {
  const std::string folder = hdf5::folder_of(path);
  struct stat info {};
  if (stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return "cannot write " + path + ": its folder " + folder + " does not exist";
  if (access(folder.c_str(), W_OK | X_OK) != 0)
    return "cannot write " + path + ": its folder " + folder + " is not writable";
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return "cannot write " + path + ": it is a folder";
  struct statvfs space {};
  if (statvfs(folder.c_str(), &space) == 0) {
    const std::uint64_t free_bytes = static_cast<std::uint64_t>(space.f_bavail) * space.f_frsize;
    if (free_bytes < bytes)
      return "cannot write " + path + ": it needs about " + std::to_string(bytes >> 20) + " MiB but " + folder +
             " has " + std::to_string(free_bytes >> 20) + " MiB free";
  }
  return "";
}

void write_run_record(const std::string& path, const RunRecord& record) {
  if (record.rho.size() != record.times.size()) throw Error("write_run_record: rho and t differ in length");
  hdf5::write_atomically(path, [&](hid_t file) { write_contents(file, record); });
}

namespace {

/// One per-member dataset of /ensemble: `row` values of `type` per member, a block of members held
/// and written as one hyperslab.
class MemberRows {
 public:
  MemberRows(hid_t file, const char* name, hid_t type, std::vector<hsize_t> dims, std::size_t value_bytes)
      : m_name(name), m_type(type), m_dims(std::move(dims)), m_value_bytes(value_bytes) {
    m_row = 1;
    for (std::size_t d = 1; d < m_dims.size(); ++d) m_row *= m_dims[d];
    Handle space(H5Screate_simple(static_cast<int>(m_dims.size()), m_dims.data(), nullptr), H5Sclose,
                 "create the dataspace of " + m_name);
    const Handle properties = untimed(H5P_DATASET_CREATE);
    m_set = H5Dcreate2(file, name, type, space, H5P_DEFAULT, properties, H5P_DEFAULT);
    check(m_set < 0 ? -1 : 0, "create " + m_name);
  }
  ~MemberRows() {
    if (m_set >= 0) H5Dclose(m_set);
  }
  MemberRows(const MemberRows&) = delete;
  MemberRows& operator=(const MemberRows&) = delete;
  std::size_t row_bytes() const { return m_row * m_value_bytes; }
  /// Appends one member's row (`m_row` values).
  void add(const void* row) {
    const auto* bytes = static_cast<const unsigned char*>(row);
    m_held.insert(m_held.end(), bytes, bytes + row_bytes());
  }
  /// Writes the members held.
  void flush() {
    const hsize_t count = m_held.size() / std::max<std::size_t>(row_bytes(), 1);
    if (count == 0) return;
    std::vector<hsize_t> start(m_dims.size(), 0), extent = m_dims;
    start[0] = m_written;
    extent[0] = count;
    Handle file_space(H5Dget_space(m_set), H5Sclose, "select in " + m_name);
    check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, extent.data(), nullptr),
          "select in " + m_name);
    Handle memory(H5Screate_simple(static_cast<int>(extent.size()), extent.data(), nullptr), H5Sclose,
                  "create a dataspace for " + m_name);
    check(H5Dwrite(m_set, m_type, memory, file_space, H5P_DEFAULT, m_held.data()), "write " + m_name);
    m_written += count;
    m_held.clear();
  }

 private:
  std::string m_name;
  hid_t m_type;
  std::vector<hsize_t> m_dims;
  std::size_t m_value_bytes, m_row = 1;
  hid_t m_set = -1;
  hsize_t m_written = 0;
  std::vector<unsigned char> m_held;
};

}  // namespace

struct EnsembleFile::Impl {
  std::string path;
  Shape shape;
  hdf5::AtomicFile file;
  Handle ctype = complex_type();
  std::vector<std::unique_ptr<MemberRows>> rows;  // hamiltonian, steps, worker, then parameters, rho, current
  MemberRows *hamiltonian, *steps, *worker, *parameters = nullptr, *rho = nullptr, *current = nullptr;
  std::size_t block = 1, held = 0;
  long long added = 0;
  std::vector<complex> flat;  // a member's rho, flattened

  Impl(const std::string& p, const Shape& s) : path(p), shape(s), file(p) {
    const hsize_t members = static_cast<hsize_t>(s.members), n = static_cast<hsize_t>(s.dimension), nt = s.times;
    const std::lock_guard<std::mutex> lock(hdf5::library_lock());
    const Handle group = create_group(file.id(), "/ensemble");
    auto make = [&](const char* name, hid_t type, std::vector<hsize_t> dims, std::size_t bytes) {
      rows.push_back(std::make_unique<MemberRows>(file.id(), name, type, std::move(dims), bytes));
      return rows.back().get();
    };
    hamiltonian = make("/ensemble/hamiltonian", ctype, {members, n, n}, sizeof(complex));
    steps = make("/ensemble/steps", H5T_NATIVE_LLONG, {members}, sizeof(long long));
    worker = make("/ensemble/worker", H5T_NATIVE_INT32, {members}, sizeof(int));
    if (s.parameters > 0) parameters = make("/ensemble/parameters", H5T_NATIVE_DOUBLE, {members, s.parameters}, 8);
    if (s.store_rho) rho = make("/ensemble/rho", ctype, {members, nt, n, n}, sizeof(complex));
    if (s.currents > 0) current = make("/ensemble/current", ctype, {members, nt, s.currents}, sizeof(complex));
    // Members held before a write: about 4 MiB of rows, at most 4096 members.
    std::size_t per_member = 0;
    for (const auto& r : rows) per_member += r->row_bytes();
    block = std::max<std::size_t>(1, std::min<std::size_t>(4096, (std::size_t{4} << 20) / per_member));
  }

  void flush() {
    for (const auto& r : rows) r->flush();
    held = 0;
  }
};

EnsembleFile::EnsembleFile(const std::string& path, const Shape& shape) {
  try {
    m = std::make_unique<Impl>(path, shape);
  } catch (const Error& e) {
    throw Error("cannot write " + path + ": " + e.what());
  }
}

EnsembleFile::~EnsembleFile() = default;

void EnsembleFile::add(long long steps, int worker, const std::vector<double>& parameters, const Matrix& hamiltonian,
                       const std::vector<Matrix>& rho, const std::vector<complex>& current) {
  const std::size_t n2 = static_cast<std::size_t>(m->shape.dimension) * m->shape.dimension;
  if (m->added >= m->shape.members || parameters.size() != m->shape.parameters ||
      static_cast<std::size_t>(hamiltonian.rows()) * hamiltonian.cols() != n2 ||
      (m->rho && rho.size() != m->shape.times) || current.size() != m->shape.times * m->shape.currents)
    throw Error("cannot write " + m->path + ": member " + std::to_string(m->added) + "'s rows have the wrong shape");
  try {
    m->hamiltonian->add(hamiltonian.data());
    m->steps->add(&steps);
    m->worker->add(&worker);
    if (m->parameters) m->parameters->add(parameters.data());
    if (m->rho) {
      m->flat.clear();
      for (const Matrix& r : rho) m->flat.insert(m->flat.end(), r.data(), r.data() + n2);
      m->rho->add(m->flat.data());
    }
    if (m->current) m->current->add(current.data());
    ++m->added;
    if (++m->held < m->block && m->added < m->shape.members) return;
    const std::lock_guard<std::mutex> lock(hdf5::library_lock());
    m->flush();
  } catch (const Error& e) {
    throw Error("cannot write " + m->path + ": " + e.what());
  }
}

void EnsembleFile::finish(const RunRecord& record) {
  if (m->added != m->shape.members)
    throw Error("cannot write " + m->path + ": " + std::to_string(m->added) + " of " +
                std::to_string(m->shape.members) + " members written");
  if (record.rho.size() != record.times.size()) throw Error("write_run_record: rho and t differ in length");
  try {
    {
      const std::lock_guard<std::mutex> lock(hdf5::library_lock());
      m->rows.clear();  // (closes the datasets)
      write_contents(m->file.id(), record, true);
    }
    m->file.commit();
  } catch (const Error& e) {
    throw Error("cannot write " + m->path + ": " + e.what());
  }
}

RunRecord read_run_record(const std::string& path) {
  using namespace hdf5;
  const std::lock_guard<std::mutex> lock(library_lock());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open " + path);
  RunRecord r;
  r.units = read_string_attribute(file, "units");
  r.time_unit = read_string_attribute(file, "time_unit");
  r.backend = read_string_attribute(file, "backend");
  r.generator_kernel = read_string_attribute(file, "generator_kernel");
  r.method = read_string_attribute(file, "method");
  if (H5Aexists(file, "devices") > 0) r.devices = read_string_attribute(file, "devices");  // (older files: 1)
  r.dimension = read_attribute<int>(file, "dimension");
  r.num_exponents = read_attribute<int>(file, "num_exponents");
  r.depth = read_attribute<int>(file, "depth");
  r.num_ados = read_attribute<long long>(file, "num_ados");
  r.threads = read_attribute<int>(file, "threads");
  r.wall_time_s = read_attribute<double>(file, "wall_time_s");
  r.rtol = read_attribute<double>(file, "rtol");
  r.atol = read_attribute<double>(file, "atol");
  r.step = read_attribute<double>(file, "step");
  r.statistics = read_statistics(file);
  {
    Handle set(H5Dopen2(file, "/input", H5P_DEFAULT), H5Dclose, "open /input");
    r.input_text = read_string(set, false, "/input");
  }
  if (H5Lexists(file, "/t", H5P_DEFAULT) > 0) {
    Handle set(H5Dopen2(file, "/t", H5P_DEFAULT), H5Dclose, "open /t");
    r.times.resize(dataset_dims(set, "/t").at(0));
    check(H5Dread(set, hdf5::native_type<double>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, r.times.data()), "read /t");
  }
  if (H5Lexists(file, "/partition", H5P_DEFAULT) > 0) {
    Handle set(H5Dopen2(file, "/partition", H5P_DEFAULT), H5Dclose, "open /partition");
    r.partition.resize(dataset_dims(set, "/partition").at(0));
    check(H5Dread(set, hdf5::native_type<long long>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, r.partition.data()),
          "read /partition");
  }
  const Handle ctype = complex_type();
  if (H5Lexists(file, "/rho", H5P_DEFAULT) > 0) {
    Handle set(H5Dopen2(file, "/rho", H5P_DEFAULT), H5Dclose, "open /rho");
    const auto dims = dataset_dims(set, "/rho");
    std::vector<complex> flat(dims.at(0) * dims.at(1) * dims.at(2));
    check(H5Dread(set, ctype, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data()), "read /rho");
    const int n = static_cast<int>(dims[1]);
    for (hsize_t t = 0; t < dims[0]; ++t) {
      Matrix m(n, n);
      std::copy(flat.begin() + t * n * n, flat.begin() + (t + 1) * n * n, m.data());
      r.rho.push_back(m);
    }
  }
  if (H5Lexists(file, "/current", H5P_DEFAULT) > 0) {
    Handle set(H5Dopen2(file, "/current", H5P_DEFAULT), H5Dclose, "open /current");
    const auto dims = dataset_dims(set, "/current");
    r.current.resize(dims.at(0) * dims.at(1));
    check(H5Dread(set, ctype, H5S_ALL, H5S_ALL, H5P_DEFAULT, r.current.data()), "read /current");
  }
  if (H5Lexists(file, "/ados_final", H5P_DEFAULT) > 0) {
    r.has_ados = true;
    Handle set(H5Dopen2(file, "/ados_final", H5P_DEFAULT), H5Dclose, "open /ados_final");
    const auto dims = dataset_dims(set, "/ados_final");
    r.ados_final.resize(dims.at(0) * dims.at(1) * dims.at(2));
    check(H5Dread(set, ctype, H5S_ALL, H5S_ALL, H5P_DEFAULT, r.ados_final.data()), "read /ados_final");
    if (H5Lexists(file, "/ado_labels", H5P_DEFAULT) > 0) {
      Handle labels(H5Dopen2(file, "/ado_labels", H5P_DEFAULT), H5Dclose, "open /ado_labels");
      const auto ldims = dataset_dims(labels, "/ado_labels");
      r.ado_labels.resize(ldims.at(0) * ldims.at(1));
      check(H5Dread(labels, hdf5::native_type<int>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, r.ado_labels.data()),
            "read /ado_labels");
    }
  }
  return r;
}

}  // namespace heom::io
