// heom::impl::ExpAdamsControl: exp-adams' step and order controller: the step size, the order it has
// chosen and when it chooses again, and the recent error estimates that let the step grow.
#ifndef HEOM_INTEGRATOR_DETAIL_EXP_ADAMS_CONTROL_HPP
#define HEOM_INTEGRATOR_DETAIL_EXP_ADAMS_CONTROL_HPP

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>

#include "heom/core/error.hpp"
#include "heom/integrator/detail/step_control.hpp"
#include "heom/integrator/options.hpp"
#include "heom/integrator/state.hpp"
#include "heom/linalg/vector_ops.hpp"

namespace heom::impl {

/// The neighbouring order (p - 1 or p + 1) whose error estimate for a step allows the longer next
/// step, and that estimate (scaled); order 0 when there is none.
struct OrderEstimate {
  int order = 0;
  double error = 0.0;
};

class ExpAdamsControl {
 public:
  static constexpr int max_order = 5;
  /// How many accepted steps the next choice of order waits for, at most.
  static constexpr int max_steps_between_choices = 32;

  explicit ExpAdamsControl(const IntegratorOptions& options) : m_options(options) { reset(); }

  /// What a restart forgets: the step size (the next step is chosen afresh) and the order (the
  /// highest again, chosen anew). The recent error estimates stay: at a drive's breakpoint, or after
  /// an operator was applied, they are the only measure of the error level the next steps have.
  void reset() {
    m_order = m_options.max_order;
    m_steps_at_order = 0;
    m_steps_between_choices = max_order + 1;
    m_control.h = 0.0;
  }

  StepControl& steps() { return m_control; }
  const StepControl& steps() const { return m_control; }
  /// The order chosen (steps take it once the history holds as many derivatives).
  int order() const { return m_order; }
  /// The order of the last accepted step (its dense output's).
  int order_previous() const { return m_order_previous; }
  /// Whether the next step chooses the order, estimating the errors of the neighbouring orders too.
  bool choosing() const { return m_control.started() && m_steps_at_order >= m_steps_between_choices; }

  /// After an accepted step of `order`, size h from t, scaled error `err`: the next trial step.
  /// `rejected_before`: the step was retried; `other`: the neighbouring order's estimate where the step
  /// chose the order; `lands`: the step was clipped to end on a limit.
  void accept(double t, double h, double err, int order, bool rejected_before, bool chose, const OrderEstimate& other,
              bool lands) {
    m_control.accept(t, h);
    m_order_previous = order;
    // The estimate is that of the order p - 1 result: it scales as h^p. Growth follows the largest of
    // the last three accepted estimates: one alone can pass near zero (rho's error of a few populations
    // changes sign as they oscillate) and would double the step into rejections. As in LSODE, an
    // accepted step keeps its size unless the estimate allows 20% more: a step that passed is no
    // reason to shrink the next (a rejection does that), and every change costs an irregular history
    // and new weights (shrinking after each step that passed near the tolerance ratcheted the step
    // down: perf_tests/history.md). Growth is at most 2x per step, and none right after a rejection.
    const double recent = std::max({err, m_recent_errors[0], m_recent_errors[1]});
    m_recent_errors = {err, m_recent_errors[0]};
    double factor = recent > 0.0 ? 0.9 * std::pow(recent, -1.0 / std::max(order, 1)) : 2.0;
    if (rejected_before)
      factor = std::min(factor, 1.0);
    else if (factor < 1.2)
      factor = 1.0;
    ++m_steps_at_order;
    if (chose) factor = choose_order(factor, other);
    factor = std::min(2.0, std::max(0.5, factor));
    // A step clipped to land keeps the natural step.
    m_control.set_next(!lands || h * factor < m_control.h ? h * factor : m_control.h, m_options);
  }
  /// After a rejected step of size h and `order` with scaled error `err`: the step to retry with.
  double reject(double h, double err, int order) {
    h *= err >= non_finite_norm ? 0.1 : std::max(0.2, 0.9 * std::pow(err, -1.0 / std::max(order, 1)));
    m_control.h = h;
    return h;
  }

  void save(std::map<std::string, double>& scalars) const {
    scalars["order_previous"] = m_order_previous;
    m_control.save(scalars);
    scalars["recent_error_0"] = m_recent_errors[0];
    scalars["recent_error_1"] = m_recent_errors[1];
    scalars["order"] = m_order;
    scalars["steps_at_order"] = m_steps_at_order;
    scalars["steps_between_choices"] = m_steps_between_choices;
  }
  /// The controller saved in `s`, for a history of `count` derivatives (throws heom::Error naming a
  /// missing or impossible value); changes nothing. States saved before the recent errors or the
  /// order were kept continue as from none, at the highest order.
  ExpAdamsControl loaded(const IntegratorState& s, int count) const {
    ExpAdamsControl c(m_options);
    c.m_order_previous = whole_number(s, "order_previous", 1, std::max(count, 1));
    c.m_control = StepControl::load(s);
    const auto recent_error = [&](const char* name) {
      const auto found = s.scalars.find(name);
      return found != s.scalars.end() ? found->second : 0.0;
    };
    c.m_recent_errors = {recent_error("recent_error_0"), recent_error("recent_error_1")};
    const auto selection = [&](const char* name, int fallback, int low, int high) {
      return s.scalars.find(name) != s.scalars.end() ? whole_number(s, name, low, high) : fallback;
    };
    c.m_order = std::min(selection("order", m_options.max_order, 1, max_order), m_options.max_order);
    c.m_steps_at_order = selection("steps_at_order", 0, 0, 1 << 30);
    c.m_steps_between_choices =
        selection("steps_between_choices", max_order + 1, 1, max_steps_between_choices + max_order + 1);
    return c;
  }
  /// Scalar `name` of `s`, a whole number in [low, high] (else heom::Error).
  static int whole_number(const IntegratorState& s, const char* name, int low, int high) {
    const double value = s.scalar(name);
    if (!(value >= low && value <= high && value == std::floor(value)))
      throw Error(std::string("integrator state: ") + name + " is " + std::to_string(value));
    return static_cast<int>(value);
  }

 private:
  /// Variable-order Adams codes' rule, on a step that chose: the order whose estimate allows the
  /// longest next step, by 20% at least. Where the explicit part's stability rather than its accuracy
  /// holds the step (fermionic leads at loose tolerances) that is a lower order, whose stability
  /// region is larger (perf_tests/history.md). The step does not grow on a change of order. Returns
  /// the next step's factor.
  double choose_order(double factor, const OrderEstimate& other) {
    const double other_factor = other.order > 0 ? 0.9 * std::pow(other.error, -1.0 / other.order) : 0.0;
    if (other.order > 0 && other_factor > 1.2 * factor) {
      m_order = other.order;
      m_recent_errors = {other.error, other.error};
      factor = std::min(other_factor, 1.0);
      m_steps_between_choices = m_order + 1;
    } else {  // (kept: choose less often, so that an order that suits costs few estimates)
      m_steps_between_choices = std::min(2 * m_steps_between_choices, max_steps_between_choices);
    }
    m_steps_at_order = 0;
    return factor;
  }

  IntegratorOptions m_options;
  StepControl m_control;
  std::array<double, 2> m_recent_errors{};  // the scaled errors of the last two accepted steps, newest first
  int m_order_previous = 1;
  int m_order = max_order;
  int m_steps_at_order = 0;  // accepted steps since the order was last chosen
  int m_steps_between_choices = max_order + 1;
};

}  // namespace heom::impl

#endif
