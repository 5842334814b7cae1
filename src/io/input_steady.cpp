// The input's [steady] table: how the steady state is solved for.
#include <optional>
#include <string>

#include "io/input_sections.hpp"

namespace heom::io::impl {

SteadyStateOptions read_steady(TableReader& t, const UnitScale& scale) {
  t.allow_only({"tolerance", "restart", "max_iterations", "preconditioner", "fallback_time"}, "[steady]");
  SteadyStateOptions o;
  if (t.has("tolerance")) o.tolerance = t.positive("tolerance");
  const auto whole = [&](const char* key, int fallback) { return t.int_value(key).value_or(fallback); };
  o.restart = whole("restart", o.restart);
  o.max_iterations = whole("max_iterations", o.max_iterations);
  if (auto p = t.string("preconditioner", false)) {
    const std::optional<SteadyPreconditioner> chosen = preconditioner_named(*p);
    if (!chosen)
      t.fail("preconditioner", "unknown preconditioner \"" + *p + "\" (expected " + preconditioner_names() + ")",
             t.table().get("preconditioner"));
    o.preconditioner = *chosen;
  }
  if (t.has("fallback_time")) o.fallback_time = t.non_negative("fallback_time") * scale.time;
  // (The keys are the fields' names.)
  if (const auto problem = o.validate()) t.fail(problem->field, problem->problem, t.table().get(problem->field));
  return o;
}

}  // namespace heom::io::impl
