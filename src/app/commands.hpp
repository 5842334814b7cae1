// The heom program's commands besides a plain run (run_dynamics.hpp), as main() dispatches them.
#ifndef HEOM_APP_COMMANDS_HPP
#define HEOM_APP_COMMANDS_HPP

#include <string>

#include "app.hpp"
#include "io/input.hpp"
#include "mpi_job.hpp"

namespace heom::app {

/// `heom run` of an [ensemble]: its members over `devices` devices of this process or the ranks of
/// `job`, handed out as they become free; rank 0 reports and writes the mean and /ensemble.
int run_ensemble_members(const io::RunConfig& config, const std::string& output_path, const MpiJob& job,
                         const Devices& devices);

/// `heom run` with a [spectrum]: the correlation function, on the devices or ranks for an absorption
/// spectrum (its polarizations and ensemble members are independent runs), and its transform.
int run_spectrum(const io::RunConfig& config, const std::string& output_path, const MpiJob& job,
                 const Devices& devices);

/// `heom run` with a [response]: the third-order response of the exciton model's manifolds on one
/// device, and its 2D spectra.
int run_response(const io::RunConfig& config, const std::string& output_path, const MpiJob& job,
                 const Devices& devices);

/// `heom steady`: the steady state of every ADO, written as /steady.
int run_steady(const io::RunConfig& config, const std::string& output_path, const MpiJob& job, const Devices& devices);

}  // namespace heom::app

#endif
