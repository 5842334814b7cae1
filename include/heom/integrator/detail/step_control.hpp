// heom::impl::StepControl: the step-size state that the adaptive methods (dopri5, exp-adams) carry
// between steps, and its part of a saved state.
#ifndef HEOM_INTEGRATOR_DETAIL_STEP_CONTROL_HPP
#define HEOM_INTEGRATOR_DETAIL_STEP_CONTROL_HPP

#include <algorithm>
#include <map>
#include <string>

#include "heom/integrator/options.hpp"
#include "heom/integrator/state.hpp"

namespace heom::impl {

/// The next trial step, the first step (the automatic divergence floor is 1e-12 of it) and the last
/// accepted step (what dense output interpolates over). Each method keeps its own rule for the
/// first step's estimate and for growing and shrinking steps.
struct StepControl {
  double h = 0.0;  ///< the next trial step; 0: not chosen yet
  double first_step = 0.0;
  double t_previous = 0.0, h_previous = 0.0;  ///< the last accepted step: from t_previous, of h_previous

  bool started() const { return h > 0.0; }
  /// Chooses the first step: options.step, else `estimate()` (the method's heuristic), at most
  /// options.max_step; returns it.
  template <class Estimate>
  double start(const IntegratorOptions& options, const Estimate& estimate) {
    double first = options.step;
    if (first <= 0.0) first = estimate();
    if (options.max_step > 0.0) first = std::min(first, options.max_step);
    first_step = first;
    h = first;
    return first;
  }
  /// The smallest step the method may take: options.min_step, else 1e-12 of its first step.
  double floor(const IntegratorOptions& options) const {
    return options.min_step > 0.0 ? options.min_step : 1e-12 * first_step;
  }
  /// Records the step of `taken` from t as accepted.
  void accept(double t, double taken) {
    t_previous = t;
    h_previous = taken;
  }
  /// Sets the next trial step, at most options.max_step.
  void set_next(double next, const IntegratorOptions& options) {
    h = options.max_step > 0.0 ? std::min(next, options.max_step) : next;
  }

  void save(std::map<std::string, double>& scalars) const {
    scalars["h"] = h;
    scalars["first_step"] = first_step;
    scalars["t_previous"] = t_previous;
    scalars["h_previous"] = h_previous;
  }
  /// The control saved in `s` (throws heom::Error naming a missing value); changes nothing.
  static StepControl load(const IntegratorState& s) {
    StepControl c;
    c.h = s.scalar("h");
    c.first_step = s.scalar("first_step");
    c.t_previous = s.scalar("t_previous");
    c.h_previous = s.scalar("h_previous");
    return c;
  }
};

}  // namespace heom::impl

#endif
