// Counter-based random numbers for static disorder.
#include "heom/ensemble/disorder.hpp"

#include <cmath>
#include <string>

#include "heom/core/error.hpp"

namespace heom {

std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> counter, std::array<std::uint32_t, 2> key) {
  constexpr std::uint64_t multiplier0 = 0xD2511F53u, multiplier1 = 0xCD9E8D57u;
  constexpr std::uint32_t weyl0 = 0x9E3779B9u, weyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += weyl0;
      key[1] += weyl1;
    }
    const std::uint64_t product0 = multiplier0 * counter[0], product1 = multiplier1 * counter[2];
    counter = {static_cast<std::uint32_t>(product1 >> 32) ^ counter[1] ^ key[0], static_cast<std::uint32_t>(product1),
               static_cast<std::uint32_t>(product0 >> 32) ^ counter[3] ^ key[1], static_cast<std::uint32_t>(product0)};
  }
  return counter;
}

double counter_normal(std::uint64_t seed, std::uint64_t realization, std::uint32_t element) {
  const auto block =
      philox4x32({element, static_cast<std::uint32_t>(realization), static_cast<std::uint32_t>(realization >> 32), 0u},
                 {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)});
  const std::uint64_t a = (static_cast<std::uint64_t>(block[0]) << 32 | block[1]) >> 11;
  const std::uint64_t b = (static_cast<std::uint64_t>(block[2]) << 32 | block[3]) >> 11;
  constexpr double two_to_minus_53 = 1.0 / 9007199254740992.0;
  const double u1 = (static_cast<double>(a) + 0.5) * two_to_minus_53;  // in (0, 1): the logarithm is finite
  const double u2 = static_cast<double>(b) * two_to_minus_53;
  constexpr double two_pi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
}

Matrix with_diagonal_disorder(const Matrix& hamiltonian, const std::vector<double>& sigma, std::uint64_t seed,
                              std::uint64_t realization) {
  const int n = hamiltonian.rows();
  if (static_cast<int>(sigma.size()) != n)
    throw Error("static disorder: " + std::to_string(sigma.size()) + " standard deviations for a " +
                hamiltonian.shape_string() + " hamiltonian");
  Matrix disordered = hamiltonian;
  for (int j = 0; j < n; ++j) {
    if (!(sigma[j] >= 0.0) || !std::isfinite(sigma[j]))
      throw Error("static disorder: standard deviation " + std::to_string(j) + " must be finite and >= 0");
    if (sigma[j] > 0.0) disordered(j, j) += sigma[j] * counter_normal(seed, realization, static_cast<std::uint32_t>(j));
  }
  return disordered;
}

}  // namespace heom
