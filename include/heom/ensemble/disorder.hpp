// Static disorder reproducible from (seed, realization, element) alone: a counter-based random
// number generator (Philox4x32-10), so that a member's Hamiltonian does not depend on which device
// or rank drew it, or in which order.
#ifndef HEOM_ENSEMBLE_DISORDER_HPP
#define HEOM_ENSEMBLE_DISORDER_HPP

#include <array>
#include <cstdint>
#include <vector>

#include "heom/core/matrix.hpp"

namespace heom {

/// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, SC11 2011, as in Random123): the 128-bit block of
/// `counter` under `key`.
std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> counter, std::array<std::uint32_t, 2> key);

/// A standard normal number that depends on (seed, realization, element) alone: Philox keyed by the
/// seed, counting (element, realization), two uniforms of 53 bits, Box-Muller (the cosine branch).
double counter_normal(std::uint64_t seed, std::uint64_t realization, std::uint32_t element);

/// H with Gaussian static disorder on its diagonal: H_jj + sigma[j] z(seed, realization, j), every
/// other element unchanged. `sigma` has one standard deviation (>= 0) per diagonal element.
Matrix with_diagonal_disorder(const Matrix& hamiltonian, const std::vector<double>& sigma, std::uint64_t seed,
                              std::uint64_t realization);

}  // namespace heom

#endif
