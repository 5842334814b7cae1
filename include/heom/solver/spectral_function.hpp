// The spectral function (density of states) of a fermionic level d of the system: the anticommutator
// correlation <{d(t0 + tau), d^dagger(t0)}> propagated with the odd-parity hierarchy.
#ifndef HEOM_SOLVER_SPECTRAL_FUNCTION_HPP
#define HEOM_SOLVER_SPECTRAL_FUNCTION_HPP

#include <functional>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/generator/options.hpp"
#include "heom/solver/solver.hpp"

namespace heom {

/// C(tau) = <{d(t0 + tau), d^dagger(t0)}> = <d(t0 + tau) d^dagger(t0)> + <d^dagger(t0) d(t0 + tau)> for
/// each delay tau (ascending, >= 0), from the solver's state at its current time t0 (a steady state,
/// Solver::solve_steady_state, for the stationary one). The retarded Green's function is
/// G^R(tau) = -i C(tau), and the spectral function (density of states)
///   A(w) = -(1/pi) Im G^R(w) = (1/pi) Re int_0^inf C(tau) exp(+i w tau) dtau,
/// which integrates to C(0) = <{d, d^dagger}> (1 for one fermionic mode).
///
/// Each term is a quantum-regression propagation of an odd operator, by a second Solver of the same
/// model and depth with GeneratorOptions::parity odd (HierarchicalEOM.jl's DensityOfStates, in time):
/// x(0) = d^dagger x(t0) traced against d gives the first, x(0) = d x(t0) traced against d^dagger the
/// complex conjugate of the second. `solver` is left as it was; the memory needed is one more Solver's
/// (held to SolverOptions::memory_limit on its own, or to what the device has free beside `solver`).
/// One model on one device, square blocks, no Lindblad terms (their jumps' parity is not known).
/// `on_step` sees the delay propagated so far over both passes, 0 .. 2 delays.back(); `statistics`,
/// when given, receives the two propagations' steps and evaluations, summed.
template <class ExecSpace>
std::vector<complex> anticommutator_correlation(const Solver<ExecSpace>& solver, const Matrix& d,
                                                const std::vector<double>& delays,
                                                const std::function<void(double)>& on_step = {},
                                                IntegratorStatistics* statistics = nullptr) {
  const int n = solver.model().dimension();
  if (d.rows() != n || d.cols() != n)
    throw Error("anticommutator_correlation: d is " + d.shape_string() + " but the system is " + std::to_string(n) +
                "x" + std::to_string(n));
  if (solver.members() != 1 || solver.distribution())
    throw Error("anticommutator_correlation: one model on one device (not a batch or a split hierarchy)");
  if (solver.options().generator.shape != AdoShape::square)
    throw Error("anticommutator_correlation: needs square blocks (not ground columns)");
  if (solver.options().generator.parity != Parity::even)
    throw Error("anticommutator_correlation: the solver's state must be even (a density matrix's hierarchy)");
  for (std::size_t i = 0; i < delays.size(); ++i)
    if (!(delays[i] >= 0.0) || (i > 0 && delays[i] < delays[i - 1]))
      throw Error("anticommutator_correlation: delay " + std::to_string(i) + " is not >= 0 and ascending");
  if (delays.empty()) return {};

  SolverOptions options = solver.options();
  options.generator.parity = Parity::odd;
  options.observe_all_ados = false;
  if (is_hermitian_form(options.generator.kernel))  // (d rho is not Hermitian)
    options.generator.kernel = GeneratorKernel::automatic;
  Solver<ExecSpace> odd(solver.execution_space_instance(), solver.model(), solver.hierarchy().depth(), options);
  const double t0 = solver.time(), span = delays.back();
  std::vector<double> times(delays.size());
  for (std::size_t i = 0; i < delays.size(); ++i) times[i] = t0 + delays[i];
  std::vector<complex> values(delays.size(), 0.0);
  const Matrix d_dagger = d.adjoint();
  for (int pass = 0; pass < 2; ++pass) {
    // pass 0: tr[d x(tau)] from d^dagger x(t0); pass 1: conj(tr[d^dagger x(tau)]) from d x(t0).
    odd.set_initial_ados(solver.ados(), t0);
    odd.apply_operator(pass == 0 ? d_dagger : d, Solver<ExecSpace>::Side::left);
    const Matrix& traced = pass == 0 ? d : d_dagger;
    std::size_t k = 0;
    odd.run(
        times,
        [&](const Snapshot<ExecSpace>& s) {
          const complex value = (traced * s.rho()).trace();
          values[k++] += pass == 0 ? value : std::conj(value);
        },
        [&](double t) {
          if (on_step) on_step(pass * span + (t - t0));
        });
  }
  if (statistics) *statistics = odd.statistics();  // (restarts keep counting: both passes)
  return values;
}

}  // namespace heom

#endif
