// The program's checkpoints (HDF5): one file per device of a run, part 0 at the checkpoint's path and
// part p > 0 beside it (checkpoint_part_path), each holding that device's ADOs and integrator state
// (heom::SolverState); part 0 also holds the output so far and the input. Every file of one
// checkpoint carries the same sequence number and time, and the partition of the hierarchy, so that a
// run on any number of devices can read back the ADOs it holds from whichever parts have them.
//   /input                               the input file, verbatim
//   /fingerprint/{names, values}         what the state belongs to (heom::Fingerprint, and the program's)
//   /partition                           int64 [parts + 1]: the ADO boundaries of the parts
//   /integrator/{scalar_names, scalar_values, vector_names}
//   /integrator/vectors/NAME             {r, i} [this part's ADOs x n^2]
//   /output/rho                          {r, i} [outputs][n][n], part 0 only: rho at the times done
//   root attributes: format, part, parts, sequence, time, first_ado, num_ados, total_ados, block,
//                    hermitian, method, steps, rejected_steps, rhs_evaluations, wall_time_s
#ifndef HEOM_IO_CHECKPOINT_HPP
#define HEOM_IO_CHECKPOINT_HPP

#include <functional>
#include <string>
#include <vector>

#include "heom/core/matrix.hpp"
#include "heom/solver/solver_state.hpp"

namespace heom::io {

struct Checkpoint {
  /// This part's state; its fingerprint also holds the program's entries (those of the run's output).
  SolverState solver;
  int part = 0, parts = 1;
  std::vector<long long> partition;  ///< [parts + 1] ADO boundaries
  long long sequence = 0;            ///< checkpoints the run has written, this one included
  int block = 0;                     ///< elements of an ADO (n^2)
  double wall_time_s = 0.0;          ///< the run's wall time up to the checkpoint, over all its pieces
  std::string input_text;            ///< part 0
  std::vector<Matrix> rho;           ///< part 0: rho at the output times done
};

/// Where part `part` of the checkpoint at `path` goes: `path` itself for part 0, "NAME.partP.h5"
/// beside it for the others.
std::string checkpoint_part_path(const std::string& path, int part);

/// Writes checkpoint.part's file of the checkpoint at `path`, whole or not at all (the previous file
/// stays until the new one is complete). `before_rename` runs once the new file is written (a test
/// hook). Throws heom::Error naming the file.
void write_checkpoint(const std::string& path, const Checkpoint& checkpoint,
                      const std::function<void()>& before_rename = {});

/// The checkpoint at `path` for a device holding ADOs first_ado .. first_ado + num_ados - 1: their
/// state gathered from the parts that hold them (written on any number of devices), part 0's output
/// so far when `with_output`. num_ados < 0: part 0's header, fingerprint and output alone (no
/// vectors), for checks before a run. Throws heom::Error naming the file and what is wrong with it
/// (missing, not a checkpoint, truncated, parts of different checkpoints).
Checkpoint read_checkpoint(const std::string& path, long long first_ado, long long num_ados, bool with_output);

/// Removes the temporary files of checkpoints and outputs being written (async-signal-safe: for a
/// signal handler that ends the program at once).
void remove_unfinished_files() noexcept;

/// Removes every part of the checkpoint at `path` (`parts` of them); missing files are no error.
void remove_checkpoint(const std::string& path, int parts);

}  // namespace heom::io

#endif
