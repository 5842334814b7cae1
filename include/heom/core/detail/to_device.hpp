// heom::impl::to_device: a device View filled from host data, for tables built on the host.
#ifndef HEOM_CORE_DETAIL_TO_DEVICE_HPP
#define HEOM_CORE_DETAIL_TO_DEVICE_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

#include "heom/core/backend_traits.hpp"

namespace heom::impl {

/// A device View of the given extents, copied from host data (indexable, row-major, of as many
/// elements); std::complex converts to device_complex.
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

}  // namespace heom::impl

#endif
