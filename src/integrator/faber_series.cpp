// Faber coefficients of exp(h z) on an ellipse (faber_series.hpp).
#include "heom/integrator/faber_series.hpp"

#include <algorithm>
#include <cmath>
#include <string>

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

namespace {

// u_k = (g / g1)^{k/2} I_k(2 h sqrt(g g1)) (g1 >= 0), or (g / |g1|)^{k/2} J_k(2 h sqrt(g |g1|)) (g1 < 0),
// the coefficients of w^k in exp(h g w + h g1 / w) (g = scale, g1 = q g), for k = 0 .. n: Miller's
// backward recurrence u_{k-1} = k / (h g) u_k + q u_{k+1}, whose wanted solution is the one that falls
// with k (so its rounding errors die out), from u_n = tiny, u_{n+1} = 0; then normalized. The
// recurrence stays finite where (g / g1)^{k/2} or the Bessel function alone would overflow or vanish
// (a near circle).
std::vector<double> generating_coefficients(double hg, double q, double h, double semi_real, int n) {
  std::vector<double> u(static_cast<std::size_t>(n) + 2, 0.0);
  u[n] = 1e-280;
  for (int k = n; k > 0; --k) {
    u[k - 1] = k / hg * u[k] + q * u[k + 1];
    if (std::abs(u[k - 1]) > 1e250)
      for (int j = k - 1; j <= n; ++j) u[j] *= 1e-250;
  }
  double largest = 0.0;
  for (double v : u) largest = std::max(largest, std::abs(v));
  for (double& v : u) v /= largest;
  u.pop_back();
  if (q >= 0.0) {
    // exp(h (g + g1)) = sum over all k of u_k, with u_{-k} = q^k u_k: every term positive.
    double sum = u[0], qk = 1.0;
    for (int k = 1; k <= n; ++k) {
      qk *= q;
      sum += u[k] * (1.0 + qk);
    }
    for (double& v : u) v /= sum;  // (times exp(h semi_real), which the caller folds into exp(h center))
    return u;
  }
  // A tall ellipse: the terms of that sum cancel, so match u_0 = J_0(x) and u_1 = r J_1(x) instead
  // (J_0 and J_1 share no zero), in the least-squares sense.
  const double g = hg / h, g1 = q * g;
  const double x = 2.0 * h * std::sqrt(g * -g1), r = std::sqrt(g / -g1);
  const double t0 = std::cyl_bessel_j(0.0, x), t1 = r * std::cyl_bessel_j(1.0, x);
  const double factor = (t0 * u[0] + t1 * u[1]) / (u[0] * u[0] + u[1] * u[1]) * std::exp(-h * semi_real);
  for (double& v : u) v *= factor;
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
  const complex front = std::exp(h * (ellipse.center + ellipse.semi_real));
  if (h == 0.0) return {1.0};
  const double hg = h * recurrence.scale;
  // Past k ~ e h g the coefficients fall faster than geometrically; start the backward recurrence
  // well beyond, and further until the cut lies 20 terms inside it.
  int n = static_cast<int>(std::ceil(1.5 * hg + 12.0 * std::sqrt(hg) + 40.0));
  for (;;) {
    const std::vector<double> u = generating_coefficients(hg, recurrence.q, h, ellipse.semi_real, n);
    double rest = 0.0;
    int m = n;
    while (m > 0 && rest + std::abs(front * u[m]) <= tail) rest += std::abs(front * u[m--]);
    if (m + 20 <= n) {
      std::vector<complex> a(static_cast<std::size_t>(m) + 1);
      for (int k = 0; k <= m; ++k) a[k] = front * u[k];
      return a;
    }
    n *= 2;
  }
}

}  // namespace heom
