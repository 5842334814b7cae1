// Names of the steady-state options, for messages and the program.
#include "heom/solver/steady_state_options.hpp"

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

}  // namespace heom
