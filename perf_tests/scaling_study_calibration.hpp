// Reads the measured CPU step times of the scaling study's CPU prediction from heom_bench_generator's JSON.
#ifndef HEOM_PERF_TESTS_SCALING_STUDY_CALIBRATION_HPP
#define HEOM_PERF_TESTS_SCALING_STUDY_CALIBRATION_HPP

#include <string>

namespace heom::scaling_study {

/// One exp-adams step of FMO depth 5 (heom_bench_generator's BM_Step).
inline constexpr const char* calibration_benchmark = "BM_Step/model:1/depth:5/method:0/manual_time";

/// The calibration files, in perf_tests/results: the constants were measured on the CI kind of machine.
inline constexpr const char* calibration_file_1thread = "generator-1thread.json";
inline constexpr const char* calibration_file_2threads = "generator-2threads.json";

/// Seconds per iteration of the benchmark named `benchmark` in the Google Benchmark JSON `path`: its
/// benchmarks[].real_time in its time_unit (the mean over repetitions, aggregates left out). Throws
/// std::runtime_error, naming the file and the key, if the file cannot be read or holds no such entry.
double benchmark_seconds(const std::string& path, const std::string& benchmark);

}  // namespace heom::scaling_study

#endif
