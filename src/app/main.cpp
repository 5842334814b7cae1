// The heom program: `heom run INPUT.toml`, `heom steady INPUT.toml`, `heom plan INPUT.toml`,
// `heom fit INPUT.toml` (its fitted spectral densities as exponents baths), and
// `heom` alone for the bundled FMO example. Bad input exits with 2 and one line naming the key; a failed run exits
// with 1. Under mpirun (several ranks) one hierarchy is split over the ranks, one device each; the rank that holds rho
// reports and writes the output, and a rank that fails ends every rank.
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "app.hpp"
#include "commands.hpp"
#include "heom/config.hpp"
#include "heom/core/backend_traits.hpp"
#include "heom/core/error.hpp"
#include "heom/core/kokkos_arguments.hpp"
#include "heom/core/kokkos_compat.hpp"
#include "heom/distributed/devices.hpp"
#include "heom/distributed/in_process.hpp"
#include "heom/generator/options.hpp"
#include "heom/hierarchy/memory_plan.hpp"
#include "io/hdf5_output.hpp"
#include "io/input.hpp"
#include "mpi_job.hpp"
#include "plans.hpp"
#include "run_dynamics.hpp"

namespace heom::app {

extern const char* const embedded_fmo_input;  // example/fmo_77k.toml, compiled in

namespace {

constexpr int exit_bad_input = 2;
constexpr int exit_run_failed = 1;

/// The command line as main() reads it (0 and empty: not given).
struct Arguments {
  CLI::App* run = nullptr;
  CLI::App* steady = nullptr;
  CLI::App* plan = nullptr;
  CLI::App* fit = nullptr;
  std::string input, output, device_memory, checkpoint_file, resume, fit_output;
  std::vector<std::string> checkpoint_every;
  int threads = 0, devices = 0;
  std::vector<int> device_ids;
  /// `heom` alone: the bundled example.
  bool bundled() const { return !run->parsed() && !steady->parsed() && !plan->parsed() && !fit->parsed(); }
};

/// A CLI11 check that a value is a whole number >= `least`, in the program's one-line form.
CLI::Validator whole_number_from(int least) {
  return CLI::Validator(
      [least](std::string& text) -> std::string {
        std::size_t used = 0;
        long long value = 0;
        try {
          value = std::stoll(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == text.size() && used > 0 && value >= least) return "";
        return "must be a whole number >= " + std::to_string(least) + ", got " + text;
      },
      "INT>=" + std::to_string(least));
}

/// The subcommands and their options, into `a`.
void add_commands(CLI::App& app, Arguments& a) {
  a.run = app.add_subcommand("run", "Validate INPUT, print the plan, run it and write the HDF5 output");
  a.run->add_option("input", a.input, "TOML input file")->required();
  a.run->add_option("-o,--output", a.output, "HDF5 output file (default: [output] file, else INPUT with .h5)");
  a.run->add_option("--threads", a.threads, "host threads (default: OpenMP's choice)")->check(whole_number_from(1));
  a.run
      ->add_option("--devices", a.devices,
                   "split the hierarchy (or spread an ensemble) between N devices of this process: GPUs in a CUDA "
                   "build, simulated devices sharing the CPU's threads otherwise; under mpirun, each rank is one "
                   "device instead")
      ->check(whole_number_from(1));
  a.run
      ->add_option("--device-ids", a.device_ids,
                   "CUDA builds: the GPUs to run on, such as 2,3 (device d on the (d mod count)-th; a GPU named "
                   "for several devices runs each on its own stream); default HEOM_DEVICE_IDS, else 0, 1, ...")
      ->delimiter(',')
      ->check(whole_number_from(0));
  a.run->add_option("--checkpoint-every", a.checkpoint_every,
                    "write a checkpoint this often: \"30 min\", \"2 h\", \"90 s\" or \"1000 steps\" (may be given "
                    "twice; replaces [output] checkpoint_every)");
  a.run->add_option("--checkpoint-file", a.checkpoint_file,
                    "checkpoint file (default: [output] checkpoint_file, else OUTPUT with .checkpoint.h5)");
  a.run->add_option("--resume", a.resume, "continue the run from this checkpoint (of the same input)");
  a.steady =
      app.add_subcommand("steady", "Validate INPUT, solve for the steady state of every ADO, write it as /steady");
  a.steady->add_option("input", a.input, "TOML input file")->required();
  a.steady->add_option("-o,--output", a.output, "HDF5 output file (default: [output] file, else INPUT with .h5)");
  a.steady->add_option("--threads", a.threads, "host threads (default: OpenMP's choice)")->check(whole_number_from(1));
  a.plan = app.add_subcommand("plan",
                              "Validate INPUT and print the plan, without allocating the hierarchy (with "
                              "--devices, its tables are built on the host to split it)");
  a.plan->add_option("input", a.input, "TOML input file")->required();
  a.plan->add_option("--threads", a.threads, "host threads (default: OpenMP's choice)")->check(whole_number_from(1));
  a.plan
      ->add_option("--devices", a.devices,
                   "split the hierarchy between N devices (or MPI ranks) and print each one's share")
      ->check(whole_number_from(1));
  a.plan->add_option("--device-ids", a.device_ids, "CUDA builds: the GPUs the devices run on, as heom run takes them")
      ->delimiter(',')
      ->check(whole_number_from(0));
  a.plan->add_option("--device-memory", a.device_memory,
                     "memory of one device, such as 80GiB (default: what this machine's device has available; with "
                     "--devices on GPUs, the least of theirs)");
  a.fit = app.add_subcommand(
      "fit", "Fit every spectral-density bath of INPUT and write each as a [[bath]] of kind \"exponents\" (TOML)");
  a.fit->add_option("input", a.input, "TOML input file")->required();
  a.fit->add_option("-o,--output", a.fit_output, "TOML file to write (default: standard output)");
}

std::string default_output_path(const std::string& input_path) {
  std::string name = input_path;
  const auto slash = name.find_last_of('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  const auto dot = name.rfind(".toml");
  if (dot != std::string::npos && dot + 5 == name.size()) name = name.substr(0, dot);
  return name + ".h5";
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

/// HEOM_DEVICE_IDS ("2,3"), which GPU builds read for --device-ids when it is not given (a batch
/// script's, or a one-GPU machine's test run: "0"); empty when unset.
std::vector<int> gpu_ids_from_environment() {
  const char* text = std::getenv("HEOM_DEVICE_IDS");
  std::vector<int> ids;
  if (!text || !*text) return ids;
  std::string item;
  std::istringstream list(text);
  while (std::getline(list, item, ',')) {
    std::size_t used = 0;
    int id = -1;
    try {
      id = std::stoi(item, &used);
    } catch (const std::exception&) {
    }
    if (id < 0 || used != item.size())
      throw io::InputError(std::string("HEOM_DEVICE_IDS: '") + text + "' is not a list of GPU ids such as 2,3");
    ids.push_back(id);
  }
  return ids;
}

/// The devices the command line asks for (GPU builds: where --device-ids is not given, with
/// HEOM_DEVICE_IDS'), checked (heom::Devices) before anything is allocated: io::InputError, exit 2. A
/// run against the GPUs this process sees; a plan may be made for GPUs elsewhere.
Devices requested_devices(const Arguments& a, const MpiJob& job) {
  Devices devices{std::max(a.devices, 1), a.device_ids};
  if (devices.gpu_ids.empty() && devices.count > 1 && !BackendTraits<Exec>::is_host)
    devices.gpu_ids = gpu_ids_from_environment();
  if (!a.device_ids.empty() && job.communicator())
    throw io::InputError("--device-ids: under mpirun each rank is one device, on the GPU Kokkos maps it to");
  if (const auto problem = devices.validate(device_context<Exec>(), !a.plan->parsed()))
    throw io::InputError((problem->field == "count" ? "--devices: " : "--device-ids: ") + problem->problem);
  return devices;
}

/// What a device of `devices` can allocate: on GPUs of this machine, the least share of their free
/// memory (devices on one GPU share it; a plan for more GPUs than it has: what its own has).
std::uint64_t device_available_memory(const Devices& devices) {
  if (backend::is_gpu_backend<Exec> && (devices.count > 1 || !devices.gpu_ids.empty())) {
    try {
      const std::vector<std::uint64_t> shares = impl::memory_shares(Exec(), devices.count, devices.gpu_ids);
      return *std::min_element(shares.begin(), shares.end());
    } catch (const std::invalid_argument&) {
    }
  }
  return BackendTraits<Exec>::available_memory(Exec());
}

/// Kokkos' arguments for this command line: the host threads (simulated CPU devices take a share of
/// them each, at least one per device), and on a GPU, the one the run is on where it names one.
/// Where Kokkos itself runs the named GPU, it is taken out of `devices`.
std::vector<std::string> kokkos_arguments(const Arguments& a, Devices& devices, const char* program) {
  int threads = a.threads;
  if (a.run->parsed() && a.devices > 1 && threads == 0 && BackendTraits<Exec>::is_host) {
    const char* omp = std::getenv("OMP_NUM_THREADS");
    const int available =
        omp && std::atoi(omp) > 0 ? std::atoi(omp) : static_cast<int>(std::thread::hardware_concurrency());
    threads = std::max(a.devices, available);
  }
  std::vector<std::string> arguments = {program};
  if (threads > 0) arguments.push_back(kokkos_threads_argument(threads));
  if (!a.plan->parsed() && devices.count <= 1 && devices.gpu_ids.size() == 1) {  // Kokkos' own GPU
    arguments.push_back(kokkos_device_argument(devices.gpu_ids.front()));
    devices.gpu_ids.clear();
  }
  return arguments;
}

/// `text` as the file `path`, written beside it and renamed into place: never half-written.
void write_text_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << text;
    file.flush();
    if (!file) {
      std::remove(temporary.c_str());
      throw io::InputError("-o: cannot write " + path);
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw io::InputError("-o: cannot write " + path);
  }
}

/// `heom fit`: every spectral-density bath as an exponents bath, to standard output or a file.
int fit(const io::RunConfig& config, const Arguments& a) {
  const std::string text = fitted_baths_toml(config);
  if (text.empty()) throw io::InputError(a.input + ": no [[bath]] of kind \"spectral-density\" to fit");
  if (a.fit_output.empty()) {
    std::fputs(text.c_str(), stdout);
  } else {
    write_text_file(a.fit_output, text);
    std::printf("wrote %s\n", a.fit_output.c_str());
  }
  return 0;
}

/// `heom plan`: what the run would hold and where, and whether it fits.
int plan(const io::RunConfig& config, const Arguments& a, const Devices& devices, const std::string& path) {
  // (A split hierarchy's devices hold whole blocks.)
  const MemoryPlan memory = memory_plan(config, a.devices > 0 ? AdoShape::square : ado_shape(config));
  const std::uint64_t available =
      !a.device_memory.empty() ? parse_bytes(a.device_memory) : device_available_memory(devices);
  print_plan(config, memory, available, path);
  if (config.ensemble) print_ensemble_plan(config, a.devices > 1 ? std::to_string(a.devices) + " devices" : "1 device");
  if (a.devices > 0 && !config.ensemble)
    print_device_plan(config, memory, a.devices, available);
  else if (available > 0)
    memory.require_fits(available, std::string(Exec::name()) + " memory");
  return 0;
}

/// How often checkpoints are written: --checkpoint-every, else [output] checkpoint_every.
io::CheckpointEvery checkpoint_intervals(const io::RunConfig& config, const Arguments& a) {
  if (a.checkpoint_every.empty()) return config.checkpoint_every;
  io::CheckpointEvery every;
  for (const std::string& interval : a.checkpoint_every)
    io::parse_checkpoint_every(interval, "--checkpoint-every", every);
  return every;
}

/// `heom run` of one hierarchy: its checkpoints (not for the bundled example, which a signal ends).
int run_dynamics(const io::RunConfig& config, const Arguments& a, const MpiJob& job, const Devices& devices,
                 const std::string& path, const io::CheckpointEvery& every) {
  CheckpointPlan checkpoints;
  checkpoints.every = every;
  if (!a.bundled()) {
    checkpoints.path = !a.checkpoint_file.empty() ? a.checkpoint_file : checkpoint_path(config, path);
    checkpoints.resume = a.resume;
    checkpoints.output_fingerprint = output_fingerprint(config);
    if (job.rank() == 0) check_checkpoint_plan(config, checkpoints);
  }
  return run(config, path, job, devices, checkpoints);
}

/// The command the arguments name, once Kokkos runs.
int execute(const Arguments& a, const MpiJob& job, const Devices& devices) {
  const io::RunConfig config =
      a.bundled() ? io::parse_run_config(embedded_fmo_input, "<bundled fmo_77k.toml>") : io::read_run_config(a.input);
  std::string path = a.output;
  if (path.empty())
    path = a.bundled() ? "fmo.h5" : (config.output_file.empty() ? default_output_path(a.input) : config.output_file);
  if (a.fit->parsed()) return fit(config, a);
  if (a.plan->parsed()) return plan(config, a, devices, path);
  if (a.devices > 1 && job.communicator())
    throw io::InputError("--devices: under mpirun each rank is one device; use one or the other");
  // Where the output goes is checked before hours of computing, not after (on the rank that writes).
  if (job.rank() == 0) {
    const std::string problem = io::output_problem(path, output_bytes(config, a.steady->parsed()));
    if (!problem.empty()) throw io::InputError("output.file: " + problem);
  }
  if (a.steady->parsed() && config.response)
    throw io::InputError("response: heom steady solves for a steady state; a [response] is computed by heom run");
  if (a.steady->parsed()) return run_steady(config, path, job, devices);
  if (!config.spectrum && !config.response && !config.has_initial_state)
    throw io::InputError(config.input_name +
                         ": initial_state: required key is missing (heom run propagates rho from it)");
  const io::CheckpointEvery every = checkpoint_intervals(config, a);
  const bool checkpoints_asked = every.any() || !a.checkpoint_file.empty() || !a.resume.empty();
  if ((config.spectrum || config.response || config.ensemble) && checkpoints_asked)
    throw io::InputError(
        std::string(!a.resume.empty()            ? "--resume"
                    : !a.checkpoint_file.empty() ? "--checkpoint-file"
                                                 : "--checkpoint-every") +
        ": checkpoints cover the propagation of one hierarchy, not a [spectrum], [response] or [ensemble] run");
  if (config.response) return run_response(config, path, job, devices);
  if (config.spectrum) return run_spectrum(config, path, job, devices);
  if (config.ensemble) return run_ensemble_members(config, path, job, devices);
  return run_dynamics(config, a, job, devices, path, every);
}

/// The exit code of what `execute` threw, its one line printed: bad input (a mismatched checkpoint, a
/// hierarchy too deep for the memory) 2, a failed run 1.
int report_failure(const std::exception_ptr& failure, const MpiJob& job) {
  const auto print = [&](const char* key, const std::exception& e) {
    std::fprintf(stderr, "heom: %s%s%s\n", job.prefix().c_str(), key, e.what());
  };
  try {
    std::rethrow_exception(failure);
  } catch (const io::InputError& e) {
    print("", e);
  } catch (const StateMismatchError& e) {
    print("--resume: ", e);
  } catch (const OutOfMemoryError& e) {
    print("hierarchy.depth: ", e);
  } catch (const std::exception& e) {
    print("run failed: ", e);
    return job.fail(exit_run_failed);
  }
  return job.fail(exit_bad_input);
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
  CLI::App cli{
      "heom: hierarchical equations of motion on Kokkos (CPUs and GPUs).\n"
      "Without a subcommand, runs the bundled FMO example and writes fmo.h5.",
      "heom"};
  cli.set_version_flag("--version", std::string("heom ") + HEOM_VERSION_STRING + " (Kokkos " +
                                        std::to_string(KOKKOS_VERSION / 10000) + "." +
                                        std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
                                        std::to_string(KOKKOS_VERSION % 100) + ")");
  cli.require_subcommand(0, 1);
  // (One line, as every refusal: the option and what is wrong with it.)
  cli.failure_message([](const CLI::App*, const CLI::Error& e) { return "heom: " + std::string(e.what()) + "\n"; });
  app::Arguments arguments;
  app::add_commands(cli, arguments);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli.exit(e) == 0 ? 0 : app::exit_bad_input;
  }

  app::MpiJob job(argc, argv);
  app::default_thread_affinity();
  Devices devices;
  try {
    devices = app::requested_devices(arguments, job);
  } catch (const io::InputError& e) {
    std::fprintf(stderr, "heom: %s%s\n", job.prefix().c_str(), e.what());
    return job.fail(app::exit_bad_input);
  }
  std::vector<std::string> kokkos_args = app::kokkos_arguments(arguments, devices, argv[0]);
  std::vector<char*> kokkos_argv;
  for (auto& a : kokkos_args) kokkos_argv.push_back(a.data());
  int kokkos_argc = static_cast<int>(kokkos_argv.size());
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv.data());
  try {
    job.link_gpus_with_nccl();
    return app::execute(arguments, job, devices);
  } catch (...) {
    return app::report_failure(std::current_exception(), job);
  }
}
