#include "stop_signals.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>

#include "io/checkpoint.hpp"

namespace heom::app {
namespace {

std::atomic<int> received{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler needs a lock-free flag");

extern "C" void on_stop_signal(int signal) {
  int none = 0;
  if (received.compare_exchange_strong(none, signal)) return;
  // The second: stop now. Only async-signal-safe calls: unlink, write, _exit.
  io::remove_unfinished_files();
  const char message[] = "\nheom: second signal: stopped at once; the last complete checkpoint is kept\n";
  (void)!::write(STDERR_FILENO, message, sizeof(message) - 1);
  ::_exit(128 + signal);
}

extern "C" void on_fatal_signal(int signal) {
  io::remove_unfinished_files();
  ::signal(signal, SIG_DFL);  // (async-signal-safe, as are unlink and raise)
  ::raise(signal);
}

}  // namespace

void install_removal_signals() {
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

void install_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int stop_signal() { return received.load(); }

const char* signal_name(int signal) {
  switch (signal) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case 0:
      return "a signal to another device";
  }
  return "a signal";
}

}  // namespace heom::app
