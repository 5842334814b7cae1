// `heom run` of an [ensemble]: its members over the devices or ranks, and their mean.
#ifndef HEOM_APP_RUN_ENSEMBLE_HPP
#define HEOM_APP_RUN_ENSEMBLE_HPP

#include <string>

#include "io/input.hpp"
#include "mpi_job.hpp"

namespace heom::app {

/// `heom run` of an [ensemble]: its members over `devices` devices of this process or the ranks of
/// `job`, handed out as they become free; rank 0 reports and writes the mean and /ensemble.
int run_ensemble_members(const io::RunConfig& config, const std::string& output_path, const MpiJob& job, int devices);

}  // namespace heom::app

#endif
