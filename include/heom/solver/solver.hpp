// heom::Solver: the C++ entry point. Build a heom::Model in code, create a Solver on a Kokkos
// execution-space instance, set rho(0), advance it, read rho(t) or every ADO on the device.
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
#include "heom/core/detail/to_device.hpp"
#include "heom/core/error.hpp"
#include "heom/distributed/distribution.hpp"
#include "heom/generator/generator.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/hierarchy/memory_plan.hpp"
#include "heom/integrator/integrator.hpp"
#include "heom/integrator/make_integrator.hpp"
#include "heom/model/model.hpp"
#include "heom/solver/detail/lead_current_terms.hpp"
#include "heom/solver/solver_state.hpp"
#include "heom/solver/steady_state_options.hpp"

namespace heom {

struct SolverOptions {
  IntegratorOptions integrator;
  /// Which generator kernel runs (automatic: the fastest that can; GeneratorKernel). The hermitian
  /// kernel needs a Hermitian initial state.
  GeneratorOptions generator;
  /// Observers of run() see every ADO (Snapshot::ados holds all of them) rather than rho alone. With
  /// the adaptive methods that costs one more full vector, for interpolating every ADO at the output
  /// times.
  bool observe_all_ados = false;
  /// Observers of run() see the particle current into each fermionic lead (Snapshot::lead_currents,
  /// as heom::lead_currents; every member's in a batch). With the adaptive methods that costs one more
  /// full vector, for interpolating the first tier. On a split hierarchy (every device must ask for
  /// them) each device computes the terms of the ADOs it owns; they are gathered and summed in one
  /// order (the same bits as on one device). Needs square ADO blocks (not ground columns).
  bool observe_lead_currents = false;
  /// Importance truncation of the hierarchy (ImportanceTruncation, with the model's exponent weights):
  /// ADOs of tier 2 and deeper whose importance value is below this are left out. 0: the whole
  /// hierarchy up to the depth.
  double importance_threshold = 0.0;
  /// Bytes the hierarchy may occupy on the device; 0: what the device reports as available.
  std::uint64_t memory_limit = 0;
  /// Several devices, one hierarchy: this device's end of the group that shares it (one part per
  /// device; see heom::Communicator). Every device constructs its Solver with the same model, depth
  /// and options and makes the same calls; the result is bit-identical to one device's. nullptr: one
  /// device.
  std::shared_ptr<const Communicator> communicator;
  /// With a communicator: the partition's boundaries (Partition::from_boundaries); empty: balanced.
  std::vector<int> partition;
};

/// ADOs at one time, [ado][n][n] on the device (ADO 0 is rho), or [ado][n][1] in the ground-column
/// shape (AdoShape: column 0 of each). Valid during the call it is passed to, or, from
/// Solver::ados(), until the solver steps again.
template <class ExecSpace>
using AdoView = Kokkos::View<const device_complex***, Kokkos::LayoutRight,
                             typename BackendTraits<ExecSpace>::device_type, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// Copy of ADO 0 (the reduced density matrix) to the host: n x n, also from ground columns (the
/// columns they leave out are zero).
template <class ExecSpace>
Matrix copy_rho_to_host(const ExecSpace& exec, const AdoView<ExecSpace>& ados);

/// What an observer sees at an output time.
template <class ExecSpace>
struct Snapshot {
  double time;
  /// Every ADO when SolverOptions::observe_all_ados or in a batch (every member's, member by member),
  /// otherwise ADO 0 alone (extent(0) == 1).
  AdoView<ExecSpace> ados;
  ExecSpace exec;
  /// A batch's ADOs per member (member m's rho is ADO m * ados_per_member).
  int ados_per_member = 0;
  /// With SolverOptions::observe_lead_currents, [member][bath]: the particle current from the system
  /// into each bath's lead (heom::lead_currents; 0 for bosonic baths); otherwise empty.
  std::vector<std::vector<complex>> lead_currents;
  /// rho(time) on the host (a batch: member `member`'s).
  Matrix rho(int member = 0) const {
    if (member == 0) return copy_rho_to_host(exec, ados);
    // (Pointer arithmetic: the View's data may be a GPU's, which the host must not index.)
    const std::size_t first = static_cast<std::size_t>(member) * ados_per_member;
    return copy_rho_to_host(exec, AdoView<ExecSpace>(ados.data() + first * ados.extent(1) * ados.extent(2),
                                                     ados.extent(0) - first, ados.extent(1), ados.extent(2)));
  }
};

template <class ExecSpace>
class Solver {
 public:
  using execution_space = ExecSpace;
  using traits = BackendTraits<ExecSpace>;
  using Observer = std::function<void(const Snapshot<ExecSpace>&)>;
  /// Called after every accepted step with the time reached (progress reports).
  using StepCallback = std::function<void(double)>;

  /// Plans the memory (throws heom::OutOfMemoryError, naming the largest depth that fits, before
  /// allocating anything), builds the hierarchy and generator, and starts from rho = 0 at t = 0.
  Solver(const ExecSpace& exec, Model model, int depth, SolverOptions options = {});
  /// A batch: several models of one shape (same_shape: H may differ) stepped together, one generator
  /// launch for all, one step size shared by all with each member's error held to the tolerances
  /// (the largest member's error norm decides). Adaptive methods therefore accept a step only when
  /// it is within the tolerances for every member, and give each member a result within its
  /// tolerance of a solo run (not its bits); the fixed-step methods give a solo run's bits (when the
  /// members' drives have the same breakpoints: a batch's steps stop on every member's). Set each member's rho with
  /// set_initial_states(); observers see every member (Snapshot::rho(member)). Not with a communicator.
  Solver(const ExecSpace& exec, std::vector<Model> members, int depth, SolverOptions options = {});

  /// rho(t0) = rho0, every other ADO zero (on every device of a split hierarchy). rho0 must be n x n (in the
  /// ground-column shape, zero outside column 0); it is not checked for positivity. A rho0 that is Hermitian to
  /// rounding (1e-14 of its largest element) is replaced by its Hermitian part, so that a model that preserves
  /// Hermiticity can use the generator's faster Hermitian form (Generator::promise_hermitian_input); any other rho0
  /// (e.g. A rho for a correlation function) is propagated as it is, with the general form.
  void set_initial_state(const Matrix& rho0, double t0 = 0.0);
  /// A batch's initial states, one per member (the same rules as set_initial_state; the generator's
  /// Hermitian form needs every one Hermitian).
  void set_initial_states(const std::vector<Matrix>& rho0, double t0 = 0.0);
  /// Continues from a full ADO state [num_ados][n][n] ([num_ados][n][1] in the ground-column shape)
  /// at t0 (e.g. one saved from ados()). The
  /// generator's Hermitian form is used when every ADO is exactly Hermitian (as a Hermitian run's are).
  /// On a split hierarchy each device gives its own ADOs (as ados() returns them).
  void set_initial_ados(const AdoView<ExecSpace>& ados, double t0);

  /// Replaces the state by the steady state, every ADO (the time stays, unless the fallback
  /// propagates): L(x) = 0 with tr(rho) = 1, by
  /// preconditioned restarted GMRES on the generator (SteadyStateOptions), started from the current
  /// state (from I/n when its trace is zero). Throws heom::SteadyStateError, leaving the last iterate
  /// as the state, when the residual stays above options.tolerance; heom::OutOfMemoryError when the
  /// Krylov vectors do not fit. When the model preserves Hermiticity every ADO is made exactly
  /// Hermitian (the steady state's are), and runs from it use the generator's Hermitian form.
  /// One model on one device, square blocks (not ground columns).
  SteadyStateReport solve_steady_state(const SteadyStateOptions& options = {});
  /// Multiplies every ADO by `op`, from the left (op x_a) or the right (x_a op): the start of a
  /// correlation function, <A(t) B(0)> = tr[A x(t)] from x(0) = B x (as correlation_function does).
  /// The time stays; the integrator restarts from the new state. Needs one more state vector for a
  /// moment. Ground columns take an operator from the left alone.
  enum class Side { left, right };
  void apply_operator(const Matrix& op, Side side = Side::left);

  /// The state between two steps, on the host, for a checkpoint: this device's ADOs, the
  /// integrator's history and step-size controller, and the fingerprint of the model, depth, options
  /// and build. With `vectors`, each vector goes there as it is copied (a file, say), so that no more
  /// than one is on the host at once, and the state returned holds none. One model (not a batch).
  SolverState save_state(VectorStore* vectors = nullptr) const;
  /// Continues from a saved state, its vectors read from `vectors` (else the state's own): a Solver
  /// made with the same model, depth, options and build then steps on bit for bit as the saved one
  /// would have (on a split hierarchy, each device loads the state of its own ADOs). Throws
  /// heom::StateMismatchError naming what differs, heom::Error for a damaged state.
  void load_state(const SolverState& state, const VectorStore* vectors = nullptr);

  double time() const { return m_integrator->time(); }
  /// One step of the integrator (an accepted adaptive step, or one fixed step); returns the new time.
  /// Steps never straddle a drive's breakpoint (Model::drive_breakpoints): they end on it, and the
  /// integrator restarts there.
  double step();
  /// Advances to exactly t >= time().
  void run_until(double t);
  /// Advances through the ascending `times` (each >= time()), calling `observer` at each, with the
  /// state interpolated (adaptive methods: rho alone, or every ADO with observe_all_ados) or
  /// stepped onto (rk4, lsrk4) exactly at that time. Ends at times.back(). On a split hierarchy the
  /// observer is called on the device that holds rho alone.
  /// `on_step`, when given, sees the time after every step, once the observer has seen the output
  /// times up to it: a state saved there (save_state) continues with the output times after it.
  void run(const std::vector<double>& times, const Observer& observer, const StepCallback& on_step = {});

  /// rho(time()) on the host. On a split hierarchy, only on the device that holds it (owns_rho()).
  Matrix rho() const;
  /// Every ADO at time(), on the device, no copy. Valid until the solver steps again. On a split
  /// hierarchy: this device's ADOs, global indices first_ado() onwards.
  AdoView<ExecSpace> ados() const { return as_ados(m_integrator->state()); }
  /// The global index of ados()'s first ADO (0 on one device).
  int first_ado() const { return m_generator->first_ado(); }
  /// Whether this device holds rho (always on one device).
  bool owns_rho() const { return m_generator->owns_rho(); }
  /// The split of the hierarchy this solver is a share of; nullptr on one device.
  const Distribution* distribution() const { return m_distribution.get(); }
  /// The models of a batch (1 for one model).
  int members() const { return m_generator->members(); }

  const Model& model() const { return m_model; }
  /// The hierarchy; on a split one it holds this device's ADOs' tables alone (Hierarchy::holding).
  const Hierarchy& hierarchy() const { return *m_hierarchy; }
  const Generator<ExecSpace>& generator() const { return *m_generator; }
  const MemoryPlan& memory_plan() const { return m_plan; }
  const IntegratorStatistics& statistics() const { return m_integrator->statistics(); }
  const SolverOptions& options() const { return m_options; }
  const ExecSpace& execution_space_instance() const { return m_exec; }

 private:
  /// After the state was changed in place: the generator's form for it (Hermitian when every ADO is
  /// and the model allows), and the integrator restarted at t0.
  void restart_from_state(double t0);
  /// The one memory rule: the bytes this solver may still allocate, beyond the `held` bytes it holds
  /// already: what SolverOptions::memory_limit leaves, else the device's free memory (which excludes
  /// them); nullopt when neither is known.
  std::optional<std::uint64_t> memory_available(std::uint64_t held) const;
  /// The constructors' common part; `batch` empty for one model.
  void setup(int depth, const std::vector<Model>& batch);
  /// Writes each member's rho0 (n x n, each checked) into the zeroed state, with Hermitian parts when
  /// `hermitian`.
  void write_initial_states(const std::vector<Matrix>& rho0, double t0);
  AdoView<ExecSpace> as_ados(const typename Generator<ExecSpace>::vector_type& v) const {
    return AdoView<ExecSpace>(v.data(), m_generator->num_ados(), m_model.dimension(), ado_columns());
  }
  /// One integrator step towards `limit`, ending on the next drive breakpoint when it lies closer.
  double step_towards(double limit);
  /// Restarts the integrator when time() is a drive breakpoint: its history and FSAL derivative
  /// belong to the other side of the jump.
  void restart_on_breakpoint();
  /// Columns of each ADO's block in a vector: n, or 1 in the ground-column shape.
  int ado_columns() const { return m_generator->block_size() / m_model.dimension(); }
  /// Each member's lead currents from the full state or interpolated vector v (collective on a split
  /// hierarchy; only the device that holds rho gets them).
  std::vector<std::vector<complex>> observed_lead_currents(const typename Generator<ExecSpace>::vector_type& v) const;

  ExecSpace m_exec;
  Model m_model;
  SolverOptions m_options;
  MemoryPlan m_plan;
  std::shared_ptr<const Hierarchy> m_hierarchy;  // (shared with the generator, which reads its tables)
  std::shared_ptr<const Distribution> m_distribution;
  std::unique_ptr<Generator<ExecSpace>> m_generator;
  std::unique_ptr<Integrator<ExecSpace>> m_integrator;
  typename Generator<ExecSpace>::vector_type m_output;           // dense-output buffer
  typename Integrator<ExecSpace>::ado_list m_interpolated_ados;  // its ADOs the observers read, when not all
  std::vector<double> m_breakpoints;                             // every member's drive breakpoints, ascending
  std::vector<impl::LeadCurrentTerm> m_lead_current_terms;       // this device's, when observed
  // The terms' ADOs of every member (member-major, local indices), and their blocks gathered there
  // and on the host: one copy per output.
  typename Integrator<ExecSpace>::ado_list m_lead_current_ados;
  typename Generator<ExecSpace>::vector_type m_lead_current_blocks;
  typename Generator<ExecSpace>::vector_type::HostMirror m_lead_current_blocks_host;
};

/// Whether a Solver takes rho0 as Hermitian (to rounding: 1e-14 of its largest element), and so may
/// run the generator's Hermitian form from it.
inline bool hermitian_start(const Matrix& rho0) { return !rho0.first_non_hermitian(1e-14); }

}  // namespace heom

#include "heom/solver/detail/solver_definitions.hpp"

namespace heom {
#define HEOM_EXTERN_SOLVER(E) extern template class Solver<E>;
HEOM_FOR_EACH_BACKEND(HEOM_EXTERN_SOLVER)
#undef HEOM_EXTERN_SOLVER
}  // namespace heom

#endif
