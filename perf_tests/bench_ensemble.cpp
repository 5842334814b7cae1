// Ensembles spread over ranks and devices (heom::run_ensemble): the wall time of M disordered members
// per worker, on one rank, over the ranks of an MPI job (`ranks`), or over devices of this process
// (`devices`, with --devices N). One JSON object per run, from rank 0; perf_tests/ensemble_scaling.py
// runs the weak-scaling series and plots it.
//
//   heom_bench_ensemble --mode ranks --model fmo --depth 4 --members-per-worker 8
//   mpirun -n 2 heom_bench_ensemble --mode ranks --model fmo --depth 4 --members-per-worker 8
//   heom_bench_ensemble --mode devices --devices 2 --model spin-boson --depth 6 --members-per-worker 32
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_models.hpp"
#include "bench_mpi_main.hpp"
#include "heom/distributed/mpi_communicator.hpp"
#include "heom/heom.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

struct Arguments {
  std::string mode = "ranks";  // ranks | devices
  std::string model = "fmo";   // fmo | spin-boson
  int depth = 4, members_per_worker = 8, devices = 1;
  double t_end = 0.0;  // 0: the model's default (1000 fs for FMO, 20 for the spin-boson)
};

/// The options besides the model's and the devices' (heom::bench::add_model_options).
void add_options(CLI::App& app, Arguments& a) {
  app.add_option("--mode", a.mode, "ranks (of the MPI job) or devices (of this process)")
      ->check(CLI::IsMember({"ranks", "devices"}))
      ->capture_default_str();
  app.add_option("--members-per-worker", a.members_per_worker, "members per rank or device")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--t-end", a.t_end, "last output time; 0: 1000 fs for FMO, 20 for the spin-boson")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  heom::bench::add_model_options(app, a.model, a.depth, a.devices);
}

/// `count` members of the model with Gaussian disorder on H's diagonal (50 cm^-1 for FMO, 0.1 for
/// the spin-boson), from the first site populated.
std::vector<heom::EnsembleMember> members(const Arguments& a, int count) {
  const heom::Model base = a.model == "fmo" ? heom::bench::fmo() : heom::bench::spin_boson(2);
  const int n = base.dimension();
  const double sigma = a.model == "fmo" ? 50 * 2 * M_PI * 2.99792458e-5 : 0.1;
  heom::Matrix rho0(n, n);
  rho0(0, 0) = 1.0;
  std::vector<heom::EnsembleMember> out;
  for (int r = 0; r < count; ++r)
    out.push_back({heom::Model(heom::with_diagonal_disorder(base.hamiltonian(), std::vector<double>(n, sigma), 7, r),
                               base.baths()),
                   rho0});
  return out;
}

/// Runs the ensemble and prints its JSON object on rank 0.
void measure(const Arguments& args) {
  const auto world = std::make_shared<const heom::MpiCommunicator>(MPI_COMM_WORLD);
  heom::EnsembleOptions options;
  options.depth = args.depth;
  options.solver.integrator.rtol = 1e-8;
  options.solver.integrator.atol = 1e-10;
  int workers = world->size();
  if (args.mode == "devices") {
    options.devices = workers = args.devices;
  } else if (world->size() > 1) {
    options.ranks = world;
  }
  const double t_end = args.t_end > 0 ? args.t_end : (args.model == "fmo" ? 1000.0 : 20.0);
  std::vector<double> times;
  for (int i = 0; i <= 100; ++i) times.push_back(t_end * i / 100);
  const auto ensemble = members(args, args.members_per_worker * workers);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  const heom::EnsembleResult r = heom::run_ensemble(Exec(), ensemble, times, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long long steps = 0, fewest = r.members.front().statistics.steps, most = fewest;
  for (const auto& m : r.members) {
    steps += m.statistics.steps;
    fewest = std::min<long long>(fewest, m.statistics.steps);
    most = std::max<long long>(most, m.statistics.steps);
  }
  if (world->rank() == 0)
    std::printf(
        "{\"mode\": \"%s\", \"workers\": %d, \"threads\": %d, \"model\": \"%s\", \"depth\": %d, "
        "\"ados\": %llu, \"members\": %zu, \"seconds\": %.6g, \"members_per_second\": %.6g, "
        "\"steps_per_member\": %.6g, \"fewest_steps\": %lld, \"most_steps\": %lld}\n",
        args.mode.c_str(), workers, Exec().concurrency(), args.model.c_str(), args.depth,
        static_cast<unsigned long long>(heom::Hierarchy::count(ensemble.front().model.num_exponents(), args.depth)),
        ensemble.size(), seconds, ensemble.size() / seconds, static_cast<double>(steps) / ensemble.size(), fewest,
        most);
}

}  // namespace

int main(int argc, char* argv[]) {
  return heom::bench::run_mpi_benchmark<Arguments>(
      argc, argv, "heom_bench_ensemble",
      "Ensembles spread over ranks and devices: the wall time of M disordered members per worker, as one "
      "JSON object",
      add_options, measure);
}
