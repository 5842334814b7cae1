// The halo of a part of a split hierarchy: the blocks it reads from other parts (HaloPlan), and
// their rows that the Hermitian form reads (HaloRows).
#include "heom/distributed/halo.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "heom/core/error.hpp"

namespace heom {

HaloPlan HaloPlan::make(const Hierarchy& hierarchy, const Partition& partition, int part) {
  if (part < 0 || part >= partition.parts())
    throw Error("halo plan: part " + std::to_string(part) + " of " + std::to_string(partition.parts()));
  const int K = hierarchy.num_exponents();
  HaloPlan plan;
  plan.part = part;
  plan.first = partition.first(part);
  plan.owned = partition.owned(part);
  plan.num_exponents = K;
  const int first = plan.first, last = partition.last(part);
  auto owned = [&](int ado) { return ado >= first && ado < last; };

  // Remote neighbours of owned ADOs (to receive), and owned neighbours of remote ADOs (to send): the
  // same relation seen from both ends.
  // (A hierarchy holding another part's tables, or none, computes the neighbours: plans list them.)
  const std::size_t rows = static_cast<std::size_t>(plan.owned) * K;
  std::vector<int> next(rows), prev(rows);
  for (int a = first; a < last; ++a) {
    const std::size_t row = static_cast<std::size_t>(a - first) * K;
    hierarchy.neighbours(a, next.data() + row, prev.data() + row);
  }
  std::vector<int> remote;                 // global
  std::vector<std::pair<int, int>> sends;  // (destination, global ado)
  for (int a = first; a < last; ++a)
    for (int k = 0; k < K; ++k) {
      const std::size_t i = static_cast<std::size_t>(a - first) * K + k;
      for (int b : {next[i], prev[i]})
        if (b >= 0 && !owned(b)) {
          remote.push_back(b);
          sends.emplace_back(partition.owner(b), a);
        }
    }
  std::sort(remote.begin(), remote.end());
  remote.erase(std::unique(remote.begin(), remote.end()), remote.end());
  std::sort(sends.begin(), sends.end());
  sends.erase(std::unique(sends.begin(), sends.end()), sends.end());

  // Ascending global order is ascending owner order too (ranges are contiguous).
  plan.halo = remote;
  for (std::size_t h = 0; h < remote.size(); ++h) {
    const int source = partition.owner(remote[h]);
    if (plan.receive_from.empty() || plan.receive_from.back() != source) {
      plan.receive_from.push_back(source);
      plan.receive_offset.push_back(static_cast<int>(h));
    }
  }
  plan.receive_offset.push_back(static_cast<int>(remote.size()));
  for (const auto& [destination, ado] : sends) {
    if (plan.send_to.empty() || plan.send_to.back() != destination) {
      plan.send_to.push_back(destination);
      plan.send_offset.push_back(static_cast<int>(plan.send_ados.size()));
    }
    plan.send_ados.push_back(ado - first);
  }
  plan.send_offset.push_back(static_cast<int>(plan.send_ados.size()));

  auto local = [&](int b) -> int {
    if (b < 0) return -1;
    if (owned(b)) return b - first;
    return plan.owned + static_cast<int>(std::lower_bound(remote.begin(), remote.end(), b) - remote.begin());
  };
  for (int& b : next) b = local(b);
  for (int& b : prev) b = local(b);
  plan.next = std::move(next);
  plan.prev = std::move(prev);
  plan.labels.reserve(rows);
  for (int a = first; a < last; ++a) {
    if (hierarchy.holds(a)) {
      const auto row = hierarchy.labels_table().begin() + static_cast<std::size_t>(a - hierarchy.held_first()) * K;
      plan.labels.insert(plan.labels.end(), row, row + K);
    } else {
      const std::vector<int> label = hierarchy.label(a);
      plan.labels.insert(plan.labels.end(), label.begin(), label.end());
    }
  }
  return plan;
}

bool HaloPlan::reads_halo(int ado) const {
  for (int k = 0; k < num_exponents; ++k) {
    const std::size_t i = static_cast<std::size_t>(ado) * num_exponents + k;
    if (next[i] >= owned || prev[i] >= owned) return true;
  }
  return false;
}

int HaloPlan::interior_count() const {
  int count = 0;
  for (int a = 0; a < owned; ++a) count += !reads_halo(a);
  return count;
}

HaloRows HaloRows::make(const Hierarchy& hierarchy, const Partition& partition, const HaloPlan& plan, int n,
                        const std::vector<std::uint64_t>& rows_of_exponent) {
  if (n > 64) throw Error("HaloRows: rows are bits of a 64-bit mask, but n = " + std::to_string(n));
  // The rows of global ADO `ado` that the ADOs of `reader` read: through next(a, k) = ado from
  // a = prev(ado, k), and through prev(a, k) = ado from a = next(ado, k).
  // (A halo ADO is not held by the hierarchy of a share: its neighbours are computed, once each.)
  const int K = hierarchy.num_exponents();
  std::vector<int> next(K), prev(K);
  auto rows_read = [&](int ado, int reader) {
    std::uint64_t rows = 0;
    hierarchy.neighbours(ado, next.data(), prev.data());
    for (int k = 0; k < K; ++k)
      for (int a : {prev[k], next[k]})
        if (a >= 0 && partition.owner(a) == reader) rows |= rows_of_exponent[k];
    return rows;
  };
  auto add_rows = [n](std::vector<std::int64_t>& to, std::int64_t block, std::uint64_t rows) {
    for (int i = 0; i < n; ++i)
      if (rows >> i & 1) to.push_back((block * n + i) * n);
  };
  HaloRows r;
  r.send_offset.push_back(0);
  for (std::size_t peer = 0; peer < plan.send_to.size(); ++peer) {
    for (int j = plan.send_offset[peer]; j < plan.send_offset[peer + 1]; ++j)
      add_rows(r.send_rows, plan.send_ados[j], rows_read(plan.first + plan.send_ados[j], plan.send_to[peer]));
    r.send_offset.push_back(static_cast<int>(r.send_rows.size()));
  }
  r.receive_offset.push_back(0);
  for (std::size_t peer = 0; peer < plan.receive_from.size(); ++peer) {
    for (int h = plan.receive_offset[peer]; h < plan.receive_offset[peer + 1]; ++h)
      add_rows(r.receive_rows, plan.owned + h, rows_read(plan.halo[h], plan.part));
    r.receive_offset.push_back(static_cast<int>(r.receive_rows.size()));
  }
  return r;
}

PartitionStatistics partition_statistics(const Hierarchy& hierarchy, const Partition& partition, int dimension) {
  PartitionStatistics s;
  const std::uint64_t block_bytes = 16ull * dimension * dimension;
  std::uint64_t owned_total = 0, halo_total = 0;
  for (int p = 0; p < partition.parts(); ++p) {
    const HaloPlan plan = HaloPlan::make(hierarchy, partition, p);
    const int halo = static_cast<int>(plan.halo.size());
    s.owned.push_back(plan.owned);
    s.halo.push_back(halo);
    s.peers.push_back(static_cast<int>(plan.receive_from.size()));
    s.sent.push_back(static_cast<int>(plan.send_ados.size()));
    s.bytes_received.push_back(block_bytes * halo);
    owned_total += plan.owned;
    halo_total += halo;
    if (plan.owned > 0) s.largest_halo_ratio = std::max(s.largest_halo_ratio, static_cast<double>(halo) / plan.owned);
  }
  s.total_halo_ratio = owned_total > 0 ? static_cast<double>(halo_total) / owned_total : 0.0;
  return s;
}

}  // namespace heom
