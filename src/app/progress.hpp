// Progress of a long run on stderr: a live bar on a terminal, a line every few seconds otherwise.
#ifndef HEOM_APP_PROGRESS_HPP
#define HEOM_APP_PROGRESS_HPP

#include <chrono>
#include <cstdio>
#include <string>

namespace heom::app {

/// `out` nullptr: reports nothing (a rank that is not the reporting one). Reports "t = 5 / 10 fs", or
/// with `quantity` "members", "members = 5 / 10".
class Progress {
 public:
  Progress(double t_begin, double t_end, std::string time_unit, std::FILE* out = stderr, std::string quantity = "t");
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  /// Reports simulated time (or the quantity) t (rate-limited: cheap to call after every step).
  void update(double t);
  /// Adds `text` to the report ("checkpoint t = 50 fs -> run.checkpoint.h5"), shown at once and on
  /// every later line until replaced.
  void note(const std::string& text);
  /// Ends the report (clears the terminal line, so that what follows starts on a clean line).
  void finish();

 private:
  using clock = std::chrono::steady_clock;
  void report(double t, double elapsed);

  double m_begin, m_end;
  std::string m_unit, m_quantity;
  std::FILE* m_out;
  bool m_terminal;
  std::string m_note;
  double m_t;  // the last time reported
  clock::time_point m_start, m_last;
  bool m_drawn = false;
};

/// "1:02:03", "2:03" or "3.4 s".
std::string format_duration(double seconds);

}  // namespace heom::app

#endif
