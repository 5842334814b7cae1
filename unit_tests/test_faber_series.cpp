// The Faber series of exp(h z) on an ellipse: coefficients against closed forms (a circle's Taylor
// coefficients, a segment's Bessel functions) and against the trapezoid rule on the unit circle, the
// series summed against exp(h z) inside and on ellipses of every shape, the cut against its promise,
// and bad ellipses refused with the field named.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "heom/integrator/faber_series.hpp"

namespace {

using heom::complex;
using heom::SpectralEllipse;
constexpr double pi = 3.14159265358979323846;

/// sum_k a_k F_k(z) by the ellipse's recurrence.
complex faber_sum(const SpectralEllipse& e, const std::vector<complex>& a, complex z) {
  const std::vector<complex> f = heom::FaberRecurrence(e).values(z, static_cast<int>(a.size()));
  complex s = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) s += a[k] * f[k];
  return s;
}

/// Points inside the ellipse and on its boundary.
std::vector<complex> points_of(const SpectralEllipse& e) {
  std::vector<complex> z;
  for (int i = 0; i < 24; ++i) {
    const double t = 2.0 * pi * (i + 0.37) / 24.0;
    for (double r : {0.0, 0.3, 0.7, 1.0})
      z.push_back(e.center + r * complex(e.semi_real * std::cos(t), e.semi_imag * std::sin(t)));
  }
  return z;
}

/// The largest |exp(h z)| on the ellipse: what the coefficients' rounding scales with.
double scale_of(const SpectralEllipse& e, double h) { return std::exp(h * (e.center.real() + e.semi_real)); }

/// a_k by the trapezoid rule with `points` points on |w| = 1: a_k = (1 / 2 pi) integral of
/// exp(h psi(e^{i t})) e^{-i k t} dt, psi(w) = c + g w + g1 / w, exact to rounding once the points
/// outnumber the coefficients that matter. Independent of the recurrence under test.
complex trapezoid_coefficient(const SpectralEllipse& e, double h, std::size_t k, int points) {
  const double g = 0.5 * (e.semi_real + e.semi_imag), g1 = 0.5 * (e.semi_real - e.semi_imag);
  complex sum = 0.0;
  for (int j = 0; j < points; ++j) {
    const complex w = std::polar(1.0, 2.0 * pi * j / points);
    sum += std::exp(h * (e.center + g * w + g1 / w)) * std::pow(w, -static_cast<double>(k));
  }
  return sum / double(points);
}

TEST(FaberSeries, ACirclesCoefficientsAreTaylors) {
  const SpectralEllipse circle{complex(-0.3, 0.8), 0.25, 0.25};
  for (double h : {0.5, 20.0, 300.0}) {
    const std::vector<complex> a = heom::faber_exp_coefficients(circle, h, 1e-16);
    for (std::size_t k = 0; k < a.size(); ++k) {
      // e^{h c} (h r)^k / k!
      const complex expected = std::exp(h * circle.center + k * std::log(h * 0.25) - std::lgamma(k + 1.0));
      EXPECT_NEAR(std::abs(a[k] - expected), 0.0, 1e-14 * scale_of(circle, h)) << "h " << h << ", k " << k;
    }
  }
}

TEST(FaberSeries, ASegmentsCoefficientsAreBesselFunctions) {
  // Along the real axis: exp(h z) = e^{h c} (I_0(h a) + sum 2 I_k(h a) T_k), F_k = 2 T_k.
  const SpectralEllipse real_segment{-0.4, 0.3, 0.0};
  // Along the imaginary axis: exp(i h y) = J_0(h b) + sum 2 i^k J_k(h b) T_k(y / b), F_k = 2 i^k T_k.
  const SpectralEllipse imaginary_segment{complex(-0.1, 2.0), 0.0, 0.5};
  for (double h : {1.0, 40.0, 200.0}) {
    const std::vector<complex> a = heom::faber_exp_coefficients(real_segment, h, 1e-17);
    for (std::size_t k = 0; k < a.size(); ++k)
      EXPECT_NEAR(std::abs(a[k] - std::exp(-0.4 * h) * std::cyl_bessel_i(double(k), 0.3 * h)), 0.0,
                  1e-14 * scale_of(real_segment, h))
          << "h " << h << ", k " << k;
    const std::vector<complex> b = heom::faber_exp_coefficients(imaginary_segment, h, 1e-17);
    for (std::size_t k = 0; k < b.size(); ++k)
      EXPECT_NEAR(std::abs(b[k] - std::exp(h * imaginary_segment.center) * std::cyl_bessel_j(double(k), 0.5 * h)), 0.0,
                  1e-14 * scale_of(imaginary_segment, h))
          << "h " << h << ", k " << k;
  }
}

TEST(FaberSeries, CoefficientsMatchTheTrapezoidRuleOnTheUnitCircle) {
  for (const SpectralEllipse& e : {SpectralEllipse{-0.16, 0.2, 0.15}, SpectralEllipse{complex(-0.05, -1.0), 0.05, 0.4},
                                   SpectralEllipse{-0.2, 0.2, 0.2 + 1e-9}, SpectralEllipse{-0.2, 0.2 - 1e-9, 0.2}}) {
    const double h = 150.0;
    const std::vector<complex> a = heom::faber_exp_coefficients(e, h, 1e-18);
    ASSERT_LT(static_cast<int>(a.size()), 512);
    for (std::size_t k = 0; k < a.size(); k += 7)
      EXPECT_NEAR(std::abs(a[k] - trapezoid_coefficient(e, h, k, 1024)), 0.0, 1e-13 * scale_of(e, h))
          << "semi-axes " << e.semi_real << ", " << e.semi_imag << ", k " << k;
  }
}

TEST(FaberSeries, TheSeriesIsExpInsideEveryShape) {
  const std::vector<SpectralEllipse> shapes = {
      {-0.16, 0.20, 0.192},             // FMO's hull: nearly a circle
      {-0.16, 0.20, 0.05},              // wide
      {-0.05, 0.05, 0.6},               // tall: weakly damped, wide energies
      {complex(-0.1, -2.0), 0.1, 0.6},  // a coherence's, far from the real axis
      {-0.3, 0.3, 0.0},                 // a segment of the real axis
      {-0.01, 0.0, 0.5},                // one of the imaginary axis
  };
  for (const SpectralEllipse& e : shapes)
    for (double h : {1e-3, 0.7, 30.0, 400.0}) {
      const std::vector<complex> a = heom::faber_exp_coefficients(e, h, 1e-17);
      double worst = 0.0;
      for (complex z : points_of(e)) {
        ASSERT_TRUE(e.contains(z));
        worst = std::max(worst, std::abs(faber_sum(e, a, z) - std::exp(h * z)));
      }
      EXPECT_LT(worst, 2e-13 * scale_of(e, h)) << "semi-axes " << e.semi_real << ", " << e.semi_imag << ", h " << h;
    }
}

TEST(FaberSeries, TheCutKeepsItsPromiseAndGrowsWithTheStep) {
  const SpectralEllipse e{-0.20, 0.20, 0.15};  // (its right end at 0: the scale is 1 at every h)
  int previous = 0;
  for (double h : {10.0, 100.0, 400.0}) {
    for (double tail : {1e-4, 1e-8, 1e-12}) {
      const std::vector<complex> a = heom::faber_exp_coefficients(e, h, tail);
      double worst = 0.0;
      for (complex z : points_of(e)) worst = std::max(worst, std::abs(faber_sum(e, a, z) - std::exp(h * z)));
      EXPECT_LE(worst, 2.0 * tail + 1e-14 * scale_of(e, h)) << "h " << h << ", tail " << tail;
      // Not longer than needed: one term fewer breaks the promise's bound on the tail.
      const std::vector<complex> longer = heom::faber_exp_coefficients(e, h, 1e-20);
      double rest = 0.0;
      for (std::size_t k = a.size() - 1; k < longer.size(); ++k) rest += std::abs(longer[k]);
      EXPECT_GT(rest, tail) << "h " << h << ", tail " << tail;
    }
    // Terms: about h (a + b) / 2 plus a part that grows as its square root.
    const int terms = static_cast<int>(heom::faber_exp_coefficients(e, h, 1e-10).size());
    EXPECT_GT(terms, h * 0.175);
    EXPECT_LT(terms, 1.6 * h * 0.175 + 40.0);
    EXPECT_GT(terms, previous);
    previous = terms;
  }
}

TEST(FaberSeries, LongStepsNearACircleStayAccurate) {
  // h (a + b) up to the limit of 1400, the right end at 0: the coefficients span far more than a
  // double's range relative to each other, and a tall near circle's alternate in sign.
  for (const SpectralEllipse& e : {SpectralEllipse{-0.2, 0.2, 0.2 + 1e-3}, SpectralEllipse{-0.2, 0.2, 0.21},
                                   SpectralEllipse{-0.2, 0.2, 0.19}, SpectralEllipse{-0.05, 0.05, 0.65}})
    for (double width : {800.0, 1400.0}) {
      const double h = width / (e.semi_real + e.semi_imag);
      const std::vector<complex> a = heom::faber_exp_coefficients(e, h, 1e-16);
      ASSERT_LT(static_cast<int>(a.size()), 2048);
      for (std::size_t k = 0; k < a.size(); k += 37)
        EXPECT_NEAR(std::abs(a[k] - trapezoid_coefficient(e, h, k, 4096)), 0.0, 1e-12)
            << "semi-axes " << e.semi_real << ", " << e.semi_imag << ", h " << h << ", k " << k;
      double worst = 0.0;
      for (complex z : points_of(e)) worst = std::max(worst, std::abs(faber_sum(e, a, z) - std::exp(h * z)));
      EXPECT_LT(worst, 1e-11) << "semi-axes " << e.semi_real << ", " << e.semi_imag << ", h " << h;
    }
}

TEST(FaberSeries, BadEllipsesAndStepsAreRefusedByName) {
  const auto message = [](const SpectralEllipse& e, double h, double tail) {
    try {
      heom::faber_exp_coefficients(e, h, tail);
    } catch (const heom::Error& error) {
      return std::string(error.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message({0.0, -0.1, 0.2}, 1.0, 1e-8).find("semi_real"), std::string::npos);
  EXPECT_NE(message({0.0, 0.1, NAN}, 1.0, 1e-8).find("semi_imag"), std::string::npos);
  EXPECT_NE(message({0.0, 0.0, 0.0}, 1.0, 1e-8).find("not both be 0"), std::string::npos);
  EXPECT_NE(message({complex(NAN, 0.0), 0.1, 0.1}, 1.0, 1e-8).find("center"), std::string::npos);
  EXPECT_NE(message({0.0, 0.1, 0.1}, -1.0, 1e-8).find("h must be"), std::string::npos);
  EXPECT_NE(message({0.0, 0.1, 0.1}, 1.0, 0.0).find("tail"), std::string::npos);
  EXPECT_NE(message({0.0, 1.0, 1.0}, 800.0, 1e-8).find("above 1400"), std::string::npos);
  EXPECT_NE(message({1.0, 1.0, 0.0}, 400.0, 1e-8).find("overflows"), std::string::npos);
  EXPECT_EQ(heom::faber_exp_coefficients({0.0, 0.1, 0.1}, 0.0, 1e-8), std::vector<complex>{1.0});
}

TEST(FaberSeries, ContainsItsBoundaryAndNothingBeyond) {
  const SpectralEllipse e{complex(1.0, -1.0), 0.5, 0.25};
  EXPECT_TRUE(e.contains(complex(1.5, -1.0)));
  EXPECT_TRUE(e.contains(complex(1.0, -0.75)));
  EXPECT_FALSE(e.contains(complex(1.5 + 1e-6, -1.0)));
  EXPECT_FALSE(e.contains(complex(1.4, -0.8)));
  const SpectralEllipse segment{0.0, 0.0, 1.0};
  EXPECT_TRUE(segment.contains(complex(0.0, -1.0)));
  EXPECT_FALSE(segment.contains(complex(1e-6, 0.0)));
}

TEST(SpectralHull, TheLeastEllipseHoldsEveryPointWithItsRightEndWhereAsked) {
  // A spectrum like a hierarchy's: conjugate pairs, 0 the rightmost, the most damped far left.
  const std::vector<complex> points = {complex(-0.05, 0.1), complex(-0.05, -0.1), complex(-0.2, 0.12),
                                       complex(-0.2, -0.12), complex(-0.6, 0.0)};
  for (const double right_end : {0.0, 0.02, 0.1}) {
    const SpectralEllipse e = heom::least_ellipse_around(points, 0.05, right_end);
    for (const complex& z : points) EXPECT_TRUE(e.contains(z)) << z;
    EXPECT_TRUE(e.contains(0.0));
    EXPECT_NEAR(e.center.imag(), 0.0, 1e-15) << "conjugate pairs: a centre on the real axis";
    // The right end where asked (an off-axis point at it pushes it further right, by little).
    EXPECT_GE(e.center.real() + e.semi_real, right_end);
    EXPECT_LE(e.center.real() + e.semi_real, right_end + 0.03);
    EXPECT_LE(e.center.real() - e.semi_real, -0.6 * 1.05) << "the margin moves the points out";
    // Least (without the margin): no ellipse of a sample of others with the same right end holds the
    // points for less.
    const SpectralEllipse least = heom::least_ellipse_around(points, 0.0, right_end);
    for (double a = 0.3; a < 2.0; a += 0.01) {
      const double c = least.center.real() + least.semi_real - a;
      double b = 0.0;
      bool fits = true;
      for (const complex& z : points) {
        const double inside = 1.0 - std::pow((z.real() - c) / a, 2);
        if (inside <= 0.0) fits = false;
        if (fits) b = std::max(b, std::abs(z.imag()) / std::sqrt(inside));
      }
      if (fits) {
        EXPECT_GE(a + b, (least.semi_real + least.semi_imag) * (1.0 - 1e-3)) << "a " << a;
      }
    }
  }
  // Real points alone: a segment-like ellipse, its a + b half their spread.
  const SpectralEllipse flat = heom::least_ellipse_around({-1.0}, 0.0, 0.0);
  EXPECT_NEAR(flat.semi_real + flat.semi_imag, 0.5, 1e-5);
  EXPECT_NEAR(flat.center.real(), -0.5, 1e-5);
  // Nothing but 0: any ellipse around 0 (exp(0 h) = 1).
  EXPECT_TRUE(heom::least_ellipse_around({}, 0.05, 0.0).contains(0.0));
  EXPECT_THROW(heom::least_ellipse_around({complex(NAN, 0.0)}, 0.05, 0.0), heom::Error);
  EXPECT_THROW(heom::least_ellipse_around({-1.0}, -0.1, 0.0), heom::Error);
}

}  // namespace
