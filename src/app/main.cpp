// The heom program: `heom run INPUT.toml`, `heom steady INPUT.toml`, `heom plan INPUT.toml`, and
// `heom` alone for the bundled FMO example. Bad input exits with 2 and one line naming the key; a failed run exits
// with 1. Under mpirun (several ranks) one hierarchy is split over the ranks, one device each; the rank that holds rho
// reports and writes the output, and a rank that fails ends every rank.
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <unistd.h>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "heom/config.hpp"
#include "heom/core/kokkos_compat.hpp"
#include "heom/heom.hpp"
#include "heom/distributed/in_process.hpp"
#include "heom/hierarchy/partition.hpp"
#if HEOM_ENABLE_MPI
#include "heom/distributed/mpi_communicator.hpp"
#endif
#if HEOM_ENABLE_NCCL
#include "heom/distributed/nccl_communicator.hpp"
#endif
#include "io/checkpoint.hpp"
#include "io/hdf5_output.hpp"
#include "io/input.hpp"
#include "io/spectrum.hpp"
#include "progress.hpp"
#include "stop_signals.hpp"

namespace heom::app {

extern const char* const embedded_fmo_input;  // example/fmo_77k.toml, compiled in

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

constexpr int exit_bad_input = 2;
constexpr int exit_run_failed = 1;

/// The MPI job this process is a rank of, when mpirun started it with more than one rank.
class MpiJob {
 public:
  MpiJob(int& argc, char**& argv) {
#if HEOM_ENABLE_MPI
    // Only under a launcher: a plain `heom run` must not depend on MPI starting.
    if (!std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMI_SIZE") && !std::getenv("PMIX_RANK")) return;
    MPI_Init(&argc, &argv);
    m_initialized = true;
    auto world = std::make_shared<MpiCommunicator>(MPI_COMM_WORLD);
    if (world->size() > 1) m_communicator = m_mpi = world;
#else
    (void)argc;
    (void)argv;
#endif
  }
  ~MpiJob() {
#if HEOM_ENABLE_MPI
    if (m_initialized) MPI_Finalize();
#endif
  }
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  /// Where the build has NCCL and runs on GPUs, links the ranks' GPUs with it instead of host-staged
  /// MPI (after Kokkos has given each rank its GPU). Collective.
  void link_gpus_with_nccl() {
#if HEOM_ENABLE_MPI && HEOM_ENABLE_NCCL && defined(KOKKOS_ENABLE_CUDA)
    if (m_communicator && std::is_same<Exec, Kokkos::Cuda>::value)
      m_communicator = std::make_shared<NcclCommunicator>(m_mpi->comm());
#endif
  }

  /// nullptr when there is one rank.
  std::shared_ptr<const Communicator> communicator() const { return m_communicator; }
  /// The ranks over MPI even where the GPUs are linked with NCCL (an ensemble's members need only a
  /// work counter and a final gather, which NCCL does not offer); nullptr when there is one rank.
  std::shared_ptr<const Communicator> mpi_communicator() const {
#if HEOM_ENABLE_MPI
    return m_mpi;
#else
    return nullptr;
#endif
  }
  int rank() const { return m_communicator ? m_communicator->rank() : 0; }
  /// "rank 3: " when there are several.
  std::string prefix() const { return m_communicator ? "rank " + std::to_string(rank()) + ": " : ""; }
  /// The exit code of a failed run, returned from main; with several ranks, ends every rank with it
  /// at once (the others may be waiting in an exchange with this one).
  int fail(int code) const {
#if HEOM_ENABLE_MPI
    if (m_mpi) {
      std::fflush(stdout);
      std::fflush(stderr);
      m_mpi->abort(code);
    }
#endif
    return code;
  }

 private:
  bool m_initialized = false;
  std::shared_ptr<const Communicator> m_communicator;
#if HEOM_ENABLE_MPI
  std::shared_ptr<const MpiCommunicator> m_mpi;  // the job's ranks (aborting ends them all)
#endif
};

/// A test hook, documented in docs/program.md: HEOM_TEST_FAIL=RANK:STEP makes that rank throw after
/// that many steps, so that the tests can check how a failed rank ends the job.
struct InjectedFailure {
  int rank = -1;
  long long step = -1;
  static InjectedFailure from_environment() {
    InjectedFailure f;
    if (const char* v = std::getenv("HEOM_TEST_FAIL")) std::sscanf(v, "%d:%lld", &f.rank, &f.step);
    return f;
  }
  void check(int this_rank, long long steps) const {
    if (this_rank == rank && steps == step)
      throw Error("injected failure (HEOM_TEST_FAIL) at step " + std::to_string(steps));
  }
};

std::string default_output_path(const std::string& input_path) {
  std::string name = input_path;
  const auto slash = name.find_last_of('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  const auto dot = name.rfind(".toml");
  if (dot != std::string::npos && dot + 5 == name.size()) name = name.substr(0, dot);
  return name + ".h5";
}

/// How a run holds each ADO: an absorption spectrum's propagations start from mu |0><0| and keep
/// column 0 alone, every other run the whole block.
AdoShape ado_shape(const io::RunConfig& c) {
  return c.spectrum && c.spectrum->kind == io::SpectrumConfig::Kind::absorption ? AdoShape::ground_column
                                                                                : AdoShape::square;
}

/// A run's memory on one device (a split hierarchy's devices: MemoryPlan::share), its ADOs held in `shape`.
MemoryPlan memory_plan(const io::RunConfig& c, AdoShape shape = AdoShape::square) {
  return MemoryPlan::make(c.model.dimension(), c.model.num_exponents(), c.depth, state_vectors(c.integrator.method),
                          shape == AdoShape::ground_column ? 1 : 0);
}

void print_plan(const io::RunConfig& c, const MemoryPlan& plan, std::uint64_t available, const std::string& output) {
  const io::UnitScale scale = io::unit_scale(c.units);
  std::printf("heom %s: %s\n", HEOM_VERSION_STRING, c.input_name.c_str());
  std::printf("  system      dimension %d, units %s%s\n", c.model.dimension(), io::to_string(c.units),
              c.units == io::Units::spectroscopy ? " (solver works in rad/fs and fs)" : "");
  std::printf("  baths       %zu\n", c.model.baths().size());
  for (std::size_t b = 0; b < c.model.baths().size(); ++b) {
    const Bath& bath = c.model.baths()[b];
    std::printf("    bath %-3zu  %s, %d exponents, %s coupling%s\n", b + 1, bath.description().c_str(),
                bath.num_exponents(), bath.coupling().is_diagonal() ? "diagonal" : "dense",
                bath.has_terminator()
                    ? (", terminator Delta = " + std::to_string(bath.terminator_delta().real())).c_str()
                    : "");
    for (const Exponent& e : bath.exponents()) {
      std::printf("                %-2s c = (%.6g, %.6g)", to_string(e.kind), e.c.real(), e.c.imag());
      if (e.kind == ExponentKind::RI) std::printf("  c2 = (%.6g, %.6g)", e.c2.real(), e.c2.imag());
      std::printf("  v = (%.6g, %.6g)\n", e.v.real(), e.v.imag());
    }
  }
  std::printf("  hierarchy   K = %d exponents, depth %d, %llu ADOs%s\n", c.model.num_exponents(), c.depth,
              static_cast<unsigned long long>(plan.num_ados),
              plan.ado_columns < plan.dimension ? ", column 0 of each (the ground-column shape)" : "");
  std::printf("  memory      %s per state vector x %d + tables %s = %s (%s available)\n",
              format_bytes(plan.bytes_per_vector).c_str(), plan.state_vectors, format_bytes(plan.bytes_tables).c_str(),
              format_bytes(plan.bytes_total).c_str(), available > 0 ? format_bytes(available).c_str() : "unknown");
  std::printf("  backend     %s\n", BackendTraits<Exec>::describe(Exec()).c_str());
  if (is_adaptive(c.integrator.method))
    std::printf("  integrator  %s, rtol %g, atol %g\n", to_string(c.integrator.method), c.integrator.rtol,
                c.integrator.atol);
  else
    std::printf("  integrator  %s, step %g %s\n", to_string(c.integrator.method), c.integrator.step / scale.time,
                scale.time_unit);
  const auto times = c.output_times();
  std::printf("  output      t = 0 .. %g %s every %g (%zu times) -> %s\n", c.t_end / scale.time, scale.time_unit,
              c.output_every / scale.time, times.size(), output.c_str());
  std::fflush(stdout);
}

/// What describes a run of `config` in its output, whoever runs it.
io::RunRecord describe_run(const io::RunConfig& config) {
  const io::UnitScale scale = io::unit_scale(config.units);
  io::RunRecord record;
  record.times = config.output_times();
  record.input_text = config.input_text;
  record.units = io::to_string(config.units);
  record.time_unit = scale.time_unit;
  record.dimension = config.model.dimension();
  record.num_exponents = config.model.num_exponents();
  record.depth = config.depth;
  record.num_ados = static_cast<long long>(Hierarchy::count(config.model.num_exponents(), config.depth));
  record.backend = Exec::name();
  record.method = to_string(config.integrator.method);
  record.rtol = is_adaptive(config.integrator.method) ? config.integrator.rtol : 0.0;
  record.atol = is_adaptive(config.integrator.method) ? config.integrator.atol : 0.0;
  record.step = config.integrator.step / scale.time;
  record.partition = {0, record.num_ados};
  return record;
}

/// Where a run keeps its checkpoints, when it writes them, and the one it continues from.
struct CheckpointPlan {
  std::string path;  ///< part 0's file (checkpoint_file, else beside the output); empty: no checkpoints
  io::CheckpointEvery every;
  std::string resume;  ///< --resume: part 0's file to continue from; empty: start at t = 0
  /// What the program adds to the solver's fingerprint: what its output depends on besides the state.
  Fingerprint run_fingerprint;
};

/// Thrown from a step boundary once every device has written its part of the checkpoint a signal
/// asked for; the device's run_share returns with `stopped`.
struct StopAfterCheckpoint {};

/// Test hooks, documented in docs/program.md: HEOM_TEST_SIGNAL=DEVICE:STEP makes that device (rank)
/// send itself SIGTERM after that step; HEOM_TEST_CHECKPOINT_DELAY=SECONDS pauses each checkpoint
/// write before its file is renamed into place, so that a test can signal during the write.
struct SignalHooks {
  int device = -1;
  long long step = -1;
  double delay = 0.0;
  static SignalHooks from_environment() {
    SignalHooks h;
    if (const char* v = std::getenv("HEOM_TEST_SIGNAL")) std::sscanf(v, "%d:%lld", &h.device, &h.step);
    if (const char* v = std::getenv("HEOM_TEST_CHECKPOINT_DELAY")) h.delay = std::atof(v);
    return h;
  }
};

/// How one device's share of a run ended.
struct ShareOutcome {
  bool stopped = false;  ///< by a signal, after writing its part of a checkpoint
  double time = 0.0;     ///< (in solver units)
  int parts = 1;         ///< of the checkpoint
};

/// One device's part of a run: its solver (a share of the hierarchy with a communicator, all of it
/// without), started from rho0 or the checkpoint to resume, stepped to the end or to a stop, writing
/// its part of each checkpoint; the device holding rho fills `record` (else it stays empty).
/// `reporter` prints and draws progress. `device` names it for the test hooks.
void run_share(const Exec& exec, const io::RunConfig& config, std::shared_ptr<const Communicator> communicator,
               int device, bool reporter, const CheckpointPlan& plan, io::RunRecord& record, ShareOutcome& outcome) {
  const io::UnitScale scale = io::unit_scale(config.units);
  SolverOptions options;
  options.integrator = config.integrator;
  options.communicator = communicator;
  const auto start = std::chrono::steady_clock::now();
  Solver<Exec> solver(exec, config.model, config.depth, options);
  const int part = communicator ? communicator->rank() : 0, parts = communicator ? communicator->size() : 1;
  outcome.parts = parts;
  std::vector<Matrix> rho;  // at the output times done
  double wall_before = 0.0;
  long long sequence = 0;
  if (plan.resume.empty()) {
    solver.set_initial_state(config.rho0);
  } else {
    // Whatever is wrong with the checkpoint (checked before the run, but a part could be damaged
    // inside) is the input's fault: StateMismatchError, exit 2, also from a device of this process.
    try {
      io::Checkpoint c =
          io::read_checkpoint(plan.resume, solver.first_ado(), solver.generator().num_ados(), solver.owns_rho());
      solver.load_state(c.solver, c.vectors.get());
      rho = std::move(c.rho);
      wall_before = c.wall_time_s;
      sequence = c.sequence;
    } catch (const StateMismatchError&) {
      throw;
    } catch (const Error& e) {
      throw StateMismatchError(e.what());
    }
  }
  if (reporter) {
    std::printf("  generator   %s kernel\n", to_string(solver.generator().kernel()));
    if (const Distribution* d = solver.distribution())
      std::printf("  devices     %s; device 0 owns %d ADOs and reads %zu more\n", d->communicator->describe().c_str(),
                  d->plan.owned, d->plan.halo.size());
    if (!plan.resume.empty())
      std::printf("  resumed     at t = %g %s from %s (%lld steps done)\n", solver.time() / scale.time, scale.time_unit,
                  plan.resume.c_str(), static_cast<long long>(solver.statistics().steps));
    std::fflush(stdout);
  }

  // The output times still ahead (those up to the resumed time were observed before the checkpoint).
  const std::vector<double> all_times = config.output_times();
  std::vector<double> times;
  for (double t : all_times)
    if (t > solver.time() || (t == 0.0 && solver.time() == 0.0)) times.push_back(t);
  if (solver.owns_rho() && rho.size() + times.size() != all_times.size())
    throw StateMismatchError("checkpoint " + plan.resume + " holds rho at " + std::to_string(rho.size()) +
                             " output times, but " + std::to_string(all_times.size() - times.size()) +
                             " lie before its time");
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  auto fill_record = [&] {
    record = describe_run(config);
    record.rho = rho;
    record.wall_time_s = wall_before + elapsed();
    record.generator_kernel = to_string(solver.generator().kernel());
    record.threads = exec.concurrency();
    if (const Distribution* d = solver.distribution()) {
      record.devices = d->communicator->describe();
      record.partition.assign(d->partition.boundaries().begin(), d->partition.boundaries().end());
    }
    record.statistics = solver.statistics();
  };
  {
    const InjectedFailure failure = InjectedFailure::from_environment();
    const SignalHooks hooks = SignalHooks::from_environment();
    long long steps = 0;
    double last_checkpoint = 0.0;  // elapsed() at the last one
    // Clears its line however the run ends; only the reporting device draws it.
    Progress progress(solver.time() / scale.time, config.t_end / scale.time, scale.time_unit,
                      reporter ? stderr : nullptr);
    auto checkpoint = [&] {
      io::Checkpoint c;
      c.part = part;
      c.parts = parts;
      c.partition = {0, static_cast<long long>(solver.hierarchy().size())};
      if (const Distribution* d = solver.distribution())
        c.partition.assign(d->partition.boundaries().begin(), d->partition.boundaries().end());
      c.sequence = ++sequence;
      c.block = config.model.dimension() * config.model.dimension();
      c.wall_time_s = wall_before + elapsed();
      if (solver.owns_rho()) {
        c.input_text = config.input_text;
        c.rho = rho;
      }
      // The vectors go into the file one at a time, as they reach the host.
      const auto save = [&](VectorStore& vectors) {
        SolverState state = solver.save_state(&vectors);
        state.fingerprint.insert(state.fingerprint.end(), plan.run_fingerprint.begin(), plan.run_fingerprint.end());
        return state;
      };
      // Parts 1, 2, ... go into place first (under names that alternate, so the previous checkpoint's
      // stay); part 0 last, once every other part is written: until then the previous checkpoint is whole.
      io::write_checkpoint(plan.path, std::move(c), save, [&] {
        if (hooks.delay > 0.0) std::this_thread::sleep_for(std::chrono::duration<double>(hooks.delay));
        if (communicator && part == 0) communicator->max(0.0);
      });
      if (communicator && part != 0) communicator->max(0.0);  // (meets part 0's, before its rename)
      if (communicator) communicator->max(0.0);               // part 0 is in place
      last_checkpoint = elapsed();
      char note[64];
      std::snprintf(note, sizeof note, "checkpoint t = %.6g %s", solver.time() / scale.time, scale.time_unit);
      progress.note(std::string(note) + " -> " + plan.path);
    };
    try {
      solver.run(
          times, [&](const Snapshot<Exec>& s) { rho.push_back(s.rho()); },
          [&](double t) {
            progress.update(t / scale.time);
            failure.check(device, ++steps);
            if (plan.path.empty()) return;  // (no checkpoints: the bundled example)
            if (device == hooks.device && steps == hooks.step) std::raise(SIGTERM);
            // 1: a checkpoint is due, 2: a signal asks for one and a stop; every device takes the same step.
            double wanted = stop_signal() != 0 ? 2.0 : 0.0;
            if (wanted == 0.0 && ((plan.every.steps > 0 && solver.statistics().steps % plan.every.steps == 0) ||
                                  (plan.every.seconds > 0.0 && elapsed() - last_checkpoint >= plan.every.seconds)))
              wanted = 1.0;
            if (communicator) wanted = communicator->max(wanted);
            if (wanted == 0.0) return;
            checkpoint();
            if (wanted == 2.0) throw StopAfterCheckpoint{};
          });
    } catch (const StopAfterCheckpoint&) {
      outcome.stopped = true;
    }
  }
  outcome.time = solver.time();
  if (!solver.owns_rho()) return;
  fill_record();
  if (outcome.stopped) {
    record.times.assign(all_times.begin(), all_times.begin() + rho.size());
    return;
  }
  record.times = all_times;
  if (config.write_ados) {
    record.has_ados = true;
    const auto ados = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), solver.ados());
    record.ados_final.resize(ados.size());
    for (std::size_t i = 0; i < ados.size(); ++i)
      record.ados_final[i] = complex(ados.data()[i].real(), ados.data()[i].imag());
    record.ado_labels = solver.hierarchy().labels_table();
  }
}

/// Where a run's checkpoints go: [output] checkpoint_file, else "NAME.checkpoint.h5" beside the output.
std::string checkpoint_path(const io::RunConfig& config, const std::string& output_path) {
  return !config.checkpoint_file.empty() ? config.checkpoint_file : io::with_suffix(output_path, ".checkpoint");
}

/// The program's entries of a checkpoint's fingerprint: the output times and what else the output holds.
Fingerprint run_fingerprint(const io::RunConfig& config) {
  std::ostringstream times;
  times << std::hexfloat;
  for (double t : config.output_times()) times << t << ' ';
  return {{"dynamics.output_times",
           std::to_string(config.output_times().size()) + " times, " + fingerprint_hash(times.str())},
          {"output.ados", config.write_ados ? "true" : "false"}};
}

/// What can be checked about the checkpoints before the run: their folder is writable (with room for two
/// checkpoints when they are periodic: the previous one stays until the next is complete), and the
/// checkpoint to resume from is complete and belongs to this input (else InputError, naming what differs).
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
  try {
    header = io::read_checkpoint(plan.resume, 0, -1, false);
  } catch (const Error& e) {
    throw io::InputError(std::string("--resume: ") + e.what());
  }
  Fingerprint expected = fingerprint(config.model, config.depth, config.integrator, GeneratorOptions{}, Exec::name());
  expected.insert(expected.end(), plan.run_fingerprint.begin(), plan.run_fingerprint.end());
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
  refuse_to_overwrite();
}

/// `heom run`: on this process's device, split over the ranks of `job`, or over `devices` devices of
/// this process; device 0 (which the balanced partition gives rho) reports and writes the output.
/// Returns exit_stopped when a signal stopped it after a checkpoint.
int run(const io::RunConfig& config, const std::string& output_path, const MpiJob& job, int devices,
        CheckpointPlan plan) {
  const MemoryPlan memory = memory_plan(config);
  const std::uint64_t available = BackendTraits<Exec>::available_memory(Exec());
  if (job.rank() == 0) print_plan(config, memory, available, output_path);
  if ((job.communicator() || devices > 1) && config.write_ados)
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
  if (devices > 1)
    run_on_devices(Exec(), devices, [&](const Exec& exec, int d, std::shared_ptr<const Communicator> communicator) {
      ShareOutcome mine;
      io::RunRecord others;  // (only device 0 holds rho)
      run_share(exec, config, std::move(communicator), d, d == 0, plan, d == 0 ? record : others, mine);
      if (d == 0) outcome = mine;
    });
  else
    run_share(Exec(), config, job.communicator(), job.rank(), job.rank() == 0, plan, record, outcome);
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

/// The steady-state solve's lines of the plan.
void print_steady_plan(const SteadyStateOptions& o, const io::RunConfig& c, const MemoryPlan& plan) {
  std::printf("  steady      GMRES(%d), %s preconditioner, tolerance %g, at most %d iterations%s\n", o.restart,
              to_string(o.preconditioner), o.tolerance, o.max_iterations,
              o.fallback_time > 0.0
                  ? (", then propagating " + std::to_string(o.fallback_time / io::unit_scale(c.units).time) + " " +
                     io::unit_scale(c.units).time_unit)
                        .c_str()
                  : "");
  std::printf("              Krylov vectors %s x %d more\n", format_bytes(plan.bytes_per_vector).c_str(),
              impl::SteadyStateKrylov<Exec>::work_vectors(o.restart));
  std::fflush(stdout);
}

/// Solves for `solver`'s steady state from the input's initial state (if any), reporting progress as
/// digits of the residual gained.
SteadyStateReport solve_steady(Solver<Exec>& solver, const io::RunConfig& config, bool reporter) {
  if (config.has_initial_state) solver.set_initial_state(config.rho0);
  SteadyStateOptions options = config.steady;
  Progress progress(0.0, -std::log10(options.tolerance), "", reporter ? stderr : nullptr, "-log10(residual)");
  options.progress = [&](int, double residual) { progress.update(-std::log10(residual)); };
  try {
    return solver.solve_steady_state(options);
  } catch (const OutOfMemoryError& e) {  // (what the input can change is the cycle's length)
    throw io::InputError(config.input_name + ": steady.restart: " + e.what());
  }
}

io::SteadyRecord steady_record(const Solver<Exec>& solver, const SteadyStateReport& report,
                               const SteadyStateOptions& options, bool with_ados) {
  io::SteadyRecord s;
  s.rho = solver.rho();
  s.residual = report.residual;
  s.rate = report.rate;
  s.tolerance = options.tolerance;
  s.iterations = report.iterations;
  s.cycles = report.cycles;
  s.preconditioner = to_string(options.preconditioner);
  s.fell_back = report.fell_back;
  if (with_ados) {
    const auto ados = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), solver.ados());
    s.ados.resize(ados.size());
    for (std::size_t i = 0; i < ados.size(); ++i) s.ados[i] = complex(ados.data()[i].real(), ados.data()[i].imag());
    s.ado_labels = solver.hierarchy().labels_table();
  }
  return s;
}

/// Refuses what a steady state or a spectrum cannot be split over: several devices or ranks of one model.
void require_one_device(const MpiJob& job, int devices, const char* what) {
  if (job.communicator() || devices > 1)
    throw io::InputError(std::string("--devices: ") + what +
                         " runs on one device (it is not split between devices or ranks)");
}

/// `heom steady`: the steady state of every ADO, written as /steady.
int run_steady(const io::RunConfig& config, const std::string& output_path, const MpiJob& job, int devices) {
  if (config.ensemble) throw io::InputError("ensemble: heom steady solves one model; remove [ensemble]");
  require_one_device(job, devices, "heom steady");
  const MemoryPlan plan = memory_plan(config);
  print_plan(config, plan, BackendTraits<Exec>::available_memory(Exec()), output_path);
  print_steady_plan(config.steady, config, plan);
  const auto start = std::chrono::steady_clock::now();
  SolverOptions options;
  options.integrator = config.integrator;
  Solver<Exec> solver(Exec(), config.model, config.depth, options);
  const SteadyStateReport report = solve_steady(solver, config, true);
  io::RunRecord record = describe_run(config);
  record.times.clear();
  record.steady = steady_record(solver, report, config.steady, config.write_ados);
  record.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.generator_kernel = to_string(solver.generator().kernel());
  record.threads = Exec().concurrency();
  record.statistics = solver.statistics();
  io::write_run_record(output_path, record);
  std::printf("done: residual %.3g after %d generator applications (%d GMRES cycles%s), %s; wrote %s\n",
              report.residual, report.iterations, report.cycles, report.fell_back ? ", after propagating" : "",
              format_duration(record.wall_time_s).c_str(), output_path.c_str());
  return 0;
}

/// The spectrum of the sampled C(t) in the input's units, cropped to its frequency range.
io::SpectrumRecord spectrum_of(const io::RunConfig& config, const std::vector<complex>& correlation) {
  const io::SpectrumConfig& s = *config.spectrum;
  const io::UnitScale scale = io::unit_scale(config.units);
  const bool absorption = s.kind == io::SpectrumConfig::Kind::absorption;
  const io::SpectrumGrid grid =
      io::one_sided_spectrum(correlation, config.output_every, absorption ? 1 : -1, s.window, s.padding);
  io::SpectrumRecord r;
  r.kind = absorption ? "absorption" : "power";
  r.definition = absorption
                     ? "I(w) = (1/pi) Re int_0^T C(t) W(t) exp(+i w t) dt; C(t) = sum_p weight_p tr[mu_p rho_p(t)], "
                       "rho_p(0) = mu_p |0><0| (the orientation average: 3 polarizations of weight 1/3)"
                 : s.incoherent ? "S(w) = (1/pi) Re int_0^T C(t) W(t) exp(-i w t) dt; C(t) = <Q^dagger(t) Q(0)> - "
                                  "<Q^dagger><Q> in the steady state (the incoherent part)"
                                : "S(w) = (1/pi) Re int_0^T C(t) W(t) exp(-i w t) dt; C(t) = <Q^dagger(t) Q(0)> in the "
                                  "steady state";
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

/// `heom run` with a [spectrum]: the correlation function, on the devices or ranks for an absorption
/// spectrum (its polarizations and ensemble members are independent runs), and its transform.
int run_spectrum(const io::RunConfig& config, const std::string& output_path, const MpiJob& job, int devices) {
  const io::SpectrumConfig& s = *config.spectrum;
  const bool reporter = job.rank() == 0;
  const MemoryPlan plan = memory_plan(config, ado_shape(config));
  if (reporter) print_plan(config, plan, BackendTraits<Exec>::available_memory(Exec()), output_path);
  const std::vector<double> times = config.output_times();
  const auto start = std::chrono::steady_clock::now();
  io::RunRecord record = describe_run(config);
  record.times.clear();
  std::vector<complex> correlation(times.size(), 0.0);
  if (s.kind == io::SpectrumConfig::Kind::absorption) {
    // One propagation of mu_p |0><0| per polarization p and member.
    std::vector<Model> models;
    if (config.ensemble)
      for (const io::EnsembleMemberConfig& m : config.ensemble->members) models.push_back(m.model);
    else
      models.push_back(config.model);
    const int polarizations = static_cast<int>(s.dipoles.size());
    std::vector<EnsembleMember> runs;
    for (const Model& model : models)
      for (const Matrix& mu : s.dipoles) runs.push_back({model, mu * operators::projector(mu.rows(), 0, 0)});
    const std::shared_ptr<const Communicator> ranks = job.mpi_communicator();
    if (reporter) {
      std::printf("  spectrum    absorption: %zu member%s x %d polarization%s, on %s\n", models.size(),
                  models.size() == 1 ? "" : "s", polarizations, polarizations == 1 ? "" : "s",
                  ranks ? ranks->describe().c_str()
                        : (std::to_string(std::max(devices, 1)) + (devices > 1 ? " devices" : " device")).c_str());
      std::fflush(stdout);
    }
    EnsembleOptions options;
    options.depth = config.depth;
    options.solver.integrator = config.integrator;
    options.solver.generator.shape = ado_shape(config);
    options.devices = std::max(devices, 1);
    options.ranks = ranks;
    options.batch = config.ensemble ? config.ensemble->batch : 1;
    EnsembleResult result;
    {
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
      result = run_ensemble(Exec(), runs, times, options);
    }
    if (!reporter) return 0;
    const bool store = config.ensemble && config.ensemble->store_members;
    std::vector<io::SpectrumRecord> members;
    for (std::size_t m = 0; m < models.size(); ++m) {
      std::vector<complex> member(times.size(), 0.0);
      for (int p = 0; p < polarizations; ++p) {
        const MemberResult& r = result.members[m * polarizations + p];
        for (std::size_t k = 0; k < times.size(); ++k) member[k] += s.dipole_weight * (s.dipoles[p] * r.rho[k]).trace();
        record.statistics.steps += r.statistics.steps;
        record.statistics.rejected += r.statistics.rejected;
        record.statistics.rhs_evaluations += r.statistics.rhs_evaluations;
      }
      for (std::size_t k = 0; k < times.size(); ++k) correlation[k] += member[k] / static_cast<double>(models.size());
      if (store) members.push_back(spectrum_of(config, member));
    }
    record.generator_kernel = to_string(result.members.front().kernel);
    record.spectrum = spectrum_of(config, correlation);
    for (const io::SpectrumRecord& m : members)
      record.spectrum->member_intensity.insert(record.spectrum->member_intensity.end(), m.intensity.begin(),
                                               m.intensity.end());
  } else {
    require_one_device(job, devices, "a power spectrum");
    print_steady_plan(config.steady, config, plan);
    std::printf("  spectrum    power: <Q^dagger(t) Q(0)> in the steady state, t = 0 .. %g %s\n",
                config.t_end / io::unit_scale(config.units).time, io::unit_scale(config.units).time_unit);
    std::fflush(stdout);
    SolverOptions options;
    options.integrator = config.integrator;
    Solver<Exec> solver(Exec(), config.model, config.depth, options);
    const SteadyStateReport report = solve_steady(solver, config, true);
    record.steady = steady_record(solver, report, config.steady, false);
    {
      Progress progress(0.0, config.t_end, io::unit_scale(config.units).time_unit, stderr);
      // (<Q^dagger> and <Q> of the steady state, before Q multiplies it.)
      const Matrix rho = solver.rho();
      const complex coherent = (s.op.adjoint() * rho).trace() * (s.op * rho).trace();
      correlation = correlation_function(solver, s.op.adjoint(), s.op, times, [&](double t) { progress.update(t); });
      if (s.incoherent)
        for (complex& c : correlation) c -= coherent;
    }
    record.generator_kernel = to_string(solver.generator().kernel());
    record.statistics = solver.statistics();
    record.spectrum = spectrum_of(config, correlation);
  }
  record.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.threads = Exec().concurrency();
  io::write_run_record(output_path, record);
  std::printf("done: %s spectrum, %zu frequencies, %lld steps, %s; wrote %s\n", record.spectrum->kind.c_str(),
              record.spectrum->omega.size(), static_cast<long long>(record.statistics.steps),
              format_duration(record.wall_time_s).c_str(), output_path.c_str());
  return 0;
}

/// The [ensemble] part of the plan: its members, disorder and sweeps, and where they run.
void print_ensemble_plan(const io::RunConfig& c, const std::string& workers) {
  const io::EnsembleConfig& e = *c.ensemble;
  const char* unit = io::unit_scale(c.units).energy_unit;
  std::printf("  ensemble    %zu members: %lld realizations x %lld sweep points, on %s%s\n", e.members.size(),
              static_cast<long long>(e.realizations), static_cast<long long>(e.sweep_points), workers.c_str(),
              e.batch > 1 ? (", in batches of up to " + std::to_string(e.batch)).c_str() : "");
  if (!e.site_energy_sigma.empty()) {
    std::printf("    disorder  Gaussian on H's diagonal, seed %llu, sigma", static_cast<unsigned long long>(e.seed));
    for (double s : e.site_energy_sigma) std::printf(" %g", s);
    std::printf(" %s\n", unit);
  }
  for (std::size_t k = 0; k < e.parameter_names.size(); ++k) {
    std::vector<double> values;
    for (const auto& m : e.members)
      if (std::find(values.begin(), values.end(), m.parameters[k]) == values.end()) values.push_back(m.parameters[k]);
    std::printf("    sweep     %s over %zu %s\n", e.parameter_names[k].c_str(), values.size(),
                e.parameter_names[k] == "initial_state.rho" ? "initial states" : "values");
  }
  std::printf("    output    the mean over members%s\n",
              e.store_members ? ", and every member's rho(t)" : " (store_members = false: not each member's rho(t))");
  std::fflush(stdout);
}

/// `heom run` of an [ensemble]: its members over `devices` devices of this process or the ranks of
/// `job`, handed out as they become free; rank 0 reports and writes the mean and /ensemble.
int run_ensemble_members(const io::RunConfig& config, const std::string& output_path, const MpiJob& job, int devices) {
  const io::EnsembleConfig& e = *config.ensemble;
  const std::shared_ptr<const Communicator> ranks = job.mpi_communicator();
  const std::string workers =
      ranks ? ranks->describe()
            : std::to_string(std::max(devices, 1)) + (devices > 1 ? " devices in one process" : " device");
  const MemoryPlan plan = memory_plan(config);
  const bool reporter = job.rank() == 0;
  if (reporter) {
    print_plan(config, plan, BackendTraits<Exec>::available_memory(Exec()), output_path);
    print_ensemble_plan(config, workers);
  }

  std::vector<EnsembleMember> members;
  members.reserve(e.members.size());
  for (const io::EnsembleMemberConfig& m : e.members) members.push_back({m.model, m.rho0});
  EnsembleOptions options;
  options.depth = config.depth;
  options.solver.integrator = config.integrator;
  options.devices = std::max(devices, 1);
  options.ranks = ranks;
  options.batch = e.batch;
  const InjectedFailure failure = InjectedFailure::from_environment();
  std::vector<long long> steps(options.devices, 0);  // per device of this process (each its own thread)
  options.on_step = [&](int worker, double) { failure.check(worker, ++steps[worker % options.devices]); };
  const auto start = std::chrono::steady_clock::now();
  EnsembleResult result;
  {
    Progress progress(0.0, static_cast<double>(members.size()), "", reporter ? stderr : nullptr, "members");
    options.progress = [&](std::int64_t finished, std::int64_t) { progress.update(static_cast<double>(finished)); };
    result = run_ensemble(Exec(), members, config.output_times(), options);
  }
  if (!reporter) return 0;

  io::RunRecord record = describe_run(config);
  record.rho = result.mean;
  record.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.generator_kernel = to_string(result.members.front().kernel);
  record.threads = Exec().concurrency();
  record.devices = workers;
  io::EnsembleRecord& out = record.ensemble.emplace();
  out.members = static_cast<long long>(members.size());
  out.realizations = e.realizations;
  out.sweep_points = e.sweep_points;
  out.seed = e.seed;
  out.energy_unit = io::unit_scale(config.units).energy_unit;
  out.site_energy_sigma = e.site_energy_sigma;
  out.parameter_names = e.parameter_names;
  const std::size_t n2 = static_cast<std::size_t>(config.model.dimension()) * config.model.dimension();
  for (std::size_t i = 0; i < members.size(); ++i) {
    const MemberResult& r = result.members[i];
    record.statistics.steps += r.statistics.steps;
    record.statistics.rejected += r.statistics.rejected;
    record.statistics.rhs_evaluations += r.statistics.rhs_evaluations;
    out.steps.push_back(r.statistics.steps);
    out.workers.push_back(r.worker);
    out.parameters.insert(out.parameters.end(), e.members[i].parameters.begin(), e.members[i].parameters.end());
    out.hamiltonians.insert(out.hamiltonians.end(), e.members[i].hamiltonian.data(),
                            e.members[i].hamiltonian.data() + n2);
    if (e.store_members)
      for (const Matrix& m : r.rho) out.member_rho.insert(out.member_rho.end(), m.data(), m.data() + n2);
  }
  if (!e.parameter_names.empty()) {
    // Each sweep point's mean over its realizations (members point * R .. point * R + R - 1).
    for (std::int64_t point = 0; point < e.sweep_points; ++point) {
      const std::vector<Matrix> mean =
          impl::ensemble_mean(result.members.data() + point * e.realizations, static_cast<std::size_t>(e.realizations));
      for (const Matrix& m : mean) out.sweep_mean.insert(out.sweep_mean.end(), m.data(), m.data() + n2);
    }
  }
  io::write_run_record(output_path, record);
  std::printf("done: %zu members, %lld steps (%lld rejected), %lld generator evaluations, %s; wrote %s\n",
              members.size(), static_cast<long long>(record.statistics.steps),
              static_cast<long long>(record.statistics.rejected),
              static_cast<long long>(record.statistics.rhs_evaluations), format_duration(record.wall_time_s).c_str(),
              output_path.c_str());
  return 0;
}

/// `heom plan --devices N`: each device's share of the hierarchy split N ways, and a refusal (naming
/// the smallest N that fits) when a device's share does not fit in `device_bytes`.
void print_device_plan(const io::RunConfig& c, const MemoryPlan& plan, int devices, std::uint64_t device_bytes) {
  const Hierarchy hierarchy(c.model.num_exponents(), c.depth);
  auto largest_share = [&](int parts, std::vector<MemoryPlan>* shares, PartitionStatistics* stats) {
    const Partition partition = Partition::balanced(hierarchy, parts);
    const PartitionStatistics s = partition_statistics(hierarchy, partition, c.model.dimension());
    std::uint64_t largest = 0;
    for (int p = 0; p < parts; ++p) {
      const MemoryPlan share = plan.share(static_cast<std::uint64_t>(s.owned[p]) + s.halo[p], s.owned[p],
                                          generator_input_vectors(c.integrator.method), s.sent[p]);
      largest = std::max(largest, share.bytes_total);
      if (shares) shares->push_back(share);
    }
    if (stats) *stats = s;
    return largest;
  };
  std::vector<MemoryPlan> shares;
  PartitionStatistics stats;
  const std::uint64_t largest = largest_share(devices, &shares, &stats);
  std::printf("  devices     %d, halo %.2f of the owned ADOs in all (largest share %.2f)\n", devices,
              stats.total_halo_ratio, stats.largest_halo_ratio);
  std::printf("    device    owned ADOs   halo ADOs  peers  exchange     memory\n");
  for (int p = 0; p < devices; ++p)
    std::printf("    %-6d %13d %11d %6d  %-10s %s\n", p, stats.owned[p], stats.halo[p], stats.peers[p],
                format_bytes(stats.bytes_received[p]).c_str(), format_bytes(shares[p].bytes_total).c_str());
  std::fflush(stdout);
  if (device_bytes == 0 || largest <= device_bytes) return;
  // The smallest count that fits: double until one does, then bisect (shares shrink as devices grow).
  const int most = std::max(devices, (hierarchy.size() + Partition::ados_per_unit - 1) / Partition::ados_per_unit);
  int low = devices, high = devices;
  while (high < most && largest_share(high, nullptr, nullptr) > device_bytes) {
    low = high;
    high = std::min(most, 2 * high);
  }
  const bool fits = largest_share(high, nullptr, nullptr) <= device_bytes;
  while (fits && high - low > 1) {
    const int middle = (low + high) / 2;
    (largest_share(middle, nullptr, nullptr) <= device_bytes ? high : low) = middle;
  }
  throw OutOfMemoryError("a share of the hierarchy on " + std::to_string(devices) + " devices needs up to " +
                         format_bytes(largest) + " but a device has " + format_bytes(device_bytes) + "; " +
                         (fits ? "the smallest number of devices that fits is " + std::to_string(high)
                               : std::string("no number of devices fits")));
}

/// "512MiB", "16GiB", "1.5GB", "4096": bytes, for --device-memory.
std::uint64_t parse_bytes(const std::string& text) {
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw io::InputError("--device-memory: '" + text + "' is not a size such as 16GiB");
  }
  const std::string unit = text.substr(used);
  const std::pair<const char*, double> units[] = {
      {"", 1.0},   {"B", 1.0},  {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},     {"TB", 1e12}};
  for (const auto& [name, scale] : units)
    if (unit == name && value > 0.0) return static_cast<std::uint64_t>(value * scale);
  throw io::InputError("--device-memory: '" + text + "' is not a positive size such as 16GiB");
}

/// About how many bytes the output of `config` takes (rho(t), stored ADOs, an ensemble's members, a
/// spectrum), with 1 MiB for the input and attributes.
std::uint64_t output_bytes(const io::RunConfig& c, bool steady) {
  const std::uint64_t block = static_cast<std::uint64_t>(c.model.dimension()) * c.model.dimension() * 16;
  const std::uint64_t ados = Hierarchy::count(c.model.num_exponents(), c.depth);
  const std::uint64_t times = c.output_times().size();
  std::uint64_t bytes = 1 << 20;
  if (c.write_ados) bytes += ados * block;
  if (steady) return bytes + block;
  if (c.spectrum) return bytes + times * (16 + 8) + 64 * times * 16;  // C(t), and the padded spectrum
  bytes += times * block;
  if (c.ensemble && c.ensemble->store_members) bytes += c.ensemble->members.size() * times * block;
  return bytes;
}

/// Pins OpenMP threads unless the user chose otherwise (Kokkos advises it, and warns without it).
void default_thread_affinity() {
  setenv("OMP_PROC_BIND", "spread", 0);
  setenv("OMP_PLACES", "threads", 0);
}

}  // namespace
}  // namespace heom::app

int main(int argc, char* argv[]) {
  using namespace heom;
  CLI::App app{
      "heom: hierarchical equations of motion on Kokkos (CPUs and GPUs).\n"
      "Without a subcommand, runs the bundled FMO example and writes fmo.h5.",
      "heom"};
  app.set_version_flag("--version", std::string("heom ") + HEOM_VERSION_STRING + " (Kokkos " +
                                        std::to_string(KOKKOS_VERSION / 10000) + "." +
                                        std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
                                        std::to_string(KOKKOS_VERSION % 100) + ")");
  app.require_subcommand(0, 1);
  std::string input, output, device_memory, checkpoint_file, resume;
  std::vector<std::string> checkpoint_every;
  int threads = 0, devices = 0;
  CLI::App* run_cmd = app.add_subcommand("run", "Validate INPUT, print the plan, run it and write the HDF5 output");
  run_cmd->add_option("input", input, "TOML input file")->required();
  run_cmd->add_option("-o,--output", output, "HDF5 output file (default: [output] file, else INPUT with .h5)");
  run_cmd->add_option("--threads", threads, "host threads (default: OpenMP's choice)")->check(CLI::PositiveNumber);
  run_cmd
      ->add_option("--devices", devices,
                   "split the hierarchy between N simulated devices of this process, sharing the CPU's threads; "
                   "under mpirun, each rank is one device instead")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--checkpoint-every", checkpoint_every,
                      "write a checkpoint this often: \"30 min\", \"2 h\", \"90 s\" or \"1000 steps\" (may be given "
                      "twice; replaces [output] checkpoint_every)");
  run_cmd->add_option("--checkpoint-file", checkpoint_file,
                      "checkpoint file (default: [output] checkpoint_file, else OUTPUT with .checkpoint.h5)");
  run_cmd->add_option("--resume", resume, "continue the run from this checkpoint (of the same input)");
  CLI::App* steady_cmd =
      app.add_subcommand("steady", "Validate INPUT, solve for the steady state of every ADO, write it as /steady");
  steady_cmd->add_option("input", input, "TOML input file")->required();
  steady_cmd->add_option("-o,--output", output, "HDF5 output file (default: [output] file, else INPUT with .h5)");
  steady_cmd->add_option("--threads", threads, "host threads (default: OpenMP's choice)")->check(CLI::PositiveNumber);
  CLI::App* plan_cmd = app.add_subcommand("plan",
                                          "Validate INPUT and print the plan, without allocating the hierarchy (with "
                                          "--devices, its tables are built on the host to split it)");
  plan_cmd->add_option("input", input, "TOML input file")->required();
  plan_cmd->add_option("--threads", threads, "host threads (default: OpenMP's choice)")->check(CLI::PositiveNumber);
  plan_cmd
      ->add_option("--devices", devices,
                   "split the hierarchy between N devices (or MPI ranks) and print each one's share")
      ->check(CLI::PositiveNumber);
  plan_cmd->add_option("--device-memory", device_memory,
                       "memory of one device, such as 80GiB (default: what this machine's device has available)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : app::exit_bad_input;
  }

  app::MpiJob job(argc, argv);
  app::default_thread_affinity();
  // Simulated CPU devices take a share of the threads each: at least one per device.
  if (run_cmd->parsed() && devices > 1 && threads == 0 && BackendTraits<app::Exec>::is_host) {
    const char* omp = std::getenv("OMP_NUM_THREADS");
    const int available =
        omp && std::atoi(omp) > 0 ? std::atoi(omp) : static_cast<int>(std::thread::hardware_concurrency());
    threads = std::max(devices, available);
  }
  std::vector<std::string> kokkos_args = {argv[0]};
  if (threads > 0) kokkos_args.push_back(impl::kokkos_threads_argument(threads));
  std::vector<char*> kokkos_argv;
  for (auto& a : kokkos_args) kokkos_argv.push_back(a.data());
  int kokkos_argc = static_cast<int>(kokkos_argv.size());
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv.data());

  try {
    job.link_gpus_with_nccl();
    const bool bundled = !run_cmd->parsed() && !plan_cmd->parsed() && !steady_cmd->parsed();
    const io::RunConfig config =
        bundled ? io::parse_run_config(app::embedded_fmo_input, "<bundled fmo_77k.toml>") : io::read_run_config(input);
    std::string path = output;
    if (path.empty())
      path = bundled ? "fmo.h5" : (config.output_file.empty() ? app::default_output_path(input) : config.output_file);
    if (plan_cmd->parsed()) {
      // (A split hierarchy's devices hold whole blocks.)
      const MemoryPlan plan = app::memory_plan(config, devices > 0 ? AdoShape::square : app::ado_shape(config));
      const std::uint64_t available = !device_memory.empty() ? app::parse_bytes(device_memory)
                                                             : BackendTraits<app::Exec>::available_memory(app::Exec());
      app::print_plan(config, plan, available, path);
      if (config.ensemble)
        app::print_ensemble_plan(config, devices > 1 ? std::to_string(devices) + " devices" : "1 device");
      if (devices > 0 && !config.ensemble)
        app::print_device_plan(config, plan, devices, available);
      else if (available > 0)
        plan.require_fits(available, std::string(app::Exec::name()) + " memory");
      return 0;
    }
    if (devices > 1 && job.communicator())
      throw io::InputError("--devices: under mpirun each rank is one device; use one or the other");
    // Where the output goes is checked before hours of computing, not after (on the rank that writes).
    if (job.rank() == 0) {
      const std::string problem = io::output_problem(path, app::output_bytes(config, steady_cmd->parsed()));
      if (!problem.empty()) throw io::InputError("output.file: " + problem);
    }
    if (steady_cmd->parsed()) return app::run_steady(config, path, job, devices);
    if (!config.spectrum && !config.has_initial_state)
      throw io::InputError(config.input_name +
                           ": initial_state: required key is missing (heom run propagates rho from it)");
    app::CheckpointPlan plan;
    plan.every = config.checkpoint_every;
    if (!checkpoint_every.empty()) {
      plan.every = {};
      for (const std::string& every : checkpoint_every)
        io::parse_checkpoint_every(every, "--checkpoint-every", plan.every);
    }
    const bool checkpoints_asked = plan.every.any() || !checkpoint_file.empty() || !resume.empty();
    if ((config.spectrum || config.ensemble) && checkpoints_asked)
      throw io::InputError(std::string(!resume.empty()            ? "--resume"
                                       : !checkpoint_file.empty() ? "--checkpoint-file"
                                                                  : "--checkpoint-every") +
                           ": checkpoints cover the propagation of one hierarchy, not a [spectrum] or [ensemble] run");
    if (config.spectrum) return app::run_spectrum(config, path, job, devices);
    if (config.ensemble) return app::run_ensemble_members(config, path, job, devices);
    // (The bundled example, `heom` alone, takes no options: it is not checkpointed, and a signal ends it.)
    if (!bundled) {
      plan.path = !checkpoint_file.empty() ? checkpoint_file : app::checkpoint_path(config, path);
      plan.resume = resume;
      plan.run_fingerprint = app::run_fingerprint(config);
      if (job.rank() == 0) app::check_checkpoint_plan(config, plan);
    }
    return app::run(config, path, job, devices, plan);
  } catch (const io::InputError& e) {
    std::fprintf(stderr, "heom: %s%s\n", job.prefix().c_str(), e.what());
    return job.fail(app::exit_bad_input);
  } catch (const StateMismatchError& e) {
    std::fprintf(stderr, "heom: %s--resume: %s\n", job.prefix().c_str(), e.what());
    return job.fail(app::exit_bad_input);
  } catch (const OutOfMemoryError& e) {
    std::fprintf(stderr, "heom: %shierarchy.depth: %s\n", job.prefix().c_str(), e.what());
    return job.fail(app::exit_bad_input);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heom: %srun failed: %s\n", job.prefix().c_str(), e.what());
    return job.fail(app::exit_run_failed);
  }
}
