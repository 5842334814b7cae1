// heom::run_ensemble: many independent hierarchies (static disorder, parameter sweeps, several
// initial states) spread over this process's devices or over the ranks of an MPI job.
//
//   std::vector<heom::EnsembleMember> members;
//   for (int r = 0; r < 64; ++r)
//     members.push_back({heom::Model(heom::with_diagonal_disorder(H, sigma, seed, r), baths), rho0});
//   heom::EnsembleOptions options;
//   options.depth = 4;
//   const heom::EnsembleResult result = heom::run_ensemble(exec, members, times, options);
//   // result.mean[t]: rho(t) averaged over the members; result.members[i].rho[t]: member i's.
#ifndef HEOM_ENSEMBLE_ENSEMBLE_HPP
#define HEOM_ENSEMBLE_ENSEMBLE_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/error.hpp"
#include "heom/core/detail/kokkos_compat.hpp"
#include "heom/distributed/communicator.hpp"
#include "heom/distributed/in_process.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/solver/solver.hpp"

namespace heom {

/// One hierarchy of an ensemble: its model and rho at the first output time.
struct EnsembleMember {
  Model model;
  Matrix rho0;
};

struct EnsembleOptions {
  /// The hierarchy depth of every member.
  int depth = 0;
  /// Every member's solver options. Its communicator and partition must be empty: a member runs
  /// whole on one device. memory_limit 0 with several devices: each gets an equal share of what the
  /// device reports.
  SolverOptions solver;
  /// Devices of this process that run members at once, each on its own execution-space instance
  /// (run_on_devices: on a CPU, an equal share of the host's threads each; on CUDA, GPUs).
  int devices = 1;
  /// On CUDA, the GPU of each device: device d on gpu_ids[d % gpu_ids.size()]; empty: GPU d.
  std::vector<int> gpu_ids;
  /// The ranks of a job to spread the members over, one device each (heom::MpiCommunicator; every
  /// rank calls run_ensemble with the same members); nullptr: this process alone.
  std::shared_ptr<const Communicator> ranks;
  /// Called on the reporting device (device 0 of rank 0) with the members finished so far (on every
  /// device and rank) and the total: after its steps, at most ten times a second, and after each of
  /// its members or batches.
  std::function<void(std::int64_t finished, std::int64_t total)> progress;
  /// Called on every device after each of its steps with its worker index (rank * devices + device)
  /// and the time its member (or batch) reached, from that device's thread; what it throws ends the
  /// ensemble as a failing member does (e.g. a cancellation).
  std::function<void(int worker, double time)> on_step;
  /// Up to this many members that differ in H alone (same_shape) run as one batch on a device: one
  /// generator launch over all their ADOs, one step size for all with each member's error held to the
  /// tolerances (Solver's batch constructor). What fills a GPU with small hierarchies. 1: every member
  /// alone, each bit-identical to its solo run; > 1: adaptive methods give each member a result within
  /// its tolerance of its solo run (fixed-step methods still its bits), the same however the batches
  /// are scheduled.
  int batch = 1;
};

/// What one member's run gave.
struct MemberResult {
  std::vector<Matrix> rho;  ///< rho at each output time
  /// [time][bath] with SolverOptions::observe_lead_currents: the current into each lead (Snapshot::lead_currents)
  std::vector<std::vector<complex>> lead_currents;
  IntegratorStatistics statistics;
  double wall_time_s = 0.0;                             ///< of its batch, when batched (as are the statistics)
  int worker = 0;                                       ///< the device that ran it: rank * devices + device
  GeneratorKernel kernel = GeneratorKernel::automatic;  ///< the generator kernel that ran it
};

struct EnsembleResult {
  std::vector<double> times;
  /// rho(t) averaged over every member, summed in member order (so the same bits however the members
  /// were scheduled). Empty when the members' dimensions differ.
  std::vector<Matrix> mean;
  /// In member order, on every rank.
  std::vector<MemberResult> members;
  int workers = 1;  ///< devices on all ranks
};

/// The order in which the members are handed out: the most expensive first (ADOs x n^2 x (n + K), the
/// generator's work per step), ties in member order, so that the last members to start are short
/// ones and the devices finish together.
std::vector<int> ensemble_schedule(const std::vector<EnsembleMember>& members, int depth);

/// The units of work handed out, in order: batches of up to `batch` members of one shape (same_shape,
/// and rho0 Hermitian or not alike: the same generator kernel for all), formed along
/// ensemble_schedule's order, the most expensive batch first.
std::vector<std::vector<int>> ensemble_batches(const std::vector<EnsembleMember>& members, int depth, int batch);

/// Runs every member to times.back() from rho0 at times.front(), observing rho at each of the
/// ascending `times`. Members (or batches: options.batch) are handed out dynamically in
/// ensemble_batches' order to whichever device is free; a member's result is the same bits on any
/// device and in any order (one Solver per member or batch, whose results do not depend on the number
/// of threads), and with batch 1 the bits of the member alone. With options.ranks, collective:
/// every rank returns the whole result. Throws the first failure (with several devices, after every
/// device has stopped; on ranks, a rank that throws leaves the others waiting: call
/// MpiCommunicator::abort, as the heom program does).
template <class ExecSpace>
EnsembleResult run_ensemble(const ExecSpace& exec, const std::vector<EnsembleMember>& members,
                            const std::vector<double>& times, const EnsembleOptions& options);

// ---------------------------------------------------------------------------------------------

/// The mean of rho(t) over `count` member results from `first`, summed in member order (the same bits
/// however the members were scheduled); empty if their dimensions differ.
std::vector<Matrix> ensemble_mean(const MemberResult* first, std::size_t count);

namespace impl {

/// A member's result as doubles, for gathering over ranks: [member, worker, kernel, steps, rejected,
/// evaluations, wall time, times, count, currents, then count complex numbers of rho and `currents` of
/// the lead currents].
void pack_member_result(int member, const MemberResult& result, std::vector<double>& out);
/// Reads every record of `packed` into `results` (indexed by member).
void unpack_member_results(const std::vector<double>& packed, const std::vector<EnsembleMember>& members,
                           std::vector<MemberResult>& results);

/// Runs one unit of work (a member alone, or a batch) on `exec`, its results into `results`.
template <class ExecSpace>
void run_batch(const ExecSpace& exec, const std::vector<EnsembleMember>& members, const std::vector<int>& batch,
               const std::vector<double>& times, int depth, const SolverOptions& solver_options, int worker,
               const std::function<void(double)>& on_step, std::vector<MemberResult>& results) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<Model> models;
  std::vector<Matrix> rho0;
  for (int i : batch) {
    models.push_back(members[i].model);
    rho0.push_back(members[i].rho0);
  }
  // One member: the plain solver (a batch of one would give the same bits, through the batch's paths).
  std::unique_ptr<Solver<ExecSpace>> solver;
  if (models.size() == 1) {
    solver = std::make_unique<Solver<ExecSpace>>(exec, models.front(), depth, solver_options);
    solver->set_initial_state(rho0.front(), times.front());
  } else {
    solver = std::make_unique<Solver<ExecSpace>>(exec, models, depth, solver_options);
    solver->set_initial_states(rho0, times.front());
  }
  std::vector<std::vector<Matrix>> rho(batch.size());
  for (auto& r : rho) r.reserve(times.size());
  std::vector<std::vector<std::vector<complex>>> currents(batch.size());
  solver->run(
      times,
      [&](const Snapshot<ExecSpace>& s) {
        for (std::size_t m = 0; m < batch.size(); ++m) {
          rho[m].push_back(s.rho(static_cast<int>(m)));
          if (!s.lead_currents.empty()) currents[m].push_back(s.lead_currents[m]);
        }
      },
      on_step);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (std::size_t m = 0; m < batch.size(); ++m) {
    MemberResult& r = results[batch[m]];
    r.rho = std::move(rho[m]);
    r.lead_currents = std::move(currents[m]);
    r.statistics = solver->statistics();
    r.kernel = solver->generator().kernel();
    r.wall_time_s = seconds;
    r.worker = worker;
  }
}

/// One device's loop: take the next unit of work (a member or a batch), run it, until none is left.
/// Appends the members it ran to `ran_here`.
template <class ExecSpace>
void run_members(const ExecSpace& exec, const std::vector<EnsembleMember>& members,
                 const std::vector<std::vector<int>>& work, const std::vector<double>& times,
                 const EnsembleOptions& options, const SolverOptions& solver_options, WorkCounter& counter, int worker,
                 bool reporter, std::vector<MemberResult>& results, std::vector<int>& ran_here) {
  using clock = std::chrono::steady_clock;
  const auto total = static_cast<std::int64_t>(members.size());
  auto last_report = clock::now();
  auto after_step = [&](double time) {
    if (options.on_step) options.on_step(worker, time);
    if (!reporter || !options.progress) return;
    const auto now = clock::now();
    if (now - last_report < std::chrono::milliseconds(100)) return;
    last_report = now;
    options.progress(counter.finished(), total);
  };
  for (std::int64_t unit = counter.take(); unit < static_cast<std::int64_t>(work.size()); unit = counter.take()) {
    run_batch(exec, members, work[unit], times, options.depth, solver_options, worker, after_step, results);
    for (int i : work[unit]) {
      ran_here.push_back(i);
      counter.finish_one();
    }
    if (reporter && options.progress) options.progress(counter.finished(), total);
  }
}

}  // namespace impl

template <class ExecSpace>
EnsembleResult run_ensemble(const ExecSpace& exec, const std::vector<EnsembleMember>& members,
                            const std::vector<double>& times, const EnsembleOptions& options) {
  if (members.empty()) throw Error("run_ensemble: the ensemble has no members");
  if (times.empty() || !std::is_sorted(times.begin(), times.end()))
    throw Error("run_ensemble: the output times must be non-empty and ascending");
  if (options.devices < 1) throw Error("run_ensemble: devices must be >= 1, got " + std::to_string(options.devices));
  if (options.solver.communicator || !options.solver.partition.empty())
    throw Error("run_ensemble: a member runs whole on one device (SolverOptions::communicator must be empty)");
  if (options.ranks && options.devices > 1)
    throw Error("run_ensemble: several devices per rank are not supported; run one rank per device");

  if (options.batch < 1) throw Error("run_ensemble: batch must be >= 1, got " + std::to_string(options.batch));
  const std::vector<std::vector<int>> work = ensemble_batches(members, options.depth, options.batch);
  SolverOptions solver_options = options.solver;

  EnsembleResult out;
  out.times = times;
  out.members.resize(members.size());
  std::vector<int> ran_here;  // the members this rank ran (ranks only)
  if (options.ranks) {
    const std::shared_ptr<WorkCounter> counter = options.ranks->make_work_counter();
    const int rank = options.ranks->rank();
    impl::run_members(exec, members, work, times, options, solver_options, *counter, rank, rank == 0, out.members,
                      ran_here);
    std::vector<double> packed;
    for (int i : ran_here) impl::pack_member_result(i, out.members[i], packed);
    impl::unpack_member_results(options.ranks->gather_all(packed), members, out.members);
    out.workers = options.ranks->size();
  } else if (options.devices == 1) {
    LocalWorkCounter counter;
    impl::run_members(exec, members, work, times, options, solver_options, counter, 0, true, out.members, ran_here);
  } else {
    // Devices that share a memory (a CPU's, or one GPU's) share what it has free.
    std::vector<std::uint64_t> shares;
    try {
      shares = impl::memory_shares(exec, options.devices, options.gpu_ids);
    } catch (const std::invalid_argument& e) {
      throw Error(std::string("devices: ") + e.what());
    }
    run_on_devices(
        exec, options.devices,
        [&](const ExecSpace& instance, int d, std::shared_ptr<const Communicator> c) {
          SolverOptions mine_options = solver_options;
          if (mine_options.memory_limit == 0) mine_options.memory_limit = shares[d];
          const std::shared_ptr<WorkCounter> counter = c->make_work_counter();
          std::vector<int> mine;
          impl::run_members(instance, members, work, times, options, mine_options, *counter, d, d == 0, out.members,
                            mine);
        },
        options.gpu_ids);
    out.workers = options.devices;
  }
  out.mean = ensemble_mean(out.members.data(), out.members.size());
  return out;
}

}  // namespace heom

#endif
