// heom::impl::PortableHermitianKernel: the Hermitian form of the generator on any backend, a team of
// threads per ADO (what GPUs run for Hermitian ADOs; on CPUs, a reference for the host kernel).
#ifndef HEOM_GENERATOR_DETAIL_PORTABLE_HERMITIAN_KERNEL_HPP
#define HEOM_GENERATOR_DETAIL_PORTABLE_HERMITIAN_KERNEL_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "heom/core/backend_traits.hpp"
#include "heom/generator/detail/generator_data.hpp"
#include "heom/generator/detail/kernel_common.hpp"

namespace heom::impl {

/// HostHermitianKernel's form (L(rho) = G + G^dagger, G = P + i M) for Hermitian ADOs, one team
/// per run of ados_per_team consecutive ADOs, the team's threads splitting each ADO's lanes, with P,
/// M and a dense bath's X in the team's scratch. A diagonal bath's neighbours are read in their
/// coupled rows alone (so that a split hierarchy exchanges only those rows, HaloRows), a dense bath's
/// whole. N is the dimension when known at compile time (2..8), 0 otherwise. After (host backends):
/// called as after(a, a + 1) by one thread once ADO a's block is written (Generator::apply_then).
template <class ExecSpace, int N, class After = NoAfter>
struct PortableHermitianKernel {
  using traits = BackendTraits<ExecSpace>;
  using member_type = typename traits::member_type;
  using scratch_lanes =
      Kokkos::View<double*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  GeneratorData<ExecSpace> d;
  typename traits::template view<const device_complex*> in;
  typename traits::template view<device_complex*> out;
  int ados_per_team = 1;
  bool include_damping = true;  // false: leave out -damping_a rho_a (exponential integrators)
  After after = {};
  UnitList<ExecSpace> teams = {};  // which teams of ados_per_team ADOs this launch computes

  KOKKOS_INLINE_FUNCTION int dim() const { return N > 0 ? N : d.n; }
  int level = 0;  // the scratch's level: BackendTraits::scratch_level(scratch_bytes())

  /// The team's scratch: P, M and X, 2 n^2 doubles each.
  std::size_t scratch_bytes() const { return 3 * 2 * sizeof(double) * static_cast<std::size_t>(d.n2); }

  typename traits::team_policy policy(const ExecSpace& exec, int team_size) const {
    return team_launch(exec, d.num_ados, ados_per_team, teams, team_size, scratch_bytes(), level);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    int first = 0, last = 0;
    team_ados(team, teams, d.num_ados, ados_per_team, first, last);
    const int lanes = 2 * dim() * dim();
    scratch_lanes scratch(team.team_scratch(level), 3 * lanes);
    double* p = scratch.data();
    double* m = p + lanes;
    double* x = m + lanes;
    for (int a = first; a < last; ++a) {
      if (d.skips(a)) continue;  // (the same for every thread of the team)
      system_part(team, a, p, m);
      team.team_barrier();  // (the link rows below are split over the threads differently)
      single_row_links(team, a, p, m);
      for (int b = 0; b < d.num_baths; ++b)
        if (d.bath_diagonal(b) && d.coupled_row_count(b) != 1) diagonal_rows(team, a, b, p, m);
      team.team_barrier();
      for (int b = 0; b < d.num_baths; ++b)
        if (!d.bath_diagonal(b)) dense_bath(team, a, b, p, x);
      if (d.num_rank_one_jumps > 0) {
        // Half of each jump in G (G + G^dagger the whole); the lanes as dense_bath splits them.
        add_rank_one_jumps(team, d, in.data() + static_cast<std::int64_t>(a) * dim() * dim(), dim(), 0.5, p);
        team.team_barrier();  // mirror() reads P across lanes
      }
      mirror(team, a, p, m);
      if constexpr (!std::is_same<After, NoAfter>::value) {
        team.team_barrier();  // every lane of the block is written before the hook reads it
        Kokkos::single(Kokkos::PerTeam(team), [&]() { call_after(after, a); });
      }
      team.team_barrier();  // the next ADO overwrites P and M, which mirror() read across lanes
    }
  }

  /// P = (-damping_a / 2 + S / 2) o rho + Re(A) rho, M = Im(A) rho: row i of each, lane c, sums
  /// A_il (row l of rho) in lane c.
  KOKKOS_INLINE_FUNCTION void system_part(const member_type& team, int a, double* p, double* m) const {
    const int n = dim(), n2 = n * n, width = 2 * n;
    const double* KOKKOS_RESTRICT rho = block_lanes(in.data(), a, n2);
    const std::int64_t system = static_cast<std::int64_t>(d.member_of(a)) * n2;  // this member's A
    const double* KOKKOS_RESTRICT ar = d.a_real.data() + system;
    const double* KOKKOS_RESTRICT ai = d.a_imag.data() + system;
    const double* KOKKOS_RESTRICT sp = d.sandwich_p.data();
    const double half_damping = include_damping ? -0.5 * d.damping(a).real() : 0.0;
    const bool real_part = !d.a_sys_imaginary;
    team_for(team, 2 * n2, [&](const int lane) {
      const int i = lane / width, c = lane % width;
      double pl = (half_damping + 0.5 * sp[lane]) * rho[lane], ml = 0.0;
      for (int l = 0; l < n; ++l) ml += ai[i * n + l] * rho[width * l + c];
      if (real_part)
        for (int l = 0; l < n; ++l) pl += ar[i * n + l] * rho[width * l + c];
      p[lane] = pl;
      m[lane] = ml;
    });
  }

  /// One exponent's terms in row i: P_i += cp down_i, M_i += cu up_i + cm down_i (lanes of the row).
  KOKKOS_INLINE_FUNCTION void add_link_row(const member_type& team, int i, double* p, double* m, const double* up,
                                           const double* down, double cu, double cp, double cm) const {
    const int width = 2 * dim();
    team_for(team, width, [&](const int c) {
      const int lane = width * i + c;
      p[lane] += cp * down[lane];
      m[lane] += cu * up[lane] + cm * down[lane];
    });
  }

  /// The diagonal baths coupled through one row i (a site projector), exponent by exponent: X_b's row
  /// i is -i rho_{n+e_k} + n_k (c2_k - i c_k) rho_{n-e_k}, times q_i.
  KOKKOS_INLINE_FUNCTION void single_row_links(const member_type& team, int a, double* p, double* m) const {
    const int n2 = dim() * dim();
    for (int k = 0; k < d.bath_begin(d.num_baths); ++k) {
      const int i = d.single_row(k);
      if (i < 0) continue;
      const Links l = links(d, a, k);
      if (l.none()) continue;
      const double qi = d.single_row_q(k);
      add_link_row(team, i, p, m, neighbour_lanes(in.data(), l.up, n2), neighbour_lanes(in.data(), l.down, n2),
                   l.up >= 0 ? -qi : 0.0, qi * l.nk * d.c_anticommutator(k).real(),
                   -qi * l.nk * d.c_commutator(k).real());
    }
  }

  /// A diagonal bath coupled through several rows (sigma_z): the same, in each row i with q_i != 0.
  KOKKOS_INLINE_FUNCTION void diagonal_rows(const member_type& team, int a, int b, double* p, double* m) const {
    const int n2 = dim() * dim();
    for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
      const Links l = links(d, a, k);
      if (l.none()) continue;
      const double* up = neighbour_lanes(in.data(), l.up, n2);
      const double* down = neighbour_lanes(in.data(), l.down, n2);
      const double up_m = l.up >= 0 ? -1.0 : 0.0;
      const double down_p = l.nk * d.c_anticommutator(k).real(), down_m = -l.nk * d.c_commutator(k).real();
      for (int r = 0; r < d.coupled_row_count(b); ++r) {
        const int i = d.coupled_rows(b, r);
        const double qi = d.coupling(b, i, i).real();
        add_link_row(team, i, p, m, up, down, qi * up_m, qi * down_p, qi * down_m);
      }
    }
  }

  /// G += Q_b (X_b + Delta_b rho R_b) for a dense Q_b (R_b = Q_b but for a Lindblad jump): X whole in scratch, then P
  /// += Q X (the complex part of G the dense baths add goes into P's lanes, as in HostHermitianKernel).
  KOKKOS_INLINE_FUNCTION void dense_bath(const member_type& team, int a, int b, double* p, double* x) const {
    const int n = dim(), n2 = n * n, width = 2 * n;
    const double* KOKKOS_RESTRICT rho = block_lanes(in.data(), a, n2);
    const double delta = 0.5 * d.two_delta(b).real();
    // X's lane: the sum over exponents of (cr + i ci) times a neighbour's element, in lane form
    // Re(c) x[lane] + (lane odd ? Im c : -Im c) x[lane ^ 1]; then Delta (rho Q) in that lane.
    team_for(team, 2 * n2, [&](const int lane) {
      const double sign = (lane & 1) ? 1.0 : -1.0;
      double v = 0.0;
      for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
        const Links l = links(d, a, k);
        if (l.up >= 0) {
          const double* up = block_lanes(in.data(), l.up, n2);
          v -= sign * up[lane ^ 1];
        }
        if (l.nk > 0) {
          const double* down = block_lanes(in.data(), l.down, n2);
          const double cr = l.nk * d.c_anticommutator(k).real(), ci = -l.nk * d.c_commutator(k).real();
          v += cr * down[lane] + sign * ci * down[lane ^ 1];
        }
      }
      if (delta != 0.0) {
        const int i = lane / width, j = (lane % width) / 2;
        device_complex rq(0.0);
        for (int l = 0; l < n; ++l)
          rq += device_complex(rho[width * i + 2 * l], rho[width * i + 2 * l + 1]) * d.right(b, l, j);
        v += delta * ((lane & 1) ? rq.imag() : rq.real());
      }
      x[lane] = v;
    });
    team.team_barrier();
    team_for(team, 2 * n2, [&](const int lane) {
      const int i = lane / width, j = (lane % width) / 2;
      device_complex qx(0.0);
      for (int l = 0; l < n; ++l)
        qx += d.coupling(b, i, l) * device_complex(x[width * l + 2 * j], x[width * l + 2 * j + 1]);
      p[lane] += (lane & 1) ? qx.imag() : qx.real();
    });
    team.team_barrier();  // the next dense bath overwrites X
  }

  /// out = G + G^dagger with G = P + i M: element (i, j) of G is (P - Im M, P + Re M) per lane pair.
  KOKKOS_INLINE_FUNCTION void mirror(const member_type& team, int a, const double* p, const double* m) const {
    const int n = dim(), n2 = n * n;
    double* o = block_lanes(out.data(), a, n2);
    team_for(team, 2 * n2, [&](const int lane) {
      const int e = lane / 2, i = e / n, j = e % n;
      const int x = 2 * e, y = 2 * (j * n + i);
      o[lane] = (lane & 1) ? (p[x + 1] + m[x]) - (p[y + 1] + m[y]) : (p[x] - m[x + 1]) + (p[y] - m[y + 1]);
    });
  }
};

}  // namespace heom::impl

#endif
