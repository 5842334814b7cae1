// heom::impl::GroundColumnKernel: the generator on ground columns (AdoShape::ground_column), one
// thread per ADO on any backend.
#ifndef HEOM_GENERATOR_DETAIL_GROUND_COLUMN_KERNEL_HPP
#define HEOM_GENERATOR_DETAIL_GROUND_COLUMN_KERNEL_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

#include "heom/core/backend_traits.hpp"
#include "heom/generator/detail/generator_data.hpp"
#include "heom/generator/detail/kernel_common.hpp"

namespace heom::impl {

/// GeneratorTables' formula for ADOs x_a = v_a <0|, v_a their column 0. Level 0 is an eigenstate of
/// H that no bath couples to and no Lindblad term takes elsewhere (L |0> = 0: ground_column_obstacle),
/// so every term acting from the right vanishes but B's, which is the number B_00 = i H_00, and the
/// sandwich, the dense terminators and the jumps vanish too (L's decay -L^+L / 2 is in A):
///   d v_a = (A + B_00) v_a - damping_a v_a + sum_b Q_b X_b,
///   X_b = sum over exponents k of b: -i v_{n+e_k} + n_k (c2_k - i c_k) v_{n-e_k}
/// (the Hermitian form's X_b, for columns). A diagonal Q_b touches only its coupled rows, a rank-one
/// one is s_b c_b (c_b^dagger X_b).
template <class ExecSpace, class After = NoAfter>
struct GroundColumnKernel {
  GeneratorData<ExecSpace> d;
  typename BackendTraits<ExecSpace>::template view<const device_complex*> in;
  typename BackendTraits<ExecSpace>::template view<device_complex*> out;
  bool include_damping = true;  // false: leave out -damping_a v_a (exponential integrators)
  After after = {};             // after(a, a + 1) once ADO a's column is written (host backends)

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t ado) const {
    const int a = static_cast<int>(ado), n = d.n;
    if (d.skips(a)) return;
    const device_complex* v = in.data() + ado * n;
    device_complex* o = out.data() + ado * n;
    const int system = d.member_of(a) * n;  // this member's rows of A and B
    const device_complex own = device_complex(d.b_real(system, 0), d.b_imag(system, 0)) -
                               (include_damping ? d.damping(a) : device_complex(0.0));
    for (int i = 0; i < n; ++i) {
      device_complex sum = own * v[i];
      for (int j = 0; j < n; ++j) sum += device_complex(d.a_real(system + i, j), d.a_imag(system + i, j)) * v[j];
      o[i] = sum;
    }
    for (int b = 0; b < d.num_baths; ++b) {
      if (d.bath_diagonal(b)) {
        for (int r = 0; r < d.coupled_row_count(b); ++r) {
          const int i = d.coupled_rows(b, r);
          o[i] += d.coupling(b, i, i) * bath_sum(a, b, i);
        }
      } else if (d.rank_one(b)) {
        device_complex projection(0.0);
        for (int j = 0; j < n; ++j) projection += Kokkos::conj(d.rank_one_c(b, j)) * bath_sum(a, b, j);
        projection *= d.rank_one_s(b);
        for (int i = 0; i < n; ++i) o[i] += d.rank_one_c(b, i) * projection;
      } else {
        for (int j = 0; j < n; ++j) {
          const device_complex x = bath_sum(a, b, j);
          for (int i = 0; i < n; ++i) o[i] += d.coupling(b, i, j) * x;
        }
      }
    }
    if constexpr (!std::is_same<After, NoAfter>::value) call_after(after, a);
  }

  /// Element j of X_b for ADO a.
  KOKKOS_INLINE_FUNCTION device_complex bath_sum(int a, int b, int j) const {
    const int n = d.n;
    device_complex x(0.0);
    for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
      const Links l = links(d, a, k);
      if (l.up >= 0) x -= times_i(in(static_cast<std::int64_t>(l.up) * n + j));
      if (l.nk > 0) {
        const device_complex c = d.c_anticommutator(k) - times_i(d.c_commutator(k));
        x += static_cast<double>(l.nk) * c * in(static_cast<std::int64_t>(l.down) * n + j);
      }
    }
    return x;
  }
};

}  // namespace heom::impl

#endif
