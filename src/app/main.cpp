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
#include "heom/core/detail/kokkos_compat.hpp"
#include "heom/core/kokkos_arguments.hpp"
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

/// Checks --devices and --device-ids against this build and, for a run (`running`), the GPUs this
/// process sees, before anything is allocated (io::InputError, exit 2). A plan may be made for GPUs
/// elsewhere.
void check_devices(const Devices& devices, const MpiJob& job, bool running) {
  if (running && devices.count > 1 && !impl::can_partition<Exec>())
    throw io::InputError(std::string("--devices: several devices in one process are not available on ") + Exec::name() +
                         " with Kokkos " + std::to_string(KOKKOS_VERSION) +
                         " (Kokkos 4.3 and later can); run one rank per device with mpirun");
  if (devices.gpu_ids.empty()) {
#if defined(KOKKOS_ENABLE_CUDA)
    if (devices.count > 1 && running) {
      try {
        (void)impl::gpu_placement(devices.count, {}, impl::visible_gpus());
      } catch (const std::invalid_argument& e) {
        throw io::InputError(std::string("--devices: ") + e.what());
      }
    }
#endif
    return;
  }
  if (BackendTraits<Exec>::is_host)
    throw io::InputError(std::string("--device-ids: chooses GPUs, and this heom runs on ") + Exec::name() +
                         " (a CUDA build chooses GPUs)");
  if (job.communicator())
    throw io::InputError("--device-ids: under mpirun each rank is one device, on the GPU Kokkos maps it to");
  const int count = std::max(devices.count, 1);
  if (static_cast<int>(devices.gpu_ids.size()) > count)
    throw io::InputError("--device-ids: names " + std::to_string(devices.gpu_ids.size()) + " GPUs for " +
                         std::to_string(count) + (count == 1 ? " device" : " devices") + " (--devices)");
#if defined(KOKKOS_ENABLE_CUDA)
  try {
    if (running) (void)impl::gpu_placement(count, devices.gpu_ids, impl::visible_gpus());
  } catch (const std::invalid_argument& e) {
    throw io::InputError(std::string("--device-ids: ") + e.what());
  }
#endif
  (void)running;
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

/// What a device of `devices` can allocate: on GPUs of this machine, the least share of their free
/// memory (devices on one GPU share it; a plan for more GPUs than it has: what its own has).
std::uint64_t device_available_memory(const Devices& devices) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (devices.count > 1 || !devices.gpu_ids.empty()) {
    try {
      const std::vector<std::uint64_t> shares =
          impl::memory_shares(Exec(), std::max(devices.count, 1), devices.gpu_ids);
      return *std::min_element(shares.begin(), shares.end());
    } catch (const std::invalid_argument&) {
    }
  }
#endif
  (void)devices;
  return BackendTraits<Exec>::available_memory(Exec());
}

/// Pins OpenMP threads unless the user chose otherwise (Kokkos advises it, and warns without it).
void default_thread_affinity() {
  setenv("OMP_PROC_BIND", "spread", 0);
  setenv("OMP_PLACES", "threads", 0);
}

}  // namespace
}  // namespace heom::app

namespace {

/// `text` as the file `path`, written beside it and renamed into place: never half-written.
void write_text_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file << text;
    file.flush();
    if (!file) {
      std::remove(temporary.c_str());
      throw heom::io::InputError("-o: cannot write " + path);
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw heom::io::InputError("-o: cannot write " + path);
  }
}

}  // namespace

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
  std::vector<int> device_ids;
  CLI::App* run_cmd = app.add_subcommand("run", "Validate INPUT, print the plan, run it and write the HDF5 output");
  run_cmd->add_option("input", input, "TOML input file")->required();
  run_cmd->add_option("-o,--output", output, "HDF5 output file (default: [output] file, else INPUT with .h5)");
  run_cmd->add_option("--threads", threads, "host threads (default: OpenMP's choice)")->check(CLI::PositiveNumber);
  run_cmd
      ->add_option("--devices", devices,
                   "split the hierarchy (or spread an ensemble) between N devices of this process: GPUs in a CUDA "
                   "build, simulated devices sharing the CPU's threads otherwise; under mpirun, each rank is one "
                   "device instead")
      ->check(CLI::PositiveNumber);
  run_cmd
      ->add_option("--device-ids", device_ids,
                   "CUDA builds: the GPUs to run on, such as 2,3 (device d on the (d mod count)-th; a GPU named "
                   "for several devices runs each on its own stream); default HEOM_DEVICE_IDS, else 0, 1, ...")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
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
  plan_cmd->add_option("--device-ids", device_ids, "CUDA builds: the GPUs the devices run on, as heom run takes them")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  plan_cmd->add_option("--device-memory", device_memory,
                       "memory of one device, such as 80GiB (default: what this machine's device has available; "
                       "with --devices on GPUs, the least of theirs)");
  std::string fit_output;
  CLI::App* fit_cmd = app.add_subcommand(
      "fit", "Fit every spectral-density bath of INPUT and write each as a [[bath]] of kind \"exponents\" (TOML)");
  fit_cmd->add_option("input", input, "TOML input file")->required();
  fit_cmd->add_option("-o,--output", fit_output, "TOML file to write (default: standard output)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : app::exit_bad_input;
  }

  app::MpiJob job(argc, argv);
  app::default_thread_affinity();
  app::Devices device_request{devices, device_ids};
  try {
    if (device_request.gpu_ids.empty() && device_request.count > 1 && !BackendTraits<app::Exec>::is_host)
      device_request.gpu_ids = app::gpu_ids_from_environment();
    app::check_devices(device_request, job, !plan_cmd->parsed());
  } catch (const io::InputError& e) {
    std::fprintf(stderr, "heom: %s%s\n", job.prefix().c_str(), e.what());
    return job.fail(app::exit_bad_input);
  }
  // Simulated CPU devices take a share of the threads each: at least one per device.
  if (run_cmd->parsed() && devices > 1 && threads == 0 && BackendTraits<app::Exec>::is_host) {
    const char* omp = std::getenv("OMP_NUM_THREADS");
    const int available =
        omp && std::atoi(omp) > 0 ? std::atoi(omp) : static_cast<int>(std::thread::hardware_concurrency());
    threads = std::max(devices, available);
  }
  std::vector<std::string> kokkos_args = {argv[0]};
  if (threads > 0) kokkos_args.push_back(kokkos_threads_argument(threads));
  if (!plan_cmd->parsed() && device_request.count <= 1 && device_request.gpu_ids.size() == 1) {  // Kokkos' own GPU
    kokkos_args.push_back(kokkos_device_argument(device_request.gpu_ids.front()));
    device_request.gpu_ids.clear();
  }
  std::vector<char*> kokkos_argv;
  for (auto& a : kokkos_args) kokkos_argv.push_back(a.data());
  int kokkos_argc = static_cast<int>(kokkos_argv.size());
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv.data());

  try {
    job.link_gpus_with_nccl();
    const bool bundled = !run_cmd->parsed() && !plan_cmd->parsed() && !steady_cmd->parsed() && !fit_cmd->parsed();
    const io::RunConfig config =
        bundled ? io::parse_run_config(app::embedded_fmo_input, "<bundled fmo_77k.toml>") : io::read_run_config(input);
    std::string path = output;
    if (path.empty())
      path = bundled ? "fmo.h5" : (config.output_file.empty() ? app::default_output_path(input) : config.output_file);
    if (fit_cmd->parsed()) {
      const std::string text = app::fitted_baths_toml(config);
      if (text.empty()) throw io::InputError(input + ": no [[bath]] of kind \"spectral-density\" to fit");
      if (fit_output.empty()) {
        std::fputs(text.c_str(), stdout);
      } else {
        write_text_file(fit_output, text);
        std::printf("wrote %s\n", fit_output.c_str());
      }
      return 0;
    }
    if (plan_cmd->parsed()) {
      // (A split hierarchy's devices hold whole blocks.)
      const MemoryPlan plan = app::memory_plan(config, devices > 0 ? AdoShape::square : app::ado_shape(config));
      const std::uint64_t available =
          !device_memory.empty() ? app::parse_bytes(device_memory) : app::device_available_memory(device_request);
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
    if (steady_cmd->parsed()) return app::run_steady(config, path, job, device_request);
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
    if (config.spectrum) return app::run_spectrum(config, path, job, device_request);
    if (config.ensemble) return app::run_ensemble_members(config, path, job, device_request);
    // (The bundled example, `heom` alone, takes no options: it is not checkpointed, and a signal ends it.)
    if (!bundled) {
      plan.path = !checkpoint_file.empty() ? checkpoint_file : app::checkpoint_path(config, path);
      plan.resume = resume;
      plan.run_fingerprint = app::run_fingerprint(config);
      if (job.rank() == 0) app::check_checkpoint_plan(config, plan);
    }
    return app::run(config, path, job, device_request, plan);
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
