// The input's [ensemble]: static disorder and [[ensemble.sweep]] sweeps, one member per point and realization.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "heom/ensemble/disorder.hpp"
#include "io/input_sections.hpp"

namespace heom::io::impl {

namespace {
/// A swept parameter: what it names in the document.
struct SweepTarget {
  enum class Kind { bath, drive, hamiltonian, initial_state } kind;
  std::vector<int> tables;  // bath (drive): the [[bath]] ([[system.drive]]) tables (0-based), one or all ("bath[*]")
  std::string key;          // bath, drive: the key in each
  int element = 0;          // hamiltonian: the diagonal element
};

/// The tables (0-based) that `index` ("*" or a number from 1) picks out of `list` ([[bath]] or
/// [[system.drive]] tables, each a `what`), or a refusal naming the sweep's parameter.
std::vector<int> selected_tables(TableReader& sweep, const std::string& name, const std::string& index,
                                 const toml::array* list, const std::string& what) {
  const toml::node* at = sweep.table().get("parameter");
  const int count = list ? static_cast<int>(list->size()) : 0;
  std::vector<int> tables;
  if (index == "*") {
    if (count == 0) sweep.fail("parameter", "\"" + name + "\": the model has no " + what, at);
    for (int i = 0; i < count; ++i) tables.push_back(i);
    return tables;
  }
  const int i = std::stoi(index) - 1;
  if (i < 0 || i >= count)
    sweep.fail("parameter",
               "\"" + name + "\": the model has " + std::to_string(count) + " " + what + (count == 1 ? "" : "s") +
                   " (numbered from 1)",
               at);
  return {i};
}

SweepTarget sweep_target(TableReader& sweep, const toml::table& doc, int dimension) {
  const std::string name = *sweep.string("parameter");
  const toml::node* at = sweep.table().get("parameter");
  std::smatch m;
  static const std::regex bath_parameter(
      R"(bath\[(\*|[0-9]{1,6})\]\.(temperature|lambda|gamma|w0|alpha|cutoff|exponent|mu|width))");
  static const std::regex drive_parameter(
      R"(system\.drive\[(\*|[0-9]{1,6})\]\.(amplitude|frequency|phase|center|width|start|end))");
  static const std::regex diagonal_element(R"(system\.hamiltonian\[([0-9]{1,6})\]\[([0-9]{1,6})\])");
  SweepTarget t;
  if (std::regex_match(name, m, bath_parameter)) {
    t.kind = SweepTarget::Kind::bath;
    t.key = m[2];
    const toml::array* baths = doc.get("bath") ? doc.get("bath")->as_array() : nullptr;
    t.tables = selected_tables(sweep, name, m[1], baths, "bath");
    for (int b : t.tables) {
      const toml::table& bath = *baths->get(b)->as_table();
      if (!bath.contains(t.key))
        sweep.fail("parameter",
                   "\"" + name + "\": bath[" + std::to_string(b + 1) + "] (" +
                       bath.get("kind")->value_or(std::string("?")) + ") has no " + t.key,
                   at);
    }
    return t;
  }
  if (std::regex_match(name, m, drive_parameter)) {
    t.kind = SweepTarget::Kind::drive;
    t.key = m[2];
    const toml::node* system = doc.get("system");
    const toml::node* list = system && system->as_table() ? system->as_table()->get("drive") : nullptr;
    const toml::array* drives = list ? list->as_array() : nullptr;
    t.tables = selected_tables(sweep, name, m[1], drives, "drive");
    for (int d : t.tables) {
      const toml::table& drive = *drives->get(d)->as_table();
      const std::string shape = drive.get("shape") ? drive.get("shape")->value_or(std::string("?")) : "?";
      const std::string keys = shape == "cosine"     ? " amplitude frequency phase "
                               : shape == "gaussian" ? " amplitude center width frequency phase "
                               : shape == "constant" ? " amplitude start end "
                                                     : " ";
      // (An unknown shape is the base document's error, reported as such when it is read.)
      if (shape != "table" && keys == " ") continue;
      if (keys.find(" " + t.key + " ") == std::string::npos)
        sweep.fail("parameter",
                   "\"" + name + "\": system.drive[" + std::to_string(d + 1) + "] (" + shape + ") has no " + t.key, at);
    }
    return t;
  }
  if (std::regex_match(name, m, diagonal_element)) {
    t.kind = SweepTarget::Kind::hamiltonian;
    const int i = std::stoi(m[1]), j = std::stoi(m[2]);
    if (i != j) sweep.fail("parameter", "\"" + name + "\": only diagonal elements of H can be swept", at);
    if (i >= dimension)
      sweep.fail("parameter",
                 "\"" + name + "\": the hamiltonian is " + std::to_string(dimension) + "x" + std::to_string(dimension),
                 at);
    t.element = i;
    return t;
  }
  if (name == "initial_state.rho") {
    if (!doc.contains("initial_state"))
      sweep.fail("parameter", "\"initial_state.rho\": the input has no [initial_state] to sweep", at);
    t.kind = SweepTarget::Kind::initial_state;
    return t;
  }
  sweep.fail("parameter",
             "unknown parameter \"" + name +
                 "\" (expected bath[N].temperature, bath[N].lambda, bath[N].gamma, bath[N].w0, or of an Ohmic "
                 "spectral density bath[N].alpha, bath[N].cutoff, bath[N].exponent, or of a lead bath[N].mu, "
                 "bath[N].width, with N a bath number or *, "
                 "system.drive[N].amplitude, .frequency, .phase, .center, .width, .start, .end, "
                 "system.hamiltonian[J][J], or initial_state.rho)",
             at);
}

/// Whether two sweeps set a value in common (the later would silently override the earlier).
bool overlap(const SweepTarget& a, const SweepTarget& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == SweepTarget::Kind::hamiltonian) return a.element == b.element;
  if (a.kind == SweepTarget::Kind::initial_state) return true;
  if (a.key != b.key) return false;
  for (int x : a.tables)
    if (std::find(b.tables.begin(), b.tables.end(), x) != b.tables.end()) return true;
  return false;
}

/// Sets `target` to `value` in `doc`.
void apply_sweep(toml::table& doc, const SweepTarget& target, const toml::node& value) {
  switch (target.kind) {
    case SweepTarget::Kind::bath:
      for (int b : target.tables)
        doc["bath"].as_array()->get(b)->as_table()->insert_or_assign(target.key, number_of(value));
      break;
    case SweepTarget::Kind::drive:
      for (int d : target.tables)
        doc["system"]["drive"].as_array()->get(d)->as_table()->insert_or_assign(target.key, number_of(value));
      break;
    case SweepTarget::Kind::hamiltonian: {
      toml::array& row = *doc["system"]["hamiltonian"].as_array()->get(target.element)->as_array();
      row.replace(row.begin() + target.element, number_of(value));
      break;
    }
    case SweepTarget::Kind::initial_state:
      doc["initial_state"].as_table()->insert_or_assign("rho", *value.as_array());
      doc["initial_state"].as_table()->erase("rho_imag");
      break;
  }
}

/// "FILE:LINE: key: problem" -> "key: problem".
std::string without_location(const std::string& message, const std::string& file) {
  if (message.rfind(file + ":", 0) != 0) return message;
  const std::size_t colon = message.find(": ", file.size());
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

/// [ensemble]'s own keys: the realizations, the seed, the disorder, what is stored, the batch.
void read_ensemble_settings(TableReader& e, int n, EnsembleConfig& c) {
  if (!e.has("members") && !e.has("sweep"))
    e.fail("members", "required key is missing (the number of members, or give [[ensemble.sweep]] tables)");
  if (auto members = e.integer("members", false)) {
    if (*members < 1 || *members > 10000000)
      e.fail("members", "must be between 1 and 10^7, got " + std::to_string(*members), e.table().get("members"));
    c.realizations = *members;
  }
  if (auto seed = e.integer("seed", false)) {
    if (*seed < 0) e.fail("seed", "must be >= 0, got " + std::to_string(*seed), e.table().get("seed"));
    c.seed = static_cast<std::uint64_t>(*seed);
  }
  if (const toml::node* sigma = e.node("site_energy_sigma", false)) {
    if (sigma->is_array()) {
      c.site_energy_sigma = *e.numbers("site_energy_sigma");
      if (static_cast<int>(c.site_energy_sigma.size()) != n)
        e.fail("site_energy_sigma",
               "has " + std::to_string(c.site_energy_sigma.size()) + " entries but system.hamiltonian is " +
                   std::to_string(n) + "x" + std::to_string(n) + " (one per diagonal element)",
               sigma);
    } else {
      c.site_energy_sigma.assign(n, e.number_value("site_energy_sigma", *sigma, "the value"));
    }
    for (std::size_t j = 0; j < c.site_energy_sigma.size(); ++j)
      if (c.site_energy_sigma[j] < 0.0)
        e.fail("site_energy_sigma",
               "must be >= 0, got " + format(c.site_energy_sigma[j]) + " for element " + std::to_string(j), sigma);
  }
  c.store_members = e.boolean("store_members", false).value_or(false);
  if (auto batch = e.integer("batch", false)) {
    if (*batch < 1 || *batch > 100000)
      e.fail("batch", "must be between 1 and 10^5, got " + std::to_string(*batch), e.table().get("batch"));
    c.batch = static_cast<int>(*batch);
  }
}

/// The sweeps: each a parameter (what it sets) and its values.
struct Sweeps {
  std::vector<SweepTarget> targets;
  std::vector<const toml::array*> values;
};

/// [[ensemble.sweep]] k: its parameter (refused where an earlier sweep sets it too) and its values,
/// each of which alone must make a valid run (its problem is reported as the base file's would be).
void read_sweep(TableReader& sweep, const toml::table& doc, const RunConfig& base, Sweeps& sweeps, EnsembleConfig& c) {
  sweep.allow_only({"parameter", "values"}, "[[ensemble.sweep]]");
  sweeps.targets.push_back(sweep_target(sweep, doc, base.model.dimension()));
  const std::string name = *sweep.string("parameter");
  for (std::size_t earlier = 0; earlier + 1 < sweeps.targets.size(); ++earlier)
    if (overlap(sweeps.targets[earlier], sweeps.targets.back()))
      sweep.fail("parameter",
                 "\"" + name + "\" sets what ensemble.sweep[" + std::to_string(earlier + 1) + "] (\"" +
                     c.parameter_names[earlier] + "\") already sweeps",
                 sweep.table().get("parameter"));
  c.parameter_names.push_back(name);
  const toml::node* v = sweep.node("values", true);
  const toml::array* a = v->as_array();
  if (!a || a->empty()) sweep.fail("values", "expected a non-empty array of values", v);
  for (std::size_t j = 0; j < a->size(); ++j) {
    const toml::node& x = *a->get(j);
    if (sweeps.targets.back().kind == SweepTarget::Kind::initial_state) {
      if (!x.is_array()) sweep.fail("values", "element " + std::to_string(j) + " is not a matrix [[...], ...]", &x);
    } else {
      sweep.number_value("values", x, "element " + std::to_string(j));
    }
    toml::table single = doc;
    apply_sweep(single, sweeps.targets.back(), x);
    try {
      parse_document(single, base.input_text, base.input_name, false);
    } catch (const InputError& error) {
      sweep.fail("values", "element " + std::to_string(j) + " gives " + without_location(error.what(), base.input_name),
                 &x);
    }
  }
  sweeps.values.push_back(a);
  if (c.sweep_points * static_cast<std::int64_t>(a->size()) > 10000000)
    sweep.fail("values", "the sweeps have more than 10^7 points", v);
  c.sweep_points *= static_cast<std::int64_t>(a->size());
}

/// Every point of the sweeps' Cartesian product (the first sweep slowest), parsed and validated as a
/// run of its own; the base run alone without sweeps.
std::vector<EnsembleMembers::Point> sweep_points(TableReader& e, const toml::table& doc, const RunConfig& base,
                                                 const Sweeps& sweeps, const EnsembleConfig& c) {
  const std::size_t count = sweeps.targets.size();
  std::vector<std::size_t> index(count, 0);
  std::vector<EnsembleMembers::Point> points;
  for (std::int64_t point = 0; point < c.sweep_points; ++point) {
    toml::table point_doc = doc;
    std::vector<double> parameters;
    std::string values_here;
    for (std::size_t k = 0; k < count; ++k) {
      const toml::node& value = *sweeps.values[k]->get(index[k]);
      apply_sweep(point_doc, sweeps.targets[k], value);
      parameters.push_back(sweeps.targets[k].kind == SweepTarget::Kind::initial_state ? static_cast<double>(index[k])
                                                                                      : number_of(value));
      values_here += (k ? ", " : "") + c.parameter_names[k] + " element " + std::to_string(index[k]);
    }
    std::optional<RunConfig> swept;
    try {
      if (count > 0) swept = parse_document(point_doc, base.input_text, base.input_name, false);
    } catch (const InputError& error) {  // values valid alone, not together (e.g. gamma and w0)
      e.fail("sweep", "the point " + values_here + " gives " + without_location(error.what(), base.input_name),
             e.table().get("sweep"));
    }
    const RunConfig& at = swept ? *swept : base;
    points.push_back({at.model, at.rho0, at.input_hamiltonian, std::move(parameters)});
    // The next point: the last sweep fastest.
    for (std::size_t k = count; k-- > 0;) {
      if (++index[k] < sweeps.values[k]->size()) break;
      index[k] = 0;
    }
  }
  return points;
}

}  // namespace

EnsembleConfig read_ensemble(TableReader& root, const toml::table& doc, const RunConfig& base) {
  TableReader e = *sub_table(root, "ensemble", true);
  e.allow_only({"members", "seed", "site_energy_sigma", "store_members", "batch", "sweep"}, "[ensemble]");
  EnsembleConfig c;
  read_ensemble_settings(e, base.model.dimension(), c);
  Sweeps sweeps;
  if (const toml::node* node = e.node("sweep", false)) {
    const toml::array* list = node->as_array();
    if (!list || !list->is_array_of_tables()) e.fail("sweep", "expected [[ensemble.sweep]] tables", node);
    for (std::size_t k = 0; k < list->size(); ++k) {
      TableReader sweep(*list->get(k)->as_table(), "ensemble.sweep[" + std::to_string(k + 1) + "]", root.file());
      read_sweep(sweep, doc, base, sweeps, c);
    }
  }
  if (c.sweep_points * c.realizations > 10000000)
    e.fail("members", "the ensemble has more than 10^7 members", e.table().get("members"));
  c.members = EnsembleMembers(sweep_points(e, doc, base, sweeps, c), c.realizations, c.seed, c.site_energy_sigma,
                              unit_scale(base.units).energy);
  return c;
}

}  // namespace heom::io::impl

namespace heom::io {

EnsembleMembers::EnsembleMembers(std::vector<Point> points, std::int64_t realizations, std::uint64_t seed,
                                 std::vector<double> site_energy_sigma, double energy_scale)
    : m_points(std::move(points)),
      m_realizations(realizations),
      m_seed(seed),
      m_sigma(std::move(site_energy_sigma)),
      m_energy(energy_scale) {}

Matrix EnsembleMembers::hamiltonian(std::size_t i) const {
  const Point& p = point(i);
  const auto realization = static_cast<std::uint64_t>(i % static_cast<std::size_t>(m_realizations));
  return m_sigma.empty() ? p.hamiltonian : with_diagonal_disorder(p.hamiltonian, m_sigma, m_seed, realization);
}

EnsembleMemberConfig EnsembleMembers::operator[](std::size_t i) const {
  const Point& p = point(i);
  Matrix h = hamiltonian(i);
  Model model = p.model.with_hamiltonian(complex(m_energy) * h);
  return {std::move(model), p.rho0, std::move(h), p.parameters};
}

}  // namespace heom::io
