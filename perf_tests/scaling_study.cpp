// Feasibility study: one hierarchy split over several devices. Measures, on real hierarchies, the halo of
// heom::Partition::balanced and of tier partitions (ADOs grouped by level |n|), and where the baths are
// diagonal the rows of the balanced halo that the Hermitian form exchanges (heom::HaloRows), then feeds
// the per-part counts to a roofline and link model of H200 GPUs. Writes every raw number as JSON and
// prints the tables of docs/scaling.md (markdown). Host-only: no Kokkos, no device.
//
//   scaling_study [output.json]     (default perf_tests/results/scaling_study.json)
//       [--cpu-1thread-results FILE] [--cpu-2threads-results FILE]
//
// The model's constants and where they come from: docs/scaling.md, "Assumptions"; the measured CPU step
// times the CPU prediction is calibrated on are read from heom_bench_generator's JSON (by default
// perf_tests/results/generator-1thread.json and generator-2threads.json). The parts:
// scaling_study_hierarchy (halos of partitions), scaling_study_time_model (the H200 model),
// scaling_study_predictions (what follows from both), scaling_study_tables and scaling_study_json (output).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>

#include "scaling_study_calibration.hpp"
#include "scaling_study_constants.hpp"
#include "scaling_study_json.hpp"
#include "scaling_study_predictions.hpp"
#include "scaling_study_tables.hpp"

// The build points this at the source tree's perf_tests/results; without it, run from the repository root.
#ifndef HEOM_PERF_RESULTS_DIR
#define HEOM_PERF_RESULTS_DIR "perf_tests/results"
#endif

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace heom::scaling_study;
  const auto started = std::chrono::steady_clock::now();
  const std::string results_dir = HEOM_PERF_RESULTS_DIR;
  std::string output = "perf_tests/results/scaling_study.json";
  std::string file_1thread = results_dir + "/" + calibration_file_1thread;
  std::string file_2threads = results_dir + "/" + calibration_file_2threads;
  const std::string calibration_key = std::string("benchmarks[name = \"") + calibration_benchmark + "\"].real_time";

  CLI::App app{
      "The multi-device feasibility study (docs/scaling.md): halo volumes of partitions of real hierarchies and an "
      "H200 model built on them. Prints the tables as markdown and writes every number as JSON.",
      "scaling_study"};
  app.add_option("output", output, "JSON output file")->capture_default_str();
  const CLI::Option* given_1thread =
      app.add_option("--cpu-1thread-results", file_1thread,
                     "heom_bench_generator JSON on one thread: the CPU step time is its " + calibration_key)
          ->capture_default_str();
  const CLI::Option* given_2threads =
      app.add_option("--cpu-2threads-results", file_2threads,
                     "heom_bench_generator JSON on two threads: the CPU step time is its " + calibration_key)
          ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    CpuCalibration cpu;
    cpu.fmo_depth5_step_1thread_s = benchmark_seconds(file_1thread, calibration_benchmark);
    cpu.fmo_depth5_step_2threads_s = benchmark_seconds(file_2threads, calibration_benchmark);
    // The JSON cites the default files by their place in the repository, as before they were options.
    cpu.file_1thread =
        given_1thread->count() > 0 ? file_1thread : std::string("perf_tests/results/") + calibration_file_1thread;
    cpu.file_2threads =
        given_2threads->count() > 0 ? file_2threads : std::string("perf_tests/results/") + calibration_file_2threads;

    Study study;
    for (const ModelSpec& m : study_models) {
      study.models.push_back(measure(m));
      std::fprintf(stderr, "%s: %d ADOs, %.1f s so far\n", m.key.c_str(), study.models.back().ados,
                   seconds_since(started));
    }
    for (const ModelResult& r : study.models) study.summary.push_back(decide_go_no_go(r));
    study.capacity = estimate_capacity(study.models);
    study.cpu = predict_cpu(cpu);

    print_tables(study);
    const Json json = study_json(study, constants(cpu), seconds_since(started));
    std::ofstream file(output);
    file << json.dump(2) << '\n';
    if (!file) {
      std::fprintf(stderr, "scaling_study: cannot write %s\n", output.c_str());
      return 1;
    }
    std::fprintf(stderr, "wrote %s\n", output.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scaling_study: %s\n", e.what());
    return 1;
  }
}
