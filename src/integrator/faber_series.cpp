// Faber coefficients of exp(h z) on an ellipse (faber_series.hpp).
#include "heom/integrator/faber_series.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace heom {

bool SpectralEllipse::contains(complex z) const {
  const complex d = z - center;
  // (A degenerate axis: the segment along the other one.)
  const double scale = std::max(semi_real, semi_imag);
  const double slack = 1e-12 * scale;
  if (semi_real <= slack) return std::abs(d.real()) <= slack && std::abs(d.imag()) <= semi_imag + slack;
  if (semi_imag <= slack) return std::abs(d.imag()) <= slack && std::abs(d.real()) <= semi_real + slack;
  const double x = d.real() / semi_real, y = d.imag() / semi_imag;
  return x * x + y * y <= 1.0 + 1e-12;
}

std::optional<OptionProblem> SpectralEllipse::validate() const {
  if (!std::isfinite(center.real()) || !std::isfinite(center.imag())) return OptionProblem{"center", "must be finite"};
  if (!(semi_real >= 0.0) || !std::isfinite(semi_real)) return OptionProblem{"semi_real", "must be finite and >= 0"};
  if (!(semi_imag >= 0.0) || !std::isfinite(semi_imag)) return OptionProblem{"semi_imag", "must be finite and >= 0"};
  if (semi_real + semi_imag == 0.0) return OptionProblem{"semi_real", "and semi_imag must not both be 0"};
  return std::nullopt;
}

FaberRecurrence::FaberRecurrence(const SpectralEllipse& ellipse)
    : center(ellipse.center),
      scale(0.5 * (ellipse.semi_real + ellipse.semi_imag)),
      q((ellipse.semi_real - ellipse.semi_imag) / (ellipse.semi_real + ellipse.semi_imag)) {
  require_valid(ellipse.validate(), "spectral ellipse");
}

std::vector<complex> FaberRecurrence::values(complex z, int count) const {
  std::vector<complex> f(static_cast<std::size_t>(std::max(count, 0)));
  const complex s = (z - center) / scale;
  for (int k = 0; k < count; ++k) f[k] = k == 0 ? 1.0 : k == 1 ? s : s * f[k - 1] - (k == 2 ? 2.0 * q : q) * f[k - 2];
  return f;
}

void make_exact_at_zero(const SpectralEllipse& ellipse, std::vector<complex>& coefficients) {
  if (coefficients.empty()) return;
  const std::vector<complex> f = FaberRecurrence(ellipse).values(0.0, static_cast<int>(coefficients.size()));
  complex at_zero = 0.0;
  for (std::size_t k = coefficients.size(); k-- > 0;) at_zero += coefficients[k] * f[k];  // (smallest first)
  coefficients[0] += 1.0 - at_zero;
}

namespace {

// The coefficients u_k of w^k (k = 0 .. n) in exp(h g w + h g1 / w) (g = scale, g1 = q g: for g1 >= 0
// they are (g / g1)^{k/2} I_k(2 h sqrt(g g1)), for g1 < 0 (g / |g1|)^{k/2} J_k(2 h sqrt(g |g1|))),
// divided by exp(h (g + g1)) = exp(h semi_real), as logarithms of their magnitudes and signs: they
// span more than a double's range where h g is large.
struct Generating {
  std::vector<double> log_magnitude;
  std::vector<double> sign;
};

Generating generating_coefficients(double hg, double q, int n) {
  // Miller's backward recurrence u_{k-1} = k / (h g) u_k + q u_{k+1}, whose wanted solution is the
  // one that falls with k (so its rounding errors die out), in ratios s_k = u_k / u_{k-1} =
  // 1 / (k / (h g) + q s_{k+1}) from u_{n+1} = 0: finite where the values themselves would under- or
  // overflow (a near circle, large h g).
  std::vector<double> ratio(static_cast<std::size_t>(n) + 2, 0.0);
  for (int k = n; k >= 1; --k) {
    const double d = k / hg + q * ratio[k + 1];
    ratio[k] = d != 0.0 ? 1.0 / d : std::numeric_limits<double>::max();  // (u_{k-1} = 0: measure zero)
  }
  Generating u{std::vector<double>(static_cast<std::size_t>(n) + 1, 0.0),
               std::vector<double>(static_cast<std::size_t>(n) + 1, 1.0)};
  for (int k = 1; k <= n; ++k) {  // u_k / u_0
    u.log_magnitude[k] = u.log_magnitude[k - 1] + std::log(std::abs(ratio[k]));
    u.sign[k] = ratio[k] < 0.0 ? -u.sign[k - 1] : u.sign[k - 1];
  }
  // Normalized by their sum over every k, exp(h semi_real), with u_{-k} = q^k u_k. No u_k exceeds
  // exp(h semi_real) (Cauchy's estimate on |w| = 1, where the function's modulus is at most that), so
  // the sum of u_k (1 + q^k) / max |u_k| is at least 1: it cancels no more than its rounding.
  const double largest = *std::max_element(u.log_magnitude.begin(), u.log_magnitude.end());
  double sum = 0.0, qk = 1.0;
  for (int k = 0; k <= n; ++k) {
    sum += u.sign[k] * std::exp(u.log_magnitude[k] - largest) * (k == 0 ? 1.0 : 1.0 + qk);
    qk *= q;
  }
  const double shift = largest + std::log(std::abs(sum));
  for (int k = 0; k <= n; ++k) {
    u.log_magnitude[k] -= shift;
    if (sum < 0.0) u.sign[k] = -u.sign[k];
  }
  return u;
}

}  // namespace

std::vector<complex> faber_exp_coefficients(const SpectralEllipse& ellipse, double h, double tail) {
  const FaberRecurrence recurrence(ellipse);
  if (!(h >= 0.0) || !std::isfinite(h)) throw Error("Faber coefficients: h must be finite and >= 0");
  if (!(tail > 0.0)) throw Error("Faber coefficients: the tail tolerance must be > 0");
  const double width = ellipse.semi_real + ellipse.semi_imag;
  if (h * width > 1400.0)
    throw Error("Faber coefficients: h (semi_real + semi_imag) = " + std::to_string(h * width) +
                " is above 1400; take shorter steps");
  // |exp(h z)| on the ellipse is at most exp(h (Re center + semi_real)): the scale of every coefficient.
  const double right_end = h * (ellipse.center.real() + ellipse.semi_real);
  if (right_end > 700.0)
    throw Error("Faber coefficients: exp(h (Re center + semi_real)) = exp(" + std::to_string(right_end) +
                ") overflows; take shorter steps");
  const complex front = std::exp(h * (ellipse.center + ellipse.semi_real));
  if (h == 0.0) return {1.0};
  const double hg = h * recurrence.scale;
  // The coefficients peak near k = h g and fall faster than geometrically past it: start the backward
  // recurrence beyond, and further until the cut lies 20 terms inside it.
  const int first = static_cast<int>(std::ceil(1.5 * hg + 12.0 * std::sqrt(hg) + 40.0));
  for (int n = first;; n *= 2) {
    const Generating u = generating_coefficients(hg, recurrence.q, n);
    const auto magnitude = [&](int k) { return std::abs(front) * std::exp(u.log_magnitude[k]); };
    double rest = 0.0;
    int m = n;
    while (m > 0 && rest + magnitude(m) <= tail) rest += magnitude(m--);
    if (m + 20 <= n) {
      std::vector<complex> a(static_cast<std::size_t>(m) + 1);
      for (int k = 0; k <= m; ++k) a[k] = front * (u.sign[k] * std::exp(u.log_magnitude[k]));
      for (const complex& value : a)
        if (!std::isfinite(value.real()) || !std::isfinite(value.imag()))
          throw Error("Faber coefficients: not finite (h " + std::to_string(h) + ")");
      return a;
    }
    if (n > 16 * first)
      throw Error("Faber coefficients: the series did not fall below the tail within " + std::to_string(n) + " terms");
  }
}

SpectralEllipse least_ellipse_around(std::vector<complex> points, double margin, double right_end) {
  if (!std::isfinite(margin) || margin < 0.0) throw Error("spectral ellipse: margin must be >= 0");
  if (!std::isfinite(right_end)) throw Error("spectral ellipse: right_end must be finite");
  points.push_back(0.0);
  double left = 0.0, right = 0.0, low = 0.0, high = 0.0;
  for (const complex& z : points) {
    if (!std::isfinite(z.real()) || !std::isfinite(z.imag())) throw Error("spectral ellipse: a point is not finite");
    left = std::min(left, z.real());
    right = std::max(right, z.real());
    low = std::min(low, z.imag());
    high = std::max(high, z.imag());
  }
  const complex middle(0.5 * (left + right), 0.5 * (low + high));
  double spread = 0.0;
  for (const complex& z : points) spread = std::max(spread, std::abs(z - middle));
  if (!(spread > 0.0)) {  // (every point is 0: L = 0, whose exponential any ellipse around 0 gives)
    const double size = std::max(right_end, 1.0);
    return SpectralEllipse{complex(right_end - size, 0.0), size, size};
  }
  // Grown by the margin along their direction from the middle, on a ring away from it too (points
  // near the middle still move), but never to the right of the rightmost.
  for (complex& z : points) {
    const complex d = z - middle;
    const double phase = std::arg(d);
    z = middle + d * (1.0 + margin) + margin * spread * complex(std::cos(phase), std::sin(phase));
    z = complex(std::min(z.real(), right), z.imag());
  }
  double x_right = std::max(right_end, right), most_left = 0.0;
  for (const complex& z : points) most_left = std::min(most_left, z.real());
  const double y_centre = 0.5 * (low + high);
  // Over the semi-axis a (the centre x_right - a), the least b that holds every point; the best a + b.
  // A point at the right end off the axis fits no ellipse with that end: the end moves right.
  for (int attempt = 0; attempt < 10000; ++attempt, x_right += 0.01 * spread) {
    const double a_least = 0.5 * (x_right - most_left);
    std::optional<SpectralEllipse> best;
    for (int i = 0; i < 400; ++i) {
      const double a = a_least * (1.0 + 1e-6) * std::pow(50.0 / (1.0 + 1e-6), i / 399.0);
      const double c = x_right - a;
      double b = 1e-6 * a;
      bool fits = true;
      for (const complex& z : points) {
        const double x = (z.real() - c) / a, inside = 1.0 - x * x, dy = std::abs(z.imag() - y_centre);
        if (inside <= 1e-12 && dy > 0.0) {
          fits = false;
          break;
        }
        b = std::max(b, dy / std::sqrt(std::max(inside, 1e-12)));
      }
      if (fits && (!best || a + b < best->semi_real + best->semi_imag))
        best = SpectralEllipse{complex(c, y_centre), a, b};
    }
    if (best) return *best;
  }
  throw Error("spectral ellipse: no ellipse holds the points");
}

}  // namespace heom
