// The host side of heom::ExponentialAdams: phi functions, damping classes, step weights.
#include "heom/integrator/exponential_adams.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include "heom/core/error.hpp"
#include "heom/core/complex_order.hpp"

namespace heom::impl {

namespace {

/// phi_functions, with e^z given (the weights' row needs it anyway).
void phi_functions(complex z, complex exponential, int count, complex* phi) {
  if (count <= 0) return;
  if (std::norm(z) < 4.0) {  // |z| < 2 (norms: std::abs's hypot is most of a step's weights)
    // phi_count from its series (for |z| < 2 the terms fall below double precision within 30, and
    // the cancellation for negative z costs at most a digit), the lower ones from the stable
    // upward recurrence phi_{k-1} = z phi_k + 1/(k-1)!; the downward recurrence below would lose
    // several digits here.
    constexpr int terms = 30;
    // 1 / k: a multiplication in the loop rather than a division, whose latency the loop would wait on.
    static const std::array<double, terms + ExponentialAdamsWeights::max_order + 1> inverse = [] {
      std::array<double, terms + ExponentialAdamsWeights::max_order + 1> r{};
      for (std::size_t k = 1; k < r.size(); ++k) r[k] = 1.0 / static_cast<double>(k);
      return r;
    }();
    double inverse_factorial = 1.0;  // 1 / count!
    for (int f = 2; f <= count; ++f) inverse_factorial /= f;
    complex sum = 0.0, term = inverse_factorial;  // z^j / (j + count)!
    for (int j = 0; j < terms && std::norm(term) > 1e-34 * std::norm(sum); ++j) {
      sum += term;
      term *= z * inverse[j + count + 1];
    }
    phi[count - 1] = sum;
    for (int k = count; k > 1; --k) {
      inverse_factorial *= k;  // 1 / (k-1)!
      phi[k - 2] = z * phi[k - 1] + inverse_factorial;
    }
    return;
  }
  // phi_k = (phi_{k-1} - 1/(k-1)!) / z, from phi_0 = e^z (one division: thousands of rows per step).
  const complex inverse_z = 1.0 / z;
  complex previous = exponential;
  double inverse_factorial = 1.0;  // 1 / (k-1)!
  for (int k = 1; k <= count; ++k) {
    phi[k - 1] = (previous - inverse_factorial) * inverse_z;
    previous = phi[k - 1];
    inverse_factorial /= k;
  }
}

}  // namespace

void phi_functions(complex z, int count, complex* phi) {
  if (count > ExponentialAdamsWeights::max_order)
    throw Error("phi_functions: count " + std::to_string(count) + " is above " +
                std::to_string(ExponentialAdamsWeights::max_order));
  phi_functions(z, std::exp(z), count, phi);
}

DampingClasses damping_classes(const std::vector<complex>& values, const std::vector<complex>& damping) {
  std::vector<complex> sorted = values;
  sort_distinct(sorted);
  // Sums of the same rates in another order can differ in the last bits: equal within 1e-13.
  DampingClasses classes;
  std::vector<int> of_value(sorted.size());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const complex d = sorted[i];
    if (classes.rate.empty() || std::abs(-d - classes.rate.back()) > 1e-13 * std::max(1.0, std::abs(d)))
      classes.rate.push_back(-d);
    of_value[i] = static_cast<int>(classes.rate.size()) - 1;
  }
  for (const complex& d : damping) {
    const auto found = std::lower_bound(sorted.begin(), sorted.end(), d, less_by_parts);
    if (found == sorted.end() || *found != d)
      throw Error("damping classes: an ADO's damping (" + std::to_string(d.real()) + ", " + std::to_string(d.imag()) +
                  ") is none of the hierarchy's values");
    classes.of_ado.push_back(of_value[found - sorted.begin()]);
  }
  return classes;
}

ElementClasses element_classes(const std::vector<complex>& system_diagonal, int block_size) {
  ElementClasses classes;
  const std::size_t size = static_cast<std::size_t>(block_size);
  if (size == 0 || system_diagonal.size() % size != 0) return classes;
  for (std::size_t i = size; i < system_diagonal.size(); ++i)
    if (system_diagonal[i] != system_diagonal[i % size]) return classes;  // members differ
  if (std::all_of(system_diagonal.begin(), system_diagonal.begin() + block_size,
                  [](const complex& omega) { return omega == complex(0.0); }))
    return classes;
  for (std::size_t e = 0; e < size; ++e) {
    const complex omega = system_diagonal[e];
    const auto found = std::find(classes.rate.begin(), classes.rate.end(), omega);
    classes.of_element.push_back(static_cast<int>(found - classes.rate.begin()));
    if (found == classes.rate.end()) classes.rate.push_back(omega);
  }
  return classes;
}

namespace {

/// poly (coefficients ascending, of the given degree; room for one more) *= (theta - root) / divisor.
void multiply_by_root(double* poly, int degree, double root, double divisor) {
  for (int q = degree + 1; q >= 0; --q) {
    const double shifted = q > 0 ? poly[q - 1] : 0.0;
    const double kept = q <= degree ? poly[q] : 0.0;
    poly[q] = (shifted - root * kept) / divisor;
  }
}

/// Coefficients l[j][m] of the Lagrange polynomials l_j(theta) = sum_m l[j][m] theta^m of the
/// first `order` nodes.
void lagrange_coefficients(const double* nodes, int order, double l[][ExponentialAdamsWeights::max_order]) {
  for (int j = 0; j < order; ++j) {
    double poly[ExponentialAdamsWeights::max_order] = {1.0};
    int degree = 0;
    for (int m = 0; m < order; ++m) {
      if (m == j) continue;
      multiply_by_root(poly, degree++, nodes[m], nodes[j] - nodes[m]);
    }
    for (int m = 0; m < ExponentialAdamsWeights::max_order; ++m) l[j][m] = m < order ? poly[m] : 0.0;
  }
}

}  // namespace

void ExponentialAdamsWeights::compute(const complex* rates, std::size_t count, double h, double sigma,
                                      const double* nodes, int order, complex* table) {
  double l[max_order][max_order];
  lagrange_coefficients(nodes, order, l);
  // omega(theta) = prod_{m < order - 1} (theta - theta_m), coefficients ascending.
  double omega[max_order] = {1.0};
  for (int m = 0; m + 1 < order; ++m) multiply_by_root(omega, m, nodes[m], 1.0);
  for (std::size_t c = 0; c < count; ++c) {
    const complex z = sigma * h * rates[c];
    const complex exponential = std::exp(z);
    complex phi[max_order];
    phi_functions(z, exponential, order, phi);
    // psi_m = sigma^{m+1} m! phi_{m+1}(sigma h D) = int_0^sigma e^{(sigma - u) h D} u^m du.
    complex psi[max_order];
    double power = sigma, factorial = 1.0;
    for (int m = 0; m < order; ++m) {
      psi[m] = power * factorial * phi[m];
      power *= sigma;
      factorial *= m + 1;
    }
    complex* row = table + c * stride;
    std::fill(row, row + stride, complex(0.0));
    row[0] = exponential;
    for (int j = 0; j < order; ++j) {
      complex w = 0.0;
      for (int m = 0; m < order; ++m) w += l[j][m] * psi[m];
      row[1 + j] = h * w;
    }
    if (order > 1) {
      complex e = 0.0;
      for (int m = 0; m < order; ++m) e += omega[m] * psi[m];
      row[error_column] = h * e;
    }
  }
}

Kokkos::Array<double, ExponentialAdamsWeights::max_order> ExponentialAdamsWeights::differences(const double* nodes,
                                                                                               int order) {
  Kokkos::Array<double, max_order> delta;
  for (int j = 0; j < max_order; ++j) {
    delta[j] = 0.0;
    if (order < 2 || j >= order) continue;
    double product = 1.0;
    for (int m = 0; m < order; ++m)
      if (m != j) product *= nodes[j] - nodes[m];
    delta[j] = 1.0 / product;
  }
  return delta;
}

}  // namespace heom::impl
