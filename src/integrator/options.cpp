// Integrator option parsing and checks.
#include <cmath>
#include <string>

#include "heom/core/error.hpp"
#include "heom/integrator/options.hpp"

namespace heom {

const char* to_string(Method method) {
  switch (method) {
    case Method::exp_adams:
      return "exp-adams";
    case Method::dopri5:
      return "dopri5";
    case Method::rk4:
      return "rk4";
    case Method::lsrk4:
      return "lsrk4";
    case Method::chebyshev:
      return "chebyshev";
    case Method::automatic:
      return "automatic";
  }
  return "?";
}

const char* method_names() { return "\"automatic\", \"exp-adams\", \"dopri5\", \"rk4\", \"lsrk4\" or \"chebyshev\""; }

std::optional<Method> method_named(const std::string& name) {
  for (Method m : {Method::exp_adams, Method::dopri5, Method::rk4, Method::lsrk4, Method::chebyshev, Method::automatic})
    if (name == to_string(m)) return m;
  return std::nullopt;
}

Method parse_method(const std::string& name, const std::string& key) {
  if (const std::optional<Method> m = method_named(name)) return *m;
  throw Error(key + ": unknown method \"" + name + "\" (expected " + method_names() + ")");
}

int state_vectors(Method method, bool observe_all_ados) {
  // A full dense-output buffer only when observers see every ADO (otherwise rho alone is
  // interpolated).
  const int dense = observe_all_ados ? 1 : 0;
  switch (method) {
    case Method::exp_adams:  // y, y_new, five past derivatives
    case Method::automatic:  // (exp-adams' until chebyshev takes over)
      return 7 + dense;
    case Method::dopri5:  // y, stage input, k1..k6 (k7 reuses k2's storage)
      return 8 + dense;
    case Method::rk4:  // y, accumulator, stage input, stage derivative
      return 4;
    case Method::lsrk4:  // y, running increment, stage derivative
      return 3;
    case Method::chebyshev:  // y, two terms, the sum, L of a term; every ADO's output accumulators hold
                             // one more (the hull's Arnoldi basis, 11, is held during its estimate only)
      return 5 + dense;
  }
  return 0;
}

int generator_input_vectors(Method method) {
  switch (method) {
    case Method::exp_adams:  // y and y_new (they trade places on every accepted step)
    case Method::dopri5:     // y and the stage input (likewise)
    case Method::rk4:        // y and the stage input
      return 2;
    case Method::lsrk4:  // y
      return 1;
    case Method::chebyshev:  // y, the two terms, the sum (the next y)
    case Method::automatic:  // (chebyshev's, once it takes over)
      return 4;
  }
  return 0;
}

std::optional<OptionProblem> IntegratorOptions::validate() const {
  const auto problem = [](const char* field, const std::string& what) { return OptionProblem{field, what}; };
  const auto not_negative = [&](double x, const char* field) -> std::optional<OptionProblem> {
    if (!std::isfinite(x) || x < 0.0) return problem(field, "must be >= 0, got " + format_number(x));
    return std::nullopt;
  };
  if (max_order < 1 || max_order > 5) return problem("max_order", "must be 1..5, got " + std::to_string(max_order));
  if (max_order != IntegratorOptions{}.max_order && method != Method::exp_adams && method != Method::automatic)
    return problem("max_order", std::string("applies to exp-adams only, not ") + to_string(method));
  if (!is_adaptive(method)) {
    if (!std::isfinite(step) || step <= 0.0)
      return problem("step", std::string("must be > 0 for ") + to_string(method) + ", got " + format_number(step));
    return std::nullopt;
  }
  if (!std::isfinite(rtol) || rtol <= 0.0) return problem("rtol", "must be > 0, got " + format_number(rtol));
  if (rtol < 1e-14) return problem("rtol", "must be >= 1e-14 (double precision), got " + format_number(rtol));
  if (!std::isfinite(atol) || atol <= 0.0) return problem("atol", "must be > 0, got " + format_number(atol));
  if (auto p = not_negative(step, "step")) return p;
  if (auto p = not_negative(max_step, "max_step")) return p;
  return not_negative(min_step, "min_step");
}

}  // namespace heom
