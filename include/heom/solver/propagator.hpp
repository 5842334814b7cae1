// heom::Propagator: what advances a hierarchy state, made once and never changed: the model (or a
// batch), the hierarchy or this device's share of it, the generator, the distribution and the
// integrator's options. It makes states (HierarchyState) and steps them; copies share what it holds.
//
//   heom::Propagator<Exec> propagator(exec, model, /*depth=*/5);
//   heom::HierarchyState<Exec> state = propagator.make_state();
//   state.set_rho(rho0);
//   heom::HierarchyState<Exec> branch = state.with_operator(mu, heom::Side::left);   // mu x, every ADO
//   propagator.run_until(branch, 100.0);
#ifndef HEOM_SOLVER_PROPAGATOR_HPP
#define HEOM_SOLVER_PROPAGATOR_HPP

#include <Kokkos_Core.hpp>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/backends.hpp"
#include "heom/core/fingerprint.hpp"
#include "heom/distributed/distribution.hpp"
#include "heom/generator/generator.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/hierarchy/memory_plan.hpp"
#include "heom/integrator/integrator.hpp"
#include "heom/model/model.hpp"
#include "heom/solver/snapshot.hpp"
#include "heom/solver/solver_options.hpp"
#include "heom/solver/solver_state.hpp"

namespace heom {

template <class ExecSpace>
class HierarchyState;
template <class ExecSpace>
class Observation;

/// The fingerprint of a run of `model` at `depth` with `options` on ExecSpace: what a saved state
/// must match to be loaded (heom::fingerprint with this backend's name and kernels).
template <class ExecSpace>
Fingerprint run_fingerprint(const Model& model, int depth, const SolverOptions& options) {
  return fingerprint(model, depth, options, ExecSpace::name(), BackendTraits<ExecSpace>::two_level_kernel);
}

namespace impl {
/// What a Propagator holds, shared by its copies and the states it made (which keep it alive).
template <class ExecSpace>
struct PropagatorParts {
  PropagatorParts(const ExecSpace& e, Model m, SolverOptions o) : exec(e), model(std::move(m)), options(std::move(o)) {}
  ExecSpace exec;
  Model model;
  SolverOptions options;
  MemoryPlan plan;
  std::shared_ptr<const Hierarchy> hierarchy;  // (shared with the generator, which reads its tables)
  std::shared_ptr<const Distribution> distribution;
  std::unique_ptr<const Generator<ExecSpace>> generator;
  std::vector<double> breakpoints;  // every member's drive breakpoints, ascending
  Fingerprint fingerprint;
  mutable std::atomic<int> states{0};  // the states alive (memory they hold beyond the plan's one)
};
}  // namespace impl

template <class ExecSpace>
class Propagator {
 public:
  using execution_space = ExecSpace;
  using traits = BackendTraits<ExecSpace>;

  /// Plans the memory (throws heom::OutOfMemoryError, naming the largest depth that fits, before
  /// allocating anything), builds the hierarchy (this device's share of it with a communicator) and
  /// the generator.
  Propagator(const ExecSpace& exec, Model model, int depth, SolverOptions options = {});
  /// A batch: several models of one shape (same_shape: H may differ) stepped together, one generator
  /// launch for all (Solver's batch constructor says how their steps are chosen). Not with a
  /// communicator.
  Propagator(const ExecSpace& exec, std::vector<Model> members, int depth, SolverOptions options = {});

  /// A state of this hierarchy at t = 0 with every ADO zero, its integrator's vectors on exec (set it
  /// with HierarchyState::set_rho). The plan counts one state; each further one needs its vectors
  /// free beside the others (else heom::OutOfMemoryError).
  HierarchyState<ExecSpace> make_state() const;

  /// One step of the state's integrator (an accepted adaptive step, or one fixed step), never past
  /// `limit` and never straddling a drive's breakpoint (Model::drive_breakpoints): a step ends on it,
  /// and the integrator restarts there. Returns the new time.
  double step(HierarchyState<ExecSpace>& state, double limit = INFINITY) const;
  /// Advances the state to exactly t >= its time.
  void run_until(HierarchyState<ExecSpace>& state, double t) const;
  /// Advances the state through the ascending `times` (each >= its time), handing `observer` what
  /// `observation` sees at each: the state interpolated (adaptive methods) or stepped onto (rk4,
  /// lsrk4) exactly there. Ends at times.back(). On a split hierarchy the observer is called on the
  /// device that holds rho alone. `on_step`, when given, sees the time after every step, once the
  /// observer has seen the output times up to it: a state saved there continues with the output
  /// times after it.
  void run(HierarchyState<ExecSpace>& state, const std::vector<double>& times, Observation<ExecSpace>& observation,
           const Observer<ExecSpace>& observer, const StepCallback& on_step = {}) const;

  const ExecSpace& exec() const { return m_parts->exec; }
  const Model& model() const { return m_parts->model; }
  const SolverOptions& options() const { return m_parts->options; }
  const MemoryPlan& memory_plan() const { return m_parts->plan; }
  /// The hierarchy; on a split one it holds this device's ADOs' tables alone (Hierarchy::holding).
  const Hierarchy& hierarchy() const { return *m_parts->hierarchy; }
  const Generator<ExecSpace>& generator() const { return *m_parts->generator; }
  /// The split of the hierarchy this is a share of; nullptr on one device.
  const Distribution* distribution() const { return m_parts->distribution.get(); }
  /// What a saved state must match (run_fingerprint of its model, depth and options).
  const Fingerprint& fingerprint() const { return m_parts->fingerprint; }
  /// The models of a batch (1 for one model).
  int members() const { return generator().members(); }
  /// The global index of this device's first ADO (0 on one device).
  int first_ado() const { return generator().first_ado(); }
  /// Whether this device holds rho (always on one device).
  bool owns_rho() const { return generator().owns_rho(); }
  /// Columns of each ADO's block in a vector: n, or 1 in the ground-column shape.
  int ado_columns() const { return generator().block_size() / model().dimension(); }

  /// The one memory rule: the bytes still free for this hierarchy beyond the `held` bytes it holds
  /// already: what SolverOptions::memory_limit leaves, else the device's free memory (which excludes
  /// them); nullopt when neither is known.
  std::optional<std::uint64_t> memory_available(std::uint64_t held) const;
  /// Throws heom::OutOfMemoryError, "<what> needs N<purpose> but <device> memory has M left<advice>",
  /// where `needed` bytes more are not free beside `held`.
  void require_memory(std::uint64_t held, std::uint64_t needed, const std::string& what,
                      const std::string& purpose = "", const std::string& advice = "") const;

 private:
  friend class HierarchyState<ExecSpace>;
  friend class Observation<ExecSpace>;
  /// The propagator a state was made by.
  explicit Propagator(std::shared_ptr<const impl::PropagatorParts<ExecSpace>> parts) : m_parts(std::move(parts)) {}
  /// The constructors' common part, building `parts` (m_parts' own); `batch` empty for one model.
  void setup(impl::PropagatorParts<ExecSpace>& parts, int depth, const std::vector<Model>& batch);
  /// One integrator step towards `limit`, ending on the next drive breakpoint when it lies closer.
  double step_towards(HierarchyState<ExecSpace>& state, double limit) const;
  /// Restarts the state's integrator when its time is a drive breakpoint: its history and FSAL
  /// derivative belong to the other side of the jump.
  void restart_on_breakpoint(HierarchyState<ExecSpace>& state) const;
  std::shared_ptr<const impl::PropagatorParts<ExecSpace>> m_parts;
};

#define HEOM_EXTERN_PROPAGATOR(E) extern template class Propagator<E>;
HEOM_FOR_EACH_BACKEND(HEOM_EXTERN_PROPAGATOR)
#undef HEOM_EXTERN_PROPAGATOR

}  // namespace heom

#endif
