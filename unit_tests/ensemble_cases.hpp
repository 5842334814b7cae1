// A small ensemble shared by the ensemble tests (in one process and over MPI ranks): spin-boson
// members with static disorder on H's diagonal and a temperature that varies by member, so that
// their adaptive step counts differ and dynamic scheduling has something to balance.
#ifndef HEOM_UNIT_TESTS_ENSEMBLE_CASES_HPP
#define HEOM_UNIT_TESTS_ENSEMBLE_CASES_HPP

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "heom/heom.hpp"

namespace heom::testing {

inline std::vector<EnsembleMember> disordered_spin_bosons(int count, std::uint64_t seed = 11) {
  const Matrix sz{{1, 0}, {0, -1}}, sx{{0, 1}, {1, 0}};
  const Matrix h = 0.25 * sz + 0.5 * sx;
  std::vector<EnsembleMember> members;
  for (int r = 0; r < count; ++r) {
    DrudeLorentz bath;
    bath.lambda = 0.1;
    bath.gamma = 0.5;
    bath.temperature = 0.3 + 0.15 * r;
    bath.terms = 2;
    members.push_back({Model(with_diagonal_disorder(h, {0.2, 0.2}, seed, r), {Bath::drude_lorentz(sz, bath)}),
                       Matrix{{1, 0}, {0, 0}}});
  }
  return members;
}

inline std::vector<double> ensemble_times() {
  std::vector<double> times;
  for (int i = 0; i <= 10; ++i) times.push_back(0.5 * i);
  return times;
}

constexpr int ensemble_depth = 4;

/// Each member's rho at every time, and its step counts, bit for bit.
inline void expect_same_members(const EnsembleResult& a, const EnsembleResult& b) {
  ASSERT_EQ(a.members.size(), b.members.size());
  for (std::size_t i = 0; i < a.members.size(); ++i) {
    SCOPED_TRACE("member " + std::to_string(i));
    const MemberResult &x = a.members[i], &y = b.members[i];
    EXPECT_EQ(x.statistics.steps, y.statistics.steps);
    EXPECT_EQ(x.statistics.rhs_evaluations, y.statistics.rhs_evaluations);
    ASSERT_EQ(x.rho.size(), y.rho.size());
    for (std::size_t t = 0; t < x.rho.size(); ++t)
      ASSERT_EQ(std::memcmp(x.rho[t].data(), y.rho[t].data(), sizeof(complex) * x.rho[t].rows() * x.rho[t].cols()), 0)
          << "time " << t;
  }
}

}  // namespace heom::testing

#endif
