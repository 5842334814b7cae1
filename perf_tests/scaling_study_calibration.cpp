// Reads a measured step time from Google Benchmark JSON, for the scaling study's CPU calibration.
#include "scaling_study_calibration.hpp"

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace heom::scaling_study {

namespace {

double seconds_per(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1.0;
  return 0.0;
}

}  // namespace

double benchmark_seconds(const std::string& path, const std::string& benchmark) {
  const std::string key = "benchmarks[name = \"" + benchmark + "\"].real_time";
  std::ifstream file(path);
  if (!file) throw std::runtime_error(path + ": cannot open it (the measured CPU step time is its " + key + ")");
  double sum = 0.0;
  int count = 0;
  try {
    const nlohmann::json results = nlohmann::json::parse(file);
    const auto benchmarks = results.find("benchmarks");
    if (benchmarks != results.end() && benchmarks->is_array())
      for (const nlohmann::json& b : *benchmarks) {
        if (!b.is_object() || b.value("name", std::string()) != benchmark ||
            b.value("run_type", std::string("iteration")) != "iteration" || !b.contains("real_time"))
          continue;
        const std::string unit = b.value("time_unit", std::string("ns"));  // Google Benchmark's default
        if (seconds_per(unit) == 0.0)
          throw std::runtime_error(path + ": " + key + " is in time_unit \"" + unit + "\", not ns, us, ms or s");
        sum += b.at("real_time").get<double>() * seconds_per(unit);
        ++count;
      }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": cannot read " + key + ": " + e.what());
  }
  if (count == 0) throw std::runtime_error(path + ": has no " + key + " (the measured CPU step time)");
  return sum / count;
}

}  // namespace heom::scaling_study
