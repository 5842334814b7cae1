// Partitions of the hierarchy and each part's halo.
#include "heom/hierarchy/partition.hpp"

#include <algorithm>
#include <string>

#include "heom/core/error.hpp"

namespace heom {
Partition Partition::balanced(const Hierarchy& hierarchy, int parts) {
  if (parts < 1) throw Error("partition: the number of devices must be >= 1, got " + std::to_string(parts));
  const int size = hierarchy.size();
  const int units = (size + ados_per_unit - 1) / ados_per_unit;
  // The generator's work for an ADO, in units of one neighbour term: its system term and damping
  // (about two such terms) and one per neighbour it reads. Of units [0, u): counted where the
  // hierarchy is whole (no rank visits every ADO of a hierarchy it holds a share of); a truncated one
  // visits its ADOs once.
  std::vector<std::uint64_t> visited;
  if (hierarchy.truncated()) {
    visited.assign(units + 1, 0);
    const int K = hierarchy.num_exponents();
    std::vector<int> next(K), prev(K);
    for (int a = 0; a < size; ++a) {
      hierarchy.neighbours(a, next.data(), prev.data());
      std::uint64_t cost = 2;
      for (int k = 0; k < K; ++k) cost += (next[k] >= 0) + (prev[k] >= 0);
      visited[a / ados_per_unit + 1] += cost;
    }
    for (int u = 0; u < units; ++u) visited[u + 1] += visited[u];
  }
  auto cost_before = [&](int unit) {
    if (!visited.empty()) return static_cast<double>(visited[unit]);
    const int ado = std::min(size, unit * ados_per_unit);
    return static_cast<double>(2 * static_cast<std::uint64_t>(ado) + hierarchy.links_before(ado));
  };
  const double total = cost_before(units);
  std::vector<int> first(parts + 1, size);
  first[0] = 0;
  int previous = 0;  // the unit where part p - 1 starts
  for (int p = 1; p < parts; ++p) {
    // The unit boundary nearest to p / parts of the total cost; each part gets at least one unit while
    // units last, so that only trailing parts can be empty (part 0 always owns ADO 0).
    const double target = total * p / parts;
    int unit = 0, beyond = units;  // the units u < unit have cost_before(u + 1) <= target; from beyond on not
    while (unit < beyond) {
      const int middle = unit + (beyond - unit) / 2;
      if (cost_before(middle + 1) <= target)
        unit = middle + 1;
      else
        beyond = middle;
    }
    if (unit < units && cost_before(unit + 1) - target < target - cost_before(unit)) ++unit;
    const int lowest = std::min(previous + 1, units), highest = std::max(lowest, units - (parts - p));
    unit = std::clamp(unit, lowest, highest);
    first[p] = std::min(size, unit * ados_per_unit);
    previous = unit;
  }
  return Partition(std::move(first));
}

Partition Partition::from_boundaries(const Hierarchy& hierarchy, std::vector<int> first) {
  const int size = hierarchy.size();
  if (first.size() < 2 || first.front() != 0 || first.back() != size)
    throw Error("partition: boundaries must run from 0 to the hierarchy's " + std::to_string(size) + " ADOs");
  for (std::size_t p = 1; p < first.size(); ++p) {
    if (first[p] < first[p - 1]) throw Error("partition: boundaries must ascend");
    if (first[p] % ados_per_unit != 0 && first[p] != size)
      throw Error("partition: boundary " + std::to_string(first[p]) + " is not a multiple of " +
                  std::to_string(ados_per_unit) + " ADOs");
  }
  return Partition(std::move(first));
}

int Partition::owner(int ado) const {
  // The last part whose range starts at or before ado and is not empty.
  auto it = std::upper_bound(m_first.begin(), m_first.end() - 1, ado);
  return static_cast<int>(it - m_first.begin()) - 1;
}

}  // namespace heom
