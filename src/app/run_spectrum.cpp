// Computing spectra in the heom program: C(t) from propagations or the steady state, and its transform.
#include "commands.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app.hpp"
#include "heom/core/backend_traits.hpp"
#include "heom/core/matrix.hpp"
#include "heom/ensemble/ensemble.hpp"
#include "heom/generator/options.hpp"
#include "heom/hierarchy/memory_plan.hpp"
#include "heom/model/model.hpp"
#include "heom/solver/correlation_function.hpp"
#include "heom/solver/solver.hpp"
#include "heom/solver/spectral_function.hpp"
#include "io/hdf5_output.hpp"
#include "io/spectrum.hpp"
#include "io/units.hpp"
#include "plans.hpp"
#include "progress.hpp"
#include "run_steady.hpp"

namespace heom::app {
namespace {

/// The spectrum of the sampled C(t) in the input's units, cropped to its frequency range.
io::SpectrumRecord spectrum_of(const io::RunConfig& config, const std::vector<complex>& correlation) {
  const io::SpectrumConfig& s = *config.spectrum;
  const io::UnitScale scale = io::unit_scale(config.units);
  using Kind = io::SpectrumConfig::Kind;
  // (Absorption and the density of states transform with exp(+i w t): their lines sit at +E.)
  const io::SpectrumGrid grid =
      io::one_sided_spectrum(correlation, config.output_every, s.kind == Kind::power ? -1 : 1, s.window, s.padding);
  io::SpectrumRecord r;
  switch (s.kind) {
    case Kind::absorption:
      r.kind = "absorption";
      r.definition =
          "I(w) = (1/pi) Re int_0^T C(t) W(t) exp(+i w t) dt; C(t) = sum_p weight_p tr[mu_p rho_p(t)], "
          "rho_p(0) = mu_p |0><0| (the orientation average: 3 polarizations of weight 1/3)";
      break;
    case Kind::power:
      r.kind = "power";
      r.definition = s.incoherent ? "S(w) = (1/pi) Re int_0^T C(t) W(t) exp(-i w t) dt; C(t) = <Q^dagger(t) Q(0)> - "
                                    "<Q^dagger><Q> in the steady state (the incoherent part)"
                                  : "S(w) = (1/pi) Re int_0^T C(t) W(t) exp(-i w t) dt; C(t) = <Q^dagger(t) Q(0)> in "
                                    "the steady state";
      break;
    case Kind::density_of_states:
      r.kind = "density-of-states";
      r.definition =
          "A(w) = (1/pi) Re int_0^T C(t) W(t) exp(+i w t) dt = -Im G^R(w) / pi; C(t) = <{d(t), d^dagger(0)}> = "
          "i G^R(t) in the steady state (the odd-parity hierarchy)";
      break;
  }
  r.frequency_unit = scale.energy_unit;
  r.window = io::to_string(s.window);
  r.padding = s.padding;
  r.dipole_strength = correlation.front().real();
  for (std::size_t i = 0; i < grid.omega.size(); ++i) {
    const double omega = grid.omega[i] / scale.energy;
    if (!s.frequency_range.empty() && (omega < s.frequency_range[0] || omega > s.frequency_range[1])) continue;
    r.omega.push_back(omega);
    r.intensity.push_back(grid.intensity[i] * scale.energy);  // per unit of the output's omega
  }
  for (double t : config.output_times()) r.t.push_back(t / scale.time);
  r.correlation = correlation;
  return r;
}

/// A density of states solved in frequency (no C(t)), in the input's units.
io::SpectrumRecord solved_density_of_states(const io::RunConfig& config, const Solver<Exec>& solver) {
  const io::SpectrumConfig& s = *config.spectrum;
  const io::UnitScale scale = io::unit_scale(config.units);
  io::SpectrumRecord r;
  r.kind = "density-of-states";
  r.method = "frequency";
  r.definition =
      "A(w) = (1/pi) Re int_0^inf C(t) exp(+i w t) dt = -Im G^R(w) / pi; C(t) = <{d(t), d^dagger(0)}> = i G^R(t) in "
      "the steady state (the odd-parity hierarchy), solved at each w: (1/pi) Re tr[d y+ + d^dagger y-] with "
      "(L + i w) y+ = -d^dagger rho, (L - i w) y- = -d rho";
  r.frequency_unit = scale.energy_unit;
  r.window = "none";
  r.padding = 1;
  const Matrix rho = solver.rho();
  const Matrix d_dagger = s.op.adjoint();
  r.dipole_strength = ((s.op * d_dagger + d_dagger * s.op) * rho).trace().real();  // C(0) = <{d, d^dagger}>
  r.omega = s.solved_frequencies();
  std::vector<double> omega(r.omega.size());
  for (std::size_t i = 0; i < omega.size(); ++i) omega[i] = r.omega[i] * scale.energy;
  // Two solves per frequency: progress over both passes.
  Progress progress(0.0, 2.0 * static_cast<double>(omega.size()), "", stderr, "frequencies");
  FrequencySolveReport report;
  SteadyStateOptions gmres = config.steady;
  if (s.solve_tolerance > 0.0) gmres.tolerance = s.solve_tolerance;
  try {
    r.intensity = density_of_states_in_frequency(
        solver, s.op, omega, gmres, [&](std::int64_t done) { progress.update(static_cast<double>(done)); }, &report);
  } catch (const OutOfMemoryError& e) {
    // The Krylov vectors: what the input can change is the cycle's length (the odd hierarchy's own
    // shortfall goes on to name the depth).
    if (std::string(e.what()).find("Krylov vectors") == std::string::npos) throw;
    throw io::InputError(config.input_name + ": steady.restart: " + e.what());
  }
  for (double& a : r.intensity) a *= scale.energy;  // per unit of the output's omega
  r.solves = report.solves;
  r.iterations = report.iterations;
  return r;
}

/// The models whose absorption is averaged: the ensemble's members, or the one model.
std::vector<Model> absorbing_models(const io::RunConfig& config) {
  std::vector<Model> models;
  if (config.ensemble)
    for (const io::EnsembleMemberConfig& m : config.ensemble->members) models.push_back(m.model);
  else
    models.push_back(config.model);
  return models;
}

/// One propagation of mu_p |0><0| per member and polarization p (in that order), spread over the
/// devices or ranks as an ensemble's members are.
EnsembleResult propagate_dipoles(const io::RunConfig& config, const std::vector<Model>& models, const MpiJob& job,
                                 const Devices& devices, bool reporter) {
  const io::SpectrumConfig& s = *config.spectrum;
  const int polarizations = static_cast<int>(s.dipoles.size());
  std::vector<EnsembleMember> runs;
  for (const Model& model : models)
    for (const Matrix& mu : s.dipoles) runs.push_back({model, mu * operators::projector(mu.rows(), 0, 0)});
  const std::shared_ptr<const Communicator> ranks = job.mpi_communicator();
  if (reporter) {
    std::printf(
        "  spectrum    absorption: %zu member%s x %d polarization%s, on %s\n", models.size(),
        models.size() == 1 ? "" : "s", polarizations, polarizations == 1 ? "" : "s",
        ranks ? ranks->describe().c_str()
              : (std::to_string(std::max(devices.count, 1)) + (devices.count > 1 ? " devices" : " device")).c_str());
    std::fflush(stdout);
  }
  EnsembleOptions options;
  options.depth = config.depth;
  options.solver = config.solver;
  options.solver.generator.shape = ado_shape(config);
  options.devices = std::max(devices.count, 1);
  options.gpu_ids = devices.gpu_ids;
  options.ranks = ranks;
  options.batch = config.ensemble ? config.ensemble->batch : 1;
  // Propagations finished, and the fraction of t_end that the first device's current one reached.
  Progress progress(0.0, static_cast<double>(runs.size()), "", reporter ? stderr : nullptr, "propagations");
  std::atomic<std::int64_t> finished{0};
  options.progress = [&](std::int64_t done, std::int64_t) {
    finished = done;
    progress.update(static_cast<double>(done));
  };
  if (reporter)
    options.on_step = [&](int worker, double t) {
      if (worker == 0) progress.update(static_cast<double>(finished) + t / config.t_end);
    };
  return run_ensemble(Exec(), runs, config.output_times(), options);
}

/// The absorption spectrum into `record`: C(t) = sum_p weight tr[mu_p rho_p(t)], averaged over the
/// members (each member's own spectrum too where the input stores them). False on the ranks that do
/// not report (they hold no result).
bool absorption(const io::RunConfig& config, const MpiJob& job, const Devices& devices, io::RunRecord& record) {
  const io::SpectrumConfig& s = *config.spectrum;
  const bool reporter = job.rank() == 0;
  const std::vector<Model> models = absorbing_models(config);
  const EnsembleResult result = propagate_dipoles(config, models, job, devices, reporter);
  if (!reporter) return false;
  const std::size_t times = config.output_times().size();
  const int polarizations = static_cast<int>(s.dipoles.size());
  const bool store = config.ensemble && config.ensemble->store_members;
  std::vector<complex> correlation(times, 0.0);
  std::vector<io::SpectrumRecord> members;
  for (std::size_t m = 0; m < models.size(); ++m) {
    std::vector<complex> member(times, 0.0);
    for (int p = 0; p < polarizations; ++p) {
      const MemberResult& r = result.members[m * polarizations + p];
      for (std::size_t k = 0; k < times; ++k) member[k] += s.dipole_weight * (s.dipoles[p] * r.rho[k]).trace();
      record.statistics.steps += r.statistics.steps;
      record.statistics.rejected += r.statistics.rejected;
      record.statistics.rhs_evaluations += r.statistics.rhs_evaluations;
    }
    for (std::size_t k = 0; k < times; ++k) correlation[k] += member[k] / static_cast<double>(models.size());
    if (store) members.push_back(spectrum_of(config, member));
  }
  record.generator_kernel = to_string(result.members.front().kernel);
  record.spectrum = spectrum_of(config, correlation);
  for (const io::SpectrumRecord& m : members)
    record.spectrum->member_intensity.insert(record.spectrum->member_intensity.end(), m.intensity.begin(),
                                             m.intensity.end());
  return true;
}

/// What a spectrum of the steady state computes, and what more memory it takes than the steady state.
void print_steady_spectrum_plan(const io::RunConfig& config, const MemoryPlan& plan) {
  const io::SpectrumConfig& s = *config.spectrum;
  const io::UnitScale scale = io::unit_scale(config.units);
  if (s.method == io::SpectrumConfig::Method::frequency) {
    std::printf(
        "  spectrum    density of states (odd parity), in frequency: A(w) at %d frequencies from %g to %g %s, two "
        "GMRES solves each to relative residual %g\n",
        s.frequency_points, s.frequency_range[0], s.frequency_range[1], scale.energy_unit,
        s.solve_tolerance > 0.0 ? s.solve_tolerance : config.steady.tolerance);
    // (density_of_states_in_frequency's odd Solver and its Krylov vectors, beside the steady one)
    const std::uint64_t krylov = static_cast<std::uint64_t>(config.steady.work_vectors() + 1) * plan.bytes_per_vector;
    std::printf("              the odd hierarchy and its Krylov vectors: %s more\n",
                format_bytes(plan.bytes_total + krylov).c_str());
  } else {
    const bool power = s.kind == io::SpectrumConfig::Kind::power;
    std::printf("  spectrum    %s in the steady state, t = 0 .. %g %s\n",
                power ? "power: <Q^dagger(t) Q(0)>" : "density of states (odd parity): <{d(t), d^dagger(0)}>",
                config.t_end / scale.time, scale.time_unit);
    if (!power)  // (anticommutator_correlation's second Solver, beside the steady one)
      std::printf("              the odd propagations' hierarchy: %s more\n", format_bytes(plan.bytes_total).c_str());
  }
  std::fflush(stdout);
}

/// A power spectrum or density of states of the steady state into `record`: C(t) propagated from
/// it, or the density of states solved in frequency.
void steady_state_spectrum(const io::RunConfig& config, const MpiJob& job, const Devices& devices,
                           const MemoryPlan& plan, io::RunRecord& record) {
  const io::SpectrumConfig& s = *config.spectrum;
  const bool power = s.kind == io::SpectrumConfig::Kind::power;
  require_one_device(job, devices, power ? "a power spectrum" : "a density of states");
  print_steady_plan(config.steady, config, plan);
  print_steady_spectrum_plan(config, plan);
  const io::UnitScale scale = io::unit_scale(config.units);
  SolverOptions options = config.solver;
  Solver<Exec> solver(Exec(), config.model, config.depth, options);
  const SteadyStateReport report = solve_steady(solver, config, true);
  record.steady = steady_record(solver, report, config.steady, false, config.units);
  if (s.method == io::SpectrumConfig::Method::frequency) {
    record.spectrum = solved_density_of_states(config, solver);  // (nothing propagated: no steps)
    record.generator_kernel = to_string(solver.kernel());
    return;
  }
  const std::vector<double> times = config.output_times();
  std::vector<complex> correlation;
  if (power) {
    Progress progress(0.0, config.t_end, scale.time_unit, stderr);
    // (<Q^dagger> and <Q> of the steady state, before Q multiplies it.)
    const Matrix rho = solver.rho();
    const complex coherent = (s.op.adjoint() * rho).trace() * (s.op * rho).trace();
    correlation = correlation_function(solver, s.op.adjoint(), s.op, times, [&](double t) { progress.update(t); });
    if (s.incoherent)
      for (complex& c : correlation) c -= coherent;
    record.statistics = solver.statistics();
  } else {
    // Two propagations (d^dagger x and d x), each to t_end: progress over both.
    Progress progress(0.0, 2.0 * config.t_end, scale.time_unit, stderr);
    IntegratorStatistics propagations;
    correlation = anticommutator_correlation(
        solver, s.op, times, [&](double t) { progress.update(t); }, &propagations);
    record.statistics = propagations;
  }
  record.generator_kernel = to_string(solver.kernel());
  record.spectrum = spectrum_of(config, correlation);
}

}  // namespace

int run_spectrum(const io::RunConfig& config, const std::string& output_path, const MpiJob& job,
                 const Devices& devices) {
  const MemoryPlan plan = memory_plan(config, ado_shape(config), Observes::rho);
  if (job.rank() == 0) print_plan(config, plan, BackendTraits<Exec>::available_memory(Exec()), output_path);
  const auto start = std::chrono::steady_clock::now();
  io::RunRecord record = describe_run(config);
  record.times.clear();
  if (config.spectrum->kind == io::SpectrumConfig::Kind::absorption) {
    if (!absorption(config, job, devices, record)) return 0;
  } else {
    steady_state_spectrum(config, job, devices, plan, record);
  }
  record.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.threads = Exec().concurrency();
  io::write_run_record(output_path, record);
  const std::string work = record.spectrum->method == "frequency"
                               ? std::to_string(record.spectrum->solves) + " solves, " +
                                     std::to_string(record.spectrum->iterations) + " GMRES iterations"
                               : std::to_string(record.statistics.steps) + " steps";
  std::printf("done: %s spectrum, %zu frequencies, %s, %s; wrote %s\n", record.spectrum->kind.c_str(),
              record.spectrum->omega.size(), work.c_str(), format_duration(record.wall_time_s).c_str(),
              output_path.c_str());
  return 0;
}

}  // namespace heom::app
