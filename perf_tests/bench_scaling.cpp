// Strong scaling of one hierarchy split between devices: time per exp-adams step on one device
// (`one`), split over the ranks of an MPI job (`split`), split over devices of this process
// (`devices`, with --devices N), and, for the machine's own parallel capacity, as independent whole
// copies on every rank (`copies`). One JSON object per run, from rank 0; perf_tests/scaling.py runs
// the series and plots it.
//
//   mpirun -n 2 heom_bench_scaling --mode split --model fmo --depth 6 --steps 40
//   heom_bench_scaling --mode devices --devices 2 --model fmo --depth 6
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <vector>
#include <memory>
#include <string>

#include "bench_models.hpp"
#include "bench_mpi_main.hpp"
#include "heom/distributed/in_process.hpp"
#include "heom/distributed/mpi_communicator.hpp"
#include "heom/heom.hpp"
#include "heom/hierarchy/partition.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

struct Arguments {
  std::string mode = "split";  // one | split | devices | copies
  std::string model = "fmo";   // fmo | spin-boson
  int depth = 6, steps = 40, warmup = 10, devices = 1;
};

/// The options besides the model's and the devices' (heom::bench::add_model_options).
void add_options(CLI::App& app, Arguments& a) {
  app.add_option("--mode", a.mode, "one, split (over the MPI ranks), devices (of this process) or copies")
      ->check(CLI::IsMember({"one", "split", "devices", "copies"}))
      ->capture_default_str();
  app.add_option("--steps", a.steps, "timed steps")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--warmup", a.warmup, "steps before the timed ones")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  heom::bench::add_model_options(app, a.model, a.depth, a.devices);
}

heom::Matrix initial_rho(int n) {
  heom::Matrix rho(n, n);
  rho(0, 0) = 1.0;
  return rho;
}

struct Timing {
  double seconds_per_step = 0.0;
  double halo_fraction = 0.0;
  std::uint64_t halo_bytes = 0;  // received per generator application
  int ados = 0;
  std::string kernel;
};

/// Times `steps` exp-adams steps (after `warmup`) of one device's solver: the whole hierarchy, or a
/// share of it when `communicator` is given.
Timing time_steps(const Exec& exec, const Arguments& args, std::shared_ptr<const heom::Communicator> communicator) {
  // FMO (K = 14, n = 7, the Hermitian kernel) or the spin-boson with Nk = 5 (K = 6, n = 2).
  const heom::Model model = args.model == "fmo" ? heom::bench::fmo() : heom::bench::spin_boson(5);
  heom::SolverOptions options;
  options.integrator.method = heom::Method::exp_adams;
  options.integrator.rtol = 1e-8;
  options.integrator.atol = 1e-10;
  options.communicator = std::move(communicator);
  heom::Solver<Exec> solver(exec, model, args.depth, options);
  solver.set_initial_state(initial_rho(model.dimension()));
  for (int s = 0; s < args.warmup; ++s) solver.step();
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < args.steps; ++s) solver.step();
  Timing t;
  t.seconds_per_step = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / args.steps;
  t.ados = solver.hierarchy().size();
  t.kernel = heom::to_string(solver.kernel());
  t.halo_bytes = solver.generator().halo_bytes_received(solver.state().form());
  if (const heom::Distribution* d = solver.distribution())
    t.halo_fraction = heom::partition_statistics(solver.hierarchy(), d->partition, model.dimension()).total_halo_ratio;
  return t;
}

/// Runs the configuration and prints its JSON object on rank 0.
void measure(const Arguments& args) {
  const auto world = std::make_shared<const heom::MpiCommunicator>(MPI_COMM_WORLD);
  Timing t;
  int devices = world->size();
  if (args.mode == "devices") {
    devices = args.devices;
    std::vector<Timing> each(devices);
    heom::run_on_devices(Exec(), devices, [&](const Exec& exec, int d, std::shared_ptr<const heom::Communicator> c) {
      each[d] = time_steps(exec, args, std::move(c));
    });
    t = each[0];
    for (const Timing& e : each) t.seconds_per_step = std::max(t.seconds_per_step, e.seconds_per_step);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    t = time_steps(Exec(), args, args.mode == "split" ? world : nullptr);
    MPI_Allreduce(MPI_IN_PLACE, &t.seconds_per_step, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  if (world->rank() == 0)
    std::printf(
        "{\"mode\": \"%s\", \"devices\": %d, \"threads\": %d, \"model\": \"%s\", \"depth\": %d, "
        "\"ados\": %d, \"halo_fraction\": %.4f, \"halo_bytes_received\": %llu, \"steps\": %d, "
        "\"seconds_per_step\": %.6g, \"kernel\": \"%s\"}\n",
        args.mode.c_str(), devices, Exec().concurrency(), args.model.c_str(), args.depth, t.ados, t.halo_fraction,
        static_cast<unsigned long long>(t.halo_bytes), args.steps, t.seconds_per_step, t.kernel.c_str());
}

}  // namespace

int main(int argc, char* argv[]) {
  return heom::bench::run_mpi_benchmark<Arguments>(
      argc, argv, "heom_bench_scaling",
      "Strong scaling of one hierarchy split between devices: time per exp-adams step, as one JSON object", add_options,
      measure);
}
