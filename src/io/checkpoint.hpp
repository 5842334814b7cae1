// The program's checkpoints (HDF5): one file per device of a run, part 0 at the checkpoint's path and
// part p > 0 beside it (checkpoint_part_path), each holding that device's ADOs and integrator state
// (heom::SolverState); part 0 also holds the output so far and the input. Every file of one
// checkpoint carries the same sequence number, time and fingerprint, and the partition of the
// hierarchy, so that a run on any number of devices can read back the ADOs it holds from whichever
// parts have them. Parts p > 0 alternate between two names by the sequence's parity and part 0 is
// renamed into place last: until it is, the previous checkpoint's parts are all still there.
//   /input                               the input file, verbatim
//   /fingerprint/{names, values}         what the state belongs to (heom::Fingerprint, and the program's)
//   /partition                           int64 [parts + 1]: the ADO boundaries of the parts
//   /integrator/{scalar_names, scalar_values, vector_names}
//   /integrator/vectors/NAME             {r, i} [this part's ADOs x n^2], Fletcher-32 checksummed
//   /output/rho                          {r, i} [outputs][n][n], part 0 only: rho at the times done,
//                                        checksummed as the vectors and /integrator/scalar_values are
//   /output/current                      {r, i} [outputs][baths], part 0 only, with a fermionic bath:
//                                        the lead currents at the times done, checksummed as rho
//   root attributes: format, part, parts, sequence, time, first_ado, num_ados, total_ados, block,
//                    hermitian, method, steps, rejected_steps, rhs_evaluations, wall_time_s
#ifndef HEOM_IO_CHECKPOINT_HPP
#define HEOM_IO_CHECKPOINT_HPP

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "heom/core/matrix.hpp"
#include "heom/solver/solver_state.hpp"

namespace heom::io {

struct Checkpoint {
  /// This part's state, without its vectors; its fingerprint also holds the program's entries (those
  /// of the run's output).
  SolverState solver;
  /// read_checkpoint: the reading device's vectors, read from the parts as they are asked for.
  std::shared_ptr<const VectorStore> vectors;
  int part = 0, parts = 1;
  std::vector<long long> partition;  ///< [parts + 1] ADO boundaries
  long long sequence = 0;            ///< checkpoints the run has written, this one included
  int block = 0;                     ///< elements of an ADO (n^2)
  double wall_time_s = 0.0;          ///< the run's wall time up to the checkpoint, over all its pieces
  std::string input_text;            ///< part 0 (written, not read back)
  std::vector<Matrix> rho;           ///< part 0: rho at the output times done (read with_output)
  long long outputs = 0;             ///< read: how many output times part 0 holds rho at
  std::vector<complex> current;      ///< part 0: [outputs][baths] the lead currents then (read with_output)
};

/// Where part `part` of checkpoint number `sequence` at `path` goes: `path` itself for part 0,
/// "NAME.partP-odd.h5" or "NAME.partP-even.h5" beside it for the others.
std::string checkpoint_part_path(const std::string& path, int part, long long sequence);

/// Writes checkpoint.part's file of the checkpoint at `path`, whole or not at all (the previous file
/// stays until the new one is complete): `save` gives the solver's state (save_state(store)), its
/// vectors going into the file one at a time. `before_rename` runs once the new file is written,
/// before it takes its place (part 0 waits there for the other parts). Throws heom::Error naming the
/// file.
void write_checkpoint(const std::string& path, Checkpoint checkpoint,
                      const std::function<SolverState(VectorStore&)>& save,
                      const std::function<void()>& before_rename = {});

/// The checkpoint at `path` for a device holding ADOs first_ado .. first_ado + num_ados - 1: their
/// state, with `vectors` to read them from the parts that hold them (written on any number of
/// devices) one at a time, and part 0's output so far when `with_output`. num_ados < 0: part 0's header and
/// fingerprint, after checking that every part is there, belongs to it and holds each vector at its length (for checks
/// before a run). Throws heom::Error naming the file and what is wrong with it (missing, not a checkpoint, truncated,
/// damaged, parts of different checkpoints).
Checkpoint read_checkpoint(const std::string& path, long long first_ado, long long num_ados, bool with_output);

/// "NAME`suffix`.h5" for "NAME.h5" (else "PATH`suffix`.h5"): a file beside `path`.
std::string with_suffix(const std::string& path, const std::string& suffix);

/// Removes the temporary files of the checkpoints and outputs being written (async-signal-safe: for
/// a signal handler that ends the program at once; declared here, beside the checkpoints it is for,
/// as the program cannot include the HDF5 headers).
void remove_unfinished_files() noexcept;

/// Removes every part of the checkpoint at `path`, and their temporary files.
void remove_checkpoint(const std::string& path);

}  // namespace heom::io

#endif
