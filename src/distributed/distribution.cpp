// The distribution of a hierarchy over parts, and the check that every part holds the same run.
#include "heom/distributed/distribution.hpp"

#include <string>

#include "heom/core/error.hpp"

namespace heom {

std::shared_ptr<const Distribution> Distribution::make(const Hierarchy& hierarchy,
                                                       std::shared_ptr<const Communicator> communicator,
                                                       const std::vector<int>& boundaries, const Fingerprint& run) {
  if (!communicator) throw Error("distribution: no communicator");
  Partition partition = partition_of(hierarchy, communicator->size(), boundaries);
  return make(hierarchy, std::move(partition), std::move(communicator), run);
}

Partition Distribution::partition_of(const Hierarchy& hierarchy, int parts, const std::vector<int>& boundaries) {
  return boundaries.empty() ? Partition::balanced(hierarchy, parts) : Partition::from_boundaries(hierarchy, boundaries);
}

std::shared_ptr<const Distribution> Distribution::make(const Hierarchy& hierarchy, Partition partition,
                                                       std::shared_ptr<const Communicator> communicator,
                                                       const Fingerprint& run) {
  if (!communicator) throw Error("distribution: no communicator");
  const int parts = communicator->size();
  if (partition.parts() != parts)
    throw Error("distribution: the partition has " + std::to_string(partition.parts()) + " parts but there are " +
                std::to_string(parts) + " devices");
  // Two exact halves of the digest (doubles hold 32-bit integers exactly).
  Digest digest;
  digest.add(run);
  digest.add_value(hierarchy.num_exponents());
  digest.add_value(hierarchy.depth());
  for (int b : partition.boundaries()) digest.add_value(b);
  const std::uint64_t mine = digest.value();
  const std::vector<double> all =
      communicator->gather_all({static_cast<double>(mine >> 32), static_cast<double>(mine & 0xffffffffull)});
  for (int p = 0; p < parts; ++p)
    if (all[2 * p] != all[0] || all[2 * p + 1] != all[1])
      throw Error("distribution: device " + std::to_string(p) +
                  " holds a different model, depth, partition, integrator or generator options, or heom build "
                  "than device 0; every device must run the same input with the same heom");
  auto d = std::make_shared<Distribution>(
      Distribution{partition, HaloPlan::make(hierarchy, partition, communicator->rank()), std::move(communicator)});
  return d;
}

}  // namespace heom
