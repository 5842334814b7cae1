// What every generator kernel shares: the default per-range hook, and how a kernel finds an ADO's
// block and its neighbours' blocks in a flat ADO vector.
#ifndef HEOM_GENERATOR_DETAIL_KERNEL_COMMON_HPP
#define HEOM_GENERATOR_DETAIL_KERNEL_COMMON_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

#include "heom/core/backend_traits.hpp"

namespace heom::impl {

KOKKOS_INLINE_FUNCTION device_complex times_i(const device_complex& z) { return device_complex(-z.imag(), z.real()); }

/// The doubles of ADO a's block (lane 2e + s: the real (s = 0) or imaginary (s = 1) part of element e).
template <class Complex>
KOKKOS_FORCEINLINE_FUNCTION auto block_lanes(Complex* all, std::int64_t a, int n2) {
  using Double = typename std::conditional<std::is_const<Complex>::value, const double, double>::type;
  return reinterpret_cast<Double*>(all + a * n2);
}

/// The block of a neighbour that may be absent (index < 0): ADO 0's block, always valid, which the
/// caller multiplies by a zero factor. Keeps the loops free of a branch per element.
template <class Complex>
KOKKOS_FORCEINLINE_FUNCTION auto neighbour_lanes(Complex* all, int index, int n2) {
  return block_lanes(all, index >= 0 ? index : 0, n2);
}

/// The host kernels' unit of work: one call walks through a chunk of consecutive ADOs, so that its
/// setup (the tables' pointers) is paid once per chunk and the neighbours' blocks stay in its cache.
struct HostChunks {
  static constexpr int ados_per_chunk = 64;
  static int count(int num_ados) { return (num_ados + ados_per_chunk - 1) / ados_per_chunk; }
  static int first(int chunk) { return chunk * ados_per_chunk; }
  static int last(int chunk, int num_ados) {
    return first(chunk) + ados_per_chunk < num_ados ? first(chunk) + ados_per_chunk : num_ados;
  }
};

/// Generator::apply_then's default: nothing after each range of ADOs.
struct NoAfter {
  void operator()(int /*first*/, int /*last*/) const {}
};

}  // namespace heom::impl

#endif
