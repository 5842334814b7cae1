// heom::Error: the one exception type heom throws for bad input and failed runs.
#ifndef HEOM_CORE_ERROR_HPP
#define HEOM_CORE_ERROR_HPP

#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace heom {

/// Thrown for invalid input (the message names the parameter or key and what is wrong) and for
/// runs that cannot continue (the message says where they stopped). Programs print what() as one
/// line and exit non-zero.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// Throws heom::Error(message) unless ok.
inline void require(bool ok, const std::string& message) {
  if (!ok) throw Error(message);
}

/// x with `digits` significant digits, for messages (17: the shortest that reads back to the same bits).
inline std::string format_number(double x, int digits = 10) {
  std::ostringstream s;
  s.precision(digits);
  s << x;
  return s.str();
}

/// What an options struct's validate() finds wrong: the field at fault, by its C++ name ("rtol";
/// "integrator.rtol" within SolverOptions), and the problem ("must be > 0, got -1"). Each front end
/// (the program's input, the Python module) names the field by its own key or argument.
struct OptionProblem {
  std::string field;
  std::string problem;
  std::string message() const { return field + ": " + problem; }
  /// The same problem, its field seen from the struct that holds the options as `member`.
  OptionProblem within(const std::string& member) const { return {member + "." + field, problem}; }
};

/// Options that failed their validate(), thrown where they enter the library; what() is "field:
/// problem", after "context: " where the caller names itself.
class OptionError : public Error {
 public:
  explicit OptionError(OptionProblem problem, const std::string& context = "")
      : Error((context.empty() ? "" : context + ": ") + problem.message()), m_problem(std::move(problem)) {}
  const OptionProblem& problem() const noexcept { return m_problem; }

 private:
  OptionProblem m_problem;
};

/// Throws OptionError (after "context: ") for what validate() found, if anything.
inline void require_valid(const std::optional<OptionProblem>& problem, const std::string& context = "") {
  if (problem) throw OptionError(*problem, context);
}

/// A run that diverged or whose step size collapsed; time() is the simulated time it reached.
class IntegrationError : public Error {
 public:
  IntegrationError(const std::string& message, double time) : Error(message), m_time(time) {}
  double time() const noexcept { return m_time; }

 private:
  double m_time;
};

/// A saved state (heom::SolverState, a checkpoint) that does not belong to the Solver or run it was
/// loaded into, or is damaged; what() names what differs.
class StateMismatchError : public Error {
 public:
  using Error::Error;
};

/// The hierarchy does not fit in the memory available to the device.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

}  // namespace heom

#endif
