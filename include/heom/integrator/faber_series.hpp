// The Faber series of exp(h z) on an ellipse: what a Chebyshev (Faber) propagator sums, exp(h L) v =
// sum_k a_k F_k(L) v, one application of L per term. The ellipse encloses L's spectrum; its Faber
// polynomials F_k are bounded by 2 inside it (and ||F_k(L)|| <= 2 when it holds L's numerical range:
// Beckermann, Numer. Math. 2005), so the terms need no rescaling, and the coefficients fall
// super-exponentially once k passes h (a + b) / 2, so the series is cut where its tail is negligible.
#ifndef HEOM_INTEGRATOR_FABER_SERIES_HPP
#define HEOM_INTEGRATOR_FABER_SERIES_HPP

#include <optional>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"

namespace heom {

/// An ellipse with its axes along the real and the imaginary direction.
struct SpectralEllipse {
  complex center;
  double semi_real = 0.0;  ///< the half-axis along the real direction, >= 0
  double semi_imag = 0.0;  ///< the half-axis along the imaginary direction, >= 0 (not both 0)

  /// Whether z lies inside or on it (within a relative 1e-12).
  bool contains(complex z) const;
  /// The first field out of range, and why (nothing when the ellipse is fine).
  std::optional<OptionProblem> validate() const;
};

/// The Faber polynomials of an ellipse as a three-term recurrence in s = (z - center) / scale:
/// F_0 = 1, F_1 = s, F_2 = s F_1 - 2 q, F_{k+1} = s F_k - q F_{k-1} for k >= 2. (A segment of the real
/// axis, q = 1, gives 2 T_k(s / 2), the Chebyshev polynomials; one of the imaginary axis q = -1; a
/// circle, q = 0, the powers of s.)
struct FaberRecurrence {
  complex center;
  double scale = 1.0;  ///< (semi_real + semi_imag) / 2
  double q = 0.0;      ///< (semi_real - semi_imag) / (semi_real + semi_imag), in [-1, 1]

  explicit FaberRecurrence(const SpectralEllipse& ellipse);
  /// F_0(z), ..., F_count-1(z): the values a propagator's terms take for an eigenvector of eigenvalue z.
  std::vector<complex> values(complex z, int count) const;
};

/// The Faber coefficients a_0, a_1, ..., a_m of exp(h z) on the ellipse (h >= 0), cut at the first m
/// whose tail sum_{k > m} |a_k| is at most `tail` (> 0): for z inside the ellipse
/// |exp(h z) - sum_{k <= m} a_k F_k(z)| <= 2 tail, plus rounding of about 1e-15 e^{h (Re center +
/// semi_real)} (the largest |exp(h z)| on the ellipse). Throws heom::OptionError for an ellipse that
/// validate() refuses, and heom::Error for h < 0, tail <= 0, h (semi_real + semi_imag) above 1400, or
/// h (Re center + semi_real) above 700 (whose scale would pass the range of a double).
std::vector<complex> faber_exp_coefficients(const SpectralEllipse& ellipse, double h, double tail);

/// Moves a_0 so that the cut series is exact at z = 0, sum_k a_k F_k(0) = exp(0) = 1 (to rounding):
/// the eigenvalue of a trace-preserving generator's steady state, so that each step keeps the trace
/// (else it would drift by the tail). The series elsewhere moves by as much as the tail.
void make_exact_at_zero(const SpectralEllipse& ellipse, std::vector<complex>& coefficients);

/// The ellipse of least semi_real + semi_imag (what a unit of time costs a Faber propagator: about
/// h (a + b) / 2 terms per step) around `points` and 0, each moved away from their middle by
/// `margin` (>= 0) of their spread but not to the right of the rightmost (the steady state's 0 is
/// exact), with its right end at Re z = right_end or the rightmost point, whichever lies further
/// right. A step of h loses about e^{h right end} of its accuracy to cancellation (the coefficients
/// scale as that), and a right end a little right of the spectrum lets the ellipse be wide where the
/// spectrum meets it: the propagator puts it at a few units over h. Throws heom::Error for a
/// non-finite point or a negative or non-finite margin or right_end.
SpectralEllipse least_ellipse_around(std::vector<complex> points, double margin, double right_end);

}  // namespace heom

#endif
