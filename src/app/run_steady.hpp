// The steady-state solve that `heom steady` and a power spectrum start from, and its record.
#ifndef HEOM_APP_RUN_STEADY_HPP
#define HEOM_APP_RUN_STEADY_HPP

#include <string>

#include "app.hpp"
#include "heom/solver/solver.hpp"
#include "heom/solver/steady_state_options.hpp"
#include "io/hdf5_output.hpp"
#include "io/input.hpp"
#include "mpi_job.hpp"

namespace heom::app {

/// Solves for `solver`'s steady state from the input's initial state (if any), reporting progress as
/// digits of the residual gained.
SteadyStateReport solve_steady(Solver<Exec>& solver, const io::RunConfig& config, bool reporter);

io::SteadyRecord steady_record(const Solver<Exec>& solver, const SteadyStateReport& report,
                               const SteadyStateOptions& options, bool with_ados, io::Units units);

/// Refuses what a steady state or a spectrum cannot be split over: several devices or ranks of one model.
void require_one_device(const MpiJob& job, const Devices& devices, const char* what);

}  // namespace heom::app

#endif
