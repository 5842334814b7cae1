// Fused vector kernels of the Runge-Kutta integrators: each stage update is one pass over memory.
// (KokkosBlas::update takes at most two vectors plus the output; a Dormand-Prince stage combines
// up to six, and one pass instead of several is what matters for a memory-bound solver.)
#ifndef HEOM_INTEGRATOR_VECTOR_OPS_HPP
#define HEOM_INTEGRATOR_VECTOR_OPS_HPP

#include <Kokkos_Core.hpp>

#include "heom/core/backend_traits.hpp"
#include "heom/core/kokkos_compat.hpp"

namespace heom::impl {

/// Stands in for a non-finite value in max-norm reductions (a NaN would be lost by max).
constexpr double non_finite_norm = 1e300;

template <class ExecSpace>
struct VectorTypes {
  using traits = BackendTraits<ExecSpace>;
  using vector = typename traits::template view<device_complex*>;
  using const_vector = typename traits::template view<const device_complex*>;
  using index = typename traits::index_type;
};

/// out = y + sum_m coeff[m] k[m]
template <class ExecSpace, int N>
struct LinearCombination {
  using types = VectorTypes<ExecSpace>;
  typename types::vector out;
  typename types::const_vector y;
  Kokkos::Array<typename types::const_vector, N> k;
  Kokkos::Array<double, N> coeff;

  KOKKOS_INLINE_FUNCTION void operator()(typename types::index i) const {
    device_complex s = y(i);
    for (int m = 0; m < N; ++m) s += coeff[m] * k[m](i);
    out(i) = s;
  }
};

template <class ExecSpace, int N>
void linear_combination(const ExecSpace& exec, const typename VectorTypes<ExecSpace>::vector& out,
                        const typename VectorTypes<ExecSpace>::const_vector& y, const Kokkos::Array<double, N>& coeff,
                        const Kokkos::Array<typename VectorTypes<ExecSpace>::const_vector, N>& k) {
  LinearCombination<ExecSpace, N> f{out, y, k, coeff};
  Kokkos::parallel_for("heom::integrator::linear_combination",
                       typename BackendTraits<ExecSpace>::range_policy(exec, 0, out.extent(0)), f);
}

/// max_i |sum_m coeff[m] k[m](i)| / (atol + rtol max(|y_i|, |y_new_i|)): the scaled error of a
/// step in the max norm. The max norm (not an RMS sum) gives the same value for any number of
/// threads or ranks, so step sizes, and results, do not depend on the parallel layout.
template <class ExecSpace, int N>
struct ScaledErrorNorm {
  using types = VectorTypes<ExecSpace>;
  typename types::const_vector y, y_new;
  Kokkos::Array<typename types::const_vector, N> k;
  Kokkos::Array<double, N> coeff;
  double atol, rtol;

  KOKKOS_INLINE_FUNCTION void operator()(typename types::index i, double& worst) const {
    device_complex e(0.0);
    for (int m = 0; m < N; ++m) e += coeff[m] * k[m](i);
    const double ay = Kokkos::abs(y(i)), an = Kokkos::abs(y_new(i));
    const double scale = atol + rtol * (ay > an ? ay : an);
    double r = Kokkos::abs(e) / scale;
    if (!is_finite(r) || !is_finite(y_new(i).real()) || !is_finite(y_new(i).imag())) r = non_finite_norm;
    if (r > worst) worst = r;
  }
};

template <class ExecSpace, int N>
double scaled_error_norm(const ExecSpace& exec, const typename VectorTypes<ExecSpace>::const_vector& y,
                         const typename VectorTypes<ExecSpace>::const_vector& y_new,
                         const Kokkos::Array<double, N>& coeff,
                         const Kokkos::Array<typename VectorTypes<ExecSpace>::const_vector, N>& k, double atol,
                         double rtol) {
  ScaledErrorNorm<ExecSpace, N> f{y, y_new, k, coeff, atol, rtol};
  double worst = 0.0;
  Kokkos::parallel_reduce("heom::integrator::error_norm",
                          typename BackendTraits<ExecSpace>::range_policy(exec, 0, y.extent(0)), f,
                          Kokkos::Max<double>(worst));
  exec.fence();
  return worst;
}

/// max_i |a_i - b_i| / (atol + rtol |y_i|), with b = 0 when `b` is empty: the weighted max norm of
/// Hairer's initial step heuristic.
template <class ExecSpace>
struct WeightedNorm {
  using types = VectorTypes<ExecSpace>;
  typename types::const_vector a, b, y;
  double atol, rtol;

  KOKKOS_INLINE_FUNCTION void operator()(typename types::index i, double& worst) const {
    const device_complex d = b.extent(0) > 0 ? a(i) - b(i) : a(i);
    double r = Kokkos::abs(d) / (atol + rtol * Kokkos::abs(y(i)));
    if (!is_finite(r)) r = non_finite_norm;
    if (r > worst) worst = r;
  }
};

template <class ExecSpace>
double weighted_norm(const ExecSpace& exec, const typename VectorTypes<ExecSpace>::const_vector& a,
                     const typename VectorTypes<ExecSpace>::const_vector& b,
                     const typename VectorTypes<ExecSpace>::const_vector& y, double atol, double rtol) {
  WeightedNorm<ExecSpace> f{a, b, y, atol, rtol};
  double worst = 0.0;
  Kokkos::parallel_reduce("heom::integrator::weighted_norm",
                          typename BackendTraits<ExecSpace>::range_policy(exec, 0, a.extent(0)), f,
                          Kokkos::Max<double>(worst));
  exec.fence();
  return worst;
}

/// The classical RK4 accumulation: acc = (first ? y : acc) + c_acc k and tmp = y + c_tmp k in one
/// pass; the last stage writes y = acc + c_acc k instead and returns max |y_i| (non-finite mapped
/// to non_finite_norm) so that divergence is seen without another pass.
template <class ExecSpace>
struct Rk4Update {
  using types = VectorTypes<ExecSpace>;
  typename types::vector acc, tmp;
  typename types::const_vector y, k;
  double c_acc, c_tmp;
  bool first;

  KOKKOS_INLINE_FUNCTION void operator()(typename types::index i) const {
    const device_complex ki = k(i);
    acc(i) = (first ? y(i) : acc(i)) + c_acc * ki;
    tmp(i) = y(i) + c_tmp * ki;
  }
};

template <class ExecSpace>
struct Rk4Finish {
  using types = VectorTypes<ExecSpace>;
  typename types::vector y;
  typename types::const_vector acc, k;
  double c_acc;

  KOKKOS_INLINE_FUNCTION void operator()(typename types::index i, double& worst) const {
    const device_complex v = acc(i) + c_acc * k(i);
    y(i) = v;
    double r = Kokkos::abs(v);
    if (!is_finite(v.real()) || !is_finite(v.imag())) r = non_finite_norm;
    if (r > worst) worst = r;
  }
};

}  // namespace heom::impl

#endif
