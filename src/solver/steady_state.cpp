// The steady-state options: their names, for messages and the program, and their checks.
#include "heom/solver/steady_state_options.hpp"

#include <cmath>
#include <string>

namespace heom {

const char* to_string(SteadyPreconditioner preconditioner) {
  switch (preconditioner) {
    case SteadyPreconditioner::tiers:
      return "tiers";
    case SteadyPreconditioner::tiers_symmetric:
      return "tiers-symmetric";
    case SteadyPreconditioner::system:
      return "system";
    case SteadyPreconditioner::none:
      break;
  }
  return "none";
}

std::optional<SteadyPreconditioner> preconditioner_named(const std::string& name) {
  for (SteadyPreconditioner p : {SteadyPreconditioner::tiers, SteadyPreconditioner::tiers_symmetric,
                                 SteadyPreconditioner::system, SteadyPreconditioner::none})
    if (name == to_string(p)) return p;
  return std::nullopt;
}

const char* preconditioner_names() { return "\"tiers\", \"tiers-symmetric\", \"system\" or \"none\""; }

std::optional<OptionProblem> SteadyStateOptions::validate() const {
  if (!(tolerance >= 1e-15) || !std::isfinite(tolerance))
    return OptionProblem{"tolerance", "must be >= 1e-15 (double precision), got " + format_number(tolerance)};
  if (restart < 1 || restart > steady_state_max_restart)
    return OptionProblem{"restart", "must be between 1 and " + std::to_string(steady_state_max_restart) + ", got " +
                                        std::to_string(restart)};
  if (max_iterations < 1 || max_iterations > steady_state_max_iterations)
    return OptionProblem{"max_iterations", "must be between 1 and 10^8, got " + std::to_string(max_iterations)};
  if (!(fallback_time >= 0.0) || !std::isfinite(fallback_time))
    return OptionProblem{"fallback_time", "must be finite and >= 0, got " + format_number(fallback_time)};
  return std::nullopt;
}

}  // namespace heom
