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
// perf_tests/history.md (perf_tests/method_study.py) against explicit and exponential Runge-Kutta
// methods. The step size grows by at most 2x per step, as the largest of the last three error
// estimates allows, only where that is 20% or more, and an accepted step never shrinks the next
// (a rejection does): the history stays regular. The order is chosen as variable-order Adams codes
// choose it (impl::ExpAdamsControl).
//
// Where the damping rates are complex, D also holds the system term's diagonal, element by element:
// (A rho + rho B)_ij contains (A_ii + B_jj) rho_ij, -i (H_ii - H_jj) rho_ij for H alone, the same in
// every ADO. Element ij of ADO a then has the rate D_a + omega_ij, the weights are per (damping
// class, element class) and laid out per element, and N(y) excludes omega y (ExcludeSystemDiagonal).
//
// Its parts: the weight tables (impl::ExpAdamsWeights), the past derivatives (impl::ExpAdamsHistory)
// and the step and order controller (impl::ExpAdamsControl); this class steps, estimates the error and
// interpolates with them.
#ifndef HEOM_INTEGRATOR_EXPONENTIAL_ADAMS_HPP
#define HEOM_INTEGRATOR_EXPONENTIAL_ADAMS_HPP

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/static_dispatch.hpp"
#include "heom/distributed/reductions.hpp"
#include "heom/hierarchy/partition.hpp"
#include "heom/integrator/detail/exp_adams_control.hpp"
#include "heom/integrator/detail/exp_adams_history.hpp"
#include "heom/integrator/detail/exp_adams_weights.hpp"
#include "heom/integrator/detail/exponential_adams_kernels.hpp"
#include "heom/integrator/integrator.hpp"
#include "heom/integrator/options.hpp"
#include "heom/linalg/vector_ops.hpp"

namespace heom {

template <class ExecSpace>
class ExponentialAdams final : public Integrator<ExecSpace> {
 public:
  using base = Integrator<ExecSpace>;
  using typename base::const_vector_type;
  using typename base::vector_type;
  using weights = impl::ExponentialAdamsWeights;
  static constexpr int max_order = weights::max_order;

  /// (Options as make_integrator checked them.)
  ExponentialAdams(const ExecSpace& exec, const Generator<ExecSpace>& generator, const IntegratorOptions& options)
      : base(generator),
        m_options(options),
        m_weights(exec, generator, options),
        m_history(generator, options.max_order),
        m_control(options),
        // Error sums over fixed chunks of ADOs: the same steps on any number of threads and devices.
        m_sum(this->make_ordered_sum(Partition::ados_per_unit)),
        m_rho_sum(this->make_rho_sum()) {
    this->m_y = this->allocate_state("heom::exp_adams::y");
    m_y_new = this->allocate_input("heom::exp_adams::y_new");
    exec.fence();
  }

  void restart(double t, InputForm form) override {
    base::restart(t, form);
    reset();
  }

  double step(const ExecSpace& exec, double t_limit) override;
  Method method() const override { return Method::exp_adams; }

  bool interpolate(const ExecSpace& exec, double t, const vector_type& out) const override {
    return interpolate_listed(exec, t, out, nullptr);
  }
  bool interpolate_ados(const ExecSpace& exec, double t, const vector_type& out,
                        const typename base::ado_list& ados) const override {
    return interpolate_listed(exec, t, out, &ados);
  }

 protected:
  void save_history(const ExecSpace& exec, IntegratorState& s, VectorStore& vectors) const override;
  void load_history(const ExecSpace& exec, const IntegratorState& s, const VectorStore& vectors) override;

 private:
  using Table = typename impl::ExpAdamsWeights<ExecSpace>::Table;
  /// The RMS error of a trial step: of the whole hierarchy, and of rho alone (in a batch: the largest
  /// member's).
  struct Norms {
    double all = 0.0, rho = 0.0;
  };

  /// The one reset (a restart; a saved state whose history cannot continue): the history and the
  /// controller's step size and order go; the recent error estimates stay (ExpAdamsControl::reset).
  void reset() {
    m_history.clear();
    m_control.reset();
  }
  /// interpolate(), or interpolate_ados() where `ados` is given.
  bool interpolate_listed(const ExecSpace& exec, double t, const vector_type& out,
                          const typename base::ado_list* ados) const;
  /// Pushes N(y) at the current time onto the history (once per step, before stepping on).
  void record_derivative(const ExecSpace& exec);
  impl::ExcludeSystemDiagonal<ExecSpace> exclude_system_diagonal() const {
    return {m_history.newest(), this->m_y, m_weights.omega(), block_size()};
  }
  /// Whether the derivatives are best kept packed (HermitianPacking): where the generator's Hermitian
  /// host kernel keeps every ADO Hermitian to the bit and hands its blocks over, and real rates keep
  /// the update Hermitian. The step's traffic is then 5.0 KB per ADO instead of 7.1 (n = 7, order 5).
  bool packs_history() const {
    return BackendTraits<ExecSpace>::host_shape && m_weights.real_rates() && !m_weights.exact_system_diagonal() &&
           this->m_generator.kernel(this->m_form) == GeneratorKernel::hermitian &&
           this->m_generator.dimension() <= impl::HermitianPacking::max_dimension;
  }
  /// Whether the packed update streams the new derivative's slot and fetches the older derivatives as
  /// read once (PackedHistoryUpdate::streams): where a step's data, y, y_new and the packed history,
  /// outgrow the cache.
  bool streams_packed_update() const {
    const double ados = static_cast<double>(this->m_generator.num_ados());
    const double bytes = sizeof(complex) * ados * (2.0 * block_size() + max_order * m_history.packing().size());
    return bytes > impl::stream_above_bytes;
  }
  /// The first step is taken at order 1 without an error estimate, so it is small: sqrt(rtol) of
  /// the time scale |y| / |N(y)| (weighted norms). The order and the step then grow step by step.
  double initial_step(const ExecSpace& exec);
  /// One trial step of size h and the given order from (time(), y): y_new into m_y_new. Returns the
  /// scaled error (<= 1: accept). with_derivative (BackendTraits::host_shape): first N(y) into the
  /// history (packed where it is), in the same pass, each ADO updated right after its derivative is
  /// written. Each step then moves the state and the derivative through the cache once instead of twice.
  double attempt(const ExecSpace& exec, double h, int order, bool with_derivative, Table& table);
  /// The update from a packed history (host backends), per ADO, with the error sums per ADO.
  template <int Order>
  Norms update_packed(const ExecSpace& exec, const Table& table, const Kokkos::Array<double, max_order>& difference,
                      bool with_derivative);
  /// The update `f` (ExponentialAdamsUpdate) over every element, with its error norms.
  template <class Update>
  Norms update(const ExecSpace& exec, const Update& f, bool with_derivative);
  /// Clears the error sums per range and per member's rho, before a pass that fills them.
  void clear_ranges() {
    m_range_error.resize(this->m_generator.num_ados());
    m_rho_error.assign(this->m_generator.members(), 0.0);
  }
  /// The norms from the sums per generator range (range_error[first]) rather than per chunk of ADOs:
  /// the same on any number of threads.
  Norms range_norms() const;
  /// The neighbouring order (p - 1 or p + 1, within 2 .. available) whose error estimate for a step
  /// of size h allows the longer next step, and that estimate (scaled, as attempt's). Each estimate is
  /// an update pass of that order into y_new.
  impl::OrderEstimate best_other_order(const ExecSpace& exec, double h, int order, int available);

  int block_size() const { return this->m_generator.block_size(); }
  /// f(std::integral_constant<int, order>) for order 1 .. max_order.
  template <class F>
  static void dispatch(int order, const F& f) {
    static_assert(max_order == 5, "dispatch lists the orders up to 5: add the new orders");
    impl::static_dispatch<5, 1, 2, 3, 4>(order, f);
  }

  IntegratorOptions m_options;
  impl::ExpAdamsWeights<ExecSpace> m_weights;
  impl::ExpAdamsHistory<ExecSpace> m_history;
  impl::ExpAdamsControl m_control;
  impl::OrderedSum<ExecSpace> m_sum, m_rho_sum;
  std::vector<double> m_range_error, m_rho_error;  // host: error sums per range (the fused pass, the packed update)
  // The trial step's result; after an accepted step, the state before it (which interpolate() reads)
  // until the next step.
  vector_type m_y_new;
};

}  // namespace heom

#include "heom/integrator/detail/exponential_adams_definitions.hpp"

#endif
