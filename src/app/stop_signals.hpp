// SIGTERM and SIGINT during `heom run`: the first asks the run to write a checkpoint at the next step
// boundary and stop (exit_stopped); a second ends the program at once with 128 + the signal's number,
// removing any checkpoint file still being written, so the last complete checkpoint stays as it was.
#ifndef HEOM_APP_STOP_SIGNALS_HPP
#define HEOM_APP_STOP_SIGNALS_HPP

namespace heom::app {

/// Exit code of a run stopped by a signal after writing its checkpoint (documented in docs/program.md).
constexpr int exit_stopped = 3;

/// Installs the handlers (for the rest of the program).
void install_stop_signals();
/// For runs that are not checkpointed but write their file as they go (an ensemble, whose file rank 0
/// writes as members arrive): SIGTERM and SIGINT (also as MPI_Abort delivers them to the other ranks)
/// remove the temporary file and end the program as the signal would, so that nothing half-written stays.
void install_removal_signals();
/// The first signal received since install_stop_signals(), 0 if none.
int stop_signal();
/// "SIGTERM", "SIGINT"; for 0 (a rank that was not signalled itself, stopped with the others),
/// "a signal to another device".
const char* signal_name(int signal);

}  // namespace heom::app

#endif
