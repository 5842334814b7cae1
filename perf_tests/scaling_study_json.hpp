// The scaling study's JSON: every raw number behind the tables, with the constants and their sources.
#ifndef HEOM_PERF_TESTS_SCALING_STUDY_JSON_HPP
#define HEOM_PERF_TESTS_SCALING_STUDY_JSON_HPP

#include <nlohmann/json.hpp>

#include "scaling_study_constants.hpp"
#include "scaling_study_predictions.hpp"

namespace heom::scaling_study {

/// Keys in the order they are written, as perf_tests/results/scaling_study.json has them.
using Json = nlohmann::ordered_json;

/// The whole study: tool, constants, models (each partition with its modelled step times per network),
/// the go/no-go summary, capacity, the CPU prediction and run_seconds.
Json study_json(const Study& study, const std::vector<Constant>& constant_table, double run_seconds);

}  // namespace heom::scaling_study

#endif
