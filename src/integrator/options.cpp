// Integrator option parsing and checks.
#include <cmath>
#include <sstream>
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
  }
  return "?";
}

const char* method_names() { return "\"exp-adams\", \"dopri5\", \"rk4\" or \"lsrk4\""; }

Method parse_method(const std::string& name, const std::string& key) {
  for (Method m : {Method::exp_adams, Method::dopri5, Method::rk4, Method::lsrk4})
    if (name == to_string(m)) return m;
  throw Error(key + ": unknown integrator \"" + name + "\" (expected " + method_names() + ")");
}

int state_vectors(Method method, bool observe_all_ados) {
  // A full dense-output buffer only when observers see every ADO (otherwise rho alone is
  // interpolated).
  const int dense = observe_all_ados ? 1 : 0;
  switch (method) {
    case Method::exp_adams:  // y, y_new, five past derivatives
      return 7 + dense;
    case Method::dopri5:  // y, stage input, k1..k6 (k7 reuses k2's storage)
      return 8 + dense;
    case Method::rk4:  // y, accumulator, stage input, stage derivative
      return 4;
    case Method::lsrk4:  // y, running increment, stage derivative
      return 3;
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
  }
  return 0;
}

void IntegratorOptions::validate() const {
  auto number = [](double x) {
    std::ostringstream s;
    s << x;
    return s.str();
  };
  auto positive_or_zero = [&](double x, const char* name) {
    if (!std::isfinite(x) || x < 0.0) throw Error(std::string(name) + " must be >= 0, got " + number(x));
  };
  if (max_order < 1 || max_order > 5) throw Error("max_order must be 1..5, got " + std::to_string(max_order));
  if (max_order != IntegratorOptions{}.max_order && method != Method::exp_adams)
    throw Error(std::string("max_order applies to exp-adams only, not ") + to_string(method));
  if (!is_adaptive(method)) {
    if (!std::isfinite(step) || step <= 0.0)
      throw Error(std::string("step must be > 0 for ") + to_string(method) + ", got " + number(step));
    return;
  }
  if (!std::isfinite(rtol) || rtol <= 0.0) throw Error("rtol must be > 0, got " + number(rtol));
  if (rtol < 1e-14) throw Error("rtol must be >= 1e-14 (double precision), got " + number(rtol));
  if (!std::isfinite(atol) || atol <= 0.0) throw Error("atol must be > 0, got " + number(atol));
  positive_or_zero(step, "step");
  positive_or_zero(max_step, "max_step");
  positive_or_zero(min_step, "min_step");
}

}  // namespace heom
