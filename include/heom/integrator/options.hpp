// Integrator choice, tolerances and statistics, shared by the solver, the program and plans.
#ifndef HEOM_INTEGRATOR_OPTIONS_HPP
#define HEOM_INTEGRATOR_OPTIONS_HPP

#include <cstdint>
#include <string>

namespace heom {

enum class Method {
  rk4,     ///< classical fourth-order Runge-Kutta, fixed step
  dopri5,  ///< Dormand-Prince 5(4), adaptive, with dense output
};

const char* to_string(Method method);
/// "rk4" or "dopri5"; throws heom::Error naming `key` for anything else.
Method parse_method(const std::string& name, const std::string& key = "method");

struct IntegratorOptions {
  Method method = Method::dopri5;
  double rtol = 1e-8;     ///< dopri5: relative tolerance per element
  double atol = 1e-10;    ///< dopri5: absolute tolerance per element
  double step = 0.0;      ///< rk4: the step (required, > 0); dopri5: first step (0: automatic)
  double max_step = 0.0;  ///< dopri5: largest step (0: no limit)
  double min_step = 0.0;  ///< dopri5: a step below this means divergence (0: 1e-12 of the first step)

  /// Throws heom::Error naming the option when a value is out of range.
  void validate() const;
};

/// Full ADO vectors a run keeps (state included), for memory plans; `observe_all_ados` as in
/// SolverOptions.
int state_vectors(Method method, bool observe_all_ados = false);

struct IntegratorStatistics {
  std::int64_t steps = 0;            ///< accepted steps
  std::int64_t rejected = 0;         ///< rejected (retried) steps
  std::int64_t rhs_evaluations = 0;  ///< generator applications
};

}  // namespace heom

#endif
