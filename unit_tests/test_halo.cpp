// The halo alone, on a hierarchy small enough to check by hand: two exponents at depth 10 (66 ADOs)
// split after ADO 64, its HaloPlan, the rows HaloRows lists for the Hermitian form, and HaloExchange
// moving blocks and rows between two in-process devices, directly and staged through the host.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "heom/distributed/detail/halo_exchange.hpp"
#include "heom/distributed/halo.hpp"
#include "heom/distributed/in_process.hpp"

namespace {

using heom::HaloPlan;
using heom::HaloRows;
using heom::Hierarchy;
using heom::Partition;
using Rows = std::vector<std::int64_t>;

// The last ADOs in lexicographic order (n_1 outermost): 61 = (8,1), 62 = (8,2), 63 = (9,0),
// 64 = (9,1), 65 = (10,0). Part 1 owns 64 and 65; part 0 the rest.
//   part 1 reads 61 (the prev through exponent 0 of 64) and 63 (prev of 64 through 1, of 65 through 0);
//   part 0 reads 64 (next of 61 through 0, of 63 through 1) and 65 (next of 63 through 0).
const Hierarchy& hierarchy() {
  static const Hierarchy h(2, 10);
  return h;
}
Partition two_parts() { return Partition::from_boundaries(hierarchy(), {0, 64, 66}); }

// n = 3; exponent 0 reads row 1 of its neighbours, exponent 1 rows 0 and 2.
constexpr int n = 3;
const std::vector<std::uint64_t> rows_of_exponent = {0b010, 0b101};
std::int64_t row(int local_block, int i) { return (static_cast<std::int64_t>(local_block) * n + i) * n; }

TEST(HaloPlan, TheHandCheckedHierarchyHasTheLabelsAssumed) {
  const Hierarchy& h = hierarchy();
  ASSERT_EQ(h.size(), 66);
  EXPECT_EQ(h.label(61), (std::vector<int>{8, 1}));
  EXPECT_EQ(h.label(62), (std::vector<int>{8, 2}));
  EXPECT_EQ(h.label(63), (std::vector<int>{9, 0}));
  EXPECT_EQ(h.label(64), (std::vector<int>{9, 1}));
  EXPECT_EQ(h.label(65), (std::vector<int>{10, 0}));
}

TEST(HaloPlan, ListsWhatEachPartReadsAndSends) {
  const HaloPlan p0 = HaloPlan::make(hierarchy(), two_parts(), 0);
  EXPECT_EQ(p0.owned, 64);
  EXPECT_EQ(p0.halo, (std::vector<int>{64, 65}));
  EXPECT_EQ(p0.receive_from, (std::vector<int>{1}));
  EXPECT_EQ(p0.receive_offset, (std::vector<int>{0, 2}));
  EXPECT_EQ(p0.send_to, (std::vector<int>{1}));
  EXPECT_EQ(p0.send_ados, (std::vector<int>{61, 63}));
  EXPECT_EQ(p0.interior_count(), 62);  // all but 61 and 63

  const HaloPlan p1 = HaloPlan::make(hierarchy(), two_parts(), 1);
  EXPECT_EQ(p1.first, 64);
  EXPECT_EQ(p1.owned, 2);
  EXPECT_EQ(p1.halo, (std::vector<int>{61, 63}));
  EXPECT_EQ(p1.send_ados, (std::vector<int>{0, 1}));  // local: 64, 65
  EXPECT_EQ(p1.interior_count(), 0);
  // 64's neighbours in local numbering: prev through 0 is 61 (halo 0: local 2), through 1 is 63 (local 3).
  EXPECT_EQ(p1.prev[0 * 2 + 0], 2);
  EXPECT_EQ(p1.prev[0 * 2 + 1], 3);
  EXPECT_EQ(p1.next[0 * 2 + 0], -1);
}

TEST(HaloRows, ListsTheUnionOfTheRowsTheReadersRead) {
  const Partition partition = two_parts();
  const HaloPlan p0 = HaloPlan::make(hierarchy(), partition, 0), p1 = HaloPlan::make(hierarchy(), partition, 1);
  const HaloRows r0 = HaloRows::make(hierarchy(), partition, p0, n, rows_of_exponent);
  const HaloRows r1 = HaloRows::make(hierarchy(), partition, p1, n, rows_of_exponent);
  // Part 0 receives 64 (read through 0 by 61 and through 1 by 63: every row) and 65 (through 0 by 63: row 1),
  // into local blocks 64 and 65.
  EXPECT_EQ(r0.receive_rows, (Rows{row(64, 0), row(64, 1), row(64, 2), row(65, 1)}));
  EXPECT_EQ(r0.receive_offset, (std::vector<int>{0, 4}));
  // It sends 61 (read through 0 by 64: row 1) and 63 (through 0 by 65, through 1 by 64: every row).
  EXPECT_EQ(r0.send_rows, (Rows{row(61, 1), row(63, 0), row(63, 1), row(63, 2)}));
  // Part 1 sends and receives the same rows from its end: 64 and 65 are its local 0 and 1; 61 and 63
  // arrive in its local blocks 2 and 3.
  EXPECT_EQ(r1.send_rows, (Rows{row(0, 0), row(0, 1), row(0, 2), row(1, 1)}));
  EXPECT_EQ(r1.receive_rows, (Rows{row(2, 1), row(3, 0), row(3, 1), row(3, 2)}));
  EXPECT_EQ(r1.send_offset, (std::vector<int>{0, 4}));
  EXPECT_THROW(HaloRows::make(hierarchy(), partition, p0, 65, std::vector<std::uint64_t>(2, 1)), heom::Error);
}

// Each owned element holds a value naming its global ADO and position; the halo starts at -1.
heom::device_complex value(int global_ado, int element) { return {100.0 * global_ado + element, -1.0 * element}; }

/// Exchanges on two in-process devices and checks every halo element: those the exchange moves equal
/// their owner's, the others keep -1.
void exchange_and_check(bool rows_only, bool staged) {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const Partition partition = two_parts();
  std::vector<std::vector<heom::device_complex>> results(2);
  heom::run_on_devices(Exec(), 2, [&](const Exec& exec, int d, std::shared_ptr<const heom::Communicator> comm) {
    const HaloPlan plan = HaloPlan::make(hierarchy(), partition, d);
    const HaloRows rows = HaloRows::make(hierarchy(), partition, plan, n, rows_of_exponent);
    const heom::impl::HaloExchange<Exec> exchange(exec, plan, n, comm, &rows, staged);
    Kokkos::View<heom::device_complex*, Kokkos::LayoutRight, Exec::memory_space> local(
        "heom::test::local", static_cast<std::size_t>(plan.local_size()) * n * n);
    auto host = Kokkos::create_mirror_view(local);
    for (int a = 0; a < plan.local_size(); ++a)
      for (int e = 0; e < n * n; ++e) host(a * n * n + e) = a < plan.owned ? value(plan.first + a, e) : -1.0;
    Kokkos::deep_copy(exec, local, host);
    exchange.start(exec, local.data(), rows_only);
    exchange.finish(exec, local.data(), rows_only);
    Kokkos::deep_copy(exec, host, local);
    exec.fence();
    results[d].assign(host.data(), host.data() + host.extent(0));
  });
  for (int d = 0; d < 2; ++d) {
    const HaloPlan plan = HaloPlan::make(hierarchy(), partition, d);
    const HaloRows rows = HaloRows::make(hierarchy(), partition, plan, n, rows_of_exponent);
    for (int h = 0; h < static_cast<int>(plan.halo.size()); ++h)
      for (int i = 0; i < n; ++i) {
        const std::int64_t at = row(plan.owned + h, i);
        const bool moved =
            !rows_only || std::find(rows.receive_rows.begin(), rows.receive_rows.end(), at) != rows.receive_rows.end();
        for (int j = 0; j < n; ++j) {
          const heom::device_complex expected = moved ? value(plan.halo[h], i * n + j) : heom::device_complex(-1.0);
          EXPECT_EQ(results[d][at + j], expected)
              << "device " << d << ", ADO " << plan.halo[h] << ", element (" << i << ", " << j << ")"
              << (rows_only ? ", rows only" : "") << (staged ? ", staged" : "");
        }
      }
    for (int a = 0; a < plan.owned; ++a)  // (sending leaves the owned blocks as they were)
      for (int e = 0; e < n * n; ++e) ASSERT_EQ(results[d][a * n * n + e], value(plan.first + a, e));
  }
}

TEST(HaloExchange, MovesWholeBlocks) { exchange_and_check(false, false); }
TEST(HaloExchange, MovesTheListedRowsAlone) { exchange_and_check(true, false); }
// The path of a GPU whose communicator takes host buffers only, run on the CPU.
TEST(HaloExchange, MovesBlocksStagedThroughTheHost) { exchange_and_check(false, true); }
TEST(HaloExchange, MovesRowsStagedThroughTheHost) { exchange_and_check(true, true); }

}  // namespace
