// heom::Drive: a time-dependent term f(t) H_i of the system Hamiltonian H(t) = H0 + sum_i f_i(t) H_i
// (pulses, continuous driving, gates), and heom::DriveShape, its f(t).
#ifndef HEOM_MODEL_DRIVE_HPP
#define HEOM_MODEL_DRIVE_HPP

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "heom/core/matrix.hpp"

namespace heom {

/// Which side of a time a drive is read from. A `constant` drive jumps at its ends: an integrator
/// reads the value before a jump at the end of its step and the value after it at the start of the
/// next, so that no step straddles one (Solver stops on every breakpoint).
enum class TimeSide { after, before };

class DriveShape {
 public:
  /// A cos(w t + phi).
  static DriveShape cosine(double amplitude, double frequency, double phase = 0.0);
  /// A exp(-(t - t_c)^2 / (2 sigma^2)) cos(w (t - t_c) + phi): a pulse centred at t_c whose envelope
  /// has standard deviation sigma (`width`), with carrier w (0: the bare envelope) and
  /// carrier-envelope phase phi.
  static DriveShape gaussian(double amplitude, double center, double width, double frequency = 0.0, double phase = 0.0);
  /// A for start <= t < end, 0 elsewhere (end may be +infinity).
  static DriveShape constant(double amplitude, double start, double end);
  /// Samples f(t_i), t strictly increasing, at least two: a natural cubic spline of the real and the
  /// imaginary parts between them, the end values held outside.
  static DriveShape table(std::vector<double> times, std::vector<complex> values);
  /// Any host function of t (library users). `name` stands for it in the plan and in checkpoints'
  /// fingerprints (a state saved with one function is refused for another name); `real`: f(t) is
  /// real for every t, which keeps the generator's Hermitian form. A hierarchy split between devices
  /// of one process calls f from each device's thread: f must be thread-safe.
  static DriveShape function(std::function<complex(double)> f, std::string name, bool real = true);

  /// f(t); at a breakpoint, its value on the given side.
  complex operator()(double t, TimeSide side = TimeSide::after) const;
  /// Whether f(t) is real for every t.
  bool is_real() const;
  /// The times where f or its derivative jumps (a constant's ends, a table's ends), in order.
  std::vector<double> breakpoints() const;
  /// e.g. "cosine (amplitude 0.1, frequency 1, phase 0)".
  std::string description() const;
  /// Every parameter to the bit (checkpoints' fingerprints).
  std::string exact_description() const;

 private:
  struct Shape;
  /// The description with `digits` significant digits, or in hexfloat with every table sample.
  static std::string describe(const Shape& shape, int digits, bool hex);
  explicit DriveShape(std::shared_ptr<const Shape> shape) : m_shape(std::move(shape)) {}
  std::shared_ptr<const Shape> m_shape;  // (immutable: models and their copies share it)
};

/// f(t) op, op of H's dimension: op Hermitian for a Hermitian H(t) with a real f.
struct Drive {
  Matrix op;
  DriveShape shape;
};

}  // namespace heom

#endif
