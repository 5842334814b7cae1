// heom::Partition: one hierarchy split between devices as contiguous ranges (what each part reads
// from the others, and what a partition costs: heom/distributed/halo.hpp).
#ifndef HEOM_HIERARCHY_PARTITION_HPP
#define HEOM_HIERARCHY_PARTITION_HPP

#include <cstdint>
#include <vector>

#include "heom/hierarchy/hierarchy.hpp"

namespace heom {

/// Contiguous ranges of the hierarchy's ADO order, one per device ("part"); a part may own none.
/// Every boundary is a multiple of ados_per_unit (or the end of the hierarchy): the integrators' error
/// sums run over fixed chunks of that many ADOs, so that a run gives the same bits on any number of
/// devices. Computed from the hierarchy alone, hence identically on every device and rank.
class Partition {
 public:
  static constexpr int ados_per_unit = 64;

  /// `parts` ranges of about equal generator cost (an ADO costs its system term plus one term per
  /// neighbour it reads). Parts beyond the number of units own nothing.
  static Partition balanced(const Hierarchy& hierarchy, int parts);
  /// The ranges [first[p], first[p + 1]) with first[0] = 0 and first[parts] = hierarchy.size() (tests,
  /// uneven splits). Throws heom::Error unless they ascend and fall on unit boundaries.
  static Partition from_boundaries(const Hierarchy& hierarchy, std::vector<int> first);

  int parts() const { return static_cast<int>(m_first.size()) - 1; }
  int first(int part) const { return m_first[part]; }
  int last(int part) const { return m_first[part + 1]; }
  int owned(int part) const { return last(part) - first(part); }
  /// The part that owns ADO `ado`.
  int owner(int ado) const;
  /// [parts + 1] range boundaries.
  const std::vector<int>& boundaries() const { return m_first; }

 private:
  explicit Partition(std::vector<int> first) : m_first(std::move(first)) {}
  std::vector<int> m_first;
};

}  // namespace heom

#endif
