// The input document: its top-level tables, and the entry points of io/input.hpp.
#include "io/input.hpp"

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

RunConfig parse_document(const toml::table& doc, const std::string& text, const std::string& file, bool with_ensemble) {
  TableReader root(doc, "", file);
  root.allow_only({"units", "system", "bath", "lindblad", "hierarchy", "initial_state", "dynamics", "output",
                   "ensemble", "steady", "spectrum"},
                  "the top level");

  Units units = Units::natural;
  if (auto u = root.string("units", false)) {
    if (*u == "spectroscopy")
      units = Units::spectroscopy;
    else if (*u != "natural")
      root.fail("units", "unknown units \"" + *u + "\" (expected \"natural\" or \"spectroscopy\")", doc.get("units"));
  }
  const UnitScale scale = unit_scale(units);

  TableReader system = *sub_table(root, "system", true);
  system.allow_only({"hamiltonian", "hamiltonian_imag", "drive"}, "[system]");
  Matrix h = *system.complex_matrix("hamiltonian", "hamiltonian_imag");
  require_hermitian(system, "hamiltonian", h);
  const Matrix input_hamiltonian = h;
  h *= scale.energy;
  const int n = h.rows();

  std::vector<Bath> baths;
  if (const toml::node* bath_node = root.node("bath", false)) {
    const toml::array* list = bath_node->as_array();
    if (!list || !list->is_array_of_tables()) root.fail("bath", "expected [[bath]] tables", bath_node);
    for (std::size_t i = 0; i < list->size(); ++i) {
      TableReader b(*list->get(i)->as_table(), "bath[" + std::to_string(i + 1) + "]", file);
      baths.push_back(read_bath(b, scale, n, [&] {
        TableReader dynamics = *sub_table(root, "dynamics", true);
        return dynamics.positive("t_end") * scale.time;
      }));
    }
  }

  // Lindblad terms: operator L (dimensionless) and rate (an energy, as a bath's gamma).
  std::vector<Lindblad> lindblad;
  if (const toml::node* node = root.node("lindblad", false)) {
    const toml::array* list = node->as_array();
    if (!list || !list->is_array_of_tables()) root.fail("lindblad", "expected [[lindblad]] tables", node);
    for (std::size_t i = 0; i < list->size(); ++i) {
      TableReader l(*list->get(i)->as_table(), "lindblad[" + std::to_string(i + 1) + "]", file);
      l.allow_only({"operator", "operator_imag", "rate"}, "a [[lindblad]] term");
      Matrix op = *l.complex_matrix("operator", "operator_imag");
      if (op.rows() != n || op.cols() != n)
        l.fail("operator", "is " + op.shape_string() + " but system.hamiltonian is " + h.shape_string(),
               l.table().get("operator"));
      lindblad.push_back({std::move(op), l.non_negative("rate") * scale.energy});
    }
  }

  TableReader hierarchy = *sub_table(root, "hierarchy", true);
  hierarchy.allow_only({"depth", "threshold"}, "[hierarchy]");
  const std::int64_t depth = *hierarchy.integer("depth");
  if (depth < 0 || depth > 1000)
    hierarchy.fail("depth", "must be between 0 and 1000, got " + std::to_string(depth), hierarchy.table().get("depth"));
  const double importance_threshold = hierarchy.has("threshold") ? hierarchy.non_negative("threshold") : 0.0;

  // Optional here: a spectrum starts from the ground state or the steady state, and `heom steady` from
  // I/n without one; the program asks for it where rho is propagated from it.
  Matrix rho0 = operators::projector(n, 0, 0);
  const bool has_initial_state = root.has("initial_state");
  if (has_initial_state) {
    TableReader initial = *sub_table(root, "initial_state", true);
    initial.allow_only({"rho", "rho_imag"}, "[initial_state]");
    rho0 = *initial.complex_matrix("rho", "rho_imag");
    if (rho0.rows() != n)
      initial.fail("rho", "is " + rho0.shape_string() + " but system.hamiltonian is " + h.shape_string(),
                   initial.table().get("rho"));
    require_hermitian(initial, "rho", rho0);
    if (std::abs(rho0.trace() - complex(1.0)) > 1e-6)
      initial.fail("rho", "trace must be 1, got " + format(rho0.trace().real()), initial.table().get("rho"));
    const auto eigenvalues = hermitian_eigenvalues(rho0);
    const double smallest = *std::min_element(eigenvalues.begin(), eigenvalues.end());
    if (smallest < -1e-10)
      initial.fail("rho", "is not positive semidefinite: eigenvalue " + format(smallest), initial.table().get("rho"));
  }

  TableReader dynamics = *sub_table(root, "dynamics", true);
  dynamics.allow_only({"t_end", "output_every", "method", "rtol", "atol", "step", "max_order"}, "[dynamics]");
  const double t_end = dynamics.positive("t_end") * scale.time;
  const double output_every = dynamics.positive("output_every") * scale.time;
  if (t_end / output_every > 1e7)
    dynamics.fail("output_every", "gives more than 10^7 output times up to t_end",
                  dynamics.table().get("output_every"));
  IntegratorOptions integrator;
  const std::string method_name = dynamics.string("method", false).value_or(to_string(integrator.method));
  try {
    integrator.method = parse_method(method_name, "dynamics.method");
  } catch (const Error&) {
    dynamics.fail("method", "unknown method \"" + method_name + "\" (expected " + method_names() + ")",
                  dynamics.table().get("method"));
  }
  if (is_adaptive(integrator.method)) {
    if (dynamics.has("rtol")) integrator.rtol = dynamics.positive("rtol");
    if (dynamics.has("atol")) integrator.atol = dynamics.positive("atol");
    if (dynamics.has("step")) integrator.step = dynamics.positive("step") * scale.time;
    if (integrator.rtol < 1e-14)
      dynamics.fail("rtol", "must be >= 1e-14 (double precision), got " + format(integrator.rtol),
                    dynamics.table().get("rtol"));
  } else {
    integrator.step = dynamics.positive("step") * scale.time;
  }
  if (dynamics.has("max_order")) {
    if (integrator.method != Method::exp_adams)
      dynamics.fail("max_order", std::string("applies to exp-adams only, not ") + to_string(integrator.method),
                    dynamics.table().get("max_order"));
    const std::int64_t order = *dynamics.integer("max_order");
    if (order < 1 || order > 5)
      dynamics.fail("max_order", "must be 1..5, got " + std::to_string(order), dynamics.table().get("max_order"));
    integrator.max_order = static_cast<int>(order);
  }
  if (!is_adaptive(integrator.method)) {
    for (const char* key : {"rtol", "atol"})
      if (dynamics.has(key))
        dynamics.fail(key, std::string("applies to the adaptive methods only, not ") + to_string(integrator.method),
                      dynamics.table().get(key));
  }

  std::string output_file, checkpoint_file;
  bool ados = false;
  CheckpointEvery checkpoint_every;
  if (auto output = sub_table(root, "output", false)) {
    output->allow_only({"file", "ados", "checkpoint_every", "checkpoint_file"}, "[output]");
    output_file = output->string("file", false).value_or("");
    if (output->has("file") && output_file.empty())
      output->fail("file", "must not be empty", output->table().get("file"));
    ados = output->boolean("ados", false).value_or(false);
    checkpoint_file = output->string("checkpoint_file", false).value_or("");
    if (output->has("checkpoint_file") && checkpoint_file.empty())
      output->fail("checkpoint_file", "must not be empty", output->table().get("checkpoint_file"));
    if (const toml::node* every = output->node("checkpoint_every", false)) {
      auto add = [&](const toml::node& interval) {
        const auto interval_text = interval.as_string();
        if (!interval_text)
          output->fail("checkpoint_every",
                       std::string("expected a string such as \"30 min\" or \"1000 steps\", got ") +
                           TableReader::type_name(interval),
                       &interval);
        try {
          parse_checkpoint_every(interval_text->get(), output->name("checkpoint_every"), checkpoint_every);
        } catch (const InputError& e) {
          output->fail("checkpoint_every", std::string(e.what()).substr(output->name("checkpoint_every").size() + 2),
                       &interval);
        }
      };
      if (const toml::array* list = every->as_array()) {
        if (list->empty()) output->fail("checkpoint_every", "must not be empty", every);
        for (const toml::node& interval : *list) add(interval);
      } else {
        add(*every);
      }
    }
  }

  Model model(h);
  for (auto& b : baths) model.add_bath(std::move(b));
  for (auto& term : lindblad) model.add_lindblad(std::move(term.op), term.rate);
  for (Drive& drive : read_drives(system, scale, n, t_end)) model.add_drive(std::move(drive.op), drive.shape);
  RunConfig config{text,
                   file,
                   units,
                   std::move(model),
                   rho0,
                   static_cast<int>(depth),
                   t_end,
                   output_every,
                   integrator,
                   output_file,
                   ados,
                   input_hamiltonian,
                   std::nullopt,
                   SteadyStateOptions{},
                   std::nullopt,
                   has_initial_state,
                   checkpoint_every,
                   checkpoint_file};
  config.importance_threshold = importance_threshold;
  for (const char* section : {"steady", "spectrum"})
    if (config.model.is_driven() && root.has(section))
      root.fail(section,
                std::string("needs a time-independent H, but [[system.drive]] makes H depend on t") +
                    (section == std::string("steady") ? " (a driven system has no steady state)" : ""),
                doc.get(section));
  if (auto steady = sub_table(root, "steady", false)) config.steady = read_steady(*steady, scale);
  if (auto spectrum = sub_table(root, "spectrum", false)) {
    config.spectrum = read_spectrum(*spectrum, config);
    if (config.spectrum->kind == SpectrumConfig::Kind::absorption && has_initial_state)
      root.fail("initial_state", "is not used by an absorption spectrum, which starts from the ground state |0><0|",
                doc.get("initial_state"));
    const double samples = t_end / output_every;
    const bool in_time = config.spectrum->method == SpectrumConfig::Method::time;
    if (in_time && (std::abs(samples - std::round(samples)) > 1e-9 * samples || samples < 1.5))
      dynamics.fail("output_every",
                    "must divide t_end into equal intervals (at least 2) for a spectrum: they are its samples",
                    dynamics.table().get("output_every"));
  }
  if (config.spectrum && ados)
    root.fail("output", "output.ados: a spectrum writes its correlation function, not the ADOs", doc.get("output"));
  if ((config.spectrum || (with_ensemble && root.has("ensemble"))) &&
      (checkpoint_every.any() || !checkpoint_file.empty()))
    root.fail("output",
              std::string(checkpoint_every.any() ? "output.checkpoint_every" : "output.checkpoint_file") +
                  ": checkpoints cover the propagation of one hierarchy, not a [spectrum] or [ensemble] run",
              doc.get("output"));
  if (with_ensemble && root.has("ensemble")) {
    if (config.spectrum && config.spectrum->kind != SpectrumConfig::Kind::absorption)
      root.fail("ensemble",
                std::string(config.spectrum->kind == SpectrumConfig::Kind::power ? "a power spectrum"
                                                                                 : "a density of states") +
                    " is computed for one model (its steady state); the ensemble average is available for "
                    "absorption spectra",
                doc.get("ensemble"));
    if (ados)
      root.fail("ensemble", "output.ados: writing every ADO is not available for an ensemble (it stores rho(t))",
                doc.get("ensemble"));
    config.ensemble = read_ensemble(root, doc, config);
    if (config.spectrum && !config.ensemble->parameter_names.empty())
      root.fail("ensemble",
                "sweeps with a [spectrum] are not available: the spectrum is the mean over every member (static "
                "disorder); run one input per sweep point",
                doc.get("ensemble"));
  }
  return config;
}

}  // namespace impl

std::vector<double> RunConfig::output_times() const {
  std::vector<double> times;
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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the input file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_run_config(text.str(), path);
}

}  // namespace heom::io
