// Ensembles that stream (heom::stream_ensemble) in one process: members made when scheduled, results
// handed on in member order whatever order they finish in, and the bits of run_ensemble's in-memory
// results and mean.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "ensemble_cases.hpp"
#include "heom/heom.hpp"

namespace {

namespace ht = heom::testing;
using Exec = Kokkos::DefaultHostExecutionSpace;

/// A stream over `members`, made on demand (counted), its results collected in the order handed on.
struct Collected {
  std::vector<std::int64_t> order;
  heom::EnsembleResult result;
  int made = 0;
};

heom::EnsembleSummary stream(const std::vector<heom::EnsembleMember>& members, const heom::EnsembleOptions& options,
                             Collected& out, std::vector<std::vector<std::int64_t>> units = {}) {
  std::mutex lock;
  heom::EnsembleStream s;
  s.members = static_cast<std::int64_t>(members.size());
  s.make = [&](std::int64_t i) {
    const std::lock_guard<std::mutex> guard(lock);
    ++out.made;
    return members.at(i);
  };
  if (!units.empty()) {
    s.units = static_cast<std::int64_t>(units.size());
    s.unit = [units](std::int64_t u) { return units.at(u); };
  }
  out.result.members.resize(members.size());
  s.sink = [&](std::int64_t i, heom::MemberResult&& r) {
    out.order.push_back(i);
    out.result.members.at(i) = std::move(r);
  };
  const heom::EnsembleSummary summary = heom::stream_ensemble(Exec(), s, ht::ensemble_times(), options);
  out.result.mean = summary.mean;
  return summary;
}

void expect_same_mean(const std::vector<heom::Matrix>& a, const std::vector<heom::Matrix>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t t = 0; t < a.size(); ++t)
    EXPECT_EQ(std::memcmp(a[t].data(), b[t].data(), sizeof(heom::complex) * a[t].rows() * a[t].cols()), 0)
        << "time " << t;
}

std::vector<std::int64_t> member_order(std::size_t count) {
  std::vector<std::int64_t> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = static_cast<std::int64_t>(i);
  return order;
}

// Members of uneven cost (their temperatures differ) on 1 and 3 devices, one at a time and in batches of
// 3, in member order and handed out backwards (every result but the last waits): the sink sees member
// order, each member once, and the bits of run_ensemble's results and mean.
TEST(EnsembleStream, TheBitsOfTheInMemoryEnsembleInAnyArrivalOrder) {
  const auto members = ht::disordered_spin_bosons(7);
  for (int batch : {1, 3}) {
    heom::EnsembleOptions options;
    options.depth = ht::ensemble_depth;
    options.batch = batch;
    const heom::EnsembleResult memory = heom::run_ensemble(Exec(), members, ht::ensemble_times(), options);
    for (int devices : {1, 3})
      for (bool backwards : {false, true}) {
        SCOPED_TRACE("batch " + std::to_string(batch) + ", " + std::to_string(devices) + " devices" +
                     (backwards ? ", backwards" : ""));
        std::vector<std::vector<std::int64_t>> units;
        if (backwards)  // the batches run_ensemble forms (members 0-2, 3-5, 6), last first
          for (int u = (7 + batch - 1) / batch - 1; u >= 0; --u) {
            units.emplace_back();
            for (int i = u * batch; i < std::min(7, (u + 1) * batch); ++i) units.back().push_back(i);
          }
        options.devices = devices;
        Collected got;
        const heom::EnsembleSummary summary = stream(members, options, got, units);
        EXPECT_EQ(got.order, member_order(members.size()));
        EXPECT_EQ(got.made, 7);
        EXPECT_EQ(summary.members, 7);
        EXPECT_EQ(summary.workers, devices);
        ht::expect_same_members(memory, got.result);
        expect_same_mean(memory.mean, summary.mean);
        if (devices == 1) {  // backwards, every member but the first unit's waits for member 0
          EXPECT_EQ(summary.most_held, backwards ? static_cast<std::size_t>(7 - batch) : 0u);
        }
      }
  }
}

// Members of two shapes (2x2 and 3x3) in one stream: each run of one shape in a unit is its own batch,
// and the mean is empty as ensemble_mean's is.
TEST(EnsembleStream, UnitsSplitWhereTheShapeChangesAndUnlikeMembersHaveNoMean) {
  auto members = ht::disordered_spin_bosons(4);
  members[1].model = members[0].model.with_hamiltonian(members[1].model.hamiltonian());  // member 0's bath
  const heom::Matrix sz3{{1, 0, 0}, {0, 0, 0}, {0, 0, -1}};
  heom::DrudeLorentz bath;
  bath.lambda = 0.1;
  bath.gamma = 0.5;
  bath.temperature = 0.5;
  bath.terms = 1;
  members[2] = {heom::Model(0.2 * sz3, {heom::Bath::drude_lorentz(sz3, bath)}), heom::Matrix::zeros(3, 3)};
  members[2].rho0(0, 0) = 1.0;
  heom::EnsembleOptions options;
  options.depth = 2;
  options.batch = 4;
  Collected got;
  const heom::EnsembleSummary summary = stream(members, options, got);
  EXPECT_TRUE(summary.mean.empty());
  EXPECT_EQ(got.order, member_order(4));
  EXPECT_EQ(got.result.members[2].rho.back().rows(), 3);
  // Members 0 and 1 shared a batch (one step count), member 3 ran alone after the 3x3 one.
  EXPECT_EQ(got.result.members[0].statistics.steps, got.result.members[1].statistics.steps);
  options.batch = 1;
  Collected alone;
  stream({members[3]}, options, alone);
  ht::expect_same_members(alone.result, heom::EnsembleResult{{}, {}, {got.result.members[3]}, 1});
}

// A member that cannot be made, or cannot run, or a sink that throws: the ensemble ends with its
// message; the sink has seen only the members before it.
TEST(EnsembleStream, AFailureEndsTheStreamWithItsMessage) {
  const auto members = ht::disordered_spin_bosons(6);
  heom::EnsembleOptions options;
  options.depth = ht::ensemble_depth;
  for (int devices : {1, 3}) {
    SCOPED_TRACE(std::to_string(devices) + " devices");
    options.devices = devices;
    heom::EnsembleStream s;
    s.members = 6;
    s.make = [&](std::int64_t i) {
      if (i == 4) throw heom::Error("member 4 cannot be made");
      return members.at(i);
    };
    std::vector<std::int64_t> seen;
    std::mutex lock;
    s.sink = [&](std::int64_t i, heom::MemberResult&&) {
      const std::lock_guard<std::mutex> guard(lock);
      seen.push_back(i);
    };
    try {
      heom::stream_ensemble(Exec(), s, ht::ensemble_times(), options);
      ADD_FAILURE() << "no error";
    } catch (const heom::Error& e) {
      EXPECT_NE(std::string(e.what()).find("member 4 cannot be made"), std::string::npos) << e.what();
    }
    for (std::size_t k = 0; k < seen.size(); ++k) EXPECT_EQ(seen[k], static_cast<std::int64_t>(k));
    EXPECT_LE(seen.size(), 4u);
    s.make = [&](std::int64_t i) { return members.at(i); };
    s.sink = [](std::int64_t i, heom::MemberResult&&) {
      if (i == 2) throw heom::Error("the sink refuses member 2");
    };
    EXPECT_THROW(heom::stream_ensemble(Exec(), s, ht::ensemble_times(), options), heom::Error);
  }
  heom::EnsembleStream empty;
  EXPECT_THROW(heom::stream_ensemble(Exec(), empty, ht::ensemble_times(), options), heom::Error);
  empty.members = 2;
  EXPECT_THROW(heom::stream_ensemble(Exec(), empty, ht::ensemble_times(), options), heom::Error);  // no factory
}

// A result packed for another rank comes back the same, lead currents and all.
TEST(EnsembleStream, PackedResultsComeBackWhole) {
  heom::MemberResult r;
  r.rho = {heom::Matrix{{1.0, {0.25, -0.5}}, {{0.25, 0.5}, 0.0}}, heom::Matrix{{0.5, 0.1}, {0.1, 0.5}}};
  r.lead_currents = {{{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}, {{-1.0, 0.0}, {0.0, 1.0}, {7.0, 8.0}}};
  r.statistics.steps = 17;
  r.statistics.rejected = 2;
  r.statistics.rhs_evaluations = 99;
  r.worker = 3;
  r.wall_time_s = 0.125;
  std::vector<double> packed;
  heom::impl::pack_member_result(5, r, packed);
  heom::impl::pack_member_result(6, heom::MemberResult{{heom::Matrix{{1.0}}}, {}, {}, 0.0, 1}, packed);
  std::vector<std::int64_t> members;
  std::vector<heom::MemberResult> back;
  heom::impl::unpack_member_results(packed, [&](std::int64_t i, heom::MemberResult&& x) {
    members.push_back(i);
    back.push_back(std::move(x));
  });
  ASSERT_EQ(members, (std::vector<std::int64_t>{5, 6}));
  EXPECT_EQ(back[0].lead_currents, r.lead_currents);
  EXPECT_EQ(back[0].statistics.steps, 17);
  EXPECT_EQ(back[0].statistics.rhs_evaluations, 99);
  EXPECT_EQ(back[0].worker, 3);
  ht::expect_same_members(heom::EnsembleResult{{}, {}, {r}, 1}, heom::EnsembleResult{{}, {}, {back[0]}, 1});
  EXPECT_EQ(back[1].rho.front()(0, 0), heom::complex(1.0));
  packed.pop_back();
  EXPECT_THROW(heom::impl::unpack_member_results(packed, [](std::int64_t, heom::MemberResult&&) {}), heom::Error);
}

}  // namespace
