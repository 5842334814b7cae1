// heom::impl::PortableKernel: the generator on any backend, a team of threads per ADO (what a GPU
// runs; on CPUs the kernel for n > 32, and a reference for the host kernels).
#ifndef HEOM_GENERATOR_DETAIL_PORTABLE_KERNEL_HPP
#define HEOM_GENERATOR_DETAIL_PORTABLE_KERNEL_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

#include "heom/core/backend_traits.hpp"
#include "heom/generator/detail/generator_data.hpp"
#include "heom/generator/detail/kernel_common.hpp"

namespace heom::impl {

/// GeneratorTables' formula, one team per run of ados_per_team consecutive ADOs, the team's threads
/// splitting each ADO's lanes (the doubles of its block). Loops go exponent by exponent over whole
/// blocks, so neighbour indices are read once per ADO and each inner loop streams a contiguous block.
/// N is the system dimension when it is known at compile time (2..8: loops of fixed length), 0
/// otherwise. After (host backends): called as after(a, a + 1) by one thread of the team once ADO
/// a's block is complete (Generator::apply_then).
template <class ExecSpace, int N, class After = NoAfter>
struct PortableKernel {
  using traits = BackendTraits<ExecSpace>;
  using member_type = typename traits::member_type;
  using scratch_view = typename traits::scratch_view;

  GeneratorData<ExecSpace> d;
  typename traits::template view<const device_complex*> in;
  typename traits::template view<device_complex*> out;
  int ados_per_team = 1;
  int scratch_level = 0;
  bool include_damping = true;  // false: leave out -damping_a rho_a (exponential integrators)
  After after = {};
  UnitList<ExecSpace> teams = {};  // which teams of ados_per_team ADOs this launch computes

  KOKKOS_INLINE_FUNCTION int dim() const { return N > 0 ? N : d.n; }

  /// Teams over the ADOs, with the dense baths' scratch.
  typename traits::team_policy policy(const ExecSpace& exec, int team_size) const {
    return team_launch(exec, d.num_ados, ados_per_team, teams, team_size, d.scratch_bytes(), scratch_level);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    int first = 0, last = 0;
    team_ados(team, teams, d.num_ados, ados_per_team, first, last);
    scratch_view sum_m, sum_r;
    if (d.has_dense_bath) {
      const int n2 = dim() * dim();
      sum_m = scratch_view(team.team_scratch(scratch_level), n2);
      sum_r = scratch_view(team.team_scratch(scratch_level), n2);
    }
    for (int a = first; a < last; ++a) {
      if (d.skips(a)) continue;  // (the same for every thread of the team)
      double* block = block_lanes(out.data(), a, dim() * dim());
      system_part(team, a, block);
      for (int b = 0; b < d.num_baths; ++b) {
        // The previous phase wrote lanes this one may update, and the previous dense bath (of this
        // ADO or the last) may still be reading the scratch.
        team.team_barrier();
        if (d.bath_diagonal(b))
          diagonal_bath(team, a, b, block);
        else if (d.bath_fermionic(b)) {
          if (d.fermion_group(b) == b)  // (its group's other baths come with it)
            add_fermionic_group(d, in.data(), a, b, dim(), sum_m.data(), sum_r.data(), block,
                                TeamLoop<member_type>{team});
        } else
          dense_bath(team, a, b, sum_m, sum_r, block);
      }
      if (d.num_rank_one_jumps > 0) {
        team.team_barrier();  // the baths' lanes were split over the threads differently
        add_rank_one_jumps(team, d, in.data() + static_cast<std::int64_t>(a) * dim() * dim(), dim(), 1.0, block);
      }
      if constexpr (!std::is_same<After, NoAfter>::value) {
        team.team_barrier();  // every lane of the block is written before the hook reads it
        Kokkos::single(Kokkos::PerTeam(team), [&]() { call_after(after, a); });
      }
    }
  }

  /// o = A rho + rho B + (S o rho) - damping rho, lane by lane.
  KOKKOS_INLINE_FUNCTION void system_part(const member_type& team, int a, double* o) const {
    const int n = dim(), n2 = n * n;
    const double* KOKKOS_RESTRICT rho = block_lanes(in.data(), a, n2);
    const std::int64_t system = static_cast<std::int64_t>(d.member_of(a)) * n2;  // this member's A and B
    const double* KOKKOS_RESTRICT ai = d.a_imag.data() + system;
    const double* KOKKOS_RESTRICT bi = d.b_imag.data() + system;
    const double* KOKKOS_RESTRICT sp = d.sandwich_p.data();
    const double* KOKKOS_RESTRICT sq = d.sandwich_q.data();
    const double gp = include_damping ? -d.damping(a).real() : 0.0;
    const double gi = include_damping ? d.damping(a).imag() : 0.0;
    if (d.a_sys_imaginary) {
      // A = i Im(A), B = i Im(B) (real H, no terminator): real coefficients, then one factor i.
      team_for(team, 2 * n2, [&](const int lane) {
        const int s = lane & 1, p = s ^ 1, i = (lane >> 1) / n, j = (lane >> 1) % n;
        double c = 0.0;
        for (int l = 0; l < n; ++l)
          c += ai[i * n + l] * rho[2 * (l * n + j) + p] + bi[l * n + j] * rho[2 * (i * n + l) + p];
        double acc = (s ? c : -c) + gp * rho[lane] + (s ? -gi : gi) * rho[lane ^ 1];
        if (d.has_sandwich) acc += sp[lane] * rho[lane] + sq[lane] * rho[lane ^ 1];
        o[lane] = acc;
      });
    } else {
      const double* KOKKOS_RESTRICT ar = d.a_real.data() + system;
      const double* KOKKOS_RESTRICT br = d.b_real.data() + system;
      team_for(team, 2 * n2, [&](const int lane) {
        const int s = lane & 1, p = s ^ 1, i = (lane >> 1) / n, j = (lane >> 1) % n;
        const double sign = s ? 1.0 : -1.0;
        double acc = (gp + sp[lane]) * rho[lane] + ((s ? -gi : gi) + sq[lane]) * rho[lane ^ 1];
        for (int l = 0; l < n; ++l) {
          const int x = 2 * (l * n + j), y = 2 * (i * n + l);
          acc += ar[i * n + l] * rho[x + s] + sign * ai[i * n + l] * rho[x + p] + br[l * n + j] * rho[y + s] +
                 sign * bi[l * n + j] * rho[y + p];
        }
        o[lane] = acc;
      });
    }
  }

  /// A diagonal Q_b: element-wise, over the bath's active elements only. All of them (sigma_z): one
  /// loop over the whole block; otherwise the runs of active elements within each row (a site
  /// projector |j><j|: row j, then column j element by element).
  KOKKOS_INLINE_FUNCTION void diagonal_bath(const member_type& team, int a, int b, double* o) const {
    const int n2 = dim() * dim();
    for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
      const Links l = links(d, a, k);
      if (l.none()) continue;
      const DiagonalLinkLanes terms(d, in.data(), b, k, l);
      auto add_lanes = [&](const int x0, const int count) {
        team_for(team, count, [&](const int lane) { o[x0 + lane] += terms(x0 + lane); });
      };
      if (d.active_count(b) == n2) {
        add_lanes(0, 2 * n2);
        continue;
      }
      for (int r = 0; r < d.run_count(b); ++r) add_lanes(2 * d.run_start(b, r), 2 * d.run_length(b, r));
    }
  }

  /// A dense Q_b (add_dense_bath), M and R in the team's scratch.
  KOKKOS_INLINE_FUNCTION void dense_bath(const member_type& team, int a, int b, const scratch_view& sum_m,
                                         const scratch_view& sum_r, double* o) const {
    add_dense_bath(d, in.data(), a, b, dim(), sum_m.data(), sum_r.data(), o, TeamLoop<member_type>{team});
  }
};

}  // namespace heom::impl

#endif
