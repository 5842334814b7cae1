// heom::solve_steady_state: a hierarchy state replaced by the steady state of every ADO, by
// preconditioned restarted GMRES on the generator (solver/detail/hierarchy_krylov.hpp).
#ifndef HEOM_SOLVER_STEADY_STATE_HPP
#define HEOM_SOLVER_STEADY_STATE_HPP

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "heom/core/error.hpp"
#include "heom/core/kokkos_compat.hpp"
#include "heom/solver/detail/hierarchy_krylov.hpp"
#include "heom/solver/hierarchy_state.hpp"
#include "heom/solver/propagator.hpp"
#include "heom/solver/steady_state_options.hpp"

namespace heom {

/// Replaces `state` by the steady state, every ADO (its time stays, unless the fallback propagates):
/// L(x) = 0 with tr(rho) = 1, by preconditioned restarted GMRES on the generator (SteadyStateOptions),
/// started from the state (from I/n when its trace is zero). Throws heom::SteadyStateError, leaving the
/// last iterate as the state, when the residual stays above options.tolerance; heom::OutOfMemoryError
/// when the Krylov vectors do not fit. When the model preserves Hermiticity every ADO is made exactly
/// Hermitian (the steady state's are), and propagations from it run the generator's Hermitian form.
/// One model on one device, square blocks (not ground columns).
template <class ExecSpace>
SteadyStateReport solve_steady_state(const Propagator<ExecSpace>& propagator, HierarchyState<ExecSpace>& state,
                                     const SteadyStateOptions& options = {}) {
  const Generator<ExecSpace>& generator = propagator.generator();
  const GeneratorKernel requested = propagator.options().generator.kernel;
  if (propagator.members() > 1 || propagator.distribution())
    throw Error("solve_steady_state: one model on one device (not a batch or a split hierarchy)");
  if (generator.shape() == AdoShape::ground_column)
    throw Error("solve_steady_state: a steady state is a whole density matrix; the ground-column shape holds column 0");
  if (propagator.model().is_driven())
    throw Error("solve_steady_state: the model is driven (its H changes with t), so it has no steady state");
  if (is_hermitian_form(requested))
    throw Error(std::string("solve_steady_state: GMRES's iterates are not Hermitian, and the ") + to_string(requested) +
                " generator kernel was asked for; use the automatic kernel");
  require_valid(options.validate(), "steady state");
  const std::uint64_t vector_bytes = static_cast<std::uint64_t>(generator.vector_size()) * sizeof(device_complex);
  propagator.require_memory(
      propagator.memory_plan().bytes_total, static_cast<std::uint64_t>(options.work_vectors()) * vector_bytes,
      "steady state: GMRES(" + std::to_string(options.restart) + ")", " for its Krylov vectors", "; lower restart");
  const impl::ScopedRegion region("heom::Solver::solve_steady_state");
  // However this ends (a throwing progress callback included), the integrator restarts from the state
  // it is left with: its history belongs to the state before. (Nothing it throws can reach here: the
  // one refusal, a Hermitian-form kernel's, is excluded above.)
  struct Restart {
    HierarchyState<ExecSpace>& state;
    ~Restart() {
      try {
        state.rewritten(state.time());
      } catch (...) {
      }
    }
  } restart{state};
  const ExecSpace& exec = propagator.exec();
  impl::HierarchyKrylov<ExecSpace> krylov(generator, propagator.model(), propagator.hierarchy(), options);
  auto x = state.vector();  // (fetched again after propagating: another integrator may hold it then)
  if (std::abs(krylov.trace(exec, x)) == 0.0) {
    const int n = propagator.model().dimension();
    Matrix mixed = Matrix::identity(n);
    mixed *= 1.0 / n;
    state.set_rho(mixed, state.time());
  }
  // The steady state's ADOs are Hermitian when L preserves Hermiticity: keep exactly that part.
  auto finish = [&](SteadyStateReport report) {
    if (generator.preserves_hermiticity()) {
      krylov.hermitize(exec, x);
      report.residual = krylov.residual(exec, x);
    }
    return report;
  };
  SteadyStateReport report = finish(krylov.solve(exec, x, options.max_iterations));
  if (report.residual > options.tolerance && options.fallback_time > 0.0) {
    state.rewritten(state.time());
    propagator.run_until(state, state.time() + options.fallback_time);
    x = state.vector();
    const SteadyStateReport first = report;
    report = finish(krylov.solve(exec, x, options.max_iterations));
    report.iterations += first.iterations;
    report.cycles += first.cycles;
    report.fell_back = true;
  }
  if (!(report.residual <= options.tolerance)) {
    std::ostringstream message;
    message << "steady state not reached: residual " << report.residual << " > tolerance " << options.tolerance
            << " after " << report.iterations << " iterations (GMRES(" << options.restart << "), "
            << to_string(options.preconditioner) << " preconditioner" << (report.fell_back ? ", after propagating" : "")
            << ")";
    throw SteadyStateError(message.str(), report);
  }
  return report;
}

}  // namespace heom

#endif
