// ADO enumeration, order, neighbour tables, and the memory plan's refusal of oversized hierarchies.
#include <gtest/gtest.h>

#include <set>

#include "test_support.hpp"

namespace {

using heom::Hierarchy;
using heom::MemoryPlan;

std::uint64_t binomial(int n, int k) {
  std::uint64_t c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

TEST(Hierarchy, CountIsBinomial) {
  for (int K = 0; K <= 8; ++K)
    for (int L = 0; L <= 7; ++L) {
      const Hierarchy h(K, L);
      EXPECT_EQ(static_cast<std::uint64_t>(h.size()), binomial(K + L, L)) << "K=" << K << " L=" << L;
      EXPECT_EQ(Hierarchy::count(K, L), binomial(K + L, L));
    }
  EXPECT_EQ(Hierarchy::count(14, 5), 11628u);  // FMO, 2 exponents per site, depth 5
  EXPECT_EQ(Hierarchy::count(6, 10), 8008u);
  EXPECT_EQ(Hierarchy::count(60, 60), UINT64_MAX);  // saturates rather than wrapping
}

TEST(Hierarchy, LexicographicOrderWithFirstExponentOutermost) {
  const Hierarchy h(2, 2);
  const std::vector<std::vector<int>> expected = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {2, 0}};
  ASSERT_EQ(h.size(), 6);
  for (int a = 0; a < h.size(); ++a) EXPECT_EQ(h.label(a), expected[a]) << "ADO " << a;

  const Hierarchy big(4, 5);
  for (int a = 1; a < big.size(); ++a) EXPECT_LT(big.label(a - 1), big.label(a)) << "ADO " << a;
}

TEST(Hierarchy, EveryLabelOnceAndIndexOfInvertsLabel) {
  const Hierarchy h(5, 4);
  std::set<std::vector<int>> seen;
  for (int a = 0; a < h.size(); ++a) {
    const auto label = h.label(a);
    int sum = 0;
    for (int x : label) {
      EXPECT_GE(x, 0);
      sum += x;
    }
    EXPECT_LE(sum, 4);
    EXPECT_EQ(h.level(a), sum);
    EXPECT_TRUE(seen.insert(label).second) << "duplicate label at " << a;
    EXPECT_EQ(h.index_of(label), a);
  }
  EXPECT_EQ(h.index_of({0, 0, 0, 0, 5}), -1);  // too deep
  EXPECT_EQ(h.index_of({0, 0, -1, 0, 0}), -1);
  EXPECT_EQ(h.index_of({0, 0, 0}), -1);  // wrong length
}

TEST(Hierarchy, NeighbourTablesAreConsistentBothWays) {
  const Hierarchy h(6, 4);
  const int K = h.num_exponents();
  int links = 0;
  for (int a = 0; a < h.size(); ++a) {
    for (int k = 0; k < K; ++k) {
      auto label = h.label(a);
      const int up = h.next(a, k);
      if (h.level(a) < h.depth()) {
        ASSERT_GE(up, 0);
        ++label[k];
        EXPECT_EQ(h.label(up), label);
        EXPECT_EQ(h.prev(up, k), a) << "n + e_k - e_k != n";
        --label[k];
        ++links;
      } else {
        EXPECT_EQ(up, -1);
      }
      const int down = h.prev(a, k);
      if (label[k] > 0) {
        ASSERT_GE(down, 0);
        --label[k];
        EXPECT_EQ(h.label(down), label);
        EXPECT_EQ(h.next(down, k), a) << "n - e_k + e_k != n";
      } else {
        EXPECT_EQ(down, -1);
      }
    }
  }
  // Links n -> n + e_k: one per (ADO below the full depth, exponent).
  EXPECT_EQ(links, static_cast<int>(Hierarchy::count(K, h.depth() - 1)) * K);
}

TEST(Hierarchy, RejectsNegativeInput) {
  EXPECT_THROW(Hierarchy(-1, 2), heom::Error);
  EXPECT_THROW(Hierarchy(2, -1), heom::Error);
  EXPECT_THROW(Hierarchy(40, 40), heom::Error);  // more than 2^31 ADOs
}

TEST(MemoryPlan, CountsStateVectorsAndTables) {
  const MemoryPlan p = MemoryPlan::make(7, 14, 5, 9);
  EXPECT_EQ(p.num_ados, 11628u);
  EXPECT_EQ(p.bytes_per_vector, 11628u * 49 * 16);
  EXPECT_EQ(p.bytes_total, 9 * p.bytes_per_vector + p.bytes_tables);
  EXPECT_GT(p.bytes_tables, 11628u * 14 * 12);
}

TEST(MemoryPlan, RefusesOversizedHierarchyNamingLargestDepth) {
  const MemoryPlan p = MemoryPlan::make(7, 14, 8, 9);
  const std::uint64_t budget = MemoryPlan::make(7, 14, 5, 9).bytes_total + 1000;
  EXPECT_EQ(p.largest_fitting_depth(budget), 5);
  try {
    p.require_fits(budget, "test memory");
    FAIL() << "an oversized hierarchy was accepted";
  } catch (const heom::OutOfMemoryError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("largest depth that fits is 5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("depth 8"), std::string::npos) << msg;
  }
  EXPECT_NO_THROW(p.require_fits(p.bytes_total, "test memory"));
  EXPECT_NE(heom::format_bytes(3ull << 30).find("3.00 GiB"), std::string::npos);
}

}  // namespace
