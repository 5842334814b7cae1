// Progress reporting for the heom program.
#include "progress.hpp"

#include <unistd.h>

#include <cmath>

namespace heom::app {

std::string format_duration(double seconds) {
  char buffer[32];
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) {
    std::snprintf(buffer, sizeof buffer, "%.1f s", seconds);
  } else {
    const long s = std::lround(seconds);
    if (s >= 3600)
      std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
    else
      std::snprintf(buffer, sizeof buffer, "%ld:%02ld", s / 60, s % 60);
  }
  return buffer;
}

Progress::Progress(double t_begin, double t_end, std::string time_unit, std::FILE* out, std::string quantity)
    : m_begin(t_begin),
      m_end(t_end),
      m_unit(std::move(time_unit)),
      m_quantity(std::move(quantity)),
      m_out(out),
      m_terminal(out && isatty(fileno(out)) != 0),
      m_t(t_begin) {
  m_start = m_last = clock::now();
}

void Progress::update(double t) {
  if (!m_out) return;
  m_t = t;
  const auto now = clock::now();
  const double since_last = std::chrono::duration<double>(now - m_last).count();
  // A terminal redraws ten times a second; a log gets a line every five seconds.
  if (since_last < (m_terminal ? 0.1 : 5.0)) return;
  m_last = now;
  report(t, std::chrono::duration<double>(now - m_start).count());
}

void Progress::report(double t, double elapsed) {
  const double fraction = m_end > m_begin ? std::min(1.0, std::max(0.0, (t - m_begin) / (m_end - m_begin))) : 1.0;
  const double eta = fraction > 0 ? elapsed * (1.0 - fraction) / fraction : NAN;
  if (m_terminal) {
    constexpr int width = 30;
    const int filled = static_cast<int>(fraction * width);
    std::string bar(filled, '#');
    bar.append(width - filled, '.');
    std::fprintf(m_out, "\r  [%s] %5.1f%%  %s = %.6g / %.6g %s  elapsed %s  ETA %s  %s   ", bar.c_str(), 100 * fraction,
                 m_quantity.c_str(), t, m_end, m_unit.c_str(), format_duration(elapsed).c_str(),
                 format_duration(eta).c_str(), m_note.c_str());
    m_drawn = true;
  } else {
    std::fprintf(m_out, "heom: %s = %.6g / %.6g %s (%.1f%%), elapsed %s, ETA %s%s%s\n", m_quantity.c_str(), t, m_end,
                 m_unit.c_str(), 100 * fraction, format_duration(elapsed).c_str(), format_duration(eta).c_str(),
                 m_note.empty() ? "" : "; ", m_note.c_str());
  }
  std::fflush(m_out);
}

void Progress::note(const std::string& text) {
  m_note = text;
  if (!m_out) return;
  if (m_terminal) {
    report(m_t, std::chrono::duration<double>(clock::now() - m_start).count());
  } else {
    std::fprintf(m_out, "heom: %s\n", text.c_str());
    std::fflush(m_out);
  }
}

void Progress::finish() {
  if (m_terminal && m_drawn) {
    std::fprintf(m_out, "\r%*s\r", 200, "");
    std::fflush(m_out);
    m_drawn = false;
  }
}

}  // namespace heom::app
