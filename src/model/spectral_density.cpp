// Spectral densities and their correlation functions by quadrature.
#include "heom/model/spectral_density.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "heom/core/error.hpp"

namespace heom {
namespace {

constexpr double pi = 3.14159265358979323846;
constexpr int gauss_order = 16;
// Geometric panels toward w = 0 (halving 40 times) resolve the power laws J(w) coth(w/2T) ~ w^(s-1)
// of sub-Ohmic densities; the rest of [0, 2^-40 a] is integrated as that power law.
constexpr int graded_levels = 40;
// Beyond this the quadrature refuses (about 1.5 GB of nodes and weights) rather than run for hours.
constexpr std::size_t max_panels = 5000000;

/// Gauss-Legendre nodes and weights on [-1, 1] (Newton's method on P_n).
void gauss_legendre(int n, std::vector<double>& x, std::vector<double>& w) {
  x.assign(n, 0.0);
  w.assign(n, 0.0);
  for (int i = 0; i < n; ++i) {
    double z = std::cos(pi * (i + 0.75) / (n + 0.5)), dp = 0.0;
    for (int iteration = 0; iteration < 100; ++iteration) {
      double p0 = 1.0, p1 = z;
      for (int k = 2; k <= n; ++k) {
        const double p2 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (z * p1 - p0) / (z * z - 1.0);
      const double step = p1 / dp;
      z -= step;
      if (std::abs(step) < 1e-16) break;
    }
    x[i] = z;
    w[i] = 2.0 / ((1.0 - z * z) * dp * dp);
  }
}

/// coth(w / 2T), or 1 at T = 0.
double coth_factor(double w, double temperature) {
  return temperature > 0.0 ? 1.0 / std::tanh(w / (2.0 * temperature)) : 1.0;
}

/// int_0^eps g for g ~ w^beta near 0, beta from g(eps) and g(eps / 2).
template <class G>
double power_law_start(const G& g, double eps) {
  const double outer = g(eps), inner = g(0.5 * eps);
  if (outer == 0.0 || inner == 0.0 || (outer > 0.0) != (inner > 0.0)) return 0.0;
  const double beta = std::log2(outer / inner);
  return beta > -1.0 ? eps * outer / (beta + 1.0) : 0.0;
}

}  // namespace

SpectralDensity SpectralDensity::ohmic(double alpha, double cutoff, double exponent) {
  require(std::isfinite(alpha) && alpha >= 0.0,
          "ohmic spectral density: alpha must be finite and >= 0, got " + format_number(alpha));
  require(std::isfinite(cutoff) && cutoff > 0.0,
          "ohmic spectral density: the cutoff wc must be finite and > 0, got " + format_number(cutoff));
  require(std::isfinite(exponent) && exponent > 0.0 && exponent <= 20.0,
          "ohmic spectral density: the exponent s must be in (0, 20], got " + format_number(exponent));
  SpectralDensity j;
  j.m_terms.push_back({Kind::ohmic, alpha, cutoff, exponent, {}});
  return j;
}

SpectralDensity SpectralDensity::drude_lorentz(double lambda, double gamma) {
  require(std::isfinite(lambda) && lambda >= 0.0,
          "drude-lorentz spectral density: lambda must be finite and >= 0, got " + format_number(lambda));
  require(std::isfinite(gamma) && gamma > 0.0,
          "drude-lorentz spectral density: gamma must be finite and > 0, got " + format_number(gamma));
  SpectralDensity j;
  j.m_terms.push_back({Kind::drude_lorentz, lambda, gamma, 0.0, {}});
  return j;
}

SpectralDensity SpectralDensity::underdamped(double lambda, double gamma, double w0) {
  require(std::isfinite(lambda) && lambda >= 0.0,
          "underdamped spectral density: lambda must be finite and >= 0, got " + format_number(lambda));
  require(std::isfinite(gamma) && gamma > 0.0,
          "underdamped spectral density: gamma must be finite and > 0, got " + format_number(gamma));
  require(std::isfinite(w0) && w0 > 0.0,
          "underdamped spectral density: w0 must be finite and > 0, got " + format_number(w0));
  SpectralDensity j;
  j.m_terms.push_back({Kind::underdamped, lambda, gamma, w0, {}});
  return j;
}

SpectralDensity SpectralDensity::table(std::vector<double> w, std::vector<double> j) {
  require(w.size() == j.size(), "spectral density table: " + std::to_string(w.size()) + " frequencies but " +
                                    std::to_string(j.size()) + " values");
  require(w.size() >= 2, "spectral density table: needs at least 2 samples");
  for (std::size_t i = 0; i < w.size(); ++i) {
    require(std::isfinite(w[i]) && std::isfinite(j[i]),
            "spectral density table: sample " + std::to_string(i) + " is not finite");
    require(w[i] >= 0.0,
            "spectral density table: w[" + std::to_string(i) + "] = " + format_number(w[i]) + " is negative");
    require(j[i] >= 0.0,
            "spectral density table: J(w[" + std::to_string(i) + "]) = " + format_number(j[i]) + " is negative");
    require(i == 0 || w[i] > w[i - 1], "spectral density table: w must increase, but w[" + std::to_string(i) +
                                           "] = " + format_number(w[i]) + " follows " + format_number(w[i - 1]));
  }
  if (w.front() == 0.0)
    require(j.front() == 0.0,
            "spectral density table: J(0) must be 0 (the bath would be white noise), got " + format_number(j.front()));
  else {
    w.insert(w.begin(), 0.0);
    j.insert(j.begin(), 0.0);
  }
  SpectralDensity density;
  density.m_terms.push_back({Kind::table, 0.0, 0.0, 0.0, impl::CubicSpline(std::move(w), std::move(j))});
  return density;
}

SpectralDensity& SpectralDensity::operator+=(const SpectralDensity& other) {
  m_terms.insert(m_terms.end(), other.m_terms.begin(), other.m_terms.end());
  return *this;
}

double SpectralDensity::term_value(const Term& t, double w) const {
  switch (t.kind) {
    case Kind::ohmic:
      return t.a * t.b * std::pow(w / t.b, t.c) * std::exp(-w / t.b);
    case Kind::drude_lorentz:
      return 2.0 * t.a * t.b * w / (w * w + t.b * t.b);
    case Kind::underdamped: {
      const double d = t.c * t.c - w * w;
      return t.a * t.a * t.b * w / (d * d + t.b * t.b * w * w);
    }
    case Kind::table: {
      if (w <= 0.0 || w >= t.table.x().back()) return 0.0;
      return t.table(w);
    }
  }
  return 0.0;
}

double SpectralDensity::operator()(double w) const {
  double sum = 0.0;
  for (const Term& t : m_terms) sum += term_value(t, w);
  return sum;
}

std::string SpectralDensity::description() const {
  std::string out;
  for (const Term& t : m_terms) {
    if (!out.empty()) out += " + ";
    switch (t.kind) {
      case Kind::ohmic:
        out += "ohmic (alpha " + format_number(t.a) + ", wc " + format_number(t.b) + ", s " + format_number(t.c) + ")";
        break;
      case Kind::drude_lorentz:
        out += "drude-lorentz (lambda " + format_number(t.a) + ", gamma " + format_number(t.b) + ")";
        break;
      case Kind::underdamped:
        out += "underdamped (lambda " + format_number(t.a) + ", gamma " + format_number(t.b) + ", w0 " +
               format_number(t.c) + ")";
        break;
      case Kind::table:
        out += "table (" + std::to_string(t.table.x().size()) +
               " samples up to w = " + format_number(t.table.x().back()) + ")";
        break;
    }
  }
  return out.empty() ? "empty" : out;
}

double SpectralDensity::finest_scale() const {
  double scale = std::numeric_limits<double>::infinity();
  for (const Term& t : m_terms) {
    if (t.kind == Kind::ohmic || t.kind == Kind::drude_lorentz) scale = std::min(scale, t.b);
    if (t.kind == Kind::underdamped) scale = std::min({scale, t.b, t.c});
    // (A table's samples are panel boundaries of their own.)
  }
  return scale;
}

double SpectralDensity::structure_extent() const {
  double extent = 0.0;
  for (const Term& t : m_terms) {
    if (t.kind == Kind::ohmic || t.kind == Kind::drude_lorentz) extent = std::max(extent, 4.0 * t.b);
    if (t.kind == Kind::underdamped) extent = std::max(extent, t.c + 20.0 * t.b);
    if (t.kind == Kind::table) extent = std::max(extent, t.table.x().back());
  }
  return extent;
}

double SpectralDensity::frequency_cutoff(double fraction) const {
  double cutoff = 0.0;
  for (const Term& t : m_terms) {
    switch (t.kind) {
      case Kind::ohmic: {
        // Tail of the Gamma(s) density: x^(s-1) e^-x / Gamma(s) <= fraction.
        double x = 40.0;
        for (int i = 0; i < 50; ++i)
          x = std::max(1.0, -std::log(fraction * std::tgamma(t.c)) + (t.c - 1.0) * std::log(x));
        cutoff = std::max(cutoff, t.b * x);
        break;
      }
      case Kind::drude_lorentz:  // (2/pi) arctan(gamma / w) of lambda lies past w
        cutoff = std::max(cutoff, t.b / std::tan(0.5 * pi * fraction));
        break;
      case Kind::underdamped:  // 2 gamma w0^2 / (3 pi w^3) of lambda^2 / (2 w0^2) past w >> w0
        cutoff = std::max({cutoff, t.c + 40.0 * t.b, std::cbrt(2.0 * t.b * t.c * t.c / (3.0 * pi * fraction))});
        break;
      case Kind::table:
        cutoff = std::max(cutoff, t.table.x().back());
        break;
    }
  }
  return cutoff;
}

void SpectralDensity::quadrature(double w_max, double t_max, double temperature, std::vector<double>& nodes,
                                 std::vector<double>& weights, double& start) const {
  // Panels no wider than half a period of cos(w t_max) and, where J has its structure, a quarter of
  // its finest feature; past that they grow with w (J is smooth on the scale of w there). Toward
  // w = 0 they shrink with w, down to T/4 (where coth changes), and then geometrically.
  const double oscillation = t_max > 0.0 ? pi / t_max : INFINITY;
  const double feature = finest_scale() / 4.0, extent = structure_extent();
  const double a0 = std::min({oscillation, feature, w_max / 4.0, temperature > 0.0 ? temperature / 4.0 : INFINITY});
  require(a0 > 1e-300 * w_max && std::isfinite(w_max),
          "spectral density quadrature: the temperature or J's features are too small against w_max = " +
              format_number(w_max));
  std::vector<double> breaks;
  for (int k = graded_levels; k >= 1; --k) breaks.push_back(std::ldexp(a0, -k));
  for (double w = a0; w < w_max;) {
    breaks.push_back(w);
    const double next = w + std::min(oscillation, std::max(a0, w <= extent ? std::min(w / 4.0, feature) : w / 4.0));
    require(next > w && breaks.size() < max_panels,
            "spectral density quadrature: more than " + std::to_string(max_panels) +
                " panels up to w_max = " + format_number(w_max) + " (J's finest feature " +
                format_number(finest_scale()) + " is too narrow for its extent, or the times too long)");
    w = next;
  }
  breaks.push_back(w_max);
  for (const Term& t : m_terms)
    if (t.kind == Kind::table)
      for (double w : t.table.x())
        if (w > breaks.front() && w < w_max) breaks.push_back(w);
  std::sort(breaks.begin(), breaks.end());
  breaks.erase(std::unique(breaks.begin(), breaks.end()), breaks.end());
  start = breaks.front();

  std::vector<double> x, w;
  gauss_legendre(gauss_order, x, w);
  nodes.clear();
  weights.clear();
  for (std::size_t p = 0; p + 1 < breaks.size(); ++p) {
    const double mid = 0.5 * (breaks[p] + breaks[p + 1]), half = 0.5 * (breaks[p + 1] - breaks[p]);
    for (int i = 0; i < gauss_order; ++i) {
      nodes.push_back(mid + half * x[i]);
      weights.push_back(half * w[i]);
    }
  }
}

double SpectralDensity::reorganisation_energy(double w_max) const {
  std::vector<double> nodes, weights;
  double start = 0.0;
  quadrature(w_max, 0.0, 0.0, nodes, weights, start);
  auto g = [&](double w) { return (*this)(w) / w; };
  double sum = power_law_start(g, start);
  for (std::size_t i = 0; i < nodes.size(); ++i) sum += weights[i] * g(nodes[i]);
  return sum / pi;
}

std::vector<complex> SpectralDensity::correlation(double dt, int count, double temperature, double w_max) const {
  require(count >= 1 && dt >= 0.0 && w_max > 0.0, "SpectralDensity::correlation: needs count >= 1, dt >= 0, w_max > 0");
  std::vector<double> nodes, weights;
  double start = 0.0;
  quadrature(w_max, dt * (count - 1), temperature, nodes, weights, start);
  auto g = [&](double w) { return (*this)(w)*coth_factor(w, temperature); };
  const std::size_t m = nodes.size();
  // Per node: the cos and sin amplitudes and e^{i w t_k}, advanced by e^{i w dt} each step.
  std::vector<double> cos_amp(m), sin_amp(m), re(m, 1.0), im(m, 0.0), step_re(m), step_im(m);
  for (std::size_t i = 0; i < m; ++i) {
    const double j = (*this)(nodes[i]);
    cos_amp[i] = weights[i] * j * coth_factor(nodes[i], temperature) / pi;
    sin_amp[i] = -weights[i] * j / pi;
    step_re[i] = std::cos(nodes[i] * dt);
    step_im[i] = std::sin(nodes[i] * dt);
  }
  // [0, start]: where cos(w t) = 1 and sin(w t) = 0 to far below rounding.
  const double first = power_law_start(g, start) / pi;
  std::vector<complex> c(count);
  for (int k = 0; k < count; ++k) {
    double sum_re = first, sum_im = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
      sum_re += cos_amp[i] * re[i];
      sum_im += sin_amp[i] * im[i];
      const double r = re[i] * step_re[i] - im[i] * step_im[i];
      im[i] = re[i] * step_im[i] + im[i] * step_re[i];
      re[i] = r;
    }
    c[k] = complex(sum_re, sum_im);
  }
  return c;
}

}  // namespace heom
