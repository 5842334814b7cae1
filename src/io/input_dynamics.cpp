// The input's [dynamics] table: the output times and the integrator's settings, and the solver
// options they make together with [hierarchy] threshold.
#include <string>

#include "heom/core/error.hpp"
#include "io/input_sections.hpp"

namespace heom::io::impl {

DynamicsSection read_dynamics(TableReader& dynamics, const UnitScale& scale, const char* times_elsewhere) {
  dynamics.allow_only({"t_end", "output_every", "method", "rtol", "atol", "step", "max_order"}, "[dynamics]");
  DynamicsSection d;
  if (times_elsewhere) {
    for (const char* key : {"t_end", "output_every"})
      if (dynamics.has(key))
        dynamics.fail(key, std::string("is not used: ") + times_elsewhere, dynamics.table().get(key));
  } else {
    d.t_end = dynamics.positive("t_end") * scale.time;
    d.output_every = dynamics.positive("output_every") * scale.time;
    if (d.t_end / d.output_every > 1e7)
      dynamics.fail("output_every", "gives more than 10^7 output times up to t_end",
                    dynamics.table().get("output_every"));
  }
  RunSettings& s = d.settings;
  s.method = dynamics.string("method", false).value_or(s.method);
  const std::optional<Method> method = method_named(s.method);
  if (method && is_adaptive(*method)) {
    if (dynamics.has("rtol")) s.rtol = dynamics.positive("rtol");
    if (dynamics.has("atol")) s.atol = dynamics.positive("atol");
    if (dynamics.has("step")) s.step = dynamics.positive("step") * scale.time;
  } else if (method) {
    s.step = dynamics.positive("step") * scale.time;  // (required: the fixed-step methods' one setting)
    for (const char* key : {"rtol", "atol"})
      if (dynamics.has(key))
        dynamics.fail(key, std::string("applies to the adaptive methods only, not ") + s.method,
                      dynamics.table().get(key));
  }
  s.max_order = dynamics.int_value("max_order").value_or(s.max_order);
  return d;
}

SolverOptions solver_options(const RunSettings& settings, TableReader& dynamics, TableReader& hierarchy) {
  try {
    return make_solver_options(settings);
  } catch (const OptionError& e) {
    // The settings' names are the keys: threshold in [hierarchy], the rest in [dynamics].
    const std::string& key = e.problem().field;
    TableReader& table = key == "threshold" ? hierarchy : dynamics;
    table.fail(key, e.problem().problem, table.table().get(key));
  }
}

}  // namespace heom::io::impl
