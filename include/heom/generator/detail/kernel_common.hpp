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
/// In a batch of members (GeneratorData::members) chunks start again at each member's first ADO, so
/// that no chunk, and no range Generator::apply_then reports, holds two members' ADOs.
struct HostChunks {
  static constexpr int ados_per_chunk = 64;
  HostChunks(int num_ados, int ados_per_member)
      : m_num_ados(num_ados),
        m_ados_per_member(ados_per_member > 0 ? ados_per_member : 1),
        m_per_member((m_ados_per_member + ados_per_chunk - 1) / ados_per_chunk) {}
  int count() const { return m_num_ados > 0 ? m_num_ados / m_ados_per_member * m_per_member : 0; }
  int first(int chunk) const {
    return chunk / m_per_member * m_ados_per_member + chunk % m_per_member * ados_per_chunk;
  }
  int last(int chunk) const {
    const int member_end = (chunk / m_per_member + 1) * m_ados_per_member;
    return first(chunk) + ados_per_chunk < member_end ? first(chunk) + ados_per_chunk : member_end;
  }

 private:
  int m_num_ados, m_ados_per_member, m_per_member;
};

/// The units of work (a host kernel's chunks, or the portable kernel's teams) one launch computes:
/// all of them in order, or the listed ones (a split hierarchy computes the units that read no halo
/// block while the halo is in flight, then the rest).
template <class ExecSpace>
struct UnitList {
  typename BackendTraits<ExecSpace>::template view<const int*> ids;
  bool all = true;

  /// Units in the launch, out of `total`.
  KOKKOS_INLINE_FUNCTION int count(int total) const { return all ? total : static_cast<int>(ids.extent(0)); }
  /// The unit the launch's i-th iteration computes.
  KOKKOS_INLINE_FUNCTION int unit(int i) const { return all ? i : ids(i); }
};

/// A host kernel (operator()(chunk)) run on the chunks a UnitList names.
template <class ExecSpace, class Kernel>
struct ListedChunks {
  Kernel kernel;
  UnitList<ExecSpace> units;
  void operator()(const int i) const { kernel(units.unit(i)); }
};

/// Generator::apply_then's default: nothing after each range of ADOs.
struct NoAfter {
  void operator()(int /*first*/, int /*last*/) const {}
};

/// after(a, a + 1) from a kernel that may run on a GPU: `after` is a host function (apply_then runs
/// on host backends alone), so the call is kept out of nvcc's device pass.
template <class After>
KOKKOS_INLINE_FUNCTION void call_after([[maybe_unused]] const After& after, [[maybe_unused]] int a) {
#ifndef __CUDA_ARCH__
  after(a, a + 1);
#endif
}

}  // namespace heom::impl

#endif
