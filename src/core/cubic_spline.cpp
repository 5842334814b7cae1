// The natural cubic spline: second derivatives from the tridiagonal system (Thomas algorithm).
#include "heom/core/cubic_spline.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace heom::impl {

CubicSpline::CubicSpline(std::vector<double> x, std::vector<double> y) : m_x(std::move(x)), m_y(std::move(y)) {
  const std::size_t n = m_x.size();
  std::vector<double> diag(n, 1.0), rhs(n, 0.0), upper(n, 0.0), lower(n, 0.0);
  m_second.assign(n, 0.0);
  for (std::size_t i = 1; i + 1 < n; ++i) {
    const double h0 = m_x[i] - m_x[i - 1], h1 = m_x[i + 1] - m_x[i];
    lower[i] = h0 / 6.0;
    diag[i] = (h0 + h1) / 3.0;
    upper[i] = h1 / 6.0;
    rhs[i] = (m_y[i + 1] - m_y[i]) / h1 - (m_y[i] - m_y[i - 1]) / h0;
  }
  for (std::size_t i = 1; i < n; ++i) {
    const double m = lower[i] / diag[i - 1];
    diag[i] -= m * upper[i - 1];
    rhs[i] -= m * rhs[i - 1];
  }
  for (std::size_t i = n; i-- > 0;) m_second[i] = (rhs[i] - (i + 1 < n ? upper[i] * m_second[i + 1] : 0.0)) / diag[i];
}

double CubicSpline::operator()(double x) const {
  const std::size_t last_piece = m_x.size() - 2;
  const std::size_t found = static_cast<std::size_t>(std::upper_bound(m_x.begin(), m_x.end(), x) - m_x.begin());
  const std::size_t i = std::min(found > 0 ? found - 1 : 0, last_piece);
  const double h = m_x[i + 1] - m_x[i], a = (m_x[i + 1] - x) / h, b = (x - m_x[i]) / h;
  return a * m_y[i] + b * m_y[i + 1] +
         ((a * a * a - a) * m_second[i] + (b * b * b - b) * m_second[i + 1]) * h * h / 6.0;
}

}  // namespace heom::impl
