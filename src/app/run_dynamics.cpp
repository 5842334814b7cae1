// Running one hierarchy's dynamics for `heom run`: each device's share, its checkpoints, and the output.
#include "run_dynamics.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "app.hpp"
#include "heom/core/backend_traits.hpp"
#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/distributed/in_process.hpp"
#include "heom/generator/options.hpp"
#include "heom/hierarchy/memory_plan.hpp"
#include "heom/solver/solver.hpp"
#include "io/checkpoint.hpp"
#include "io/hdf5_output.hpp"
#include "io/units.hpp"
#include "plans.hpp"
#include "progress.hpp"
#include "stop_signals.hpp"
#include "test_hooks.hpp"

namespace heom::app {
namespace {

/// Thrown from a step boundary once every device has written its part of the checkpoint a signal
/// asked for; the device's ShareRun::run returns with `stopped`.
struct StopAfterCheckpoint {};

/// How one device's share of a run ended.
struct ShareOutcome {
  bool stopped = false;  ///< by a signal, after writing its part of a checkpoint
  double time = 0.0;     ///< (in solver units)
  int parts = 1;         ///< of the checkpoint
};

/// The solver options of one device's share: the run's, with its communicator (none: the whole
/// hierarchy), observing the leads' currents where there are leads.
SolverOptions share_options(const io::RunConfig& config, std::shared_ptr<const Communicator> communicator) {
  SolverOptions options = config.solver;
  options.communicator = std::move(communicator);
  options.observe_lead_currents = config.model.has_fermionic_bath();
  return options;
}

/// One device's part of a run: its solver (a share of the hierarchy with a communicator, all of it
/// without), started from rho0 or the checkpoint to resume, stepped to the end or to a stop, writing
/// its part of each checkpoint; the device holding rho fills the run's record. `reporter` prints
/// and draws progress. `device` names it for the test hooks.
class ShareRun {
 public:
  ShareRun(const Exec& exec, const io::RunConfig& config, std::shared_ptr<const Communicator> communicator, int device,
           bool reporter, const CheckpointPlan& plan)
      : exec_(exec),
        config_(config),
        communicator_(std::move(communicator)),
        device_(device),
        reporter_(reporter),
        plan_(plan),
        scale_(io::unit_scale(config.units)),
        start_(std::chrono::steady_clock::now()),
        solver_(exec, config.model, config.depth, share_options(config, communicator_)),
        part_(communicator_ ? communicator_->rank() : 0),
        parts_(communicator_ ? communicator_->size() : 1) {}

  /// The run; the device holding rho fills `record` (else it stays empty).
  void run(io::RunRecord& record, ShareOutcome& outcome) {
    outcome.parts = parts_;
    start_state();
    if (reporter_) report();
    const std::vector<double> all_times = config_.output_times();
    outcome.stopped = !step_through(times_ahead(all_times));
    outcome.time = solver_.time();
    if (solver_.owns_rho()) fill_record(record, all_times, outcome.stopped);
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

  /// rho0, or the checkpoint to resume. Whatever is wrong with the checkpoint (checked before the
  /// run, but a part could be damaged inside) is the input's fault: StateMismatchError, exit 2, also
  /// from a device of this process.
  void start_state() {
    if (plan_.resume.empty()) {
      solver_.set_initial_state(config_.rho0);
      return;
    }
    try {
      io::Checkpoint c =
          io::read_checkpoint(plan_.resume, solver_.first_ado(), solver_.generator().num_ados(), solver_.owns_rho());
      solver_.load_state(c.solver, c.vectors.get());
      rho_ = std::move(c.rho);
      current_ = std::move(c.current);  // (check_checkpoint_plan saw that it holds them where it must)
      wall_before_ = c.wall_time_s;
      sequence_ = c.sequence;
    } catch (const StateMismatchError&) {
      throw;
    } catch (const Error& e) {
      throw StateMismatchError(e.what());
    }
  }

  void report() const {
    std::printf("  generator   %s kernel\n", to_string(solver_.kernel()));
    if (const Distribution* d = solver_.distribution())
      std::printf("  devices     %s; device 0 owns %d ADOs and reads %zu more\n", d->communicator->describe().c_str(),
                  d->plan.owned, d->plan.halo.size());
    if (!plan_.resume.empty())
      std::printf("  resumed     at t = %g %s from %s (%lld steps done)\n", solver_.time() / scale_.time,
                  scale_.time_unit, plan_.resume.c_str(), static_cast<long long>(solver_.statistics().steps));
    std::fflush(stdout);
  }

  /// The output times still ahead (those up to the resumed time were observed before the checkpoint).
  std::vector<double> times_ahead(const std::vector<double>& all_times) const {
    std::vector<double> times;
    for (double t : all_times)
      if (t > solver_.time() || (t == 0.0 && solver_.time() == 0.0)) times.push_back(t);
    if (solver_.owns_rho() && rho_.size() + times.size() != all_times.size())
      throw StateMismatchError("checkpoint " + plan_.resume + " holds rho at " + std::to_string(rho_.size()) +
                               " output times, but " + std::to_string(all_times.size() - times.size()) +
                               " lie before its time");
    return times;
  }

  /// Steps through `times`, writing the checkpoints due; false where a signal stopped the run after one.
  bool step_through(const std::vector<double>& times) {
    const InjectedFailure failure = InjectedFailure::from_environment();
    const SignalHooks hooks = SignalHooks::from_environment();
    long long steps = 0;
    // Clears its line however the run ends; only the reporting device draws it.
    Progress progress(solver_.time() / scale_.time, config_.t_end / scale_.time, scale_.time_unit,
                      reporter_ ? stderr : nullptr);
    try {
      solver_.run(
          times, [&](const Snapshot<Exec>& s) { observe(s); },
          [&](double t) {
            progress.update(t / scale_.time);
            failure.check(device_, ++steps);
            if (plan_.path.empty()) return;  // (no checkpoints: the bundled example)
            if (device_ == hooks.device && steps == hooks.step) std::raise(SIGTERM);
            const double wanted = checkpoint_wanted();
            if (wanted == 0.0) return;
            write_checkpoint(hooks, progress);
            if (wanted == 2.0) throw StopAfterCheckpoint{};
          });
    } catch (const StopAfterCheckpoint&) {
      return false;
    }
    return true;
  }

  void observe(const Snapshot<Exec>& s) {
    rho_.push_back(s.rho());
    if (!s.lead_currents.empty())
      for (const complex& c : s.lead_currents.front()) current_.push_back(c * scale_.time);  // (per output time unit)
  }

  /// At a step boundary, the same on every device: 0 no checkpoint, 1 one is due, 2 a signal asks for
  /// one and a stop.
  double checkpoint_wanted() const {
    double wanted = stop_signal() != 0 ? 2.0 : 0.0;
    if (wanted == 0.0 && ((plan_.every.steps > 0 && solver_.statistics().steps % plan_.every.steps == 0) ||
                          (plan_.every.seconds > 0.0 && elapsed() - last_checkpoint_ >= plan_.every.seconds)))
      wanted = 1.0;
    return communicator_ ? communicator_->max(wanted) : wanted;
  }

  /// This device's part of a checkpoint, in place once every device's is.
  void write_checkpoint(const SignalHooks& hooks, Progress& progress) {
    io::Checkpoint c;
    c.part = part_;
    c.parts = parts_;
    c.partition = {0, static_cast<long long>(solver_.hierarchy().size())};
    if (const Distribution* d = solver_.distribution())
      c.partition.assign(d->partition.boundaries().begin(), d->partition.boundaries().end());
    c.sequence = ++sequence_;
    c.block = config_.model.dimension() * config_.model.dimension();
    c.wall_time_s = wall_before_ + elapsed();
    if (solver_.owns_rho()) {
      c.input_text = config_.input_text;
      c.rho = rho_;
      c.current = current_;
    }
    // The vectors go into the file one at a time, as they reach the host.
    const auto save = [&](VectorStore& vectors) {
      SolverState state = solver_.save_state(&vectors);
      state.fingerprint.insert(state.fingerprint.end(), plan_.output_fingerprint.begin(),
                               plan_.output_fingerprint.end());
      return state;
    };
    // Parts 1, 2, ... go into place first (under names that alternate, so the previous checkpoint's
    // stay); part 0 last, once every other part is written: until then the previous checkpoint is whole.
    io::write_checkpoint(plan_.path, std::move(c), save, [&] {
      if (hooks.delay > 0.0) std::this_thread::sleep_for(std::chrono::duration<double>(hooks.delay));
      if (communicator_ && part_ == 0) communicator_->max(0.0);
    });
    if (communicator_ && part_ != 0) communicator_->max(0.0);  // (meets part 0's, before its rename)
    if (communicator_) communicator_->max(0.0);                // part 0 is in place
    last_checkpoint_ = elapsed();
    char note[64];
    std::snprintf(note, sizeof note, "checkpoint t = %.6g %s", solver_.time() / scale_.time, scale_.time_unit);
    progress.note(std::string(note) + " -> " + plan_.path);
  }

  /// The record of the run so far (up to the stop), every ADO at the end where the input asks.
  void fill_record(io::RunRecord& record, const std::vector<double>& all_times, bool stopped) const {
    record = describe_run(config_);
    record.rho = rho_;
    record.current = current_;
    record.wall_time_s = wall_before_ + elapsed();
    record.generator_kernel = to_string(solver_.kernel());
    record.threads = exec_.concurrency();
    if (const Distribution* d = solver_.distribution()) {
      record.devices = d->communicator->describe();
      record.partition.assign(d->partition.boundaries().begin(), d->partition.boundaries().end());
    }
    record.statistics = solver_.statistics();
    record.method = solver_.method_taken();
    record.times = all_times;
    if (stopped) record.times.resize(rho_.size());  // (rho and current hold as many)
    for (double t : record.times)
      for (const Drive& drive : config_.model.drives()) record.drive.push_back(drive.shape(t) / scale_.energy);
    if (stopped || !config_.write_ados) return;
    record.has_ados = true;
    const auto ados = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), solver_.ados());
    record.ados_final.resize(ados.size());
    for (std::size_t i = 0; i < ados.size(); ++i)
      record.ados_final[i] = complex(ados.data()[i].real(), ados.data()[i].imag());
    record.ado_labels = solver_.hierarchy().labels_table();
  }

  const Exec exec_;
  const io::RunConfig& config_;
  const std::shared_ptr<const Communicator> communicator_;
  const int device_;
  const bool reporter_;
  const CheckpointPlan& plan_;
  const io::UnitScale scale_;
  const std::chrono::steady_clock::time_point start_;
  Solver<Exec> solver_;
  const int part_, parts_;
  std::vector<Matrix> rho_;       // at the output times done
  std::vector<complex> current_;  // [output time][bath], with leads
  double wall_before_ = 0.0;      // the wall time of the runs before a resume
  long long sequence_ = 0;        // of the last checkpoint
  double last_checkpoint_ = 0.0;  // elapsed() at the last one
};

}  // namespace

std::string checkpoint_path(const io::RunConfig& config, const std::string& output_path) {
  return !config.checkpoint_file.empty() ? config.checkpoint_file : io::with_suffix(output_path, ".checkpoint");
}

Fingerprint output_fingerprint(const io::RunConfig& config) {
  std::ostringstream times;
  times << std::hexfloat;
  for (double t : config.output_times()) times << t << ' ';
  return {{"dynamics.output_times",
           std::to_string(config.output_times().size()) + " times, " + fingerprint_hash(times.str())},
          {"output.ados", config.write_ados ? "true" : "false"}};
}

void check_checkpoint_plan(const io::RunConfig& config, const CheckpointPlan& plan) {
  const MemoryPlan memory = memory_plan(config);
  const std::uint64_t bytes = plan.every.any() ? 2 * memory.bytes_per_vector * memory.state_vectors : 0;
  const std::string problem = io::output_problem(plan.path, bytes);
  if (!problem.empty()) throw io::InputError("output.checkpoint_file: " + problem);
  // A checkpoint left by a stopped run is not overwritten by another run (resuming it replaces it).
  const auto refuse_to_overwrite = [&] {
    if (plan.resume != plan.path && ::access(plan.path.c_str(), F_OK) == 0)
      throw io::InputError("output.checkpoint_file: " + plan.path +
                           " exists (a stopped run's checkpoint): continue that run with --resume " + plan.path +
                           ", or remove it to start again");
  };
  if (plan.resume.empty()) return refuse_to_overwrite();
  io::Checkpoint header;
  const bool leads = config.model.has_fermionic_bath();
  try {
    header = io::read_checkpoint(plan.resume, 0, -1, leads);  // (with leads: the currents so far)
  } catch (const Error& e) {
    throw io::InputError(std::string("--resume: ") + e.what());
  }
  Fingerprint expected = heom::run_fingerprint<Exec>(config.model, config.depth, config.solver);
  expected.insert(expected.end(), plan.output_fingerprint.begin(), plan.output_fingerprint.end());
  try {
    require_same_fingerprint(expected, header.solver.fingerprint, "checkpoint " + plan.resume);
  } catch (const StateMismatchError& e) {
    throw io::InputError(std::string("--resume: ") + e.what());
  }
  const std::vector<double> times = config.output_times();
  const auto done =
      std::count_if(times.begin(), times.end(), [&](double t) { return t <= header.solver.integrator.time; });
  if (header.outputs != done)
    throw io::InputError("--resume: checkpoint " + plan.resume + " holds rho at " + std::to_string(header.outputs) +
                         " output times, but " + std::to_string(done) + " lie before its time");
  if (leads && header.current.size() != static_cast<std::size_t>(header.outputs) * config.model.baths().size())
    throw io::InputError("--resume: checkpoint " + plan.resume + " holds no currents into the leads at its " +
                         std::to_string(header.outputs) +
                         " output times (an older heom wrote it): remove it to start again");
  refuse_to_overwrite();
}

int run(const io::RunConfig& config, const std::string& output_path, const MpiJob& job, const Devices& devices,
        CheckpointPlan plan) {
  const MemoryPlan memory = memory_plan(config);
  const std::uint64_t available = BackendTraits<Exec>::available_memory(Exec());
  if (job.rank() == 0) print_plan(config, memory, available, output_path);
  if ((job.communicator() || devices.count > 1) && config.write_ados)
    throw io::InputError("output.ados: writing every ADO is not available when the hierarchy is split between devices");
  if (job.rank() == 0 && plan.every.any()) {
    std::string every = plan.every.seconds > 0.0 ? format_duration(plan.every.seconds) : "";
    if (plan.every.steps > 0) every += (every.empty() ? "" : " or ") + std::to_string(plan.every.steps) + " steps";
    std::printf("  checkpoints every %s -> %s\n", every.c_str(), plan.path.c_str());
    std::fflush(stdout);
  }
  if (!plan.path.empty()) install_stop_signals();

  io::RunRecord record;
  ShareOutcome outcome;
  if (devices.count > 1)
    run_on_devices(
        Exec(), devices.count,
        [&](const Exec& exec, int d, std::shared_ptr<const Communicator> communicator) {
          ShareOutcome mine;
          io::RunRecord others;  // (only device 0 holds rho)
          ShareRun(exec, config, std::move(communicator), d, d == 0, plan).run(d == 0 ? record : others, mine);
          if (d == 0) outcome = mine;
        },
        devices.gpu_ids);
  else
    ShareRun(Exec(), config, job.communicator(), job.rank(), job.rank() == 0, plan).run(record, outcome);
  const io::UnitScale scale = io::unit_scale(config.units);
  if (outcome.stopped) {
    if (job.rank() != 0) return exit_stopped;
    const std::string partial = io::with_suffix(output_path, ".partial");
    io::write_run_record(partial, record);
    std::fprintf(
        stderr,
        "heom: stopped by %s at t = %g %s after a checkpoint: %s%s; the output so far is in %s. To "
        "continue, run the same command with --resume %s\n",
        signal_name(stop_signal()), outcome.time / scale.time, scale.time_unit, plan.path.c_str(),
        outcome.parts > 1 ? (" (part 0 of " + std::to_string(outcome.parts) + ", the others beside it)").c_str() : "",
        partial.c_str(), plan.path.c_str());
    return exit_stopped;
  }
  if (record.times.empty()) return 0;  // a rank that does not hold rho

  io::write_run_record(output_path, record);
  // The finished output supersedes the checkpoints and any partial output of an earlier stop.
  if (!plan.path.empty()) io::remove_checkpoint(plan.path);
  std::remove(io::with_suffix(output_path, ".partial").c_str());
  std::printf("done: %lld steps (%lld rejected), %lld generator evaluations, %s; wrote %s\n",
              static_cast<long long>(record.statistics.steps), static_cast<long long>(record.statistics.rejected),
              static_cast<long long>(record.statistics.rhs_evaluations), format_duration(record.wall_time_s).c_str(),
              output_path.c_str());
  return 0;
}

}  // namespace heom::app
