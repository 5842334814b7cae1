// Two-time correlation functions <A(t0 + tau) B(t0)> of the system, by the quantum regression theorem
// for the whole hierarchy: B multiplies every ADO of the state at t0 (the bath's correlations with
// B come along), the result is propagated, and A is traced against its rho.
#ifndef HEOM_SOLVER_CORRELATION_FUNCTION_HPP
#define HEOM_SOLVER_CORRELATION_FUNCTION_HPP

#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/solver/solver.hpp"

namespace heom {

/// tr[A x(tau)] for each delay tau (ascending, >= 0), where x(0) = B x(t0) is the solver's state at
/// its current time t0 with every ADO multiplied by B: <A(t0 + tau) B(t0)>. Start from a steady state
/// (Solver::solve_steady_state) for stationary correlations, or from a given state (an exciton model's
/// ground state, every other ADO zero) for a response. The start is in general not Hermitian, so the
/// generator's general form runs; a response from the ground state |0><0| (B |0><0| stays in column 0:
/// an absorption spectrum's dipole correlation) runs fastest in the ground-column shape
/// (GeneratorOptions::shape). The solver ends at t0 + delays.back() holding the propagated B x.
template <class ExecSpace>
std::vector<complex> correlation_function(Solver<ExecSpace>& solver, const Matrix& a, const Matrix& b,
                                          const std::vector<double>& delays,
                                          const typename Solver<ExecSpace>::StepCallback& on_step = {}) {
  const int n = solver.model().dimension();
  if (a.rows() != n || a.cols() != n)
    throw Error("correlation function: A is " + a.shape_string() + " but the system is " + std::to_string(n) + "x" +
                std::to_string(n));
  for (std::size_t i = 0; i < delays.size(); ++i)
    if (!(delays[i] >= 0.0)) throw Error("correlation function: delay " + std::to_string(i) + " is not >= 0");
  const double t0 = solver.time();
  solver.apply_operator(b, Solver<ExecSpace>::Side::left);
  std::vector<double> times(delays.size());
  for (std::size_t i = 0; i < delays.size(); ++i) times[i] = t0 + delays[i];
  std::vector<complex> values;
  values.reserve(delays.size());
  solver.run(
      times, [&](const Snapshot<ExecSpace>& s) { values.push_back((a * s.rho()).trace()); }, on_step);
  return values;
}

}  // namespace heom

#endif
