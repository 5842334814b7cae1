// The distribution of a hierarchy over parts, and the check that every part holds the same run.
#include "heom/distributed/distribution.hpp"

#include <cstring>
#include <string>

#include "heom/config.hpp"
#include "heom/core/error.hpp"

namespace heom {
namespace {

/// FNV-1a over raw bytes: a digest, not a cryptographic hash.
class Digest {
 public:
  void add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) m_value = (m_value ^ p[i]) * 1099511628211ull;
  }
  template <class T>
  void add(const T& value) {
    add(&value, sizeof(T));
  }
  void add(const Matrix& m) { add(m.data(), sizeof(complex) * m.rows() * m.cols()); }
  std::uint64_t value() const { return m_value; }

 private:
  std::uint64_t m_value = 14695981039346656037ull;
};

}  // namespace

std::uint64_t run_fingerprint(const Model& model, const Hierarchy& hierarchy, const Partition& partition,
                              const std::string& settings) {
  Digest d;
  d.add(HEOM_VERSION_STRING, std::strlen(HEOM_VERSION_STRING));
  d.add(settings.data(), settings.size());
  d.add(model.hamiltonian());
  for (const Bath& bath : model.baths()) {
    d.add(bath.coupling());
    d.add(bath.terminator_delta());
    for (const Exponent& e : bath.exponents()) {
      d.add(e.kind);
      d.add(e.c);
      d.add(e.v);
      d.add(e.c2);
    }
  }
  d.add(hierarchy.num_exponents());
  d.add(hierarchy.depth());
  for (int b : partition.boundaries()) d.add(b);
  return d.value();
}

std::shared_ptr<const Distribution> Distribution::make(const Model& model, const Hierarchy& hierarchy,
                                                       std::shared_ptr<const Communicator> communicator,
                                                       const std::vector<int>& boundaries,
                                                       const std::string& settings) {
  if (!communicator) throw Error("distribution: no communicator");
  const int parts = communicator->size();
  Partition partition =
      boundaries.empty() ? Partition::balanced(hierarchy, parts) : Partition::from_boundaries(hierarchy, boundaries);
  if (partition.parts() != parts)
    throw Error("distribution: the partition has " + std::to_string(partition.parts()) + " parts but there are " +
                std::to_string(parts) + " devices");
  // Two exact halves of the digest (doubles hold 32-bit integers exactly).
  const std::uint64_t mine = run_fingerprint(model, hierarchy, partition, settings);
  const std::vector<double> all =
      communicator->gather_all({static_cast<double>(mine >> 32), static_cast<double>(mine & 0xffffffffull)});
  for (int p = 0; p < parts; ++p)
    if (all[2 * p] != all[0] || all[2 * p + 1] != all[1])
      throw Error("distribution: device " + std::to_string(p) +
                  " holds a different model, depth, partition, "
                  "integrator options or heom version than device 0; every device must run the same input with the "
                  "same heom");
  auto d = std::make_shared<Distribution>(
      Distribution{partition, HaloPlan::make(hierarchy, partition, communicator->rank()), std::move(communicator)});
  return d;
}

}  // namespace heom
