// heom::impl::TwoLevelKernel: the generator on AVX-512 host backends for n = 2, each ADO's 2x2 block
// in one vector register.
#ifndef HEOM_GENERATOR_DETAIL_TWO_LEVEL_KERNEL_HPP
#define HEOM_GENERATOR_DETAIL_TWO_LEVEL_KERNEL_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

#include "heom/core/backend_traits.hpp"
#include "heom/core/static_dispatch.hpp"
#include "heom/core/double8.hpp"
#include "heom/generator/detail/generator_data.hpp"
#include "heom/generator/detail/kernel_common.hpp"

namespace heom::impl {

/// The two-level kernel over the listed chunks of 64 ADOs (declared in every build, so that callers
/// compile where BackendTraits::two_level_kernel is false; defined where AVX-512 is on).
template <class ExecSpace, class After>
void launch_two_level(const ExecSpace& exec, const GeneratorData<ExecSpace>& data, const double* in, double* out,
                      bool include_damping, const After& after, const UnitList<ExecSpace>& chunks);

}  // namespace heom::impl

#if HEOM_HAS_DOUBLE8
namespace heom::impl {

/// A 2x2 block is 8 doubles, one double8, and each ADO's derivative is accumulated in two of them and
/// stored once, where the block kernels' per-exponent updates of the block in memory each wait on the
/// previous one's store.
///
/// A complex c times x is, in lanes, P x + Q swap(x) with Q = (-Im c, Im c) per pair (GeneratorTables).
/// As swap(Q) = -Q, the sum over terms of Q_t swap(x_t) is -swap(sum_t Q_t x_t): every term adds to
/// `direct` (P x) and `crossed` (Q x) without a shuffle, and one swap at the end joins them. The
/// system part (A rho + rho B and the terminators) and a dense bath's commutator and anticommutator
/// with Q_b are general maps of the block, in GeneratorTables' shifted form: three shuffles.
///
/// Absent neighbours are skipped with branches: the hierarchy's order makes them well predicted (and
/// branch-free forms measured slower).
///
/// OneBathExponents > 0: the model has one bath with that many exponents, known at compile time, so
/// that the loops over them unroll and their coefficients stay in registers; 0: any baths.
template <class ExecSpace, int OneBathExponents, class After>
struct TwoLevelKernel {
  static_assert(BackendTraits<ExecSpace>::two_level_kernel, "TwoLevelKernel runs on AVX-512 host backends only");
  /// The generator's tables (host memory; a one-tier launch's copy, which outlives the synchronous
  /// host launch): a pointer, so that a launch copies no View and counts no references.
  const GeneratorData<ExecSpace>* data;
  const double* in;
  double* out;
  bool include_damping = true;
  After after;  // after(first, last) once the chunk's blocks are written

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
    const double* KOKKOS_RESTRICT const system_all = d.shifted_system.data();  // [member][64]
    const double* KOKKOS_RESTRICT const alpha_p = d.alpha_p.data();            // [K][8]
    const double* KOKKOS_RESTRICT const alpha_q = d.alpha_q.data();
    const double* KOKKOS_RESTRICT const cf_p = d.cf_p.data();  // [bath][8]
    const double* KOKKOS_RESTRICT const cf_q = d.cf_q.data();
    const device_complex* KOKKOS_RESTRICT const damping = d.damping.data();
    const int* KOKKOS_RESTRICT const bath_begin = d.bath_begin.data();
    const int* KOKKOS_RESTRICT const bath_diagonal = d.bath_diagonal.data();
    // The neighbour tables, read through locals too: GCC reloaded them for every ADO (the stores
    // might alias them).
    const int* KOKKOS_RESTRICT const next_all = d.next.data();  // [ado][K]
    const int* KOKKOS_RESTRICT const prev_all = d.prev.data();
    const int* KOKKOS_RESTRICT const label_all = d.labels.data();
    const bool one_bath_diagonal = OneBathExponents > 0 && bath_diagonal[0] != 0;
    const int baths = OneBathExponents > 0 ? 1 : d.num_baths;
    const int K = OneBathExponents > 0 ? OneBathExponents : bath_begin[baths];
    const bool with_damping = include_damping, system_imaginary = d.a_sys_imaginary, real_damping = d.real_damping;
    const bool truncated = d.truncated;
    const HostChunks chunks = d.host_chunks();
    const int first = chunks.first(chunk), last = chunks.last(chunk);
    // A chunk lies within one member (HostChunks): one member's system map for all of it.
    const double* KOKKOS_RESTRICT const system = system_all + 64 * static_cast<std::ptrdiff_t>(d.member_of(first));
    for (int a = first; a < last; ++a) {
      if (d.skips(a)) continue;
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
      // An ADO at the full depth has no up-neighbour, any other has all of them (Hierarchy), unless
      // an importance truncation left some out.
      const bool has_ups = K > 0 && (truncated || next[0] >= 0);
      for (int b = 0; b < baths; ++b) {
        const std::ptrdiff_t k_begin = OneBathExponents > 0 ? 0 : bath_begin[b];
        const std::ptrdiff_t k_end = OneBathExponents > 0 ? OneBathExponents : bath_begin[b + 1];
        // ups: the up-neighbours' sum (they share the bath's coefficient); down: n_k rho_{n-e_k}.
        double8 ups = {};
        if (has_ups)
          for (std::ptrdiff_t k = k_begin; k < k_end; ++k)
            if (!truncated || next[k] >= 0) ups += load8(rho_all + 8 * static_cast<std::int64_t>(next[k]));
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
          if (prev[k] < 0) continue;
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

/// One bath of up to 8 exponents (the spin-boson's usual form) gets its count at compile time.
template <class ExecSpace, class After>
void launch_two_level(const ExecSpace& exec, const GeneratorData<ExecSpace>& data, const double* in, double* out,
                      bool include_damping, const After& after, const UnitList<ExecSpace>& chunks) {
  auto run = [&](auto kernel) {
    kernel.data = &data;
    kernel.in = in;
    kernel.out = out;
    kernel.include_damping = include_damping;
    kernel.after = after;
    Kokkos::parallel_for("heom::generator::two_level",
                         Kokkos::RangePolicy<ExecSpace>(exec, 0, chunks.count(data.host_chunks().count())),
                         ListedChunks<ExecSpace, decltype(kernel)>{kernel, chunks});
  };
  const int one_bath_exponents = data.num_baths == 1 ? data.bath_begin(1) : 0;  // (a host View)
  static_dispatch<0, 1, 2, 3, 4, 5, 6, 7, 8>(
      one_bath_exponents, [&](auto exponents) { run(TwoLevelKernel<ExecSpace, decltype(exponents)::value, After>{}); });
}

}  // namespace heom::impl
#endif

#endif
