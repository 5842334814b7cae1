// Exponents fitted to the correlation function of any spectral density: C(t) is computed by
// quadrature on a uniform grid over [0, t_fit] and fitted by ESPRIT (or Prony) with poles shared by
// C_R and C_I, with the fewest exponents that meet the tolerance.
#ifndef HEOM_MODEL_CORRELATION_FIT_HPP
#define HEOM_MODEL_CORRELATION_FIT_HPP

#include <optional>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/model/exponent.hpp"
#include "heom/model/spectral_density.hpp"

namespace heom {

enum class FitMethod {
  esprit,  ///< shift invariance of the signal subspace of the samples' Hankel matrix (Roy & Kailath)
  prony,   ///< least-squares linear prediction and the roots of its polynomial
};

const char* to_string(FitMethod method);

struct FitOptions {
  double tolerance = 1e-5;  ///< max |C_fit(t) - C(t)| over the window, relative to max |C(t)|: 1e-12 .. 1
  double time = 0.0;        ///< the window [0, time]: the run's length, > 0
  FitMethod method = FitMethod::esprit;
  int max_exponents = 24;  ///< the most exponents (hierarchy dimensions) the fit may use
  int samples = 1500;      ///< the most samples of C(t) the fit takes, 64..20000

  /// The first field out of range, and why (nothing when every field is fine).
  std::optional<OptionProblem> validate() const;
};

/// What a fit found and how well it met its tolerance.
struct CorrelationFit {
  std::vector<Exponent> exponents;       ///< every pole one RI exponent (R or I where the other part is 0)
  double error = 0.0;                    ///< max |C_fit - C| on the samples and between them, / max |C|
  double max_abs = 0.0;                  ///< max |C(t)| over the window
  double max_frequency = 0.0;            ///< J taken up to this w
  double reorganisation_left_out = 0.0;  ///< the fraction of J's reorganisation energy past max_frequency
  int samples = 0;
  double seconds = 0.0;  ///< time to fit, quadrature included
  FitOptions options;

  /// e.g. "esprit fit: error 3.1e-06 of max |C| over t <= 20 (tolerance 1e-05), J up to w = 18.4".
  std::string summary() const;
};

/// Fits C(t) of J at `temperature` (0 allowed). Throws heom::Error when max_exponents exponents do not
/// reach the tolerance; the message says the error they reached.
CorrelationFit fit_correlation(const SpectralDensity& j, double temperature, const FitOptions& options);

/// C(t) of exponents: sum over R and RI of c e^{-vt}, plus i times that of I and RI c2 (c for I).
complex evaluate_correlation(const std::vector<Exponent>& exponents, double t);

}  // namespace heom

#endif
