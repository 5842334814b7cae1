// The heom program's test hooks, set from the environment (documented in docs/program.md).
#ifndef HEOM_APP_TEST_HOOKS_HPP
#define HEOM_APP_TEST_HOOKS_HPP

namespace heom::app {

/// A test hook, documented in docs/program.md: HEOM_TEST_FAIL=RANK:STEP makes that rank throw after
/// that many steps, so that the tests can check how a failed rank ends the job.
struct InjectedFailure {
  int rank = -1;
  long long step = -1;
  static InjectedFailure from_environment();
  void check(int this_rank, long long steps) const;
};

/// Test hooks, documented in docs/program.md: HEOM_TEST_SIGNAL=DEVICE:STEP makes that device (rank)
/// send itself SIGTERM after that step; HEOM_TEST_CHECKPOINT_DELAY=SECONDS pauses each checkpoint
/// write before its file is renamed into place, so that a test can signal during the write.
struct SignalHooks {
  int device = -1;
  long long step = -1;
  double delay = 0.0;
  static SignalHooks from_environment();
};

}  // namespace heom::app

#endif
