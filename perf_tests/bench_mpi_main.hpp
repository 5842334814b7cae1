// What heom_bench_scaling and heom_bench_ensemble share: their options for the model and the
// devices, and a main() that starts MPI and Kokkos, parses the command line with CLI11 and runs the
// measurement, an error ending it with one line and exit status 1.
#ifndef HEOM_PERF_TESTS_BENCH_MPI_MAIN_HPP
#define HEOM_PERF_TESTS_BENCH_MPI_MAIN_HPP

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <exception>
#include <string>

namespace heom::bench {

/// --model, --depth and --devices, into `model`, `depth` and `devices`.
inline void add_model_options(CLI::App& app, std::string& model, int& depth, int& devices) {
  app.add_option("--model", model, "fmo or spin-boson")
      ->check(CLI::IsMember({"fmo", "spin-boson"}))
      ->capture_default_str();
  app.add_option("--depth", depth, "hierarchy depth")->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--devices", devices, "devices of this process (--mode devices)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

/// main(): add_options(app, arguments) declares the options, measure(arguments) runs. Returns the
/// exit status: 0, 0 after --help, 1 after a bad option (CLI11's message) or an error.
template <class Arguments, class AddOptions, class Measure>
int run_mpi_benchmark(int argc, char* argv[], const std::string& name, const std::string& description,
                      const AddOptions& add_options, const Measure& measure) {
  MPI_Init(&argc, &argv);
  int result = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    Arguments arguments;
    CLI::App app{description, name};
    add_options(app, arguments);
    try {
      app.parse(argc, argv);
      measure(arguments);
    } catch (const CLI::ParseError& e) {
      result = app.exit(e) == 0 ? 0 : 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
      result = 1;
    }
  }
  MPI_Finalize();
  return result;
}

}  // namespace heom::bench

#endif
