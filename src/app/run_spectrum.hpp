// `heom run` with a [spectrum]: an absorption or power spectrum from the correlation function C(t).
#ifndef HEOM_APP_RUN_SPECTRUM_HPP
#define HEOM_APP_RUN_SPECTRUM_HPP

#include <string>

#include "io/input.hpp"
#include "mpi_job.hpp"

namespace heom::app {

/// `heom run` with a [spectrum]: the correlation function, on the devices or ranks for an absorption
/// spectrum (its polarizations and ensemble members are independent runs), and its transform.
int run_spectrum(const io::RunConfig& config, const std::string& output_path, const MpiJob& job, int devices);

}  // namespace heom::app

#endif
