// heom::ExponentialAdams' member definitions (exponential_adams.hpp includes them at its end).
#ifndef HEOM_INTEGRATOR_DETAIL_EXPONENTIAL_ADAMS_DEFINITIONS_HPP
#define HEOM_INTEGRATOR_DETAIL_EXPONENTIAL_ADAMS_DEFINITIONS_HPP

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "heom/integrator/exponential_adams.hpp"

namespace heom {

template <class ExecSpace>
double ExponentialAdams<ExecSpace>::step(const ExecSpace& exec, double t_limit) {
  const double t = this->m_time;
  base::require_ahead("exp-adams", t, t_limit);
  m_history.convert(exec, packs_history());
  impl::StepControl& steps = m_control.steps();
  // On host backends, once there is a step size, the new derivative and the first trial step are one
  // pass (attempt's with_derivative); not on a step that chooses the order, whose estimates at the
  // neighbouring orders read N(y) before the update.
  const bool choosing = m_control.choosing();
  const bool fused = BackendTraits<ExecSpace>::host_shape && steps.started() && m_history.pending() && !choosing;
  if (!fused) {
    record_derivative(exec);
    if (!steps.started()) steps.start(m_options, [&]() { return initial_step(exec); });
  }
  // The history's derivatives (after a restart they build up one per step) and the chosen order.
  const int available = std::min(fused ? m_history.count() + 1 : m_history.count(), m_options.max_order);
  const int order = std::min(available, m_control.order());
  double h = steps.h;
  for (bool first_try = true;; first_try = false) {
    bool lands = false;
    if (first_try) h = base::raised_to_resolution(h, t, m_options.max_step);  // (a rejection may go below)
    h = base::clip_to_limit(t, h, t_limit, lands);
    base::require_above_floor("exp-adams", h, steps.floor(m_options), t, lands);
    // (Only now: a step-floor error above leaves the history as it was, to continue from.)
    if (fused && first_try) m_history.push(t, steps.h_previous);
    // (Before the step's own update: the estimates' passes write y_new too.)
    const impl::OrderEstimate other =
        choosing && first_try ? best_other_order(exec, h, order, available) : impl::OrderEstimate{};
    const double err = attempt(exec, h, order, fused && first_try, m_weights.step_table());
    if (!(err <= 1.0)) {  // (a NaN is rejected)
      ++this->m_stats.rejected;
      h = m_control.reject(h, err, order);
      continue;
    }
    // Accepted: y_new becomes the state; the old state stays in m_y_new and the history intact until
    // the next step, for interpolate().
    std::swap(this->m_y, m_y_new);
    m_history.accepted();
    this->m_time = lands ? t_limit : t + h;
    ++this->m_stats.steps;
    m_control.accept(t, h, err, order, !first_try, choosing && first_try, other, lands);
    return this->m_time;
  }
}

template <class ExecSpace>
bool ExponentialAdams<ExecSpace>::interpolate_listed(const ExecSpace& exec, double t, const vector_type& out,
                                                     const typename base::ado_list* ados) const {
  if (!m_history.has_step()) return false;
  const impl::StepControl& steps = m_control.steps();
  const double sigma = (t - steps.t_previous) / steps.h_previous;
  // (A shorter `out` takes the leading ADOs: rho alone, where the output is rho.)
  const std::int64_t count = std::min<std::int64_t>(out.extent(0), this->owned_size());
  const int block = block_size();
  // The weights of the interpolated ADOs' damping classes alone (an output of rho and the currents of
  // many leads needs a few of hundreds), or of all.
  const std::vector<int> all;
  const std::vector<int>& classes = ados ? m_weights.classes_of(ados, 0)
                                    : count < this->owned_size()
                                        ? m_weights.classes_of(nullptr, static_cast<int>((count + block - 1) / block))
                                        : all;
  const int order_previous = m_control.order_previous();
  auto& table = m_weights.dense_table();
  m_weights.upload(exec, table, steps.h_previous, sigma, order_previous,
                   m_history.nodes(steps.h_previous, order_previous), classes);
  // The state before the last step sits in m_y_new until the next step.
  dispatch(order_previous, [&](auto order) {
    constexpr int P = decltype(order)::value;
    const impl::ExponentialAdamsInterpolate<ExecSpace, P> f{
        out, m_y_new, m_history.views(), m_weights.ado_class(), table.device, block, m_weights.element_stride()};
    if constexpr (BackendTraits<ExecSpace>::host_shape) {
      if (ados && m_history.packed()) {
        const impl::PackedHistoryInterpolate<ExecSpace, P> by_ado{f, m_history.packing()};
        const typename base::ado_list listed = *ados;
        Kokkos::parallel_for("heom::exp_adams::interpolate_packed_ados",
                             Kokkos::RangePolicy<ExecSpace>(exec, 0, listed.extent(0)),
                             [=](const int k) { by_ado(listed(k)); });
        return;
      }
    }
    if (ados) {
      Kokkos::parallel_for("heom::exp_adams::interpolate_ados",
                           typename BackendTraits<ExecSpace>::range_policy(exec, 0, ados->extent(0) * block),
                           impl::InterpolateListed<decltype(f)>{f, *ados});
      return;
    }
    if constexpr (BackendTraits<ExecSpace>::host_shape) {
      if (m_history.packed()) {
        Kokkos::parallel_for("heom::exp_adams::interpolate_packed",
                             Kokkos::RangePolicy<ExecSpace>(exec, 0, count / block),
                             impl::PackedHistoryInterpolate<ExecSpace, P>{f, m_history.packing()});
        return;
      }
    }
    Kokkos::parallel_for("heom::exp_adams::interpolate",
                         typename BackendTraits<ExecSpace>::range_policy(exec, 0, count), f);
  });
  return true;
}

template <class ExecSpace>
void ExponentialAdams<ExecSpace>::save_history(const ExecSpace& exec, IntegratorState& s, VectorStore& vectors) const {
  s.scalars["exact_system_diagonal"] = m_weights.exact_system_diagonal();
  m_control.save(s.scalars);
  m_history.save(exec, s, vectors);
  // The state before the last step, which interpolate() reads.
  if (m_history.has_step()) vectors.put("y_previous", this->to_host(exec, m_y_new));
}

template <class ExecSpace>
void ExponentialAdams<ExecSpace>::load_history(const ExecSpace& exec, const IntegratorState& s,
                                               const VectorStore& vectors) {
  // Everything is checked before anything changes.
  const int count = impl::ExpAdamsControl::whole_number(s, "history", 0, max_order);
  // The history holds N(y) without the system's diagonal where this integrator takes it exactly. A
  // state whose history was saved the other way (by a heom from before the diagonal was exact, which
  // did not record it) cannot continue it: the run goes on from y alone, as from a restart.
  const auto exact = s.scalars.find("exact_system_diagonal");
  if ((exact != s.scalars.end() && exact->second != 0.0) != m_weights.exact_system_diagonal()) {
    reset();
    return;
  }
  const auto saved = impl::ExpAdamsHistory<ExecSpace>::read(s, vectors, count, this->owned_size());
  const impl::ExpAdamsControl control = m_control.loaded(s, count);
  if (saved.has_step && !control.steps().started()) throw Error("integrator state: a last step but no step size");
  if (saved.has_step) vectors.require("y_previous", static_cast<std::size_t>(this->owned_size()));
  m_control = control;
  m_history.take(exec, saved, vectors);
  if (saved.has_step) this->from_host(exec, vectors.get("y_previous"), m_y_new);
  // (The weight tables are recomputed, to the same bits.)
  m_weights.forget();
}

template <class ExecSpace>
void ExponentialAdams<ExecSpace>::record_derivative(const ExecSpace& exec) {
  if (m_history.count() > 0 && !m_history.pending()) return;
  m_history.push(this->m_time, m_control.steps().h_previous);
  const vector_type& derivative = m_history.newest();
  if constexpr (BackendTraits<ExecSpace>::host_shape) {
    if (m_history.packed()) {
      // (The history's newest vector is only the one apply_then checks: the hook takes the blocks.)
      this->evaluate_then(exec, this->m_time, this->m_y, derivative, Generator<ExecSpace>::Damping::excluded,
                          impl::PackDerivative{derivative.data(), m_history.packing()});
      return;
    }
  }
  this->evaluate(exec, this->m_time, this->m_y, derivative, Generator<ExecSpace>::Damping::excluded);
  if (m_weights.exact_system_diagonal())
    Kokkos::parallel_for("heom::exp_adams::exclude_system_diagonal",
                         typename BackendTraits<ExecSpace>::range_policy(exec, 0, this->owned_size()),
                         exclude_system_diagonal());
}

template <class ExecSpace>
double ExponentialAdams<ExecSpace>::initial_step(const ExecSpace& exec) {
  const const_vector_type none;
  const double d0 =
      impl::weighted_norm<ExecSpace>(exec, m_sum, this->m_y, none, this->m_y, m_options.atol, m_options.rtol);
  const_vector_type derivative = m_history.newest();
  if constexpr (BackendTraits<ExecSpace>::host_shape) {
    if (m_history.packed()) {  // whole into m_y_new, free until the first step
      Kokkos::parallel_for("heom::exp_adams::unpack",
                           Kokkos::RangePolicy<ExecSpace>(exec, 0, this->m_generator.num_ados()),
                           impl::UnpackBlocks{m_history.newest().data(), m_y_new.data(), m_history.packing()});
      derivative = m_y_new;
    }
  }
  const double d1 =
      impl::weighted_norm<ExecSpace>(exec, m_sum, derivative, none, this->m_y, m_options.atol, m_options.rtol);
  return (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * std::sqrt(m_options.rtol) * d0 / d1;
}

template <class ExecSpace>
double ExponentialAdams<ExecSpace>::attempt(const ExecSpace& exec, double h, int order, bool with_derivative,
                                            Table& table) {
  m_weights.upload(exec, table, h, 1.0, order, m_history.nodes(h, order));
  const Kokkos::Array<double, max_order> difference = weights::differences(table.key.nodes.data(), order);
  Norms norms;
  dispatch(order, [&](auto p) {
    constexpr int P = decltype(p)::value;
    if constexpr (BackendTraits<ExecSpace>::host_shape) {
      if (m_history.packed()) {
        norms = update_packed<P>(exec, table, difference, with_derivative);
        return;
      }
    }
    const int block = block_size(), stride = m_weights.element_stride();
    if (m_weights.real_rates())
      norms = update(exec,
                     impl::ExponentialAdamsUpdate<ExecSpace, P, true>{
                         m_y_new, this->m_y, m_history.views(), m_weights.ado_class(), table.device, m_options.atol,
                         m_options.rtol, block, stride, difference},
                     with_derivative);
    else
      norms = update(exec,
                     impl::ExponentialAdamsUpdate<ExecSpace, P, false>{
                         m_y_new, this->m_y, m_history.views(), m_weights.ado_class(), table.device, m_options.atol,
                         m_options.rtol, block, stride, difference},
                     with_derivative);
  });
  // As in dopri5: rtol and atol bound rho's own error as well as the hierarchy's RMS error.
  return std::max(norms.all, this->from_rho_owner(norms.rho));
}

template <class ExecSpace>
template <int Order>
typename ExponentialAdams<ExecSpace>::Norms ExponentialAdams<ExecSpace>::update_packed(
    const ExecSpace& exec, const Table& table, const Kokkos::Array<double, max_order>& difference,
    bool with_derivative) {
  // Error sums per ADO, as the Hermitian kernel's ranges are.
  clear_ranges();
  const int per_member = this->m_generator.num_ados() / this->m_generator.members();
  const impl::PackedHistoryUpdate<ExecSpace, Order> update{
      {m_y_new, this->m_y, m_history.views(), m_weights.ado_class(), table.device, m_options.atol, m_options.rtol,
       block_size(), 1, difference},
      m_history.newest().data(),
      m_history.packing(),
      streams_packed_update()};
  const impl::PackedUpdateAfterDerivative<decltype(update)> hook{&update, m_range_error.data(), m_rho_error.data(),
                                                                 per_member};
  if (with_derivative) {  // (the history's newest vector is only the one apply_then checks: the hook takes the blocks)
    this->evaluate_then(exec, this->m_time, this->m_y, m_history.newest(), Generator<ExecSpace>::Damping::excluded,
                        hook);
  } else {
    const impl::PackedUpdateAll<decltype(update)> update_all(hook, this->m_generator.num_ados(), exec.concurrency());
    Kokkos::parallel_for("heom::exp_adams::update_packed", Kokkos::RangePolicy<ExecSpace>(exec, 0, update_all.chunks()),
                         update_all);
  }
  exec.fence();
  return range_norms();
}

template <class ExecSpace>
template <class Update>
typename ExponentialAdams<ExecSpace>::Norms ExponentialAdams<ExecSpace>::update(const ExecSpace& exec, const Update& f,
                                                                                bool with_derivative) {
  if constexpr (BackendTraits<ExecSpace>::host_shape) {
    if (with_derivative) {
      clear_ranges();
      const int per_member = this->m_generator.num_ados() / this->m_generator.members();
      const impl::ExcludeSystemDiagonal<ExecSpace> exclude = exclude_system_diagonal();
      const impl::UpdateAfterDerivative<Update> after{&f, m_range_error.data(), m_rho_error.data(), per_member,
                                                      m_weights.exact_system_diagonal() ? &exclude : nullptr};
      this->evaluate_then(exec, this->m_time, this->m_y, m_history.newest(), Generator<ExecSpace>::Damping::excluded,
                          after);
      exec.fence();
      return range_norms();
    }
  }
  Norms norms;
  norms.all = m_sum.rms_blocked(exec, block_size(), f);
  // rho's share again on its own (it rewrites the same values of y_new).
  if (this->m_generator.owns_rho()) norms.rho = m_rho_sum.rms_blocked(exec, block_size(), f);
  return norms;
}

template <class ExecSpace>
typename ExponentialAdams<ExecSpace>::Norms ExponentialAdams<ExecSpace>::range_norms() const {
  Norms norms;
  const int members = this->m_generator.members(), per_member = this->m_generator.num_ados() / members;
  if (const Communicator* communicator = this->m_generator.communicator()) {
    // Split hierarchies: every device's range sums, in global ADO order.
    norms.all = impl::rms_norm(impl::fixed_order_sum_over_devices(communicator, m_range_error),
                               this->m_generator.global_vector_size());
  } else {
    for (int m = 0; m < members; ++m)
      norms.all =
          std::max(norms.all, impl::rms_norm(impl::fixed_order_sum(m_range_error.data() + m * per_member, per_member),
                                             this->m_generator.member_size()));
  }
  if (this->m_generator.owns_rho())
    for (double e : m_rho_error) norms.rho = std::max(norms.rho, impl::rms_norm(e, block_size()));
  return norms;
}

template <class ExecSpace>
impl::OrderEstimate ExponentialAdams<ExecSpace>::best_other_order(const ExecSpace& exec, double h, int order,
                                                                  int available) {
  impl::OrderEstimate best;
  double best_factor = 0.0;
  for (const int q : {order - 1, order + 1}) {
    if (q < 2 || q > available) continue;  // (order 1 has no estimate)
    const double error = attempt(exec, h, q, false, m_weights.estimate_table());
    const double factor = error > 0.0 ? std::pow(error, -1.0 / q) : INFINITY;
    if (factor > best_factor) best = {q, error}, best_factor = factor;
  }
  return best;
}

}  // namespace heom

#endif
