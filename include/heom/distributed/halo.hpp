// heom::HaloPlan and heom::HaloRows: what each part of a split hierarchy reads from the others, as
// whole ADO blocks or as the rows of them the Hermitian form reads. Host data, computed alike on
// every part from the hierarchy and the partition; heom::impl::HaloExchange
// (distributed/detail/halo_exchange.hpp) moves what they list.
#ifndef HEOM_DISTRIBUTED_HALO_HPP
#define HEOM_DISTRIBUTED_HALO_HPP

#include <cstdint>
#include <vector>

#include "heom/hierarchy/hierarchy.hpp"
#include "heom/hierarchy/partition.hpp"

namespace heom {

/// One part's view of a partitioned hierarchy. Its local numbering puts the owned ADOs first (local
/// a is global first + a), then the halo: the remote ADOs its ADOs read, grouped by the part that
/// owns them (ascending), each group in global order. What it sends to part q is exactly what q's halo
/// lists from it, in the same order (the neighbour relation is symmetric), so a message is a block
/// copy on both sides.
struct HaloPlan {
  int part = 0;
  int first = 0;  ///< global index of local ADO 0
  int owned = 0;
  int num_exponents = 0;
  std::vector<int> halo;  ///< global index of local ADO owned + h

  /// Peers, ascending; receive_offset[i] is the halo position of the group from receive_from[i]
  /// ([i + 1]: its end).
  std::vector<int> receive_from, receive_offset;
  /// Peers, ascending; send_ados[send_offset[i] .. send_offset[i + 1]) are the local indices of the
  /// owned ADOs sent to send_to[i].
  std::vector<int> send_to, send_offset, send_ados;

  /// [owned][K] the hierarchy's next/prev tables for the owned ADOs, in local indices (-1 stays -1).
  std::vector<int> next, prev;
  /// [owned][K] the owned ADOs' labels.
  std::vector<int> labels;

  int local_size() const { return owned + static_cast<int>(halo.size()); }
  /// Whether owned ADO `ado` (local index) reads a halo block: it cannot be computed before the halo
  /// arrives.
  bool reads_halo(int ado) const;
  /// Owned ADOs that read no halo block.
  int interior_count() const;

  static HaloPlan make(const Hierarchy& hierarchy, const Partition& partition, int part);
};

/// Which rows of each block crossing between parts are read when the generator runs its Hermitian
/// form, which reads a neighbour reached through exponent k in the rows `rows_of_exponent[k]` (bit i:
/// row i) alone: the coupled rows of a diagonal bath (a site projector's one row), every row of a
/// dense one (impl::hermitian_rows_read). A block is read through several exponents by the ADOs of
/// one part; it crosses with the union of their rows. Computed from the hierarchy and the partition
/// alone, so that the sender and the receiver of a block agree on its rows.
struct HaloRows {
  /// Element offsets in the local vector of the rows sent (grouped by peer as HaloPlan::send_ados)
  /// and received (as HaloPlan::halo), each block's rows ascending; send_offset[i] and
  /// receive_offset[i] are where peer i's group starts, in rows.
  std::vector<std::int64_t> send_rows, receive_rows;
  std::vector<int> send_offset, receive_offset;

  /// Throws heom::Error for n > 64 (rows are bits of a 64-bit mask).
  static HaloRows make(const Hierarchy& hierarchy, const Partition& partition, const HaloPlan& plan, int n,
                       const std::vector<std::uint64_t>& rows_of_exponent);
};

/// What a partition costs: per part, the owned and halo ADOs and the bytes one exchange moves.
struct PartitionStatistics {
  std::vector<int> owned, halo, peers;
  std::vector<int> sent;                      ///< blocks each part packs for the others per exchange
  std::vector<std::uint64_t> bytes_received;  ///< per exchange, ADO blocks of n^2 complex<double>
  /// max over parts of halo / owned (parts that own ADOs).
  double largest_halo_ratio = 0.0;
  /// sum of halo over sum of owned: the fraction of a vector that crosses between devices.
  double total_halo_ratio = 0.0;
};
PartitionStatistics partition_statistics(const Hierarchy& hierarchy, const Partition& partition, int dimension);

}  // namespace heom

#endif
