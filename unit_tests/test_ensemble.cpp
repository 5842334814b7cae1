// Ensembles (heom::run_ensemble) in one process: reproducible disorder from a counter-based
// generator, largest-first scheduling, and members that are bit-identical to solo runs (however many
// devices share them: multi_device_suite.hpp).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "distributed_cases.hpp"
#include "ensemble_cases.hpp"
#include "heom/generator/generator_tables.hpp"
#include "test_support.hpp"
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

TEST(Ensemble, MembersEqualSoloRuns) {
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
  // Different temperatures: different step counts, so that devices sharing these members finish out
  // of order (multi_device_suite.hpp).
  EXPECT_NE(one.members.front().statistics.steps, one.members.back().statistics.steps);
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

// --- batches: members of one shape stepped together ---------------------------------------------

namespace batch {

/// `count` copies of `base` with disorder on H's diagonal (realizations 0 .. count - 1).
std::vector<heom::Model> disordered(const heom::Model& base, int count, double sigma) {
  std::vector<heom::Model> out;
  const std::vector<double> sigmas(base.dimension(), sigma);
  for (int r = 0; r < count; ++r)
    out.push_back(base.with_hamiltonian(heom::with_diagonal_disorder(base.hamiltonian(), sigmas, 3, r)));
  return out;
}

struct Shape {
  const char* name;
  heom::Model model;
  int depth;
  heom::Matrix rho0;
};

std::vector<Shape> shapes() {
  // The spin-boson (two-level kernel), FMO-like excitons (Hermitian form, site projectors), and a
  // complex three-level model with a dense bath and complex rates from a non-Hermitian rho (the
  // general form): distributed_cases.hpp's models.
  return {{"spin-boson", ht::spin_boson(), 5, heom::Matrix{{1, 0}, {0, 0}}},
          {"excitons", ht::excitons(), 3, ht::excitons_start()},
          {"three-level", ht::three_level(), 3, ht::three_level_start}};
}

}  // namespace batch

// Member m's blocks of a batch's L(in) are its own generator's, bit for bit, for every kernel.
TEST(Batch, GeneratorEqualsEachMembersOwnForEveryKernel) {
  using heom::GeneratorKernel;
  for (const batch::Shape& shape : batch::shapes()) {
    const auto members = batch::disordered(shape.model, 3, 0.3);
    const heom::Hierarchy hierarchy(shape.model.num_exponents(), shape.depth);
    for (GeneratorKernel kernel :
         {GeneratorKernel::automatic, GeneratorKernel::portable, GeneratorKernel::host_block,
          GeneratorKernel::hermitian, GeneratorKernel::two_level, GeneratorKernel::portable_hermitian}) {
      const bool hermitian = heom::impl::make_generator_tables(shape.model, hierarchy).preserves_hermiticity;
      if (!heom::Generator<Exec>::can_run(kernel, shape.model.dimension(), hermitian)) continue;
      SCOPED_TRACE(std::string(shape.name) + ", " + heom::to_string(kernel) + " kernel");
      heom::GeneratorOptions options;
      options.kernel = kernel;
      const heom::Generator<Exec> together(Exec(), members, hierarchy, options);
      ASSERT_EQ(together.members(), 3);
      const std::int64_t size = together.member_size();
      ASSERT_EQ(together.vector_size(), 3 * size);
      const auto in = ht::random_vector<Exec>(together.vector_size(), 17);
      decltype(in) out("out", together.vector_size());
      // (The Hermitian forms' result is L(in) for Hermitian input alone; here both sides compute the same.)
      const heom::InputForm form =
          heom::is_hermitian_form(kernel) ? heom::InputForm::hermitian : heom::InputForm::general;
      together.apply(Exec(), in, out, heom::Generator<Exec>::Damping::included, form);
      for (int m = 0; m < 3; ++m) {
        const heom::Generator<Exec> alone(Exec(), members[m], hierarchy, options);
        const auto range = std::make_pair(m * size, (m + 1) * size);
        decltype(in) in_m("in_m", size), out_m("out_m", size);
        Kokkos::deep_copy(in_m, Kokkos::subview(in, range));
        alone.apply(Exec(), in_m, out_m, heom::Generator<Exec>::Damping::included, form);
        const auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out_m);
        const auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Kokkos::subview(out, range));
        EXPECT_EQ(std::memcmp(a.data(), b.data(), size * sizeof(heom::device_complex)), 0) << "member " << m;
      }
    }
  }
}

// Fixed steps: a batch gives each member the bits of its solo run; adaptive steps: each member within
// its tolerance of its solo run (one step size for all, each member's error held to the tolerance).
TEST(Batch, SolverMembersMatchSoloRuns) {
  std::vector<double> times;
  for (int i = 0; i <= 8; ++i) times.push_back(0.5 * i);
  for (const batch::Shape& shape : batch::shapes()) {
    const auto members = batch::disordered(shape.model, 4, 0.3);
    for (heom::Method method : {heom::Method::rk4, heom::Method::exp_adams, heom::Method::dopri5}) {
      SCOPED_TRACE(std::string(shape.name) + ", " + heom::to_string(method));
      heom::SolverOptions options;
      options.integrator.method = method;
      options.integrator.step = method == heom::Method::rk4 ? 0.01 : 0.0;
      options.integrator.rtol = 1e-8;
      options.integrator.atol = 1e-10;
      heom::Solver<Exec> together(Exec(), members, shape.depth, options);
      together.set_initial_states(std::vector<heom::Matrix>(4, shape.rho0));
      std::vector<std::vector<heom::Matrix>> rho(4);
      together.run(times, [&](const heom::Snapshot<Exec>& s) {
        for (int m = 0; m < 4; ++m) rho[m].push_back(s.rho(m));
      });
      double largest = 0.0, spread = 0.0;
      for (int m = 0; m < 4; ++m) {
        heom::Solver<Exec> alone(Exec(), members[m], shape.depth, options);
        alone.set_initial_state(shape.rho0);
        std::size_t t = 0;
        alone.run(times, [&](const heom::Snapshot<Exec>& s) {
          const heom::Matrix r = s.rho();
          if (method == heom::Method::rk4) {
            EXPECT_EQ(std::memcmp(r.data(), rho[m][t].data(), sizeof(heom::complex) * r.rows() * r.cols()), 0)
                << "member " << m << ", time " << t;
          }
          largest = std::max(largest, heom::max_abs_diff(r, rho[m][t]));
          spread = std::max(spread, heom::max_abs_diff(rho[0][t], rho[m][t]));
          ++t;
        });
      }
      EXPECT_LT(largest, 1e-6);
      EXPECT_GT(spread, 1e-3);  // the members do differ: a batch that mixed them up would show
    }
  }
}

TEST(Batch, DrivenMembersMatchSoloRuns) {
  // Members whose drives differ in amplitude and frequency (a sweep's batch): each member's H(t) at
  // every stage, the shared constant drive's breakpoints stopping every member's steps; rk4 gives a
  // solo run's bits, the adaptive methods its result within the tolerance.
  std::vector<heom::Model> members;
  for (int m = 0; m < 3; ++m) {
    heom::Model model = ht::spin_boson();
    model.add_drive(heom::operators::sigma_x(), heom::DriveShape::cosine(0.1 + 0.2 * m, 0.8 + 0.3 * m));
    model.add_drive(heom::operators::sigma_z(), heom::DriveShape::constant(0.3, 1.0, 2.5));
    members.push_back(model);
  }
  std::vector<double> times;
  for (int i = 0; i <= 8; ++i) times.push_back(0.5 * i);
  for (heom::Method method : {heom::Method::rk4, heom::Method::exp_adams}) {
    SCOPED_TRACE(heom::to_string(method));
    heom::SolverOptions options;
    options.integrator.method = method;
    options.integrator.step = method == heom::Method::rk4 ? 0.01 : 0.0;
    heom::Solver<Exec> together(Exec(), members, 5, options);
    together.set_initial_states(std::vector<heom::Matrix>(3, ht::spin_boson_start));
    std::vector<std::vector<heom::Matrix>> rho(3);
    together.run(times, [&](const heom::Snapshot<Exec>& s) {
      for (int m = 0; m < 3; ++m) rho[m].push_back(s.rho(m));
    });
    double largest = 0.0, spread = 0.0;
    for (int m = 0; m < 3; ++m) {
      heom::Solver<Exec> alone(Exec(), members[m], 5, options);
      alone.set_initial_state(ht::spin_boson_start);
      std::size_t t = 0;
      alone.run(times, [&](const heom::Snapshot<Exec>& s) {
        const heom::Matrix r = s.rho();
        if (method == heom::Method::rk4) {
          EXPECT_EQ(std::memcmp(r.data(), rho[m][t].data(), sizeof(heom::complex) * r.rows() * r.cols()), 0)
              << "member " << m << ", time " << t;
        }
        largest = std::max(largest, heom::max_abs_diff(r, rho[m][t]));
        spread = std::max(spread, heom::max_abs_diff(rho[0][t], rho[m][t]));
        ++t;
      });
    }
    EXPECT_LT(largest, 1e-6);
    EXPECT_GT(spread, 1e-2);  // the drives differ, and so do the members
  }
}

TEST(Batch, OneMemberIsASoloRunBitForBit) {
  const heom::Model model = ht::excitons();
  for (heom::Method method : {heom::Method::exp_adams, heom::Method::dopri5}) {
    heom::SolverOptions options;
    options.integrator.method = method;
    heom::Solver<Exec> batch(Exec(), std::vector<heom::Model>{model}, 3, options), alone(Exec(), model, 3, options);
    batch.set_initial_states({ht::excitons_start()});
    alone.set_initial_state(ht::excitons_start());
    batch.run_until(2.0);
    alone.run_until(2.0);
    EXPECT_EQ(batch.statistics().steps, alone.statistics().steps);
    const heom::Matrix a = batch.rho(), b = alone.rho();
    EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(heom::complex) * 49), 0);
  }
}

TEST(Batch, RefusesMembersOfAnotherShape) {
  std::vector<heom::Model> members = batch::disordered(ht::spin_boson(), 2, 0.1);
  const heom::Matrix sz{{1, 0}, {0, -1}};
  members.push_back(heom::Model(members[0].hamiltonian(), {heom::Bath::drude_lorentz(sz, {0.1, 0.5, 0.9, 2})}));
  try {
    heom::Solver<Exec> solver(Exec(), members, 3);
    ADD_FAILURE() << "a member with another temperature joined the batch";
  } catch (const heom::Error& e) {
    EXPECT_NE(std::string(e.what()).find("member 2 differs"), std::string::npos) << e.what();
  }
  // Members that differ in a Lindblad term alone.
  std::vector<heom::Model> decaying = batch::disordered(ht::spin_boson(), 2, 0.1);
  decaying[1].add_lindblad(heom::Matrix{{0, 0}, {1, 0}}, 0.01);
  EXPECT_THROW(heom::Solver<Exec>(Exec(), decaying, 3), heom::Error);
  heom::Solver<Exec> two(Exec(), batch::disordered(ht::spin_boson(), 2, 0.1), 3);
  EXPECT_THROW(two.set_initial_state(heom::Matrix{{1, 0}, {0, 0}}), heom::Error);
  EXPECT_THROW(two.set_initial_states({heom::Matrix{{1, 0}, {0, 0}}}), heom::Error);
}

TEST(Batch, EnsembleFormsBatchesOfOneShapeAlongTheSchedule) {
  auto members = ht::disordered_spin_bosons(5);  // five temperatures: five shapes
  for (int r = 0; r < 4; ++r)                    // four members of member 0's shape
    members.push_back({heom::Model(heom::with_diagonal_disorder(members[0].model.hamiltonian(), {0.1, 0.1}, 5, r),
                                   members[0].model.baths()),
                       members[0].rho0});
  const auto batches = heom::ensemble_batches(members, ht::ensemble_depth, 3);
  // Member 0's shape: members 0, 5, 6 and 7, 8 (in the schedule's order); the rest alone.
  EXPECT_EQ(batches.front(), (std::vector<int>{0, 5, 6}));
  EXPECT_EQ(batches[1], (std::vector<int>{7, 8}));
  EXPECT_EQ(batches.size(), 6u);
  EXPECT_EQ(heom::ensemble_batches(members, ht::ensemble_depth, 1).size(), members.size());
  // A non-Hermitian start (e.g. A rho for a correlation function) would take the batch off the
  // Hermitian kernel, and the other members off their solo bits: it starts a batch of its own.
  members[6].rho0(0, 1) = 0.5;
  const auto split = heom::ensemble_batches(members, ht::ensemble_depth, 3);
  EXPECT_EQ(split.front(), (std::vector<int>{0, 5, 7}));
  EXPECT_EQ(split.size(), 7u);
}

TEST(Batch, BatchedEnsemblesAreReproducibleAndNearSoloRuns) {
  std::vector<heom::EnsembleMember> members;
  const heom::Model base = ht::spin_boson();
  for (int r = 0; r < 7; ++r)
    members.push_back({heom::Model(heom::with_diagonal_disorder(base.hamiltonian(), {0.2, 0.2}, 9, r), base.baths()),
                       heom::Matrix{{1, 0}, {0, 0}}});
  heom::EnsembleOptions options;
  options.depth = ht::ensemble_depth;
  const auto alone = heom::run_ensemble(Exec(), members, ht::ensemble_times(), options);
  options.batch = 3;
  const auto one = heom::run_ensemble(Exec(), members, ht::ensemble_times(), options);
  ht::expect_same_members(one, heom::run_ensemble(Exec(), members, ht::ensemble_times(), options));
  // Within the tolerance (rtol 1e-8, atol 1e-10 by default) of each member's solo run.
  for (std::size_t i = 0; i < members.size(); ++i)
    for (std::size_t t = 0; t < alone.members[i].rho.size(); ++t)
      EXPECT_LT(heom::max_abs_diff(alone.members[i].rho[t], one.members[i].rho[t]), 1e-6) << i << ", " << t;
  // Members of a batch share its steps.
  EXPECT_EQ(one.members[0].statistics.steps, one.members[1].statistics.steps);
}
