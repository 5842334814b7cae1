// Integrator choice, tolerances and statistics, shared by the solver, the program and plans.
#ifndef HEOM_INTEGRATOR_OPTIONS_HPP
#define HEOM_INTEGRATOR_OPTIONS_HPP

#include <cstdint>
#include <optional>
#include <string>

#include "heom/core/error.hpp"

namespace heom {

enum class Method {
  exp_adams,  ///< exponential Adams, variable step and order (up to 5), exact in each ADO's damping
  dopri5,     ///< Dormand-Prince 5(4), adaptive, with dense output
  rk4,        ///< classical fourth-order Runge-Kutta, fixed step
  lsrk4,      ///< Carpenter-Kennedy 2N-storage fourth-order Runge-Kutta, fixed step, fewest vectors
  chebyshev,  ///< Faber (Chebyshev) series of exp(L h) on an ellipse around L's spectrum; undriven models
  /// exp-adams, then chebyshev from the same state where the model is undriven and the series, from
  /// the spectrum it sees after exp-adams' first steps, needs clearly fewer applications per unit of
  /// time than exp-adams' own steps take once they have settled (automatic_window and after)
  automatic,
};

/// Method::automatic's rule (HierarchyState applies it before each step): exp-adams' applications per
/// unit of time are measured over windows of automatic_window steps, the first from its step
/// automatic_window after it (re)started (its first steps grow from a guess), until one window's
/// figure is no lower than automatic_settled of the one before (its steps stopped growing: the
/// transients from the initial state have decayed); chebyshev then takes over from the same state
/// where its series' predicted applications per unit of time, from the spectrum it sees then, are
/// below automatic_handover_ratio of that figure (room for the prediction's few percent); else
/// exp-adams steps on for good.
inline constexpr std::int64_t automatic_window = 16;
inline constexpr double automatic_settled = 0.85;
inline constexpr double automatic_handover_ratio = 0.75;

const char* to_string(Method method);
/// The method of that name (to_string's), if any.
std::optional<Method> method_named(const std::string& name);
/// "exp-adams", "dopri5", "rk4", "lsrk4", "chebyshev" or "automatic"; throws heom::Error naming `key` for anything
/// else.
Method parse_method(const std::string& name, const std::string& key = "method");
/// The names parse_method accepts, for messages.
const char* method_names();
/// Whether the method chooses its own steps from rtol and atol (and interpolates output times).
inline bool is_adaptive(Method method) {
  return method == Method::exp_adams || method == Method::dopri5 || method == Method::chebyshev ||
         method == Method::automatic;
}

struct IntegratorOptions {
  Method method = Method::automatic;
  double rtol = 1e-8;   ///< adaptive methods: relative tolerance per element
  double atol = 1e-10;  ///< adaptive methods: absolute tolerance per element
  /// rk4, lsrk4: the step (required, > 0); exp-adams, dopri5, automatic: the first step; chebyshev:
  /// every step (0: automatic)
  double step = 0.0;
  double max_step = 0.0;  ///< adaptive methods: largest step (0: no limit)
  /// adaptive methods: a step below this means divergence (0: 1e-12 of the first); so does a rejected
  /// step below 16 eps |t| that does not land on the end (it would not move t)
  double min_step = 0.0;
  /// exp-adams (and automatic's exp-adams steps): the highest order it chooses, 1..5. It chooses the order from the
  /// error estimates of the neighbouring orders; a lower order has a larger stability region, so where stability rather
  /// than accuracy holds the step (fermionic leads at loose tolerances) it chooses 3 or 4 by itself.
  int max_order = 5;

  /// The first field out of range, and why (nothing when every field is fine).
  std::optional<OptionProblem> validate() const;
};

/// Full ADO vectors a run keeps (state included), for memory plans; `observe_all_ados` as in
/// SolverOptions. Automatic: exp-adams' (chebyshev, when it takes over, holds fewer).
int state_vectors(Method method, bool observe_all_ados = false);
/// Of those, the vectors the generator reads (the state and stage inputs): on a split hierarchy
/// (heom::Distribution) they alone also hold the halo.
int generator_input_vectors(Method method);

struct IntegratorStatistics {
  std::int64_t steps = 0;            ///< accepted steps
  std::int64_t rejected = 0;         ///< rejected (retried) steps
  std::int64_t rhs_evaluations = 0;  ///< generator applications
};

}  // namespace heom

#endif
