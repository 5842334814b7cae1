// heom::HierarchyState's member definitions (solver.hpp includes them, and the library instantiates
// them once per backend).
#ifndef HEOM_SOLVER_DETAIL_HIERARCHY_STATE_DEFINITIONS_HPP
#define HEOM_SOLVER_DETAIL_HIERARCHY_STATE_DEFINITIONS_HPP

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heom/core/to_device.hpp"
#include "heom/linalg/vector_ops.hpp"
#include "heom/distributed/reductions.hpp"
#include "heom/integrator/make_integrator.hpp"
#include "heom/solver/hierarchy_state.hpp"

namespace heom {

namespace impl {
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
}  // namespace impl

template <class ExecSpace>
HierarchyState<ExecSpace>::HierarchyState(std::shared_ptr<const impl::PropagatorParts<ExecSpace>> parts)
    : m_parts(std::move(parts)) {
  // The plan holds one state's vectors: each further one needs its own free.
  if (m_parts->states.load() > 0)
    propagator().require_memory(bytes_held(), m_parts->plan.bytes_total - m_parts->plan.bytes_tables,
                                "another hierarchy state");
  m_integrator = make_integrator(m_parts->exec, *m_parts->generator, m_parts->options.integrator);
  ++m_parts->states;
}

template <class ExecSpace>
std::uint64_t HierarchyState<ExecSpace>::bytes_held() const {
  // The plan holds the tables and one state's vectors: each further state its own vectors.
  const MemoryPlan& plan = m_parts->plan;
  const int others = std::max(m_parts->states.load() - 1, 0);
  return plan.bytes_total + static_cast<std::uint64_t>(others) * (plan.bytes_total - plan.bytes_tables);
}

template <class ExecSpace>
std::unique_ptr<Integrator<ExecSpace>> HierarchyState<ExecSpace>::integrator_for(Method method) const {
  IntegratorOptions options = m_parts->options.integrator;
  if (options.method == Method::automatic && method == Method::chebyshev) {
    options.max_order = IntegratorOptions{}.max_order;  // (automatic's step and order are exp-adams')
    options.step = 0.0;
  }
  options.method = method;
  return make_integrator(m_parts->exec, generator(), options);
}

template <class ExecSpace>
void HierarchyState<ExecSpace>::choose_method() {
  AutomaticChoice& c = m_choice;
  if (c.decided || m_parts->options.integrator.method != Method::automatic) return;
  if (generator().is_driven()) {  // (chebyshev does not step a driven model)
    c.decided = true;
    return;
  }
  const IntegratorStatistics stats = statistics();
  if (stats.steps - c.window_step < automatic_window) return;
  const double rate = c.window_time < 0.0 ? -1.0
                                          : static_cast<double>(stats.rhs_evaluations - c.window_applications) /
                                                (time() - c.window_time);
  if (c.window_time < 0.0 || c.last_rate < 0.0 || rate < automatic_settled * c.last_rate) {  // (a next window)
    c.last_rate = rate;
    c.window_step = stats.steps;
    c.window_time = time();
    c.window_applications = stats.rhs_evaluations;
    return;
  }
  c.decided = true;
  // The hand-over holds the series' vectors and its Arnoldi basis beside exp-adams' for a moment:
  // where they do not fit on every device, exp-adams steps on.
  const std::uint64_t needed =
      static_cast<std::uint64_t>(state_vectors(Method::chebyshev) + FaberPropagator<ExecSpace>::arnoldi_steps + 1) *
      static_cast<std::uint64_t>(generator().vector_size()) * sizeof(device_complex);
  const std::optional<std::uint64_t> available = propagator().memory_available(bytes_held());
  const double short_of_memory = available && needed > *available ? 1.0 : 0.0;
  if (impl::max_over_devices(generator().communicator(), short_of_memory) > 0.0) return;
  const double exp_adams_rate = rate;
  const ExecSpace& exec = m_parts->exec;
  std::unique_ptr<Integrator<ExecSpace>> series = integrator_for(Method::chebyshev);
  Kokkos::deep_copy(exec, series->state(), m_integrator->state());
  series->restart(time(), form());
  const double series_rate = static_cast<FaberPropagator<ExecSpace>&>(*series).predicted_rate(exec);
  if (series_rate < automatic_handover_ratio * exp_adams_rate) {
    series->carry_statistics(stats);
    m_integrator = std::move(series);
    c.chebyshev_from = time();
  } else {
    m_integrator->carry_statistics(series->statistics());  // (the hull's applications)
  }
}

template <class ExecSpace>
void HierarchyState<ExecSpace>::start_choice_anew() {
  if (m_parts->options.integrator.method != Method::automatic) return;
  if (method() != Method::exp_adams) {  // (the state goes with it: set_ados writes it first)
    std::unique_ptr<Integrator<ExecSpace>> adams = integrator_for(Method::exp_adams);
    Kokkos::deep_copy(m_parts->exec, adams->state(), m_integrator->state());
    adams->carry_statistics(statistics());
    m_integrator = std::move(adams);
  }
  m_choice = AutomaticChoice{};
  m_choice.window_step = statistics().steps;
}

template <class ExecSpace>
std::string HierarchyState<ExecSpace>::method_taken() const {
  const Method asked = m_parts->options.integrator.method;
  if (asked != Method::automatic) return to_string(asked);
  if (m_choice.chebyshev_from >= 0.0) return "automatic: chebyshev from t = " + format_number(m_choice.chebyshev_from);
  return "automatic: exp-adams";
}

template <class ExecSpace>
HierarchyState<ExecSpace>::~HierarchyState() {
  if (m_parts) --m_parts->states;
}

template <class ExecSpace>
HierarchyState<ExecSpace>::HierarchyState(const HierarchyState& other) : HierarchyState(other.m_parts) {
  if (other.method() != method()) {
    m_integrator.reset();
    m_integrator = integrator_for(other.method());
  }
  m_integrator->load(m_parts->exec, other.m_integrator->save(m_parts->exec));
  m_integrator->set_input_form(other.m_integrator->input_form());
  m_choice = other.m_choice;
}

template <class ExecSpace>
HierarchyState<ExecSpace>& HierarchyState<ExecSpace>::operator=(HierarchyState&& other) noexcept {
  if (this == &other) return *this;
  if (m_parts) --m_parts->states;
  m_integrator = std::move(other.m_integrator);  // (first: the old integrator reads the old parts' generator)
  m_parts = std::move(other.m_parts);
  m_choice = other.m_choice;
  return *this;
}

template <class ExecSpace>
HierarchyState<ExecSpace>& HierarchyState<ExecSpace>::operator=(const HierarchyState& other) {
  if (this != &other) *this = HierarchyState(other);
  return *this;
}

template <class ExecSpace>
AdoView<ExecSpace> HierarchyState<ExecSpace>::ados() const {
  return AdoView<ExecSpace>(vector().data(), generator().num_ados(), dimension(),
                            generator().block_size() / dimension());
}

template <class ExecSpace>
Matrix HierarchyState<ExecSpace>::rho() const {
  if (!generator().owns_rho()) {
    const Distribution& d = *m_parts->distribution;
    throw Error("Solver::rho: device " + std::to_string(d.part()) + " does not hold rho; device " +
                std::to_string(d.rho_owner()) + " does");
  }
  return copy_rho_to_host(m_parts->exec, ados());
}

template <class ExecSpace>
template <class Refusal>
void HierarchyState<ExecSpace>::require_form(bool hermitian, const char* not_hermitian) const {
  const GeneratorKernel requested = m_parts->options.generator.kernel;
  if (!hermitian && is_hermitian_form(requested))
    throw Refusal(std::string(not_hermitian) + ", and the " + to_string(requested) + " generator kernel was asked for");
}

template <class ExecSpace>
void HierarchyState<ExecSpace>::restart(double t0, bool hermitian) {
  m_parts->exec.fence();
  m_integrator->restart(t0, hermitian ? InputForm::hermitian : InputForm::general);
  if (!m_choice.decided) {  // (exp-adams starts again from small steps: its windows anew)
    m_choice.window_step = statistics().steps;
    m_choice.window_time = -1.0;
    m_choice.last_rate = -1.0;
  }
}

template <class ExecSpace>
void HierarchyState<ExecSpace>::set_rho(const Matrix& rho0, double t0) {
  if (generator().members() > 1)
    throw Error("set_initial_state: a batch of " + std::to_string(generator().members()) +
                " members takes one initial state each (set_initial_states)");
  write_rhos({rho0}, t0);
}

template <class ExecSpace>
void HierarchyState<ExecSpace>::set_rhos(const std::vector<Matrix>& rho0, double t0) {
  const int members = generator().members();
  if (static_cast<int>(rho0.size()) != members)
    throw Error("set_initial_states: " + std::to_string(rho0.size()) + " initial states for " +
                std::to_string(members) + (members == 1 ? " member" : " members"));
  write_rhos(rho0, t0);
}

template <class ExecSpace>
void HierarchyState<ExecSpace>::write_rhos(const std::vector<Matrix>& rho0, double t0) {
  const int n = dimension(), columns = generator().block_size() / n;
  bool hermitian = generator().preserves_hermiticity();
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
  require_form(hermitian, "initial state rho is not Hermitian");
  start_choice_anew();
  const ExecSpace& exec = m_parts->exec;
  const auto& y = vector();
  Kokkos::deep_copy(exec, y, device_complex(0.0));
  if (generator().owns_rho()) {
    // Each member's ADO 0 is the first block of its part of the state.
    Kokkos::View<device_complex**, Kokkos::LayoutRight, Kokkos::HostSpace> host("heom::rho0_host", n, columns);
    for (std::size_t m = 0; m < rho0.size(); ++m) {
      const Matrix start = hermitian ? 0.5 * (rho0[m] + rho0[m].adjoint()) : rho0[m];
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < columns; ++j) host(i, j) = device_complex(start(i, j).real(), start(i, j).imag());
      Kokkos::View<device_complex**, Kokkos::LayoutRight, typename BackendTraits<ExecSpace>::device_type,
                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>
          rho_device(y.data() + m * generator().member_size(), n, columns);
      Kokkos::deep_copy(exec, rho_device, host);
      exec.fence();  // (host is reused for the next member)
    }
  }
  restart(t0, hermitian);
}

template <class ExecSpace>
void HierarchyState<ExecSpace>::set_ados(const AdoView<ExecSpace>& ados, double t0) {
  const int n = dimension(), columns = generator().block_size() / n, count = generator().num_ados();
  if (ados.extent(0) != static_cast<std::size_t>(count) || ados.extent(1) != static_cast<std::size_t>(n) ||
      ados.extent(2) != static_cast<std::size_t>(columns))
    throw Error("initial ADOs are [" + std::to_string(ados.extent(0)) + "][" + std::to_string(ados.extent(1)) + "][" +
                std::to_string(ados.extent(2)) + "], expected [" + std::to_string(count) + "][" + std::to_string(n) +
                "][" + std::to_string(columns) + "]");
  if (!std::isfinite(t0)) throw Error("initial time must be finite");
  const std::size_t owned = static_cast<std::size_t>(generator().owned_size());
  Kokkos::View<const device_complex*, Kokkos::LayoutRight, typename BackendTraits<ExecSpace>::device_type,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      flat(ados.data(), owned);
  // (Copied before automatic's choice starts anew, which may free the vector `ados` points into.)
  Kokkos::deep_copy(m_parts->exec, Kokkos::subview(vector(), std::make_pair(std::size_t(0), owned)), flat);
  m_parts->exec.fence();
  start_choice_anew();
  rewritten(t0);
}

template <class ExecSpace>
void HierarchyState<ExecSpace>::rewritten(double t) {
  // (Ground columns are never Hermitian blocks, and such a generator does not preserve Hermiticity.)
  const bool preserves = generator().preserves_hermiticity();
  double not_hermitian = preserves && impl::all_blocks_hermitian(m_parts->exec, ados()) ? 0.0 : 1.0;
  not_hermitian = impl::max_over_devices(generator().communicator(), not_hermitian);
  const bool hermitian = preserves && not_hermitian == 0.0;
  require_form(hermitian, "the ADOs are not all Hermitian");
  restart(t, hermitian);
}

template <class ExecSpace>
void HierarchyState<ExecSpace>::apply_operator(const Matrix& op, Side side) {
  const int n = dimension();
  if (op.rows() != n || op.cols() != n)
    throw Error("apply_operator: the operator is " + op.shape_string() + " but the system is " + std::to_string(n) +
                "x" + std::to_string(n));
  if (generator().members() > 1) throw Error("apply_operator: one model (not a batch)");
  if (side == Side::right && generator().shape() == AdoShape::ground_column)
    throw Error("apply_operator: from the right an operator mixes the columns; the ground-column shape holds column 0");
  if (const auto bad = op.first_non_finite())
    throw Error("apply_operator: element (" + std::to_string(bad->first) + ", " + std::to_string(bad->second) +
                ") is not finite");
  // (The product needs one more vector for a moment.)
  const std::int64_t owned = generator().owned_size();
  propagator().require_memory(m_parts->plan.bytes_total, static_cast<std::uint64_t>(owned) * sizeof(device_complex),
                              "apply_operator", " for a moment");
  const ExecSpace& exec = m_parts->exec;
  const auto& y = vector();
  const auto matrix =
      impl::to_device<vector_type>(exec, "heom::solver::operator", op.data(), static_cast<std::size_t>(n) * n);
  const auto product = impl::allocate<vector_type>(exec, "heom::solver::product", owned);
  impl::multiply_blocks(exec, n, generator().block_size() / n, owned, matrix, y, product, side == Side::left);
  Kokkos::deep_copy(exec, Kokkos::subview(y, std::make_pair(std::int64_t(0), owned)), product);
  rewritten(time());
}

template <class ExecSpace>
HierarchyState<ExecSpace> HierarchyState<ExecSpace>::with_operator(const Matrix& op, Side side) const {
  HierarchyState branch = propagator().make_state();
  branch.set_ados(ados(), time());
  branch.apply_operator(op, side);
  return branch;
}

template <class ExecSpace>
void HierarchyState<ExecSpace>::add(complex scale, const HierarchyState& y) {
  if (y.m_parts != m_parts) throw Error("HierarchyState::add: the states belong to different propagators");
  if (y.time() != time())
    throw Error("HierarchyState::add: the states are at t = " + format_number(time()) + " and " +
                format_number(y.time()));
  const std::int64_t owned = generator().owned_size();
  impl::axpy(m_parts->exec, owned, device_complex(scale.real(), scale.imag()), y.vector(), vector());
  rewritten(time());
}

template <class ExecSpace>
SolverState HierarchyState<ExecSpace>::save(VectorStore* vectors) const {
  if (generator().members() > 1) throw Error("save_state: one model (not a batch)");
  SolverState state;
  state.fingerprint = m_parts->fingerprint;
  state.first_ado = generator().first_ado();
  state.num_ados = generator().num_ados();
  state.total_ados = m_parts->hierarchy->size();
  state.hermitian = hermitian();
  state.integrator = m_integrator->save(m_parts->exec, vectors);
  if (m_parts->options.integrator.method == Method::automatic) {
    const std::array<double, 6> numbers = m_choice.as_numbers();
    for (std::size_t i = 0; i < numbers.size(); ++i) state.integrator.scalars[AutomaticChoice::names[i]] = numbers[i];
  }
  return state;
}

template <class ExecSpace>
void HierarchyState<ExecSpace>::load(const SolverState& state, const VectorStore* vectors) {
  if (generator().members() > 1) throw Error("load_state: one model (not a batch)");
  require_same_fingerprint(m_parts->fingerprint, state.fingerprint, "the saved state");
  const Generator<ExecSpace>& g = generator();
  if (state.first_ado != g.first_ado() || state.num_ados != g.num_ados() ||
      state.total_ados != m_parts->hierarchy->size())
    throw StateMismatchError("the saved state holds ADOs " + std::to_string(state.first_ado) + ".." +
                             std::to_string(state.first_ado + state.num_ados - 1) + " of " +
                             std::to_string(state.total_ados) + ", this solver " + std::to_string(g.first_ado()) +
                             ".." + std::to_string(g.first_ado() + g.num_ados() - 1) + " of " +
                             std::to_string(m_parts->hierarchy->size()));
  if (state.hermitian && !g.preserves_hermiticity())
    throw StateMismatchError("the saved state has Hermitian ADOs, which this model does not keep Hermitian");
  require_form<StateMismatchError>(state.hermitian, "the saved state's ADOs are not all Hermitian");
  // (Automatic's state may be of either of its methods: loaded into a new integrator of that one, which
  // replaces this one's only once it has loaded.)
  const Method saved = state.integrator.method;
  const bool automatic = m_parts->options.integrator.method == Method::automatic;
  std::unique_ptr<Integrator<ExecSpace>> other;
  if (automatic && saved != method() && (saved == Method::exp_adams || saved == Method::chebyshev))
    other = integrator_for(saved);
  Integrator<ExecSpace>& target = other ? *other : *m_integrator;
  AutomaticChoice choice;
  if (automatic) {
    std::array<double, 6> numbers{};
    for (std::size_t i = 0; i < numbers.size(); ++i) numbers[i] = state.integrator.scalar(AutomaticChoice::names[i]);
    choice = AutomaticChoice::from_numbers(numbers);
  }
  target.load(m_parts->exec, state.integrator, vectors);
  target.set_input_form(state.hermitian ? InputForm::hermitian : InputForm::general);
  if (other) m_integrator = std::move(other);
  m_choice = choice;
}

}  // namespace heom

#endif
