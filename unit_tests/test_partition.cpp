// Partitions of the hierarchy between devices and each part's halo plan.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "heom/distributed/halo.hpp"
#include "heom/hierarchy/partition.hpp"
#include "test_support.hpp"

namespace {

using heom::HaloPlan;
using heom::Hierarchy;
using heom::Partition;

TEST(Partition, BalancedRangesCoverTheHierarchyOnUnitBoundaries) {
  const Hierarchy h(14, 4);  // FMO-like: 3060 ADOs
  for (int parts = 1; parts <= 8; ++parts) {
    const Partition p = Partition::balanced(h, parts);
    ASSERT_EQ(p.parts(), parts);
    EXPECT_EQ(p.first(0), 0);
    EXPECT_EQ(p.last(parts - 1), h.size());
    for (int q = 0; q < parts; ++q) {
      EXPECT_LE(p.first(q), p.last(q));
      EXPECT_TRUE(p.first(q) % Partition::ados_per_unit == 0 || p.first(q) == h.size());
      EXPECT_GT(p.owned(q), 0) << parts << " parts of 48 units: none should be empty";
    }
    // Balanced to within one unit's cost: no part more than 1.5x the mean share here.
    for (int q = 0; q < parts; ++q) EXPECT_LT(p.owned(q), 1.5 * h.size() / parts + Partition::ados_per_unit);
  }
}

TEST(Partition, MorePartsThanUnitsLeaveTheLastOnesEmpty) {
  const Hierarchy h(4, 4);  // 70 ADOs: 2 units
  const Partition p = Partition::balanced(h, 4);
  int owning = 0;
  for (int q = 0; q < 4; ++q) owning += p.owned(q) > 0;
  EXPECT_EQ(owning, 2);
  EXPECT_EQ(p.owned(0), 64);  // the first parts own, the last ones are empty
  EXPECT_EQ(p.owned(1), 6);
  EXPECT_EQ(p.owner(0), 0);
  EXPECT_EQ(p.owner(h.size() - 1), 1);
}

TEST(Partition, OwnerSkipsEmptyParts) {
  const Hierarchy h(6, 4);  // 210 ADOs
  const Partition p = Partition::from_boundaries(h, {0, 64, 64, 192, 210});
  EXPECT_EQ(p.owner(0), 0);
  EXPECT_EQ(p.owner(63), 0);
  EXPECT_EQ(p.owner(64), 2);
  EXPECT_EQ(p.owner(191), 2);
  EXPECT_EQ(p.owner(192), 3);
  EXPECT_EQ(p.owner(209), 3);
  EXPECT_THROW(Partition::from_boundaries(h, {0, 100, 210}), heom::Error);  // not on a unit boundary
  EXPECT_THROW(Partition::from_boundaries(h, {0, 128, 64, 210}), heom::Error);
  EXPECT_THROW(Partition::from_boundaries(h, {0, 64}), heom::Error);
  EXPECT_THROW(Partition::balanced(h, 0), heom::Error);
}

// Every neighbour of an owned ADO is found at its local index, and what part p sends to q is what q
// receives from p, in the same order.
TEST(HaloPlan, LocalTablesAndMessagesAgreeWithTheHierarchy) {
  const Hierarchy h(5, 6);  // 462 ADOs
  const Partition p = Partition::from_boundaries(h, {0, 128, 128, 320, 462});
  std::vector<HaloPlan> plans;
  for (int q = 0; q < p.parts(); ++q) plans.push_back(HaloPlan::make(h, p, q));
  for (const HaloPlan& plan : plans) {
    auto global = [&](int local) { return local < plan.owned ? plan.first + local : plan.halo[local - plan.owned]; };
    for (int a = 0; a < plan.owned; ++a)
      for (int k = 0; k < h.num_exponents(); ++k) {
        const std::size_t i = static_cast<std::size_t>(a) * h.num_exponents() + k;
        const int next = h.next(plan.first + a, k), prev = h.prev(plan.first + a, k);
        EXPECT_EQ(plan.next[i] < 0 ? -1 : global(plan.next[i]), next);
        EXPECT_EQ(plan.prev[i] < 0 ? -1 : global(plan.prev[i]), prev);
        EXPECT_EQ(plan.labels[i], h.label(plan.first + a, k));
      }
    for (int g : plan.halo) EXPECT_NE(p.owner(g), plan.part);
    for (std::size_t r = 0; r < plan.receive_from.size(); ++r) {
      const HaloPlan& source = plans[plan.receive_from[r]];
      const auto it = std::find(source.send_to.begin(), source.send_to.end(), plan.part);
      ASSERT_NE(it, source.send_to.end());
      const std::size_t s = it - source.send_to.begin();
      std::vector<int> sent, received;
      for (int j = source.send_offset[s]; j < source.send_offset[s + 1]; ++j)
        sent.push_back(source.first + source.send_ados[j]);
      for (int j = plan.receive_offset[r]; j < plan.receive_offset[r + 1]; ++j) received.push_back(plan.halo[j]);
      EXPECT_EQ(sent, received) << "part " << source.part << " to part " << plan.part;
    }
    std::size_t sends = 0;
    for (const HaloPlan& other : plans)
      sends += std::count(other.receive_from.begin(), other.receive_from.end(), plan.part);
    EXPECT_EQ(sends, plan.send_to.size());
  }
  EXPECT_EQ(plans[1].owned, 0);
  EXPECT_TRUE(plans[1].halo.empty());
  EXPECT_TRUE(plans[1].send_to.empty());
}

TEST(HaloPlan, OnePartHasNoHalo) {
  const Hierarchy h(4, 5);
  const HaloPlan plan = HaloPlan::make(h, Partition::balanced(h, 1), 0);
  EXPECT_EQ(plan.owned, h.size());
  EXPECT_TRUE(plan.halo.empty());
  EXPECT_EQ(plan.interior_count(), h.size());
  EXPECT_EQ(plan.next, h.next_table());
  EXPECT_EQ(plan.prev, h.prev_table());
}

// FMO (14 exponents) at depth 5 split in two: a halo of about two thirds of what each part owns (the
// design's estimate of 0.66, bounded loosely), whole blocks of 16 n^2 bytes, one peer each.
TEST(PartitionStatistics, FmoDepthFiveInTwo) {
  const Hierarchy h(14, 5);
  const auto s = heom::partition_statistics(h, Partition::balanced(h, 2), 7);
  EXPECT_EQ(s.owned[0] + s.owned[1], h.size());
  EXPECT_GT(s.total_halo_ratio, 0.3);
  EXPECT_LT(s.total_halo_ratio, 1.0);
  EXPECT_EQ(s.bytes_received[0], 16ull * 49 * s.halo[0]);
  EXPECT_EQ(s.peers[0], 1);
  EXPECT_EQ(s.sent[0], s.halo[1]);  // what one part sends is what the other receives
  EXPECT_EQ(s.sent[1], s.halo[0]);
}

}  // namespace

namespace {

// A device's share of the memory: its owned blocks in every vector, the halo in the generator's
// inputs alone, the send buffer, and the tables of its own ADOs on the device and the host (the
// hierarchy's share and the halo plan's copy): nothing that grows with the whole hierarchy.
TEST(MemoryPlan, ShareOfASplitHierarchy) {
  const heom::MemoryPlan whole = heom::MemoryPlan::make(7, 14, 5, 7);
  const std::uint64_t block = 16 * 49, per_ado_tables = 12 * 14 + 16;
  EXPECT_EQ(whole.bytes_total, 7 * whole.num_ados * block + 2 * whole.num_ados * per_ado_tables);
  const heom::MemoryPlan share = whole.share(/*local=*/8000, /*owned=*/5000, /*input_vectors=*/2, /*sent=*/1500);
  EXPECT_EQ(share.bytes_per_vector, 5000 * block);
  EXPECT_EQ(share.bytes_halo, 3000 * block);
  EXPECT_EQ(share.bytes_exchange, 1500 * block);
  EXPECT_EQ(share.bytes_total, (7 * 5000 + 2 * 3000 + 1500) * block + 5000 * (2 * per_ado_tables + 12 * 14));
  const heom::MemoryPlan quarter = whole.share(4000, 2500, 2, 1500);
  EXPECT_LT(quarter.bytes_tables, share.bytes_tables * 0.51);
  EXPECT_LT(share.bytes_total, whole.bytes_total);
  // A share that does not fit says so, and asks for more devices rather than a smaller depth.
  try {
    share.require_fits(share.bytes_total - 1, "test device");
    ADD_FAILURE() << "a share one byte too large fitted";
  } catch (const heom::OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("a share of 8000 of 11628 ADOs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("split it between more devices"), std::string::npos) << e.what();
  }
}

}  // namespace
