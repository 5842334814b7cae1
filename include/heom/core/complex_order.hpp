// Complex numbers in one order, by real then imaginary part: what classifies values that must match
// exactly (damping rates, the system's diagonal).
#ifndef HEOM_CORE_COMPLEX_ORDER_HPP
#define HEOM_CORE_COMPLEX_ORDER_HPP

#include <algorithm>
#include <utility>
#include <vector>

#include "heom/core/matrix.hpp"

namespace heom::impl {

/// Whether a comes before b by (real, imaginary) part.
inline bool less_by_parts(const complex& a, const complex& b) {
  return std::make_pair(a.real(), a.imag()) < std::make_pair(b.real(), b.imag());
}

/// `values` sorted by less_by_parts, each value once.
inline void sort_distinct(std::vector<complex>& values) {
  std::sort(values.begin(), values.end(), less_by_parts);
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

}  // namespace heom::impl

#endif
