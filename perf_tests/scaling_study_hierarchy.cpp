// The scaling study's measurements on real hierarchies: per-ADO costs and the halos of partitions, as
// whole blocks and as the rows of them that the Hermitian form reads.
#include "scaling_study_hierarchy.hpp"

#include <cmath>
#include <stdexcept>

#include "heom/distributed/halo.hpp"

namespace heom::scaling_study {

std::vector<std::uint64_t> site_projector_rows(int sites) {
  std::vector<std::uint64_t> rows(sites);
  for (int m = 0; m < sites; ++m) rows[m] = std::uint64_t(1) << m;
  return rows;
}

std::vector<std::uint64_t> hermitian_rows_of_exponent(const ModelSpec& m) {
  const std::uint64_t every_row = m.dimension >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << m.dimension) - 1;
  std::vector<std::uint64_t> rows(m.num_exponents, every_row);
  if (!m.dense_coupling)
    for (int k = 0; k < m.num_exponents; ++k) rows[k] = m.coupled_rows.at(k / m.exponents_per_bath);
  return rows;
}

double ado_flops(const Hierarchy& h, const ModelSpec& m, int ado) {
  const double n = m.dimension, n2 = n * n, n3 = n2 * n;
  int neighbours = 0;
  for (int k = 0; k < m.num_exponents; ++k) neighbours += (h.next(ado, k) >= 0) + (h.prev(ado, k) >= 0);
  const int baths = m.dense_coupling ? m.num_exponents / m.exponents_per_bath : 0;
  return 16.0 * n3 * (1 + baths) + 8.0 * n2 * neighbours;
}

double host_cost_units(const Hierarchy& h, int ado) {
  double cost = 2.0;
  for (int k = 0; k < h.num_exponents(); ++k) cost += (h.next(ado, k) >= 0) + (h.prev(ado, k) >= 0);
  return cost;
}

/// The neighbour relation is symmetric, so what p sends to q is q's halo from p.
PartitionAnalysis analyse(const Hierarchy& h, const std::vector<int>& owner, int parts, const std::string& scheme,
                          const std::vector<double>& flops) {
  const int size = h.size(), K = h.num_exponents();
  PartitionAnalysis a;
  a.scheme = scheme;
  a.parts = parts;
  a.owned.assign(parts, 0);
  a.halo.assign(parts, 0);
  a.interior.assign(parts, 0);
  a.sent.assign(parts, 0);
  a.peers.assign(parts, 0);
  a.received_from.assign(parts, std::vector<std::int64_t>(parts, 0));
  a.flops.assign(parts, 0.0);
  a.interior_flops.assign(parts, 0.0);
  a.host_cost.assign(parts, 0.0);
  a.interior_host_cost.assign(parts, 0.0);

  std::vector<int> start(parts + 1, 0), members(size);  // ADOs grouped by part (counting sort)
  for (int ado = 0; ado < size; ++ado) ++start[owner[ado] + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<int> fill(start.begin(), start.end() - 1);
  for (int ado = 0; ado < size; ++ado) members[fill[owner[ado]]++] = ado;

  std::vector<int> counted_for(size, -1);  // the last part whose halo counted this ADO
  for (int p = 0; p < parts; ++p) {
    for (int i = start[p]; i < start[p + 1]; ++i) {
      const int ado = members[i];
      bool interior = true;
      for (int k = 0; k < K; ++k)
        for (int b : {h.next(ado, k), h.prev(ado, k)}) {
          if (b < 0 || owner[b] == p) continue;
          interior = false;
          if (counted_for[b] != p) {
            counted_for[b] = p;
            ++a.received_from[p][owner[b]];
          }
        }
      const double cost = host_cost_units(h, ado);
      ++a.owned[p];
      a.flops[p] += flops[ado];
      a.host_cost[p] += cost;
      if (interior) {
        ++a.interior[p];
        a.interior_flops[p] += flops[ado];
        a.interior_host_cost[p] += cost;
      }
    }
  }
  for (int p = 0; p < parts; ++p)
    for (int q = 0; q < parts; ++q) {
      a.halo[p] += a.received_from[p][q];
      a.sent[p] += a.received_from[q][p];
      a.peers[p] += a.received_from[p][q] > 0;
    }
  return a;
}

std::vector<int> balanced_owner(const Partition& partition, int size) {
  std::vector<int> owner(size);
  for (int p = 0; p < partition.parts(); ++p)
    for (int ado = partition.first(p); ado < partition.last(p); ++ado) owner[ado] = p;
  return owner;
}

std::vector<int> tier_owner(const Hierarchy& h, int parts) {
  const int size = h.size(), depth = h.depth();
  std::vector<int> level(size), start(depth + 2, 0), order(size);
  for (int ado = 0; ado < size; ++ado) ++start[(level[ado] = h.level(ado)) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  for (int ado = 0; ado < size; ++ado) order[start[level[ado]]++] = ado;  // stable: lexicographic within a level
  std::vector<int> owner(size);
  for (int i = 0; i < size; ++i) owner[order[i]] = static_cast<int>(static_cast<std::int64_t>(i) * parts / size);
  return owner;
}

void check_against_heom(const Hierarchy& h, const Partition& partition, const ModelSpec& m,
                        const PartitionAnalysis& a) {
  const PartitionStatistics s = partition_statistics(h, partition, m.dimension);
  for (int p = 0; p < a.parts; ++p) {
    const int interior = HaloPlan::make(h, partition, p).interior_count();
    const bool same = s.owned[p] == a.owned[p] && s.halo[p] == a.halo[p] && s.peers[p] == a.peers[p] &&
                      s.bytes_received[p] == static_cast<std::uint64_t>(a.halo[p] * block_bytes(m)) &&
                      interior == a.interior[p];
    if (!same)
      throw std::runtime_error(m.key + ": part " + std::to_string(p) + " of " + std::to_string(a.parts) +
                               " disagrees with heom::partition_statistics / HaloPlan");
  }
  if (std::abs(s.largest_halo_ratio - a.largest_halo_ratio()) > 1e-12 ||
      std::abs(s.total_halo_ratio - a.total_halo_ratio()) > 1e-12)
    throw std::runtime_error(m.key + ": halo ratios disagree with heom::partition_statistics");
}

void measure_hermitian_rows(const Hierarchy& h, const Partition& partition, const ModelSpec& m, PartitionAnalysis& a) {
  const std::vector<std::uint64_t> rows_of_exponent = hermitian_rows_of_exponent(m);
  a.rows_received_from.assign(a.parts, std::vector<std::int64_t>(a.parts, 0));
  std::vector<std::vector<std::int64_t>> rows_sent_to(a.parts, std::vector<std::int64_t>(a.parts, 0));
  // One part's plan at a time: all of them at once would hold the hierarchy's tables again.
  for (int p = 0; p < a.parts; ++p) {
    const HaloPlan plan = HaloPlan::make(h, partition, p);
    const HaloRows rows = HaloRows::make(h, partition, plan, m.dimension, rows_of_exponent);
    for (std::size_t i = 0; i < plan.receive_from.size(); ++i)
      a.rows_received_from[p][plan.receive_from[i]] = rows.receive_offset[i + 1] - rows.receive_offset[i];
    for (std::size_t i = 0; i < plan.send_to.size(); ++i)
      rows_sent_to[p][plan.send_to[i]] = rows.send_offset[i + 1] - rows.send_offset[i];
  }
  for (int p = 0; p < a.parts; ++p)
    for (int q = 0; q < a.parts; ++q)
      if (rows_sent_to[q][p] != a.rows_received_from[p][q])
        throw std::runtime_error(m.key + ": part " + std::to_string(q) + " of " + std::to_string(a.parts) +
                                 " sends part " + std::to_string(p) + " other rows than it receives (heom::HaloRows)");
}

}  // namespace heom::scaling_study
