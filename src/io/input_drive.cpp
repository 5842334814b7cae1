// [[system.drive]]: the time-dependent terms f(t) H_d of the system Hamiltonian.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "io/input_sections.hpp"

namespace heom::io::impl {

namespace {

/// The shape's keys, read in solver units: amplitudes and frequencies are energies, the rest times.
DriveShape read_shape(TableReader& d, const std::string& shape, const UnitScale& scale, double t_end) {
  const std::vector<std::string> common = {"shape", "operator", "operator_imag"};
  auto allow = [&](std::vector<std::string> keys) {
    keys.insert(keys.end(), common.begin(), common.end());
    d.allow_only(keys, "a " + shape + " [[system.drive]]");
  };
  auto optional = [&](const std::string& key, double fallback) { return d.has(key) ? *d.number(key) : fallback; };
  if (shape == "cosine") {
    allow({"amplitude", "frequency", "phase"});
    return DriveShape::cosine(*d.number("amplitude") * scale.energy, *d.number("frequency") * scale.energy,
                              optional("phase", 0.0));
  }
  if (shape == "gaussian") {
    allow({"amplitude", "center", "width", "frequency", "phase"});
    return DriveShape::gaussian(*d.number("amplitude") * scale.energy, *d.number("center") * scale.time,
                                d.positive("width") * scale.time, optional("frequency", 0.0) * scale.energy,
                                optional("phase", 0.0));
  }
  if (shape == "constant") {
    allow({"amplitude", "start", "end"});
    const double start = optional("start", 0.0) * scale.time;
    const double end = d.has("end") ? *d.number("end") * scale.time : std::numeric_limits<double>::infinity();
    if (!(end > start))
      d.fail("end", "must come after start (" + format(start / scale.time) + ")", d.table().get("end"));
    return DriveShape::constant(*d.number("amplitude") * scale.energy, start, end);
  }
  allow({"times", "values", "values_imag"});
  const std::vector<double> times = *d.numbers("times");
  const std::vector<double> re = *d.numbers("values");
  const std::vector<double> im = d.has("values_imag") ? *d.numbers("values_imag") : std::vector<double>(re.size());
  if (times.size() < 2) d.fail("times", "needs at least 2 samples", d.table().get("times"));
  if (re.size() != times.size())
    d.fail("values", "has " + std::to_string(re.size()) + " entries but times has " + std::to_string(times.size()),
           d.table().get("values"));
  if (im.size() != times.size())
    d.fail("values_imag", "has " + std::to_string(im.size()) + " entries but times has " + std::to_string(times.size()),
           d.table().get("values_imag"));
  for (std::size_t i = 1; i < times.size(); ++i)
    if (!(times[i] > times[i - 1]))
      d.fail("times",
             "must increase, but times[" + std::to_string(i) + "] = " + format(times[i]) + " follows " +
                 format(times[i - 1]),
             d.table().get("times"));
  // (A table that stops short of the run would leave f(t) to a guess.)
  if (times.front() > 0.0)
    d.fail("times", "starts at t = " + format(times.front()) + ", after the run's start at t = 0",
           d.table().get("times"));
  if (times.back() * scale.time < t_end * (1.0 - 1e-12))
    d.fail("times", "ends at t = " + format(times.back()) + ", before dynamics.t_end = " + format(t_end / scale.time),
           d.table().get("times"));
  std::vector<double> scaled_times;
  std::vector<complex> values;
  for (std::size_t i = 0; i < times.size(); ++i) {
    scaled_times.push_back(times[i] * scale.time);
    values.emplace_back(re[i] * scale.energy, im[i] * scale.energy);
  }
  return DriveShape::table(std::move(scaled_times), std::move(values));
}

}  // namespace

std::vector<Drive> read_drives(TableReader& system, const UnitScale& scale, int dimension, double t_end) {
  std::vector<Drive> drives;
  const toml::node* node = system.node("drive", false);
  if (!node) return drives;
  const toml::array* list = node->as_array();
  if (!list || !list->is_array_of_tables()) system.fail("drive", "expected [[system.drive]] tables", node);
  for (std::size_t i = 0; i < list->size(); ++i) {
    TableReader d(*list->get(i)->as_table(), "system.drive[" + std::to_string(i + 1) + "]", system.file());
    const std::string shape = *d.string("shape");
    if (shape != "cosine" && shape != "gaussian" && shape != "constant" && shape != "table")
      d.fail("shape", "unknown shape \"" + shape + "\" (expected cosine, gaussian, constant or table)",
             d.table().get("shape"));
    DriveShape f = read_shape(d, shape, scale, t_end);
    Matrix op = *d.complex_matrix("operator", "operator_imag");
    if (op.rows() != dimension || op.cols() != dimension)
      d.fail("operator",
             "is " + op.shape_string() + " but system.hamiltonian is " + std::to_string(dimension) + "x" +
                 std::to_string(dimension),
             d.table().get("operator"));
    // H(t) must stay Hermitian: a real f needs a Hermitian operator; complex tables are checked together below.
    if (f.is_real()) require_hermitian(d, "operator", op);
    drives.push_back({std::move(op), std::move(f)});
  }
  // The complex tables' terms, summed at every sample time of each (e.g. f sigma_+ + f* sigma_-): Hermitian.
  std::size_t first_complex = drives.size();
  for (std::size_t i = 0; i < drives.size() && first_complex == drives.size(); ++i)
    if (!drives[i].shape.is_real()) first_complex = i;
  if (first_complex == drives.size()) return drives;
  for (const Drive& sampled : drives) {
    if (sampled.shape.is_real()) continue;
    const std::vector<double> times = sampled.shape.breakpoints();  // (a table's: its ends)
    for (double t = times.front(), dt = (times.back() - times.front()) / 256.0; t <= times.back(); t += dt) {
      Matrix sum(dimension, dimension);
      for (const Drive& drive : drives)
        if (!drive.shape.is_real()) sum += drive.shape(t) * drive.op;
      if (const auto at = sum.first_non_hermitian(1e-12)) {
        TableReader d(*list->get(first_complex)->as_table(), "system.drive[" + std::to_string(first_complex + 1) + "]",
                      system.file());
        d.fail("values_imag",
               "makes H(t) non-Hermitian at t = " + format(t / scale.time) + " (element (" + std::to_string(at->first) +
                   ", " + std::to_string(at->second) +
                   ")): pair each complex drive with the adjoint operator and the conjugate values",
               d.table().get("values_imag"));
      }
    }
  }
  return drives;
}

}  // namespace heom::io::impl
