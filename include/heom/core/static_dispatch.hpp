// heom::impl::static_dispatch: a run-time integer made a compile-time one, for kernels specialized
// on a few values (the system dimension, a bath's exponent count, an integrator's order).
#ifndef HEOM_CORE_STATIC_DISPATCH_HPP
#define HEOM_CORE_STATIC_DISPATCH_HPP

#include <type_traits>

namespace heom::impl {

/// f(std::integral_constant<int, value>) when value is one of Values, otherwise
/// f(std::integral_constant<int, Otherwise>): one instantiation of f per listed value, plus one.
template <int Otherwise, int... Values, class F>
void static_dispatch(int value, F&& f) {
  const bool listed = ((value == Values && (f(std::integral_constant<int, Values>{}), true)) || ...);
  if (!listed) f(std::integral_constant<int, Otherwise>{});
}

}  // namespace heom::impl

#endif
