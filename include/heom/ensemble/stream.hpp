// heom::stream_ensemble: an ensemble whose members are made when they are scheduled and whose results
// reach rank 0 one at a time, in member order, so that no rank holds every member or every result
// (10^6-10^7 members: disorder averages).
//
//   heom::EnsembleStream stream;
//   stream.members = 1000000;
//   stream.make = [&](std::int64_t i) {
//     return heom::EnsembleMember{heom::Model(heom::with_diagonal_disorder(H, sigma, seed, i), baths), rho0};
//   };
//   stream.sink = [&](std::int64_t i, heom::MemberResult&& r) { /* write member i */ };
//   const heom::EnsembleSummary summary = heom::stream_ensemble(exec, stream, times, options);
//   // summary.mean[t] on rank 0: the same bits as heom::ensemble_mean over every member's result.
#ifndef HEOM_ENSEMBLE_STREAM_HPP
#define HEOM_ENSEMBLE_STREAM_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/error.hpp"
#include "heom/distributed/communicator.hpp"
#include "heom/distributed/in_process.hpp"
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
  /// rank calls with the same members); nullptr: this process alone.
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
  /// are scheduled (a member's bits depend on which members share its batch, not on when it runs).
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

/// An ensemble given member by member: how many, how to make member i, how they are grouped into units
/// of work, and where each result goes.
struct EnsembleStream {
  std::int64_t members = 0;
  /// Member i (0 <= i < members), called when its unit is scheduled, on the thread of the device that
  /// runs it (with several devices, from several threads at once), on any rank: it must give the same
  /// member for the same i wherever it is called.
  std::function<EnsembleMember(std::int64_t index)> make;
  /// The units of work in the order they are handed out: unit(u) for u < units, each up to
  /// EnsembleOptions::batch members, every member in exactly one. Consecutive members of one shape
  /// (same_shape, and rho0 Hermitian or not alike) in a unit run as one batch. units 0: the members in
  /// member order, EnsembleOptions::batch consecutive ones at a time. Members handed out far from
  /// member order make results wait on rank 0 (see sink).
  std::int64_t units = 0;
  std::function<std::vector<std::int64_t>(std::int64_t unit)> unit;
  /// On rank 0, each member's result in member order (0, 1, 2, ...), one call at a time, from whichever
  /// thread of rank 0 completed that order. A result that finishes before those of every earlier member
  /// waits in a reorder buffer on rank 0 until they have; in member order that buffer holds about the
  /// results of the members that ran while the oldest running one did. What it throws ends the ensemble
  /// as a failing member does.
  std::function<void(std::int64_t index, MemberResult&& result)> sink;
};

/// What stream_ensemble returns (the members' results went to the sink).
struct EnsembleSummary {
  std::vector<double> times;
  /// On rank 0: rho(t) averaged over every member, summed in member order: the bits of ensemble_mean
  /// over every member's result, however they were scheduled. Empty when the members' dimensions
  /// differ, and on other ranks.
  std::vector<Matrix> mean;
  std::int64_t members = 0;
  int workers = 1;            ///< devices on all ranks
  std::size_t most_held = 0;  ///< on rank 0: the most results its reorder buffer held at once
};

/// Runs every member of `stream` to times.back() from rho0 at times.front(), observing rho at each of
/// the ascending `times`, and hands each result to stream.sink on rank 0 in member order. Units are
/// handed out dynamically, in order, to whichever device (or rank) is free; a member's result is the
/// same bits on any device and in any order. With options.ranks, collective: every rank calls it with
/// the same stream (sink is called on rank 0 alone), other ranks send each result to rank 0 as it
/// finishes (Communicator::send_to_root); rank 0 receives them between its own steps. Throws the
/// first failure (with several devices, after every device has stopped; on ranks, a rank that throws
/// leaves the others waiting: call MpiCommunicator::abort, as the heom program does).
template <class ExecSpace>
EnsembleSummary stream_ensemble(const ExecSpace& exec, const EnsembleStream& stream, const std::vector<double>& times,
                                const EnsembleOptions& options);

// ---------------------------------------------------------------------------------------------

namespace impl {

/// Throws heom::Error on what an ensemble of `members` members cannot run with.
void check_ensemble(std::int64_t members, const std::vector<double>& times, const EnsembleOptions& options);

/// A member's result as doubles, for sending between ranks: [member, worker, kernel, steps, rejected,
/// evaluations, wall time, times, n, baths (0 without lead currents), then times n^2 complex numbers
/// of rho and times x baths of the lead currents].
void pack_member_result(std::int64_t member, const MemberResult& result, std::vector<double>& out);
/// Reads every record of `packed`, handing each to `take(member, result)`.
void unpack_member_results(const std::vector<double>& packed,
                           const std::function<void(std::int64_t, MemberResult&&)>& take);

/// Rank 0's reorder buffer: results in any order in, to the sink and the running mean in member order.
/// Thread-safe (the devices of one process hand their results in at once).
class OrderedResults {
 public:
  OrderedResults(std::int64_t members, std::function<void(std::int64_t, MemberResult&&)> sink);
  void add(std::int64_t member, MemberResult&& result);
  /// Results added so far (handed on, or waiting).
  std::int64_t added() const;
  /// After every member's result: their mean (ensemble_mean's bits), or empty if dimensions differ.
  std::vector<Matrix> mean() const;
  std::size_t most_held() const;

 private:
  void hand_on(std::int64_t member, MemberResult&& result);
  mutable std::mutex m_lock;
  std::int64_t m_members, m_next = 0, m_added = 0;
  std::function<void(std::int64_t, MemberResult&&)> m_sink;
  std::map<std::int64_t, MemberResult> m_waiting;
  std::size_t m_most_held = 0;
  std::vector<Matrix> m_sum;
  bool m_alike = true;
};

/// A rank's way to rank 0's OrderedResults: rank 0 adds its own results and receives the others'
/// between its steps (poll); other ranks send theirs. finish(): rank 0 waits for every result, the
/// others for their sends to be delivered.
class RankResults {
 public:
  RankResults(const Communicator& ranks, OrderedResults* results /* rank 0's; nullptr elsewhere */);
  void deliver(std::int64_t member, MemberResult&& result);
  void poll();
  void finish(std::int64_t members);

 private:
  const Communicator& m_ranks;
  OrderedResults* m_results;
  std::vector<double> m_buffer;
};

/// The members of each unit of a stream: its own units, or member order `batch` at a time.
struct UnitPlan {
  UnitPlan(const EnsembleStream& stream, int batch);
  std::int64_t count = 0;
  std::vector<std::int64_t> members_of(std::int64_t unit) const;

 private:
  const EnsembleStream& m_stream;
  std::int64_t m_batch;
};

/// Runs `members` (of one shape) on `exec` as one solver (a member alone, or a batch).
template <class ExecSpace>
std::vector<MemberResult> run_batch(const ExecSpace& exec, std::vector<EnsembleMember> members,
                                    const std::vector<double>& times, int depth, const SolverOptions& solver_options,
                                    int worker, const std::function<void(double)>& on_step) {
  const auto start = std::chrono::steady_clock::now();
  // One member: the plain solver (a batch of one would give the same bits, through the batch's paths).
  std::unique_ptr<Solver<ExecSpace>> solver;
  if (members.size() == 1) {
    solver = std::make_unique<Solver<ExecSpace>>(exec, members.front().model, depth, solver_options);
    solver->set_initial_state(members.front().rho0, times.front());
  } else {
    std::vector<Model> models;
    std::vector<Matrix> rho0;
    for (EnsembleMember& m : members) {
      models.push_back(std::move(m.model));
      rho0.push_back(std::move(m.rho0));
    }
    solver = std::make_unique<Solver<ExecSpace>>(exec, models, depth, solver_options);
    solver->set_initial_states(rho0, times.front());
  }
  std::vector<MemberResult> results(members.size());
  for (MemberResult& r : results) r.rho.reserve(times.size());
  solver->run(
      times,
      [&](const Snapshot<ExecSpace>& s) {
        for (std::size_t m = 0; m < results.size(); ++m) {
          results[m].rho.push_back(s.rho(static_cast<int>(m)));
          if (!s.lead_currents.empty()) results[m].lead_currents.push_back(s.lead_currents[m]);
        }
      },
      on_step);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (MemberResult& r : results) {
    r.statistics = solver->statistics();
    r.kernel = solver->kernel();
    r.wall_time_s = seconds;
    r.worker = worker;
  }
  return results;
}

/// One device's loop: take the next unit, make its members, run each run of consecutive members of one
/// shape as a batch, deliver each result, until no unit is left. `poll` (may be empty) runs after each
/// step and unit: rank 0 receives the other ranks' results there.
template <class ExecSpace>
void run_units(const ExecSpace& exec, const EnsembleStream& stream, const UnitPlan& units,
               const std::vector<double>& times, const EnsembleOptions& options, const SolverOptions& solver_options,
               WorkCounter& counter, int worker, bool reporter,
               const std::function<void(std::int64_t, MemberResult&&)>& deliver, const std::function<void()>& poll) {
  using clock = std::chrono::steady_clock;
  auto last_report = clock::now();
  auto after_step = [&](double time) {
    if (options.on_step) options.on_step(worker, time);
    if (poll) poll();
    if (!reporter || !options.progress) return;
    const auto now = clock::now();
    if (now - last_report < std::chrono::milliseconds(100)) return;
    last_report = now;
    options.progress(counter.finished(), stream.members);
  };
  for (std::int64_t unit = counter.take(); unit < units.count; unit = counter.take()) {
    const std::vector<std::int64_t> indices = units.members_of(unit);
    std::vector<EnsembleMember> made;
    made.reserve(indices.size());
    for (std::int64_t i : indices) made.push_back(stream.make(i));
    for (std::size_t first = 0; first < made.size();) {
      std::size_t last = first + 1;
      while (last < made.size() && same_shape(made[first].model, made[last].model) &&
             hermitian_start(made[first].rho0) == hermitian_start(made[last].rho0))
        ++last;
      std::vector<EnsembleMember> run(std::make_move_iterator(made.begin() + first),
                                      std::make_move_iterator(made.begin() + last));
      std::vector<MemberResult> results =
          run_batch(exec, std::move(run), times, options.depth, solver_options, worker, after_step);
      for (std::size_t m = 0; m < results.size(); ++m) {
        deliver(indices[first + m], std::move(results[m]));
        counter.finish_one();
      }
      first = last;
    }
    if (poll) poll();
    if (reporter && options.progress) options.progress(counter.finished(), stream.members);
  }
}

}  // namespace impl

template <class ExecSpace>
EnsembleSummary stream_ensemble(const ExecSpace& exec, const EnsembleStream& stream, const std::vector<double>& times,
                                const EnsembleOptions& options) {
  impl::check_ensemble(stream.members, times, options);
  if (!stream.make) throw Error("stream_ensemble: the stream has no member factory (EnsembleStream::make)");
  const impl::UnitPlan units(stream, options.batch);
  EnsembleSummary out;
  out.times = times;
  out.members = stream.members;
  const bool root = !options.ranks || options.ranks->rank() == 0;
  std::unique_ptr<impl::OrderedResults> results;
  if (root) results = std::make_unique<impl::OrderedResults>(stream.members, stream.sink);
  auto add = [&](std::int64_t i, MemberResult&& r) { results->add(i, std::move(r)); };
  if (options.ranks) {
    const std::shared_ptr<WorkCounter> counter = options.ranks->make_work_counter();
    const int rank = options.ranks->rank();
    impl::RankResults ranks(*options.ranks, results.get());
    impl::run_units(
        exec, stream, units, times, options, options.solver, *counter, rank, root,
        [&](std::int64_t i, MemberResult&& r) { ranks.deliver(i, std::move(r)); },
        root ? std::function<void()>([&] { ranks.poll(); }) : std::function<void()>());
    ranks.finish(stream.members);
    out.workers = options.ranks->size();
  } else if (options.devices == 1) {
    LocalWorkCounter counter;
    impl::run_units(exec, stream, units, times, options, options.solver, counter, 0, true, add, {});
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
          SolverOptions mine = options.solver;
          if (mine.memory_limit == 0) mine.memory_limit = shares[d];
          const std::shared_ptr<WorkCounter> counter = c->make_work_counter();
          impl::run_units(instance, stream, units, times, options, mine, *counter, d, d == 0, add, {});
        },
        options.gpu_ids);
    out.workers = options.devices;
  }
  if (root) {
    out.mean = results->mean();
    out.most_held = results->most_held();
  }
  return out;
}

}  // namespace heom

#endif
