// heom::FaberPropagator: exp(L h) y as a Faber (Chebyshev) series on an ellipse around L's spectrum,
// for generators that do not depend on time (method "chebyshev").
//
// exp(L h) y = sum_k a_k F_k(L) y, each term one application of L and a three-term recurrence
// (faber_series.hpp). The number of terms grows as h (a + b) / 2 (the ellipse's half-axes) plus a
// few, so long steps cost about w T applications over a time T, where a time stepper's stability
// holds it at several times that: no error estimate (the cut is known before the step), and every
// output time inside a step is a second sum over the same terms. The ellipse comes from the Ritz values of a few
// Arnoldi steps from the state (the part of the spectrum the state sees) and the largest ADO damping (the far left,
// which Arnoldi misses), its right end a little right of 0 (faber_series.hpp: least_ellipse_around). A term that grows
// past what an enclosed spectrum allows means an eigenvalue lies outside: the step is taken again on a larger ellipse,
// never summed to a wrong answer.
#ifndef HEOM_INTEGRATOR_FABER_PROPAGATOR_HPP
#define HEOM_INTEGRATOR_FABER_PROPAGATOR_HPP

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "heom/core/matrix.hpp"
#include "heom/integrator/faber_series.hpp"
#include "heom/integrator/integrator.hpp"
#include "heom/linalg/vector_ops.hpp"

namespace heom {

namespace impl {

/// One term of the series in one pass: next = (w - c cur) / g - q prev (w = L cur; `next` may be
/// `prev`'s storage), y_new += a next, and each output time's accumulator of the first `dense`
/// elements += its coefficient next. Reduces max |next_i|^2 (non-finite as non_finite_norm): the
/// growth check.
template <class ExecSpace>
struct FaberTerm {
  using types = VectorTypes<ExecSpace>;
  using table = typename BackendTraits<ExecSpace>::template view<const device_complex**>;
  typename types::const_vector w, cur, prev;  // prev: unread where q == 0
  typename types::vector next, sum, accumulators;
  table coefficients;  // [output time][term]
  device_complex centre, a;
  double inverse_scale, q;
  std::int64_t dense;
  int term, outputs;

  KOKKOS_INLINE_FUNCTION void operator()(typename types::index i, double& worst) const {
    device_complex v = (w(i) - centre * cur(i)) * inverse_scale;
    if (q != 0.0) v -= q * prev(i);
    next(i) = v;
    sum(i) += a * v;
    if (i < dense)
      for (int j = 0; j < outputs; ++j) accumulators(j * dense + i) += coefficients(j, term) * v;
    const double r = divergence_measure(v);
    if (r > worst) worst = r;
  }
};

/// FaberTerm as Generator::apply_then's hook (host backends): over each range of ADOs as soon as L
/// of them is written, its largest |term|^2 kept per range (at the range's first ADO) for the
/// growth check.
template <class ExecSpace>
struct FaberTermAfter {
  const FaberTerm<ExecSpace>* term;
  double* range_worst;
  std::int64_t block;

  void operator()(int first, int last) const {
    double worst = 0.0;
    for (std::int64_t i = first * block; i < last * block; ++i) (*term)(i, worst);
    range_worst[first] = worst;
    for (int a = first + 1; a < last; ++a) range_worst[a] = 0.0;
  }
};

/// The series' first term: sum = a y, each accumulator = its coefficient y (first `dense` elements).
template <class ExecSpace>
struct FaberFirstTerm {
  using types = VectorTypes<ExecSpace>;
  typename types::const_vector y;
  typename types::vector sum, accumulators;
  typename FaberTerm<ExecSpace>::table coefficients;
  device_complex a;
  std::int64_t dense;
  int outputs;

  KOKKOS_INLINE_FUNCTION void operator()(typename types::index i) const {
    sum(i) = a * y(i);
    if (i < dense)
      for (int j = 0; j < outputs; ++j) accumulators(j * dense + i) = coefficients(j, 0) * y(i);
  }
};

/// max |v_i|^2 (non-finite as non_finite_norm).
template <class ExecSpace>
struct LargestElement {
  typename VectorTypes<ExecSpace>::const_vector v;
  KOKKOS_INLINE_FUNCTION void operator()(typename VectorTypes<ExecSpace>::index i, double& worst) const {
    const double r = divergence_measure(v(i));
    if (r > worst) worst = r;
  }
};

/// Re(conj(u_i) v_i): the real inner product's terms.
template <class ExecSpace>
struct RealProduct {
  typename VectorTypes<ExecSpace>::const_vector u, v;
  KOKKOS_INLINE_FUNCTION double operator()(typename VectorTypes<ExecSpace>::index i) const {
    return u(i).real() * v(i).real() + u(i).imag() * v(i).imag();
  }
};

/// v *= factor.
template <class ExecSpace>
struct ScaleVector {
  typename VectorTypes<ExecSpace>::vector v;
  double factor;
  KOKKOS_INLINE_FUNCTION void operator()(typename VectorTypes<ExecSpace>::index i) const { v(i) *= factor; }
};

}  // namespace impl

template <class ExecSpace>
class FaberPropagator final : public Integrator<ExecSpace> {
 public:
  using base = Integrator<ExecSpace>;
  using typename base::vector_type;
  using const_vector_type = typename base::const_vector_type;
  using table = typename BackendTraits<ExecSpace>::template view<device_complex**>;

  /// Arnoldi steps of the hull estimate.
  static constexpr int arnoldi_steps = 10;
  /// Terms a step's length aims at, h (a + b) / 2: longer steps spread the series' fixed tail over
  /// more time.
  static constexpr double terms_per_step = 100.0;
  /// A last step up to this much longer than the others ends the run instead of a sliver after it.
  static constexpr double stretch = 1.2;
  /// How far the Ritz values are moved out (faber_series.hpp: least_ellipse_around).
  static constexpr double margin = 0.05;
  /// Largest |F_k(L) y|_max / |y|_max an enclosed spectrum leaves room for (||F_k(L)|| <= 2 for
  /// the numerical range; a missed eigenvalue grows geometrically past it in a few terms).
  static constexpr double growth_limit = 100.0;
  /// Retakes of one step, each on a larger ellipse (to 108 times the size), before it gives up.
  static constexpr int max_enlargements = 12;
  /// Output accumulators kept over a step: their elements, at most this many state vectors or
  /// dense_output_elements, whichever is more (rho's alone take little room, so that many fit).
  static constexpr double dense_output_vectors = 1.0;
  static constexpr double dense_output_elements = 1 << 20;

  FaberPropagator(const ExecSpace& exec, const Generator<ExecSpace>& generator, const IntegratorOptions& options)
      : base(generator), m_options(options), m_sum(this->make_ordered_sum(Partition::ados_per_unit)) {
    if (generator.is_driven())
      throw Error("chebyshev: the model is driven (its generator depends on time); use exp-adams or dopri5");
    this->m_y = this->allocate_state("heom::chebyshev::y");
    m_next = this->allocate_state("heom::chebyshev::term_a");
    m_other = this->allocate_state("heom::chebyshev::term_b");
    m_result = this->allocate_state("heom::chebyshev::result");
    m_applied = this->allocate_derivative("heom::chebyshev::applied");
    m_range_worst.assign(static_cast<std::size_t>(generator.num_ados()), 0.0);
    exec.fence();
  }

  void restart(double t, InputForm form) override {
    base::restart(t, form);
    m_hull_stale = true;  // (a state set from outside may see parts of the spectrum the last did not)
    m_dense_times.clear();
  }

  void expect_outputs(const double* times, std::size_t count, std::int64_t elements) override {
    m_expected = times;
    m_expected_count = count;
    m_expected_elements = std::min<std::int64_t>(std::max<std::int64_t>(elements, 0), this->owned_size());
  }

  double step(const ExecSpace& exec, double t_limit) override {
    const double t = this->m_time;
    base::require_ahead("chebyshev", t, t_limit);
    m_dense_times.clear();
    // (The announced times hold for this step alone: a later step without a run() names none.)
    const Expected expected{std::exchange(m_expected, nullptr), std::exchange(m_expected_count, 0),
                            std::exchange(m_expected_elements, 0)};
    const double largest = std::sqrt(this->global_max(max_norm2(exec, this->m_y)));
    base::require_finite("chebyshev", largest * largest, t, 0.0);
    // (Which output times a step holds is the same on any number of devices, from the elements all
    // of them read at an output time and the whole hierarchy's size; each accumulates its own.)
    const double span_elements = this->global_sum(static_cast<double>(expected.elements));
    if (m_whole_size < 0) m_whole_size = this->global_sum(static_cast<double>(this->owned_size()));
    if (largest == 0.0) {  // (zero stays zero: on to the next output time, which the run reads from y,
                           // or the limit, or a step as long as the last where there is no limit)
      const double end = std::isfinite(t_limit) ? t_limit : t + (m_step > 0.0 ? m_step : 1.0);
      const Span span = outputs_in_step(expected, t, end, t_limit, 0);
      return finish_step(span.end, t_limit, span.end == t_limit, false);
    }
    if (m_hull_stale || !m_ellipse) estimate_hull(exec);
    const double tail = 0.5 * std::min(m_options.rtol, m_options.atol / largest);
    for (int attempt = 0;; ++attempt) {
      const bool lands = t + stretch * m_step >= t_limit;
      const double h = lands ? t_limit - t : m_step;
      const Span span = outputs_in_step(expected, t, lands ? t_limit : t + h, t_limit, span_elements);
      if (sum_series(exec, t, span.end - t, span.outputs, expected.elements, tail, largest))
        return finish_step(span.end, t_limit, lands && span.end == t_limit, true);
      ++this->m_stats.rejected;
      if (attempt == max_enlargements) {
        std::ostringstream msg;
        msg << "chebyshev: the series kept growing in the step from t = " << t
            << " after the spectral ellipse was enlarged " << max_enlargements
            << " times; the generator is unstable or far from normal";
        throw IntegrationError(msg.str(), t);
      }
      if (m_points.empty())
        estimate_hull(exec);  // (an ellipse given by use_ellipse: the method's own estimate first)
      else
        enlarge(attempt);
    }
  }

  bool interpolate(const ExecSpace& exec, double t, const vector_type& out) const override {
    const auto it = std::find(m_dense_times.begin(), m_dense_times.end(), t);
    if (it == m_dense_times.end()) return false;
    const std::int64_t j = it - m_dense_times.begin();
    const std::int64_t count = std::min<std::int64_t>(out.extent(0), m_dense_elements);
    Kokkos::deep_copy(
        exec, Kokkos::subview(out, std::make_pair(std::int64_t(0), count)),
        Kokkos::subview(m_accumulators, std::make_pair(j * m_dense_elements, j * m_dense_elements + count)));
    return true;
  }

  Method method() const override { return Method::chebyshev; }
  /// Generator applications per unit of time its steps would take from the state now held (the
  /// hull estimated first if there is none: arnoldi_steps applications); 0 for a zero state.
  double predicted_rate(const ExecSpace& exec) {
    const double largest = std::sqrt(this->global_max(max_norm2(exec, this->m_y)));
    if (largest == 0.0) return 0.0;
    if (m_hull_stale || !m_ellipse) estimate_hull(exec);
    const double tail = 0.5 * std::min(m_options.rtol, m_options.atol / largest);
    return static_cast<double>(faber_exp_coefficients(*m_ellipse, m_step, tail).size()) / m_step;
  }
  /// The ellipse the steps sum on (none before the first step from a non-zero state).
  const std::optional<SpectralEllipse>& ellipse() const { return m_ellipse; }
  /// The step it aims at on that ellipse.
  double nominal_step() const { return m_step; }
  /// Sums on this ellipse with steps of `step` from now on, instead of its own estimate (a spectrum
  /// known in advance): a term that outgrows it still retakes the step on a larger one. Throws
  /// heom::OptionError for an ellipse that SpectralEllipse::validate refuses, heom::Error for a step
  /// that is not > 0.
  void use_ellipse(const SpectralEllipse& ellipse, double step) {
    require_valid(ellipse.validate(), "chebyshev ellipse");
    if (!(step > 0.0) || !std::isfinite(step)) throw Error("chebyshev: the step must be > 0");
    m_ellipse = ellipse;
    m_step = step;
    m_hull_stale = false;
  }

 protected:
  void save_history(const ExecSpace&, IntegratorState& s, VectorStore&) const override {
    s.scalars = {{"has_ellipse", m_ellipse ? 1.0 : 0.0}, {"hull_stale", m_hull_stale ? 1.0 : 0.0}};
    if (!m_ellipse) return;
    s.scalars["centre_real"] = m_ellipse->center.real();
    s.scalars["centre_imag"] = m_ellipse->center.imag();
    s.scalars["semi_real"] = m_ellipse->semi_real;
    s.scalars["semi_imag"] = m_ellipse->semi_imag;
    s.scalars["step"] = m_step;
  }

  void load_history(const ExecSpace&, const IntegratorState& s, const VectorStore&) override {
    std::optional<SpectralEllipse> ellipse;
    double step = 0.0;
    if (s.scalar("has_ellipse") != 0.0) {
      ellipse = SpectralEllipse{complex(s.scalar("centre_real"), s.scalar("centre_imag")), s.scalar("semi_real"),
                                s.scalar("semi_imag")};
      require_valid(ellipse->validate(), "integrator state: chebyshev ellipse");
      step = s.scalar("step");
      if (!(step > 0.0) || !std::isfinite(step)) throw Error("integrator state: chebyshev step must be > 0");
    }
    m_hull_stale = s.scalar("hull_stale") != 0.0;
    m_ellipse = ellipse;
    m_step = step;
    m_dense_times.clear();
  }

 private:
  using range_policy = typename BackendTraits<ExecSpace>::range_policy;

  /// max |v_i|^2 over the owned elements (non-finite as non_finite_norm), on this device.
  double max_norm2(const ExecSpace& exec, const vector_type& v) const {
    double worst = 0.0;
    Kokkos::parallel_reduce("heom::chebyshev::largest", range_policy(exec, 0, this->owned_size()),
                            impl::LargestElement<ExecSpace>{v}, Kokkos::Max<double>(worst));
    return worst;
  }

  /// Re <u, v> over every device (the real inner product, under which Hermitian ADOs stay Hermitian).
  double dot(const ExecSpace& exec, const vector_type& u, const vector_type& v) const {
    return m_sum(exec, impl::RealProduct<ExecSpace>{u, v});
  }

  void scale(const ExecSpace& exec, const vector_type& v, double factor) const {
    Kokkos::parallel_for("heom::chebyshev::scale", range_policy(exec, 0, this->owned_size()),
                         impl::ScaleVector<ExecSpace>{v, factor});
  }

  /// The hull: Ritz values of arnoldi_steps Arnoldi steps from y in the real inner product (conjugate
  /// pairs: a real Hessenberg matrix; the vectors stay of the state's form), the most damped ADO's
  /// -damping on the real axis, and those of earlier estimates; then the ellipse and the step.
  void estimate_hull(const ExecSpace& exec) {
    std::vector<vector_type> basis;
    basis.push_back(this->allocate_input("heom::chebyshev::arnoldi"));
    Kokkos::deep_copy(exec, basis[0], this->m_y);
    const double first_norm = std::sqrt(dot(exec, basis[0], basis[0]));
    scale(exec, basis[0], 1.0 / first_norm);
    Matrix hessenberg(arnoldi_steps + 1, arnoldi_steps);
    int size = 0;
    for (int j = 0; j < arnoldi_steps; ++j) {
      vector_type w = this->allocate_input("heom::chebyshev::arnoldi");
      this->evaluate(exec, this->m_time, basis[j], w);
      for (int i = 0; i <= j; ++i) {  // (modified Gram-Schmidt)
        const double h = dot(exec, basis[i], w);
        hessenberg(i, j) = h;
        impl::axpy<ExecSpace>(exec, this->owned_size(), device_complex(-h), basis[i], w);
      }
      const double norm = std::sqrt(dot(exec, w, w));
      hessenberg(j + 1, j) = norm;
      size = j + 1;
      double column = norm;
      for (int i = 0; i <= j; ++i) column = std::max(column, std::abs(hessenberg(i, j)));
      if (!(norm > 1e-12 * column)) break;  // (an invariant subspace: its values are exact)
      scale(exec, w, 1.0 / norm);
      basis.push_back(w);
    }
    Matrix square(size, size);
    for (int i = 0; i < size; ++i)
      for (int j = 0; j < size; ++j) square(i, j) = hessenberg(i, j);
    for (const complex& z : eigenvalues(square)) {  // (with each conjugate exactly: a centre on the axis)
      m_points.push_back(z);
      if (z.imag() != 0.0) m_points.push_back(std::conj(z));
    }
    // The damping's extremes: the most damped on the real axis, and where the rates are complex
    // (fermionic leads, underdamped baths) the one furthest off it, with its conjugate.
    complex most_damped = 0.0, most_turning = 0.0;
    for (const complex& d : this->m_generator.damping_values()) {
      if (d.real() > most_damped.real()) most_damped = d;
      if (std::abs(d.imag()) > std::abs(most_turning.imag())) most_turning = d;
    }
    m_points.push_back(-most_damped.real());
    if (most_turning.imag() != 0.0) {
      m_points.push_back(-most_turning);
      m_points.push_back(-std::conj(most_turning));
    }
    m_hull_stale = false;
    choose_ellipse();
  }

  /// The ellipse's right end times the step, R: a step gives up e^R of its accuracy to rounding (the
  /// coefficients scale as that and cancel), for an ellipse that is wide where the spectrum meets
  /// it (fewer terms): R such that the rounding, about 1e-16 e^R max |y|, stays below the series'
  /// tail at max |y| = 1, and 2 <= R <= 20.
  double right_end_times_step() const {
    const double tail = 0.5 * std::min(m_options.rtol, m_options.atol);
    return std::clamp(std::log(tail / 1e-15), 2.0, 20.0);
  }

  /// The ellipse around the points with its right end at R / h (right_end_times_step), and h with
  /// h (a + b) / 2 = terms_per_step on it: a longer step moves the end left and makes the ellipse
  /// larger, so the fixed point is found by iterating from the ellipse of a step of 1 / (its spread).
  void choose_ellipse() {
    double h = 0.0;
    if (m_options.step > 0.0) {
      h = m_options.step;
    } else {
      double spread = 0.0;
      for (const complex& z : m_points) spread = std::max(spread, std::abs(z));
      h = 1.0 / std::max(spread, 1e-300);
      for (int i = 0; i < 8; ++i) {
        const SpectralEllipse e = least_ellipse_around(m_points, margin, right_end_times_step() / h);
        h = 2.0 * terms_per_step / (e.semi_real + e.semi_imag);
      }
    }
    if (m_options.max_step > 0.0) h = std::min(h, m_options.max_step);
    // (A hull reaching right of 0, a growing hierarchy, would lose e^{h Re z} to cancellation: the
    // step stays short enough that this is within the rounding budget, and the growth shows.)
    for (const complex& z : m_points)
      if (z.real() > 0.0) h = std::min(h, right_end_times_step() / z.real());
    m_ellipse = least_ellipse_around(m_points, margin, right_end_times_step() / h);
    m_step = h;
  }

  /// After a term grew: the ellipse wider along both axes, by a quarter the first time and half
  /// again after that, its right end kept (and so the step, whose terms grow in proportion: the
  /// cost per unit time is the same, and a shorter step would pay the series' fixed tail more often).
  void enlarge(int attempt) {
    const double factor = attempt == 0 ? 1.25 : 1.5;
    SpectralEllipse& e = *m_ellipse;
    const double right = e.center.real() + e.semi_real;
    e.semi_real *= factor;
    e.semi_imag *= factor;
    e.center = complex(right - e.semi_real, e.center.imag());
  }

  /// The output times announced for the next step (expect_outputs).
  struct Expected {
    const double* times;
    std::size_t count;
    std::int64_t elements;
  };
  /// A step's end and the output times inside it whose accumulators it keeps.
  struct Span {
    double end;
    std::vector<double> outputs;
  };
  /// The announced output times strictly inside (t, t_new), as many as the accumulators' room holds
  /// of `elements` elements each (none for 0): the step ends on the first that does not fit, or at
  /// t_new.
  Span outputs_in_step(const Expected& expected, double t, double t_new, double t_limit, double elements) const {
    Span span{t_new, {}};
    const double room =
        elements > 0 ? std::max(dense_output_vectors * m_whole_size, dense_output_elements) / elements : 0.0;
    const std::size_t most = static_cast<std::size_t>(std::max(elements > 0 ? 1.0 : 0.0, room));
    for (std::size_t i = 0; i < expected.count && expected.times[i] < t_new; ++i) {
      if (!(expected.times[i] > t)) continue;
      if (span.outputs.size() == most) {
        span.end = std::min(expected.times[i], t_limit);
        break;
      }
      span.outputs.push_back(expected.times[i]);
    }
    return span;
  }

  /// y(t + h) = sum_k a_k F_k(L) y into m_result, and each output time's first `dense_elements`
  /// elements into its accumulator; false (nothing of y changed) when a term outgrew growth_limit.
  bool sum_series(const ExecSpace& exec, double t, double h, const std::vector<double>& outputs,
                  std::int64_t dense_elements, double tail, double largest) {
    const SpectralEllipse& e = *m_ellipse;
    std::vector<complex> final = faber_exp_coefficients(e, h, tail);
    make_exact_at_zero(e, final);
    std::vector<std::vector<complex>> dense;
    std::size_t terms = final.size();
    for (double time : outputs) {
      dense.push_back(faber_exp_coefficients(e, time - t, tail));
      make_exact_at_zero(e, dense.back());
      terms = std::max(terms, dense.back().size());
    }
    const int count = static_cast<int>(outputs.size());
    const std::int64_t elements = count > 0 ? dense_elements : 0;
    upload_dense(exec, dense, terms, elements);
    const FaberRecurrence recurrence(e);
    const std::int64_t owned = this->owned_size();
    const auto coefficient = [&](std::size_t k) { return k < final.size() ? final[k] : complex(0.0); };
    Kokkos::parallel_for("heom::chebyshev::first_term", range_policy(exec, 0, owned),
                         impl::FaberFirstTerm<ExecSpace>{this->m_y, m_result, m_accumulators, m_coefficients,
                                                         to_device(coefficient(0)), elements, count});
    const double limit = growth_limit * growth_limit * largest * largest;
    // F_k(L) y for k >= 1: F_1 in m_next, F_2 in m_other, then each over the one two before it.
    vector_type current = this->m_y, previous = this->m_y, slots[2] = {m_next, m_other};
    for (std::size_t k = 1; k < terms; ++k) {
      const vector_type target = slots[(k + 1) % 2];
      const double q = k == 1 ? 0.0 : k == 2 ? 2.0 * recurrence.q : recurrence.q;
      const impl::FaberTerm<ExecSpace> term{m_applied,
                                            current,
                                            previous,
                                            target,
                                            m_result,
                                            m_accumulators,
                                            m_coefficients,
                                            to_device(recurrence.center),
                                            to_device(coefficient(k)),
                                            1.0 / recurrence.scale,
                                            q,
                                            elements,
                                            static_cast<int>(k),
                                            count};
      double worst = 0.0;
      if constexpr (BackendTraits<ExecSpace>::host_shape) {
        // (In the generator's pass: each ADO's term is formed while L of it is in the cache.)
        this->evaluate_then(
            exec, t, current, m_applied, Generator<ExecSpace>::Damping::included,
            impl::FaberTermAfter<ExecSpace>{&term, m_range_worst.data(), this->m_generator.block_size()});
        exec.fence();
        for (const double w : m_range_worst) worst = std::max(worst, w);
      } else {
        this->evaluate(exec, t, current, m_applied);
        Kokkos::parallel_reduce("heom::chebyshev::term", range_policy(exec, 0, owned), term,
                                Kokkos::Max<double>(worst));
      }
      if (this->global_max(worst) > limit) return false;
      previous = current;
      current = target;
    }
    exec.fence();
    m_dense_times = outputs;
    m_dense_elements = elements;
    return true;
  }

  /// The output coefficients (zero past each one's own length) to the device, and room for the
  /// accumulators.
  void upload_dense(const ExecSpace& exec, const std::vector<std::vector<complex>>& dense, std::size_t terms,
                    std::int64_t elements) {
    const std::size_t count = dense.size();
    if (m_coefficients.extent(0) < count || m_coefficients.extent(1) < terms)
      m_coefficients = impl::allocate<table>(exec, "heom::chebyshev::coefficients", std::max<std::size_t>(count, 1),
                                             std::max(terms, m_coefficients.extent(1)));
    const std::size_t needed = count * static_cast<std::size_t>(elements);
    if (m_accumulators.extent(0) < needed)
      m_accumulators = impl::allocate<vector_type>(exec, "heom::chebyshev::accumulators", needed);
    if (count == 0) return;
    auto host = Kokkos::create_mirror_view(m_coefficients);
    for (std::size_t j = 0; j < count; ++j)
      for (std::size_t k = 0; k < host.extent(1); ++k)
        host(j, k) = k < dense[j].size() ? to_device(dense[j][k]) : device_complex(0.0);
    Kokkos::deep_copy(exec, m_coefficients, host);
  }

  static device_complex to_device(complex z) { return device_complex(z.real(), z.imag()); }

  /// The accepted step: y = m_result where the series was summed, time on to `end`.
  double finish_step(double end, double t_limit, bool lands, bool summed) {
    if (summed) std::swap(this->m_y, m_result);
    this->m_time = lands ? t_limit : end;
    ++this->m_stats.steps;
    return this->m_time;
  }

  IntegratorOptions m_options;
  impl::OrderedSum<ExecSpace> m_sum;
  vector_type m_next, m_other, m_result, m_applied, m_accumulators;
  table m_coefficients;
  std::vector<complex> m_points;  // every Ritz value and damping bound seen
  std::optional<SpectralEllipse> m_ellipse;
  double m_step = 0.0;
  bool m_hull_stale = true;
  const double* m_expected = nullptr;
  std::size_t m_expected_count = 0;
  std::int64_t m_expected_elements = 0;
  double m_whole_size = -1.0;         // the elements of every device's share together (< 0: not yet known)
  std::vector<double> m_range_worst;  // host backends: each range's largest |term|^2 (FaberTermAfter)
  std::vector<double> m_dense_times;  // the output times inside the last step, whose accumulators hold them
  std::int64_t m_dense_elements = 0;
};

}  // namespace heom

#endif
