// heom::ExponentialAdams: variable-step exponential Adams-Bashforth of order up to 5, exact in each
// ADO's damping.
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
// methods. The step size grows by at most 2x per step and is kept when it would change by less
// than 20%, which keeps the history regular.
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
#include "heom/distributed/detail/reductions.hpp"
#include "heom/integrator/detail/step_control.hpp"
#include "heom/integrator/detail/vector_ops.hpp"

namespace heom {

namespace impl {

/// phi_1(z) .. phi_count(z) into phi[0 .. count): phi_k(z) = sum_j z^j / (j + k)!, so that
/// int_0^1 e^{(1 - u) z} u^m du = m! phi_{m+1}(z).
void phi_functions(complex z, int count, complex* phi);

/// ADOs with equal damping share their step weights: the distinct values of D_a = -damping_a and
/// each ADO's class.
struct DampingClasses {
  std::vector<complex> rate;  // D of each class
  std::vector<int> of_ado;    // class of each ADO
};
DampingClasses damping_classes(const std::vector<complex>& damping);

/// The weights of one exponential Adams step, per damping class: with history nodes theta_j =
/// (t_{n-j} - t_n) / h (theta_0 = 0) and `order` p of them, the value at t_n + sigma h is
///   e^{sigma h D} y_n + sum_{j < p} w_j N(y_{n-j}),
///   w_j = h sum_m l_{j,m} sigma^{m+1} m! phi_{m+1}(sigma h D),
/// where l_j(theta) = sum_m l_{j,m} theta^m is the Lagrange polynomial of node j. Row c of `table`
/// (stride columns) holds e^{sigma h D_c}, then w_0 .. w_{p-1} at 1 + j, then the error weights
/// w_j - w_j(order p - 1) at 1 + max_order + j (zero when p = 1).
struct ExponentialAdamsWeights {
  static constexpr int max_order = 5;
  static constexpr int stride = 1 + 2 * max_order;
  static void compute(const std::vector<complex>& rates, double h, double sigma, const double* nodes, int order,
                      complex* table);
};

/// y_new = e^{h D} y + sum_j w_j past_j on element i of ADO a; returns the element's squared scaled
/// error (as ScaledErrorSquare). Order is the number of past derivatives used. blocks() is the host
/// form, the ADO's weights held in registers and the elements in loops the compiler vectorizes;
/// RealWeights (every damping rate real, as for Drude-Lorentz baths) halves its arithmetic.
template <class ExecSpace, int Order, bool RealWeights = false>
struct ExponentialAdamsUpdate {
  using types = VectorTypes<ExecSpace>;
  using weights = ExponentialAdamsWeights;
  typename types::vector y_new;
  typename types::const_vector y;
  Kokkos::Array<typename types::const_vector, weights::max_order> past;
  typename BackendTraits<ExecSpace>::template view<const int*> ado_class;
  typename BackendTraits<ExecSpace>::template view<const device_complex**> w;
  double atol, rtol;
  std::int64_t block_size;  // elements of a block

  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t a, std::int64_t i) const {
    const int c = ado_class(a);
    const device_complex yi = y(i);
    device_complex v = w(c, 0) * yi, e(0.0);
    for (int j = 0; j < Order; ++j) {
      const device_complex pj = past[j](i);
      v += w(c, 1 + j) * pj;
      e += w(c, 1 + weights::max_order + j) * pj;
    }
    y_new(i) = v;
    return error_square(norm2(e), norm2(yi), norm2(v));
  }

  KOKKOS_INLINE_FUNCTION double error_square(double e2, double ay, double an) const {
    const double scale = atol + rtol * impl::sqrt(ay > an ? ay : an);
    const double r2 = e2 / (scale * scale);
    // Comparisons rather than isfinite, and no short circuit, keep the loop vectorizable; NaN fails both.
    return ((r2 <= largest_finite) & (an <= largest_finite)) ? r2 : non_finite_norm * non_finite_norm;
  }
  static constexpr double largest_finite = 1.79e308;

  /// Sum of operator()(a, i) over the elements of ADOs [first, last), on the host.
  double blocks(std::int64_t first, std::int64_t last) const {
#if HEOM_HAS_DOUBLE8
    if constexpr (BackendTraits<ExecSpace>::two_level_kernel)
      if (block_size == 4) return two_level_blocks(first, last);
#endif
    // The squares go into a buffer, summed in 8 fixed partial sums when it fills (a vectorized
    // reduction, the same on any number of threads); the update loop over an ADO's elements then
    // has no reduction and vectorizes.
    constexpr int buffer_size = 256;
    double square[buffer_size];
    double partial[8] = {};
    int fill = 0;
    auto flush = [&]() {
      for (int k = fill; k < buffer_size && k % 8 != 0; ++k) square[k] = 0.0;
      for (int k = 0; k < fill; k += 8)
        for (int q = 0; q < 8; ++q) partial[q] += square[k + q];
      fill = 0;
    };
    for (std::int64_t a = first; a < last; ++a) {
      const int c = ado_class(a);
      double wr[1 + Order], wi[1 + Order], er[Order], ei[Order];
      wr[0] = w(c, 0).real();
      wi[0] = w(c, 0).imag();
      for (int j = 0; j < Order; ++j) {
        wr[1 + j] = w(c, 1 + j).real();
        wi[1 + j] = w(c, 1 + j).imag();
        er[j] = w(c, 1 + weights::max_order + j).real();
        ei[j] = w(c, 1 + weights::max_order + j).imag();
      }
      for (std::int64_t piece = 0; piece < block_size; piece += buffer_size) {
        const int m = static_cast<int>(block_size - piece < buffer_size ? block_size - piece : buffer_size);
        if (fill + m > buffer_size) flush();
        const std::int64_t offset = a * block_size + piece;
        const double* KOKKOS_RESTRICT yp = reinterpret_cast<const double*>(y.data() + offset);
        double* KOKKOS_RESTRICT out = reinterpret_cast<double*>(y_new.data() + offset);
        const double* KOKKOS_RESTRICT pp[Order];
        for (int j = 0; j < Order; ++j) pp[j] = reinterpret_cast<const double*>(past[j].data() + offset);
        double* KOKKOS_RESTRICT sq = square + fill;
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC ivdep  // y_new never aliases y or the past derivatives
#endif
        for (int k = 0; k < m; ++k) {
          const int x = 2 * k;
          const double yr = yp[x], yi = yp[x + 1];
          double vr = wr[0] * yr, vi = wr[0] * yi, dr = 0.0, di = 0.0;
          if constexpr (!RealWeights) {
            vr -= wi[0] * yi;
            vi += wi[0] * yr;
          }
          for (int j = 0; j < Order; ++j) {
            const double pr = pp[j][x], pi = pp[j][x + 1];
            vr += wr[1 + j] * pr;
            vi += wr[1 + j] * pi;
            dr += er[j] * pr;
            di += er[j] * pi;
            if constexpr (!RealWeights) {
              vr -= wi[1 + j] * pi;
              vi += wi[1 + j] * pr;
              dr -= ei[j] * pi;
              di += ei[j] * pr;
            }
          }
          out[x] = vr;
          out[x + 1] = vi;
          sq[k] = error_square(dr * dr + di * di, yr * yr + yi * yi, vr * vr + vi * vi);
        }
        fill += m;
      }
    }
    flush();
    double sum = 0.0;
    for (int q = 0; q < 8; ++q) sum += partial[q];
    return sum;
  }

#if HEOM_HAS_DOUBLE8
  /// blocks() for ADOs of 4 elements, 2x2 blocks or ground columns of 4 levels (AVX-512): a block is one double8,
  /// updated in registers (the general form's loops over 4 elements spend most of their time on each ADO's setup).
  double two_level_blocks(std::int64_t first, std::int64_t last) const {
    const double* KOKKOS_RESTRICT y_all = reinterpret_cast<const double*>(y.data());
    double* KOKKOS_RESTRICT out_all = reinterpret_cast<double*>(y_new.data());
    const double* KOKKOS_RESTRICT past_all[Order];
    for (int j = 0; j < Order; ++j) past_all[j] = reinterpret_cast<const double*>(past[j].data());
    double8 sum = {};
    for (std::int64_t a = first; a < last; ++a) {
      const device_complex* KOKKOS_RESTRICT wc = &w(ado_class(a), 0);
      const double8 x = load8(y_all + 8 * a);
      double8 v = splat8(wc[0].real()) * x, e = {};
      if constexpr (!RealWeights) v += splat8(wc[0].imag()) * times_i8(x);
      for (int j = 0; j < Order; ++j) {
        const double8 p = load8(past_all[j] + 8 * a);
        const device_complex wj = wc[1 + j], ej = wc[1 + weights::max_order + j];
        v += splat8(wj.real()) * p;
        e += splat8(ej.real()) * p;
        if constexpr (!RealWeights) {
          const double8 ip = times_i8(p);
          v += splat8(wj.imag()) * ip;
          e += splat8(ej.imag()) * ip;
        }
      }
      store8(out_all + 8 * a, v);
      const double8 ay = magnitude2(x), an = magnitude2(v);
      sum += error_squares8(magnitude2(e), ay > an ? ay : an);  // larger_magnitude: NaN when |v|^2 is
    }
    // Each pair of lanes holds one element's square twice.
    return (sum[0] + sum[2]) + (sum[4] + sum[6]);
  }

  /// |z|^2 of each element (a pair of lanes) in both of its lanes.
  static double8 magnitude2(const double8& z) {
    const double8 z2 = z * z;
    return z2 + swap_pairs(z2);
  }

  /// error_square lane by lane, for m = larger_magnitude.
  double8 error_squares8(const double8& e2, const double8& m) const {
    double8 root;
    for (int q = 0; q < 8; ++q) root[q] = std::sqrt(m[q]);
    const double8 scale = atol + rtol * root;
    const double8 r2 = e2 / (scale * scale);
    return (r2 <= largest_finite) & (m <= largest_finite) ? r2 : splat8(non_finite_norm * non_finite_norm);
  }
#endif
};

/// The update as Generator::apply_then's `after` (host): ADOs [first, last) are updated as soon as
/// the generator has written their new derivative, by the thread that wrote it, while y's and the
/// derivative's blocks are in its cache. The error sum of each range goes to range_error[first] (0
/// at the range's other ADOs), and rho's (each member's ADO 0) alone to rho_error[member]. (A range
/// never holds two members' ADOs: HostChunks.)
template <class Update>
struct UpdateAfterDerivative {
  const Update* update;
  double* range_error;
  double* rho_error;
  int ados_per_member;

  void operator()(int first, int last) const {
    range_error[first] = update->blocks(first, last);
    for (int a = first + 1; a < last; ++a) range_error[a] = 0.0;
    // (Rewrites rho's values of y_new, the same.)
    if (first % ados_per_member == 0) rho_error[first / ados_per_member] = update->blocks(first, first + 1);
  }
};

/// out = e^{sigma h D} y + sum_j w_j past_j (the dense output), over out's elements.
template <class ExecSpace, int Order>
struct ExponentialAdamsInterpolate {
  using types = VectorTypes<ExecSpace>;
  typename types::vector out;
  typename types::const_vector y;
  Kokkos::Array<typename types::const_vector, ExponentialAdamsWeights::max_order> past;
  typename BackendTraits<ExecSpace>::template view<const int*> ado_class;
  typename BackendTraits<ExecSpace>::template view<const device_complex**> w;
  std::int64_t block_size;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const int c = ado_class(i / block_size);
    device_complex v = w(c, 0) * y(i);
    for (int j = 0; j < Order; ++j) v += w(c, 1 + j) * past[j](i);
    out(i) = v;
  }
};

}  // namespace impl

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
    const impl::DampingClasses classes = impl::damping_classes(generator.global_damping());
    m_rates = classes.rate;
    for (const complex& rate : m_rates) m_real_rates = m_real_rates && rate.imag() == 0.0;
    const std::vector<int> of_owned_ado(classes.of_ado.begin() + generator.first_ado(),
                                        classes.of_ado.begin() + generator.first_ado() + generator.num_ados());
    m_ado_class = impl::to_device<typename BackendTraits<ExecSpace>::template view<const int*>>(
        "heom::exp_adams::ado_class", of_owned_ado, of_owned_ado.size());
    m_step_weights = weight_table("heom::exp_adams::step_weights", m_rates.size(), weights::stride);
    m_dense_weights = weight_table("heom::exp_adams::dense_weights", m_rates.size(), weights::stride);
    m_step_weights_host = Kokkos::create_mirror_view(m_step_weights);
    m_dense_weights_host = Kokkos::create_mirror_view(m_dense_weights);
    m_table.resize(m_rates.size() * weights::stride);

    this->m_y = vector_type("heom::exp_adams::y", generator.vector_size());
    m_y_new = this->allocate_input("heom::exp_adams::y_new");
    for (auto& p : m_past) p = this->allocate_derivative("heom::exp_adams::past_derivative");
    m_block_size = generator.block_size();
    // Error sums over fixed chunks of ADOs: the same steps on any number of threads and devices.
    m_sum = this->make_ordered_sum(Partition::ados_per_unit);
    m_rho_sum = this->make_rho_sum();
    exec.fence();
  }

  void restart(double t) override {
    base::restart(t);
    m_count = 0;
    m_pending = false;
    m_has_step = false;
    m_control.h = 0.0;
  }

  double step(const ExecSpace& exec, double t_limit) override {
    const double t = this->m_time;
    base::require_ahead("exp-adams", t, t_limit);
    // On host backends, once there is a step size, the new derivative
    // and the first trial step are one pass (attempt's with_derivative).
    const bool fused = BackendTraits<ExecSpace>::host_shape && m_control.started() && m_pending;
    if (!fused) {
      record_derivative(exec);
      if (!m_control.started()) m_control.start(m_options, [&]() { return initial_step(exec); });
    }
    const int order = std::min(fused ? m_count + 1 : m_count, max_order);
    double h = m_control.h;
    bool rejected_before = false;
    for (bool first_try = true;; first_try = false) {
      bool lands = false;
      h = base::clip_to_limit(t, h, t_limit, lands);
      base::require_above_floor("exp-adams", h, m_control.floor(m_options), t);
      // (Only now: a step-floor error above leaves the history as it was, to continue from.)
      if (fused && first_try) push_history_slot();
      const double err = attempt(exec, h, order, fused && first_try);
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
        // The estimate is that of the order p - 1 result: it scales as h^p. Small changes are not
        // worth an irregular history; growth is at most 2x per step, and none right after a rejection.
        double factor = err > 0.0 ? 0.9 * std::pow(err, -1.0 / std::max(order, 1)) : 2.0;
        if (rejected_before || (factor >= 1.0 && factor < 1.2)) factor = std::min(factor, 1.0);
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
    if (!m_has_step) return false;
    const double sigma = (t - m_control.t_previous) / m_control.h_previous;
    upload_weights(m_control.h_previous, sigma, m_order_previous, m_dense_weights_host, m_dense_weights, m_dense_key);
    // The state before the last step sits in m_y_new until the next step.
    dispatch(m_order_previous, [&](auto order) {
      impl::ExponentialAdamsInterpolate<ExecSpace, decltype(order)::value> f{
          out, m_y_new, past_views(), m_ado_class, m_dense_weights, m_block_size};
      const std::int64_t count = std::min<std::int64_t>(out.extent(0), this->owned_size());
      Kokkos::parallel_for("heom::exp_adams::interpolate",
                           typename BackendTraits<ExecSpace>::range_policy(exec, 0, count), f);
    });
    return true;
  }

 protected:
  void save_history(const ExecSpace& exec, IntegratorState& s, VectorStore& vectors) const override {
    s.scalars = {{"history", double(m_count)},
                 {"pending", double(m_pending)},
                 {"has_step", double(m_has_step)},
                 {"order_previous", double(m_order_previous)}};
    m_control.save(s.scalars);
    for (int j = 0; j < m_count; ++j) {
      s.scalars["past_time_" + std::to_string(j)] = m_past_time[j];
      vectors.put("past_" + std::to_string(j), this->to_host(exec, m_past[j]));
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
    const int order_previous = whole_number("order_previous", 1, std::max(count, 1));
    const std::size_t owned = static_cast<std::size_t>(this->owned_size());
    std::array<double, max_order> times{};
    for (int j = 0; j < count; ++j) {
      times[j] = s.scalar("past_time_" + std::to_string(j));
      vectors.require("past_" + std::to_string(j), owned);
    }
    const bool has_step = s.scalar("has_step") != 0.0, pending = s.scalar("pending") != 0.0;
    const impl::StepControl control = impl::StepControl::load(s);
    if (has_step) vectors.require("y_previous", owned);
    m_pending = pending;
    m_control = control;
    for (int j = 0; j < count; ++j) this->from_host(exec, vectors.get("past_" + std::to_string(j)), m_past[j]);
    m_past_time = times;
    m_count = count;
    m_has_step = has_step;
    m_order_previous = order_previous;
    if (has_step) this->from_host(exec, vectors.get("y_previous"), m_y_new);
    // (The weight caches are recomputed, to the same bits.)
    m_step_key = WeightKey{};
    m_dense_key = WeightKey{};
  }

 private:
  /// Pushes N(y) at the current time onto the history (once per step, before stepping on).
  void record_derivative(const ExecSpace& exec) {
    if (m_count > 0 && !m_pending) return;
    push_history_slot();
    this->evaluate(exec, this->m_y, m_past[0], Generator<ExecSpace>::Damping::excluded);
  }

  /// Makes the oldest history slot the newest, m_past[0], for N(y) at the current time.
  void push_history_slot() {
    std::rotate(m_past.begin(), m_past.end() - 1, m_past.end());
    std::rotate(m_past_time.begin(), m_past_time.end() - 1, m_past_time.end());
    m_past_time[0] = this->m_time;
    m_count = std::min(m_count + 1, max_order);
    m_pending = false;
    m_has_step = false;
  }

  /// The first step is taken at order 1 without an error estimate, so it is small: sqrt(rtol) of
  /// the time scale |y| / |N(y)| (weighted norms). The order and the step then grow step by step.
  double initial_step(const ExecSpace& exec) {
    const const_vector_type none;
    const double d0 =
        impl::weighted_norm<ExecSpace>(exec, m_sum, this->m_y, none, this->m_y, m_options.atol, m_options.rtol);
    const double d1 =
        impl::weighted_norm<ExecSpace>(exec, m_sum, m_past[0], none, this->m_y, m_options.atol, m_options.rtol);
    return (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * std::sqrt(m_options.rtol) * d0 / d1;
  }

  /// One trial step of size h and the given order from (time(), y): y_new into m_y_new. Returns the
  /// scaled error (<= 1: accept). with_derivative (BackendTraits::host_shape): first N(y) into
  /// m_past[0], in the same pass, each ADO updated right after its derivative is written. Each step
  /// then moves the state and the derivative through the cache once instead of twice.
  double attempt(const ExecSpace& exec, double h, int order, bool with_derivative) {
    upload_weights(h, 1.0, order, m_step_weights_host, m_step_weights, m_step_key);
    // The RMS error of the whole hierarchy and of rho alone (in a batch: the largest member's).
    double all = 0.0, rho = 0.0;
    const bool owns_rho = this->m_generator.owns_rho();
    auto sums = [&](const auto& f) {
      if constexpr (BackendTraits<ExecSpace>::host_shape) {
        if (with_derivative) {
          // Sums per generator range rather than per chunk of ADOs: the same on any number of threads.
          const int members = this->m_generator.members(), per_member = this->m_generator.num_ados() / members;
          m_range_error.resize(this->m_generator.num_ados());
          m_rho_error.assign(members, 0.0);
          const impl::UpdateAfterDerivative<std::decay_t<decltype(f)>> after{&f, m_range_error.data(),
                                                                             m_rho_error.data(), per_member};
          this->evaluate_then(exec, this->m_y, m_past[0], Generator<ExecSpace>::Damping::excluded, after);
          exec.fence();
          if (const Communicator* communicator = this->m_generator.communicator()) {
            // Split hierarchies: every device's range sums, in global ADO order.
            all = impl::rms_norm(impl::fixed_order_sum_over_devices(communicator, m_range_error),
                                 this->m_generator.global_vector_size());
          } else {
            for (int m = 0; m < members; ++m)
              all =
                  std::max(all, impl::rms_norm(impl::fixed_order_sum(m_range_error.data() + m * per_member, per_member),
                                               this->m_generator.member_size()));
          }
          if (owns_rho)
            for (double e : m_rho_error) rho = std::max(rho, impl::rms_norm(e, m_block_size));
          return;
        }
      }
      all = m_sum.rms_blocked(exec, m_block_size, f);
      // rho's share again on its own (it rewrites the same values of y_new).
      if (owns_rho) rho = m_rho_sum.rms_blocked(exec, m_block_size, f);
    };
    dispatch(order, [&](auto p) {
      constexpr int P = decltype(p)::value;
      if (m_real_rates)
        sums(impl::ExponentialAdamsUpdate<ExecSpace, P, true>{m_y_new, this->m_y, past_views(), m_ado_class,
                                                              m_step_weights, m_options.atol, m_options.rtol,
                                                              m_block_size});
      else
        sums(impl::ExponentialAdamsUpdate<ExecSpace, P, false>{m_y_new, this->m_y, past_views(), m_ado_class,
                                                               m_step_weights, m_options.atol, m_options.rtol,
                                                               m_block_size});
    });
    // As in dopri5: rtol and atol bound rho's own error as well as the hierarchy's RMS error.
    return std::max(all, this->from_rho_owner(rho));
  }

  /// The weights of a step (or interpolation) into `device`. `key` remembers what they were last
  /// computed for: steps of constant size reuse them.
  struct WeightKey {
    double h = 0.0, sigma = 0.0;
    int order = 0;
    std::array<double, max_order> nodes{};
    bool operator==(const WeightKey& o) const {
      return h == o.h && sigma == o.sigma && order == o.order && nodes == o.nodes;
    }
  };
  void upload_weights(double h, double sigma, int order, const typename weight_table::HostMirror& host,
                      const weight_table& device, WeightKey& key) const {
    WeightKey wanted{h, sigma, order, {}};
    for (int j = 0; j < order; ++j) wanted.nodes[j] = (m_past_time[j] - m_past_time[0]) / h;
    if (wanted == key) return;
    key = wanted;
    weights::compute(m_rates, h, sigma, wanted.nodes.data(), order, m_table.data());
    for (std::size_t c = 0; c < m_rates.size(); ++c)
      for (int k = 0; k < weights::stride; ++k) {
        const complex z = m_table[c * weights::stride + k];
        host(c, k) = device_complex(z.real(), z.imag());
      }
    Kokkos::deep_copy(device, host);
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
  std::vector<complex> m_rates;  // D of each damping class
  bool m_real_rates = true;      // every D real: real weights
  typename BackendTraits<ExecSpace>::template view<const int*> m_ado_class;
  weight_table m_step_weights, m_dense_weights;
  typename weight_table::HostMirror m_step_weights_host, m_dense_weights_host;
  mutable std::vector<complex> m_table;  // host scratch for the weights
  WeightKey m_step_key;
  mutable WeightKey m_dense_key;
  impl::OrderedSum<ExecSpace> m_sum, m_rho_sum;
  std::vector<double> m_range_error, m_rho_error;  // host: the fused pass's error sums (UpdateAfterDerivative)
  std::int64_t m_block_size = 0;
  vector_type m_y_new;
  std::array<vector_type, max_order> m_past;  // N(y) at m_past_time, newest first
  std::array<double, max_order> m_past_time{};
  int m_count = 0;         // valid entries of m_past
  bool m_pending = false;  // an accepted step's N(y) is not yet in the history
  bool m_has_step = false;
  impl::StepControl m_control;
  int m_order_previous = 1;
};

}  // namespace heom

#endif
