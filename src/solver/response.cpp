// The host parts of the optical response: names, polarizations and their orientational weights, the
// options' checks.
#include <cmath>
#include <string>
#include <utility>

#include "heom/solver/response_options.hpp"

namespace heom {

const char* to_string(Pathway pathway) {
  switch (pathway) {
    case Pathway::ground_state_bleach:
      return "ground-state-bleach";
    case Pathway::stimulated_emission:
      return "stimulated-emission";
    case Pathway::excited_state_absorption:
      return "excited-state-absorption";
  }
  return "?";
}

const char* to_string(ResponseSignal signal) {
  return signal == ResponseSignal::rephasing ? "rephasing" : "non-rephasing";
}

std::optional<Pathway> pathway_from_string(const std::string& name) {
  for (const Pathway p :
       {Pathway::ground_state_bleach, Pathway::stimulated_emission, Pathway::excited_state_absorption})
    if (name == to_string(p)) return p;
  return std::nullopt;
}

std::optional<ResponseSignal> signal_from_string(const std::string& name) {
  for (const ResponseSignal s : {ResponseSignal::rephasing, ResponseSignal::non_rephasing})
    if (name == to_string(s)) return s;
  return std::nullopt;
}

namespace {
double dot(const Dipole& a, const Dipole& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
}  // namespace

std::optional<Polarization> Polarization::named(const std::string& name, bool isotropic) {
  const Dipole x{1, 0, 0}, y{0, 1, 0};
  Polarization p;
  p.isotropic = isotropic;
  if (name == "magic-angle") {
    const double c = 1.0 / std::sqrt(3.0);  // cos 54.7356 degrees
    const Dipole m{c, std::sqrt(1.0 - c * c), 0.0};
    p.fields = {x, x, m, m};
    return p;
  }
  if (name.size() != 4) return std::nullopt;
  for (int f = 0; f < 4; ++f) {
    if (name[f] == 'x')
      p.fields[f] = x;
    else if (name[f] == 'y')
      p.fields[f] = y;
    else if (name[f] == 'z')
      p.fields[f] = {0, 0, 1};
    else
      return std::nullopt;
  }
  return p;
}

double Polarization::weight(int i, int j, int k, int l) const {
  const auto& e = fields;
  if (!isotropic) return e[0][i] * e[1][j] * e[2][k] * e[3][l];
  // The isotropic average of a fourth-rank tensor (Craig and Thirunamachandran; Andrews and Thirunamachandran).
  const double e12 = dot(e[0], e[1]), e34 = dot(e[2], e[3]), e13 = dot(e[0], e[2]), e24 = dot(e[1], e[3]),
               e14 = dot(e[0], e[3]), e23 = dot(e[1], e[2]);
  const double c1 = 4 * e12 * e34 - e13 * e24 - e14 * e23;
  const double c2 = -e12 * e34 + 4 * e13 * e24 - e14 * e23;
  const double c3 = -e12 * e34 - e13 * e24 + 4 * e14 * e23;
  return ((i == j && k == l ? c1 : 0.0) + (i == k && j == l ? c2 : 0.0) + (i == l && j == k ? c3 : 0.0)) / 30.0;
}

std::optional<OptionProblem> Polarization::validate() const {
  for (int f = 0; f < 4; ++f) {
    const double norm = std::sqrt(dot(fields[f], fields[f]));
    if (!std::isfinite(norm) || std::abs(norm - 1.0) > 1e-9)
      return OptionProblem{"polarization.fields[" + std::to_string(f) + "]", "is not a unit vector"};
  }
  return std::nullopt;
}

std::optional<OptionProblem> ResponseOptions::validate() const {
  if (waiting_times.empty()) return OptionProblem{"waiting_times", "needs at least one waiting time"};
  for (std::size_t b = 0; b < waiting_times.size(); ++b)
    if (!(waiting_times[b] >= 0.0) || !std::isfinite(waiting_times[b]) ||
        (b > 0 && !(waiting_times[b] > waiting_times[b - 1])))
      return OptionProblem{"waiting_times", "must be finite, >= 0 and ascending (entry " + std::to_string(b) + ")"};
  if (!(t1_step > 0.0) || !std::isfinite(t1_step)) return OptionProblem{"t1_step", "must be finite and > 0"};
  if (!(t3_step > 0.0) || !std::isfinite(t3_step)) return OptionProblem{"t3_step", "must be finite and > 0"};
  if (t1_points < 1) return OptionProblem{"t1_points", "must be >= 1"};
  if (t3_points < 1) return OptionProblem{"t3_points", "must be >= 1"};
  for (std::size_t p = 0; p < pathways.size(); ++p)
    for (std::size_t q = 0; q < p; ++q)
      if (pathways[p] == pathways[q])
        return OptionProblem{"pathways", std::string("names ") + to_string(pathways[p]) + " twice"};
  for (std::size_t p = 0; p < signals.size(); ++p)
    for (std::size_t q = 0; q < p; ++q)
      if (signals[p] == signals[q])
        return OptionProblem{"signals", std::string("names ") + to_string(signals[p]) + " twice"};
  if (const auto problem = polarization.validate()) return problem;
  return std::nullopt;
}

namespace {
/// The names `parse` knows, or OptionError for `key` (ResponseOptions::validate refuses repeats).
template <class T, class Parse>
std::vector<T> parse_names(const std::vector<std::string>& names, const std::string& key, Parse parse,
                           const std::string& known) {
  std::vector<T> out;
  for (const std::string& name : names) {
    const std::optional<T> value = parse(name);
    if (!value) throw OptionError({key, "unknown name \"" + name + "\" (" + known + ")"});
    out.push_back(*value);
  }
  return out;
}
}  // namespace

ResponseOptions make_response_options(const ResponseSettings& settings) {
  ResponseOptions o;
  o.waiting_times = settings.waiting_times;
  o.t1_step = settings.t1_step;
  o.t1_points = settings.t1_points;
  o.t3_step = settings.t3_step;
  o.t3_points = settings.t3_points;
  o.pathways = parse_names<Pathway>(settings.pathways, "pathways", pathway_from_string,
                                    "\"ground-state-bleach\", \"stimulated-emission\", \"excited-state-absorption\"");
  o.signals =
      parse_names<ResponseSignal>(settings.signals, "signals", signal_from_string, "\"rephasing\", \"non-rephasing\"");
  const auto named = Polarization::named(settings.polarization, settings.isotropic);
  if (!named)
    throw OptionError({"polarization", "unknown polarization \"" + settings.polarization +
                                           "\" (expected four of x, y, z such as \"xxxx\", \"xxyy\", \"xyxy\", "
                                           "\"xyyx\", or \"magic-angle\")"});
  o.polarization = *named;
  require_valid(o.validate());
  return o;
}

bool needs_two_excitons(const ResponseOptions& options) {
  bool absorption = options.pathways.empty();
  for (const Pathway p : options.pathways) absorption = absorption || p == Pathway::excited_state_absorption;
  return absorption;
}

ExcitonManifolds response_manifolds(ExcitonAggregate aggregate, const ResponseSettings& settings,
                                    const ResponseOptions& options) {
  const bool absorption = needs_two_excitons(options);
  if (settings.biexciton_shift != 0.0 && !absorption)
    throw OptionError({"biexciton_shift", "shifts the two-exciton states, which only excited-state absorption visits"});
  if (absorption && aggregate.hamiltonian.rows() < 2 && !options.pathways.empty())
    throw OptionError({"pathways", "excited-state-absorption needs at least two sites (a two-exciton state)"});
  aggregate.two_exciton = absorption;
  aggregate.biexciton_shift = settings.biexciton_shift;
  ExcitonManifolds manifolds = build_manifolds(aggregate);
  const ComponentTuples needed = needed_components(manifolds, options.polarization);
  bool any = false;
  for (const auto& plane : needed)
    for (const auto& row : plane)
      for (const bool tuple : row) any = any || tuple;
  if (!any)
    throw OptionError({options.polarization.isotropic ? "dipoles" : "polarization",
                       "every dipole component has weight zero for these fields: the response would be zero"});
  return manifolds;
}

ComponentTuples needed_components(const ExcitonManifolds& m, const Polarization& polarization) {
  bool present[3];
  for (int c = 0; c < 3; ++c) present[c] = m.has_component(c);
  ComponentTuples needed{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) {
        if (!present[i] || !present[j] || !present[k]) continue;
        for (int l = 0; l < 3; ++l)
          needed[i][j][k] = needed[i][j][k] || (present[l] && polarization.weight(i, j, k, l) != 0.0);
      }
  return needed;
}

std::vector<Pathway> resolved_pathways(const ExcitonManifolds& manifolds, const ResponseOptions& options) {
  std::vector<Pathway> pathways = options.pathways;
  if (pathways.empty()) {
    pathways = {Pathway::ground_state_bleach, Pathway::stimulated_emission};
    if (manifolds.two_exciton) pathways.push_back(Pathway::excited_state_absorption);
  }
  for (const Pathway p : pathways)
    if (p == Pathway::excited_state_absorption && !manifolds.two_exciton)
      throw OptionError({"pathways", "excited-state-absorption needs the two-exciton manifold"},
                        "third_order_response");
  return pathways;
}

std::vector<ResponseSignal> resolved_signals(const ResponseOptions& options) {
  return options.signals.empty() ? std::vector<ResponseSignal>{ResponseSignal::rephasing, ResponseSignal::non_rephasing}
                                 : options.signals;
}

ThirdOrderResponse zero_response(const ExcitonManifolds& manifolds, const ResponseOptions& options) {
  ThirdOrderResponse r;
  r.pathways = resolved_pathways(manifolds, options);
  r.signals = resolved_signals(options);
  r.waiting_times = options.waiting_times;
  for (int a = 0; a < options.t1_points; ++a) r.t1.push_back(a * options.t1_step);
  for (int c = 0; c < options.t3_points; ++c) r.t3.push_back(c * options.t3_step);
  r.values.assign(r.signals.size() * r.pathways.size() * r.waiting_times.size() * r.t1.size() * r.t3.size(), 0.0);
  return r;
}

ResponseWork response_work(const ExcitonManifolds& manifolds, const ResponseOptions& options) {
  const ComponentTuples needed = needed_components(manifolds, options.polarization);
  const std::vector<Pathway> pathways = resolved_pathways(manifolds, options);
  const std::int64_t signals = static_cast<std::int64_t>(resolved_signals(options).size());
  bool bleach = false, emission = false, absorption = false;
  for (const Pathway p : pathways) {
    bleach = bleach || p == Pathway::ground_state_bleach;
    emission = emission || p == Pathway::stimulated_emission;
    absorption = absorption || p == Pathway::excited_state_absorption;
  }
  ResponseWork w;
  const std::optional<ExcitonManifolds> one =
      (bleach || emission) && absorption ? without_two_excitons(manifolds) : std::nullopt;
  if (one) w.one_exciton_levels = one->dimension();
  // The models the pathways run on, and the second interactions each propagates: (bleach, excited).
  std::vector<std::pair<int, int>> runs;
  if (one)
    runs = {{bleach ? 1 : 0, emission ? 1 : 0}, {0, 1}};
  else
    runs = {{bleach ? 1 : 0, (emission || absorption) ? 1 : 0}};
  std::int64_t firsts = 0, prefixes = 0, tuples = 0;
  for (int i = 0; i < 3; ++i) {
    bool first = false;
    for (int j = 0; j < 3; ++j) {
      bool prefix = false;
      for (int k = 0; k < 3; ++k)
        if (needed[i][j][k]) {
          prefix = true;
          ++tuples;
        }
      first = first || prefix;
      prefixes += prefix ? 1 : 0;
    }
    firsts += first ? 1 : 0;
  }
  const std::int64_t t1 = options.t1_points, waits = static_cast<std::int64_t>(options.waiting_times.size());
  for (const auto& [bleach_legs, excited_legs] : runs) {
    w.t1_legs += signals * firsts;
    w.waiting_legs += signals * t1 * prefixes * (bleach_legs + excited_legs);
  }
  w.t3_legs = signals * t1 * waits * tuples * static_cast<std::int64_t>(pathways.size());
  const double t1_span = (options.t1_points - 1) * options.t1_step, t3_span = (options.t3_points - 1) * options.t3_step;
  w.propagated_time = static_cast<double>(w.t1_legs) * t1_span +
                      static_cast<double>(w.waiting_legs) * options.waiting_times.back() +
                      static_cast<double>(w.t3_legs) * t3_span;
  return w;
}
}  // namespace heom
