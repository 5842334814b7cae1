// heom::Distribution: one device's share of a hierarchy split between devices.
#ifndef HEOM_DISTRIBUTED_DISTRIBUTION_HPP
#define HEOM_DISTRIBUTED_DISTRIBUTION_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heom/core/fingerprint.hpp"
#include "heom/distributed/communicator.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/distributed/halo.hpp"
#include "heom/hierarchy/partition.hpp"

namespace heom {

/// The partition, this device's part of it (its halo plan), and the communicator that links the
/// parts. Every part builds it from the same model and hierarchy; make() checks that they did.
struct Distribution {
  Partition partition;
  HaloPlan plan;
  std::shared_ptr<const Communicator> communicator;

  int part() const { return plan.part; }
  int parts() const { return partition.parts(); }
  /// The part that holds ADO 0 (rho): it alone reports rho and writes output.
  int rho_owner() const { return partition.owner(0); }
  bool owns_rho() const { return part() == rho_owner(); }

  /// The balanced partition over communicator->size() parts (or `boundaries`, when given: see
  /// Partition::from_boundaries), this part's plan, after checking that every part holds the same
  /// run: the digest of `run` (the Solver's fingerprint: model, depth, options, build), the
  /// hierarchy and the partition, gathered from all. Throws heom::Error on every part otherwise.
  static std::shared_ptr<const Distribution> make(const Hierarchy& hierarchy,
                                                  std::shared_ptr<const Communicator> communicator,
                                                  const std::vector<int>& boundaries, const Fingerprint& run);
  /// The same for a partition made already (partition()): `hierarchy` may hold this part's ADOs
  /// alone (Hierarchy::holding), as a rank of a split hierarchy does.
  static std::shared_ptr<const Distribution> make(const Hierarchy& hierarchy, Partition partition,
                                                  std::shared_ptr<const Communicator> communicator,
                                                  const Fingerprint& run);
  /// The balanced partition over `parts`, or the one `boundaries` give (when not empty).
  static Partition partition_of(const Hierarchy& hierarchy, int parts, const std::vector<int>& boundaries);
};

}  // namespace heom

#endif
