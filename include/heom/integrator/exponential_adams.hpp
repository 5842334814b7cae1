// heom::ExponentialAdams: variable-step, variable-order exponential Adams-Bashforth of order up to 5,
// exact in each ADO's damping.
//
// Each ADO's derivative holds the scalar term D_a rho_a with D_a = -sum_k n_k v_k: the damping that
// makes deep hierarchies stiff (up to depth x the largest Matsubara rate). Writing the generator as
// L = D + N, the method integrates
//   y(t_n + s) = e^{s D} y_n + int_0^s e^{(s - u) D} N(y(t_n + u)) du
// with N(y) replaced by the polynomial through its last p values: exact in D (no stability limit
// from the damping, and slaved high tiers are followed at their quasi-static value), one
// evaluation of N per step, and dense output from the same formula. The error estimate is the
// difference between the order-p and order-(p-1) results (both from the same history), in the RMS
// norms of dopri5 (the whole hierarchy and rho alone). Why this method: the study in
// perf_tests/README.md (perf_tests/method_study.py) against explicit and exponential Runge-Kutta
// methods. The step size grows by at most 2x per step, as the largest of the last three error
// estimates allows, only where that is 20% or more, and an accepted step never shrinks the next
// (a rejection does): the history stays regular. The order is chosen as variable-order Adams codes
// choose it (step()).
//
// Where the damping rates are complex, D also holds the system term's diagonal, element by element:
// (A rho + rho B)_ij contains (A_ii + B_jj) rho_ij, -i (H_ii - H_jj) rho_ij for H alone, the same in
// every ADO. Element ij of ADO a then has the rate D_a + omega_ij, the weights are per (damping
// class, element class) and laid out per element, and N(y) excludes omega y (ExcludeSystemDiagonal).
#ifndef HEOM_INTEGRATOR_EXPONENTIAL_ADAMS_HPP
#define HEOM_INTEGRATOR_EXPONENTIAL_ADAMS_HPP

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "heom/core/detail/static_dispatch.hpp"
#include "heom/core/detail/to_device.hpp"
#include "heom/core/detail/double8.hpp"
#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/hierarchy/partition.hpp"
#include "heom/integrator/integrator.hpp"
#include "heom/integrator/options.hpp"
#include "heom/distributed/detail/reductions.hpp"
#include "heom/integrator/detail/exponential_adams_kernels.hpp"
#include "heom/integrator/detail/step_control.hpp"
#include "heom/integrator/detail/vector_ops.hpp"

namespace heom {

template <class ExecSpace>
class ExponentialAdams final : public Integrator<ExecSpace> {
 public:
  using base = Integrator<ExecSpace>;
  using typename base::const_vector_type;
  using typename base::vector_type;
  using weights = impl::ExponentialAdamsWeights;
  static constexpr int max_order = weights::max_order;
  using weight_table = typename BackendTraits<ExecSpace>::template view<device_complex**>;

  ExponentialAdams(const ExecSpace& exec, const Generator<ExecSpace>& generator, const IntegratorOptions& options)
      : base(generator), m_options(options) {
    options.validate();
    // Classes of the whole hierarchy, so that a split one uses the very rates one device does (which
    // rate stands for a class of rates equal to rounding depends on all of them).
    const impl::DampingClasses classes = impl::damping_classes(generator.damping_values(), generator.damping());
    m_rates = classes.rate;
    const impl::ElementClasses elements = impl::element_classes(generator.system_diagonal(), generator.block_size());
    m_damping_classes = m_rates.size();
    // Where the damping rates are complex (fermionic leads, underdamped and fitted baths) the weights
    // are complex anyway, and taking the system's diagonal exactly too costs a step little more: it
    // lifts the stability limit that H's energy differences set on the explicit part. Where they are
    // real (Drude-Lorentz), complex weights would double the update's arithmetic and give up the
    // packed history for fewer steps than that costs (perf_tests/README.md).
    // Its weight tables (step, dense output, and the order estimates' where it fits) then each hold
    // stride weights per element of a block for each damping class. Memory plans count the state
    // vectors, not them: the step's and the dense output's together may take at most as much as the
    // state vectors do, which hierarchies with nearly as many classes as ADOs exceed.
    const bool complex_damping =
        std::any_of(m_rates.begin(), m_rates.end(), [](const complex& rate) { return rate.imag() != 0.0; });
    const bool tables_fit = 2 * weights::stride * m_rates.size() <=
                            static_cast<std::size_t>(state_vectors(Method::exp_adams, false)) * generator.total_ados();
    if (complex_damping && tables_fit && !elements.rate.empty()) {
      // Weights are computed per (damping class, element class) and laid out per element.
      m_exact_system_diagonal = true;
      m_element_stride = generator.block_size();
      m_elements_of_class.resize(elements.rate.size());
      std::vector<complex> omega;
      for (int e = 0; e < m_element_stride; ++e) {
        m_elements_of_class[elements.of_element[e]].push_back(e);
        omega.push_back(elements.rate[elements.of_element[e]]);
      }
      std::vector<complex> rates;
      for (const complex& rate : m_rates)
        for (const complex& o : elements.rate) rates.push_back(rate + o);
      m_rates = std::move(rates);
      m_omega = impl::to_device<typename BackendTraits<ExecSpace>::template view<const device_complex*>>(
          exec, "heom::exp_adams::system_diagonal", omega, omega.size());
    }
    for (const complex& rate : m_rates) m_real_rates = m_real_rates && rate.imag() == 0.0;
    m_ado_class = impl::to_device<typename BackendTraits<ExecSpace>::template view<const int*>>(
        exec, "heom::exp_adams::ado_class", classes.of_ado, classes.of_ado.size());
    m_ado_class_host = classes.of_ado;
    const std::size_t columns = weights::stride * static_cast<std::size_t>(m_element_stride);
    const auto weight_cache = [&](const char* label) {
      WeightCache cache;
      cache.device = impl::allocate<weight_table>(exec, label, m_damping_classes, columns);
      cache.host = Kokkos::create_mirror_view(cache.device);
      return cache;
    };
    m_step_weights = weight_cache("heom::exp_adams::step_weights");
    m_dense_weights = weight_cache("heom::exp_adams::dense_weights");
    // The order estimates' own table, where there are estimates (orders 3 and up) and the three
    // tables stay within this device's state vectors' size (else they share the step's: the same
    // weights, so the same results).
    const std::size_t state_elements = static_cast<std::size_t>(state_vectors(Method::exp_adams, false)) *
                                       generator.num_ados() * generator.block_size();
    m_estimates_apart = m_options.max_order >= 3 && 3 * m_damping_classes * columns <= state_elements;
    if (m_estimates_apart) m_estimate_weights = weight_cache("heom::exp_adams::estimate_weights");
    m_table.resize(m_rates.size() * weights::stride);

    this->m_y = this->allocate_state("heom::exp_adams::y");
    m_y_new = this->allocate_input("heom::exp_adams::y_new");
    for (auto& p : m_past) p = this->allocate_derivative("heom::exp_adams::past_derivative");
    m_block_size = generator.block_size();
    m_packing.n = generator.dimension();
    // Error sums over fixed chunks of ADOs: the same steps on any number of threads and devices.
    m_sum = this->make_ordered_sum(Partition::ados_per_unit);
    m_rho_sum = this->make_rho_sum();
    exec.fence();
  }

  void restart(double t) override {
    base::restart(t);
    m_order = m_options.max_order;
    m_steps_at_order = 0;
    m_steps_between_choices = max_order + 1;
    m_count = 0;
    m_pending = false;
    m_has_step = false;
    m_control.h = 0.0;
  }

  double step(const ExecSpace& exec, double t_limit) override {
    const double t = this->m_time;
    base::require_ahead("exp-adams", t, t_limit);
    match_history_format(exec);
    // On host backends, once there is a step size, the new derivative and the first trial step are
    // one pass (attempt's with_derivative); not on a step that chooses the order, whose estimates at
    // the neighbouring orders read N(y) before the update.
    const bool choosing = m_control.started() && m_steps_at_order >= m_steps_between_choices;
    const bool fused = BackendTraits<ExecSpace>::host_shape && m_control.started() && m_pending && !choosing;
    if (!fused) {
      record_derivative(exec);
      if (!m_control.started()) m_control.start(m_options, [&]() { return initial_step(exec); });
    }
    // The history's derivatives (after a restart they build up one per step) and the chosen order.
    const int available = std::min(fused ? m_count + 1 : m_count, m_options.max_order);
    const int order = std::min(available, m_order);
    double h = m_control.h;
    bool rejected_before = false;
    for (bool first_try = true;; first_try = false) {
      bool lands = false;
      if (first_try) h = base::raised_to_resolution(h, t, m_options.max_step);  // (a rejection may go below)
      h = base::clip_to_limit(t, h, t_limit, lands);
      base::require_above_floor("exp-adams", h, m_control.floor(m_options), t, lands);
      // (Only now: a step-floor error above leaves the history as it was, to continue from.)
      if (fused && first_try) push_history_slot();
      // (Before the step's own update: the estimates' passes write y_new too.)
      const OrderEstimate other = choosing && first_try ? best_other_order(exec, h, order, available) : OrderEstimate{};
      const double err = attempt(exec, h, order, fused && first_try, m_step_weights);
      if (err <= 1.0) {
        // Accepted: y_new becomes the state; the old state stays in m_y_new and the history intact
        // until the next step, for interpolate().
        m_control.accept(t, h);
        m_order_previous = order;
        std::swap(this->m_y, m_y_new);
        m_pending = true;
        m_has_step = true;
        this->m_time = lands ? t_limit : t + h;
        ++this->m_stats.steps;
        // The estimate is that of the order p - 1 result: it scales as h^p. Growth follows the largest
        // of the last three accepted estimates: one alone can pass near zero (rho's error of a few
        // populations changes sign as they oscillate) and would double the step into rejections.
        // As in LSODE, an accepted step keeps its size unless the estimate allows 20% more: a step
        // that passed is no reason to shrink the next (a rejection does that), and every change
        // costs an irregular history and new weights (shrinking after each step that passed near the
        // tolerance ratcheted the step down: perf_tests/README.md). Growth is at most 2x per step, and
        // none right after a rejection.
        const double recent = std::max({err, m_recent_errors[0], m_recent_errors[1]});
        m_recent_errors = {err, m_recent_errors[0]};
        double factor = recent > 0.0 ? 0.9 * std::pow(recent, -1.0 / std::max(order, 1)) : 2.0;
        if (rejected_before)
          factor = std::min(factor, 1.0);
        else if (factor < 1.2)
          factor = 1.0;
        ++m_steps_at_order;
        if (choosing && first_try) {
          // Variable-order Adams codes' rule: the order whose estimate allows the longest next step, by
          // 20% at least. Where the explicit part's stability rather than its accuracy holds the step
          // (fermionic leads at loose tolerances) that is a lower order, whose stability region is
          // larger (perf_tests/README.md). The step itself does not grow on a change of order.
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
        }
        factor = std::min(2.0, std::max(0.5, factor));
        // A step clipped to land keeps the natural step.
        m_control.set_next(!lands || h * factor < m_control.h ? h * factor : m_control.h, m_options);
        return this->m_time;
      }
      ++this->m_stats.rejected;
      rejected_before = true;
      h *= err >= impl::non_finite_norm ? 0.1 : std::max(0.2, 0.9 * std::pow(err, -1.0 / std::max(order, 1)));
      m_control.h = h;
    }
  }

  Method method() const override { return Method::exp_adams; }

  bool interpolate(const ExecSpace& exec, double t, const vector_type& out) const override {
    return interpolate_listed(exec, t, out, nullptr);
  }
  bool interpolate_ados(const ExecSpace& exec, double t, const vector_type& out,
                        const typename base::ado_list& ados) const override {
    return interpolate_listed(exec, t, out, &ados);
  }

 protected:
  /// interpolate(), or interpolate_ados() where `ados` is given.
  bool interpolate_listed(const ExecSpace& exec, double t, const vector_type& out,
                          const typename base::ado_list* ados) const {
    if (!m_has_step) return false;
    const double sigma = (t - m_control.t_previous) / m_control.h_previous;
    // (A shorter `out` takes the leading ADOs: rho alone, where the output is rho.)
    const std::int64_t count = std::min<std::int64_t>(out.extent(0), this->owned_size());
    // The weights of the interpolated ADOs' damping classes alone (an output of rho and the currents
    // of many leads needs a few of hundreds).
    std::vector<int> leading;  // the leading ADOs' classes, where `out` holds fewer than all
    if (!ados && count < this->owned_size()) {
      leading.assign(m_ado_class_host.begin(), m_ado_class_host.begin() + (count + m_block_size - 1) / m_block_size);
      ascending_once(leading);
    }
    upload_weights(exec, m_control.h_previous, sigma, m_order_previous, m_dense_weights,
                   ados ? classes_of(*ados) : leading);
    // The state before the last step sits in m_y_new until the next step.
    dispatch(m_order_previous, [&](auto order) {
      impl::ExponentialAdamsInterpolate<ExecSpace, decltype(order)::value> f{
          out, m_y_new, past_views(), m_ado_class, m_dense_weights.device, m_block_size, m_element_stride};
      if constexpr (BackendTraits<ExecSpace>::host_shape) {
        if (ados && m_history_packed) {
          const impl::PackedHistoryInterpolate<ExecSpace, decltype(order)::value> by_ado{f, m_packing};
          const typename base::ado_list listed = *ados;
          Kokkos::parallel_for("heom::exp_adams::interpolate_packed_ados",
                               Kokkos::RangePolicy<ExecSpace>(exec, 0, listed.extent(0)),
                               [=](const int k) { by_ado(listed(k)); });
          return;
        }
      }
      if (ados) {
        Kokkos::parallel_for("heom::exp_adams::interpolate_ados",
                             typename BackendTraits<ExecSpace>::range_policy(exec, 0, ados->extent(0) * m_block_size),
                             impl::InterpolateListed<decltype(f)>{f, *ados});
        return;
      }
      if constexpr (BackendTraits<ExecSpace>::host_shape) {
        if (m_history_packed) {
          Kokkos::parallel_for("heom::exp_adams::interpolate_packed",
                               Kokkos::RangePolicy<ExecSpace>(exec, 0, count / m_block_size),
                               impl::PackedHistoryInterpolate<ExecSpace, decltype(order)::value>{f, m_packing});
          return;
        }
      }
      Kokkos::parallel_for("heom::exp_adams::interpolate",
                           typename BackendTraits<ExecSpace>::range_policy(exec, 0, count), f);
    });
    return true;
  }

  void save_history(const ExecSpace& exec, IntegratorState& s, VectorStore& vectors) const override {
    s.scalars = {{"history", double(m_count)},
                 {"pending", double(m_pending)},
                 {"has_step", double(m_has_step)},
                 {"order_previous", double(m_order_previous)},
                 {"exact_system_diagonal", double(m_exact_system_diagonal)}};
    m_control.save(s.scalars);
    s.scalars["recent_error_0"] = m_recent_errors[0];
    s.scalars["recent_error_1"] = m_recent_errors[1];
    s.scalars["order"] = m_order;
    s.scalars["steps_at_order"] = m_steps_at_order;
    s.scalars["steps_between_choices"] = m_steps_between_choices;
    for (int j = 0; j < m_count; ++j) {
      s.scalars["past_time_" + std::to_string(j)] = m_past_time[j];
      if (j + 1 < m_count) s.scalars["past_step_" + std::to_string(j)] = m_past_step[j];
      vectors.put("past_" + std::to_string(j), whole_history(this->to_host(exec, m_past[j])));
    }
    // The state before the last step, which interpolate() reads.
    if (m_has_step) vectors.put("y_previous", this->to_host(exec, m_y_new));
  }

  void load_history(const ExecSpace& exec, const IntegratorState& s, const VectorStore& vectors) override {
    // Everything is checked before anything changes.
    const auto whole_number = [&](const char* name, int low, int high) {
      const double value = s.scalar(name);
      if (!(value >= low && value <= high && value == std::floor(value)))
        throw Error(std::string("integrator state: ") + name + " is " + std::to_string(value));
      return static_cast<int>(value);
    };
    const int count = whole_number("history", 0, max_order);
    // The history holds N(y) without the system's diagonal where this integrator takes it exactly.
    // A state whose history was saved the other way (by a heom from before the diagonal was exact,
    // which did not record it) cannot continue it: the run goes on from y alone, as from a restart.
    const auto exact = s.scalars.find("exact_system_diagonal");
    if ((exact != s.scalars.end() && exact->second != 0.0) != m_exact_system_diagonal) {
      m_count = 0;
      m_pending = false;
      m_has_step = false;
      m_control = impl::StepControl{};
      m_recent_errors = {};
      m_order = m_options.max_order;
      m_steps_at_order = 0;
      m_steps_between_choices = max_order + 1;
      m_history_packed = false;
      forget_weights();
      return;
    }
    const int order_previous = whole_number("order_previous", 1, std::max(count, 1));
    const std::size_t owned = static_cast<std::size_t>(this->owned_size());
    std::array<double, max_order> times{}, steps{};
    for (int j = 0; j < count; ++j) {
      times[j] = s.scalar("past_time_" + std::to_string(j));
      vectors.require("past_" + std::to_string(j), owned);
    }
    // (A state saved before the steps were kept has their times alone.)
    for (int j = 0; j + 1 < count; ++j) {
      const auto step = s.scalars.find("past_step_" + std::to_string(j));
      steps[j] = step != s.scalars.end() ? step->second : times[j] - times[j + 1];
      if (!(steps[j] > 0.0 && std::isfinite(steps[j])))
        throw Error("integrator state: " +
                    (step != s.scalars.end()
                         ? "past_step_" + std::to_string(j) + " is " + std::to_string(steps[j])
                         : "past_time_" + std::to_string(j + 1) + " is not before past_time_" + std::to_string(j)));
    }
    const bool has_step = s.scalar("has_step") != 0.0, pending = s.scalar("pending") != 0.0;
    const impl::StepControl control = impl::StepControl::load(s);
    // (A state saved before the step control kept recent errors continues as from none.)
    const auto recent_error = [&](const char* name) {
      const auto found = s.scalars.find(name);
      return found != s.scalars.end() ? found->second : 0.0;
    };
    const std::array<double, 2> recent_errors{recent_error("recent_error_0"), recent_error("recent_error_1")};
    // (A state saved before the order was chosen continues at the highest order, choosing from now.)
    const auto selection = [&](const char* name, int fallback, int low, int high) {
      return s.scalars.find(name) != s.scalars.end() ? whole_number(name, low, high) : fallback;
    };
    const int chosen_order = selection("order", m_options.max_order, 1, max_order);
    const int steps_at_order = selection("steps_at_order", 0, 0, 1 << 30);
    const int steps_between_choices =
        selection("steps_between_choices", max_order + 1, 1, max_steps_between_choices + max_order + 1);
    if (has_step && !control.started()) throw Error("integrator state: a last step but no step size");
    if (has_step) vectors.require("y_previous", owned);
    m_pending = pending;
    m_control = control;
    m_recent_errors = recent_errors;
    m_order = std::min(chosen_order, m_options.max_order);
    m_steps_at_order = steps_at_order;
    m_steps_between_choices = steps_between_choices;
    // (Saved whole, and read whole; match_history_format packs it where it pays.)
    m_history_packed = false;
    for (int j = 0; j < count; ++j) this->from_host(exec, vectors.get("past_" + std::to_string(j)), m_past[j]);
    m_past_time = times;
    m_past_step = steps;
    m_count = count;
    m_has_step = has_step;
    m_order_previous = order_previous;
    if (has_step) this->from_host(exec, vectors.get("y_previous"), m_y_new);
    // (The weight caches are recomputed, to the same bits.)
    forget_weights();
  }

 private:
  /// What a weight table was last computed for.
  struct WeightKey {
    double h = 0.0, sigma = 0.0;
    int order = 0;
    std::array<double, max_order> nodes{};
    std::vector<int> classes;  // empty: all
    bool holds(const WeightKey& o) const {
      return h == o.h && sigma == o.sigma && order == o.order && nodes == o.nodes &&
             (classes.empty() || classes == o.classes);
    }
  };
  /// A weight table on the device, its host copy, and what it holds.
  struct WeightCache {
    weight_table device;
    typename weight_table::HostMirror host;
    WeightKey key;
  };

  /// Pushes N(y) at the current time onto the history (once per step, before stepping on).
  void record_derivative(const ExecSpace& exec) {
    if (m_count > 0 && !m_pending) return;
    push_history_slot();
    if constexpr (BackendTraits<ExecSpace>::host_shape) {
      if (m_history_packed) {
        // (m_past[0] is only the vector apply_then checks: the hook takes the blocks.)
        this->evaluate_then(exec, this->m_time, this->m_y, m_past[0], Generator<ExecSpace>::Damping::excluded,
                            impl::PackDerivative{m_past[0].data(), m_packing});
        return;
      }
    }
    this->evaluate(exec, this->m_time, this->m_y, m_past[0], Generator<ExecSpace>::Damping::excluded);
    if (m_exact_system_diagonal)
      Kokkos::parallel_for("heom::exp_adams::exclude_system_diagonal",
                           typename BackendTraits<ExecSpace>::range_policy(exec, 0, this->owned_size()),
                           exclude_system_diagonal());
  }
  impl::ExcludeSystemDiagonal<ExecSpace> exclude_system_diagonal() const {
    return {m_past[0], this->m_y, m_omega, m_block_size};
  }

  /// Whether the derivatives are best kept packed (HermitianPacking): where the generator's Hermitian
  /// host kernel keeps every ADO Hermitian to the bit and hands its blocks over, and real rates keep
  /// the update Hermitian. The step's traffic is then 5.0 KB per ADO instead of 7.1 (n = 7, order 5).
  bool packs_history() const {
    return BackendTraits<ExecSpace>::host_shape && m_real_rates && !m_exact_system_diagonal &&
           this->m_generator.kernel() == GeneratorKernel::hermitian &&
           this->m_generator.dimension() <= impl::HermitianPacking::max_dimension;
  }

  /// Whether the packed update streams the new derivative's slot and fetches the older derivatives as
  /// read once (PackedHistoryUpdate::streams): where a step's data, y, y_new and the packed history,
  /// outgrow the cache.
  bool streams_packed_update() const {
    const double ados = static_cast<double>(this->m_generator.num_ados());
    const double bytes = sizeof(complex) * ados * (2.0 * m_block_size + max_order * m_packing.size());
    return bytes > impl::stream_above_bytes;
  }

  /// Converts the history to the format packs_history() asks for now (it changes with the generator's
  /// kernel, say when the promise of Hermitian input is withdrawn or a whole history was loaded).
  void match_history_format(const ExecSpace& exec) {
    const bool packed = packs_history();
    if (packed == m_history_packed) return;
    std::vector<std::vector<complex>> converted;
    for (int j = 0; j < m_count; ++j) {
      std::vector<complex> host = this->to_host(exec, m_past[j]);
      converted.push_back(packed ? packed_history(host, j) : whole_history(std::move(host)));
    }
    // (Only now, every vector checked: a refusal leaves the history as it was.)
    for (int j = 0; j < m_count; ++j) this->from_host(exec, converted[j], m_past[j]);
    m_history_packed = packed;
  }
  /// Whole history vector j (owned_size() elements, on the host) packed. Throws unless each block is
  /// Hermitian to the bit (the Hermitian kernel's derivatives are): packing keeps one triangle.
  std::vector<complex> packed_history(const std::vector<complex>& whole, int j) const {
    std::vector<complex> packed(whole.size());
    const int n = m_packing.n;
    for (std::int64_t a = 0; a < this->m_generator.num_ados(); ++a) {
      const complex* block = whole.data() + a * m_block_size;
      for (int r = 0; r < n; ++r)
        for (int c = r; c < n; ++c)
          if (block[r * n + c] != std::conj(block[c * n + r]))
            throw Error("integrator state: past derivative " + std::to_string(j) + " of ADO " + std::to_string(a) +
                        " is not Hermitian, which the Hermitian kernel needs");
      impl::PackDerivative{reinterpret_cast<device_complex*>(packed.data()), m_packing}.take_block(
          static_cast<int>(a), reinterpret_cast<const double*>(block));
    }
    return packed;
  }
  /// A history vector (owned_size() elements, on the host) whole: unpacked when m_history_packed.
  std::vector<complex> whole_history(std::vector<complex>&& history) const {
    if (!m_history_packed) return std::move(history);
    std::vector<complex> whole(history.size());
    const impl::UnpackBlocks unpack{reinterpret_cast<const device_complex*>(history.data()),
                                    reinterpret_cast<device_complex*>(whole.data()), m_packing};
    for (int a = 0; a < this->m_generator.num_ados(); ++a) unpack(a);
    return whole;
  }

  /// Makes the oldest history slot the newest, m_past[0], for N(y) at the current time.
  void push_history_slot() {
    std::rotate(m_past.begin(), m_past.end() - 1, m_past.end());
    std::rotate(m_past_time.begin(), m_past_time.end() - 1, m_past_time.end());
    std::rotate(m_past_step.begin(), m_past_step.end() - 1, m_past_step.end());
    // (Pushed after each accepted step: the one from the last entry to this.)
    m_past_step[0] = m_count > 0 ? m_control.h_previous : 0.0;
    m_past_time[0] = this->m_time;
    m_count = std::min(m_count + 1, m_options.max_order);
    m_pending = false;
    m_has_step = false;
  }

  /// The first step is taken at order 1 without an error estimate, so it is small: sqrt(rtol) of
  /// the time scale |y| / |N(y)| (weighted norms). The order and the step then grow step by step.
  double initial_step(const ExecSpace& exec) {
    const const_vector_type none;
    const double d0 =
        impl::weighted_norm<ExecSpace>(exec, m_sum, this->m_y, none, this->m_y, m_options.atol, m_options.rtol);
    const_vector_type derivative = m_past[0];
    if constexpr (BackendTraits<ExecSpace>::host_shape) {
      if (m_history_packed) {  // whole into m_y_new, free until the first step
        Kokkos::parallel_for("heom::exp_adams::unpack",
                             Kokkos::RangePolicy<ExecSpace>(exec, 0, this->m_generator.num_ados()),
                             impl::UnpackBlocks{m_past[0].data(), m_y_new.data(), m_packing});
        derivative = m_y_new;
      }
    }
    const double d1 =
        impl::weighted_norm<ExecSpace>(exec, m_sum, derivative, none, this->m_y, m_options.atol, m_options.rtol);
    return (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * std::sqrt(m_options.rtol) * d0 / d1;
  }

  /// One trial step of size h and the given order from (time(), y): y_new into m_y_new. Returns the
  /// scaled error (<= 1: accept). with_derivative (BackendTraits::host_shape): first N(y) into
  /// m_past[0] (packed where m_history_packed), in the same pass, each ADO updated right after its
  /// derivative is written. Each step then moves the state and the derivative through the cache once
  /// instead of twice.
  double attempt(const ExecSpace& exec, double h, int order, bool with_derivative, WeightCache& cache) {
    upload_weights(exec, h, 1.0, order, cache);
    const Kokkos::Array<double, max_order> difference = weights::differences(cache.key.nodes.data(), order);
    const weight_table step_weights = cache.device;
    // The RMS error of the whole hierarchy and of rho alone (in a batch: the largest member's).
    double all = 0.0, rho = 0.0;
    const bool owns_rho = this->m_generator.owns_rho();
    const int members = this->m_generator.members(), per_member = this->m_generator.num_ados() / members;
    auto clear_ranges = [&]() {
      m_range_error.resize(this->m_generator.num_ados());
      m_rho_error.assign(members, 0.0);
    };
    // Sums per generator range (range_error[first]) rather than per chunk of ADOs: the same on any
    // number of threads.
    auto sum_ranges = [&]() {
      if (const Communicator* communicator = this->m_generator.communicator()) {
        // Split hierarchies: every device's range sums, in global ADO order.
        all = impl::rms_norm(impl::fixed_order_sum_over_devices(communicator, m_range_error),
                             this->m_generator.global_vector_size());
      } else {
        for (int m = 0; m < members; ++m)
          all = std::max(all, impl::rms_norm(impl::fixed_order_sum(m_range_error.data() + m * per_member, per_member),
                                             this->m_generator.member_size()));
      }
      if (owns_rho)
        for (double e : m_rho_error) rho = std::max(rho, impl::rms_norm(e, m_block_size));
    };
    auto sums = [&](const auto& f) {
      if constexpr (BackendTraits<ExecSpace>::host_shape) {
        if (with_derivative) {
          clear_ranges();
          const impl::ExcludeSystemDiagonal<ExecSpace> exclude = exclude_system_diagonal();
          const impl::UpdateAfterDerivative<std::decay_t<decltype(f)>> after{
              &f, m_range_error.data(), m_rho_error.data(), per_member, m_exact_system_diagonal ? &exclude : nullptr};
          this->evaluate_then(exec, this->m_time, this->m_y, m_past[0], Generator<ExecSpace>::Damping::excluded, after);
          exec.fence();
          sum_ranges();
          return;
        }
      }
      all = m_sum.rms_blocked(exec, m_block_size, f);
      // rho's share again on its own (it rewrites the same values of y_new).
      if (owns_rho) rho = m_rho_sum.rms_blocked(exec, m_block_size, f);
    };
    dispatch(order, [&](auto p) {
      constexpr int P = decltype(p)::value;
      if constexpr (BackendTraits<ExecSpace>::host_shape) {
        if (m_history_packed) {
          // Error sums per ADO, as the Hermitian kernel's ranges are.
          clear_ranges();
          const impl::PackedHistoryUpdate<ExecSpace, P> update{
              {m_y_new, this->m_y, past_views(), m_ado_class, step_weights, m_options.atol, m_options.rtol,
               m_block_size, 1, difference},
              m_past[0].data(),
              m_packing,
              streams_packed_update()};
          const impl::PackedUpdateAfterDerivative<decltype(update)> hook{&update, m_range_error.data(),
                                                                         m_rho_error.data(), per_member};
          if (with_derivative)  // (m_past[0] is only the vector apply_then checks: the hook takes the blocks)
            this->evaluate_then(exec, this->m_time, this->m_y, m_past[0], Generator<ExecSpace>::Damping::excluded,
                                hook);
          else {
            const impl::PackedUpdateAll<decltype(update)> update_all(hook, this->m_generator.num_ados(),
                                                                     exec.concurrency());
            Kokkos::parallel_for("heom::exp_adams::update_packed",
                                 Kokkos::RangePolicy<ExecSpace>(exec, 0, update_all.chunks()), update_all);
          }
          exec.fence();
          sum_ranges();
          return;
        }
      }
      if (m_real_rates)
        sums(impl::ExponentialAdamsUpdate<ExecSpace, P, true>{m_y_new, this->m_y, past_views(), m_ado_class,
                                                              step_weights, m_options.atol, m_options.rtol,
                                                              m_block_size, m_element_stride, difference});
      else
        sums(impl::ExponentialAdamsUpdate<ExecSpace, P, false>{m_y_new, this->m_y, past_views(), m_ado_class,
                                                               step_weights, m_options.atol, m_options.rtol,
                                                               m_block_size, m_element_stride, difference});
    });
    // As in dopri5: rtol and atol bound rho's own error as well as the hierarchy's RMS error.
    return std::max(all, this->from_rho_owner(rho));
  }

  /// The neighbouring order (p - 1 or p + 1, within 2 .. available) whose error estimate for a step
  /// of size h allows the longer next step, and that estimate (scaled, as attempt's); order 0 when
  /// neither exists. Each estimate is an update pass of that order into y_new.
  struct OrderEstimate {
    int order = 0;
    double error = 0.0;
  };
  OrderEstimate best_other_order(const ExecSpace& exec, double h, int order, int available) {
    OrderEstimate best;
    double best_factor = 0.0;
    for (const int q : {order - 1, order + 1}) {
      if (q < 2 || q > available) continue;  // (order 1 has no estimate)
      const double error = attempt(exec, h, q, false, m_estimates_apart ? m_estimate_weights : m_step_weights);
      const double factor = error > 0.0 ? std::pow(error, -1.0 / q) : INFINITY;
      if (factor > best_factor) best = {q, error}, best_factor = factor;
    }
    return best;
  }

  /// Sorts `classes` and drops repeats: the form upload_weights takes.
  static void ascending_once(std::vector<int>& classes) {
    std::sort(classes.begin(), classes.end());
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  }

  /// The damping classes of the ADOs listed (ascending, each once), worked out once per list: the
  /// solver lists the same ADOs at every output time (held here, its address is not reused for
  /// another list).
  const std::vector<int>& classes_of(const typename base::ado_list& ados) const {
    if (ados.data() == m_listed_ados.data() && ados.extent(0) == m_listed_ados.extent(0)) return m_listed_classes;
    const auto listed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ados);
    m_listed_classes.clear();
    for (std::size_t k = 0; k < listed.extent(0); ++k) m_listed_classes.push_back(m_ado_class_host[listed(k)]);
    ascending_once(m_listed_classes);
    m_listed_ados = ados;
    return m_listed_classes;
  }

  /// The weights of a step (or interpolation) into `cache`, of the damping classes listed in
  /// `classes` (ascending) or, where it is empty, of all. The cache's key remembers what they were last
  /// computed for: steps of constant size reuse them.
  void upload_weights(const ExecSpace& exec, double h, double sigma, int order, WeightCache& cache,
                      const std::vector<int>& classes = {}) const {
    WeightKey& key = cache.key;
    const auto& host = cache.host;
    const auto& device = cache.device;
    WeightKey wanted{h, sigma, order, {}, classes};
    for (int j = 1; j < order; ++j) wanted.nodes[j] = wanted.nodes[j - 1] - m_past_step[j - 1] / h;
    if (key.holds(wanted)) return;
    key = std::move(wanted);
    const double* nodes = key.nodes.data();
    const std::size_t Q = m_exact_system_diagonal ? m_elements_of_class.size() : 1;
    // Rows [first, last) of the table, each on its own (the same bits however they are shared out).
    const auto rows = [&, rates = m_rates.data(), table = m_table.data()](std::size_t first, std::size_t last) {
      weights::compute(rates + first, last - first, h, sigma, nodes, order, table + first * weights::stride);
      // Row r holds damping class r / Q's weights for element class r % Q: its elements' columns.
      // (Locals: the stores must not make the compiler reload the element lists.)
      const int element_stride = m_element_stride;
      for (std::size_t r = first; r < last; ++r) {
        const complex* from = table + r * weights::stride;
        device_complex* to = &host(r / Q, 0);
        if (!m_exact_system_diagonal) {
          for (int k = 0; k < weights::stride; ++k) to[k] = device_complex(from[k].real(), from[k].imag());
          continue;
        }
        const int* elements = m_elements_of_class[r % Q].data();
        const int count = static_cast<int>(m_elements_of_class[r % Q].size());
        for (int k = 0; k < weights::stride; ++k) {
          const device_complex value(from[k].real(), from[k].imag());
          for (int i = 0; i < count; ++i) to[k * element_stride + elements[i]] = value;
        }
      }
    };
    // The rows wanted, as ranges [first, last): all, or the listed classes' (Q rows each).
    std::vector<std::pair<std::size_t, std::size_t>> wanted_rows;
    if (classes.empty()) wanted_rows.emplace_back(0, m_rates.size());
    for (const int c : classes) {
      const std::size_t first = c * Q;
      if (!wanted_rows.empty() && wanted_rows.back().second == first)
        wanted_rows.back().second += Q;
      else
        wanted_rows.emplace_back(first, first + Q);
    }
    // A row costs about as much as a fork and join of the host's threads: thousands of them (a row
    // per damping class and element class) are worth sharing out, in chunks of rows.
    constexpr std::size_t rows_per_chunk = 64;
    std::vector<std::pair<std::size_t, std::size_t>> chunks;
    for (const auto& [first, last] : wanted_rows)
      for (std::size_t r = first; r < last; r += rows_per_chunk)
        chunks.emplace_back(r, std::min(last, r + rows_per_chunk));
    if constexpr (BackendTraits<ExecSpace>::host_shape) {
      if (chunks.size() > 1 && exec.concurrency() > 1) {
        Kokkos::parallel_for("heom::exp_adams::weights", Kokkos::RangePolicy<ExecSpace>(exec, 0, chunks.size()),
                             [&](const std::size_t chunk) { rows(chunks[chunk].first, chunks[chunk].second); });
        exec.fence();
        Kokkos::deep_copy(exec, device, host);
        return;
      }
    }
    for (const auto& [first, last] : chunks) rows(first, last);
    // (Ordered after the kernels that read the old weights. The host table is rewritten only at its
    // next upload, after the step's error norm, or the solver's copy of the output to the host, has
    // fenced exec: no copy from it is still pending then.)
    Kokkos::deep_copy(exec, device, host);
  }

  /// The weight tables are computed afresh at their next use.
  void forget_weights() {
    m_step_weights.key = WeightKey{};
    m_estimate_weights.key = WeightKey{};
    m_dense_weights.key = WeightKey{};
  }

  Kokkos::Array<const_vector_type, max_order> past_views() const {
    Kokkos::Array<const_vector_type, max_order> p;
    for (int j = 0; j < max_order; ++j) p[j] = m_past[j];
    return p;
  }

  /// f(std::integral_constant<int, order>) for order 1 .. max_order.
  template <class F>
  static void dispatch(int order, const F& f) {
    static_assert(max_order == 5, "dispatch lists the orders up to 5: add the new orders");
    impl::static_dispatch<5, 1, 2, 3, 4>(order, f);
  }

  IntegratorOptions m_options;
  std::vector<complex> m_rates;  // D of each damping class (+ omega of each element class)
  bool m_real_rates = true;      // every rate real: real weights
  std::size_t m_damping_classes = 0;
  // The system's diagonal taken exactly (impl::element_classes): whether it is, the elements of each
  // element class, the weight tables' element stride (1, or block_size: weights per element),
  // and each element's omega.
  bool m_exact_system_diagonal = false;
  std::vector<std::vector<int>> m_elements_of_class;
  int m_element_stride = 1;
  typename BackendTraits<ExecSpace>::template view<const device_complex*> m_omega;
  typename BackendTraits<ExecSpace>::template view<const int*> m_ado_class;
  std::vector<int> m_ado_class_host;              // (the listed ADOs' classes of an interpolation)
  mutable typename base::ado_list m_listed_ados;  // the last list classes_of() saw, and its classes
  mutable std::vector<int> m_listed_classes;
  // The step's weights; those of the order estimates, kept apart (m_estimates_apart) so that an
  // estimate does not evict the step's; the dense output's.
  WeightCache m_step_weights;
  WeightCache m_estimate_weights;
  bool m_estimates_apart = false;
  mutable WeightCache m_dense_weights;
  mutable std::vector<complex> m_table;  // host scratch for the weights
  impl::OrderedSum<ExecSpace> m_sum, m_rho_sum;
  std::vector<double> m_range_error, m_rho_error;  // host: error sums per range (the fused pass, the packed update)
  std::int64_t m_block_size = 0;
  vector_type m_y_new;
  std::array<vector_type, max_order> m_past;  // N(y) at m_past_time, newest first (whole or packed)
  std::array<double, max_order> m_past_time{};
  // The steps between them as taken, m_past_time[j] - m_past_time[j + 1] up to rounding: the weights'
  // nodes come from these, so that steps of one size give whole-number nodes and reuse the weights
  // (the times' differences differ from the steps in their last bits).
  std::array<double, max_order> m_past_step{};
  std::array<double, 2> m_recent_errors{};  // the scaled errors of the last two accepted steps, newest first
  int m_count = 0;                          // valid entries of m_past
  bool m_history_packed = false;            // m_past's format now (packs_history: the one wanted)
  impl::HermitianPacking m_packing;
  bool m_pending = false;  // an accepted step's N(y) is not yet in the history
  bool m_has_step = false;
  impl::StepControl m_control;
  int m_order_previous = 1;
  // Order selection: the order chosen (steps take it once the history holds as many derivatives),
  // accepted steps since it was last chosen, and how many the next choice waits for.
  static constexpr int max_steps_between_choices = 32;
  int m_order = max_order;
  int m_steps_at_order = 0;
  int m_steps_between_choices = max_order + 1;
};

}  // namespace heom

#endif
