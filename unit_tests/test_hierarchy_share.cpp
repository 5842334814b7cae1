// A rank's share of a hierarchy (Hierarchy::holding): its tables against the whole hierarchy's, the
// ADOs it does not hold computed from their ranks, the partition counted instead of enumerated, and
// the halo plans and rows a share makes against those of the whole hierarchy, for 1-5 parts with
// balanced and uneven boundaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/distributed/halo.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/hierarchy/partition.hpp"

namespace {

using heom::ExponentWeight;
using heom::Hierarchy;
using heom::ImportanceTruncation;
using heom::Partition;

struct ShareCase {
  std::string name;
  std::vector<int> caps;
  int depth;
  ImportanceTruncation truncation;
};

std::vector<ShareCase> share_cases() {
  // Bosonic; a mixed one (fermionic 0/1 caps among bosonic entries and a cap below the depth); an
  // importance-truncated one (kept ADOs lacking neighbours, held ranks computed from kept ranks).
  std::vector<ExponentWeight> weights;
  for (int k = 0; k < 7; ++k) weights.push_back({1.0 / (k + 1), 0.5 + 0.3 * k, k % 3 == 2});
  return {{"bosonic", std::vector<int>(6, 0), 5, {}},
          {"mixed caps", {1, 0, 1, 2, 0, 1, 1, 0}, 5, {}},
          {"truncated", {0, 0, 1, 0, 0, 1, 0}, 6, {0.0001, weights}}};
}

void expect_same_ado(const Hierarchy& share, const Hierarchy& whole, int a, const std::string& where) {
  const int K = whole.num_exponents();
  ASSERT_EQ(share.label(a), whole.label(a)) << where << ", ADO " << a;
  EXPECT_EQ(share.level(a), whole.level(a)) << where << ", ADO " << a;
  std::vector<int> next(K), prev(K);
  share.neighbours(a, next.data(), prev.data());
  for (int k = 0; k < K; ++k) {
    EXPECT_EQ(share.label(a, k), whole.label(a, k)) << where << ", ADO " << a << ", k " << k;
    EXPECT_EQ(next[k], whole.next(a, k)) << where << ", ADO " << a << ", k " << k;
    EXPECT_EQ(prev[k], whole.prev(a, k)) << where << ", ADO " << a << ", k " << k;
  }
  EXPECT_EQ(share.next(a, 0), whole.next(a, 0)) << where << ", ADO " << a;
  EXPECT_EQ(share.prev(a, K - 1), whole.prev(a, K - 1)) << where << ", ADO " << a;
}

/// The balanced partition as it was computed before shares: every ADO's cost from the whole tables.
std::vector<int> enumerated_boundaries(const Hierarchy& h, int parts) {
  const int size = h.size(), unit = Partition::ados_per_unit, units = (size + unit - 1) / unit;
  std::vector<double> before(units + 1, 0.0);
  for (int u = 0; u < units; ++u) {
    double c = 0.0;
    for (int a = u * unit; a < std::min(size, (u + 1) * unit); ++a) {
      c += 2.0;
      for (int k = 0; k < h.num_exponents(); ++k) c += (h.next(a, k) >= 0) + (h.prev(a, k) >= 0);
    }
    before[u + 1] = before[u] + c;
  }
  std::vector<int> first(parts + 1, size);
  first[0] = 0;
  int previous = 0;
  for (int p = 1; p < parts; ++p) {
    const double target = before[units] * p / parts;
    int u = 0;
    while (u < units && before[u + 1] <= target) ++u;
    if (u < units && before[u + 1] - target < target - before[u]) ++u;
    const int lowest = std::min(previous + 1, units), highest = std::max(lowest, units - (parts - p));
    u = std::clamp(u, lowest, highest);
    first[p] = std::min(size, u * unit);
    previous = u;
  }
  return first;
}

TEST(HierarchyShare, LinksBeforeAnAdoAreCountedAsTheTablesGiveThem) {
  for (const ShareCase& c : share_cases()) {
    const Hierarchy whole(c.caps, c.depth, c.truncation);
    const Hierarchy counted = Hierarchy::without_tables(c.caps, c.depth, c.truncation);
    std::uint64_t links = 0;
    for (int a = 0; a <= whole.size(); ++a) {
      ASSERT_EQ(counted.links_before(a), links) << c.name << ", ADO " << a;
      if (a == whole.size()) break;
      for (int k = 0; k < whole.num_exponents(); ++k) links += (whole.next(a, k) >= 0) + (whole.prev(a, k) >= 0);
    }
    EXPECT_GT(links, 0u);
  }
}

TEST(HierarchyShare, TheCountedPartitionIsTheEnumeratedOne) {
  for (const ShareCase& c : share_cases()) {
    const Hierarchy whole(c.caps, c.depth, c.truncation);
    const Hierarchy counted = Hierarchy::without_tables(c.caps, c.depth, c.truncation);
    for (int parts = 1; parts <= 16; ++parts)
      EXPECT_EQ(Partition::balanced(counted, parts).boundaries(), enumerated_boundaries(whole, parts))
          << c.name << ", " << parts << " parts";
  }
  // Wider than any table here would be built for: the counts alone (3.8e8 ADOs).
  const Hierarchy deep = Hierarchy::without_tables(std::vector<int>(40, 0), 8);
  const Partition p = Partition::balanced(deep, 8);
  EXPECT_EQ(p.first(0), 0);
  for (int part = 1; part < 8; ++part) EXPECT_GT(p.first(part), p.first(part - 1));
  EXPECT_EQ(p.last(7), deep.size());
}

TEST(HierarchyShare, ASharesTablesAndLookupsAreTheWholeHierarchys) {
  for (const ShareCase& c : share_cases()) {
    const Hierarchy whole(c.caps, c.depth, c.truncation);
    const Hierarchy counted = Hierarchy::without_tables(c.caps, c.depth, c.truncation);
    EXPECT_EQ(counted.size(), whole.size()) << c.name;
    EXPECT_EQ(counted.truncated(), whole.truncated()) << c.name;
    EXPECT_EQ(whole.truncated(), c.truncation.active()) << c.name << ": the truncation must leave ADOs out";
    EXPECT_TRUE(counted.labels_table().empty()) << c.name;
    const int K = whole.num_exponents(), units = (whole.size() + Partition::ados_per_unit - 1) / 64;
    ASSERT_GE(units, 6) << c.name << ": too few units for uneven boundaries";
    // Balanced splits into 1-5 parts, and uneven ones: an empty part, one unit, the ragged last unit.
    std::vector<std::vector<int>> splits;
    for (int parts = 1; parts <= 5; ++parts) splits.push_back(Partition::balanced(counted, parts).boundaries());
    splits.push_back({0, 64, 64, 5 * 64, whole.size()});
    splits.push_back({0, (units - 1) * 64, whole.size()});
    splits.push_back({0, 128, 192, 3 * 64, 4 * 64, whole.size()});
    for (const std::vector<int>& bounds : splits) {
      const Partition partition = Partition::from_boundaries(counted, bounds);
      for (int part = 0; part < partition.parts(); ++part) {
        const std::string where =
            c.name + ", part " + std::to_string(part) + " of " + std::to_string(partition.parts());
        const Hierarchy share = counted.holding(partition.first(part), partition.last(part));
        EXPECT_EQ(share.held_first(), partition.first(part)) << where;
        EXPECT_EQ(share.held_last(), partition.last(part)) << where;
        ASSERT_EQ(share.labels_table().size(), static_cast<std::size_t>(partition.owned(part)) * K) << where;
        const std::size_t row = static_cast<std::size_t>(partition.first(part)) * K;
        EXPECT_TRUE(
            std::equal(share.labels_table().begin(), share.labels_table().end(), whole.labels_table().begin() + row))
            << where;
        EXPECT_TRUE(std::equal(share.next_table().begin(), share.next_table().end(), whole.next_table().begin() + row))
            << where;
        EXPECT_TRUE(std::equal(share.prev_table().begin(), share.prev_table().end(), whole.prev_table().begin() + row))
            << where;
        // Every ADO, held or not, and lookups by label.
        for (int a = 0; a < whole.size(); a += (share.holds(a) ? 1 : 3)) expect_same_ado(share, whole, a, where);
        for (int a = 0; a < whole.size(); a += 5) EXPECT_EQ(share.index_of(whole.label(a)), a) << where;

        // The halo plan and rows a share makes are those of the whole hierarchy.
        const heom::HaloPlan from_share = heom::HaloPlan::make(share, partition, part);
        const heom::HaloPlan from_whole = heom::HaloPlan::make(whole, partition, part);
        EXPECT_EQ(from_share.halo, from_whole.halo) << where;
        EXPECT_EQ(from_share.send_ados, from_whole.send_ados) << where;
        EXPECT_EQ(from_share.send_to, from_whole.send_to) << where;
        EXPECT_EQ(from_share.receive_from, from_whole.receive_from) << where;
        EXPECT_EQ(from_share.next, from_whole.next) << where;
        EXPECT_EQ(from_share.prev, from_whole.prev) << where;
        EXPECT_EQ(from_share.labels, from_whole.labels) << where;
        std::vector<std::uint64_t> rows(K);
        for (int k = 0; k < K; ++k) rows[k] = std::uint64_t(1) << (k % 3);
        const heom::HaloRows rows_share = heom::HaloRows::make(share, partition, from_share, 3, rows);
        const heom::HaloRows rows_whole = heom::HaloRows::make(whole, partition, from_whole, 3, rows);
        EXPECT_EQ(rows_share.send_rows, rows_whole.send_rows) << where;
        EXPECT_EQ(rows_share.receive_rows, rows_whole.receive_rows) << where;
      }
    }
  }
}

TEST(HierarchyShare, ForEachLabelVisitsTheLabelsInOrder) {
  for (const ShareCase& c : share_cases()) {
    const Hierarchy whole(c.caps, c.depth, c.truncation);
    const Hierarchy counted = Hierarchy::without_tables(c.caps, c.depth, c.truncation);
    int a = 0;
    counted.for_each_label([&](const int* label) {
      ASSERT_LT(a, whole.size());
      EXPECT_EQ(std::vector<int>(label, label + whole.num_exponents()), whole.label(a)) << c.name << ", ADO " << a;
      ++a;
    });
    EXPECT_EQ(a, whole.size()) << c.name;
  }
}

TEST(HierarchyShare, RefusesARangeOutsideTheHierarchy) {
  const Hierarchy counted = Hierarchy::without_tables(std::vector<int>(3, 0), 2);
  EXPECT_THROW(counted.holding(-1, 3), heom::Error);
  EXPECT_THROW(counted.holding(4, 3), heom::Error);
  EXPECT_THROW(counted.holding(0, counted.size() + 1), heom::Error);
  EXPECT_THROW(counted.label(counted.size()), heom::Error);
}

}  // namespace
