// The input document: its top-level tables, and the entry points of io/input.hpp.
#include "io/input.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "heom/core/matrix.hpp"
#include "io/input_sections.hpp"
#include "io/toml_reader.hpp"

namespace heom::io {

namespace impl {

namespace {

Units read_units(TableReader& root, const toml::table& doc) {
  const std::optional<std::string> u = root.string("units", false);
  if (!u || *u == "natural") return Units::natural;
  if (*u != "spectroscopy")
    root.fail("units", "unknown units \"" + *u + "\" (expected \"natural\" or \"spectroscopy\")", doc.get("units"));
  return Units::spectroscopy;
}

/// The tables of an array of tables `key` ([[bath]], [[lindblad]]), each read by read(table, name).
template <class Read>
void for_each_table(TableReader& root, const std::string& key, const Read& read) {
  const toml::node* node = root.node(key, false);
  if (!node) return;
  const toml::array* list = node->as_array();
  if (!list || !list->is_array_of_tables()) root.fail(key, "expected [[" + key + "]] tables", node);
  for (std::size_t i = 0; i < list->size(); ++i)
    read(*list->get(i)->as_table(), key + "[" + std::to_string(i + 1) + "]");
}

/// [[lindblad]]: operator L (dimensionless) and rate (an energy, as a bath's gamma).
Lindblad read_lindblad(TableReader& l, const UnitScale& scale, int n) {
  l.allow_only({"operator", "operator_imag", "rate"}, "a [[lindblad]] term");
  Matrix op = *l.complex_matrix("operator", "operator_imag");
  if (op.rows() != n || op.cols() != n)
    l.fail("operator",
           "is " + op.shape_string() + " but system.hamiltonian is " + std::to_string(n) + "x" + std::to_string(n),
           l.table().get("operator"));
  return {std::move(op), l.non_negative("rate") * scale.energy};
}

/// [hierarchy]: the depth, and the threshold into `settings`.
int read_hierarchy(TableReader& hierarchy, RunSettings& settings) {
  hierarchy.allow_only({"depth", "threshold"}, "[hierarchy]");
  const std::int64_t depth = *hierarchy.integer("depth");
  if (depth < 0 || depth > 1000)
    hierarchy.fail("depth", "must be between 0 and 1000, got " + std::to_string(depth), hierarchy.table().get("depth"));
  if (hierarchy.has("threshold")) settings.threshold = hierarchy.non_negative("threshold");
  return static_cast<int>(depth);
}

/// [initial_state]'s rho, a density matrix of dimension n.
Matrix read_initial_state(TableReader& initial, int n) {
  initial.allow_only({"rho", "rho_imag"}, "[initial_state]");
  Matrix rho0 = *initial.complex_matrix("rho", "rho_imag");
  if (rho0.rows() != n)
    initial.fail(
        "rho",
        "is " + rho0.shape_string() + " but system.hamiltonian is " + std::to_string(n) + "x" + std::to_string(n),
        initial.table().get("rho"));
  require_hermitian(initial, "rho", rho0);
  if (std::abs(rho0.trace() - complex(1.0)) > 1e-6)
    initial.fail("rho", "trace must be 1, got " + format(rho0.trace().real()), initial.table().get("rho"));
  const auto eigenvalues = hermitian_eigenvalues(rho0);
  const double smallest = *std::min_element(eigenvalues.begin(), eigenvalues.end());
  if (smallest < -1e-10)
    initial.fail("rho", "is not positive semidefinite: eigenvalue " + format(smallest), initial.table().get("rho"));
  return rho0;
}

/// [output], into `config`.
void read_output(TableReader& output, RunConfig& config) {
  output.allow_only({"file", "ados", "checkpoint_every", "checkpoint_file"}, "[output]");
  config.output_file = output.string("file", false).value_or("");
  if (output.has("file") && config.output_file.empty())
    output.fail("file", "must not be empty", output.table().get("file"));
  config.write_ados = output.boolean("ados", false).value_or(false);
  config.checkpoint_file = output.string("checkpoint_file", false).value_or("");
  if (output.has("checkpoint_file") && config.checkpoint_file.empty())
    output.fail("checkpoint_file", "must not be empty", output.table().get("checkpoint_file"));
  const toml::node* every = output.node("checkpoint_every", false);
  if (!every) return;
  auto add = [&](const toml::node& interval) {
    const auto interval_text = interval.as_string();
    if (!interval_text)
      output.fail("checkpoint_every",
                  std::string("expected a string such as \"30 min\" or \"1000 steps\", got ") +
                      TableReader::type_name(interval),
                  &interval);
    try {
      parse_checkpoint_every(interval_text->get(), output.name("checkpoint_every"), config.checkpoint_every);
    } catch (const InputError& e) {
      output.fail("checkpoint_every", std::string(e.what()).substr(output.name("checkpoint_every").size() + 2),
                  &interval);
    }
  };
  if (const toml::array* list = every->as_array()) {
    if (list->empty()) output.fail("checkpoint_every", "must not be empty", every);
    for (const toml::node& interval : *list) add(interval);
  } else {
    add(*every);
  }
}

/// What [steady], [spectrum] and [ensemble] add, read against the rest of the run, and how they go
/// together with it.
void read_analyses(TableReader& root, const toml::table& doc, TableReader& dynamics, RunConfig& config,
                   bool with_ensemble) {
  const UnitScale scale = unit_scale(config.units);
  for (const char* section : {"steady", "spectrum", "response"})
    if (config.model.is_driven() && root.has(section))
      root.fail(section,
                std::string("needs a time-independent H, but [[system.drive]] makes H depend on t") +
                    (section == std::string("steady") ? " (a driven system has no steady state)" : ""),
                doc.get(section));
  if (auto steady = sub_table(root, "steady", false)) config.steady = read_steady(*steady, scale);
  if (auto spectrum = sub_table(root, "spectrum", false)) {
    config.spectrum = read_spectrum(*spectrum, config);
    if (config.spectrum->kind == SpectrumConfig::Kind::absorption && config.has_initial_state)
      root.fail("initial_state", "is not used by an absorption spectrum, which starts from the ground state |0><0|",
                doc.get("initial_state"));
    const double samples = config.t_end / config.output_every;
    const bool in_time = config.spectrum->method == SpectrumConfig::Method::time;
    if (in_time && (std::abs(samples - std::round(samples)) > 1e-9 * samples || samples < 1.5))
      dynamics.fail("output_every",
                    "must divide t_end into equal intervals (at least 2) for a spectrum: they are its samples",
                    dynamics.table().get("output_every"));
  }
  if (auto response = sub_table(root, "response", false)) {
    if (config.spectrum)
      root.fail("response", "and [spectrum] are two runs: give each its own input", doc.get("response"));
    if (config.has_initial_state)
      root.fail("initial_state", "is not used by a [response], which starts from the ground state |0><0|",
                doc.get("initial_state"));
    if (!config.model.lindblad().empty())
      root.fail("lindblad", "terms are not available with a [response] (its manifolds are built from the baths)",
                doc.get("lindblad"));
    if (config.model.has_fermionic_bath())
      root.fail("bath", "is fermionic; a [response]'s baths are an exciton's, bosonic", doc.get("bath"));
    if (config.write_ados)
      root.fail("output", "output.ados: a [response] writes R and its 2D spectra, not the ADOs", doc.get("output"));
    config.response = read_response(*response, config);
  }
  if ((config.spectrum || config.response) && config.write_ados)
    root.fail("output", "output.ados: a spectrum writes its correlation function, not the ADOs", doc.get("output"));
  if (config.response && (config.checkpoint_every.any() || !config.checkpoint_file.empty()))
    root.fail("output", "checkpoints cover the propagation of one hierarchy, not a [response]", doc.get("output"));
  const bool ensemble = with_ensemble && root.has("ensemble");
  if ((config.spectrum || ensemble) && (config.checkpoint_every.any() || !config.checkpoint_file.empty()))
    root.fail("output",
              std::string(config.checkpoint_every.any() ? "output.checkpoint_every" : "output.checkpoint_file") +
                  ": checkpoints cover the propagation of one hierarchy, not a [spectrum] or [ensemble] run",
              doc.get("output"));
  if (!ensemble) return;
  if (config.spectrum && config.spectrum->kind != SpectrumConfig::Kind::absorption)
    root.fail(
        "ensemble",
        std::string(config.spectrum->kind == SpectrumConfig::Kind::power ? "a power spectrum" : "a density of states") +
            " is computed for one model (its steady state); the ensemble average is available for "
            "absorption spectra",
        doc.get("ensemble"));
  if (config.write_ados)
    root.fail("ensemble", "output.ados: writing every ADO is not available for an ensemble (it stores rho(t))",
              doc.get("ensemble"));
  config.ensemble = read_ensemble(root, doc, config);
  if ((config.spectrum || config.response) && !config.ensemble->parameter_names.empty())
    root.fail("ensemble",
              std::string("sweeps with a ") + (config.spectrum ? "[spectrum]" : "[response]") +
                  " are not available: the " + (config.spectrum ? "spectrum" : "response") +
                  " is the mean over every member (static disorder); run one input per sweep point",
              doc.get("ensemble"));
  if (config.response && config.ensemble->store_members)
    root.fail("ensemble", "ensemble.store_members: a [response] writes the members' mean response, not each member's",
              doc.get("ensemble"));
}

}  // namespace

RunConfig parse_document(const toml::table& doc, const std::string& text, const std::string& file, bool with_ensemble) {
  TableReader root(doc, "", file);
  root.allow_only({"units", "system", "bath", "lindblad", "hierarchy", "initial_state", "dynamics", "output",
                   "ensemble", "steady", "spectrum", "response"},
                  "the top level");
  RunConfig config;
  config.input_text = text;
  config.input_name = file;
  config.units = read_units(root, doc);
  const UnitScale scale = unit_scale(config.units);

  TableReader system = *sub_table(root, "system", true);
  system.allow_only({"hamiltonian", "hamiltonian_imag", "drive"}, "[system]");
  config.input_hamiltonian = *system.complex_matrix("hamiltonian", "hamiltonian_imag");
  require_hermitian(system, "hamiltonian", config.input_hamiltonian);
  const int n = config.input_hamiltonian.rows();
  Model model(complex(scale.energy) * config.input_hamiltonian);
  // (A fitted bath without fit_time fits over the run: [dynamics] t_end, read only where needed.)
  const auto run_length = [&] { return sub_table(root, "dynamics", true)->positive("t_end") * scale.time; };
  for_each_table(root, "bath", [&](const toml::table& t, const std::string& name) {
    TableReader b(t, name, file);
    model.add_bath(read_bath(b, scale, n, run_length));
  });
  for_each_table(root, "lindblad", [&](const toml::table& t, const std::string& name) {
    TableReader l(t, name, file);
    Lindblad term = read_lindblad(l, scale, n);
    model.add_lindblad(std::move(term.op), term.rate);
  });
  TableReader hierarchy = *sub_table(root, "hierarchy", true);
  RunSettings settings;
  config.depth = read_hierarchy(hierarchy, settings);
  // Optional here: a spectrum starts from the ground state or the steady state, and `heom steady` from
  // I/n without one; the program asks for it where rho is propagated from it.
  config.has_initial_state = root.has("initial_state");
  config.rho0 = operators::projector(n, 0, 0);
  if (auto initial = sub_table(root, "initial_state", false)) config.rho0 = read_initial_state(*initial, n);
  TableReader dynamics = *sub_table(root, "dynamics", true);
  DynamicsSection section =
      read_dynamics(dynamics, scale,
                    root.has("response") ? "a [response] propagates over its own t1, waiting and t3 times" : nullptr);
  config.t_end = section.t_end;
  config.output_every = section.output_every;
  section.settings.threshold = settings.threshold;
  config.solver = solver_options(section.settings, dynamics, hierarchy);
  if (auto output = sub_table(root, "output", false)) read_output(*output, config);
  for (Drive& drive : read_drives(system, scale, n, config.t_end)) model.add_drive(std::move(drive.op), drive.shape);
  config.model = std::move(model);
  read_analyses(root, doc, dynamics, config, with_ensemble);
  return config;
}

}  // namespace impl

std::vector<double> RunConfig::output_times() const {
  std::vector<double> times;
  if (!(output_every > 0.0)) return times;  // (a [response] has its own times)
  const double steps = t_end / output_every;
  const auto whole = static_cast<std::int64_t>(std::floor(steps + 1e-9));
  for (std::int64_t i = 0; i <= whole; ++i) times.push_back(std::min(t_end, static_cast<double>(i) * output_every));
  if (t_end - times.back() > 1e-9 * t_end) times.push_back(t_end);
  times.back() = t_end;
  return times;
}

void parse_checkpoint_every(const std::string& text, const std::string& key, CheckpointEvery& every) {
  const std::string problem =
      key + ": \"" + text + "\" is not an interval such as \"30 min\", \"2 h\", \"90 s\" or \"1000 steps\"";
  // A decimal number (digits first: no "inf", "nan" or hex) and a unit, spaces around them allowed.
  const auto space = [](char c) { return c == ' ' || c == '\t'; };
  std::size_t at = 0;
  while (at < text.size() && space(text[at])) ++at;
  if (at == text.size() || !std::isdigit(static_cast<unsigned char>(text[at]))) throw InputError(problem);
  std::size_t number_end = at;
  while (number_end < text.size() && std::strchr("0123456789.eE+-", text[number_end])) ++number_end;
  char* end = nullptr;
  const std::string number = text.substr(at, number_end - at);
  const double value = std::strtod(number.c_str(), &end);
  if (*end != '\0') throw InputError(problem);
  std::string unit = text.substr(number_end);
  while (!unit.empty() && space(unit.front())) unit.erase(unit.begin());
  while (!unit.empty() && space(unit.back())) unit.pop_back();
  if (!(value > 0.0) || !std::isfinite(value))
    throw InputError(key + ": \"" + text + "\" must be a positive number of seconds, minutes, hours or steps");
  if (unit == "steps" || unit == "step") {
    if (value != std::floor(value) || value > 1e15)
      throw InputError(key + ": \"" + text + "\": a number of steps is a whole number");
    every.steps =
        every.steps > 0 ? std::min(every.steps, static_cast<long long>(value)) : static_cast<long long>(value);
    return;
  }
  const std::pair<const char*, double> units[] = {{"s", 1.0}, {"min", 60.0}, {"h", 3600.0}};
  for (const auto& [name, seconds] : units)
    if (unit == name) {
      every.seconds = every.seconds > 0.0 ? std::min(every.seconds, value * seconds) : value * seconds;
      return;
    }
  throw InputError(problem);
}

RunConfig parse_run_config(const std::string& text, const std::string& name) {
  const impl::TomlText prepared = impl::prepare_for_toml(text);
  if (prepared.bad_line > 0) {
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(prepared.bad_char));
    throw InputError(name + ":" + std::to_string(prepared.bad_line) + ": the character " + code +
                     (prepared.outside_strings ? " is outside a string or comment (TOML allows none there)"
                                               : " is accepted in comments only (the TOML reader cannot classify it "
                                                 "safely elsewhere)"));
  }
  toml::table doc;
  try {
    doc = toml::parse(prepared.text, name);
  } catch (const toml::parse_error& e) {
    throw InputError(name + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  return impl::parse_document(doc, text, name);
}

RunConfig read_run_config(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    throw InputError(path + ": is a folder, not an input file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the input file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_run_config(text.str(), path);
}

}  // namespace heom::io
