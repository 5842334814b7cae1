// Spectral densities: C(t) by quadrature against closed forms and expansions, and the exponents
// fitted to it (tolerance met on points the fit never saw, conjugate pairs, fewer exponents for
// looser tolerances, refusals that say what they reached).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/model/correlation.hpp"
#include "heom/model/correlation_fit.hpp"
#include "heom/model/spectral_density.hpp"

namespace {

using heom::complex;
using heom::CorrelationFit;
using heom::Exponent;
using heom::FitMethod;
using heom::FitOptions;
using heom::SpectralDensity;

constexpr double pi = 3.14159265358979323846;

/// T = 0: C(t) = (alpha / pi) wc^2 Gamma(s + 1) / (1 + i wc t)^(s + 1).
complex ohmic_zero_temperature(double alpha, double wc, double s, double t) {
  return alpha / pi * wc * wc * std::tgamma(s + 1.0) / std::pow(complex(1.0, wc * t), s + 1.0);
}

/// The spin-boson guide's Drude-Lorentz bath, Pade with 8 terms (converged past t = 1).
heom::DrudeLorentz pade_bath() {
  heom::DrudeLorentz p;
  p.lambda = 0.1;
  p.gamma = 0.5;
  p.temperature = 0.5;
  p.terms = 8;
  p.expansion = heom::DrudeLorentzExpansion::Pade;
  return p;
}

double max_abs_error(const std::vector<complex>& a, const std::vector<complex>& b, std::size_t from = 0) {
  double worst = 0.0;
  for (std::size_t i = from; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

TEST(SpectralDensity, OhmicQuadratureMatchesTheClosedFormAtZeroTemperature) {
  for (double s : {0.5, 1.0, 3.0}) {
    const double alpha = 0.05, wc = 2.0, dt = 0.05;
    const int count = 201;
    const SpectralDensity j = SpectralDensity::ohmic(alpha, wc, s);
    const auto c = j.correlation(dt, count, 0.0, j.frequency_cutoff(1e-14));
    std::vector<complex> exact(count);
    for (int k = 0; k < count; ++k) exact[k] = ohmic_zero_temperature(alpha, wc, s, k * dt);
    // Sub-Ohmic s = 0.5 has J ~ w^0.5 at w = 0: the graded panels there are what holds this.
    EXPECT_LE(max_abs_error(c, exact), 1e-10 * std::abs(exact[0])) << "s = " << s;
  }
}

TEST(SpectralDensity, UnderdampedQuadratureMatchesItsMatsubaraExpansion) {
  heom::Underdamped p;
  p.lambda = 0.2;
  p.gamma = 0.4;
  p.w0 = 1.0;
  p.temperature = 0.5;
  p.terms = 400;
  const auto exponents = p.expand().exponents(false);
  const SpectralDensity j = SpectralDensity::underdamped(p.lambda, p.gamma, p.w0);
  const double dt = 0.1;
  const auto c = j.correlation(dt, 101, p.temperature, j.frequency_cutoff(1e-14));
  std::vector<complex> expansion(c.size());
  for (std::size_t k = 0; k < c.size(); ++k) expansion[k] = heom::evaluate_correlation(exponents, k * dt);
  // From t = 0.5 on the 400 Matsubara terms have converged; a wrong coth or 1/pi shows at 1e-1.
  EXPECT_LE(max_abs_error(c, expansion, 5), 1e-9 * std::abs(c[0]));
}

TEST(SpectralDensity, DrudeLorentzQuadratureMatchesThePadeExpansion) {
  const heom::DrudeLorentz p = pade_bath();
  const auto exponents = p.expand().exponents(false);
  const SpectralDensity j = SpectralDensity::drude_lorentz(p.lambda, p.gamma);
  const double dt = 0.1;
  // J ~ 1/w: the part past w_max changes C(t) by about 2 lambda gamma / (pi w_max t).
  const auto c = j.correlation(dt, 101, p.temperature, 2e4);
  std::vector<complex> pade(c.size());
  for (std::size_t k = 0; k < c.size(); ++k) pade[k] = heom::evaluate_correlation(exponents, k * dt);
  const double left_out = 2.0 * p.lambda * p.gamma / (pi * 2e4 * 1.0);  // at t = 1 on
  EXPECT_LE(max_abs_error(c, pade, 10), 1.5 * left_out);
  EXPECT_GT(max_abs_error(c, pade, 10), 0.2 * left_out);  // the estimate of what is left out holds
  // The reorganisation energy is lambda (to the arctan of the part left out).
  EXPECT_NEAR(j.reorganisation_energy(2e4), p.lambda * (2.0 / pi) * std::atan(2e4 / p.gamma), 1e-10);
}

TEST(SpectralDensity, TableFollowsTheDensityItSamples) {
  // A smooth odd J (J''(0) = 0, as the natural spline assumes at w = 0).
  const SpectralDensity smooth = SpectralDensity::underdamped(0.3, 0.5, 1.5);
  std::vector<double> w, values;
  for (int i = 1; i <= 4000; ++i) {  // w = 0 is put in by the table itself
    w.push_back(0.01 * i);
    values.push_back(smooth(0.01 * i));
  }
  const SpectralDensity table = SpectralDensity::table(w, values);
  EXPECT_NEAR(table(1.505), smooth(1.505), 1e-6 * smooth(1.505));  // the spline: h^4 J'''' / 384
  EXPECT_EQ(table(45.0), 0.0);
  const auto a = table.correlation(0.1, 101, 0.3, 40.0), b = smooth.correlation(0.1, 101, 0.3, 40.0);
  EXPECT_LE(max_abs_error(a, b), 1e-7 * std::abs(b[0]));
}

TEST(SpectralDensity, SumsAddTheirTerms) {
  SpectralDensity j = SpectralDensity::ohmic(0.05, 1.0, 1.0);
  j += SpectralDensity::underdamped(0.2, 0.1, 2.0);
  EXPECT_DOUBLE_EQ(j(1.5),
                   SpectralDensity::ohmic(0.05, 1.0, 1.0)(1.5) + SpectralDensity::underdamped(0.2, 0.1, 2.0)(1.5));
  EXPECT_NE(j.description().find(" + underdamped"), std::string::npos) << j.description();
}

TEST(SpectralDensity, BadParametersAreRefused) {
  EXPECT_THROW(SpectralDensity::ohmic(-0.1, 1.0, 1.0), heom::Error);
  EXPECT_THROW(SpectralDensity::ohmic(0.1, 0.0, 1.0), heom::Error);
  EXPECT_THROW(SpectralDensity::ohmic(0.1, 1.0, 0.0), heom::Error);
  EXPECT_THROW(SpectralDensity::underdamped(0.1, 0.2, -1.0), heom::Error);
  EXPECT_THROW(SpectralDensity::table({0.0, 2.0, 1.0}, {0.0, 1.0, 2.0}), heom::Error);
  EXPECT_THROW(SpectralDensity::table({0.0, 1.0}, {0.5, 1.0}), heom::Error);  // J(0) != 0
  EXPECT_THROW(SpectralDensity::table({0.0, 1.0}, {0.0}), heom::Error);
  EXPECT_THROW(SpectralDensity::table({0.0, 1.0, 2.0}, {0.0, -0.1, 0.3}), heom::Error);  // J < 0
}

/// The fit's exponents against C(t) by quadrature on points of its own (not the fit's grid).
double independent_error(const SpectralDensity& j, double temperature, const CorrelationFit& fit) {
  const int count = 977;
  const double dt = fit.options.time / (count - 1);
  const auto c = j.correlation(dt, count, temperature, fit.max_frequency);
  double worst = 0.0, largest = 0.0;
  for (int k = 0; k < count; ++k) {
    worst = std::max(worst, std::abs(heom::evaluate_correlation(fit.exponents, k * dt) - c[k]));
    largest = std::max(largest, std::abs(c[k]));
  }
  return worst / largest;
}

/// Every complex rate has its conjugate partner with conjugate coefficients (C_R, C_I real).
void expect_conjugate_pairs(const std::vector<Exponent>& exponents) {
  for (const Exponent& e : exponents) {
    EXPECT_GT(e.v.real(), 0.0) << "a growing exponent";
    if (e.v.imag() == 0.0) {
      EXPECT_EQ(e.c.imag(), 0.0);
      EXPECT_EQ(e.c2.imag(), 0.0);
      continue;
    }
    int partners = 0;
    for (const Exponent& f : exponents)
      partners += f.v == std::conj(e.v) && f.c == std::conj(e.c) && f.c2 == std::conj(e.c2);
    EXPECT_EQ(partners, 1) << "v = " << e.v;
  }
}

TEST(CorrelationFit, OhmicFitMeetsItsToleranceWithMoreExponentsAsItTightens) {
  const SpectralDensity j = SpectralDensity::ohmic(0.05, 1.0, 1.0);
  std::size_t previous = 0;
  for (double tolerance : {1e-3, 1e-4, 1e-5, 1e-6}) {
    FitOptions options;
    options.tolerance = tolerance;
    options.time = 20.0;
    const CorrelationFit fit = heom::fit_correlation(j, 0.5, options);
    EXPECT_LE(fit.error, tolerance);
    EXPECT_LE(independent_error(j, 0.5, fit), 1.5 * tolerance) << "tolerance " << tolerance;
    EXPECT_GE(fit.exponents.size(), previous) << "tolerance " << tolerance;
    EXPECT_LE(fit.exponents.size(), 16u) << "tolerance " << tolerance;
    previous = fit.exponents.size();
    expect_conjugate_pairs(fit.exponents);
  }
  EXPECT_GE(previous, 8u);  // 1e-6 takes several exponents; a fit that returned few would be wrong
}

TEST(CorrelationFit, PronyMeetsTheToleranceWithMoreExponentsThanEsprit) {
  const SpectralDensity j = SpectralDensity::ohmic(0.05, 1.0, 0.5);  // sub-Ohmic, T = 0
  FitOptions options;
  options.tolerance = 1e-4;
  options.time = 20.0;
  options.max_exponents = 40;
  const CorrelationFit esprit = heom::fit_correlation(j, 0.0, options);
  options.method = FitMethod::prony;
  const CorrelationFit prony = heom::fit_correlation(j, 0.0, options);
  EXPECT_LE(independent_error(j, 0.0, esprit), 1.5e-4);
  EXPECT_LE(independent_error(j, 0.0, prony), 1.5e-4);
  EXPECT_LE(esprit.exponents.size(), prony.exponents.size());
  expect_conjugate_pairs(prony.exponents);
}

TEST(CorrelationFit, DrudeLorentzFitReproducesThePadeCorrelation) {
  const heom::DrudeLorentz p = pade_bath();
  const auto pade = p.expand().exponents(false);
  FitOptions options;
  options.tolerance = 1e-3;
  options.time = 10.0;
  const CorrelationFit fit =
      heom::fit_correlation(SpectralDensity::drude_lorentz(p.lambda, p.gamma), p.temperature, options);
  // Away from t = 0, where C_R of a Drude-Lorentz J diverges like log t, the fit is the Pade C(t) to
  // its tolerance plus what J ~ 1/w holds past the samples' reach: 2 lambda gamma / (pi w_max t).
  const double left_out = 2.0 * p.lambda * p.gamma / (pi * fit.max_frequency * 1.0);
  double worst = 0.0, largest = 0.0;
  for (int k = 10; k <= 100; ++k) {
    const double t = 0.1 * k;
    worst =
        std::max(worst, std::abs(heom::evaluate_correlation(fit.exponents, t) - heom::evaluate_correlation(pade, t)));
    largest = std::max(largest, std::abs(heom::evaluate_correlation(pade, t)));
  }
  EXPECT_LE(worst, options.tolerance * fit.max_abs + left_out) << "largest |C| past t = 1: " << largest;
  EXPECT_GT(fit.reorganisation_left_out, 0.0);
  EXPECT_LT(fit.reorganisation_left_out, 1e-2);
}

TEST(CorrelationFit, ARefusalSaysWhatItReached) {
  FitOptions options;
  options.tolerance = 1e-7;
  options.time = 20.0;
  options.max_exponents = 3;
  try {
    heom::fit_correlation(SpectralDensity::ohmic(0.05, 1.0, 1.0), 0.5, options);
    FAIL() << "3 exponents cannot fit an Ohmic C(t) to 1e-7";
  } catch (const heom::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("reaches an error of"), std::string::npos) << message;
    EXPECT_NE(message.find("at most 3 exponents"), std::string::npos) << message;
  }
  // A window so long that 1,500 samples reach only 2.4 wc: a third of J left out is refused.
  options.max_exponents = 24;
  options.time = 200.0;
  options.tolerance = 1e-5;
  try {
    heom::fit_correlation(SpectralDensity::ohmic(0.05, 5.0, 1.0), 0.5, options);
    FAIL() << "J cut at 2.4 wc";
  } catch (const heom::Error& e) {
    EXPECT_NE(std::string(e.what()).find("J is cut at w = "), std::string::npos) << e.what();
  }
  options.time = -1.0;
  EXPECT_THROW(heom::fit_correlation(SpectralDensity::ohmic(0.05, 1.0, 1.0), 0.5, options), heom::Error);
}

TEST(CorrelationFit, ZeroDensityHasNoExponents) {
  FitOptions options;
  options.time = 10.0;
  EXPECT_TRUE(heom::fit_correlation(SpectralDensity::ohmic(0.0, 1.0, 1.0), 0.5, options).exponents.empty());
}

}  // namespace
