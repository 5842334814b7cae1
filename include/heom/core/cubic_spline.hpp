// heom::impl::CubicSpline: the natural cubic spline through samples (x_i, y_i), x increasing; host code.
#ifndef HEOM_CORE_CUBIC_SPLINE_HPP
#define HEOM_CORE_CUBIC_SPLINE_HPP

#include <vector>

namespace heom::impl {

class CubicSpline {
 public:
  CubicSpline() = default;
  /// x strictly increasing, at least two samples (the caller checks and names its keys).
  CubicSpline(std::vector<double> x, std::vector<double> y);
  /// The spline at x_front <= x <= x_back (the end pieces continued outside).
  double operator()(double x) const;
  const std::vector<double>& x() const { return m_x; }
  const std::vector<double>& y() const { return m_y; }

 private:
  std::vector<double> m_x, m_y, m_second;  // m_second: the second derivatives at the samples
};

}  // namespace heom::impl

#endif
