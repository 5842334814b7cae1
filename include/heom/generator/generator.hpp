// heom::Generator: the HEOM right-hand side d(rho_n)/dt, matrix-free on a Kokkos device.
#ifndef HEOM_GENERATOR_GENERATOR_HPP
#define HEOM_GENERATOR_GENERATOR_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/backends.hpp"
#include "heom/core/double8.hpp"
#include "heom/core/error.hpp"
#include "heom/generator/generator_tables.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/model/model.hpp"

namespace heom {

namespace impl {

KOKKOS_INLINE_FUNCTION device_complex times_i(const device_complex& z) { return device_complex(-z.imag(), z.real()); }

/// f(i) for i in [0, count), split over the team's threads. A team on a host backend is one thread
/// (BackendTraits::team_size), so there it is a plain loop; TeamThreadRange elsewhere.
template <class Traits, class Member, class F>
KOKKOS_FORCEINLINE_FUNCTION void team_for(const Member& team, int count, const F& f) {
  if constexpr (Traits::is_host) {
    for (int i = 0; i < count; ++i) f(i);
  } else {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), f);
  }
}

/// o[x(m)] = value(m) (or +=, when Accumulate) for the lanes m in [0, count) of a block, split over
/// the team's threads. With the block size known at compile time (Lanes > 0), the host path computes
/// every value into a local array before it stores any: the compiler then need not fear that a store
/// changes a later load, and vectorizes the lanes (AVX-512: a whole 2x2 block in one register).
template <class Traits, int Lanes, bool Accumulate, class Member, class Index, class Value>
KOKKOS_FORCEINLINE_FUNCTION void team_lanes(const Member& team, int count, double* o, const Index& x,
                                            const Value& value) {
  if constexpr (Traits::is_host && Lanes > 0) {
    double v[Lanes];
    for (int m = 0; m < count; ++m) v[m] = value(m);
    for (int m = 0; m < count; ++m) {
      if constexpr (Accumulate)
        o[x(m)] += v[m];
      else
        o[x(m)] = v[m];
    }
  } else {
    team_for<Traits>(team, count, [&](const int m) {
      if constexpr (Accumulate)
        o[x(m)] += value(m);
      else
        o[x(m)] = value(m);
    });
  }
}

/// GeneratorTables and the hierarchy's neighbour tables on the device.
template <class ExecSpace>
struct GeneratorData {
  template <class T>
  using view = typename BackendTraits<ExecSpace>::template view<T>;

  int n = 0, n2 = 0, num_ados = 0, num_baths = 0;
  int ados_per_team = 1;  // consecutive ADOs one team works through
  int scratch_level = 0;
  bool has_dense_bath = false;
  bool a_sys_imaginary = false;
  bool real_damping = false;  // every ADO's damping is real (real rates)
  bool has_sandwich = false;
  /// apply()'s input holds Hermitian ADOs and the model keeps them so: the host kernel computes only
  /// G, with L(rho) = G + G^dagger (GeneratorTables::preserves_hermiticity).
  bool hermitian_input = false;
  view<const double**> a_real, a_imag, b_real, b_imag;  // [n][n] parts of A and B
  view<const double**> b_real_lanes, b_imag_lanes;      // [n][2n]: each entry twice, for the lane loops
  view<const double*> sandwich_p, sandwich_q;           // [2 n2] lane form (GeneratorTables)
  view<const int*> bath_begin, bath_diagonal, active_count, run_count;
  view<const int**> run_start, run_length;  // [bath][n2]
  view<const double**> cf_p, cf_q;          // [bath][2 n2] lane form
  view<const double**> alpha_p, alpha_q;    // [K][2 n2] lane form
  view<const device_complex***> q;          // [bath][n][n]
  view<const device_complex*> two_delta, c_commutator, c_anticommutator, damping;
  view<const int**> labels, next, prev;                             // [ado][K]
  view<const int*> coupled_row_count;                               // [bath] (GeneratorTables)
  view<const int**> coupled_rows;                                   // [bath][n]
  view<const int*> single_row;                                      // [K] (GeneratorTables)
  view<const double*> single_row_q;                                 // [K]
  view<const int*> rank_one;                                        // [bath] (GeneratorTables)
  view<const device_complex**> rank_one_c;                          // [bath][n]
  view<const double*> rank_one_s;                                   // [bath]
  view<const double*> shifted_system;                               // [64] n = 2 only (GeneratorTables)
  view<const double**> shifted_commutator, shifted_anticommutator;  // [bath][64]

  /// Scratch per team for a dense bath: M and R (then X and Y in place).
  std::size_t scratch_bytes() const { return has_dense_bath ? 2 * sizeof(device_complex) * n2 : 0; }
};

/// Generator::apply_then's default: nothing after each range of ADOs.
struct NoAfter {
  void operator()(int /*first*/, int /*last*/) const {}
};

/// The kernel: GeneratorTables' formula, one team per run of ados_per_team consecutive ADOs, the
/// team's threads splitting each ADO's elements (on CPUs a team is one thread, and a run of ADOs
/// amortizes the team's start). Loops go exponent by exponent over whole blocks, so neighbour indices
/// are read once per ADO and each inner loop streams a contiguous block. N is the system dimension
/// when it is known at compile time (2..8: fully unrolled, vectorizable loops), 0 otherwise.
///
/// Dense baths: M_b = sum_k rho_{n+e_k} + n_k c_k rho_{n-e_k}, R_b = sum_k n_k c2_k rho_{n-e_k},
/// X_b = R_b - i M_b + 2 Delta_b rho Q_b, Y_b = R_b + i M_b, and the bath adds Q_b X_b + Y_b Q_b: one
/// commutator and one anticommutator per bath, whatever its number of exponents.
template <class ExecSpace, int N, class After = NoAfter>
struct GeneratorKernel {
  using traits = BackendTraits<ExecSpace>;
  using member_type = typename traits::member_type;

  GeneratorData<ExecSpace> d;
  typename traits::template view<const device_complex*> in;
  typename traits::template view<device_complex*> out;
  bool include_damping = true;  // false: leave out -damping_a rho_a (exponential integrators)
  After after = {};             // host: after(a, a + 1) once ADO a's block is written

  KOKKOS_INLINE_FUNCTION int dim() const { return N > 0 ? N : d.n; }
  /// Doubles in a block when N is known (0 otherwise).
  static constexpr int lanes = 2 * N * N;
  /// The identity lane map (a static data member could not be read in device code).
  struct SameLane {
    KOKKOS_INLINE_FUNCTION int operator()(int m) const { return m; }
  };

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int first = team.league_rank() * d.ados_per_team;
    const int last = first + d.ados_per_team < d.num_ados ? first + d.ados_per_team : d.num_ados;
    typename traits::scratch_view m, r;
    if (d.has_dense_bath) {
      const int n2 = dim() * dim();
      m = typename traits::scratch_view(team.team_scratch(d.scratch_level), n2);
      r = typename traits::scratch_view(team.team_scratch(d.scratch_level), n2);
    }
    for (int a = first; a < last; ++a) {
      double* block = reinterpret_cast<double*>(out.data() + static_cast<std::int64_t>(a) * dim() * dim());
      if constexpr (traits::is_host && N > 0) {
        // One thread owns the ADO: accumulate the block in a local array (registers, for small n)
        // and store it once.
        double acc[lanes];
        if (d.hermitian_input)
          hermitian_derivative(a, acc);
        else
          derivative(team, a, acc, m, r);
        for (int q = 0; q < lanes; ++q) block[q] = acc[q];
        call_after(a);
      } else {
        derivative(team, a, block, m, r);
        if constexpr (traits::is_host) call_after(a);  // (a host team is one thread)
      }
      team.team_barrier();
    }
  }

  /// after(a, a + 1), a host function: the call is kept out of nvcc's device pass.
  KOKKOS_INLINE_FUNCTION void call_after([[maybe_unused]] int a) const {
#ifndef __CUDA_ARCH__
    after(a, a + 1);
#endif
  }

  /// d rho_a into `o` (the ADO's output block, or a local copy of it), lane by lane (the doubles of
  /// the block: lane 2e + s is the real (s = 0) or imaginary (s = 1) part of element e).
  KOKKOS_FORCEINLINE_FUNCTION void derivative(const member_type& team, int a, double* o,
                                              const typename traits::scratch_view& m,
                                              const typename traits::scratch_view& r) const {
    system_part(team, a, o);
    for (int b = 0; b < d.num_baths; ++b) {
      team.team_barrier();  // the previous phase wrote elements this one may update
      if (d.bath_diagonal(b)) {
        if constexpr (traits::is_host && N > 0) {
          // Partial active sets only: for a full block (sigma_z) the per-exponent lane loops are faster.
          if (d.active_count(b) < N * N && d.bath_begin(b + 1) - d.bath_begin(b) <= max_fused_exponents) {
            diagonal_bath_fused(a, b, o);
            continue;
          }
        }
        diagonal_bath(team, a, b, o);
      } else {
        dense_bath(team, a, b, m, r, o);
      }
    }
  }

  /// o = A rho + rho B + (S o rho) - damping rho.
  KOKKOS_FORCEINLINE_FUNCTION void system_part(const member_type& team, int a, double* o) const {
    const int n = dim(), n2 = n * n;
    const double* KOKKOS_RESTRICT rho = reinterpret_cast<const double*>(in.data() + static_cast<std::int64_t>(a) * n2);
    const double* KOKKOS_RESTRICT ai = d.a_imag.data();
    const double* KOKKOS_RESTRICT bi = d.b_imag.data();
    const double* KOKKOS_RESTRICT sp = d.sandwich_p.data();
    const double* KOKKOS_RESTRICT sq = d.sandwich_q.data();
    const double gp = include_damping ? -d.damping(a).real() : 0.0;
    const double gi = include_damping ? d.damping(a).imag() : 0.0;
    if constexpr (traits::is_host && N > 0) {
      // Host: row by row, as updates of contiguous rows that vectorize; the device path below gives
      // each thread one lane instead. swapped = i rho: (-Im, Re) per element.
      const double* KOKKOS_RESTRICT ar = d.a_real.data();
      double acc[lanes], swapped[lanes];
      for (int e = 0; e < N * N; ++e) {
        swapped[2 * e] = -rho[2 * e + 1];
        swapped[2 * e + 1] = rho[2 * e];
        acc[2 * e] = (gp + sp[2 * e]) * rho[2 * e] + (gi + sq[2 * e]) * rho[2 * e + 1];
        acc[2 * e + 1] = (gp + sp[2 * e + 1]) * rho[2 * e + 1] + (sq[2 * e + 1] - gi) * rho[2 * e];
      }
      // A rho + rho B = i (Im A rho + rho Im B) + Re A rho + rho Re B, row i += A_il (row l) +
      // (element il) (row l of B): with B's rows in lane form and element il repeated across the
      // lanes, every lane does the same two multiply-adds (no shuffles in the loop).
      const double* KOKKOS_RESTRICT bil = d.b_imag_lanes.data();
      for (int i = 0; i < N; ++i) {
        double* row = acc + 2 * N * i;
        for (int l = 0; l < N; ++l) {
          const double* sw_l = swapped + 2 * N * l;
          const double* b_l = bil + 2 * N * l;
          const double c = ai[i * N + l];
          double pair[2 * N];  // i rho_il in every lane pair
          for (int m = 0; m < 2 * N; ++m) pair[m] = swapped[2 * (N * i + l) + (m & 1)];
          for (int m = 0; m < 2 * N; ++m) row[m] += c * sw_l[m] + b_l[m] * pair[m];
        }
      }
      if (!d.a_sys_imaginary) {
        const double* KOKKOS_RESTRICT brl = d.b_real_lanes.data();
        for (int i = 0; i < N; ++i) {
          double* row = acc + 2 * N * i;
          for (int l = 0; l < N; ++l) {
            const double* rho_l = rho + 2 * N * l;
            const double* b_l = brl + 2 * N * l;
            const double c = ar[i * N + l];
            double pair[2 * N];  // rho_il in every lane pair
            for (int m = 0; m < 2 * N; ++m) pair[m] = rho[2 * (N * i + l) + (m & 1)];
            for (int m = 0; m < 2 * N; ++m) row[m] += c * rho_l[m] + b_l[m] * pair[m];
          }
        }
      }
      for (int q = 0; q < lanes; ++q) o[q] = acc[q];
    } else if (d.a_sys_imaginary) {
      // A = i Im(A), B = i Im(B) (real H, no terminator): real coefficients, then one factor i.
      team_lanes<traits, lanes, false>(team, 2 * n2, o, SameLane{}, [&](const int m) {
        const int s = m & 1, p = s ^ 1, i = (m >> 1) / n, j = (m >> 1) % n;
        double c = 0.0;
        for (int l = 0; l < n; ++l)
          c += ai[i * n + l] * rho[2 * (l * n + j) + p] + bi[l * n + j] * rho[2 * (i * n + l) + p];
        double acc = (s ? c : -c) + gp * rho[m] + (s ? -gi : gi) * rho[m ^ 1];
        if (d.has_sandwich) acc += sp[m] * rho[m] + sq[m] * rho[m ^ 1];
        return acc;
      });
    } else {
      const double* KOKKOS_RESTRICT ar = d.a_real.data();
      const double* KOKKOS_RESTRICT br = d.b_real.data();
      team_lanes<traits, lanes, false>(team, 2 * n2, o, SameLane{}, [&](const int m) {
        const int s = m & 1, p = s ^ 1, i = (m >> 1) / n, j = (m >> 1) % n;
        const double sign = s ? 1.0 : -1.0;
        double acc = (gp + sp[m]) * rho[m] + ((s ? -gi : gi) + sq[m]) * rho[m ^ 1];
        for (int l = 0; l < n; ++l) {
          const int x = 2 * (l * n + j), y = 2 * (i * n + l);
          acc += ar[i * n + l] * rho[x + s] + sign * ai[i * n + l] * rho[x + p] + br[l * n + j] * rho[y + s] +
                 sign * bi[l * n + j] * rho[y + p];
        }
        return acc;
      });
    }
  }

  static constexpr int max_fused_exponents = 8;

  /// Host, N known, a diagonal Q_b with some elements inactive (a site projector): all its
  /// exponents in one sweep over each run of active elements. The up-neighbours share the bath's cf,
  /// so their blocks are summed first and multiplied once; the accumulating run is loaded and stored
  /// once rather than once per exponent.
  KOKKOS_FORCEINLINE_FUNCTION void diagonal_bath_fused(int a, int b, double* o) const {
    constexpr int n2 = N * N;
    const double* up[max_fused_exponents];
    const double* down[max_fused_exponents];
    const double* ap[max_fused_exponents];
    const double* aq[max_fused_exponents];
    double scale[max_fused_exponents];
    int ups = 0, downs = 0;
    for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
      const int next = d.next(a, k), nk = d.labels(a, k);
      if (next >= 0) up[ups++] = reinterpret_cast<const double*>(in.data() + static_cast<std::int64_t>(next) * n2);
      if (nk > 0) {
        down[downs] = reinterpret_cast<const double*>(in.data() + static_cast<std::int64_t>(d.prev(a, k)) * n2);
        ap[downs] = &d.alpha_p(k, 0);
        aq[downs] = &d.alpha_q(k, 0);
        scale[downs++] = static_cast<double>(nk);
      }
    }
    if (ups + downs == 0) return;
    const double* KOKKOS_RESTRICT cp = &d.cf_p(b, 0);
    const double* KOKKOS_RESTRICT cq = &d.cf_q(b, 0);
    // One run of `width` lanes from lane x0 (even): sum the ups, apply cf, add the downs.
    auto sweep = [&](const int x0, const int width) {
      double su[2 * N], v[2 * N];
      for (int m = 0; m < width; ++m) su[m] = 0.0;
      for (int i = 0; i < ups; ++i)
        for (int m = 0; m < width; ++m) su[m] += up[i][x0 + m];
      for (int m = 0; m < width; ++m) v[m] = cp[x0 + m] * su[m] + cq[x0 + m] * su[m ^ 1];
      for (int i = 0; i < downs; ++i) {
        const double* KOKKOS_RESTRICT w = down[i];
        const double* KOKKOS_RESTRICT p = ap[i];
        const double* KOKKOS_RESTRICT q = aq[i];
        for (int m = 0; m < width; ++m) v[m] += scale[i] * (p[x0 + m] * w[x0 + m] + q[x0 + m] * w[x0 + (m ^ 1)]);
      }
      for (int m = 0; m < width; ++m) o[x0 + m] += v[m];
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

  /// Host, Hermitian ADOs: o = G + G^dagger with G as in GeneratorTables::preserves_hermiticity. G
  /// costs half of the general formula (A rho instead of A rho + rho B), and a site projector's
  /// neighbour terms read one contiguous row of each neighbour instead of a row and a column.
  ///
  /// The real coefficients of the Hermitian form make most of G real combinations of blocks: G =
  /// P + i M, with M and all but the dense baths' part of P sums of real numbers times rows (no
  /// swapping of real and imaginary lanes per term), and i M formed once at the end.
  KOKKOS_FORCEINLINE_FUNCTION void hermitian_derivative(int a, double* o) const {
    constexpr int n2 = N * N, width = 2 * N;
    const double* KOKKOS_RESTRICT rho = reinterpret_cast<const double*>(in.data() + static_cast<std::int64_t>(a) * n2);
    const double* KOKKOS_RESTRICT ar = d.a_real.data();
    const double* KOKKOS_RESTRICT ai = d.a_imag.data();
    const double* KOKKOS_RESTRICT sp = d.sandwich_p.data();
    const double half_damping = include_damping ? -0.5 * d.damping(a).real() : 0.0;
    double p[lanes], m[lanes];
    for (int e = 0; e < 2 * n2; ++e) {
      p[e] = (half_damping + 0.5 * sp[e]) * rho[e];
      m[e] = 0.0;
    }
    // A rho = (Re A + i Im A) rho: row i += sum_l A_il (row l of rho), lane by lane.
    for (int i = 0; i < N; ++i)
      for (int x = 0; x < width; ++x) m[width * i + x] += combine_rows<0, N>(ai + i * N, rho, x);
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
    // G = P + i M: i M is (-Im M, Re M) per element.
    for (int e = 0; e < n2; ++e) {
      p[2 * e] -= m[2 * e + 1];
      p[2 * e + 1] += m[2 * e];
    }
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) {
        const int x = 2 * (i * N + j), y = 2 * (j * N + i);
        o[x] = p[x] + p[y];
        o[x + 1] = p[x + 1] - p[y + 1];
      }
  }

  /// G += Q_b X_b for the diagonal baths coupled through one row i (a site projector), X_b = sum_k
  /// -i rho_{n+e_k} + n_k (c2_k - i c_k) rho_{n-e_k}: row i of each neighbour straight into G's, as
  /// P_i += q_i n_k c2_k rho_{n-e_k} and M_i -= q_i (rho_{n+e_k} + n_k c_k rho_{n-e_k}). One flat
  /// loop over all such exponents, each with its row and q_i from a table: looping bath by bath,
  /// with the bath's rows looked up per exponent, cost 0.4 ms of 3.1 (FMO depth 5, one thread).
  KOKKOS_FORCEINLINE_FUNCTION void hermitian_single_row_links(int a, double* KOKKOS_RESTRICT p,
                                                              double* KOKKOS_RESTRICT m) const {
    constexpr int n2 = N * N, width = 2 * N;
    const double* KOKKOS_RESTRICT all = reinterpret_cast<const double*>(in.data());
    const int exponents = d.bath_begin(d.num_baths);
    const int* KOKKOS_RESTRICT next_of = &d.next(a, 0);
    const int* KOKKOS_RESTRICT label = &d.labels(a, 0);
    const int* KOKKOS_RESTRICT prev_of = &d.prev(a, 0);
    for (int k = 0; k < exponents; ++k) {
      const int i = d.single_row(k), next = next_of[k], nk = label[k];
      if (i < 0 || (next < 0 && nk == 0)) continue;
      // Without a neighbour its factor is 0 (and its pointer ADO 0, always valid).
      const double qi = d.single_row_q(k);
      const double* KOKKOS_RESTRICT up_i = all + static_cast<std::int64_t>(next >= 0 ? next : 0) * 2 * n2 + width * i;
      const double* KOKKOS_RESTRICT down_i =
          all + static_cast<std::int64_t>(nk > 0 ? prev_of[k] : 0) * 2 * n2 + width * i;
      add_link_row(p + width * i, m + width * i, up_i, down_i, next >= 0 ? -qi : 0.0,
                   qi * nk * d.c_anticommutator(k).real(), -qi * nk * d.c_commutator(k).real());
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
    const double* KOKKOS_RESTRICT all = reinterpret_cast<const double*>(in.data());
    for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
      const int next = d.next(a, k), nk = d.labels(a, k);
      if (next < 0 && nk == 0) continue;
      // Without a neighbour its factor is 0 (and its pointer ADO 0, always valid).
      const double* KOKKOS_RESTRICT up = all + static_cast<std::int64_t>(next >= 0 ? next : 0) * 2 * n2;
      const double* KOKKOS_RESTRICT down = all + static_cast<std::int64_t>(nk > 0 ? d.prev(a, k) : 0) * 2 * n2;
      const double up_m = next >= 0 ? -1.0 : 0.0;
      const double down_p = nk * d.c_anticommutator(k).real(), down_m = -nk * d.c_commutator(k).real();
      for (int r = 0; r < d.coupled_row_count(b); ++r) {
        const int i = d.coupled_rows(b, r);
        const double qi = d.q(b, i, i).real();
        add_link_row(p + width * i, m + width * i, up + width * i, down + width * i, qi * up_m, qi * down_p,
                     qi * down_m);
      }
    }
  }

  /// G += Q_b (X_b + Delta_b rho Q_b) for a dense Q_b (X_b as above): X_b whole, then n^3.
  KOKKOS_FORCEINLINE_FUNCTION void hermitian_dense_bath(int a, int b, const double* KOKKOS_RESTRICT rho,
                                                        double* KOKKOS_RESTRICT g) const {
    constexpr int n2 = N * N, width = 2 * N;
    double x[lanes];
    for (int m = 0; m < lanes; ++m) x[m] = 0.0;
    auto add = [&](const int ado, const double cr, const double ci) {
      const double* KOKKOS_RESTRICT nb =
          reinterpret_cast<const double*>(in.data() + static_cast<std::int64_t>(ado) * n2);
      for (int i = 0; i < N; ++i) add_scaled<width>(x + width * i, cr, ci, nb + width * i);
    };
    for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
      const int next = d.next(a, k), nk = d.labels(a, k);
      if (next >= 0) add(next, 0.0, -1.0);
      if (nk > 0) add(d.prev(a, k), nk * d.c_anticommutator(k).real(), -nk * d.c_commutator(k).real());
    }
    const double delta = 0.5 * d.two_delta(b).real();
    if (delta != 0.0) {
      // X += Delta rho Q: row i += Delta rho_il (row l of Q).
      for (int l = 0; l < N; ++l) {
        double q_row[width];
        for (int j = 0; j < N; ++j) {
          q_row[2 * j] = d.q(b, l, j).real();
          q_row[2 * j + 1] = d.q(b, l, j).imag();
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
        add_scaled<width>(g + width * i, d.q(b, i, l).real(), d.q(b, i, l).imag(), x + width * l);
  }

  /// A diagonal Q_b: element-wise, over the bath's active elements only, lane by lane.
  KOKKOS_FORCEINLINE_FUNCTION void diagonal_bath(const member_type& team, int a, int b, double* o) const {
    const int n2 = dim() * dim();
    const int count = d.active_count(b);
    const double* KOKKOS_RESTRICT cp = &d.cf_p(b, 0);
    const double* KOKKOS_RESTRICT cq = &d.cf_q(b, 0);
    const int runs = d.run_count(b);
    for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
      const int up = d.next(a, k);
      const int nk = d.labels(a, k);
      if (up < 0 && nk == 0) continue;
      const double* KOKKOS_RESTRICT u =
          reinterpret_cast<const double*>(in.data() + (up >= 0 ? static_cast<std::int64_t>(up) * n2 : 0));
      const double* KOKKOS_RESTRICT w =
          reinterpret_cast<const double*>(in.data() + (nk > 0 ? static_cast<std::int64_t>(d.prev(a, k)) * n2 : 0));
      const double* KOKKOS_RESTRICT ap = &d.alpha_p(k, 0);
      const double* KOKKOS_RESTRICT aq = &d.alpha_q(k, 0);
      const double scale = static_cast<double>(nk);
      // Without a neighbour its factor is 0 (and u or w then points at ADO 0, always valid).
      const double up_on = up >= 0 ? 1.0 : 0.0;
      // All elements active (e.g. sigma_z): the whole block, a compile-time trip count. Otherwise the
      // runs of active elements (a site projector: row j, then column j).
      if (count == n2) {
        team_lanes<traits, lanes, true>(team, 2 * n2, o, SameLane{}, [&](const int m) {
          return up_on * (cp[m] * u[m] + cq[m] * u[m ^ 1]) + scale * (ap[m] * w[m] + aq[m] * w[m ^ 1]);
        });
      } else {
        for (int r = 0; r < runs; ++r) {
          const int x0 = 2 * d.run_start(b, r);
          team_lanes<traits, 2 * N, true>(team, 2 * d.run_length(b, r), o + x0, SameLane{}, [&](const int m) {
            const int x = x0 + m;
            return up_on * (cp[x] * u[x] + cq[x] * u[x ^ 1]) + scale * (ap[x] * w[x] + aq[x] * w[x ^ 1]);
          });
        }
      }
    }
  }

  /// A dense Q_b: M and R in scratch, X and Y in their place, then Q X + Y Q.
  KOKKOS_INLINE_FUNCTION void dense_bath(const member_type& team, int a, int b, const typename traits::scratch_view& m,
                                         const typename traits::scratch_view& r, double* o) const {
    const int n = dim(), n2 = n * n;
    const std::int64_t base = static_cast<std::int64_t>(a) * n2;
    team_for<traits>(team, n2, [&](const int e) {
      m(e) = device_complex(0.0);
      r(e) = device_complex(0.0);
    });
    for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
      const int up = d.next(a, k);
      const int nk = d.labels(a, k);
      if (up >= 0) {
        const std::int64_t up_base = static_cast<std::int64_t>(up) * n2;
        team_for<traits>(team, n2, [&](const int e) { m(e) += in(up_base + e); });
      }
      if (nk > 0) {
        const std::int64_t down_base = static_cast<std::int64_t>(d.prev(a, k)) * n2;
        const device_complex cm = static_cast<double>(nk) * d.c_commutator(k);
        const device_complex ca = static_cast<double>(nk) * d.c_anticommutator(k);
        team_for<traits>(team, n2, [&](const int e) {
          const device_complex x = in(down_base + e);
          m(e) += cm * x;
          r(e) += ca * x;
        });
      }
    }
    const device_complex td = d.two_delta(b);
    team_for<traits>(team, n2, [&](const int e) {
      device_complex xe = r(e) - times_i(m(e));
      if (td != device_complex(0.0)) {
        const int l = e / n, j = e % n;
        device_complex rho_q(0.0);
        for (int s = 0; s < n; ++s) rho_q += in(base + l * n + s) * d.q(b, s, j);
        xe += td * rho_q;
      }
      const device_complex ye = r(e) + times_i(m(e));
      m(e) = xe;
      r(e) = ye;
    });
    team.team_barrier();
    team_for<traits>(team, n2, [&](const int e) {
      const int i = e / n, j = e % n;
      device_complex acc(0.0);
      for (int l = 0; l < n; ++l) acc += d.q(b, i, l) * m(l * n + j) + r(i * n + l) * d.q(b, l, j);
      o[2 * e] += acc.real();
      o[2 * e + 1] += acc.imag();
    });
  }
};

#if HEOM_HAS_DOUBLE8
/// Host, n = 2: a 2x2 block is 8 doubles, one double8 (an AVX-512 register), and each ADO's
/// derivative is accumulated in two of them and stored once. (The team kernel's per-exponent
/// updates of the block in memory each waited on the previous one's store: 5.9x as long on the
/// spin-boson.)
///
/// A complex c times x is, in lanes, P x + Q swap(x) with Q = (-Im c, Im c) per pair (GeneratorTables).
/// As swap(Q) = -Q, the sum over terms of Q_t swap(x_t) is -swap(sum_t Q_t x_t): every term adds to
/// `direct` (P x) and `crossed` (Q x) without a shuffle, and one swap at the end joins them. The
/// system part (A rho + rho B and the terminators) and a dense bath's commutator and anticommutator
/// with Q_b are general maps of the block, in GeneratorTables' shifted form: three shuffles.
///
/// Absent neighbours are skipped with branches: the hierarchy's order makes them well predicted, and
/// branch-free forms (ADO 0's block times zero) measured 20% slower.
///
/// OneBathExponents > 0: the model has one bath with that many exponents, known at compile time, so
/// that the loops over them unroll and their coefficients stay in registers (1.4x on the
/// spin-boson); 0: any baths.
template <class ExecSpace, int OneBathExponents, class After>
struct TwoLevelKernel {
  /// The generator's own tables (host memory): a pointer, so that a launch copies no View and
  /// counts no references.
  const GeneratorData<ExecSpace>* data;
  const double* in;
  double* out;
  bool include_damping = true;
  After after;  // after(first, last) once the chunk's blocks are written
  /// Consecutive ADOs per call: the tables' pointers are set up once for all of them.
  static constexpr int ados_per_chunk = 64;

  static int chunks(int num_ados) { return (num_ados + ados_per_chunk - 1) / ados_per_chunk; }

  /// direct += sum_s P_s shift_s(x), crossed += sum_s Q_s shift_s(x) for a map in shifted form
  /// (GeneratorTables): three shuffles and eight multiply-adds.
  /// With imaginary = true the map's P parts are known to be zero (a purely imaginary map), and skipped.
  [[gnu::always_inline]] static void add_shifted(const double* KOKKOS_RESTRICT map, const double8& x, double8& direct,
                                                 double8& crossed, bool imaginary = false) {
    const double8 columns_swapped = shuffle8<2, 3, 0, 1, 6, 7, 4, 5>(x);
    const double8 rows_swapped = shuffle8<4, 5, 6, 7, 0, 1, 2, 3>(x);
    const double8 both_swapped = shuffle8<6, 7, 4, 5, 2, 3, 0, 1>(x);
    if (!imaginary)
      direct += (load8(map) * x + load8(map + 8) * columns_swapped) +
                (load8(map + 16) * rows_swapped + load8(map + 24) * both_swapped);
    crossed += (load8(map + 32) * x + load8(map + 40) * columns_swapped) +
               (load8(map + 48) * rows_swapped + load8(map + 56) * both_swapped);
  }

  void operator()(const int chunk) const {
    const GeneratorData<ExecSpace>& d = *data;
    // Everything the loop reads, in locals: the compiler need not reload it after each store.
    const double* KOKKOS_RESTRICT const rho_all = in;
    double* KOKKOS_RESTRICT const out_all = out;
    const double* KOKKOS_RESTRICT const system = d.shifted_system.data();
    const double* KOKKOS_RESTRICT const alpha_p = d.alpha_p.data();  // [K][8]
    const double* KOKKOS_RESTRICT const alpha_q = d.alpha_q.data();
    const double* KOKKOS_RESTRICT const cf_p = d.cf_p.data();  // [bath][8]
    const double* KOKKOS_RESTRICT const cf_q = d.cf_q.data();
    const device_complex* KOKKOS_RESTRICT const damping = d.damping.data();
    const int* KOKKOS_RESTRICT const bath_begin = d.bath_begin.data();
    const int* KOKKOS_RESTRICT const bath_diagonal = d.bath_diagonal.data();
    // The neighbour tables and the one bath's form, read once here: GCC reloaded them for every ADO
    // (the stores might alias them), and these loads and testing a down-neighbour's index rather
    // than its n_k (below) took the spin-boson from 0.070 to 0.065 ms on one thread; neither alone did.
    const int* KOKKOS_RESTRICT const next_all = d.next.data();  // [ado][K]
    const int* KOKKOS_RESTRICT const prev_all = d.prev.data();
    const int* KOKKOS_RESTRICT const label_all = d.labels.data();
    const bool one_bath_diagonal = OneBathExponents > 0 && bath_diagonal[0] != 0;
    const int baths = OneBathExponents > 0 ? 1 : d.num_baths;
    const int K = OneBathExponents > 0 ? OneBathExponents : bath_begin[baths];
    const bool with_damping = include_damping, system_imaginary = d.a_sys_imaginary, real_damping = d.real_damping;
    const int first = chunk * ados_per_chunk;
    const int last = first + ados_per_chunk < d.num_ados ? first + ados_per_chunk : d.num_ados;
    for (int a = first; a < last; ++a) {
      const double* rho = rho_all + 8 * static_cast<std::int64_t>(a);
      const int* KOKKOS_RESTRICT next = next_all + static_cast<std::int64_t>(a) * K;
      const int* KOKKOS_RESTRICT prev = prev_all + static_cast<std::int64_t>(a) * K;
      const int* KOKKOS_RESTRICT label = label_all + static_cast<std::int64_t>(a) * K;
      const double8 x = load8(rho);
      double8 direct = {}, crossed = {};
      // A real H without terminators makes the system part -i [H, rho]: no P part.
      add_shifted(system, x, direct, crossed, system_imaginary);
      if (with_damping) {
        // -damping x: P = -Re, Q = Im (1, -1).
        direct -= splat8(damping[a].real()) * x;
        if (!real_damping) crossed += splat8(damping[a].imag()) * (double8{1, -1, 1, -1, 1, -1, 1, -1} * x);
      }
      // An ADO at the full depth has no up-neighbour, any other has all of them (Hierarchy).
      const bool has_ups = K > 0 && next[0] >= 0;
      for (int b = 0; b < baths; ++b) {
        const std::ptrdiff_t k_begin = OneBathExponents > 0 ? 0 : bath_begin[b];
        const std::ptrdiff_t k_end = OneBathExponents > 0 ? OneBathExponents : bath_begin[b + 1];
        // ups: the up-neighbours' sum (they share the bath's coefficient); down: n_k rho_{n-e_k}.
        double8 ups = {};
        if (has_ups)
          for (std::ptrdiff_t k = k_begin; k < k_end; ++k)
            ups += load8(rho_all + 8 * static_cast<std::int64_t>(next[k]));
        if (OneBathExponents > 0 ? one_bath_diagonal : bath_diagonal[b] != 0) {
          for (std::ptrdiff_t k = k_begin; k < k_end; ++k) {
            if (prev[k] < 0) continue;  // n_k = 0; n_k is then read only for the links present
            const double8 down = splat8(label[k]) * load8(rho_all + 8 * static_cast<std::int64_t>(prev[k]));
            direct += load8(alpha_p + 8 * k) * down;
            crossed += load8(alpha_q + 8 * k) * down;
          }
          direct += load8(cf_p + 8 * b) * ups;
          crossed += load8(cf_q + 8 * b) * ups;
          continue;
        }
        // Dense Q_b: M_b = ups + sum_k c_k down_k and R_b = sum_k c2_k down_k, each as a real part and
        // an imaginary part (times i once, at the end), then the commutator and anticommutator.
        double8 m_re = ups, m_im = {}, r_re = {}, r_im = {};
        for (std::ptrdiff_t k = k_begin; k < k_end; ++k) {
          if (label[k] == 0) continue;
          const double8 down = splat8(label[k]) * load8(rho_all + 8 * static_cast<std::int64_t>(prev[k]));
          const device_complex c = d.c_commutator(k), c2 = d.c_anticommutator(k);
          m_re += splat8(c.real()) * down;
          m_im += splat8(c.imag()) * down;
          r_re += splat8(c2.real()) * down;
          r_im += splat8(c2.imag()) * down;
        }
        add_shifted(&d.shifted_commutator(b, 0), m_re + times_i8(m_im), direct, crossed);
        add_shifted(&d.shifted_anticommutator(b, 0), r_re + times_i8(r_im), direct, crossed);
      }
      store8(out_all + 8 * static_cast<std::int64_t>(a), direct - swap_pairs(crossed));
    }
    after(first, last);
  }
};

/// The two-level kernel over all ADOs; one bath of up to 8 exponents (the spin-boson's usual form)
/// gets its count at compile time.
template <class ExecSpace, class After>
void launch_two_level(const ExecSpace& exec, const GeneratorData<ExecSpace>& data, const double* in, double* out,
                      bool include_damping, const After& after) {
  auto run = [&](auto kernel) {
    kernel.data = &data;
    kernel.in = in;
    kernel.out = out;
    kernel.include_damping = include_damping;
    kernel.after = after;
    Kokkos::parallel_for("heom::generator::apply",
                         Kokkos::RangePolicy<ExecSpace>(exec, 0, kernel.chunks(data.num_ados)), kernel);
  };
  switch (data.num_baths == 1 ? data.bath_begin(1) : 0) {  // one bath's exponent count (host View)
    case 1:
      return run(TwoLevelKernel<ExecSpace, 1, After>{});
    case 2:
      return run(TwoLevelKernel<ExecSpace, 2, After>{});
    case 3:
      return run(TwoLevelKernel<ExecSpace, 3, After>{});
    case 4:
      return run(TwoLevelKernel<ExecSpace, 4, After>{});
    case 5:
      return run(TwoLevelKernel<ExecSpace, 5, After>{});
    case 6:
      return run(TwoLevelKernel<ExecSpace, 6, After>{});
    case 7:
      return run(TwoLevelKernel<ExecSpace, 7, After>{});
    case 8:
      return run(TwoLevelKernel<ExecSpace, 8, After>{});
    default:
      return run(TwoLevelKernel<ExecSpace, 0, After>{});
  }
}
#endif

}  // namespace impl

/// The HEOM generator (DESIGN.md section 1) for a model truncated at a hierarchy depth, applied
/// matrix-free. ADO vectors are flat Views of num_ados() * n * n complex numbers, ADO-major, each
/// ADO's n x n block row-major, ADOs in heom::Hierarchy's order.
template <class ExecSpace>
class Generator {
 public:
  using execution_space = ExecSpace;
  using traits = BackendTraits<ExecSpace>;
  using vector_type = typename traits::template view<device_complex*>;
  using const_vector_type = typename traits::template view<const device_complex*>;

  /// Copies the model's operators and the hierarchy's tables to the device of `exec`.
  Generator(const ExecSpace& exec, const Model& model, const Hierarchy& hierarchy);

  /// Whether apply() includes each ADO's damping term -damping_a rho_a (Damping::excluded: the rest
  /// of the generator, for integrators that treat that diagonal part exactly).
  enum class Damping { included, excluded };

  /// out = L(in). `in` and `out` must not alias.
  void apply(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
             Damping damping = Damping::included) const;

  /// apply(), calling after(first, last) on the host thread that computed ADOs [first, last) as soon
  /// as their blocks of `out` are written, for work on those ADOs while they are in its cache (an
  /// integrator's update: its streams then overlap the generator's arithmetic). The ranges split
  /// [0, num_ados()) in a way that depends on the model alone, not on the number of threads. Host
  /// backends only.
  template <class After>
  void apply_then(const ExecSpace& exec, const const_vector_type& in, const vector_type& out, Damping damping,
                  const After& after) const;

  /// Whether L maps Hermitian ADOs to Hermitian ADOs (real rates and bath coefficients, Hermitian H
  /// and Q): then a Hermitian rho keeps every ADO Hermitian for all time.
  bool preserves_hermiticity() const { return m_preserves_hermiticity; }
  /// Promise (true) that every ADO block of apply()'s input is Hermitian, as it stays when the model
  /// preserves Hermiticity and rho(0) is Hermitian. On the host apply() then computes half of each
  /// block and mirrors it (1.7x faster on FMO); the result is L(in) only for such input. On devices,
  /// and for n = 2 or n > 8, it changes nothing. Throws if the model does not preserve Hermiticity.
  void assume_hermitian_input(bool hermitian);
  bool assumes_hermitian_input() const { return m_data.hermitian_input; }

  int dimension() const { return m_data.n; }
  int num_ados() const { return m_data.num_ados; }
  /// Elements of a full ADO vector.
  std::int64_t vector_size() const { return static_cast<std::int64_t>(m_data.num_ados) * m_data.n2; }
  /// sum_k n_k v_k of each ADO (host): L(rho)_a contains -damping()[a] rho_a.
  const std::vector<complex>& damping() const { return m_damping; }

 private:
  /// Teams of ados_per_team consecutive ADOs (BackendTraits), with the dense baths' scratch.
  typename traits::team_policy policy(const ExecSpace& exec) const;
  /// Throws unless in and out are distinct vectors of vector_size() elements.
  void check_vectors(const const_vector_type& in, const vector_type& out) const;
  /// The kernel for this dimension (compile-time for 2..8).
  template <class After>
  void dispatch(const ExecSpace& exec, const const_vector_type& in, const vector_type& out, Damping damping,
                const After& after) const;
  template <int N, class After>
  void launch(const ExecSpace& exec, const const_vector_type& in, const vector_type& out, Damping damping,
              const After& after) const;

  impl::GeneratorData<ExecSpace> m_data;
  bool m_preserves_hermiticity = false;
  std::vector<complex> m_damping;
  int m_team_size = 1;
};

// ---------------------------------------------------------------------------------------------

namespace impl {

/// A device View copied from host data of the same extents.
template <class View, class HostData>
View to_device(const std::string& label, const HostData& data, std::size_t rows, std::size_t cols = 0,
               std::size_t depth = 0) {
  using non_const = typename View::non_const_type;
  const auto alloc = Kokkos::view_alloc(Kokkos::WithoutInitializing, label);
  non_const v;
  if constexpr (non_const::rank == 1)
    v = non_const(alloc, rows);
  else if constexpr (non_const::rank == 2)
    v = non_const(alloc, rows, cols);
  else
    v = non_const(alloc, rows, cols, depth);
  auto h = Kokkos::create_mirror_view(v);
  using value = typename non_const::value_type;
  value* dst = h.data();
  for (std::size_t i = 0; i < h.size(); ++i) {
    if constexpr (std::is_same<value, device_complex>::value)
      dst[i] = device_complex(data[i].real(), data[i].imag());
    else
      dst[i] = static_cast<value>(data[i]);
  }
  Kokkos::deep_copy(v, h);
  return v;
}

}  // namespace impl

template <class ExecSpace>
Generator<ExecSpace>::Generator(const ExecSpace& exec, const Model& model, const Hierarchy& hierarchy) {
  Kokkos::Profiling::pushRegion("heom::Generator::setup");
  using impl::to_device;
  const impl::GeneratorTables t = impl::make_generator_tables(model, hierarchy);
  auto& d = m_data;
  const std::size_t n = t.n, n2 = n * n, baths = t.num_baths, K = t.num_exponents, ados = t.num_ados;
  const std::size_t columns = K > 0 ? K : 1;  // keep the tables non-empty
  d.n = t.n;
  d.n2 = t.n * t.n;
  d.num_ados = t.num_ados;
  d.num_baths = t.num_baths;
  d.a_sys_imaginary = t.a_sys_imaginary;
  d.has_sandwich = t.has_sandwich;
  for (int b : t.bath_diagonal) d.has_dense_bath = d.has_dense_bath || b == 0;

  std::vector<double> a_real(n2), a_imag(n2), b_real(n2), b_imag(n2);
  for (std::size_t e = 0; e < n2; ++e) {
    a_real[e] = t.a_sys[e].real();
    a_imag[e] = t.a_sys[e].imag();
    b_real[e] = t.b_sys[e].real();
    b_imag[e] = t.b_sys[e].imag();
  }
  using doubles2 = typename traits::template view<const double**>;
  using doubles1 = typename traits::template view<const double*>;
  d.a_real = to_device<doubles2>("heom::generator::a_real", a_real, n, n);
  d.a_imag = to_device<doubles2>("heom::generator::a_imag", a_imag, n, n);
  d.b_real = to_device<doubles2>("heom::generator::b_real", b_real, n, n);
  d.b_imag = to_device<doubles2>("heom::generator::b_imag", b_imag, n, n);
  std::vector<double> b_real_lanes(2 * n2), b_imag_lanes(2 * n2);
  for (std::size_t e = 0; e < 2 * n2; ++e) {
    b_real_lanes[e] = b_real[e / 2];
    b_imag_lanes[e] = b_imag[e / 2];
  }
  d.b_real_lanes = to_device<doubles2>("heom::generator::b_real_lanes", b_real_lanes, n, 2 * n);
  d.b_imag_lanes = to_device<doubles2>("heom::generator::b_imag_lanes", b_imag_lanes, n, 2 * n);
  d.sandwich_p = to_device<doubles1>("heom::generator::sandwich_p", t.sandwich_p, 2 * n2);
  d.sandwich_q = to_device<doubles1>("heom::generator::sandwich_q", t.sandwich_q, 2 * n2);
  d.bath_begin =
      to_device<typename traits::template view<const int*>>("heom::generator::bath_begin", t.bath_begin, baths + 1);
  d.bath_diagonal =
      to_device<typename traits::template view<const int*>>("heom::generator::bath_diagonal", t.bath_diagonal, baths);
  d.active_count =
      to_device<typename traits::template view<const int*>>("heom::generator::active_count", t.active_count, baths);
  d.run_count = to_device<typename traits::template view<const int*>>("heom::generator::run_count", t.run_count, baths);
  d.run_start =
      to_device<typename traits::template view<const int**>>("heom::generator::run_start", t.run_start, baths, n2);
  d.run_length =
      to_device<typename traits::template view<const int**>>("heom::generator::run_length", t.run_length, baths, n2);
  d.cf_p = to_device<doubles2>("heom::generator::cf_p", t.cf_p, baths, 2 * n2);
  d.cf_q = to_device<doubles2>("heom::generator::cf_q", t.cf_q, baths, 2 * n2);
  std::vector<double> alpha_p = t.alpha_p, alpha_q = t.alpha_q;
  alpha_p.resize(columns * 2 * n2, 0.0);  // keep the table non-empty without exponents
  alpha_q.resize(columns * 2 * n2, 0.0);
  d.alpha_p = to_device<doubles2>("heom::generator::alpha_p", alpha_p, columns, 2 * n2);
  d.alpha_q = to_device<doubles2>("heom::generator::alpha_q", alpha_q, columns, 2 * n2);
  d.q = to_device<typename traits::template view<const device_complex***>>("heom::generator::q", t.q, baths, n, n);
  d.two_delta = to_device<typename traits::template view<const device_complex*>>("heom::generator::two_delta",
                                                                                 t.two_delta, baths);
  std::vector<complex> cc = t.c_commutator, ca = t.c_anticommutator;
  cc.resize(columns, 0.0);
  ca.resize(columns, 0.0);
  d.c_commutator =
      to_device<typename traits::template view<const device_complex*>>("heom::generator::c_commutator", cc, columns);
  d.c_anticommutator = to_device<typename traits::template view<const device_complex*>>(
      "heom::generator::c_anticommutator", ca, columns);
  d.damping =
      to_device<typename traits::template view<const device_complex*>>("heom::generator::damping", t.damping, ados);
  m_damping = t.damping;
  d.real_damping = std::all_of(t.damping.begin(), t.damping.end(), [](const complex& g) { return g.imag() == 0.0; });

  // Neighbour tables straight from the hierarchy (a column of -1 / 0 when there is no exponent).
  const std::vector<int> none(ados, 0), absent(ados, -1);
  d.labels = to_device<typename traits::template view<const int**>>(
      "heom::generator::labels", K > 0 ? hierarchy.labels_table() : none, ados, columns);
  d.next = to_device<typename traits::template view<const int**>>(
      "heom::generator::next", K > 0 ? hierarchy.next_table() : absent, ados, columns);
  d.prev = to_device<typename traits::template view<const int**>>(
      "heom::generator::prev", K > 0 ? hierarchy.prev_table() : absent, ados, columns);

  d.coupled_row_count = to_device<typename traits::template view<const int*>>("heom::generator::coupled_row_count",
                                                                              t.coupled_row_count, baths);
  d.coupled_rows =
      to_device<typename traits::template view<const int**>>("heom::generator::coupled_rows", t.coupled_rows, baths, n);
  d.rank_one = to_device<typename traits::template view<const int*>>("heom::generator::rank_one", t.rank_one, baths);
  d.rank_one_c = to_device<typename traits::template view<const device_complex**>>("heom::generator::rank_one_c",
                                                                                   t.rank_one_c, baths, n);
  d.rank_one_s =
      to_device<typename traits::template view<const double*>>("heom::generator::rank_one_s", t.rank_one_s, baths);
  d.single_row = to_device<typename traits::template view<const int*>>("heom::generator::single_row",
                                                                       K > 0 ? t.single_row : absent, columns);
  d.single_row_q = to_device<doubles1>("heom::generator::single_row_q",
                                       K > 0 ? t.single_row_q : std::vector<double>(1, 0.0), columns);
  if (n == 2) {
    d.shifted_system = to_device<doubles1>("heom::generator::shifted_system", t.shifted_system, 64);
    d.shifted_commutator = to_device<doubles2>("heom::generator::shifted_commutator", t.shifted_commutator, baths, 64);
    d.shifted_anticommutator =
        to_device<doubles2>("heom::generator::shifted_anticommutator", t.shifted_anticommutator, baths, 64);
  }
  m_preserves_hermiticity = t.preserves_hermiticity;

  m_team_size = traits::team_size(d.n2);
  d.ados_per_team = traits::ados_per_team(d.n2);
  d.scratch_level = traits::scratch_level(d.scratch_bytes());
  exec.fence();
  Kokkos::Profiling::popRegion();
}

template <class ExecSpace>
void Generator<ExecSpace>::assume_hermitian_input(bool hermitian) {
  if (hermitian && !m_preserves_hermiticity)
    throw Error("Generator: this model does not keep ADOs Hermitian (complex rates or coefficients)");
  // Only the host kernel with a compile-time dimension has the Hermitian form; the general one is
  // exact for Hermitian input too. At n = 2 the host has the two-level kernel instead: a block is one
  // AVX-512 register there, and mirroring would cost more than the half it saves.
  m_data.hermitian_input = hermitian && traits::is_host && m_data.n >= 3 && m_data.n <= 8;
}

template <class ExecSpace>
typename Generator<ExecSpace>::traits::team_policy Generator<ExecSpace>::policy(const ExecSpace& exec) const {
  const int league = (m_data.num_ados + m_data.ados_per_team - 1) / m_data.ados_per_team;
  typename traits::team_policy p(exec, league, m_team_size);
  if (m_data.scratch_bytes() > 0) p.set_scratch_size(m_data.scratch_level, Kokkos::PerTeam(m_data.scratch_bytes()));
  return p;
}

template <class ExecSpace>
template <int N, class After>
void Generator<ExecSpace>::launch(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                  Damping damping, const After& after) const {
#if HEOM_HAS_DOUBLE8
  if constexpr (traits::is_host && N == 2) {
    impl::launch_two_level(exec, m_data, reinterpret_cast<const double*>(in.data()),
                           reinterpret_cast<double*>(out.data()), damping == Damping::included, after);
    return;
  }
#endif
  impl::GeneratorKernel<ExecSpace, N, After> kernel{m_data, in, out, damping == Damping::included, after};
  Kokkos::parallel_for("heom::generator::apply", policy(exec), kernel);
}

template <class ExecSpace>
void Generator<ExecSpace>::check_vectors(const const_vector_type& in, const vector_type& out) const {
  if (in.extent(0) != static_cast<std::size_t>(vector_size()) ||
      out.extent(0) != static_cast<std::size_t>(vector_size()))
    throw Error("Generator::apply: vectors have " + std::to_string(in.extent(0)) + " and " +
                std::to_string(out.extent(0)) + " elements, expected " + std::to_string(vector_size()));
  if (in.data() == out.data()) throw Error("Generator::apply: in and out must be different vectors");
}

template <class ExecSpace>
void Generator<ExecSpace>::apply(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                 Damping damping) const {
  check_vectors(in, out);
  dispatch(exec, in, out, damping, impl::NoAfter{});
}

template <class ExecSpace>
template <class After>
void Generator<ExecSpace>::apply_then(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                      Damping damping, const After& after) const {
  static_assert(traits::is_host, "Generator::apply_then runs `after` on host threads");
  check_vectors(in, out);
  dispatch(exec, in, out, damping, after);
}

template <class ExecSpace>
template <class After>
void Generator<ExecSpace>::dispatch(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                    Damping damping, const After& after) const {
  // Small systems get their dimension at compile time: unrolled loops the compiler vectorizes.
  switch (m_data.n) {
    case 2:
      launch<2>(exec, in, out, damping, after);
      break;
    case 3:
      launch<3>(exec, in, out, damping, after);
      break;
    case 4:
      launch<4>(exec, in, out, damping, after);
      break;
    case 5:
      launch<5>(exec, in, out, damping, after);
      break;
    case 6:
      launch<6>(exec, in, out, damping, after);
      break;
    case 7:
      launch<7>(exec, in, out, damping, after);
      break;
    case 8:
      launch<8>(exec, in, out, damping, after);
      break;
    default:
      launch<0>(exec, in, out, damping, after);
      break;
  }
}

#define HEOM_EXTERN_GENERATOR(E) extern template class Generator<E>;
HEOM_FOR_EACH_BACKEND(HEOM_EXTERN_GENERATOR)
#undef HEOM_EXTERN_GENERATOR

}  // namespace heom

#endif
