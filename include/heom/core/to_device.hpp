// heom::impl::allocate and heom::impl::to_device: device Views made for one execution-space instance.
// Every device allocation goes through them: Kokkos allocates a View on its instance's device, and
// several GPUs in one process (one instance each) need every View of a device's share on that device.
#ifndef HEOM_CORE_TO_DEVICE_HPP
#define HEOM_CORE_TO_DEVICE_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

#include "heom/core/backend_traits.hpp"

namespace heom::impl {

/// A View of the given extents on exec's device, uninitialized.
template <class View, class ExecSpace, class... Extents>
View allocate(const ExecSpace& exec, const std::string& label, Extents... extents) {
  return View(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, label), static_cast<std::size_t>(extents)...);
}

/// A View of the given extents on exec's device, zeroed on exec (ordered before what exec runs next).
template <class View, class ExecSpace, class... Extents>
View allocate_zeroed(const ExecSpace& exec, const std::string& label, Extents... extents) {
  return View(Kokkos::view_alloc(exec, label), static_cast<std::size_t>(extents)...);
}

/// A View of the given extents on exec's device, copied from host data (indexable, row-major, of as
/// many elements); std::complex converts to device_complex. Returns when the copy is done.
template <class View, class ExecSpace, class HostData>
View to_device(const ExecSpace& exec, const std::string& label, const HostData& data, std::size_t rows,
               std::size_t cols = 0, std::size_t depth = 0) {
  using non_const = typename View::non_const_type;
  non_const v;
  if constexpr (non_const::rank == 1)
    v = allocate<non_const>(exec, label, rows);
  else if constexpr (non_const::rank == 2)
    v = allocate<non_const>(exec, label, rows, cols);
  else
    v = allocate<non_const>(exec, label, rows, cols, depth);
  auto h = Kokkos::create_mirror_view(v);
  using value = typename non_const::value_type;
  value* dst = h.data();
  for (std::size_t i = 0; i < h.size(); ++i) {
    if constexpr (std::is_same<value, device_complex>::value)
      dst[i] = device_complex(data[i].real(), data[i].imag());
    else
      dst[i] = static_cast<value>(data[i]);
  }
  Kokkos::deep_copy(exec, v, h);
  exec.fence();  // (h goes when this returns)
  return v;
}

}  // namespace heom::impl

#endif
