// Fused vector kernels of the Runge-Kutta integrators: each stage update is one pass over memory.
// (KokkosBlas::update takes at most two vectors plus the output; a Dormand-Prince stage combines
// up to six, and one pass instead of several is what matters for a memory-bound solver.)
#ifndef HEOM_LINALG_VECTOR_OPS_HPP
#define HEOM_LINALG_VECTOR_OPS_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "heom/core/backend_traits.hpp"
#include "heom/core/kokkos_compat.hpp"
#include "heom/core/to_device.hpp"
#include "heom/distributed/communicator.hpp"
#include "heom/distributed/reductions.hpp"

namespace heom::impl {

/// Stands in for a non-finite value in norms (a NaN would be lost by a max, and poisons sums).
constexpr double non_finite_norm = 1e300;

template <class ExecSpace>
struct VectorTypes {
  using traits = BackendTraits<ExecSpace>;
  using vector = typename traits::template view<device_complex*>;
  using const_vector = typename traits::template view<const device_complex*>;
  using index = typename traits::index_type;
};

/// |z|^2.
KOKKOS_INLINE_FUNCTION double norm2(const device_complex& z) { return z.real() * z.real() + z.imag() * z.imag(); }

/// |v|^2, or non_finite_norm for a NaN or Inf: what the fixed-step methods' divergence check takes
/// the maximum of (|v|^2 rather than Kokkos::abs, a hypot call).
KOKKOS_INLINE_FUNCTION double divergence_measure(const device_complex& v) {
  const double r = norm2(v);
  return is_finite(r) ? r : non_finite_norm;
}

/// sqrt(total / count), non-finite or huge values as non_finite_norm: an RMS norm from a sum of
/// squares.
inline double rms_norm(double total, std::int64_t count) {
  const double rms = std::sqrt(total / static_cast<double>(count));
  return rms < non_finite_norm ? rms : non_finite_norm;
}

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

/// y += a x over the first `count` elements.
template <class ExecSpace>
void axpy(const ExecSpace& exec, std::int64_t count, device_complex a,
          const typename VectorTypes<ExecSpace>::const_vector& x, const typename VectorTypes<ExecSpace>::vector& y) {
  Kokkos::parallel_for(
      "heom::axpy", typename BackendTraits<ExecSpace>::range_policy(exec, 0, count),
      KOKKOS_LAMBDA(const std::int64_t i) { y(i) += a * x(i); });
}

/// ... over the first `count` elements.
template <class ExecSpace, int N>
void linear_combination(const ExecSpace& exec, std::int64_t count, const typename VectorTypes<ExecSpace>::vector& out,
                        const typename VectorTypes<ExecSpace>::const_vector& y, const Kokkos::Array<double, N>& coeff,
                        const Kokkos::Array<typename VectorTypes<ExecSpace>::const_vector, N>& k) {
  LinearCombination<ExecSpace, N> f{out, y, k, coeff};
  Kokkos::parallel_for("heom::integrator::linear_combination",
                       typename BackendTraits<ExecSpace>::range_policy(exec, 0, count), f);
}

/// out_a = M in_a (left) or in_a M (right) for every block a of n x `columns` in the first `size`
/// elements, M an n x n row-major device matrix (right: columns == n); one thread per row of a block
/// (contiguous inner loops, no index division per element). `in` and `out` must not alias.
template <class ExecSpace>
void multiply_blocks(const ExecSpace& exec, int n, int columns, std::int64_t size,
                     const typename VectorTypes<ExecSpace>::const_vector& matrix,
                     const typename VectorTypes<ExecSpace>::const_vector& in,
                     const typename VectorTypes<ExecSpace>::vector& out, bool left) {
  const std::int64_t block_size = static_cast<std::int64_t>(n) * columns;
  Kokkos::parallel_for(
      "heom::multiply_blocks", typename BackendTraits<ExecSpace>::range_policy(exec, 0, size / columns),
      KOKKOS_LAMBDA(const std::int64_t row) {
        const std::int64_t block = row / n * block_size, at = row * columns;
        const int i = static_cast<int>(row % n);
        for (int j = 0; j < columns; ++j) out(at + j) = device_complex(0.0);
        if (left) {
          for (int k = 0; k < n; ++k) {
            const device_complex c = matrix(i * n + k);
            for (int j = 0; j < columns; ++j) out(at + j) += c * in(block + k * columns + j);
          }
        } else {
          for (int k = 0; k < n; ++k) {
            const device_complex t = in(at + k);
            for (int j = 0; j < n; ++j) out(at + j) += t * matrix(k * n + j);
          }
        }
      });
}

/// Sums f(i) over i in [0, size) the same way whatever the number of threads or devices: fixed
/// chunks of `chunk` consecutive indices are each summed in index order (one team per chunk, a
/// reduction of fixed shape), and the chunk sums are added in chunk order on the host. Step-size
/// control built on it therefore takes the same steps on 1 or 64 threads. With a communicator, each
/// device sums its own elements (a split hierarchy's owned blocks, whose ranges start on chunk
/// boundaries) and the chunk sums of all devices are added in global order: the same bits as on one
/// device. With `segments` > 1 (a batch's members), the indices are `segments` runs of `size`, the
/// s-th from s * stride, each chunked and summed on its own, and rms() is the largest of their RMS
/// norms: every member's error is held to the tolerance as if it ran alone. Shape: the backend's
/// own, or the device's on a host backend (tests run the GPU's reduction path so).
template <class ExecSpace, KernelShape Shape = native_shape<ExecSpace>>
class OrderedSum {
 public:
  using traits = BackendTraits<ExecSpace, Shape>;

  OrderedSum() = default;
  /// `global_count`: the elements summed on all devices together (count()); size when 0.
  OrderedSum(const ExecSpace& exec, std::int64_t size, std::int64_t chunk, const Communicator* communicator = nullptr,
             std::int64_t global_count = 0, int segments = 1, std::int64_t stride = 0)
      : m_size(size),
        m_chunk(chunk),
        m_count(global_count > 0 ? global_count : size),
        m_segments(segments),
        m_stride(stride),
        m_communicator(communicator),
        m_partial(allocate<typename traits::template view<double*>>(exec, "heom::integrator::partial_sums",
                                                                    segments * ((size + chunk - 1) / chunk))) {
    if (segments < 1 || (segments > 1 && (communicator || stride < size)))
      throw Error("OrderedSum: segments must be >= 1, of at most `stride` elements, on one device");
    m_host = Kokkos::create_mirror_view(m_partial);
  }

  template <class F>
  double operator()(const ExecSpace& exec, const F& f) const {
    return blocked(exec, 1, ElementwiseBlocks<F>{f});
  }

  /// The same sum of f(b, i), where b = i / block is the block of element i (`chunk` and the size
  /// must be multiples of `block`). With BackendTraits::host_shape f.blocks(b0, b1) gives the sum
  /// over the elements of blocks [b0, b1) instead: loops without a division per element, that may
  /// vectorize.
  template <class F>
  double blocked(const ExecSpace& exec, std::int64_t block, const F& f) const {
    const std::vector<double> totals = segment_totals(exec, block, f);
    double total = 0.0;
    for (double t : totals) total += t;
    return total;
  }

  /// rms_norm of the sum of f(i) over a segment, the largest over the segments (one segment: over
  /// every element, on every device).
  template <class F>
  double rms(const ExecSpace& exec, const F& f) const {
    return rms_blocked(exec, 1, ElementwiseBlocks<F>{f});
  }
  template <class F>
  double rms_blocked(const ExecSpace& exec, std::int64_t block, const F& f) const {
    double largest = 0.0;
    for (double total : segment_totals(exec, block, f)) largest = std::max(largest, rms_norm(total, m_count));
    return largest;
  }

  /// The number of elements summed, on all devices together (the mean's denominator), per segment.
  std::int64_t count() const { return m_count; }

  // The kernels' functors are public: nvcc's kernel stubs name them from outside the class.

  /// One team per chunk: its sum into partial(chunk). (A functor rather than a lambda: nvcc does not
  /// let an extended lambda capture inside `if constexpr`.)
  template <class F>
  struct ChunkSums {
    F f;
    std::int64_t size, chunk, block, per_segment, stride;
    typename traits::template view<double*> partial;

    KOKKOS_INLINE_FUNCTION void operator()(const typename traits::member_type& team) const {
      const std::int64_t segment = team.league_rank() / per_segment, first = segment * stride;
      const std::int64_t begin = first + team.league_rank() % per_segment * chunk;
      const std::int64_t end = begin + chunk < first + size ? begin + chunk : first + size;
      double sum = 0.0;
      if constexpr (traits::host_shape) {
        HEOM_IF_ON_HOST((sum = f.blocks(begin / block, end / block);))
      } else {
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, begin, end), [&](const std::int64_t i, double& s) { s += f(i / block, i); },
            sum);
      }
      Kokkos::single(Kokkos::PerTeam(team), [&]() { partial(team.league_rank()) = sum; });
    }
  };

  /// f(i) as a blocked functor of blocks of one element.
  template <class F>
  struct ElementwiseBlocks {
    F f;
    KOKKOS_INLINE_FUNCTION double operator()(std::int64_t, std::int64_t i) const { return f(i); }
    double blocks(std::int64_t begin, std::int64_t end) const {
      double sum = 0.0;
      for (std::int64_t i = begin; i < end; ++i) sum += f(i);
      return sum;
    }
  };

 private:
  /// Each segment's sum (with a communicator: the one segment's, over every device).
  template <class F>
  std::vector<double> segment_totals(const ExecSpace& exec, std::int64_t block, const F& f) const {
    const int teams = static_cast<int>(m_partial.extent(0)), per_segment = teams / m_segments;
    const ChunkSums<F> sums{f, m_size, m_chunk, block, per_segment, m_stride, m_partial};
    const int largest = typename traits::team_policy(exec, teams, 1).team_size_max(sums, Kokkos::ParallelForTag());
    Kokkos::parallel_for("heom::integrator::ordered_sum",
                         typename traits::team_policy(exec, teams, std::min(traits::reduction_team_size, largest)),
                         sums);
    Kokkos::deep_copy(exec, m_host, m_partial);
    exec.fence();
    if (m_communicator)
      return {sum_in_global_order(m_communicator, std::vector<double>(m_host.data(), m_host.data() + teams))};
    std::vector<double> totals(m_segments, 0.0);
    for (int c = 0; c < teams; ++c) totals[c / per_segment] += m_host(c);
    return totals;
  }

  std::int64_t m_size = 0, m_chunk = 1, m_count = 0;
  int m_segments = 1;
  std::int64_t m_stride = 0;
  const Communicator* m_communicator = nullptr;
  typename traits::template view<double*> m_partial;
  typename traits::template view<double*>::HostMirror m_host;
};

/// The square of |sum_m coeff[m] k[m](i)| / (atol + rtol max(|y_i|, |y_new_i|)): one element's share
/// of the scaled error of a step (a non-finite value or y_new counts as non_finite_norm).
template <class ExecSpace, int N>
struct ScaledErrorSquare {
  using types = VectorTypes<ExecSpace>;
  typename types::const_vector y, y_new;
  Kokkos::Array<typename types::const_vector, N> k;
  Kokkos::Array<double, N> coeff;
  double atol, rtol;

  KOKKOS_INLINE_FUNCTION double operator()(typename types::index i) const {
    device_complex e(0.0);
    for (int m = 0; m < N; ++m) e += coeff[m] * k[m](i);
    // One square root per element (Kokkos::abs calls hypot, which dominated this loop).
    const double ay = norm2(y(i)), an = norm2(y_new(i));
    const double scale = atol + rtol * impl::sqrt(ay > an ? ay : an);
    double r2 = norm2(e) / (scale * scale);
    if (!is_finite(r2) || !is_finite(an)) r2 = non_finite_norm * non_finite_norm;
    return r2;
  }
};

/// The scaled error of a step in the RMS norm of Hairer's DOPRI5 and of SciPy and (Z)VODE:
/// sqrt(mean over elements of the squared scaled errors). Non-finite values give non_finite_norm.
template <class ExecSpace, int N>
double scaled_error_norm(const ExecSpace& exec, const OrderedSum<ExecSpace>& sum,
                         const typename VectorTypes<ExecSpace>::const_vector& y,
                         const typename VectorTypes<ExecSpace>::const_vector& y_new,
                         const Kokkos::Array<double, N>& coeff,
                         const Kokkos::Array<typename VectorTypes<ExecSpace>::const_vector, N>& k, double atol,
                         double rtol) {
  return sum.rms(exec, ScaledErrorSquare<ExecSpace, N>{y, y_new, k, coeff, atol, rtol});
}

/// The square of |a_i - b_i| / (atol + rtol |y_i|), with b = 0 when `b` is empty.
template <class ExecSpace>
struct WeightedSquare {
  using types = VectorTypes<ExecSpace>;
  typename types::const_vector a, b, y;
  double atol, rtol;

  KOKKOS_INLINE_FUNCTION double operator()(typename types::index i) const {
    const device_complex d = b.extent(0) > 0 ? a(i) - b(i) : a(i);
    const double scale = atol + rtol * impl::sqrt(norm2(y(i)));
    double r2 = norm2(d) / (scale * scale);
    if (!is_finite(r2)) r2 = non_finite_norm * non_finite_norm;
    return r2;
  }
};

/// The weighted RMS norm of a - b of Hairer's initial step heuristic.
template <class ExecSpace>
double weighted_norm(const ExecSpace& exec, const OrderedSum<ExecSpace>& sum,
                     const typename VectorTypes<ExecSpace>::const_vector& a,
                     const typename VectorTypes<ExecSpace>::const_vector& b,
                     const typename VectorTypes<ExecSpace>::const_vector& y, double atol, double rtol) {
  return sum.rms(exec, WeightedSquare<ExecSpace>{a, b, y, atol, rtol});
}

/// The classical RK4 accumulation: acc = (first ? y : acc) + c_acc k and tmp = y + c_tmp k in one
/// pass; the last stage writes y = acc + c_acc k instead and returns max |y_i|^2 (non-finite mapped
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
    const double r = divergence_measure(v);
    if (r > worst) worst = r;
  }
};

}  // namespace heom::impl

#endif
