// The kernels of heom::ExponentialAdams (integrator/exponential_adams.hpp): the step weights of the
// damping classes, the update with its error estimate (on the host shape, fused with the generator's
// pass), and the dense output.
#ifndef HEOM_INTEGRATOR_DETAIL_EXPONENTIAL_ADAMS_KERNELS_HPP
#define HEOM_INTEGRATOR_DETAIL_EXPONENTIAL_ADAMS_KERNELS_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/cache_hints.hpp"
#include "heom/core/double8.hpp"
#include "heom/core/static_dispatch.hpp"
#include "heom/core/matrix.hpp"
#include "heom/linalg/vector_ops.hpp"

namespace heom {

namespace impl {

/// phi_1(z) .. phi_count(z) (count <= ExponentialAdamsWeights::max_order) into phi[0 .. count):
/// phi_k(z) = sum_j z^j / (j + k)!, so that
/// int_0^1 e^{(1 - u) z} u^m du = m! phi_{m+1}(z).
void phi_functions(complex z, int count, complex* phi);

/// ADOs with equal damping share their step weights: the distinct values of D_a = -damping_a and
/// each ADO's class.
struct DampingClasses {
  std::vector<complex> rate;  // D of each class
  std::vector<int> of_ado;    // class of each ADO
};
/// The classes of the damping `values` of a whole hierarchy (in any order, repeated or not: the
/// same classes), and the class of each of `damping` (ADOs of it: each exactly one of the values).
DampingClasses damping_classes(const std::vector<complex>& values, const std::vector<complex>& damping);
/// The classes of a hierarchy's damping, every ADO's.
inline DampingClasses damping_classes(const std::vector<complex>& damping) { return damping_classes(damping, damping); }

/// The elements of a block whose system term A_ii + B_jj (Generator::system_diagonal) is equal share
/// a class: the distinct values and each element's class. Integrated exactly along with the damping,
/// an element's rate is D_a + omega_e, and a step's weights are per (damping class, element class).
struct ElementClasses {
  std::vector<complex> rate;    // omega of each class
  std::vector<int> of_element;  // class of each element of a block
};
/// The element classes of `system_diagonal` ([members][block_size]), or none (empty) when every
/// omega is zero or the members' differ (a batch of members with different H: their rows would
/// multiply the weights by the members).
ElementClasses element_classes(const std::vector<complex>& system_diagonal, int block_size);

/// The weights of one exponential Adams step, per damping class: with history nodes theta_j =
/// (t_{n-j} - t_n) / h (theta_0 = 0) and `order` p of them, the value at t_n + sigma h is
///   e^{sigma h D} y_n + sum_{j < p} w_j N(y_{n-j}),
///   w_j = h sum_m l_{j,m} sigma^{m+1} m! phi_{m+1}(sigma h D),
/// where l_j(theta) = sum_m l_{j,m} theta^m is the Lagrange polynomial of node j. Row c of `table`
/// (stride columns) holds e^{sigma h D_c}, then w_0 .. w_{p-1} at 1 + j, then at 1 + max_order the
/// error weight E = h int_0^sigma e^{(sigma - u) h D} omega(u) du, omega(u) = prod_{m < p - 1} (u -
/// theta_m) (zero when p = 1). The order-p result minus the order-(p - 1) one (the newest p - 1
/// nodes) is E times the divided difference sum_j delta_j N(y_{n-j}) (differences): the order-p
/// interpolant minus the lower one is omega times it. One weight per element instead of p.
struct ExponentialAdamsWeights {
  static constexpr int max_order = 5;
  static constexpr int error_column = 1 + max_order;  ///< E's column; the w_j are at 1 + j
  static constexpr int stride = 2 + max_order;
  /// Rows for `count` rates from `rates` into `table` (count * stride values).
  static void compute(const complex* rates, std::size_t count, double h, double sigma, const double* nodes, int order,
                      complex* table);
  /// delta_j = 1 / prod_{m != j} (theta_j - theta_m) for j < order (order > 1), else 0: the
  /// divided difference's coefficients, the same for every class.
  static Kokkos::Array<double, max_order> differences(const double* nodes, int order);
};

/// y_new = e^{h D} y + sum_j w_j past_j on element i of ADO a; returns the element's squared scaled
/// error (as ScaledErrorSquare) of E sum_j delta_j past_j (ExponentialAdamsWeights). Order is the
/// number of past derivatives used. blocks() is the host form, the ADO's weights held in registers
/// and the elements in loops the compiler vectorizes; RealWeights (every damping rate real, as for
/// Drude-Lorentz baths) halves its arithmetic.
template <class ExecSpace, int Order, bool RealWeights = false>
struct ExponentialAdamsUpdate {
  using execution_space = ExecSpace;
  using types = VectorTypes<ExecSpace>;
  using weights = ExponentialAdamsWeights;
  typename types::vector y_new;
  typename types::const_vector y;
  Kokkos::Array<typename types::const_vector, weights::max_order> past;
  typename BackendTraits<ExecSpace>::template view<const int*> ado_class;
  typename BackendTraits<ExecSpace>::template view<const device_complex**> w;
  double atol, rtol;
  std::int64_t block_size;  // elements of a block
  /// 1, or block_size with the system's diagonal exact (ElementClasses): weight k of element e of
  /// class c's ADOs is then w(c, k * element_stride + e).
  int element_stride = 1;
  Kokkos::Array<double, weights::max_order> difference = {};  // delta_j (ExponentialAdamsWeights::differences)
  /// The error weight's column (times element_stride).
  static constexpr int error_column = weights::error_column;

  KOKKOS_INLINE_FUNCTION double operator()(std::int64_t a, std::int64_t i) const {
    const int c = ado_class(a);
    const int e0 = element_stride == 1 ? 0 : static_cast<int>(i % block_size);
    const device_complex yi = y(i);
    device_complex v = w(c, e0) * yi, divided(0.0);
    for (int j = 0; j < Order; ++j) {
      const device_complex pj = past[j](i);
      v += w(c, (1 + j) * element_stride + e0) * pj;
      divided += difference[j] * pj;
    }
    y_new(i) = v;
    return error_square(norm2(w(c, error_column * element_stride + e0) * divided), norm2(yi), norm2(v));
  }

  KOKKOS_INLINE_FUNCTION double error_square(double e2, double ay, double an) const {
    const double scale = atol + rtol * impl::sqrt(ay > an ? ay : an);
    const double r2 = e2 / (scale * scale);
    // Comparisons rather than isfinite, and no short circuit, keep the loop vectorizable; NaN fails both.
    return ((r2 <= largest_finite) & (an <= largest_finite)) ? r2 : non_finite_norm * non_finite_norm;
  }
  static constexpr double largest_finite = 1.79e308;

  /// One damping class's weights (row c of w), held in registers by the host loops.
  struct ClassWeights {
    double wr[1 + Order], wi[1 + Order], er, ei;
  };
  ClassWeights class_weights(int c) const {
    ClassWeights k;
    k.wr[0] = w(c, 0).real();
    k.wi[0] = w(c, 0).imag();
    for (int j = 0; j < Order; ++j) {
      k.wr[1 + j] = w(c, 1 + j).real();
      k.wi[1 + j] = w(c, 1 + j).imag();
    }
    k.er = w(c, error_column).real();
    k.ei = w(c, error_column).imag();
    return k;
  }

  /// The update of m contiguous elements of one class (interleaved real and imaginary lanes): y at
  /// yp, the past derivatives at pp, y_new into out and the squared scaled errors into sq. The
  /// loop of the host form (blocks()); the compiler vectorizes it.
  void update_elements(int m, const ClassWeights& k, const double* KOKKOS_RESTRICT yp,
                       const double* const (&past_lanes)[Order], double* KOKKOS_RESTRICT out,
                       double* KOKKOS_RESTRICT sq) const;

  /// update_elements with real weights, on at most real_piece elements: real and imaginary parts
  /// get the same arithmetic, so the loop runs over the doubles as they lie (no separation of the
  /// parts per load, which the loop over complex elements costs), and a second loop forms each
  /// element's squares from its two parts' (the same values to the bit for y_new).
  static constexpr int real_piece = 64;
  [[gnu::always_inline]] void update_real_lanes(int m, const ClassWeights& k, const double* KOKKOS_RESTRICT yp,
                                                const double* const (&past_lanes)[Order], double* KOKKOS_RESTRICT out,
                                                double* KOKKOS_RESTRICT sq) const;

  /// Sum of operator()(a, i) over the elements of ADOs [first, last), on the host.
  double blocks(std::int64_t first, std::int64_t last) const;

  /// blocks() with weights per element (element_stride > 1): the elements of a block in a loop the
  /// compiler vectorizes, each with its own weights, the squares summed as blocks() sums them.
  double blocks_by_element(std::int64_t first, std::int64_t last) const;

#if HEOM_HAS_DOUBLE4
  /// Four elements of blocks_by_element (real and imaginary parts interleaved: two double4s), each
  /// with its weights at wp + column * stride; their squared scaled errors into square[0..4). A
  /// loop over elements, as blocks_by_element's, compiles to scalar code at 4 elements.
  /// (Host code, as blocks_by_element: GCC vector types.)
  void four_elements(const double* KOKKOS_RESTRICT wp, std::int64_t stride, const double* KOKKOS_RESTRICT yp,
                     const double* KOKKOS_RESTRICT const (&pp)[Order], int offset, const double (&delta)[Order],
                     double* KOKKOS_RESTRICT out, double* KOKKOS_RESTRICT square) const;
#endif

#if HEOM_HAS_DOUBLE8
  /// blocks() for ADOs of 4 elements, 2x2 blocks or ground columns of 4 levels (AVX-512): a block is one double8,
  /// updated in registers (the general form's loops over 4 elements spend most of their time on each ADO's setup).
  double two_level_blocks(std::int64_t first, std::int64_t last) const;

  /// |z|^2 of each element (a pair of lanes) in both of its lanes.
  static double8 magnitude2(const double8& z) {
    const double8 z2 = z * z;
    return z2 + swap_pairs(z2);
  }

  /// error_square lane by lane, for m = larger_magnitude.
  double8 error_squares8(const double8& e2, const double8& m) const {
    double8 root;
    for (int q = 0; q < 8; ++q) root[q] = std::sqrt(m[q]);
    const double8 scale = atol + rtol * root;
    const double8 r2 = e2 / (scale * scale);
    return (r2 <= largest_finite) & (m <= largest_finite) ? r2 : splat8(non_finite_norm * non_finite_norm);
  }
#endif
};

// ExponentialAdamsUpdate's host loops: `inline`, as they were when defined in the class (GCC weighs the
// keyword when it decides what to inline).
template <class ExecSpace, int Order, bool RealWeights>
inline void ExponentialAdamsUpdate<ExecSpace, Order, RealWeights>::update_elements(
    int m, const ClassWeights& k, const double* KOKKOS_RESTRICT yp, const double* const (&past_lanes)[Order],
    double* KOKKOS_RESTRICT out, double* KOKKOS_RESTRICT sq) const {
  if constexpr (RealWeights) {
    for (int e = 0; e < m; e += real_piece) {
      const int count = m - e < real_piece ? m - e : real_piece;
      const double* pp[Order];
      for (int j = 0; j < Order; ++j) pp[j] = past_lanes[j] + 2 * e;
      update_real_lanes(count, k, yp + 2 * e, pp, out + 2 * e, sq + e);
    }
  } else {
    const double* KOKKOS_RESTRICT pp[Order];
    double delta[Order];
    for (int j = 0; j < Order; ++j) {
      pp[j] = past_lanes[j];
      delta[j] = difference[j];
    }
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC ivdep  // out never aliases y or the past derivatives
#endif
    for (int e = 0; e < m; ++e) {
      const int x = 2 * e;
      const double yr = yp[x], yi = yp[x + 1];
      double vr = k.wr[0] * yr, vi = k.wr[0] * yi, sr = 0.0, si = 0.0;  // s: the divided difference
      vr -= k.wi[0] * yi;
      vi += k.wi[0] * yr;
      for (int j = 0; j < Order; ++j) {
        const double pr = pp[j][x], pi = pp[j][x + 1];
        vr += k.wr[1 + j] * pr;
        vi += k.wr[1 + j] * pi;
        sr += delta[j] * pr;
        si += delta[j] * pi;
        vr -= k.wi[1 + j] * pi;
        vi += k.wi[1 + j] * pr;
      }
      double dr = k.er * sr, di = k.er * si;
      dr -= k.ei * si;
      di += k.ei * sr;
      out[x] = vr;
      out[x + 1] = vi;
      sq[e] = error_square(dr * dr + di * di, yr * yr + yi * yi, vr * vr + vi * vi);
    }
  }
}

template <class ExecSpace, int Order, bool RealWeights>
inline void ExponentialAdamsUpdate<ExecSpace, Order, RealWeights>::update_real_lanes(
    int m, const ClassWeights& k, const double* KOKKOS_RESTRICT yp, const double* const (&past_lanes)[Order],
    double* KOKKOS_RESTRICT out, double* KOKKOS_RESTRICT sq) const {
  const double* KOKKOS_RESTRICT pp[Order];
  double weight[Order], delta[Order];
  for (int j = 0; j < Order; ++j) {
    pp[j] = past_lanes[j];
    weight[j] = k.wr[1 + j];
    delta[j] = difference[j];
  }
  const double w0 = k.wr[0], er = k.er;
  double e2[2 * real_piece], y2[2 * real_piece], v2[2 * real_piece];
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC ivdep  // out never aliases y or the past derivatives
#endif
  for (int x = 0; x < 2 * m; ++x) {
    const double yx = yp[x];
    double v = w0 * yx, s = 0.0;  // s: the divided difference
    for (int j = 0; j < Order; ++j) {
      const double p = pp[j][x];
      v += weight[j] * p;
      s += delta[j] * p;
    }
    const double d = er * s;
    out[x] = v;
    e2[x] = d * d;
    y2[x] = yx * yx;
    v2[x] = v * v;
  }
  for (int e = 0; e < m; ++e)
    sq[e] = error_square(e2[2 * e] + e2[2 * e + 1], y2[2 * e] + y2[2 * e + 1], v2[2 * e] + v2[2 * e + 1]);
}

template <class ExecSpace, int Order, bool RealWeights>
inline double ExponentialAdamsUpdate<ExecSpace, Order, RealWeights>::blocks(std::int64_t first,
                                                                            std::int64_t last) const {
#if HEOM_HAS_DOUBLE8
  if constexpr (BackendTraits<ExecSpace>::two_level_kernel)
    if (block_size == 4) return two_level_blocks(first, last);
#endif
  if (element_stride > 1) return blocks_by_element(first, last);
  // The squares go into a buffer, summed in 8 fixed partial sums when it fills (a vectorized
  // reduction, the same on any number of threads); the update loop over an ADO's elements then
  // has no reduction and vectorizes.
  constexpr int buffer_size = 256;
  double square[buffer_size];
  double partial[8] = {};
  int fill = 0;
  auto flush = [&]() {
    for (int k = fill; k < buffer_size && k % 8 != 0; ++k) square[k] = 0.0;
    for (int k = 0; k < fill; k += 8)
      for (int q = 0; q < 8; ++q) partial[q] += square[k + q];
    fill = 0;
  };
  for (std::int64_t a = first; a < last; ++a) {
    const ClassWeights k = class_weights(ado_class(a));
    for (std::int64_t piece = 0; piece < block_size; piece += buffer_size) {
      const int m = static_cast<int>(block_size - piece < buffer_size ? block_size - piece : buffer_size);
      if (fill + m > buffer_size) flush();
      const std::int64_t offset = a * block_size + piece;
      const double* pp[Order];
      for (int j = 0; j < Order; ++j) pp[j] = reinterpret_cast<const double*>(past[j].data() + offset);
      update_elements(m, k, reinterpret_cast<const double*>(y.data() + offset), pp,
                      reinterpret_cast<double*>(y_new.data() + offset), square + fill);
      fill += m;
    }
  }
  flush();
  double sum = 0.0;
  for (int q = 0; q < 8; ++q) sum += partial[q];
  return sum;
}

template <class ExecSpace, int Order, bool RealWeights>
inline double ExponentialAdamsUpdate<ExecSpace, Order, RealWeights>::blocks_by_element(std::int64_t first,
                                                                                       std::int64_t last) const {
  constexpr int piece_size = 256;
  double square[piece_size], partial[8] = {};
  const std::int64_t stride = 2 * block_size;  // doubles of one weight's row
  double delta[Order];
  for (int j = 0; j < Order; ++j) delta[j] = difference[j];
  for (std::int64_t a = first; a < last; ++a) {
    const double* KOKKOS_RESTRICT wa = reinterpret_cast<const double*>(&w(ado_class(a), 0));
    for (std::int64_t piece = 0; piece < block_size; piece += piece_size) {
      const int m = static_cast<int>(block_size - piece < piece_size ? block_size - piece : piece_size);
      const std::int64_t offset = a * block_size + piece;
      const double* KOKKOS_RESTRICT yp = reinterpret_cast<const double*>(y.data() + offset);
      double* KOKKOS_RESTRICT out = reinterpret_cast<double*>(y_new.data() + offset);
      const double* KOKKOS_RESTRICT pp[Order];
      for (int j = 0; j < Order; ++j) pp[j] = reinterpret_cast<const double*>(past[j].data() + offset);
      const double* KOKKOS_RESTRICT wp = wa + 2 * piece;
      int e = 0;
#if HEOM_HAS_DOUBLE4
      for (; e + 4 <= m; e += 4)
        four_elements(wp + 2 * e, stride, yp + 2 * e, pp, 2 * e, delta, out + 2 * e, square + e);
#endif
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC ivdep  // out never aliases y, the weights or the past derivatives
#endif
      for (; e < m; ++e) {
        const int x = 2 * e;
        const double yr = yp[x], yi = yp[x + 1];
        double vr = wp[x] * yr - wp[x + 1] * yi, vi = wp[x] * yi + wp[x + 1] * yr, sr = 0.0, si = 0.0;
        for (int j = 0; j < Order; ++j) {
          const double pr = pp[j][x], pi = pp[j][x + 1];
          const double* wj = wp + (1 + j) * stride + x;
          vr += wj[0] * pr - wj[1] * pi;
          vi += wj[0] * pi + wj[1] * pr;
          sr += delta[j] * pr;
          si += delta[j] * pi;
        }
        const double* ew = wp + error_column * stride + x;
        const double dr = ew[0] * sr - ew[1] * si, di = ew[0] * si + ew[1] * sr;
        out[x] = vr;
        out[x + 1] = vi;
        square[e] = error_square(dr * dr + di * di, yr * yr + yi * yi, vr * vr + vi * vi);
      }
      for (int k = 0; k < m; ++k) partial[k & 7] += square[k];
    }
  }
  double sum = 0.0;
  for (int q = 0; q < 8; ++q) sum += partial[q];
  return sum;
}

#if HEOM_HAS_DOUBLE4
template <class ExecSpace, int Order, bool RealWeights>
inline void ExponentialAdamsUpdate<ExecSpace, Order, RealWeights>::four_elements(
    const double* KOKKOS_RESTRICT wp, std::int64_t stride, const double* KOKKOS_RESTRICT yp,
    const double* KOKKOS_RESTRICT const (&pp)[Order], int offset, const double (&delta)[Order],
    double* KOKKOS_RESTRICT out, double* KOKKOS_RESTRICT square) const {
  for (int half = 0; half < 2; ++half) {
    const int x = 4 * half;
    const double4 y4 = load4(yp + x);
    double4 v = complex_times4(load4(wp + x), y4), divided = {};
    for (int j = 0; j < Order; ++j) {
      const double4 p = load4(pp[j] + offset + x);
      v += complex_times4(load4(wp + (1 + j) * stride + x), p);
      divided += splat4(delta[j]) * p;
    }
    const double4 e = complex_times4(load4(wp + error_column * stride + x), divided);
    store4(out + x, v);
    const double4 e2 = magnitude2_4(e), ay = magnitude2_4(y4), an = magnitude2_4(v);
    // error_square's, lane by lane (each element's in both of its lanes).
    const double4 m = ay > an ? ay : an;
    double4 root;
    for (int q = 0; q < 4; ++q) root[q] = std::sqrt(m[q]);
    const double4 scale = atol + rtol * root;
    const double4 r2 = e2 / (scale * scale);
    const double4 checked =
        (r2 <= largest_finite) & (an <= largest_finite) ? r2 : splat4(non_finite_norm * non_finite_norm);
    square[2 * half] = checked[0];
    square[2 * half + 1] = checked[2];
  }
}
#endif

#if HEOM_HAS_DOUBLE8
template <class ExecSpace, int Order, bool RealWeights>
inline double ExponentialAdamsUpdate<ExecSpace, Order, RealWeights>::two_level_blocks(std::int64_t first,
                                                                                      std::int64_t last) const {
  const double* KOKKOS_RESTRICT y_all = reinterpret_cast<const double*>(y.data());
  double* KOKKOS_RESTRICT out_all = reinterpret_cast<double*>(y_new.data());
  const double* KOKKOS_RESTRICT past_all[Order];
  for (int j = 0; j < Order; ++j) past_all[j] = reinterpret_cast<const double*>(past[j].data());
  double8 sum = {};
  if (element_stride > 1) {
    for (std::int64_t a = first; a < last; ++a) {
      // Weight k of the four elements: one double8 (complex numbers), their real and imaginary
      // parts each in both lanes of its element.
      const double* KOKKOS_RESTRICT wa = reinterpret_cast<const double*>(&w(ado_class(a), 0));
      const auto times = [&](int k, const double8& p) {
        const double8 four = load8(wa + 8 * k);
        return shuffle8<0, 0, 2, 2, 4, 4, 6, 6>(four) * p + shuffle8<1, 1, 3, 3, 5, 5, 7, 7>(four) * times_i8(p);
      };
      const double8 x = load8(y_all + 8 * a);
      double8 v = times(0, x), divided = {};
      for (int j = 0; j < Order; ++j) {
        const double8 p = load8(past_all[j] + 8 * a);
        v += times(1 + j, p);
        divided += splat8(difference[j]) * p;
      }
      const double8 e = times(error_column, divided);
      store8(out_all + 8 * a, v);
      const double8 ay = magnitude2(x), an = magnitude2(v);
      sum += error_squares8(magnitude2(e), ay > an ? ay : an);
    }
    return (sum[0] + sum[2]) + (sum[4] + sum[6]);
  }
  for (std::int64_t a = first; a < last; ++a) {
    const device_complex* KOKKOS_RESTRICT wc = &w(ado_class(a), 0);
    const double8 x = load8(y_all + 8 * a);
    double8 v = splat8(wc[0].real()) * x, divided = {};
    if constexpr (!RealWeights) v += splat8(wc[0].imag()) * times_i8(x);
    for (int j = 0; j < Order; ++j) {
      const double8 p = load8(past_all[j] + 8 * a);
      const device_complex wj = wc[1 + j];
      v += splat8(wj.real()) * p;
      divided += splat8(difference[j]) * p;
      if constexpr (!RealWeights) v += splat8(wj.imag()) * times_i8(p);
    }
    double8 e = splat8(wc[error_column].real()) * divided;
    if constexpr (!RealWeights) e += splat8(wc[error_column].imag()) * times_i8(divided);
    store8(out_all + 8 * a, v);
    const double8 ay = magnitude2(x), an = magnitude2(v);
    sum += error_squares8(magnitude2(e), ay > an ? ay : an);  // larger_magnitude: NaN when |v|^2 is
  }
  // Each pair of lanes holds one element's square twice.
  return (sum[0] + sum[2]) + (sum[4] + sum[6]);
}
#endif

/// The upper triangle of Hermitian n x n blocks, row by row: n(n + 1) / 2 elements per ADO instead
/// of n^2, all there is to a block that is Hermitian to the bit (as the Hermitian kernel's are).
struct HermitianPacking {
  /// The largest n packed (the Hermitian host kernel's: the update's buffers hold such a block).
  static constexpr int max_dimension = 8, max_size = max_dimension * (max_dimension + 1) / 2;
  int n = 0;
  int size() const { return size(n); }
  static constexpr int size(int n) { return n * (n + 1) / 2; }
  /// Packed index of element (i, i); row i's elements (i, j >= i) follow it.
  int row_start(int i) const { return row_start(n, i); }
  static constexpr int row_start(int n, int i) { return i * n - i * (i - 1) / 2; }
  /// A block's 2 n^2 doubles into its 2 size() packed ones.
  void pack(const double* KOKKOS_RESTRICT block, double* KOKKOS_RESTRICT packed) const {
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j) {
        const int k = 2 * (row_start(i) + j - i), x = 2 * (i * n + j);
        packed[k] = block[x];
        packed[k + 1] = block[x + 1];
      }
  }
  /// The inverse of pack: each lower element the conjugate of its upper one.
  void unpack(const double* KOKKOS_RESTRICT packed, double* KOKKOS_RESTRICT block) const {
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j) {
        const int k = 2 * (row_start(i) + j - i), x = 2 * (i * n + j);
        block[x] = packed[k];
        block[x + 1] = packed[k + 1];
      }
    mirror_lower(n, packed, block);
  }
  /// An n x n block's strictly lower triangle from its packed upper one: (j, i) = conj (i, j).
  static void mirror_lower(int n, const double* KOKKOS_RESTRICT packed, double* KOKKOS_RESTRICT block) {
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) {
        const int k = 2 * (row_start(n, i) + j - i), lower = 2 * (j * n + i);
        block[lower] = packed[k];
        block[lower + 1] = -packed[k + 1];
      }
  }
};

/// ExponentialAdamsUpdate (real weights) on Hermitian ADOs whose past derivatives are kept packed
/// (HermitianPacking), on the host: `update`'s past views hold packed blocks, ADO a's at a * size().
/// Each element of the upper triangle is computed once, as the general update computes it, and
/// mirrored into y_new's lower triangle (so y_new is the general update's, to the bit, when y and
/// the derivatives are Hermitian to the bit); off-diagonal error squares count twice.
template <class ExecSpace, int Order>
struct PackedHistoryUpdate {
  ExponentialAdamsUpdate<ExecSpace, Order, true> update;
  device_complex* newest;  // update.past[0], written here
  HermitianPacking packing;
  /// Whether the step's data outgrow the cache (ExponentialAdams::streams_packed_update): the new
  /// derivative's slot is then written with streaming stores and the older derivatives are fetched
  /// ahead, read once (fixed_ado).
  bool streams = false;
  /// How many ADOs ahead the older derivatives are fetched where `streams`.
  static constexpr int history_prefetch_distance = 2;

  /// How ado() is given the new derivative.
  enum class Given {
    block,  ///< a whole block (2 n^2 doubles), packed into the history first
    upper,  ///< its upper triangle, packed already (TakesUpperTriangles)
    none    ///< nothing: the derivative is in the history already
  };

  /// Updates ADO a, after putting its new derivative (`given` says in what form) into the history,
  /// and returns its error sum. Where its stores stream (`streams`), the caller fences them
  /// (store_fence) before another thread reads them.
  double ado(int a, const double* derivative, Given given) const {
    double sum = 0.0;
    static_dispatch<HermitianPacking::max_dimension, 1, 2, 3, 4, 5, 6, 7>(packing.n, [&](auto n) {
      constexpr int N = decltype(n)::value;
      sum = streams ? fixed_ado<N, true>(a, derivative, given) : fixed_ado<N, false>(a, derivative, given);
    });
    return sum;
  }

  /// ado() for n = N: with every row's length known, its copies are a few vector moves (the compiler
  /// inlines fixed-size copies, where loops of run-time length became calls of memmove) and the update
  /// is one loop of fixed length over the packed block.
  template <int N, bool Streams>
  double fixed_ado(int a, const double* derivative, Given given) const {
    constexpr int size = HermitianPacking::size(N);
    static_assert(size <= decltype(update)::real_piece, "one piece of update_real_lanes holds a packed block");
    const std::int64_t packed_offset = 2 * static_cast<std::int64_t>(a) * size,
                       block_offset = 2 * static_cast<std::int64_t>(a) * N * N;
    double y_packed[2 * size], v_packed[2 * size], square[size];
    double* slot = reinterpret_cast<double*>(newest) + packed_offset;
    double* out = reinterpret_cast<double*>(update.y_new.data()) + block_offset;
    const double* pp[Order];
    for (int j = 0; j < Order; ++j) pp[j] = reinterpret_cast<const double*>(update.past[j].data()) + packed_offset;
    [[maybe_unused]] double given_packed[Streams ? 2 * size : 1];
    if constexpr (Streams) {
      // The new derivative is not read again in this step, and leaves the cache before the next: it
      // is formed in a local array, read from there, and streamed into its slot (a streaming store
      // does not first read the line it overwrites). The older derivatives, read once a step, are
      // fetched ahead as read once, so that they push less of the rest out of the cache. y_new, the
      // next step's y, whose rows the kernel reads out of order, is stored as usual: streamed, it
      // measured no faster (perf_tests/history.md).
      if (given == Given::block) {
        copy_upper_rows<N>(derivative, given_packed);
        pp[0] = given_packed;
      } else if (given == Given::upper) {
        pp[0] = derivative;
      }
      if (given != Given::none) stream_copy(slot, pp[0], 2 * size);
      if (a + history_prefetch_distance < static_cast<int>(update.ado_class.extent(0)))
        for (int j = 1; j < Order; ++j) prefetch_read_once(pp[j] + 2 * history_prefetch_distance * size, 16 * size);
    } else {
      if (given == Given::block)
        copy_upper_rows<N>(derivative, slot);
      else if (given == Given::upper)
        __builtin_memcpy(slot, derivative, 16 * size);
    }
    // y's upper triangle gathered, updated as the general update updates it, and scattered into both
    // triangles of y_new.
    copy_upper_rows<N>(reinterpret_cast<const double*>(update.y.data()) + block_offset, y_packed);
    update.update_real_lanes(size, update.class_weights(update.ado_class(a)), y_packed, pp, v_packed, square);
    copy_upper_rows<N>(v_packed, out, std::false_type{});
    HermitianPacking::mirror_lower(N, v_packed, out);
    double diagonal = 0.0, off_diagonal = 0.0;
    for (int i = 0; i < N; ++i) {
      const int d = HermitianPacking::row_start(N, i);
      diagonal += square[d];
      for (int k = d + 1; k < d + N - i; ++k) off_diagonal += square[k];
    }
    return diagonal + 2.0 * off_diagonal;
  }

  /// Row i's upper part, (i, j >= i), between an N x N block and its packed form (HermitianPacking):
  /// block to packed, or packed to block with ToPacked false.
  template <int N, class ToPacked = std::true_type>
  static void copy_upper_rows(const double* KOKKOS_RESTRICT from, double* KOKKOS_RESTRICT to, ToPacked = {}) {
    copy_rows<N, ToPacked::value>(from, to, std::make_integer_sequence<int, N>{});
  }
  template <int N, bool ToPacked, int... I>
  static void copy_rows(const double* KOKKOS_RESTRICT from, double* KOKKOS_RESTRICT to,
                        std::integer_sequence<int, I...>) {
    constexpr auto whole = [](int i) { return 2 * (i * N + i); };
    constexpr auto packed = [](int i) { return 2 * HermitianPacking::row_start(N, i); };
    (__builtin_memcpy(to + (ToPacked ? packed(I) : whole(I)), from + (ToPacked ? whole(I) : packed(I)), 16 * (N - I)),
     ...);
  }
};

/// The packed update as Generator::apply_then's hook: it takes each ADO's new derivative from the
/// kernel (Generator::hands_over_blocks), so that only its packed form is ever stored. ADO a's error
/// sum goes to ado_error[a], and rho's (each member's ADO 0) also to rho_error[member].
template <class Update>
struct PackedUpdateAfterDerivative {
  const Update* update;
  double* ado_error;
  double* rho_error;
  int ados_per_member;

  void take_block(int a, const double* lanes) const { record(a, update->ado(a, lanes, Update::Given::block)); }
  void take_upper(int a, const double* packed) const { record(a, update->ado(a, packed, Update::Given::upper)); }
  void record(int a, double error) const {
    ado_error[a] = error;
    if (a % ados_per_member == 0) rho_error[a / ados_per_member] = error;
  }
};

/// The packed update over ADOs whose derivatives are already in the history (every pass not fused
/// with the generator's: the first step, a retried step, a step that chooses its order and its
/// estimates at the other orders), in chunks of ados_per_chunk ADOs: one store_fence per chunk.
template <class Update>
struct PackedUpdateAll {
  PackedUpdateAfterDerivative<Update> hook;
  int num_ados;
  int ados_per_chunk;
  /// Chunks of at most 64 ADOs (a fence is cheap at that), at least 4 per thread.
  PackedUpdateAll(const PackedUpdateAfterDerivative<Update>& each, int ados, int threads)
      : hook(each), num_ados(ados), ados_per_chunk(std::clamp(ados / (4 * threads), 1, 64)) {}
  int chunks() const { return (num_ados + ados_per_chunk - 1) / ados_per_chunk; }
  void operator()(const int chunk) const {
    const int first = chunk * ados_per_chunk, last = std::min(num_ados, first + ados_per_chunk);
    for (int a = first; a < last; ++a) hook.record(a, hook.update->ado(a, nullptr, Update::Given::none));
    store_fence();
  }
};

/// Generator::apply_then's hook that packs each new derivative into `packed` (the history).
struct PackDerivative {
  device_complex* packed;
  HermitianPacking packing;
  void take_block(int a, const double* lanes) const {
    packing.pack(lanes, reinterpret_cast<double*>(packed) + 2 * std::int64_t(a) * packing.size());
  }
  void take_upper(int a, const double* upper) const {
    std::copy(upper, upper + 2 * packing.size(),
              reinterpret_cast<double*>(packed) + 2 * std::int64_t(a) * packing.size());
  }
};

/// Unpacks the history's blocks (ADO a of `packed` into `full`).
struct UnpackBlocks {
  const device_complex* packed;
  device_complex* full;
  HermitianPacking packing;
  void operator()(const int a) const {
    packing.unpack(reinterpret_cast<const double*>(packed) + 2 * std::int64_t(a) * packing.size(),
                   reinterpret_cast<double*>(full) + 2 * std::int64_t(a) * packing.n * packing.n);
  }
};

/// The derivative with the system's diagonal exact: N(y) - omega y, element by element, in place (the
/// generator's output holds A_ii + B_jj rho_ij, the exponential takes it exactly).
template <class ExecSpace>
struct ExcludeSystemDiagonal {
  using types = VectorTypes<ExecSpace>;
  typename types::vector derivative;
  typename types::const_vector y;
  typename BackendTraits<ExecSpace>::template view<const device_complex*> omega;  // [block_size]
  std::int64_t block_size;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { derivative(i) -= omega(i % block_size) * y(i); }
  /// The elements of ADOs [first, last), on the host (by block: no division per element).
  void ados(std::int64_t first, std::int64_t last) const {
    for (std::int64_t a = first; a < last; ++a)
      for (std::int64_t e = 0, i = a * block_size; e < block_size; ++e, ++i) derivative(i) -= omega(e) * y(i);
  }
};

/// The update as Generator::apply_then's `after` (host): ADOs [first, last) are updated as soon as
/// the generator has written their new derivative, by the thread that wrote it, while y's and the
/// derivative's blocks are in its cache. The error sum of each range goes to range_error[first] (0
/// at the range's other ADOs), and rho's (each member's ADO 0) alone to rho_error[member]. (A range
/// never holds two members' ADOs: HostChunks.)
template <class Update>
struct UpdateAfterDerivative {
  const Update* update;
  double* range_error;
  double* rho_error;
  int ados_per_member;
  const ExcludeSystemDiagonal<typename Update::execution_space>* exclude = nullptr;  // (element classes)

  void operator()(int first, int last) const {
    if (exclude) exclude->ados(first, last);
    range_error[first] = update->blocks(first, last);
    for (int a = first + 1; a < last; ++a) range_error[a] = 0.0;
    // (Rewrites rho's values of y_new, the same.)
    if (first % ados_per_member == 0) rho_error[first / ados_per_member] = update->blocks(first, first + 1);
  }
};

/// out = e^{sigma h D} y + sum_j w_j past_j (the dense output), over out's elements.
template <class ExecSpace, int Order>
struct ExponentialAdamsInterpolate {
  using execution_space = ExecSpace;
  using types = VectorTypes<ExecSpace>;
  typename types::vector out;
  typename types::const_vector y;
  Kokkos::Array<typename types::const_vector, ExponentialAdamsWeights::max_order> past;
  typename BackendTraits<ExecSpace>::template view<const int*> ado_class;
  typename BackendTraits<ExecSpace>::template view<const device_complex**> w;
  std::int64_t block_size;
  int element_stride = 1;  // as ExponentialAdamsUpdate's

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    const int c = ado_class(i / block_size);
    const int e = element_stride == 1 ? 0 : static_cast<int>(i % block_size);
    device_complex v = w(c, e) * y(i);
    for (int j = 0; j < Order; ++j) v += w(c, (1 + j) * element_stride + e) * past[j](i);
    out(i) = v;
  }
};

/// ExponentialAdamsInterpolate on the blocks of the listed ADOs alone (Integrator::interpolate_ados):
/// element i of the listed blocks, one after another.
template <class Interpolate>
struct InterpolateListed {
  Interpolate f;
  typename BackendTraits<typename Interpolate::execution_space>::template view<const int*> ados;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i) const {
    f(ados(i / f.block_size) * f.block_size + i % f.block_size);
  }
};

/// ExponentialAdamsInterpolate from a packed history (PackedHistoryUpdate), by ADO, on the host.
template <class ExecSpace, int Order>
struct PackedHistoryInterpolate {
  ExponentialAdamsInterpolate<ExecSpace, Order> f;  // its past views hold packed blocks
  HermitianPacking packing;

  void operator()(const int a) const {
    const std::int64_t n2 = packing.n * packing.n, packed_offset = 2 * std::int64_t(a) * packing.size();
    const int c = f.ado_class(a);
    double y_packed[2 * HermitianPacking::max_size], packed[2 * HermitianPacking::max_size];
    packing.pack(reinterpret_cast<const double*>(f.y.data()) + 2 * a * n2, y_packed);
    const double w0 = f.w(c, 0).real();  // (real rates: real weights)
    for (int x = 0; x < 2 * packing.size(); ++x) packed[x] = w0 * y_packed[x];
    for (int q = 0; q < Order; ++q) {
      const double* p = reinterpret_cast<const double*>(f.past[q].data()) + packed_offset;
      const double wq = f.w(c, 1 + q).real();
      for (int x = 0; x < 2 * packing.size(); ++x) packed[x] += wq * p[x];
    }
    double* out = reinterpret_cast<double*>(f.out.data()) + 2 * a * n2;
    packing.unpack(packed, out);
  }
};

}  // namespace impl

}  // namespace heom

#endif
