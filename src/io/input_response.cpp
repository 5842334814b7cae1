// The input's [response] table: the third-order response of an exciton model and its 2D spectra.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "io/input_sections.hpp"

namespace heom::io::impl {

namespace {

/// An optional non-empty array of strings (heom::make_response_options checks the names).
std::vector<std::string> read_names(TableReader& t, const std::string& key, const std::string& known) {
  std::vector<std::string> out;
  const toml::node* node = t.node(key, false);
  if (!node) return out;
  const toml::array* list = node->as_array();
  if (!list || list->empty()) t.fail(key, "expected a non-empty array of names (" + known + ")", node);
  for (const toml::node& entry : *list) {
    const auto name = entry.as_string();
    if (!name) t.fail(key, "expected names (" + known + ")", &entry);
    out.push_back(name->get());
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

}  // namespace

ResponseConfig read_response(TableReader& t, const RunConfig& c) {
  t.allow_only({"dipoles", "waiting_times", "t1_step", "t1_points", "t3_step", "t3_points", "pathways", "signals",
                "polarization", "isotropic", "biexciton_shift", "window", "padding", "frequency_range"},
               "[response]");
  const UnitScale scale = unit_scale(c.units);
  require_ground_state(t, c, "dipoles", "[response]");
  bool vectors = false;
  std::vector<Dipole> dipoles = read_site_dipoles(t, c.model.dimension() - 1, vectors);

  ResponseSettings s;
  s.waiting_times = *t.numbers("waiting_times", true);
  for (double& w : s.waiting_times) w *= scale.time;
  s.t1_step = t.positive("t1_step") * scale.time;
  s.t1_points = read_points(t, "t1_points");
  s.t3_step = t.positive("t3_step") * scale.time;
  s.t3_points = read_points(t, "t3_points");
  s.pathways =
      read_names(t, "pathways", "\"ground-state-bleach\", \"stimulated-emission\", \"excited-state-absorption\"");
  s.signals = read_names(t, "signals", "\"rephasing\", \"non-rephasing\"");
  s.polarization = t.string("polarization", false).value_or(s.polarization);
  s.isotropic = t.boolean("isotropic", false).value_or(s.isotropic);
  s.biexciton_shift = t.number("biexciton_shift", false).value_or(0.0) * scale.energy;
  // The settings' names are the keys of [response].
  const auto refuse = [&t](const OptionProblem& problem) {
    t.fail(problem.field, problem.problem, t.table().get(problem.field));
  };
  ResponseConfig r;
  try {
    r.options = make_response_options(s);
  } catch (const OptionError& e) {
    refuse(e.problem());
  }
  const ResponseOptions& o = r.options;
  r.biexciton_shift = s.biexciton_shift / scale.energy;

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

  r.dipoles = std::move(dipoles);
  r.settings = s;
  try {
    r.manifolds = member_manifolds(r, c.model);
  } catch (const OptionError& e) {
    refuse(e.problem());
  } catch (const Error& e) {
    t.fail("dipoles", e.what(), t.table().get("dipoles"));
  }
  return r;
}

}  // namespace heom::io::impl

namespace heom::io {

ExcitonManifolds member_manifolds(const ResponseConfig& response, const Model& model) {
  // The one-exciton model: levels 1..N of H (energies relative to the ground state's, as an absorption
  // spectrum of the same input has them) and of every bath's coupling.
  const int sites = model.dimension() - 1;
  ExcitonAggregate a;
  a.hamiltonian = model.hamiltonian().block(1, 1, sites, sites);
  for (int m = 0; m < sites; ++m) a.hamiltonian(m, m) -= model.hamiltonian()(0, 0);
  a.dipoles = response.dipoles;
  for (const Bath& bath : model.baths())
    a.baths.push_back(bath.with_coupling(bath.coupling().block(1, 1, sites, sites)));
  return response_manifolds(std::move(a), response.settings, response.options);
}

}  // namespace heom::io
