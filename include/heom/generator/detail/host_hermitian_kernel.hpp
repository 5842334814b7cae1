// heom::impl::HostHermitianKernel: the generator on host backends for n = 2..8 and Hermitian ADOs,
// one thread per ADO with the whole block in local arrays (registers).
#ifndef HEOM_GENERATOR_DETAIL_HOST_HERMITIAN_KERNEL_HPP
#define HEOM_GENERATOR_DETAIL_HOST_HERMITIAN_KERNEL_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "heom/core/backend_traits.hpp"
#include "heom/core/cache_hints.hpp"
#include "heom/generator/detail/generator_data.hpp"
#include "heom/generator/detail/kernel_common.hpp"

namespace heom::impl {

/// HostBlockKernel for Hermitian ADOs (GeneratorTables::preserves_hermiticity): the kernel computes G
/// with L(rho) = G + G^dagger, half of the general form's arithmetic.
template <class ExecSpace, int N, class After = NoAfter>
struct HostHermitianKernel {
  static_assert(BackendTraits<ExecSpace>::host_shape, "HostHermitianKernel runs on host backends only");
  static_assert(N >= 2 && N <= 8, "HostHermitianKernel holds a block of N x N, N = 2..8, in registers");
  using traits = BackendTraits<ExecSpace>;

  GeneratorData<ExecSpace> d;
  typename traits::template view<const device_complex*> in;
  typename traits::template view<device_complex*> out;
  bool include_damping = true;  // false: leave out -damping_a rho_a (exponential integrators)
  After after = {};             // after(a, a + 1) once ADO a's block (or upper triangle) is written

  /// Doubles in a block.
  static constexpr int lanes = 2 * N * N;

  void operator()(const int chunk) const {
    const HostChunks chunks = d.host_chunks();
    const int first = chunks.first(chunk), last = chunks.last(chunk);
    const bool streams = takes_blocks(after);
    const bool upper = takes_upper_triangles(after);
    for (int a = first; a < last; ++a) {
      if (d.skips(a)) continue;
      if (streams) prefetch_neighbour_rows(a + prefetch_distance);
      double half[lanes];
      hermitian_half(a, half);
      if (upper) {
        double packed[N * (N + 1)];
        add_adjoint_upper(half, packed);
        finish_upper_triangle(after, packed, a);
        continue;
      }
      double acc[lanes];
      add_adjoint(half, acc);
      finish_block(after, block_lanes(out.data(), a, N * N), acc, lanes, a);
    }
    // A hook that takes the blocks may stream what it writes (stream_copy): fenced, so that other
    // threads see it once the launch ends.
    if (streams) store_fence();
  }

  /// Where a hook takes the blocks (an integrator's update fused with the pass), the pass streams the
  /// integrator's history along with y, and y's blocks no longer stay in the nearer caches from one
  /// pass to the next: the rows the Hermitian form reads from the neighbours of the ADO this far
  /// ahead are then fetched early, while this one is computed. (Where the generator runs alone only its input
  /// and output pass through the cache, which kept them for FMO at depth 5, and the prefetches cost
  /// there: perf_tests/history.md.)
  static constexpr int prefetch_distance = 4;
  void prefetch_neighbour_rows(int a) const {
    if (a >= d.num_ados) return;
    const int exponents = d.bath_begin(d.num_baths);
    for (int k = 0; k < exponents; ++k) {
      const int i = d.single_row(k);
      if (i < 0) continue;
      const Links l = links(d, a, k);
      for (const int neighbour : {l.up, l.down}) {
        if (neighbour < 0) continue;
        const double* row = block_lanes(in.data(), neighbour, N * N) + 2 * N * i;
        // A row of 2N doubles spans up to three lines: touch points at most 64 bytes apart.
        prefetch_line(row);
        prefetch_line(row + N);
        prefetch_line(row + 2 * N - 1);
      }
    }
  }

  /// y += c x for a complex scalar c = (cr, ci) and a row x of Width lanes (host).
  template <int Width>
  static KOKKOS_FORCEINLINE_FUNCTION void add_scaled(double* KOKKOS_RESTRICT y, double cr, double ci,
                                                     const double* KOKKOS_RESTRICT x) {
    // Lane form (GeneratorTables): c x is, per lane m, Re c x[m] + (m odd ? Im c : -Im c) x[m ^ 1].
    double p[Width], q[Width];
    for (int m = 0; m < Width; ++m) {
      p[m] = cr;
      q[m] = (m & 1) ? ci : -ci;
    }
    for (int m = 0; m < Width; ++m) y[m] += p[m] * x[m] + q[m] * x[m ^ 1];
  }

  /// sum_{l in [Begin, End)} c_l rho[l][x] over rows of 2N lanes, summed as a balanced tree: GCC then
  /// keeps rho's rows in registers and the sum's dependency chain is log2(N) additions long, where a
  /// loop over l would wait on N multiply-adds in sequence.
  template <int Begin, int End>
  static KOKKOS_FORCEINLINE_FUNCTION double combine_rows(const double* KOKKOS_RESTRICT c,
                                                         const double* KOKKOS_RESTRICT rho, int x) {
    if constexpr (End - Begin == 1) {
      return c[Begin] * rho[2 * N * Begin + x];
    } else {
      constexpr int middle = (Begin + End) / 2;
      return combine_rows<Begin, middle>(c, rho, x) + combine_rows<middle, End>(c, rho, x);
    }
  }

  /// Host, Hermitian ADOs: g = G, with L(rho) = G + G^dagger and G as in
  /// GeneratorTables::preserves_hermiticity. G costs half of the general formula (A rho instead of A
  /// rho + rho B), and a site projector's neighbour terms read one contiguous row of each neighbour
  /// instead of a row and a column.
  ///
  /// The real coefficients of the Hermitian form make most of G real combinations of blocks: G =
  /// P + i M, with M and all but the dense baths' part of P sums of real numbers times rows (no
  /// swapping of real and imaginary lanes per term), and i M formed once at the end.
  KOKKOS_FORCEINLINE_FUNCTION void hermitian_half(int a, double* KOKKOS_RESTRICT g) const {
    constexpr int n2 = N * N, width = 2 * N;
    const double* KOKKOS_RESTRICT rho = block_lanes(in.data(), a, n2);
    const std::int64_t system = static_cast<std::int64_t>(d.member_of(a)) * n2;  // this member's A
    const double* KOKKOS_RESTRICT ar = d.a_real.data() + system;
    const double* KOKKOS_RESTRICT ai = d.a_imag.data() + system;
    const double* KOKKOS_RESTRICT sp = d.sandwich_p.data();
    const double half_damping = include_damping ? -0.5 * d.damping(a).real() : 0.0;
    double p[lanes], m[lanes];
    for (int e = 0; e < 2 * n2; ++e) p[e] = (half_damping + 0.5 * sp[e]) * rho[e];
    // A rho = (Re A + i Im A) rho: row i = sum_l A_il (row l of rho), lane by lane. (M starts as Im A
    // rho: zeroing it first compiled to a call of memset per ADO.)
    for (int i = 0; i < N; ++i)
      for (int x = 0; x < width; ++x) m[width * i + x] = combine_rows<0, N>(ai + i * N, rho, x);
    if (!d.a_sys_imaginary)
      for (int i = 0; i < N; ++i)
        for (int x = 0; x < width; ++x) p[width * i + x] += combine_rows<0, N>(ar + i * N, rho, x);
    hermitian_single_row_links(a, p, m);
    for (int b = 0; b < d.num_baths; ++b) {
      if (!d.bath_diagonal(b))
        hermitian_dense_bath(a, b, rho, p);
      else if (d.coupled_row_count(b) != 1)
        hermitian_diagonal_bath(a, b, p, m);
    }
    // (G holds half of each jump: G + G^dagger the whole.)
    if (d.num_rank_one_jumps > 0) add_rank_one_jumps(d, in.data() + static_cast<std::int64_t>(a) * n2, N, 0.5, p);
    // G = P + i M: i M is (-Im M, Re M) per element.
    for (int e = 0; e < n2; ++e) {
      g[2 * e] = p[2 * e] - m[2 * e + 1];
      g[2 * e + 1] = p[2 * e + 1] + m[2 * e];
    }
  }

  /// Element (i, j) of G + G^dagger from g = G (hermitian_half) into o[0], o[1]: G_ij + conj G_ji, so
  /// that (j, i) is the conjugate of (i, j) to the bit.
  static KOKKOS_FORCEINLINE_FUNCTION void adjoint_sum(const double* KOKKOS_RESTRICT g, int i, int j,
                                                      double* KOKKOS_RESTRICT o) {
    const int x = 2 * (i * N + j), y = 2 * (j * N + i);
    o[0] = g[x] + g[y];
    o[1] = g[x + 1] - g[y + 1];
  }

  /// o = G + G^dagger, the whole block.
  static KOKKOS_FORCEINLINE_FUNCTION void add_adjoint(const double* KOKKOS_RESTRICT g, double* KOKKOS_RESTRICT o) {
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) adjoint_sum(g, i, j, o + 2 * (i * N + j));
  }

  /// The upper triangle of G + G^dagger, row by row into `packed` (TakesUpperTriangles).
  static KOKKOS_FORCEINLINE_FUNCTION void add_adjoint_upper(const double* KOKKOS_RESTRICT g,
                                                            double* KOKKOS_RESTRICT packed) {
    for (int i = 0, k = 0; i < N; ++i)
      for (int j = i; j < N; ++j, k += 2) adjoint_sum(g, i, j, packed + k);
  }

  /// G += Q_b X_b for the diagonal baths coupled through one row i (a site projector), X_b = sum_k
  /// -i rho_{n+e_k} + n_k (c2_k - i c_k) rho_{n-e_k}: row i of each neighbour straight into G's, as
  /// P_i += q_i n_k c2_k rho_{n-e_k} and M_i -= q_i (rho_{n+e_k} + n_k c_k rho_{n-e_k}). One flat
  /// loop over all such exponents, each with its row and q_i from a table (cheaper than looping bath
  /// by bath and looking the bath's rows up per exponent).
  KOKKOS_FORCEINLINE_FUNCTION void hermitian_single_row_links(int a, double* KOKKOS_RESTRICT p,
                                                              double* KOKKOS_RESTRICT m) const {
    constexpr int n2 = N * N, width = 2 * N;
    const int exponents = d.bath_begin(d.num_baths);
    for (int k = 0; k < exponents; ++k) {
      const int i = d.single_row(k);
      if (i < 0) continue;
      const Links l = links(d, a, k);
      if (l.none()) continue;
      // Without a neighbour its factor is 0.
      const double qi = d.single_row_q(k);
      const double* KOKKOS_RESTRICT up_i = neighbour_lanes(in.data(), l.up, n2) + width * i;
      const double* KOKKOS_RESTRICT down_i = neighbour_lanes(in.data(), l.down, n2) + width * i;
      add_link_row(p + width * i, m + width * i, up_i, down_i, l.up >= 0 ? -qi : 0.0,
                   qi * l.nk * d.c_anticommutator(k).real(), -qi * l.nk * d.c_commutator(k).real());
    }
  }

  /// One exponent's terms in row i of the Hermitian form's P and M: P_i += cp down_i, M_i += cu up_i
  /// + cm down_i.
  static KOKKOS_FORCEINLINE_FUNCTION void add_link_row(double* KOKKOS_RESTRICT p_i, double* KOKKOS_RESTRICT m_i,
                                                       const double* KOKKOS_RESTRICT up_i,
                                                       const double* KOKKOS_RESTRICT down_i, double cu, double cp,
                                                       double cm) {
    // New rows into locals, then stored: GCC vectorizes this form (AVX-512: 8 + 4 + 2 lanes for
    // n = 7) and leaves the in-place update scalar.
    constexpr int width = 2 * N;
    double new_p[width], new_m[width];
    for (int x = 0; x < width; ++x) {
      new_p[x] = p_i[x] + cp * down_i[x];
      new_m[x] = m_i[x] + cu * up_i[x] + cm * down_i[x];
    }
    for (int x = 0; x < width; ++x) {
      p_i[x] = new_p[x];
      m_i[x] = new_m[x];
    }
  }

  /// G += Q_b X_b for a diagonal Q_b coupled through several rows (sigma_z; one row takes
  /// hermitian_single_row_links): only the rows i with q_i != 0, each neighbour's row i straight into
  /// G's.
  KOKKOS_FORCEINLINE_FUNCTION void hermitian_diagonal_bath(int a, int b, double* KOKKOS_RESTRICT p,
                                                           double* KOKKOS_RESTRICT m) const {
    constexpr int n2 = N * N, width = 2 * N;
    for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
      const Links l = links(d, a, k);
      if (l.none()) continue;
      // Without a neighbour its factor is 0.
      const double* KOKKOS_RESTRICT up = neighbour_lanes(in.data(), l.up, n2);
      const double* KOKKOS_RESTRICT down = neighbour_lanes(in.data(), l.down, n2);
      const double up_m = l.up >= 0 ? -1.0 : 0.0;
      const double down_p = l.nk * d.c_anticommutator(k).real(), down_m = -l.nk * d.c_commutator(k).real();
      for (int r = 0; r < d.coupled_row_count(b); ++r) {
        const int i = d.coupled_rows(b, r);
        const double qi = d.coupling(b, i, i).real();
        add_link_row(p + width * i, m + width * i, up + width * i, down + width * i, qi * up_m, qi * down_p,
                     qi * down_m);
      }
    }
  }

  /// G += Q_b (X_b + Delta_b rho R_b) for a dense Q_b (X_b as above; R_b = Q_b but for a Lindblad
  /// jump, whose G gets half its L rho L^dagger): X_b whole, then n^3.
  KOKKOS_FORCEINLINE_FUNCTION void hermitian_dense_bath(int a, int b, const double* KOKKOS_RESTRICT rho,
                                                        double* KOKKOS_RESTRICT g) const {
    constexpr int n2 = N * N, width = 2 * N;
    double x[lanes];
    for (int m = 0; m < lanes; ++m) x[m] = 0.0;
    auto add = [&](const int ado, const double cr, const double ci) {
      const double* KOKKOS_RESTRICT nb = block_lanes(in.data(), ado, n2);
      for (int i = 0; i < N; ++i) add_scaled<width>(x + width * i, cr, ci, nb + width * i);
    };
    for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
      const Links l = links(d, a, k);
      if (l.up >= 0) add(l.up, 0.0, -1.0);
      if (l.nk > 0) add(l.down, l.nk * d.c_anticommutator(k).real(), -l.nk * d.c_commutator(k).real());
    }
    const double delta = 0.5 * d.two_delta(b).real();
    if (delta != 0.0) {
      // X += Delta rho R: row i += Delta rho_il (row l of R; R = Q but for a Lindblad jump).
      for (int l = 0; l < N; ++l) {
        double q_row[width];
        for (int j = 0; j < N; ++j) {
          q_row[2 * j] = d.right(b, l, j).real();
          q_row[2 * j + 1] = d.right(b, l, j).imag();
        }
        for (int i = 0; i < N; ++i)
          add_scaled<width>(x + width * i, delta * rho[width * i + 2 * l], delta * rho[width * i + 2 * l + 1], q_row);
      }
    }
    if (d.rank_one(b)) {
      // Q = s c c^dagger: w = c^dagger X (one row), then row i of G += s c_i w.
      double w[width];
      for (int m = 0; m < width; ++m) w[m] = 0.0;
      for (int i = 0; i < N; ++i)
        add_scaled<width>(w, d.rank_one_c(b, i).real(), -d.rank_one_c(b, i).imag(), x + width * i);
      const double s = d.rank_one_s(b);
      for (int i = 0; i < N; ++i)
        add_scaled<width>(g + width * i, s * d.rank_one_c(b, i).real(), s * d.rank_one_c(b, i).imag(), w);
      return;
    }
    // G += Q X: row i += Q_il (row l of X).
    for (int i = 0; i < N; ++i)
      for (int l = 0; l < N; ++l)
        add_scaled<width>(g + width * i, d.coupling(b, i, l).real(), d.coupling(b, i, l).imag(), x + width * l);
  }
};

}  // namespace heom::impl

#endif
