// `heom run` of one hierarchy's dynamics, on one device, several, or MPI ranks, with checkpoints to resume from.
#ifndef HEOM_APP_RUN_DYNAMICS_HPP
#define HEOM_APP_RUN_DYNAMICS_HPP

#include <string>

#include "heom/solver/solver_state.hpp"
#include "app.hpp"
#include "io/input.hpp"
#include "mpi_job.hpp"

namespace heom::app {

/// Where a run keeps its checkpoints, when it writes them, and the one it continues from.
struct CheckpointPlan {
  std::string path;  ///< part 0's file (checkpoint_file, else beside the output); empty: no checkpoints
  io::CheckpointEvery every;
  std::string resume;  ///< --resume: part 0's file to continue from; empty: start at t = 0
  /// What the program adds to the solver's fingerprint: what its output depends on besides the state.
  Fingerprint output_fingerprint;
};

/// Where a run's checkpoints go: [output] checkpoint_file, else "NAME.checkpoint.h5" beside the output.
std::string checkpoint_path(const io::RunConfig& config, const std::string& output_path);

/// The program's entries of a checkpoint's fingerprint: the output times and what else the output holds.
Fingerprint output_fingerprint(const io::RunConfig& config);

/// What can be checked about the checkpoints before the run: their folder is writable (with room for two
/// checkpoints when they are periodic: the previous one stays until the next is complete), and the
/// checkpoint to resume from is complete and belongs to this input (else InputError, naming what differs).
void check_checkpoint_plan(const io::RunConfig& config, const CheckpointPlan& plan);

/// `heom run`: on this process's device, split over the ranks of `job`, or over `devices` devices of
/// this process; device 0 (which the balanced partition gives rho) reports and writes the output.
/// Returns exit_stopped when a signal stopped it after a checkpoint.
int run(const io::RunConfig& config, const std::string& output_path, const MpiJob& job, const Devices& devices,
        CheckpointPlan plan);

}  // namespace heom::app

#endif
