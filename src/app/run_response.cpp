// `heom run` with a [response]: the third-order response of the exciton model's manifolds, and its 2D
// spectra at each waiting time.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "heom/core/backend_traits.hpp"
#include "heom/distributed/communicator.hpp"
#include "heom/solver/response.hpp"
#include "io/hdf5_output.hpp"
#include "io/spectrum.hpp"
#include "io/units.hpp"
#include "plans.hpp"
#include "progress.hpp"
#include "run_steady.hpp"

namespace heom::app {

namespace {

std::string joined_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string polarization_text(const io::RunConfig& c) {
  return c.response->settings.polarization +
         (c.response->options.polarization.isotropic ? ", isotropic average" : ", in the lab frame");
}

/// Each waiting time's 2D spectra of `r` into `record`, in the input's units, cropped to the range.
void transform(const io::RunConfig& config, const ThirdOrderResponse& r, io::ResponseRecord& record) {
  const io::ResponseConfig& rc = *config.response;
  const io::UnitScale scale = io::unit_scale(config.units);
  // (The input asks for at least two points on each axis.)
  const int n1 = static_cast<int>(r.t1.size()), n3 = static_cast<int>(r.t3.size());
  const std::size_t signals = r.signals.size();
  std::vector<io::Spectrum2D> spectra;  // [T][signal]
  for (std::size_t b = 0; b < r.waiting_times.size(); ++b)
    for (std::size_t s = 0; s < signals; ++s) {
      std::vector<complex> samples(static_cast<std::size_t>(n1) * n3, 0.0);
      for (std::size_t p = 0; p < r.pathways.size(); ++p)
        for (int a = 0; a < n1; ++a)
          for (int c = 0; c < n3; ++c)
            samples[static_cast<std::size_t>(a) * n3 + c] +=
                r(static_cast<int>(s), static_cast<int>(p), static_cast<int>(b), a, c);
      const int sign1 = r.signals[s] == ResponseSignal::rephasing ? -1 : 1;
      spectra.push_back(io::two_dimensional_spectrum(samples, n1, n3, rc.options.t1_step, rc.options.t3_step, sign1,
                                                     rc.window, rc.padding));
    }
  const io::Spectrum2D& grid = spectra.front();
  std::vector<std::size_t> keep1, keep3;
  auto kept = [&](double omega) {
    return rc.frequency_range.empty() || (omega >= rc.frequency_range[0] && omega <= rc.frequency_range[1]);
  };
  for (std::size_t i = 0; i < grid.omega1.size(); ++i)
    if (kept(grid.omega1[i] / scale.energy)) {
      keep1.push_back(i);
      record.omega1.push_back(grid.omega1[i] / scale.energy);
    }
  for (std::size_t i = 0; i < grid.omega3.size(); ++i)
    if (kept(grid.omega3[i] / scale.energy)) {
      keep3.push_back(i);
      record.omega3.push_back(grid.omega3[i] / scale.energy);
    }
  // Per unit of the output's w1 and w3, as the linear spectra are per unit of w.
  const double per_unit = scale.energy * scale.energy;
  const std::size_t m3 = grid.omega3.size();
  record.signal_spectra.assign(signals * r.waiting_times.size() * keep1.size() * keep3.size(), 0.0);
  for (std::size_t b = 0; b < r.waiting_times.size(); ++b)
    for (std::size_t k1 = 0; k1 < keep1.size(); ++k1)
      for (std::size_t k3 = 0; k3 < keep3.size(); ++k3) {
        complex sum = 0.0;
        for (std::size_t s = 0; s < signals; ++s) {
          const complex value = per_unit * spectra[b * signals + s].values[keep1[k1] * m3 + keep3[k3]];
          sum += value;
          record.signal_spectra[((s * r.waiting_times.size() + b) * keep1.size() + k1) * keep3.size() + k3] = value;
        }
        record.absorptive.push_back(sum.real());  // [T][w1][w3]
      }
  record.frequency_unit = scale.energy_unit;
  record.window = io::to_string(rc.window);
  record.padding = rc.padding;
}

}  // namespace

void print_response_plan(const io::RunConfig& c) {
  const io::ResponseConfig& r = *c.response;
  const io::UnitScale scale = io::unit_scale(c.units);
  const ExcitonManifolds& m = r.manifolds;
  const ResponseWork work = response_work(m, r.options);
  std::vector<std::string> pathways, signals;
  for (const Pathway p : resolved_pathways(m, r.options)) pathways.push_back(to_string(p));
  for (const ResponseSignal s : resolved_signals(r.options)) signals.push_back(to_string(s));
  std::printf("  response    manifolds: g, %d one-exciton and %zu two-exciton states (%d levels)", m.sites,
              m.pairs.size(), m.dimension());
  if (m.two_exciton && r.biexciton_shift != 0.0)
    std::printf(", biexciton shift %g %s", r.biexciton_shift, scale.energy_unit);
  std::printf("\n              %s; %s; %s\n", joined_names(pathways).c_str(), joined_names(signals).c_str(),
              polarization_text(c).c_str());
  const ResponseOptions& o = r.options;
  std::printf("              t1 = 0 .. %g %s every %g (%d), t3 = 0 .. %g every %g (%d), waiting times",
              (o.t1_points - 1) * o.t1_step / scale.time, scale.time_unit, o.t1_step / scale.time, o.t1_points,
              (o.t3_points - 1) * o.t3_step / scale.time, o.t3_step / scale.time, o.t3_points);
  for (double w : o.waiting_times) std::printf(" %g", w / scale.time);
  std::printf(" %s\n", scale.time_unit);
  if (work.one_exciton_levels > 0)
    std::printf("              the bleach and stimulated emission on the %d levels without the two-exciton states\n",
                work.one_exciton_levels);
  if (const std::uint64_t side = response_side_bytes(c); side > 0)
    std::printf("              the bleach and emission's smaller states beside the whole model's: %s more memory\n",
                format_bytes(side).c_str());
  std::printf(
      "              propagations: %lld through t1, %lld through the waiting times, %lld through t3: %.4g %s in "
      "all\n",
      static_cast<long long>(work.t1_legs), static_cast<long long>(work.waiting_legs),
      static_cast<long long>(work.t3_legs), work.propagated_time / scale.time, scale.time_unit);
}

namespace {

/// The run's response: its model's, or the mean of its [ensemble] members' responses (each member's
/// R, not its spectrum). The ranks take members as they become free (a shared counter: disorder makes
/// members' costs differ); every member's R is gathered and summed in member order, so that any number
/// of ranks gives the same bits. On the ranks but 0: nullopt.
struct ResponseRun {
  ThirdOrderResponse r;  ///< the mean; its propagations and statistics summed over the members
  GeneratorKernel kernel = GeneratorKernel::automatic;
  std::vector<long long> member_steps;
  std::vector<int> member_ranks;
};

std::optional<ResponseRun> compute_response(const io::RunConfig& config, const MpiJob& job) {
  const io::ResponseConfig& rc = *config.response;
  const std::shared_ptr<const Communicator> ranks = job.mpi_communicator();
  const int part = ranks ? ranks->rank() : 0;
  const std::int64_t members = config.ensemble ? static_cast<std::int64_t>(config.ensemble->members.size()) : 1;
  const std::shared_ptr<WorkCounter> counter =
      ranks ? ranks->make_work_counter() : std::make_shared<LocalWorkCounter>();
  const std::int64_t legs = response_work(rc.manifolds, rc.options).t3_legs;
  Progress progress(0.0, static_cast<double>(legs * members), "", part == 0 ? stderr : nullptr, "propagations");
  // Per member: its index, rank and kernel, R's values (re, im), propagations, steps, rejected and
  // evaluations (every member's R has the same size).
  ResponseRun run;
  run.r = zero_response(rc.manifolds, rc.options);
  const std::size_t values = run.r.values.size(), chunk = 3 + 2 * values + 4;
  std::vector<double> mine;
  for (std::int64_t m = counter->take(); m < members; m = counter->take()) {
    const ExcitonManifolds manifolds =
        config.ensemble ? io::member_manifolds(rc, config.ensemble->members[static_cast<std::size_t>(m)].model)
                        : rc.manifolds;
    const Propagator<Exec> propagator(Exec(), manifolds.model, config.depth, config.solver);
    const std::int64_t finished = counter->finished();
    const ThirdOrderResponse r = third_order_response(
        propagator, manifolds, rc.options,
        [&](std::int64_t done, std::int64_t) { progress.update(static_cast<double>(finished * legs + done)); });
    counter->finish_one();
    mine.push_back(static_cast<double>(m));
    mine.push_back(static_cast<double>(part));
    mine.push_back(static_cast<double>(propagator.generator().kernel(InputForm::general)));
    for (const complex& v : r.values) {
      mine.push_back(v.real());
      mine.push_back(v.imag());
    }
    for (const std::int64_t c :
         {r.propagations, r.statistics.steps, r.statistics.rejected, r.statistics.rhs_evaluations})
      mine.push_back(static_cast<double>(c));
  }
  progress.finish();
  const std::vector<double> all = ranks ? ranks->gather_all(mine) : mine;
  if (part != 0) return std::nullopt;
  std::vector<const double*> member(static_cast<std::size_t>(members), nullptr);
  for (std::size_t at = 0; at + chunk <= all.size(); at += chunk) member[static_cast<std::size_t>(all[at])] = &all[at];
  ThirdOrderResponse& mean = run.r;
  run.kernel = static_cast<GeneratorKernel>(static_cast<int>(member.front()[2]));
  for (const double* x : member) {
    for (std::size_t k = 0; k < values; ++k) mean.values[k] += complex(x[3 + 2 * k], x[4 + 2 * k]);
    const double* counts = x + 3 + 2 * values;
    mean.propagations += static_cast<std::int64_t>(counts[0]);
    mean.statistics.steps += static_cast<std::int64_t>(counts[1]);
    mean.statistics.rejected += static_cast<std::int64_t>(counts[2]);
    mean.statistics.rhs_evaluations += static_cast<std::int64_t>(counts[3]);
    run.member_steps.push_back(static_cast<long long>(counts[1]));
    run.member_ranks.push_back(static_cast<int>(x[1]));
  }
  for (complex& v : mean.values) v /= static_cast<double>(members);
  return run;
}

/// /ensemble for the members of a response: their H (the input's energy unit), steps and ranks.
io::EnsembleRecord ensemble_record(const io::RunConfig& config, const ResponseRun& run) {
  const io::EnsembleConfig& e = *config.ensemble;
  io::EnsembleRecord out;
  describe_ensemble(config, out);
  for (std::size_t m = 0; m < e.members.size(); ++m) {
    const Matrix h = e.members.hamiltonian(m);
    out.hamiltonians.insert(out.hamiltonians.end(), h.data(), h.data() + h.rows() * h.cols());
  }
  out.steps = run.member_steps;
  out.workers = run.member_ranks;
  return out;
}

}  // namespace

int run_response(const io::RunConfig& config, const std::string& output_path, const MpiJob& job,
                 const Devices& devices) {
  if (devices.count > 1 || (job.communicator() && !config.ensemble))
    throw io::InputError(std::string("--devices: a [response] runs on one device") +
                         (config.ensemble ? " per process (its [ensemble] members spread over MPI ranks)"
                                          : "; its [ensemble] members, where it has them, spread over MPI ranks"));
  const io::UnitScale scale = io::unit_scale(config.units);
  const std::shared_ptr<const Communicator> ranks = job.mpi_communicator();
  if (job.rank() == 0) {
    const MemoryPlan plan = memory_plan(config, AdoShape::square, Observes::rho);
    print_plan(config, plan, BackendTraits<Exec>::available_memory(Exec()), output_path);
    if (config.ensemble) print_ensemble_plan(config, ranks ? ranks->describe() : "1 device");
  }
  const auto start = std::chrono::steady_clock::now();
  const std::optional<ResponseRun> run = compute_response(config, job);
  if (!run) return 0;
  const ThirdOrderResponse& r = run->r;

  io::RunRecord record = describe_run(config);
  record.times.clear();
  record.statistics = r.statistics;
  record.generator_kernel = to_string(run->kernel);
  if (config.ensemble) {
    record.ensemble = ensemble_record(config, *run);
    record.devices = ranks ? ranks->describe() : record.devices;
  }
  io::ResponseRecord out;
  for (double t : r.t1) out.t1.push_back(t / scale.time);
  for (double t : r.waiting_times) out.waiting_times.push_back(t / scale.time);
  for (double t : r.t3) out.t3.push_back(t / scale.time);
  for (const ResponseSignal s : r.signals) out.signals.push_back(to_string(s));
  for (const Pathway p : r.pathways) out.pathways.push_back(to_string(p));
  out.values = r.values;
  out.polarization = polarization_text(config);
  out.definition =
      "R(t3, T, t1) per signal and pathway without the factor i^3: tr[mu- G(t3) V3 G(T) V2 G(t1) V1 |g><g|] with "
      "each V a dipole from the left or right, every ADO; excited-state absorption enters with its minus sign" +
      std::string(config.ensemble ? "; the mean over the [ensemble] members" : "");
  out.propagations = r.propagations;
  transform(config, r, out);
  record.response = std::move(out);
  record.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.threads = Exec().concurrency();
  io::write_run_record(output_path, record);
  std::printf("done: third-order response%s, %lld propagations, %lld steps, %s; wrote %s\n",
              config.ensemble ? (" of " + std::to_string(config.ensemble->members.size()) + " members").c_str() : "",
              static_cast<long long>(r.propagations), static_cast<long long>(r.statistics.steps),
              format_duration(record.wall_time_s).c_str(), output_path.c_str());
  return 0;
}

}  // namespace heom::app
