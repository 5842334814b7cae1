// What a steady-state solve is asked for and what it reports (no Kokkos here: the program's input
// reader includes it). The solver is heom/solver/detail/hierarchy_krylov.hpp.
#ifndef HEOM_SOLVER_STEADY_STATE_OPTIONS_HPP
#define HEOM_SOLVER_STEADY_STATE_OPTIONS_HPP

#include <functional>
#include <optional>
#include <string>

#include "heom/core/error.hpp"

namespace heom {

/// The longest GMRES cycle accepted (its Hessenberg matrix lives on the host, dense).
constexpr int steady_state_max_restart = 1000;
/// The most iterations a solve may be given.
constexpr int steady_state_max_iterations = 100000000;

/// What GMRES is preconditioned with. Both invert each ADO's own term approximately, as D~:
/// rho_a -> A rho_a + rho_a B - damping_a rho_a (the system's Hamiltonian, the terminators' Q^2 part,
/// the Lindblad terms' L^+L / 2 and the ADO's damping; the terminators' Q rho Q part and the Lindblad
/// jumps are left out), exact in the eigenbases of A and B; where A or B is defective or its
/// eigenvectors are ill-conditioned, their diagonals alone (Jacobi).
enum class SteadyPreconditioner {
  /// A block Gauss-Seidel sweep up the hierarchy's tiers: from rho up, each tier's ADOs solved with D~
  /// for what is left of the residual once their lower-tier neighbours' terms are taken off. The
  /// generator applied once more per iteration, spread over the tiers, and about 4x fewer iterations
  /// than `system` (perf_tests/history.md).
  tiers,
  /// That sweep, then one down again with the upper-tier neighbours' terms: twice the work per
  /// iteration, and on slow baths (where the neighbours' terms outweigh the damping) a third of the
  /// iterations of `tiers`, but it can stagnate where `tiers` does not (spin-boson with a Pade bath).
  tiers_symmetric,
  /// D~ alone (block Jacobi): one pass per iteration, no generator application.
  system,
  /// None (for comparison; far more iterations).
  none,
};

/// "tiers", "tiers-symmetric", "system", "none".
const char* to_string(SteadyPreconditioner preconditioner);
/// The preconditioner of that name (to_string's), if any.
std::optional<SteadyPreconditioner> preconditioner_named(const std::string& name);
/// The names preconditioner_named accepts, for messages.
const char* preconditioner_names();

struct SteadyStateOptions {
  /// The largest residual accepted (SteadyStateReport::residual).
  double tolerance = 1e-10;
  /// Krylov vectors per cycle of restarted GMRES(restart), 1..steady_state_max_restart; the memory is
  /// work_vectors() state vectors besides the solver's own. Hierarchies need long cycles: GMRES(20)
  /// stagnates on FMO at depth 4, where GMRES(60) takes fewer iterations than GMRES(30) and less time
  /// (perf_tests/history.md); lower it when memory binds.
  int restart = 60;
  /// State-sized vectors the solver holds besides the Solver's own: the restart + 1 Krylov vectors
  /// and 2 work vectors, and the preconditioner's: 1 (system), 2 (tiers) or 3 (tiers-symmetric).
  int work_vectors() const {
    const int preconditioner_vectors = preconditioner == SteadyPreconditioner::tiers_symmetric ? 3
                                       : preconditioner == SteadyPreconditioner::tiers         ? 2
                                       : preconditioner == SteadyPreconditioner::system        ? 1
                                                                                               : 0;
    return restart + 1 + 2 + preconditioner_vectors;
  }
  /// Arnoldi steps (one preconditioning and generator application each) at most, over all cycles of one attempt (the
  /// fallback's second attempt has as many again; the residual checks between cycles are not counted).
  int max_iterations = 5000;
  SteadyPreconditioner preconditioner = SteadyPreconditioner::tiers;
  /// When GMRES stops short of the tolerance: propagate its last state this long (the model's time
  /// unit) with the solver's integrator, then run GMRES once more from there. 0: fail at once.
  double fallback_time = 0.0;
  /// Called after every GMRES cycle with the iterations (Arnoldi steps) so far and the residual.
  std::function<void(int, double)> progress;

  /// The first field out of range, and why (nothing when every field is fine).
  std::optional<OptionProblem> validate() const;
};

struct SteadyStateReport {
  /// ||L(x)||_2 / (rate ||x||_2) at the state returned: the relative size of what is left of
  /// d x / dt, independent of the normalization.
  double residual = 0.0;
  /// The model's rate scale that makes the residual dimensionless: the largest |v_k| of its
  /// exponents, |H_ij| of its Hamiltonian and rate max |L_ij|^2 of its Lindblad terms.
  double rate = 0.0;
  /// Iterations (Arnoldi steps: one preconditioning and generator application each), and GMRES cycles
  /// (restarts + 1).
  int iterations = 0;
  int cycles = 0;
  /// Whether the propagation fallback ran.
  bool fell_back = false;
};

/// The steady-state solve stopped short of the tolerance; the message says where.
class SteadyStateError : public Error {
 public:
  SteadyStateError(const std::string& message, const SteadyStateReport& report) : Error(message), m_report(report) {}
  const SteadyStateReport& report() const noexcept { return m_report; }

 private:
  SteadyStateReport m_report;
};

}  // namespace heom

#endif
