// heom::Distribution: one device's share of a hierarchy split between devices.
#ifndef HEOM_DISTRIBUTED_DISTRIBUTION_HPP
#define HEOM_DISTRIBUTED_DISTRIBUTION_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heom/distributed/communicator.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/hierarchy/partition.hpp"
#include "heom/model/model.hpp"

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
  /// model, depth, partition, heom version and `settings` (what else must agree, e.g. the
  /// integrator's options; a fingerprint gathered from all): throws heom::Error on every part
  /// otherwise.
  static std::shared_ptr<const Distribution> make(const Model& model, const Hierarchy& hierarchy,
                                                  std::shared_ptr<const Communicator> communicator,
                                                  const std::vector<int>& boundaries = {},
                                                  const std::string& settings = {});
};

/// A 64-bit digest of what every part must agree on: the model's operators and exponents, the
/// hierarchy's depth, the partition's boundaries, heom's version and `settings`.
std::uint64_t run_fingerprint(const Model& model, const Hierarchy& hierarchy, const Partition& partition,
                              const std::string& settings = {});

}  // namespace heom

#endif
