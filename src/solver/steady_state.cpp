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

}  // namespace heom
