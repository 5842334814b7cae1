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

#include <cmath>
#include <functional>
#include <memory>
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
#include "heom/integrator/dormand_prince.hpp"
#include "heom/integrator/exponential_adams.hpp"
#include "heom/integrator/integrator.hpp"
#include "heom/integrator/low_storage_rk4.hpp"
#include "heom/integrator/rk4.hpp"
#include "heom/model/model.hpp"
#include "heom/solver/solver_state.hpp"
#include "heom/solver/steady_state.hpp"

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
  /// tolerance of a solo run (not its bits); the fixed-step methods give a solo run's bits. Set each member's rho with
  /// set_initial_states(); observers see every member (Snapshot::rho(member)). Not with a communicator.
  Solver(const ExecSpace& exec, std::vector<Model> members, int depth, SolverOptions options = {});

  /// rho(t0) = rho0, every other ADO zero (on every device of a split hierarchy). rho0 must be n x n (in the
  /// ground-column shape, zero outside column 0); it is not checked for positivity. A rho0 that is Hermitian to
  /// rounding (1e-14 of its largest element) is replaced by its Hermitian part, so that a model that preserves
  /// Hermiticity can use the generator's faster Hermitian form (Generator::assume_hermitian_input); any other rho0
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
  /// The constructors' common part; `batch` empty for one model.
  void setup(int depth, const std::vector<Model>& batch);
  /// Writes each member's rho0 (n x n, each checked) into the zeroed state, with Hermitian parts when
  /// `hermitian`.
  void write_initial_states(const std::vector<Matrix>& rho0, double t0);
  AdoView<ExecSpace> as_ados(const typename Generator<ExecSpace>::vector_type& v) const {
    return AdoView<ExecSpace>(v.data(), m_generator->num_ados(), m_model.dimension(), ado_columns());
  }
  /// Columns of each ADO's block in a vector: n, or 1 in the ground-column shape.
  int ado_columns() const { return m_generator->block_size() / m_model.dimension(); }

  ExecSpace m_exec;
  Model m_model;
  SolverOptions m_options;
  MemoryPlan m_plan;
  std::unique_ptr<Hierarchy> m_hierarchy;
  std::shared_ptr<const Distribution> m_distribution;
  std::unique_ptr<Generator<ExecSpace>> m_generator;
  std::unique_ptr<Integrator<ExecSpace>> m_integrator;
  typename Generator<ExecSpace>::vector_type m_output;  // dense-output buffer
};

// ---------------------------------------------------------------------------------------------

template <class ExecSpace>
Matrix copy_rho_to_host(const ExecSpace& exec, const AdoView<ExecSpace>& ados) {
  const int n = static_cast<int>(ados.extent(1)), columns = static_cast<int>(ados.extent(2));
  auto rho_device = Kokkos::subview(ados, 0, Kokkos::ALL, Kokkos::ALL);
  Kokkos::View<device_complex**, Kokkos::LayoutRight, Kokkos::HostSpace> host("heom::rho_host", n, columns);
  Kokkos::deep_copy(exec, host, rho_device);
  exec.fence();
  Matrix rho(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < columns; ++j) rho(i, j) = complex(host(i, j).real(), host(i, j).imag());
  return rho;
}

/// Whether a Solver takes rho0 as Hermitian (to rounding: 1e-14 of its largest element), and so may
/// run the generator's Hermitian form from it.
inline bool hermitian_start(const Matrix& rho0) { return !rho0.first_non_hermitian(1e-14); }

/// Whether every ADO block equals its adjoint exactly.
template <class ExecSpace>
bool all_blocks_hermitian(const ExecSpace& exec, const AdoView<ExecSpace>& ados) {
  const int n = static_cast<int>(ados.extent(1));
  int mismatches = 0;
  Kokkos::parallel_reduce(
      "heom::solver::hermitian_check",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, ados.extent(0)),
      KOKKOS_LAMBDA(const std::int64_t a, int& count) {
        for (int i = 0; i < n; ++i)
          for (int j = i; j < n; ++j)
            if (ados(a, i, j) != Kokkos::conj(ados(a, j, i))) ++count;
      },
      mismatches);
  return mismatches == 0;
}

template <class ExecSpace>
std::unique_ptr<Integrator<ExecSpace>> make_integrator(const ExecSpace& exec, const Generator<ExecSpace>& generator,
                                                       const IntegratorOptions& options) {
  switch (options.method) {
    case Method::exp_adams:
      return std::make_unique<ExponentialAdams<ExecSpace>>(exec, generator, options);
    case Method::dopri5:
      return std::make_unique<DormandPrince54<ExecSpace>>(exec, generator, options);
    case Method::lsrk4:
      return std::make_unique<LowStorageRk4<ExecSpace>>(exec, generator, options);
    case Method::rk4:
      break;
  }
  return std::make_unique<Rk4<ExecSpace>>(exec, generator, options);
}

template <class ExecSpace>
Solver<ExecSpace>::Solver(const ExecSpace& exec, Model model, int depth, SolverOptions options)
    : m_exec(exec), m_model(std::move(model)), m_options(options) {
  setup(depth, {});
}

template <class ExecSpace>
Solver<ExecSpace>::Solver(const ExecSpace& exec, std::vector<Model> members, int depth, SolverOptions options)
    : m_exec(exec),
      m_model(members.empty() ? throw Error("Solver: a batch needs at least one model") : members.front()),
      m_options(options) {
  if (m_options.communicator) throw Error("Solver: a batch runs on one device (no communicator)");
  setup(depth, members);
}

template <class ExecSpace>
void Solver<ExecSpace>::setup(int depth, const std::vector<Model>& batch) {
  const ExecSpace& exec = m_exec;
  m_options.integrator.validate();
  if (depth < 0) throw Error("depth must be >= 0, got " + std::to_string(depth));
  if (!m_options.communicator && !m_options.partition.empty())
    throw Error("a partition was given without a communicator: it splits a hierarchy between devices");
  const bool columns = m_options.generator.shape == AdoShape::ground_column;
  if (m_options.communicator && columns)  // (as the Generator would, before the split is planned)
    throw Error("the ground-column shape (GeneratorOptions::shape) runs on one device, not a split hierarchy");
  if (m_options.communicator && m_options.observe_all_ados)
    throw Error("observe_all_ados: on a split hierarchy each device holds only its own ADOs (Solver::ados())");
  // A batch observes every member's rho, read from a full interpolated vector.
  const bool full_output = m_options.observe_all_ados || !batch.empty();
  const int members = batch.empty() ? 1 : static_cast<int>(batch.size());
  m_plan = MemoryPlan::make(m_model.dimension(), m_model.num_exponents(), depth,
                            state_vectors(m_options.integrator.method, full_output), columns ? 1 : 0);
  const std::uint64_t available = m_options.memory_limit > 0 ? m_options.memory_limit : traits::available_memory(exec);
  if (available > 0 && members > 1 && m_plan.bytes_total > available / members)
    throw OutOfMemoryError("a batch of " + std::to_string(members) + " members needs " + std::to_string(members) +
                           " x " + format_bytes(m_plan.bytes_total) + " but " + ExecSpace::name() + " memory has " +
                           format_bytes(available) + "; run fewer members at once");
  if (available > 0 && !m_options.communicator)
    m_plan.require_fits(available, std::string(ExecSpace::name()) + " memory");

  Kokkos::Profiling::pushRegion("heom::Solver::setup");
  m_hierarchy = std::make_unique<Hierarchy>(m_model.num_exponents(), depth);
  if (m_options.communicator) {
    // What else every device must agree on: the options that shape the steps and the kernel.
    std::ostringstream settings;
    const IntegratorOptions& o = m_options.integrator;
    settings << std::hexfloat << to_string(o.method) << ' ' << o.rtol << ' ' << o.atol << ' ' << o.step << ' '
             << o.max_step << ' ' << o.min_step << ' ' << to_string(m_options.generator.kernel);
    m_distribution =
        Distribution::make(m_model, *m_hierarchy, m_options.communicator, m_options.partition, settings.str());
    m_plan = m_plan.share(m_distribution->plan.local_size(), m_distribution->plan.owned,
                          generator_input_vectors(m_options.integrator.method), m_distribution->plan.send_ados.size());
    if (available > 0)
      m_plan.require_fits(
          available, std::string(ExecSpace::name()) + " memory of device " + std::to_string(m_distribution->part()));
  }
  m_generator = batch.empty() ? std::make_unique<Generator<ExecSpace>>(exec, m_model, *m_hierarchy, m_options.generator,
                                                                       m_distribution)
                              : std::make_unique<Generator<ExecSpace>>(exec, batch, *m_hierarchy, m_options.generator);
  m_integrator = make_integrator(exec, *m_generator, m_options.integrator);
  if (is_adaptive(m_options.integrator.method))
    m_output = typename Generator<ExecSpace>::vector_type(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("heom::solver::output")),
        full_output ? m_generator->vector_size() : m_generator->block_size());
  Kokkos::Profiling::popRegion();
}

template <class ExecSpace>
void Solver<ExecSpace>::set_initial_state(const Matrix& rho0, double t0) {
  if (members() > 1)
    throw Error("set_initial_state: a batch of " + std::to_string(members()) +
                " members takes one initial state each (set_initial_states)");
  write_initial_states({rho0}, t0);
}

template <class ExecSpace>
void Solver<ExecSpace>::set_initial_states(const std::vector<Matrix>& rho0, double t0) {
  if (static_cast<int>(rho0.size()) != members())
    throw Error("set_initial_states: " + std::to_string(rho0.size()) + " initial states for " +
                std::to_string(members()) + (members() == 1 ? " member" : " members"));
  write_initial_states(rho0, t0);
}

template <class ExecSpace>
void Solver<ExecSpace>::write_initial_states(const std::vector<Matrix>& rho0, double t0) {
  const int n = m_model.dimension(), columns = ado_columns();
  bool hermitian = m_generator->preserves_hermiticity();
  for (const Matrix& r : rho0) {
    if (r.rows() != n || r.cols() != n)
      throw Error("initial state rho is " + r.shape_string() + " but the hamiltonian is " + std::to_string(n) + "x" +
                  std::to_string(n));
    for (int i = 0; i < n; ++i)
      for (int j = columns; j < n; ++j)
        if (r(i, j) != complex(0.0))
          throw Error("initial state rho has element (" + std::to_string(i) + ", " + std::to_string(j) +
                      ") outside column 0, which the ground-column shape leaves out");
    hermitian = hermitian && hermitian_start(r);
  }
  if (!std::isfinite(t0)) throw Error("initial time must be finite");
  if (!hermitian && m_options.generator.kernel == GeneratorKernel::hermitian)
    throw Error("initial state rho is not Hermitian, and the hermitian generator kernel was asked for");
  m_generator->assume_hermitian_input(hermitian);
  const auto& y = m_integrator->state();
  Kokkos::deep_copy(m_exec, y, device_complex(0.0));
  if (!owns_rho()) {
    m_exec.fence();
    m_integrator->restart(t0);
    return;
  }
  // Each member's ADO 0 is the first block of its part of the state.
  Kokkos::View<device_complex**, Kokkos::LayoutRight, Kokkos::HostSpace> host("heom::rho0_host", n, columns);
  for (std::size_t m = 0; m < rho0.size(); ++m) {
    const Matrix start = hermitian ? 0.5 * (rho0[m] + rho0[m].adjoint()) : rho0[m];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < columns; ++j) host(i, j) = device_complex(start(i, j).real(), start(i, j).imag());
    Kokkos::View<device_complex**, Kokkos::LayoutRight, typename traits::device_type,
                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>
        rho_device(y.data() + m * m_generator->member_size(), n, columns);
    Kokkos::deep_copy(m_exec, rho_device, host);
    m_exec.fence();  // (host is reused for the next member)
  }
  m_integrator->restart(t0);
}

template <class ExecSpace>
void Solver<ExecSpace>::set_initial_ados(const AdoView<ExecSpace>& ados, double t0) {
  const int n = m_model.dimension(), columns = ado_columns();
  if (ados.extent(0) != static_cast<std::size_t>(m_generator->num_ados()) ||
      ados.extent(1) != static_cast<std::size_t>(n) || ados.extent(2) != static_cast<std::size_t>(columns))
    throw Error("initial ADOs are [" + std::to_string(ados.extent(0)) + "][" + std::to_string(ados.extent(1)) + "][" +
                std::to_string(ados.extent(2)) + "], expected [" + std::to_string(m_generator->num_ados()) + "][" +
                std::to_string(n) + "][" + std::to_string(columns) + "]");
  if (!std::isfinite(t0)) throw Error("initial time must be finite");
  const auto& y = m_integrator->state();
  const std::size_t owned = static_cast<std::size_t>(m_generator->owned_size());
  Kokkos::View<const device_complex*, Kokkos::LayoutRight, typename traits::device_type,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      flat(ados.data(), owned);
  Kokkos::deep_copy(m_exec, Kokkos::subview(y, std::make_pair(std::size_t(0), owned)), flat);
  restart_from_state(t0);
}

template <class ExecSpace>
void Solver<ExecSpace>::restart_from_state(double t0) {
  const auto& y = m_integrator->state();
  // (Ground columns are never Hermitian blocks, and such a generator does not preserve Hermiticity.)
  double not_hermitian = m_generator->preserves_hermiticity() && all_blocks_hermitian(m_exec, as_ados(y)) ? 0.0 : 1.0;
  if (const Communicator* c = m_generator->communicator()) not_hermitian = c->max(not_hermitian);
  const bool hermitian = m_generator->preserves_hermiticity() && not_hermitian == 0.0;
  if (!hermitian && m_options.generator.kernel == GeneratorKernel::hermitian)
    throw Error("the ADOs are not all Hermitian, and the hermitian generator kernel was asked for");
  m_generator->assume_hermitian_input(hermitian);
  m_exec.fence();
  m_integrator->restart(t0);
}

template <class ExecSpace>
SteadyStateReport Solver<ExecSpace>::solve_steady_state(const SteadyStateOptions& options) {
  if (members() > 1 || m_distribution)
    throw Error("solve_steady_state: one model on one device (not a batch or a split hierarchy)");
  if (m_generator->shape() == AdoShape::ground_column)
    throw Error("solve_steady_state: a steady state is a whole density matrix; the ground-column shape holds column 0");
  if (m_options.generator.kernel == GeneratorKernel::hermitian)
    throw Error(
        "solve_steady_state: GMRES's iterates are not Hermitian, and the hermitian generator kernel was asked "
        "for; use the automatic kernel");
  impl::validate(options);
  const std::uint64_t vector_bytes = static_cast<std::uint64_t>(m_generator->vector_size()) * sizeof(device_complex);
  const std::uint64_t needed =
      static_cast<std::uint64_t>(impl::SteadyStateKrylov<ExecSpace>::work_vectors(options.restart)) * vector_bytes;
  // A memory limit bounds the whole (the solver's own vectors are in it); the device's free memory
  // already excludes them.
  const std::uint64_t available =
      m_options.memory_limit > 0
          ? (m_options.memory_limit > m_plan.bytes_total ? m_options.memory_limit - m_plan.bytes_total : 0)
          : traits::available_memory(m_exec);
  if (available > 0 && needed > available)
    throw OutOfMemoryError("steady state: GMRES(" + std::to_string(options.restart) + ") needs " +
                           format_bytes(needed) + " for its Krylov vectors but " + ExecSpace::name() + " memory has " +
                           format_bytes(available) + " left; lower restart");
  Kokkos::Profiling::pushRegion("heom::Solver::solve_steady_state");
  // However this ends (a throwing progress callback included), the integrator restarts from the state
  // it is left with: its history belongs to the state before.
  struct Restart {
    Solver* solver;
    ~Restart() {
      try {
        solver->restart_from_state(solver->time());
      } catch (...) {  // (only the hermitian kernel's refusal, excluded above)
      }
      Kokkos::Profiling::popRegion();
    }
  } restart{this};
  m_generator->assume_hermitian_input(false);
  impl::SteadyStateKrylov<ExecSpace> krylov(*m_generator, m_model, options);
  const auto& x = m_integrator->state();
  if (std::abs(krylov.trace(m_exec, x)) == 0.0) {
    const int n = m_model.dimension();
    Matrix mixed = Matrix::identity(n);
    mixed *= 1.0 / n;
    write_initial_states({mixed}, time());
    m_generator->assume_hermitian_input(false);
  }
  // The steady state's ADOs are Hermitian when L preserves Hermiticity: keep exactly that part.
  auto finish = [&](SteadyStateReport report) {
    if (m_generator->preserves_hermiticity()) {
      krylov.hermitize(m_exec, x);
      report.residual = krylov.residual(m_exec, x);
    }
    return report;
  };
  SteadyStateReport report = finish(krylov.solve(m_exec, x, options.max_iterations));
  if (report.residual > options.tolerance && options.fallback_time > 0.0) {
    restart_from_state(time());
    run_until(time() + options.fallback_time);
    m_generator->assume_hermitian_input(false);
    const SteadyStateReport first = report;
    report = finish(krylov.solve(m_exec, x, options.max_iterations));
    report.iterations += first.iterations;
    report.cycles += first.cycles;
    report.fell_back = true;
  }
  if (!(report.residual <= options.tolerance)) {
    std::ostringstream message;
    message << "steady state not reached: residual " << report.residual << " > tolerance " << options.tolerance
            << " after " << report.iterations << " generator applications (GMRES(" << options.restart << "), "
            << to_string(options.preconditioner) << " preconditioner" << (report.fell_back ? ", after propagating" : "")
            << ")";
    throw SteadyStateError(message.str(), report);
  }
  return report;
}

template <class ExecSpace>
void Solver<ExecSpace>::apply_operator(const Matrix& op, Side side) {
  const int n = m_model.dimension();
  if (op.rows() != n || op.cols() != n)
    throw Error("apply_operator: the operator is " + op.shape_string() + " but the system is " + std::to_string(n) +
                "x" + std::to_string(n));
  if (members() > 1) throw Error("apply_operator: one model (not a batch)");
  if (side == Side::right && m_generator->shape() == AdoShape::ground_column)
    throw Error("apply_operator: from the right an operator mixes the columns; the ground-column shape holds column 0");
  if (const auto bad = op.first_non_finite())
    throw Error("apply_operator: element (" + std::to_string(bad->first) + ", " + std::to_string(bad->second) +
                ") is not finite");
  // (The product needs one more vector for a moment.)
  const std::uint64_t bytes = static_cast<std::uint64_t>(m_generator->owned_size()) * sizeof(device_complex);
  const std::uint64_t available = traits::available_memory(m_exec);
  if (available > 0 && bytes > available)
    throw OutOfMemoryError("apply_operator needs " + format_bytes(bytes) + " for a moment but " + ExecSpace::name() +
                           " memory has " + format_bytes(available));
  const auto& y = m_integrator->state();
  const auto matrix = impl::to_device<typename Generator<ExecSpace>::vector_type>("heom::solver::operator", op.data(),
                                                                                  static_cast<std::size_t>(n) * n);
  typename Generator<ExecSpace>::vector_type product(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("heom::solver::product")), m_generator->owned_size());
  impl::multiply_blocks(m_exec, n, ado_columns(), m_generator->owned_size(), matrix, y, product, side == Side::left);
  Kokkos::deep_copy(m_exec, Kokkos::subview(y, std::make_pair(std::int64_t(0), m_generator->owned_size())), product);
  restart_from_state(time());
}

template <class ExecSpace>
SolverState Solver<ExecSpace>::save_state(VectorStore* vectors) const {
  if (members() > 1) throw Error("save_state: one model (not a batch)");
  SolverState state;
  state.fingerprint =
      fingerprint(m_model, m_hierarchy->depth(), m_options.integrator, m_options.generator, ExecSpace::name());
  state.first_ado = m_generator->first_ado();
  state.num_ados = m_generator->num_ados();
  state.total_ados = m_hierarchy->size();
  state.hermitian = m_generator->hermitian_input();
  state.integrator = m_integrator->save(m_exec, vectors);
  return state;
}

template <class ExecSpace>
void Solver<ExecSpace>::load_state(const SolverState& state, const VectorStore* vectors) {
  if (members() > 1) throw Error("load_state: one model (not a batch)");
  require_same_fingerprint(
      fingerprint(m_model, m_hierarchy->depth(), m_options.integrator, m_options.generator, ExecSpace::name()),
      state.fingerprint, "the saved state");
  if (state.first_ado != m_generator->first_ado() || state.num_ados != m_generator->num_ados() ||
      state.total_ados != m_hierarchy->size())
    throw StateMismatchError("the saved state holds ADOs " + std::to_string(state.first_ado) + ".." +
                             std::to_string(state.first_ado + state.num_ados - 1) + " of " +
                             std::to_string(state.total_ados) + ", this solver " +
                             std::to_string(m_generator->first_ado()) + ".." +
                             std::to_string(m_generator->first_ado() + m_generator->num_ados() - 1) + " of " +
                             std::to_string(m_hierarchy->size()));
  if (state.hermitian && !m_generator->preserves_hermiticity())
    throw StateMismatchError("the saved state has Hermitian ADOs, which this model does not keep Hermitian");
  if (!state.hermitian && m_options.generator.kernel == GeneratorKernel::hermitian)
    throw StateMismatchError("the saved state's ADOs are not all Hermitian, and the hermitian kernel was asked for");
  m_integrator->load(m_exec, state.integrator, vectors);
  m_generator->assume_hermitian_input(state.hermitian);
}

template <class ExecSpace>
Matrix Solver<ExecSpace>::rho() const {
  if (!owns_rho())
    throw Error("Solver::rho: device " + std::to_string(m_distribution->part()) + " does not hold rho; device " +
                std::to_string(m_distribution->rho_owner()) + " does");
  return copy_rho_to_host(m_exec, ados());
}

template <class ExecSpace>
double Solver<ExecSpace>::step() {
  const double t = m_integrator->step(m_exec, INFINITY);
  m_exec.fence();
  return t;
}

template <class ExecSpace>
void Solver<ExecSpace>::run_until(double t) {
  if (!(t >= time()))
    throw Error("run_until: target time " + std::to_string(t) + " is before the current time " +
                std::to_string(time()));
  while (time() < t) m_integrator->step(m_exec, t);
  m_exec.fence();
}

template <class ExecSpace>
void Solver<ExecSpace>::run(const std::vector<double>& times, const Observer& observer, const StepCallback& on_step) {
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (!std::isfinite(times[i])) throw Error("run: output time " + std::to_string(i) + " is not finite");
    if (i > 0 && !(times[i] > times[i - 1])) throw Error("run: output times must be strictly increasing");
  }
  if (times.empty()) return;
  if (times.front() < time())
    throw Error("run: output time " + std::to_string(times.front()) + " is before the current time " +
                std::to_string(time()));
  Kokkos::Profiling::pushRegion("heom::Solver::run");
  struct PopRegion {  // (however the run ends: an observer or on_step may throw)
    ~PopRegion() { Kokkos::Profiling::popRegion(); }
  } pop_region;
  const int n = m_model.dimension(), columns = ado_columns();
  const int observed = m_options.observe_all_ados || members() > 1 ? m_generator->num_ados() : 1;
  auto emit = [&](double t, const typename Generator<ExecSpace>::vector_type& v) {
    m_exec.fence();
    if (observer && owns_rho())
      observer(Snapshot<ExecSpace>{t, AdoView<ExecSpace>(v.data(), observed, n, columns), m_exec, m_hierarchy->size()});
  };
  std::size_t next = 0;
  if (times.front() == time()) emit(times[next++], m_integrator->state());
  const double t_end = times.back();
  while (next < times.size()) {
    // Adaptive methods step freely towards the last output time and interpolate the ones they pass;
    // the fixed-step methods step onto each output time.
    const double limit = m_output.extent(0) > 0 ? t_end : times[next];
    const double t_new = m_integrator->step(m_exec, limit);
    while (next < times.size() && times[next] <= t_new) {
      if (times[next] == t_new) {
        emit(times[next], m_integrator->state());
      } else {
        m_integrator->interpolate(m_exec, times[next], m_output);
        emit(times[next], m_output);
      }
      ++next;
    }
    if (on_step) on_step(t_new);
  }
  m_exec.fence();
}

#define HEOM_EXTERN_SOLVER(E) extern template class Solver<E>;
HEOM_FOR_EACH_BACKEND(HEOM_EXTERN_SOLVER)
#undef HEOM_EXTERN_SOLVER

}  // namespace heom

#endif
