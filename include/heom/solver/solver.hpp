// heom::Solver: the C++ entry point. Build a heom::Model in code, create a Solver on a Kokkos
// execution-space instance, set rho(0), advance it, read rho(t) or every ADO on the device. (What it
// is made of, for branching states: heom::Propagator and heom::HierarchyState.)
//
//   heom::Model model(H, {heom::Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, 2})});
//   heom::Solver<Kokkos::DefaultExecutionSpace> solver(exec, model, /*depth=*/5);
//   solver.set_initial_state(rho0);
//   solver.run({0.0, 0.1, 0.2}, [](const auto& s) { std::cout << s.time << " " << s.rho()(0, 0) << "\n"; });
#ifndef HEOM_SOLVER_SOLVER_HPP
#define HEOM_SOLVER_SOLVER_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/backends.hpp"
#include "heom/core/error.hpp"
#include "heom/generator/generator.hpp"
#include "heom/model/model.hpp"
#include "heom/solver/hierarchy_state.hpp"
#include "heom/solver/observation.hpp"
#include "heom/solver/propagator.hpp"
#include "heom/solver/snapshot.hpp"
#include "heom/solver/solver_options.hpp"
#include "heom/solver/solver_state.hpp"
#include "heom/solver/steady_state.hpp"
#include "heom/solver/steady_state_options.hpp"

namespace heom {

/// One hierarchy and one state of it: a Propagator, the HierarchyState it steps and what its
/// observers see (Observation), behind the calls most programs need.
template <class ExecSpace>
class Solver {
 public:
  using execution_space = ExecSpace;
  using traits = BackendTraits<ExecSpace>;
  using Observer = heom::Observer<ExecSpace>;
  using StepCallback = heom::StepCallback;
  using Side = heom::Side;

  /// Plans the memory (throws heom::OutOfMemoryError, naming the largest depth that fits, before
  /// allocating anything), builds the hierarchy and generator, and starts from rho = 0 at t = 0.
  Solver(const ExecSpace& exec, Model model, int depth, SolverOptions options = {});
  /// A batch: several models of one shape (same_shape: H may differ) stepped together, one generator
  /// launch for all, one step size shared by all with each member's error held to the tolerances
  /// (the largest member's error norm decides). Adaptive methods therefore accept a step only when
  /// it is within the tolerances for every member, and give each member a result within its
  /// tolerance of a solo run (not its bits); the fixed-step methods give a solo run's bits (when the
  /// members' drives have the same breakpoints: a batch's steps stop on every member's). Set each
  /// member's rho with set_initial_states(); observers see every member (Snapshot::rho(member)). Not
  /// with a communicator.
  Solver(const ExecSpace& exec, std::vector<Model> members, int depth, SolverOptions options = {});

  /// rho(t0) = rho0, every other ADO zero (HierarchyState::set_rho says what is checked, and when the
  /// generator's faster Hermitian form runs).
  void set_initial_state(const Matrix& rho0, double t0 = 0.0) { m_state.set_rho(rho0, t0); }
  /// A batch's initial states, one per member.
  void set_initial_states(const std::vector<Matrix>& rho0, double t0 = 0.0) { m_state.set_rhos(rho0, t0); }
  /// Continues from a full ADO state [num_ados][n][n] ([num_ados][n][1] in the ground-column shape)
  /// at t0 (e.g. one saved from ados()); on a split hierarchy each device gives its own ADOs.
  void set_initial_ados(const AdoView<ExecSpace>& ados, double t0) { m_state.set_ados(ados, t0); }

  /// Replaces the state by the steady state, every ADO (heom::solve_steady_state).
  SteadyStateReport solve_steady_state(const SteadyStateOptions& options = {});
  /// Multiplies every ADO by `op`, from the left (op x_a) or the right (x_a op): the start of a
  /// correlation function (HierarchyState::apply_operator).
  void apply_operator(const Matrix& op, Side side = Side::left) { m_state.apply_operator(op, side); }

  /// The state between two steps, on the host, for a checkpoint (HierarchyState::save).
  SolverState save_state(VectorStore* vectors = nullptr) const { return m_state.save(vectors); }
  /// Continues from a saved state, bit for bit (HierarchyState::load).
  void load_state(const SolverState& state, const VectorStore* vectors = nullptr) { m_state.load(state, vectors); }

  double time() const { return m_state.time(); }
  /// One step of the integrator (an accepted adaptive step, or one fixed step); returns the new time.
  /// Steps never straddle a drive's breakpoint (Model::drive_breakpoints): they end on it, and the
  /// integrator restarts there.
  double step();
  /// Advances to exactly t >= time().
  void run_until(double t) { m_propagator.run_until(m_state, t); }
  /// Advances through the ascending `times` (each >= time()), calling `observer` at each, with the
  /// state interpolated (adaptive methods: rho alone, or every ADO with observe_all_ados) or
  /// stepped onto (rk4, lsrk4) exactly at that time (Propagator::run).
  void run(const std::vector<double>& times, const Observer& observer, const StepCallback& on_step = {}) {
    m_propagator.run(m_state, times, m_observation, observer, on_step);
  }

  /// rho(time()) on the host. On a split hierarchy, only on the device that holds it (owns_rho()).
  Matrix rho() const { return m_state.rho(); }
  /// Every ADO at time(), on the device, no copy. Valid until the solver steps again. On a split
  /// hierarchy: this device's ADOs, global indices first_ado() onwards.
  AdoView<ExecSpace> ados() const { return m_state.ados(); }
  /// The global index of ados()'s first ADO (0 on one device).
  int first_ado() const { return m_propagator.first_ado(); }
  /// Whether this device holds rho (always on one device).
  bool owns_rho() const { return m_propagator.owns_rho(); }
  /// The split of the hierarchy this solver is a share of; nullptr on one device.
  const Distribution* distribution() const { return m_propagator.distribution(); }
  /// The models of a batch (1 for one model).
  int members() const { return m_propagator.members(); }
  /// The generator kernel the state's steps run (Hermitian ADOs: the Hermitian form, where it may).
  GeneratorKernel kernel() const { return m_state.kernel(); }

  const Model& model() const { return m_propagator.model(); }
  /// The hierarchy; on a split one it holds this device's ADOs' tables alone (Hierarchy::holding).
  const Hierarchy& hierarchy() const { return m_propagator.hierarchy(); }
  const Generator<ExecSpace>& generator() const { return m_propagator.generator(); }
  const MemoryPlan& memory_plan() const { return m_propagator.memory_plan(); }
  const IntegratorStatistics& statistics() const { return m_state.statistics(); }
  /// The method asked for, and for automatic what it chose (HierarchyState::method_taken).
  std::string method_taken() const { return m_state.method_taken(); }
  const SolverOptions& options() const { return m_propagator.options(); }
  const ExecSpace& execution_space_instance() const { return m_propagator.exec(); }
  const Propagator<ExecSpace>& propagator() const { return m_propagator; }
  const HierarchyState<ExecSpace>& state() const { return m_state; }
  HierarchyState<ExecSpace>& state() { return m_state; }

 private:
  Propagator<ExecSpace> m_propagator;
  HierarchyState<ExecSpace> m_state;
  Observation<ExecSpace> m_observation;
};

}  // namespace heom

#include "heom/solver/detail/solver_definitions.hpp"

namespace heom {
#define HEOM_EXTERN_SOLVER(E) extern template class Solver<E>;
HEOM_FOR_EACH_BACKEND(HEOM_EXTERN_SOLVER)
#undef HEOM_EXTERN_SOLVER
}  // namespace heom

#endif
