// Reading the heom program's test hooks from the environment.
#include "test_hooks.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "heom/core/error.hpp"

namespace heom::app {

InjectedFailure InjectedFailure::from_environment() {
  InjectedFailure f;
  if (const char* v = std::getenv("HEOM_TEST_FAIL")) std::sscanf(v, "%d:%lld", &f.rank, &f.step);
  return f;
}

void InjectedFailure::check(int this_rank, long long steps) const {
  if (this_rank == rank && steps == step)
    throw Error("injected failure (HEOM_TEST_FAIL) at step " + std::to_string(steps));
}

SignalHooks SignalHooks::from_environment() {
  SignalHooks h;
  if (const char* v = std::getenv("HEOM_TEST_SIGNAL")) std::sscanf(v, "%d:%lld", &h.device, &h.step);
  if (const char* v = std::getenv("HEOM_TEST_CHECKPOINT_DELAY")) h.delay = std::atof(v);
  return h;
}

}  // namespace heom::app
