// Ensembles (heom::run_ensemble) in one process: reproducible disorder from a counter-based
// generator, largest-first scheduling, and members that are bit-identical to solo runs however many
// devices share them.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ensemble_cases.hpp"
#include "heom/heom.hpp"

namespace {

namespace ht = heom::testing;
using Exec = Kokkos::DefaultHostExecutionSpace;

// Random123's known-answer vectors for Philox4x32-10.
TEST(Disorder, PhiloxMatchesTheKnownAnswers) {
  EXPECT_EQ(heom::philox4x32({0, 0, 0, 0}, {0, 0}),
            (std::array<std::uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(heom::philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (std::array<std::uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

TEST(Disorder, CounterNormalsAreStandardNormalAndDependOnTheirKeyAlone) {
  constexpr int draws = 200000;
  double sum = 0.0, squares = 0.0, fourth = 0.0;
  for (int r = 0; r < draws; ++r) {
    const double z = heom::counter_normal(7, r, 3);
    sum += z;
    squares += z * z;
    fourth += z * z * z * z;
  }
  // Five standard errors: sd(mean) = 1/sqrt(N), sd(variance) = sqrt(2/N), sd(fourth moment) = sqrt(96/N).
  EXPECT_NEAR(sum / draws, 0.0, 5.0 / std::sqrt(draws));
  EXPECT_NEAR(squares / draws, 1.0, 5.0 * std::sqrt(2.0 / draws));
  EXPECT_NEAR(fourth / draws, 3.0, 5.0 * std::sqrt(96.0 / draws));
  EXPECT_EQ(heom::counter_normal(7, 12, 3), heom::counter_normal(7, 12, 3));
  EXPECT_NE(heom::counter_normal(7, 12, 3), heom::counter_normal(8, 12, 3));
  EXPECT_NE(heom::counter_normal(7, 12, 3), heom::counter_normal(7, 13, 3));
  EXPECT_NE(heom::counter_normal(7, 12, 3), heom::counter_normal(7, 12, 4));
  // Realizations beyond 2^32 use the counter's high word.
  EXPECT_NE(heom::counter_normal(7, 12, 3), heom::counter_normal(7, 12 + (std::uint64_t(1) << 32), 3));
}

TEST(Disorder, OnlyTheDiagonalMovesBySigmaTimesTheRealizationsNormals) {
  const heom::Matrix h{{1.0, 0.5}, {0.5, -1.0}};
  const heom::Matrix d = heom::with_diagonal_disorder(h, {2.0, 0.0}, 5, 9);
  EXPECT_EQ(d(0, 0), h(0, 0) + 2.0 * heom::counter_normal(5, 9, 0));
  EXPECT_EQ(d(1, 1), h(1, 1));
  EXPECT_EQ(d(0, 1), h(0, 1));
  EXPECT_EQ(d(1, 0), h(1, 0));
  EXPECT_THROW(heom::with_diagonal_disorder(h, {1.0}, 5, 9), heom::Error);
  EXPECT_THROW(heom::with_diagonal_disorder(h, {1.0, -1.0}, 5, 9), heom::Error);
}

TEST(Ensemble, ScheduleHandsOutTheLargestMembersFirst) {
  std::vector<heom::EnsembleMember> members = ht::disordered_spin_bosons(3);
  const heom::Matrix sz{{1, 0}, {0, -1}};
  heom::DrudeLorentz bath{0.1, 0.5, 1.0, 4};
  members[1].model.add_bath(heom::Bath::drude_lorentz(sz, bath));  // more exponents: the largest
  members.push_back({heom::Model(heom::Matrix::identity(3)), heom::Matrix::identity(3)});
  members.back().rho0 = heom::Matrix::zeros(3, 3);
  members.back().rho0(0, 0) = 1.0;
  // Member 3 has no bath: one ADO, the cheapest whatever its dimension.
  EXPECT_EQ(heom::ensemble_schedule(members, ht::ensemble_depth), (std::vector<int>{1, 0, 2, 3}));
}

TEST(Ensemble, MembersEqualSoloRunsOnAnyNumberOfDevices) {
  const auto members = ht::disordered_spin_bosons(7);
  const auto times = ht::ensemble_times();
  heom::EnsembleOptions options;
  options.depth = ht::ensemble_depth;
  const heom::EnsembleResult one = heom::run_ensemble(Exec(), members, times, options);

  // Each member is a solo run of its model, bit for bit.
  for (std::size_t i = 0; i < members.size(); ++i) {
    heom::Solver<Exec> solver(Exec(), members[i].model, ht::ensemble_depth);
    solver.set_initial_state(members[i].rho0);
    std::vector<heom::Matrix> rho;
    solver.run(times, [&](const heom::Snapshot<Exec>& s) { rho.push_back(s.rho()); });
    ASSERT_EQ(rho.size(), one.members[i].rho.size());
    for (std::size_t t = 0; t < rho.size(); ++t)
      EXPECT_EQ(std::memcmp(rho[t].data(), one.members[i].rho[t].data(), 4 * sizeof(heom::complex)), 0);
    EXPECT_EQ(solver.statistics().steps, one.members[i].statistics.steps);
  }
  // Different temperatures: different step counts, so that the devices below finish out of order.
  EXPECT_NE(one.members.front().statistics.steps, one.members.back().statistics.steps);

  for (int devices : {2, 3, 4}) {
    SCOPED_TRACE(std::to_string(devices) + " devices");
    options.devices = devices;
    const heom::EnsembleResult many = heom::run_ensemble(Exec(), members, times, options);
    ht::expect_same_members(one, many);
    EXPECT_EQ(many.workers, devices);
    for (std::size_t t = 0; t < times.size(); ++t)
      EXPECT_EQ(std::memcmp(one.mean[t].data(), many.mean[t].data(), 4 * sizeof(heom::complex)), 0);
    // (Which device ran which member is up to timing: members are handed out as devices become free.)
    for (const auto& m : many.members) EXPECT_TRUE(m.worker >= 0 && m.worker < devices) << m.worker;
  }
}

TEST(Ensemble, TheMeanIsTheMembersAverageAndTracesStayOne) {
  const auto members = ht::disordered_spin_bosons(5);
  heom::EnsembleOptions options;
  options.depth = ht::ensemble_depth;
  const auto result = heom::run_ensemble(Exec(), members, ht::ensemble_times(), options);
  ASSERT_EQ(result.mean.size(), ht::ensemble_times().size());
  for (std::size_t t = 0; t < result.mean.size(); ++t) {
    heom::Matrix sum(2, 2);
    for (const auto& m : result.members) sum += m.rho[t];
    EXPECT_LT(heom::max_abs_diff(result.mean[t], (1.0 / 5.0) * sum), 1e-15);
    EXPECT_NEAR(result.mean[t].trace().real(), 1.0, 1e-12);
  }
  // The members differ (the disorder and the temperature do something).
  EXPECT_GT(heom::max_abs_diff(result.members[0].rho.back(), result.members[4].rho.back()), 1e-3);
  // Members of different dimensions have no mean, but each has its result.
  auto mixed = members;
  mixed.push_back({heom::Model(heom::Matrix::identity(3)), heom::Matrix::zeros(3, 3)});
  mixed.back().rho0(2, 2) = 1.0;
  const auto mixed_result = heom::run_ensemble(Exec(), mixed, ht::ensemble_times(), options);
  EXPECT_TRUE(mixed_result.mean.empty());
  EXPECT_EQ(mixed_result.members.back().rho.back()(2, 2), heom::complex(1.0));
}

TEST(Ensemble, AFailingMemberEndsTheEnsembleWithItsMessage) {
  auto members = ht::disordered_spin_bosons(6);
  members[4].rho0 = heom::Matrix::identity(3);  // the wrong shape: its solver refuses it
  heom::EnsembleOptions options;
  options.depth = ht::ensemble_depth;
  for (int devices : {1, 3}) {
    options.devices = devices;
    try {
      heom::run_ensemble(Exec(), members, ht::ensemble_times(), options);
      ADD_FAILURE() << "no error with " << devices << " devices";
    } catch (const heom::Error& e) {
      EXPECT_NE(std::string(e.what()).find("initial state rho is 3x3"), std::string::npos) << e.what();
    }
  }
}

TEST(Ensemble, RefusesWhatItCannotRun) {
  const auto members = ht::disordered_spin_bosons(2);
  heom::EnsembleOptions options;
  EXPECT_THROW(heom::run_ensemble(Exec(), {}, ht::ensemble_times(), options), heom::Error);
  EXPECT_THROW(heom::run_ensemble(Exec(), members, {1.0, 0.5}, options), heom::Error);
  options.devices = 0;
  EXPECT_THROW(heom::run_ensemble(Exec(), members, ht::ensemble_times(), options), heom::Error);
}

}  // namespace
