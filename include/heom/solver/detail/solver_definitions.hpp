// heom::Solver's member definitions (solver.hpp declares the class, and includes this at its end).
#ifndef HEOM_SOLVER_DETAIL_SOLVER_DEFINITIONS_HPP
#define HEOM_SOLVER_DETAIL_SOLVER_DEFINITIONS_HPP

#include "heom/solver/detail/hierarchy_krylov.hpp"
#include "heom/solver/solver.hpp"

namespace heom {

template <class ExecSpace>
Matrix copy_rho_to_host(const ExecSpace& exec, const AdoView<ExecSpace>& ados) {
  const int n = static_cast<int>(ados.extent(1)), columns = static_cast<int>(ados.extent(2));
  auto rho_device = Kokkos::subview(ados, 0, Kokkos::ALL, Kokkos::ALL);
  // (A vector: a View of its own would be zero-filled in a parallel region, a fork and join dearer than
  // this copy.)
  std::vector<device_complex> buffer(std::size_t(n) * columns);
  Kokkos::View<device_complex**, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(
      buffer.data(), n, columns);
  Kokkos::deep_copy(exec, host, rho_device);
  exec.fence();
  Matrix rho(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < columns; ++j) rho(i, j) = complex(host(i, j).real(), host(i, j).imag());
  return rho;
}

namespace impl {
/// The blocks (of `block` elements) of the listed ADOs of v, in list order, into `blocks`, on exec.
/// (A free function: nvcc's lambdas may not live in private members.)
template <class ExecSpace>
void gather_blocks(const ExecSpace& exec, const typename Generator<ExecSpace>::vector_type& v,
                   const typename Integrator<ExecSpace>::ado_list& ados, std::int64_t block,
                   const typename Generator<ExecSpace>::vector_type& blocks) {
  Kokkos::parallel_for(
      "heom::solver::gather_blocks",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, ados.extent(0) * block),
      KOKKOS_LAMBDA(const std::int64_t i) { blocks(i) = v(ados(i / block) * block + i % block); });
}
}  // namespace impl

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
  if (m_options.observe_lead_currents && columns)
    throw Error("observe_lead_currents: the currents read whole first-tier blocks, which ground columns leave out");
  // A batch observes every member's rho, read from a full interpolated vector; the lead currents read
  // the first tier.
  const bool full_output = m_options.observe_all_ados || m_options.observe_lead_currents || !batch.empty();
  const int members = batch.empty() ? 1 : static_cast<int>(batch.size());
  const ImportanceTruncation truncation{m_options.importance_threshold, m_model.exponent_weights()};
  m_plan = MemoryPlan::make(m_model.dimension(), m_model.max_excitations(), depth,
                            state_vectors(m_options.integrator.method, full_output), columns ? 1 : 0, truncation);
  const std::optional<std::uint64_t> available = memory_available(0);
  if (available && members > 1 && m_plan.bytes_total > *available / members)
    throw OutOfMemoryError("a batch of " + std::to_string(members) + " members needs " + std::to_string(members) +
                           " x " + format_bytes(m_plan.bytes_total) + " but " + ExecSpace::name() + " memory has " +
                           format_bytes(*available) + "; run fewer members at once");
  if (available && !m_options.communicator) m_plan.require_fits(*available, std::string(ExecSpace::name()) + " memory");

  Kokkos::Profiling::pushRegion("heom::Solver::setup");
  if (!m_options.communicator) {
    m_hierarchy = std::make_shared<const Hierarchy>(m_model.max_excitations(), depth, truncation);
  } else {
    // Each part holds its own ADOs' tables alone: the partition is counted, not enumerated.
    const Hierarchy counted = Hierarchy::without_tables(m_model.max_excitations(), depth, truncation);
    Partition partition = Distribution::partition_of(counted, m_options.communicator->size(), m_options.partition);
    const int part = m_options.communicator->rank();
    if (part < partition.parts())
      m_hierarchy = std::make_shared<const Hierarchy>(counted.holding(partition.first(part), partition.last(part)));
    else  // (no part for this device: Distribution::make reports the mismatch)
      m_hierarchy = std::make_shared<const Hierarchy>(counted);
    m_distribution = Distribution::make(
        *m_hierarchy, std::move(partition), m_options.communicator,
        fingerprint(m_model, depth, m_options.importance_threshold, m_options.integrator, m_options.generator,
                    ExecSpace::name(), BackendTraits<ExecSpace>::two_level_kernel));
    // Observing the currents adds a collective to every output time: every device must.
    const double observes = m_options.observe_lead_currents ? 1.0 : 0.0;
    if (m_options.communicator->max(observes) != -m_options.communicator->max(-observes))
      throw Error("observe_lead_currents: the devices that share the hierarchy disagree on it");
    m_plan = m_plan.share(m_distribution->plan.local_size(), m_distribution->plan.owned,
                          generator_input_vectors(m_options.integrator.method), m_distribution->plan.send_ados.size());
    if (available)
      m_plan.require_fits(
          *available, std::string(ExecSpace::name()) + " memory of device " + std::to_string(m_distribution->part()));
  }
  m_generator = batch.empty() ? std::make_unique<Generator<ExecSpace>>(exec, m_model, m_hierarchy, m_options.generator,
                                                                       m_distribution)
                              : std::make_unique<Generator<ExecSpace>>(exec, batch, *m_hierarchy, m_options.generator);
  m_integrator = make_integrator(exec, *m_generator, m_options.integrator);
  for (const Model& member : batch.empty() ? std::vector<Model>{m_model} : batch)
    for (double t : member.drive_breakpoints()) m_breakpoints.push_back(t);
  std::sort(m_breakpoints.begin(), m_breakpoints.end());
  if (is_adaptive(m_options.integrator.method))
    m_output = impl::allocate<typename Generator<ExecSpace>::vector_type>(
        exec, "heom::solver::output", full_output ? m_generator->owned_size() : m_generator->block_size());
  if (m_options.observe_lead_currents) {
    m_lead_current_terms =
        impl::lead_current_terms(m_model, *m_hierarchy, first_ado(), m_generator->num_ados() / members);
    std::vector<int> term_ados;
    for (int member = 0; member < members; ++member)
      for (const impl::LeadCurrentTerm& term : m_lead_current_terms)
        term_ados.push_back(member * (m_generator->num_ados() / members) + term.ado - first_ado());
    m_lead_current_ados = impl::to_device<typename Integrator<ExecSpace>::ado_list>(
        exec, "heom::solver::lead_current_ados", term_ados, term_ados.size());
    m_lead_current_blocks = impl::allocate<typename Generator<ExecSpace>::vector_type>(
        exec, "heom::solver::lead_current_blocks", term_ados.size() * m_generator->block_size());
    m_lead_current_blocks_host = Kokkos::create_mirror_view(m_lead_current_blocks);
    // Where the currents alone need more than rho, the output interpolates rho and their ADOs alone.
    if (!m_options.observe_all_ados && batch.empty() && m_generator->num_ados() > 0) {
      std::vector<int> ados = {0};
      for (const impl::LeadCurrentTerm& term : m_lead_current_terms) ados.push_back(term.ado - first_ado());
      std::sort(ados.begin(), ados.end());
      ados.erase(std::unique(ados.begin(), ados.end()), ados.end());
      m_interpolated_ados = impl::to_device<typename Integrator<ExecSpace>::ado_list>(
          exec, "heom::solver::interpolated_ados", ados, ados.size());
    }
  }
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
  if (!hermitian && is_hermitian_form(m_options.generator.kernel))
    throw Error(std::string("initial state rho is not Hermitian, and the ") + to_string(m_options.generator.kernel) +
                " generator kernel was asked for");
  m_generator->promise_hermitian_input(hermitian);
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
  not_hermitian = impl::max_over_devices(m_generator->communicator(), not_hermitian);
  const bool hermitian = m_generator->preserves_hermiticity() && not_hermitian == 0.0;
  if (!hermitian && is_hermitian_form(m_options.generator.kernel))
    throw Error(std::string("the ADOs are not all Hermitian, and the ") + to_string(m_options.generator.kernel) +
                " generator kernel was asked for");
  m_generator->promise_hermitian_input(hermitian);
  m_exec.fence();
  m_integrator->restart(t0);
}

template <class ExecSpace>
SteadyStateReport Solver<ExecSpace>::solve_steady_state(const SteadyStateOptions& options) {
  if (members() > 1 || m_distribution)
    throw Error("solve_steady_state: one model on one device (not a batch or a split hierarchy)");
  if (m_generator->shape() == AdoShape::ground_column)
    throw Error("solve_steady_state: a steady state is a whole density matrix; the ground-column shape holds column 0");
  if (m_model.is_driven())
    throw Error("solve_steady_state: the model is driven (its H changes with t), so it has no steady state");
  if (is_hermitian_form(m_options.generator.kernel))
    throw Error(std::string("solve_steady_state: GMRES's iterates are not Hermitian, and the ") +
                to_string(m_options.generator.kernel) + " generator kernel was asked for; use the automatic kernel");
  impl::validate(options);
  const std::uint64_t vector_bytes = static_cast<std::uint64_t>(m_generator->vector_size()) * sizeof(device_complex);
  const std::uint64_t needed = static_cast<std::uint64_t>(options.work_vectors()) * vector_bytes;
  const std::optional<std::uint64_t> available = memory_available(m_plan.bytes_total);
  if (available && needed > *available)
    throw OutOfMemoryError("steady state: GMRES(" + std::to_string(options.restart) + ") needs " +
                           format_bytes(needed) + " for its Krylov vectors but " + ExecSpace::name() + " memory has " +
                           format_bytes(*available) + " left; lower restart");
  Kokkos::Profiling::pushRegion("heom::Solver::solve_steady_state");
  // However this ends (a throwing progress callback included), the integrator restarts from the state
  // it is left with: its history belongs to the state before.
  struct Restart {
    Solver* solver;
    ~Restart() {
      try {
        solver->restart_from_state(solver->time());
      } catch (...) {  // (only a Hermitian-form kernel's refusal, excluded above)
      }
      Kokkos::Profiling::popRegion();
    }
  } restart{this};
  m_generator->promise_hermitian_input(false);
  impl::HierarchyKrylov<ExecSpace> krylov(*m_generator, m_model, *m_hierarchy, options);
  const auto& x = m_integrator->state();
  if (std::abs(krylov.trace(m_exec, x)) == 0.0) {
    const int n = m_model.dimension();
    Matrix mixed = Matrix::identity(n);
    mixed *= 1.0 / n;
    write_initial_states({mixed}, time());
    m_generator->promise_hermitian_input(false);
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
    m_generator->promise_hermitian_input(false);
    const SteadyStateReport first = report;
    report = finish(krylov.solve(m_exec, x, options.max_iterations));
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
  const std::optional<std::uint64_t> available = memory_available(m_plan.bytes_total);
  if (available && bytes > *available)
    throw OutOfMemoryError("apply_operator needs " + format_bytes(bytes) + " for a moment but " + ExecSpace::name() +
                           " memory has " + format_bytes(*available) + " left");
  const auto& y = m_integrator->state();
  using vector_type = typename Generator<ExecSpace>::vector_type;
  const auto matrix =
      impl::to_device<vector_type>(m_exec, "heom::solver::operator", op.data(), static_cast<std::size_t>(n) * n);
  const auto product = impl::allocate<vector_type>(m_exec, "heom::solver::product", m_generator->owned_size());
  impl::multiply_blocks(m_exec, n, ado_columns(), m_generator->owned_size(), matrix, y, product, side == Side::left);
  Kokkos::deep_copy(m_exec, Kokkos::subview(y, std::make_pair(std::int64_t(0), m_generator->owned_size())), product);
  restart_from_state(time());
}

template <class ExecSpace>
std::optional<std::uint64_t> Solver<ExecSpace>::memory_available(std::uint64_t held) const {
  // A limit bounds the whole, the solver's own vectors included.
  if (m_options.memory_limit > 0)
    return m_options.memory_limit > held ? m_options.memory_limit - held : std::uint64_t(0);
  const std::uint64_t free_bytes = traits::available_memory(m_exec);
  if (free_bytes == 0) return std::nullopt;
  return free_bytes;
}

template <class ExecSpace>
SolverState Solver<ExecSpace>::save_state(VectorStore* vectors) const {
  if (members() > 1) throw Error("save_state: one model (not a batch)");
  SolverState state;
  state.fingerprint = fingerprint(m_model, m_hierarchy->depth(), m_options.importance_threshold, m_options.integrator,
                                  m_options.generator, ExecSpace::name(), BackendTraits<ExecSpace>::two_level_kernel);
  state.first_ado = m_generator->first_ado();
  state.num_ados = m_generator->num_ados();
  state.total_ados = m_hierarchy->size();
  state.hermitian = m_generator->hermitian_input_promised();
  state.integrator = m_integrator->save(m_exec, vectors);
  return state;
}

template <class ExecSpace>
void Solver<ExecSpace>::load_state(const SolverState& state, const VectorStore* vectors) {
  if (members() > 1) throw Error("load_state: one model (not a batch)");
  require_same_fingerprint(
      fingerprint(m_model, m_hierarchy->depth(), m_options.importance_threshold, m_options.integrator,
                  m_options.generator, ExecSpace::name(), BackendTraits<ExecSpace>::two_level_kernel),
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
  if (!state.hermitian && is_hermitian_form(m_options.generator.kernel))
    throw StateMismatchError(std::string("the saved state's ADOs are not all Hermitian, and the ") +
                             to_string(m_options.generator.kernel) + " kernel was asked for");
  m_integrator->load(m_exec, state.integrator, vectors);
  m_generator->promise_hermitian_input(state.hermitian);
}

template <class ExecSpace>
Matrix Solver<ExecSpace>::rho() const {
  if (!owns_rho())
    throw Error("Solver::rho: device " + std::to_string(m_distribution->part()) + " does not hold rho; device " +
                std::to_string(m_distribution->rho_owner()) + " does");
  return copy_rho_to_host(m_exec, ados());
}

template <class ExecSpace>
double Solver<ExecSpace>::step_towards(double limit) {
  const auto next = std::upper_bound(m_breakpoints.begin(), m_breakpoints.end(), time());
  return m_integrator->step(m_exec, next != m_breakpoints.end() && *next < limit ? *next : limit);
}

template <class ExecSpace>
void Solver<ExecSpace>::restart_on_breakpoint() {
  if (std::binary_search(m_breakpoints.begin(), m_breakpoints.end(), time())) m_integrator->restart(time());
}

template <class ExecSpace>
double Solver<ExecSpace>::step() {
  const double t = step_towards(INFINITY);
  restart_on_breakpoint();
  m_exec.fence();
  return t;
}

template <class ExecSpace>
void Solver<ExecSpace>::run_until(double t) {
  if (!(t >= time()))
    throw Error("run_until: target time " + std::to_string(t) + " is before the current time " +
                std::to_string(time()));
  while (time() < t) {
    step_towards(t);
    restart_on_breakpoint();
  }
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
    std::vector<std::vector<complex>> currents;
    if (m_options.observe_lead_currents) currents = observed_lead_currents(v);
    if (observer && owns_rho())
      observer(Snapshot<ExecSpace>{t, AdoView<ExecSpace>(v.data(), observed, n, columns), m_exec, m_hierarchy->size(),
                                   std::move(currents)});
  };
  std::size_t next = 0;
  if (times.front() == time()) emit(times[next++], m_integrator->state());
  const double t_end = times.back();
  while (next < times.size()) {
    // Adaptive methods step freely towards the last output time and interpolate the ones they pass;
    // the fixed-step methods step onto each output time.
    // (An empty device of a split hierarchy has an empty output vector, but steps as the others do.)
    const double limit = is_adaptive(m_options.integrator.method) ? t_end : times[next];
    const double t_new = step_towards(limit);
    while (next < times.size() && times[next] <= t_new) {
      if (times[next] == t_new) {
        emit(times[next], m_integrator->state());
      } else {
        const bool interpolated =
            m_interpolated_ados.extent(0) > 0
                ? m_integrator->interpolate_ados(m_exec, times[next], m_output, m_interpolated_ados)
                : m_integrator->interpolate(m_exec, times[next], m_output);
        if (!interpolated)
          throw Error(std::string("run: ") + to_string(m_options.integrator.method) +
                      " has no dense output at t = " + std::to_string(times[next]));
        emit(times[next], m_output);
      }
      ++next;
    }
    restart_on_breakpoint();  // (after the output times inside the step were interpolated)
    if (on_step) on_step(t_new);
  }
  m_exec.fence();
}

template <class ExecSpace>
std::vector<std::vector<complex>> Solver<ExecSpace>::observed_lead_currents(
    const typename Generator<ExecSpace>::vector_type& v) const {
  const int n = m_model.dimension();
  const std::int64_t block = std::int64_t(n) * n;
  if (m_lead_current_ados.extent(0) > 0) {
    impl::gather_blocks(m_exec, v, m_lead_current_ados, block, m_lead_current_blocks);
    Kokkos::deep_copy(m_exec, m_lead_current_blocks_host, m_lead_current_blocks);
    m_exec.fence();
  }
  const std::size_t terms = m_lead_current_terms.size();
  std::vector<std::vector<complex>> currents;
  for (int member = 0; member < members(); ++member) {
    // The terms of this device's first-tier ADOs, as [exponent, re, im] for gathering. (A batch's
    // members differ in H alone: their baths are m_model's.)
    std::vector<double> mine;
    for (std::size_t k = 0; k < terms; ++k) {
      const device_complex* gathered = m_lead_current_blocks_host.data() + (member * terms + k) * block;
      Matrix x(n, n);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) x(i, j) = complex(gathered[i * n + j].real(), gathered[i * n + j].imag());
      const impl::LeadCurrentTerm& term = m_lead_current_terms[k];
      const complex value = impl::lead_current_term_value(m_model, term, x);
      mine.insert(mine.end(), {double(term.exponent), value.real(), value.imag()});
    }
    const std::vector<double> all = m_distribution ? m_distribution->communicator->gather_all(mine) : mine;
    std::vector<int> exponents;
    std::vector<complex> values;
    for (std::size_t i = 0; i + 2 < all.size(); i += 3) {
      exponents.push_back(static_cast<int>(all[i]));
      values.emplace_back(all[i + 1], all[i + 2]);
    }
    currents.push_back(impl::sum_lead_current_terms(m_model, exponents, values));
  }
  return currents;
}

}  // namespace heom

#endif
