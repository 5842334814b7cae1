// heom::SpectralDensity: a bosonic bath's J(w) as a sum of Ohmic, Drude-Lorentz and underdamped
// terms or a table of samples, and the correlation function it implies, by quadrature (hbar = kB = 1).
#ifndef HEOM_MODEL_SPECTRAL_DENSITY_HPP
#define HEOM_MODEL_SPECTRAL_DENSITY_HPP

#include <string>
#include <vector>

#include "heom/core/cubic_spline.hpp"
#include "heom/core/matrix.hpp"

namespace heom {

class SpectralDensity {
 public:
  /// J(w) = alpha w^s wc^(1-s) exp(-w / wc) (QuTiP 5's OhmicEnvironment): alpha >= 0, wc > 0, s > 0
  /// (s < 1 sub-Ohmic, s > 1 super-Ohmic).
  static SpectralDensity ohmic(double alpha, double cutoff, double exponent = 1.0);
  /// J(w) = 2 lambda gamma w / (w^2 + gamma^2).
  static SpectralDensity drude_lorentz(double lambda, double gamma);
  /// J(w) = lambda^2 gamma w / ((w0^2 - w^2)^2 + gamma^2 w^2).
  static SpectralDensity underdamped(double lambda, double gamma, double w0);
  /// J sampled at increasing w >= 0, a natural cubic spline between the samples and zero beyond the
  /// last; J(0) must be 0 (a sample (0, 0) is put first when w does not start at 0).
  static SpectralDensity table(std::vector<double> w, std::vector<double> j);

  /// Adds the other density's terms to this one's.
  SpectralDensity& operator+=(const SpectralDensity& other);

  /// J(w), w >= 0.
  double operator()(double w) const;
  /// e.g. "ohmic (alpha 0.05, wc 1, s 1) + underdamped (lambda 0.2, gamma 0.1, w0 1)".
  std::string description() const;

  /// The narrowest feature of J (a cutoff, a peak's width, the table's spacing): the quadrature's
  /// panels are no wider than a quarter of it.
  double finest_scale() const;
  /// A frequency past which J holds no more than `fraction` of its reorganisation energy (the
  /// largest sample for a table).
  double frequency_cutoff(double fraction) const;
  /// lambda = (1/pi) int_0^w_max J(w) / w dw.
  double reorganisation_energy(double w_max) const;

  /// C(t_k) = (1/pi) int_0^w_max J(w) [coth(w / 2T) cos(w t_k) - i sin(w t_k)] dw at t_k = k dt,
  /// k < count (T = 0: coth = 1), by composite Gauss-Legendre quadrature fine enough for the last t_k.
  std::vector<complex> correlation(double dt, int count, double temperature, double w_max) const;

 private:
  enum class Kind { ohmic, drude_lorentz, underdamped, table };
  struct Term {
    Kind kind;
    double a = 0.0, b = 0.0, c = 0.0;  // (alpha, wc, s), (lambda, gamma, -), (lambda, gamma, w0)
    impl::CubicSpline table;           // a table's samples, splined
  };
  std::vector<Term> m_terms;

  double term_value(const Term& t, double w) const;
  /// Where J's features end (past a peak, a few cutoffs).
  double structure_extent() const;
  /// Quadrature nodes and weights over [start, w_max] for integrands that oscillate up to t_max;
  /// [0, start] (start ~ 1e-12 of the first panel) is left to power_law_start.
  void quadrature(double w_max, double t_max, double temperature, std::vector<double>& nodes,
                  std::vector<double>& weights, double& start) const;
};

}  // namespace heom

#endif
