// heom::Rk4: classical fourth-order Runge-Kutta with a fixed step.
#ifndef HEOM_INTEGRATOR_RK4_HPP
#define HEOM_INTEGRATOR_RK4_HPP

#include <cmath>
#include <sstream>

#include "heom/core/error.hpp"
#include "heom/integrator/integrator.hpp"
#include "heom/linalg/vector_ops.hpp"

namespace heom {

/// Steps of options.step; an interval up to a limit that is not a whole number of steps is split
/// into equal steps no longer than options.step (so output times are hit exactly).
template <class ExecSpace>
class Rk4 final : public Integrator<ExecSpace> {
 public:
  using base = Integrator<ExecSpace>;
  using typename base::vector_type;

  Rk4(const ExecSpace& exec, const Generator<ExecSpace>& generator, const IntegratorOptions& options)
      : base(generator), m_step(options.step) {
    this->m_y = this->allocate_state("heom::rk4::y");
    m_acc = this->allocate_derivative("heom::rk4::acc");
    m_tmp = this->allocate_input("heom::rk4::tmp");
    m_k = this->allocate_derivative("heom::rk4::k");
    exec.fence();
  }

  double step(const ExecSpace& exec, double t_limit) override {
    const double t = this->m_time;
    bool lands = false;
    const double h = base::fixed_step("rk4", t, t_limit, m_step, lands);
    using range = typename BackendTraits<ExecSpace>::range_policy;
    const range all(exec, 0, this->owned_size());
    const vector_type& y = this->m_y;

    this->evaluate(exec, t, y, m_k);
    Kokkos::parallel_for("heom::rk4::stage", all, impl::Rk4Update<ExecSpace>{m_acc, m_tmp, y, m_k, h / 6, h / 2, true});
    this->evaluate(exec, t + h / 2, m_tmp, m_k);
    Kokkos::parallel_for("heom::rk4::stage", all,
                         impl::Rk4Update<ExecSpace>{m_acc, m_tmp, y, m_k, h / 3, h / 2, false});
    this->evaluate(exec, t + h / 2, m_tmp, m_k);
    Kokkos::parallel_for("heom::rk4::stage", all, impl::Rk4Update<ExecSpace>{m_acc, m_tmp, y, m_k, h / 3, h, false});
    // (The step's end exactly: t + h may round past a breakpoint the step lands on.)
    this->evaluate(exec, lands ? t_limit : t + h, m_tmp, m_k, Generator<ExecSpace>::Damping::included,
                   TimeSide::before);
    double largest = 0.0;
    Kokkos::parallel_reduce("heom::rk4::finish", all, impl::Rk4Finish<ExecSpace>{y, m_acc, m_k, h / 6},
                            Kokkos::Max<double>(largest));
    exec.fence();
    base::require_finite("rk4", this->global_max(largest), t, h);
    this->m_time = lands ? t_limit : t + h;
    ++this->m_stats.steps;
    return this->m_time;
  }

  bool interpolate(const ExecSpace&, double, const vector_type&) const override { return false; }
  Method method() const override { return Method::rk4; }

 private:
  double m_step;
  vector_type m_acc, m_tmp, m_k;
};

}  // namespace heom

#endif
