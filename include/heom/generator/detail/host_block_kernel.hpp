// heom::impl::HostBlockKernel: the generator on host backends for n = 2..32, one thread per ADO with
// the whole block in local arrays (registers up to n = 8), in the general form (HostHermitianKernel:
// the Hermitian form).
#ifndef HEOM_GENERATOR_DETAIL_HOST_BLOCK_KERNEL_HPP
#define HEOM_GENERATOR_DETAIL_HOST_BLOCK_KERNEL_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "heom/core/backend_traits.hpp"
#include "heom/core/cache_hints.hpp"
#include "heom/generator/detail/generator_data.hpp"
#include "heom/generator/detail/kernel_common.hpp"
#include "heom/generator/kernel_choice.hpp"

namespace heom::impl {

/// The terms of PortableKernel, computed by one thread per ADO: a block of N x N is accumulated in a
/// local array and stored once, each row's update a contiguous run of lanes that vectorizes. N = 2..8
/// is known at compile time (loops of fixed trip count the compiler unrolls); N = 0 takes the run-time
/// n, up to host_block_max_n (kernel_choice.hpp: the local arrays' bound). (HostHermitianKernel:
/// the form for Hermitian ADOs, half the arithmetic.)
template <class ExecSpace, int N, class After = NoAfter>
struct HostBlockKernel {
  static_assert(BackendTraits<ExecSpace>::host_shape, "HostBlockKernel runs on host backends only");
  static_assert(N == 0 || (N >= 2 && N <= 8), "HostBlockKernel: N = 2..8 at compile time, or 0 (run time)");
  using traits = BackendTraits<ExecSpace>;
  /// The local arrays' bound on n.
  static constexpr int max_n = N > 0 ? N : host_block_max_n;

  GeneratorData<ExecSpace> d;
  typename traits::template view<const device_complex*> in;
  typename traits::template view<device_complex*> out;
  bool include_damping = true;  // false: leave out -damping_a rho_a (exponential integrators)
  After after = {};             // after(a, a + 1) once ADO a's block is written

  /// Doubles in a block, at most.
  static constexpr int max_lanes = 2 * max_n * max_n;
  /// A diagonal bath with at most this many exponents has all its terms summed in one sweep.
  static constexpr int max_fused_exponents = 8;

  KOKKOS_FORCEINLINE_FUNCTION int dim() const { return N > 0 ? N : d.n; }

  void operator()(const int chunk) const {
    const int n2 = dim() * dim();
    const HostChunks chunks = d.host_chunks();
    const int first = chunks.first(chunk), last = chunks.last(chunk);
    for (int a = first; a < last; ++a) {
      if (d.skips(a)) continue;
      double acc[max_lanes];
      derivative(a, acc);
      finish_block(after, block_lanes(out.data(), a, n2), acc, 2 * n2, a);
    }
    // A hook that takes the blocks may stream what it writes (stream_copy): fenced, so that other
    // threads see it once the launch ends.
    if (takes_blocks(after)) store_fence();
  }

  void derivative(int a, double* o) const {
    const int n = dim();
    system_part(a, o);
    for (int b = 0; b < d.num_baths; ++b) {
      if (d.bath_fermionic(b)) {
        if (d.fermion_group(b) == b) fermionic_group(a, b, o);  // (its group's other baths come with it)
      } else if (!d.bath_diagonal(b))
        dense_bath(a, b, o);
      else if (d.active_count(b) < n * n && d.bath_begin(b + 1) - d.bath_begin(b) <= max_fused_exponents)
        diagonal_bath_fused(a, b, o);  // partial active sets only: for sigma_z the lane loops are faster
      else
        diagonal_bath(a, b, o);
    }
    if (d.num_rank_one_jumps > 0) add_rank_one_jumps(d, in.data() + static_cast<std::int64_t>(a) * n * n, n, 1.0, o);
  }

  /// o = A rho + rho B + (S o rho) - damping rho, row by row as updates of contiguous rows that
  /// vectorize.
  KOKKOS_FORCEINLINE_FUNCTION void system_part(int a, double* o) const {
    const int n = dim(), lanes = 2 * n * n;
    const double* KOKKOS_RESTRICT rho = block_lanes(in.data(), a, n * n);
    const double* KOKKOS_RESTRICT sp = d.sandwich_p.data();
    const double* KOKKOS_RESTRICT sq = d.sandwich_q.data();
    const double gp = include_damping ? -d.damping(a).real() : 0.0;
    const double gi = include_damping ? d.damping(a).imag() : 0.0;
    double acc[max_lanes], swapped[max_lanes];  // swapped = i rho: (-Im, Re) per element
    for (int e = 0; e < n * n; ++e) {
      swapped[2 * e] = -rho[2 * e + 1];
      swapped[2 * e + 1] = rho[2 * e];
      acc[2 * e] = (gp + sp[2 * e]) * rho[2 * e] + (gi + sq[2 * e]) * rho[2 * e + 1];
      acc[2 * e + 1] = (gp + sp[2 * e + 1]) * rho[2 * e + 1] + (sq[2 * e + 1] - gi) * rho[2 * e];
    }
    // A rho + rho B = Im A (i rho) + (i rho) Im B + Re A rho + rho Re B.
    // This member's A and B.
    const std::int64_t system = static_cast<std::int64_t>(d.member_of(a)) * n * n;
    add_products(n, acc, swapped, d.a_imag.data() + system, d.b_imag_lanes.data() + 2 * system);
    if (!d.a_sys_imaginary) add_products(n, acc, rho, d.a_real.data() + system, d.b_real_lanes.data() + 2 * system);
    for (int lane = 0; lane < lanes; ++lane) o[lane] = acc[lane];
  }

  /// acc += c x + x b for real n x n matrices c and b (b's rows in lane form, each entry twice) and a
  /// block x: row i += c_il (row l of x) + x_il (row l of b). With x_il repeated across the lanes,
  /// every lane does the same two multiply-adds (no shuffles in the loop).
  KOKKOS_FORCEINLINE_FUNCTION static void add_products(const int n, double* KOKKOS_RESTRICT acc,
                                                       const double* KOKKOS_RESTRICT x, const double* KOKKOS_RESTRICT c,
                                                       const double* KOKKOS_RESTRICT b_lanes) {
    for (int i = 0; i < n; ++i) {
      double* row = acc + 2 * n * i;
      for (int l = 0; l < n; ++l) {
        const double* x_l = x + 2 * n * l;
        const double* b_l = b_lanes + 2 * n * l;
        const double c_il = c[i * n + l];
        double pair[2 * max_n];  // x_il in every lane pair
        for (int lane = 0; lane < 2 * n; ++lane) pair[lane] = x[2 * (n * i + l) + (lane & 1)];
        for (int lane = 0; lane < 2 * n; ++lane) row[lane] += c_il * x_l[lane] + b_l[lane] * pair[lane];
      }
    }
  }

  /// o[x0 + lane] += value(lane) for lane in [0, count), count <= Width: every value is computed
  /// into a local array before any is stored, so that the compiler need not fear that a store
  /// changes a later load, and vectorizes the lanes (AVX-512: a whole 2x2 block in one register).
  template <int Width, class Value>
  KOKKOS_FORCEINLINE_FUNCTION static void add_lanes(double* o, int count, const Value& value) {
    double v[Width];
    for (int lane = 0; lane < count; ++lane) v[lane] = value(lane);
    for (int lane = 0; lane < count; ++lane) o[lane] += v[lane];
  }

  /// A diagonal Q_b, exponent by exponent: the whole block when every element is active (sigma_z),
  /// otherwise the runs of active elements.
  KOKKOS_FORCEINLINE_FUNCTION void diagonal_bath(int a, int b, double* o) const {
    const int n = dim(), lanes = 2 * n * n;
    const bool whole_block = d.active_count(b) == n * n;
    for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
      const Links l = links(d, a, k);
      if (l.none()) continue;
      const DiagonalLinkLanes terms(d, in.data(), b, k, l);
      if (whole_block) {
        add_lanes<max_lanes>(o, lanes, terms);
        continue;
      }
      for (int r = 0; r < d.run_count(b); ++r) {
        const int x0 = 2 * d.run_start(b, r);
        add_lanes<2 * max_n>(o + x0, 2 * d.run_length(b, r), [&](const int lane) { return terms(x0 + lane); });
      }
    }
  }

  /// A diagonal Q_b with some elements inactive (a site projector): all its exponents in one sweep
  /// over each run of active elements. The up-neighbours share the bath's cf, so their blocks are
  /// summed first and multiplied once; the accumulating run is loaded and stored once rather than
  /// once per exponent.
  KOKKOS_FORCEINLINE_FUNCTION void diagonal_bath_fused(int a, int b, double* o) const {
    const int n2 = dim() * dim();
    const double* up[max_fused_exponents];
    const double* down[max_fused_exponents];
    const double* ap[max_fused_exponents];
    const double* aq[max_fused_exponents];
    double scale[max_fused_exponents];
    int ups = 0, downs = 0;
    for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
      const Links l = links(d, a, k);
      if (l.up >= 0) up[ups++] = block_lanes(in.data(), l.up, n2);
      if (l.nk > 0) {
        down[downs] = block_lanes(in.data(), l.down, n2);
        ap[downs] = &d.alpha_p(k, 0);
        aq[downs] = &d.alpha_q(k, 0);
        scale[downs++] = static_cast<double>(l.nk);
      }
    }
    if (ups + downs == 0) return;
    const double* KOKKOS_RESTRICT cp = &d.cf_p(b, 0);
    const double* KOKKOS_RESTRICT cq = &d.cf_q(b, 0);
    // One run of `width` lanes from lane x0 (even): sum the ups, apply cf, add the downs.
    auto sweep = [&](const int x0, const int width) {
      double su[2 * max_n], v[2 * max_n];
      for (int lane = 0; lane < width; ++lane) su[lane] = 0.0;
      for (int i = 0; i < ups; ++i)
        for (int lane = 0; lane < width; ++lane) su[lane] += up[i][x0 + lane];
      for (int lane = 0; lane < width; ++lane) v[lane] = cp[x0 + lane] * su[lane] + cq[x0 + lane] * su[lane ^ 1];
      for (int i = 0; i < downs; ++i) {
        const double* KOKKOS_RESTRICT w = down[i];
        const double* KOKKOS_RESTRICT p = ap[i];
        const double* KOKKOS_RESTRICT q = aq[i];
        for (int lane = 0; lane < width; ++lane)
          v[lane] += scale[i] * (p[x0 + lane] * w[x0 + lane] + q[x0 + lane] * w[x0 + (lane ^ 1)]);
      }
      for (int lane = 0; lane < width; ++lane) o[x0 + lane] += v[lane];
    };
    for (int r = 0; r < d.run_count(b); ++r) {
      const int x0 = 2 * d.run_start(b, r), length = d.run_length(b, r);
      if (length > 1) {
        sweep(x0, 2 * length);
        continue;
      }
      // A single element (a projector's column): its two lanes directly.
      double ur = 0.0, ui = 0.0;
      for (int i = 0; i < ups; ++i) {
        ur += up[i][x0];
        ui += up[i][x0 + 1];
      }
      double re = cp[x0] * ur + cq[x0] * ui, im = cp[x0 + 1] * ui + cq[x0 + 1] * ur;
      for (int i = 0; i < downs; ++i) {
        re += scale[i] * (ap[i][x0] * down[i][x0] + aq[i][x0] * down[i][x0 + 1]);
        im += scale[i] * (ap[i][x0 + 1] * down[i][x0 + 1] + aq[i][x0 + 1] * down[i][x0]);
      }
      o[x0] += re;
      o[x0 + 1] += im;
    }
  }

  /// A dense Q_b (add_dense_bath), M and R in local arrays.
  KOKKOS_FORCEINLINE_FUNCTION void dense_bath(int a, int b, double* o) const {
    device_complex sum_m[max_n * max_n], sum_r[max_n * max_n];
    add_dense_bath(d, in.data(), a, b, dim(), sum_m, sum_r, o, ThreadLoop{});
  }

  /// The fermionic baths of group g (add_fermionic_group, the same sums in the same order): the
  /// n + e_k neighbours of both operators' exponents in one sweep, a plus or minus add of lanes each.
  KOKKOS_FORCEINLINE_FUNCTION void fermionic_group(int a, int g, double* o) const {
    const int n = dim(), lanes = 2 * n * n;
    const FermionSigns s = fermion_signs(d, a);
    double up[2][max_lanes];  // [0]: the exponents whose n + e_k couple through Q, [1]: through Q^dagger
    bool has_up[2] = {false, false};
    if (s.below_top)  // (top-tier ADOs, most of a deep hierarchy, have no n + e_k neighbours)
      for (int m = 0; m < 2 * lanes; ++m) up[m / lanes][m % lanes] = 0.0;
    for (int b = g; s.below_top && b < d.num_baths; ++b) {
      if (d.fermion_group(b) != g) continue;
      for_each_fermion_up(d, a, b, s, [&](int k, int neighbour, bool positive) {
        const int dagger = couples_through_q(d, k, true) ? 0 : 1;
        has_up[dagger] = true;
        const double* KOKKOS_RESTRICT x = block_lanes(in.data(), neighbour, n * n);
        double* KOKKOS_RESTRICT sum = up[dagger];
        if (positive)
          for (int m = 0; m < lanes; ++m) sum[m] += x[m];
        else
          for (int m = 0; m < lanes; ++m) sum[m] -= x[m];
      });
    }
    for (int dagger = 0; dagger < 2; ++dagger) {
      device_complex sum_x[max_n * max_n], sum_y[max_n * max_n];
      for (int e = 0; e < n * n; ++e) {
        const device_complex minus_i_sum =
            has_up[dagger] ? device_complex(up[dagger][2 * e + 1], -up[dagger][2 * e]) : device_complex(0.0);
        sum_x[e] = s.left_sign * minus_i_sum;
        sum_y[e] = s.up_sign * minus_i_sum;
      }
      bool any = has_up[dagger];
      for (int b = g; b < d.num_baths; ++b) {
        if (d.fermion_group(b) != g) continue;
        for_each_fermion_down(d, a, b, s, [&](int k, int down, device_complex cx, device_complex cy) {
          if (couples_through_q(d, k, false) != (dagger == 0)) return;
          any = true;
          const device_complex* x = in.data() + static_cast<std::int64_t>(down) * n * n;
          for (int e = 0; e < n * n; ++e) {
            sum_x[e] += cx * x[e];
            sum_y[e] += cy * x[e];
          }
        });
      }
      if (any) add_fermion_product(d, g, dagger, n, sum_x, sum_y, o, ThreadLoop{});
    }
  }
};

}  // namespace heom::impl

#endif
