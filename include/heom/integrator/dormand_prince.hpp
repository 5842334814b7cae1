// heom::DormandPrince54: adaptive Dormand-Prince 5(4) with FSAL and 4th-order dense output.
#ifndef HEOM_INTEGRATOR_DORMAND_PRINCE_HPP
#define HEOM_INTEGRATOR_DORMAND_PRINCE_HPP

#include <algorithm>
#include <cmath>
#include <utility>

#include "heom/core/error.hpp"
#include "heom/hierarchy/partition.hpp"
#include "heom/integrator/integrator.hpp"
#include "heom/integrator/detail/step_control.hpp"
#include "heom/linalg/vector_ops.hpp"

namespace heom {

namespace impl {
/// Dormand & Prince, J. Comput. Appl. Math. 6, 19 (1980); dense output as in Hairer, Norsett,
/// Wanner, "Solving ODEs I", and SciPy's RK45.
struct DormandPrinceTableau {
  static constexpr double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
  static constexpr double a21 = 1.0 / 5;
  static constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
  static constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
  static constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561, a54 = -212.0 / 729;
  static constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176,
                          a65 = -5103.0 / 18656;
  static constexpr double b1 = 35.0 / 384, b3 = 500.0 / 1113, b4 = 125.0 / 192, b5 = -2187.0 / 6784, b6 = 11.0 / 84;
  // b - b_hat: the embedded error estimate.
  static constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200,
                          e6 = 22.0 / 525, e7 = -1.0 / 40;
  /// Dense output y(t + theta h) = y + h sum_i k_i sum_p P[i][p] theta^(p+1), rows k1, k3..k7.
  static constexpr double dense[6][4] = {
      {1.0, -8048581381.0 / 2820520608, 8663915743.0 / 2820520608, -12715105075.0 / 11282082432},
      {0.0, 131558114200.0 / 32700410799, -68118460800.0 / 10900136933, 87487479700.0 / 32700410799},
      {0.0, -1754552775.0 / 470086768, 14199869525.0 / 1410260304, -10690763975.0 / 1880347072},
      {0.0, 127303824393.0 / 49829197408, -318862633887.0 / 49829197408, 701980252875.0 / 199316789632},
      {0.0, -282668133.0 / 205662961, 2019193451.0 / 616988883, -1453857185.0 / 822651844},
      {0.0, 40617522.0 / 29380423, -110615467.0 / 29380423, 69997945.0 / 29380423}};
};
}  // namespace impl

template <class ExecSpace>
class DormandPrince54 final : public Integrator<ExecSpace> {
 public:
  using base = Integrator<ExecSpace>;
  using typename base::const_vector_type;
  using typename base::vector_type;
  using tableau = impl::DormandPrinceTableau;

  DormandPrince54(const ExecSpace& exec, const Generator<ExecSpace>& generator, const IntegratorOptions& options)
      : base(generator), m_options(options) {
    this->m_y = this->allocate_state("heom::dopri5::y");
    // Error sums over fixed chunks of ADOs: the same steps on any number of threads and devices.
    m_sum = this->make_ordered_sum(Partition::ados_per_unit);
    m_rho_sum = this->make_rho_sum();
    m_stage = this->allocate_input("heom::dopri5::stage");
    for (int i = 0; i < 6; ++i) m_k[i] = this->allocate_derivative("heom::dopri5::k");
    exec.fence();
  }

  void restart(double t, InputForm form) override {
    base::restart(t, form);
    m_k1_valid = false;
    m_k7_pending = false;
    m_has_step = false;
  }

  double step(const ExecSpace& exec, double t_limit) override {
    const double t = this->m_time;
    base::require_ahead("dopri5", t, t_limit);
    prepare_k1(exec);
    if (!m_control.started()) m_control.start(m_options, [&]() { return initial_step(exec); });
    double h = m_control.h;
    bool rejected_before = false;
    for (;;) {
      bool lands = false;
      if (!rejected_before) h = base::raised_to_resolution(h, t, m_options.max_step);  // (a rejection may go below)
      h = base::clip_to_limit(t, h, t_limit, lands);
      base::require_above_floor("dopri5", h, m_control.floor(m_options), t, lands);
      const double err = attempt(exec, h, lands ? t_limit : t + h);
      if (err <= 1.0) {
        // Accepted: y_new (in m_stage) becomes the state; k7 = f(y_new) (in k2's slot) becomes the
        // next k1 at the start of the next step, so the last step stays available to interpolate.
        m_control.accept(t, h);
        std::swap(this->m_y, m_stage);
        m_k7_pending = true;
        m_has_step = true;
        this->m_time = lands ? t_limit : t + h;
        ++this->m_stats.steps;
        double factor = err > 0.0 ? 0.9 * std::pow(err, -0.2) : 10.0;
        factor = std::min(rejected_before ? 1.0 : 10.0, std::max(0.2, factor));
        // A step clipped to land on t_limit says little about the natural step: keep the larger.
        m_control.set_next(std::max(lands ? m_control.h : 0.0, h * factor), m_options);
        return this->m_time;
      }
      ++this->m_stats.rejected;
      rejected_before = true;
      const double factor = err >= impl::non_finite_norm ? 0.1 : std::max(0.2, 0.9 * std::pow(err, -0.2));
      h *= factor;
      m_control.h = h;
    }
  }

  Method method() const override { return Method::dopri5; }

  bool interpolate(const ExecSpace& exec, double t, const vector_type& out) const override {
    if (!m_has_step) return false;
    const double theta = (t - m_control.t_previous) / m_control.h_previous;
    double powers[4] = {theta, theta * theta, theta * theta * theta, theta * theta * theta * theta};
    Kokkos::Array<double, 6> coeff;
    for (int i = 0; i < 6; ++i) {
      double b = 0.0;
      for (int p = 0; p < 4; ++p) b += tableau::dense[i][p] * powers[p];
      coeff[i] = m_control.h_previous * b;
    }
    // Rows of `dense` are k1, k3, k4, k5, k6, k7; k7 sits in k2's slot until the next step.
    impl::linear_combination<ExecSpace, 6>(exec, std::min<std::int64_t>(out.extent(0), this->owned_size()), out,
                                           m_stage, coeff, {m_k[0], m_k[2], m_k[3], m_k[4], m_k[5], m_k[1]});
    return true;
  }

 protected:
  void save_history(const ExecSpace& exec, IntegratorState& s, VectorStore& vectors) const override {
    s.scalars = {
        {"k1_valid", double(m_k1_valid)}, {"k7_pending", double(m_k7_pending)}, {"has_step", double(m_has_step)}};
    m_control.save(s.scalars);
    // The stages (FSAL's k7 among them) and the state before the last step, which interpolate() reads.
    if (m_k1_valid || m_k7_pending || m_has_step)
      for (int i = 0; i < 6; ++i) vectors.put("k_" + std::to_string(i), this->to_host(exec, m_k[i]));
    if (m_has_step) vectors.put("y_previous", this->to_host(exec, m_stage));
  }

  void load_history(const ExecSpace& exec, const IntegratorState& s, const VectorStore& vectors) override {
    // Everything is checked before anything changes.
    const bool k1_valid = s.scalar("k1_valid") != 0.0, k7_pending = s.scalar("k7_pending") != 0.0,
               has_step = s.scalar("has_step") != 0.0;
    const impl::StepControl control = impl::StepControl::load(s);
    const std::size_t owned = static_cast<std::size_t>(this->owned_size());
    const bool stages = k1_valid || k7_pending || has_step;
    if (stages)
      for (int i = 0; i < 6; ++i) vectors.require("k_" + std::to_string(i), owned);
    if (has_step) vectors.require("y_previous", owned);
    m_control = control;
    m_k1_valid = k1_valid;
    m_k7_pending = k7_pending;
    m_has_step = has_step;
    if (stages)
      for (int i = 0; i < 6; ++i) this->from_host(exec, vectors.get("k_" + std::to_string(i)), m_k[i]);
    if (has_step) this->from_host(exec, vectors.get("y_previous"), m_stage);
  }

 private:
  void prepare_k1(const ExecSpace& exec) {
    if (m_k7_pending) {
      std::swap(m_k[0], m_k[1]);
      m_k7_pending = false;
      m_k1_valid = true;
    }
    if (!m_k1_valid) {
      this->evaluate(exec, this->m_time, this->m_y, m_k[0]);
      m_k1_valid = true;
      m_has_step = false;
    }
  }

  /// Hairer's starting step heuristic (Solving ODEs I, II.4), in the RMS norm.
  double initial_step(const ExecSpace& exec) {
    const double atol = m_options.atol, rtol = m_options.rtol;
    const const_vector_type none;
    const double d0 = impl::weighted_norm<ExecSpace>(exec, m_sum, this->m_y, none, this->m_y, atol, rtol);
    const double d1 = impl::weighted_norm<ExecSpace>(exec, m_sum, m_k[0], none, this->m_y, atol, rtol);
    const double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    impl::linear_combination<ExecSpace, 1>(exec, this->owned_size(), m_stage, this->m_y, {h0}, {m_k[0]});
    this->evaluate(exec, this->m_time + h0, m_stage, m_k[1]);
    const double d2 = impl::weighted_norm<ExecSpace>(exec, m_sum, m_k[1], m_k[0], this->m_y, atol, rtol) / h0;
    const double d = std::max(d1, d2);
    const double h1 = d <= 1e-15 ? std::max(1e-6, h0 * 1e-3) : std::pow(0.01 / d, 0.2);
    return std::min(100.0 * h0, h1);
  }

  /// One trial step of size h from (time(), y) to t_end with k1 = f(y) ready: the stages into k2..k6,
  /// y_new into m_stage, k7 = f(y_new) into k2's slot. Returns the scaled error (<= 1: accept). t_end
  /// is the time the step lands on (t + h may round past a breakpoint it ends on).
  double attempt(const ExecSpace& exec, double h, double t_end) {
    using T = tableau;
    const vector_type& y = this->m_y;
    const double t = this->m_time;
    const std::int64_t owned = this->owned_size();
    auto& k = m_k;
    impl::linear_combination<ExecSpace, 1>(exec, owned, m_stage, y, {h * T::a21}, {k[0]});
    this->evaluate(exec, t + T::c2 * h, m_stage, k[1]);
    impl::linear_combination<ExecSpace, 2>(exec, owned, m_stage, y, {h * T::a31, h * T::a32}, {k[0], k[1]});
    this->evaluate(exec, t + T::c3 * h, m_stage, k[2]);
    impl::linear_combination<ExecSpace, 3>(exec, owned, m_stage, y, {h * T::a41, h * T::a42, h * T::a43},
                                           {k[0], k[1], k[2]});
    this->evaluate(exec, t + T::c4 * h, m_stage, k[3]);
    impl::linear_combination<ExecSpace, 4>(exec, owned, m_stage, y, {h * T::a51, h * T::a52, h * T::a53, h * T::a54},
                                           {k[0], k[1], k[2], k[3]});
    this->evaluate(exec, t + T::c5 * h, m_stage, k[4]);
    impl::linear_combination<ExecSpace, 5>(exec, owned, m_stage, y,
                                           {h * T::a61, h * T::a62, h * T::a63, h * T::a64, h * T::a65},
                                           {k[0], k[1], k[2], k[3], k[4]});
    this->evaluate(exec, t_end, m_stage, k[5], Generator<ExecSpace>::Damping::included, TimeSide::before);
    impl::linear_combination<ExecSpace, 5>(exec, owned, m_stage, y,
                                           {h * T::b1, h * T::b3, h * T::b4, h * T::b5, h * T::b6},
                                           {k[0], k[2], k[3], k[4], k[5]});
    // k7 (FSAL: the next step's k1; Solver restarts the integrator after a breakpoint, where it differs)
    this->evaluate(exec, t_end, m_stage, k[1], Generator<ExecSpace>::Damping::included, TimeSide::before);
    // rtol and atol bound the RMS error of rho itself and that of the whole hierarchy: the RMS over
    // every element alone would let rho's error grow with the size of the hierarchy (rho is n^2 of
    // num_ados n^2 elements), as it does in (Z)VODE.
    const Kokkos::Array<double, 6> e = {h * T::e1, h * T::e3, h * T::e4, h * T::e5, h * T::e6, h * T::e7};
    const double all = impl::scaled_error_norm<ExecSpace, 6>(
        exec, m_sum, y, m_stage, e, {k[0], k[2], k[3], k[4], k[5], k[1]}, m_options.atol, m_options.rtol);
    double rho_error = 0.0;
    if (this->m_generator.owns_rho())  // (m_rho_sum reads rho's elements of each member alone)
      rho_error = impl::scaled_error_norm<ExecSpace, 6>(
          exec, m_rho_sum, y, m_stage, e, {k[0], k[2], k[3], k[4], k[5], k[1]}, m_options.atol, m_options.rtol);
    rho_error = this->from_rho_owner(rho_error);
    return all > rho_error ? all : rho_error;
  }

  IntegratorOptions m_options;
  impl::OrderedSum<ExecSpace> m_sum, m_rho_sum;  // all elements; rho's (ADO 0's) alone
  vector_type m_stage;
  vector_type m_k[6];
  impl::StepControl m_control;
  bool m_k1_valid = false;    // k[0] holds f(y)
  bool m_k7_pending = false;  // k[1] holds f(y) from the last step (swap into k[0] before stepping)
  bool m_has_step = false;    // the last accepted step's data are intact
};

}  // namespace heom

#endif
