// The input's [response] table: the third-order response of an exciton model and its 2D spectra.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "io/input_sections.hpp"

namespace heom::io::impl {

namespace {

/// An optional array of names, each one `parse` knows, each once; `known` lists them for the message.
template <class T, class Parse>
std::vector<T> read_names(TableReader& t, const std::string& key, Parse parse, const std::string& known) {
  std::vector<T> out;
  const toml::node* node = t.node(key, false);
  if (!node) return out;
  const toml::array* list = node->as_array();
  if (!list || list->empty()) t.fail(key, "expected a non-empty array of names (" + known + ")", node);
  for (const toml::node& entry : *list) {
    const auto name = entry.as_string();
    const auto value = name ? parse(name->get()) : decltype(parse(std::string())){};
    if (!value)
      t.fail(key, (name ? "unknown name \"" + name->get() + "\"" : std::string("expected names")) + " (" + known + ")",
             &entry);
    for (const T& seen : out)
      if (seen == *value) t.fail(key, "names \"" + name->get() + "\" twice", &entry);
    out.push_back(*value);
  }
  return out;
}

/// A time axis' point count: 2 (an axis to transform) .. 65536.
int read_points(TableReader& t, const std::string& key) {
  const std::int64_t points = *t.integer(key, true);
  if (points < 2 || points > 65536)
    t.fail(key, "must be between 2 and 65536, got " + std::to_string(points), t.table().get(key));
  return static_cast<int>(points);
}

/// The run's one-exciton model: levels 1..N of H (its energies relative to the ground state's, as an
/// absorption spectrum of the same input has them) and of every bath's coupling.
ExcitonAggregate one_exciton_model(const RunConfig& c, std::vector<Dipole> dipoles) {
  const int sites = c.model.dimension() - 1;
  ExcitonAggregate a;
  a.hamiltonian = c.model.hamiltonian().block(1, 1, sites, sites);
  for (int m = 0; m < sites; ++m) a.hamiltonian(m, m) -= c.model.hamiltonian()(0, 0);
  a.dipoles = std::move(dipoles);
  for (const Bath& bath : c.model.baths())
    a.baths.push_back(bath.with_coupling(bath.coupling().block(1, 1, sites, sites)));
  return a;
}

}  // namespace

ResponseConfig read_response(TableReader& t, const RunConfig& c) {
  t.allow_only({"dipoles", "waiting_times", "t1_step", "t1_points", "t3_step", "t3_points", "pathways", "signals",
                "polarization", "isotropic", "biexciton_shift", "window", "padding", "frequency_range"},
               "[response]");
  const UnitScale scale = unit_scale(c.units);
  require_ground_state(t, c, "dipoles", "[response]");
  bool vectors = false;
  std::vector<Dipole> dipoles = read_site_dipoles(t, c.model.dimension() - 1, vectors);

  ResponseConfig r;
  ResponseOptions& o = r.options;
  o.waiting_times = *t.numbers("waiting_times", true);
  for (double& w : o.waiting_times) w *= scale.time;
  o.t1_step = t.positive("t1_step") * scale.time;
  o.t1_points = read_points(t, "t1_points");
  o.t3_step = t.positive("t3_step") * scale.time;
  o.t3_points = read_points(t, "t3_points");
  o.pathways = read_names<Pathway>(t, "pathways", pathway_from_string,
                                   "\"ground-state-bleach\", \"stimulated-emission\", \"excited-state-absorption\"");
  o.signals = read_names<ResponseSignal>(t, "signals", signal_from_string, "\"rephasing\", \"non-rephasing\"");
  const std::string polarization = t.string("polarization", false).value_or("xxxx");
  const bool isotropic = t.boolean("isotropic", false).value_or(true);
  const auto named = Polarization::named(polarization, isotropic);
  if (!named)
    t.fail("polarization",
           "unknown polarization \"" + polarization +
               "\" (expected four of x, y, z such as \"xxxx\", \"xxyy\", \"xyxy\", \"xyyx\", or \"magic-angle\")",
           t.table().get("polarization"));
  o.polarization = *named;
  r.polarization_name = polarization;
  if (const auto problem = o.validate()) t.fail(problem->field, problem->problem, t.table().get(problem->field));

  read_transform(t, r.window, r.padding, 16);
  // (Each waiting time's padded 2D transform is held at once: at most 2^26 points, 1 GiB.)
  const double points = static_cast<double>(o.t1_points) * o.t3_points * r.padding * r.padding;
  if (points > 67108864.0)
    t.fail("padding",
           "makes each 2D transform " + format(points) + " points (t1_points x t3_points x padding^2); at most 2^26",
           t.table().get("padding"));
  if (auto range = read_frequency_range(t)) {
    r.frequency_range = *range;
    require_frequencies_in_range(t, *range, o.t1_points * r.padding, o.t1_step, scale, "t1");
    require_frequencies_in_range(t, *range, o.t3_points * r.padding, o.t3_step, scale, "t3");
  }

  ExcitonAggregate aggregate = one_exciton_model(c, std::move(dipoles));
  r.biexciton_shift = t.number("biexciton_shift", false).value_or(0.0);
  aggregate.biexciton_shift = r.biexciton_shift * scale.energy;
  bool absorption = o.pathways.empty();
  for (const Pathway p : o.pathways) absorption = absorption || p == Pathway::excited_state_absorption;
  aggregate.two_exciton = absorption;
  if (t.has("biexciton_shift") && !absorption)
    t.fail("biexciton_shift", "shifts the two-exciton states, which only excited-state absorption visits",
           t.table().get("biexciton_shift"));
  if (absorption && aggregate.hamiltonian.rows() < 2 && !o.pathways.empty())
    t.fail("pathways", "excited-state-absorption needs at least two sites (a two-exciton state)",
           t.table().get("pathways"));
  try {
    r.manifolds = build_manifolds(aggregate);
  } catch (const Error& e) {
    t.fail("dipoles", e.what(), t.table().get("dipoles"));
  }
  const ComponentTuples needed = needed_components(r.manifolds, o.polarization);
  bool any = false;
  for (const auto& plane : needed)
    for (const auto& row : plane)
      for (const bool tuple : row) any = any || tuple;
  if (!any)
    t.fail(o.polarization.isotropic ? "dipoles" : "polarization",
           "every dipole component has weight zero for these fields: the response would be zero",
           t.table().get(o.polarization.isotropic ? "dipoles" : "polarization"));
  return r;
}

}  // namespace heom::io::impl
