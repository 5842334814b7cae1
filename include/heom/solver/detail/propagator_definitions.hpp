// heom::Propagator's and heom::Observation's member definitions (solver.hpp includes them, and the
// library instantiates them once per backend).
#ifndef HEOM_SOLVER_DETAIL_PROPAGATOR_DEFINITIONS_HPP
#define HEOM_SOLVER_DETAIL_PROPAGATOR_DEFINITIONS_HPP

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "heom/core/kokkos_compat.hpp"
#include "heom/core/to_device.hpp"
#include "heom/integrator/make_integrator.hpp"
#include "heom/solver/hierarchy_state.hpp"
#include "heom/solver/observation.hpp"
#include "heom/solver/propagator.hpp"

namespace heom {

template <class ExecSpace>
Propagator<ExecSpace>::Propagator(const ExecSpace& exec, Model model, int depth, SolverOptions options) {
  auto parts = std::make_shared<impl::PropagatorParts<ExecSpace>>(exec, std::move(model), std::move(options));
  m_parts = parts;
  setup(*parts, depth, {});
}

template <class ExecSpace>
Propagator<ExecSpace>::Propagator(const ExecSpace& exec, std::vector<Model> members, int depth, SolverOptions options) {
  if (members.empty()) throw Error("Solver: a batch needs at least one model");
  if (options.communicator) throw Error("Solver: a batch runs on one device (no communicator)");
  auto parts = std::make_shared<impl::PropagatorParts<ExecSpace>>(exec, members.front(), std::move(options));
  m_parts = parts;
  setup(*parts, depth, members);
}

template <class ExecSpace>
void Propagator<ExecSpace>::setup(impl::PropagatorParts<ExecSpace>& p, int depth, const std::vector<Model>& batch) {
  const SolverOptions& options = p.options;
  require_valid(options.validate());
  if (depth < 0) throw Error("depth must be >= 0, got " + std::to_string(depth));
  const bool columns = options.generator.shape == AdoShape::ground_column;
  // A batch observes every member's rho, read from a full interpolated vector; the lead currents read
  // the first tier.
  const bool full_output = options.observe_all_ados || options.observe_lead_currents || !batch.empty();
  const int members = batch.empty() ? 1 : static_cast<int>(batch.size());
  const ImportanceTruncation truncation{options.importance_threshold, p.model.exponent_weights()};
  p.plan = MemoryPlan::make(p.model.dimension(), p.model.max_excitations(), depth,
                            state_vectors(options.integrator.method, full_output), columns ? 1 : 0, truncation);
  const std::optional<std::uint64_t> available = memory_available(0);
  if (available && members > 1 && p.plan.bytes_total > *available / members)
    throw OutOfMemoryError("a batch of " + std::to_string(members) + " members needs " + std::to_string(members) +
                           " x " + format_bytes(p.plan.bytes_total) + " but " + ExecSpace::name() + " memory has " +
                           format_bytes(*available) + "; run fewer members at once");
  if (available && !options.communicator) p.plan.require_fits(*available, std::string(ExecSpace::name()) + " memory");

  impl::ScopedRegion region("heom::Propagator::setup");
  p.fingerprint = run_fingerprint<ExecSpace>(p.model, depth, options);
  if (!options.communicator) {
    p.hierarchy = std::make_shared<const Hierarchy>(p.model.max_excitations(), depth, truncation);
  } else {
    // Each part holds its own ADOs' tables alone: the partition is counted, not enumerated.
    const Hierarchy counted = Hierarchy::without_tables(p.model.max_excitations(), depth, truncation);
    Partition partition = Distribution::partition_of(counted, options.communicator->size(), options.partition);
    const int part = options.communicator->rank();
    if (part < partition.parts())
      p.hierarchy = std::make_shared<const Hierarchy>(counted.holding(partition.first(part), partition.last(part)));
    else  // (no part for this device: Distribution::make reports the mismatch)
      p.hierarchy = std::make_shared<const Hierarchy>(counted);
    p.distribution = Distribution::make(*p.hierarchy, std::move(partition), options.communicator, p.fingerprint);
    // Observing the currents adds a collective to every output time: every device must.
    const double observes = options.observe_lead_currents ? 1.0 : 0.0;
    if (options.communicator->max(observes) != -options.communicator->max(-observes))
      throw Error("observe_lead_currents: the devices that share the hierarchy disagree on it");
    p.plan = p.plan.share(p.distribution->plan.local_size(), p.distribution->plan.owned,
                          generator_input_vectors(options.integrator.method), p.distribution->plan.send_ados.size());
    if (available)
      p.plan.require_fits(
          *available, std::string(ExecSpace::name()) + " memory of device " + std::to_string(p.distribution->part()));
  }
  p.generator = batch.empty()
                    ? std::make_unique<const Generator<ExecSpace>>(p.exec, p.model, p.hierarchy, options.generator,
                                                                   p.distribution)
                    : std::make_unique<const Generator<ExecSpace>>(p.exec, batch, *p.hierarchy, options.generator);
  for (const Model& member : batch.empty() ? std::vector<Model>{p.model} : batch)
    for (double t : member.drive_breakpoints()) p.breakpoints.push_back(t);
  std::sort(p.breakpoints.begin(), p.breakpoints.end());
}

template <class ExecSpace>
HierarchyState<ExecSpace> Propagator<ExecSpace>::make_state() const {
  return HierarchyState<ExecSpace>(m_parts);
}

template <class ExecSpace>
std::optional<std::uint64_t> Propagator<ExecSpace>::memory_available(std::uint64_t held) const {
  // A limit bounds the whole, this hierarchy's own vectors included.
  const std::uint64_t limit = m_parts->options.memory_limit;
  if (limit > 0) return limit > held ? limit - held : std::uint64_t(0);
  const std::uint64_t free_bytes = traits::available_memory(m_parts->exec);
  if (free_bytes == 0) return std::nullopt;
  return free_bytes;
}

template <class ExecSpace>
void Propagator<ExecSpace>::require_memory(std::uint64_t held, std::uint64_t needed, const std::string& what,
                                           const std::string& purpose, const std::string& advice) const {
  const std::optional<std::uint64_t> available = memory_available(held);
  if (available && needed > *available)
    throw OutOfMemoryError(what + " needs " + format_bytes(needed) + purpose + " but " + ExecSpace::name() +
                           " memory has " + format_bytes(*available) + " left" + advice);
}

template <class ExecSpace>
void Propagator<ExecSpace>::restart_on_breakpoint(HierarchyState<ExecSpace>& state) const {
  const std::vector<double>& breakpoints = m_parts->breakpoints;
  if (std::binary_search(breakpoints.begin(), breakpoints.end(), state.time()))
    state.integrator().restart(state.time(), state.integrator().input_form());
}

template <class ExecSpace>
double Propagator<ExecSpace>::step_towards(HierarchyState<ExecSpace>& state, double limit) const {
  state.choose_method();
  const std::vector<double>& breakpoints = m_parts->breakpoints;
  const auto next = std::upper_bound(breakpoints.begin(), breakpoints.end(), state.time());
  return state.integrator().step(m_parts->exec, next != breakpoints.end() && *next < limit ? *next : limit);
}

template <class ExecSpace>
double Propagator<ExecSpace>::step(HierarchyState<ExecSpace>& state, double limit) const {
  const double t = step_towards(state, limit);
  restart_on_breakpoint(state);
  return t;
}

template <class ExecSpace>
void Propagator<ExecSpace>::run_until(HierarchyState<ExecSpace>& state, double t) const {
  if (!(t >= state.time()))
    throw Error("run_until: target time " + std::to_string(t) + " is before the current time " +
                std::to_string(state.time()));
  while (state.time() < t) step(state, t);
  m_parts->exec.fence();
}

template <class ExecSpace>
void Propagator<ExecSpace>::run(HierarchyState<ExecSpace>& state, const std::vector<double>& times,
                                Observation<ExecSpace>& observation, const Observer<ExecSpace>& observer,
                                const StepCallback& on_step) const {
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (!std::isfinite(times[i])) throw Error("run: output time " + std::to_string(i) + " is not finite");
    if (i > 0 && !(times[i] > times[i - 1])) throw Error("run: output times must be strictly increasing");
  }
  if (times.empty()) return;
  if (times.front() < state.time())
    throw Error("run: output time " + std::to_string(times.front()) + " is before the current time " +
                std::to_string(state.time()));
  const impl::ScopedRegion region("heom::Solver::run");
  const Method method = m_parts->options.integrator.method;
  auto emit = [&](double t, const typename Generator<ExecSpace>::vector_type& v) {
    Snapshot<ExecSpace> s = observation.snapshot(t, v);
    if (observer && owns_rho()) observer(s);
  };
  std::size_t next = 0;
  if (times.front() == state.time()) emit(times[next++], state.vector());
  const double t_end = times.back();
  while (next < times.size()) {
    // Adaptive methods step freely towards the last output time and interpolate the ones they pass;
    // the fixed-step methods step onto each output time.
    // (An empty device of a split hierarchy has an empty output vector, but steps as the others do.)
    state.choose_method();  // (before the outputs are announced to the integrator that takes the step)
    state.integrator().expect_outputs(times.data() + next, times.size() - next, observation.output_elements());
    const double t_new = step_towards(state, is_adaptive(method) ? t_end : times[next]);
    while (next < times.size() && times[next] <= t_new) {
      if (times[next] == t_new) {
        emit(times[next], state.vector());
      } else {
        if (!observation.interpolate(state.integrator(), times[next]))
          throw Error(std::string("run: ") + to_string(method) +
                      " has no dense output at t = " + std::to_string(times[next]));
        emit(times[next], observation.buffer());
      }
      ++next;
    }
    restart_on_breakpoint(state);  // (after the output times inside the step were interpolated)
    if (on_step) on_step(t_new);
  }
  m_parts->exec.fence();
}

// ---------------------------------------------------------------------------------------------

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

template <class ExecSpace>
Observation<ExecSpace>::Observation(const Propagator<ExecSpace>& propagator) : m_parts(propagator.m_parts) {
  const SolverOptions& options = m_parts->options;
  const Generator<ExecSpace>& generator = *m_parts->generator;
  const ExecSpace& exec = m_parts->exec;
  const int members = generator.members();
  const bool batch = members > 1;
  m_observed_ados = options.observe_all_ados || batch ? generator.num_ados() : 1;
  const bool full_output = options.observe_all_ados || options.observe_lead_currents || batch;
  if (is_adaptive(options.integrator.method))
    m_output = impl::allocate<vector_type>(exec, "heom::solver::output",
                                           full_output ? generator.owned_size() : generator.block_size());
  if (!options.observe_lead_currents) return;
  const int first = generator.first_ado(), per_member = generator.num_ados() / members;
  m_lead_current_terms = impl::lead_current_terms(m_parts->model, *m_parts->hierarchy, first, per_member);
  std::vector<int> term_ados;
  for (int member = 0; member < members; ++member)
    for (const impl::LeadCurrentTerm& term : m_lead_current_terms)
      term_ados.push_back(member * per_member + term.ado - first);
  m_lead_current_ados = impl::to_device<ado_list>(exec, "heom::solver::lead_current_ados", term_ados, term_ados.size());
  m_lead_current_blocks =
      impl::allocate<vector_type>(exec, "heom::solver::lead_current_blocks", term_ados.size() * generator.block_size());
  m_lead_current_blocks_host = Kokkos::create_mirror_view(m_lead_current_blocks);
  // Where the currents alone need more than rho, the output interpolates rho and their ADOs alone.
  if (!options.observe_all_ados && !batch && generator.num_ados() > 0) {
    std::vector<int> ados = {0};
    for (const impl::LeadCurrentTerm& term : m_lead_current_terms) ados.push_back(term.ado - first);
    std::sort(ados.begin(), ados.end());
    ados.erase(std::unique(ados.begin(), ados.end()), ados.end());
    m_interpolated_ados = impl::to_device<ado_list>(exec, "heom::solver::interpolated_ados", ados, ados.size());
  }
}

template <class ExecSpace>
bool Observation<ExecSpace>::interpolate(const Integrator<ExecSpace>& integrator, double t) const {
  return m_interpolated_ados.extent(0) > 0
             ? integrator.interpolate_ados(m_parts->exec, t, m_output, m_interpolated_ados)
             : integrator.interpolate(m_parts->exec, t, m_output);
}

template <class ExecSpace>
Snapshot<ExecSpace> Observation<ExecSpace>::snapshot(double t, const vector_type& v) const {
  const ExecSpace& exec = m_parts->exec;
  exec.fence();
  std::vector<std::vector<complex>> currents;
  if (m_parts->options.observe_lead_currents) currents = lead_currents(v);
  const Generator<ExecSpace>& generator = *m_parts->generator;
  const int n = m_parts->model.dimension();
  return Snapshot<ExecSpace>{t, AdoView<ExecSpace>(v.data(), m_observed_ados, n, generator.block_size() / n), exec,
                             m_parts->hierarchy->size(), std::move(currents)};
}

template <class ExecSpace>
std::vector<std::vector<complex>> Observation<ExecSpace>::lead_currents(const vector_type& v) const {
  const ExecSpace& exec = m_parts->exec;
  const Model& model = m_parts->model;
  const int n = model.dimension();
  const std::int64_t block = std::int64_t(n) * n;
  if (m_lead_current_ados.extent(0) > 0) {
    impl::gather_blocks(exec, v, m_lead_current_ados, block, m_lead_current_blocks);
    Kokkos::deep_copy(exec, m_lead_current_blocks_host, m_lead_current_blocks);
    exec.fence();
  }
  const std::size_t terms = m_lead_current_terms.size();
  std::vector<std::vector<complex>> currents;
  for (int member = 0; member < m_parts->generator->members(); ++member) {
    // The terms of this device's first-tier ADOs, as [exponent, re, im] for gathering. (A batch's
    // members differ in H alone: their baths are the model's.)
    std::vector<double> mine;
    for (std::size_t k = 0; k < terms; ++k) {
      const device_complex* gathered = m_lead_current_blocks_host.data() + (member * terms + k) * block;
      Matrix x(n, n);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) x(i, j) = complex(gathered[i * n + j].real(), gathered[i * n + j].imag());
      const impl::LeadCurrentTerm& term = m_lead_current_terms[k];
      const complex value = impl::lead_current_term_value(model, term, x);
      mine.insert(mine.end(), {double(term.exponent), value.real(), value.imag()});
    }
    const Distribution* d = m_parts->distribution.get();
    const std::vector<double> all = d ? d->communicator->gather_all(mine) : mine;
    std::vector<int> exponents;
    std::vector<complex> values;
    for (std::size_t i = 0; i + 2 < all.size(); i += 3) {
      exponents.push_back(static_cast<int>(all[i]));
      values.emplace_back(all[i + 1], all[i + 2]);
    }
    currents.push_back(impl::sum_lead_current_terms(model, exponents, values));
  }
  return currents;
}

}  // namespace heom

#endif
