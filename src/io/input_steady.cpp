// The input's [steady] table: how the steady state is solved for.
#include <optional>
#include <string>

#include "io/input_sections.hpp"

namespace heom::io::impl {

SteadyStateOptions read_steady(TableReader& t, const UnitScale& scale) {
  t.allow_only({"tolerance", "restart", "max_iterations", "preconditioner", "fallback_time"}, "[steady]");
  SteadyStateOptions o;
  if (t.has("tolerance")) o.tolerance = t.positive("tolerance");
  if (o.tolerance < 1e-15)
    t.fail("tolerance", "must be >= 1e-15 (double precision), got " + format(o.tolerance), t.table().get("tolerance"));
  if (auto restart = t.integer("restart", false)) {
    if (*restart < 1 || *restart > steady_state_max_restart)
      t.fail("restart",
             "must be between 1 and " + std::to_string(steady_state_max_restart) + ", got " + std::to_string(*restart),
             t.table().get("restart"));
    o.restart = static_cast<int>(*restart);
  }
  if (auto most = t.integer("max_iterations", false)) {
    if (*most < 1 || *most > 100000000)
      t.fail("max_iterations", "must be between 1 and 10^8, got " + std::to_string(*most),
             t.table().get("max_iterations"));
    o.max_iterations = static_cast<int>(*most);
  }
  if (auto p = t.string("preconditioner", false)) {
    const std::optional<SteadyPreconditioner> chosen = preconditioner_named(*p);
    if (!chosen)
      t.fail("preconditioner", "unknown preconditioner \"" + *p + "\" (expected " + preconditioner_names() + ")",
             t.table().get("preconditioner"));
    o.preconditioner = *chosen;
  }
  if (t.has("fallback_time")) o.fallback_time = t.non_negative("fallback_time") * scale.time;
  return o;
}

}  // namespace heom::io::impl
