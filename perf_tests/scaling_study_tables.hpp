// The scaling study's tables, printed as the markdown of docs/scaling.md.
#ifndef HEOM_PERF_TESTS_SCALING_STUDY_TABLES_HPP
#define HEOM_PERF_TESTS_SCALING_STUDY_TABLES_HPP

#include "scaling_study_predictions.hpp"

namespace heom::scaling_study {

/// Halo volumes and modelled efficiencies (one row per model, one column per part count), the go/no-go
/// summary, capacity and the CPU prediction, on stdout.
void print_tables(const Study& study);

}  // namespace heom::scaling_study

#endif
