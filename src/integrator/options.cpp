// Integrator option parsing and checks.
#include <cmath>
#include <sstream>

#include "heom/core/error.hpp"
#include "heom/integrator/options.hpp"

namespace heom {

const char* to_string(Method method) { return method == Method::rk4 ? "rk4" : "dopri5"; }

Method parse_method(const std::string& name, const std::string& key) {
  if (name == "rk4") return Method::rk4;
  if (name == "dopri5") return Method::dopri5;
  throw Error(key + ": unknown integrator \"" + name + "\" (expected \"dopri5\" or \"rk4\")");
}

int state_vectors(Method method, bool observe_all_ados) {
  // rk4: y, accumulator, stage input, stage derivative.
  // dopri5: y, stage input, k1..k6 (k7 reuses k2's storage), and a full dense-output buffer only
  // when observers see every ADO (otherwise rho alone is interpolated).
  return method == Method::rk4 ? 4 : (observe_all_ados ? 9 : 8);
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
  if (method == Method::rk4) {
    if (!std::isfinite(step) || step <= 0.0) throw Error("step must be > 0 for rk4, got " + number(step));
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
