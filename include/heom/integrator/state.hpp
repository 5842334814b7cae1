// heom::IntegratorState: everything an integrator carries from one step to the next, on the host;
// heom::VectorStore: where its vectors go, or come from, one at a time (a checkpoint file). Host
// types alone (no Kokkos): the program's checkpoint I/O is compiled without Kokkos.
#ifndef HEOM_INTEGRATOR_STATE_HPP
#define HEOM_INTEGRATOR_STATE_HPP

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/integrator/options.hpp"

namespace heom {

/// Where the vectors of a saved state go, or come from, one at a time: a checkpoint file can take
/// each as it is copied to the host, so that no more than one vector is held there at once.
/// IntegratorState is the store that keeps them in memory.
class VectorStore {
 public:
  virtual ~VectorStore() = default;
  /// Takes vector `name` (this device's owned elements) as it is saved.
  virtual void put(const std::string& name, std::vector<complex>&& elements) = 0;
  /// Throws heom::Error unless vector `name` is there with `size` elements.
  virtual void require(const std::string& name, std::size_t size) const = 0;
  /// Vector `name`'s elements (after require()).
  virtual std::vector<complex> get(const std::string& name) const = 0;
};

/// An integrator between two steps: its time, statistics, step-size controller and history (named
/// scalars) and every vector the next steps or interpolations read (named, this device's owned
/// elements each; "y" is the state), unless they went to another VectorStore. An integrator of the
/// same method on the same hierarchy loaded with it takes the very steps, bit for bit, that the saved
/// one would have taken.
struct IntegratorState : VectorStore {
  Method method = Method::exp_adams;
  double time = 0.0;
  IntegratorStatistics statistics;
  std::map<std::string, double> scalars;
  std::map<std::string, std::vector<complex>> vectors;

  /// The scalar `name`; throws heom::Error when the state lacks it.
  double scalar(const std::string& name) const {
    const auto it = scalars.find(name);
    if (it == scalars.end()) throw Error("integrator state: the value '" + name + "' is missing");
    return it->second;
  }

  void put(const std::string& name, std::vector<complex>&& elements) override { vectors[name] = std::move(elements); }
  void require(const std::string& name, std::size_t size) const override {
    const auto it = vectors.find(name);
    if (it == vectors.end()) throw Error("integrator state: the vector '" + name + "' is missing");
    if (it->second.size() != size)
      throw Error("integrator state: the vector '" + name + "' has " + std::to_string(it->second.size()) +
                  " elements, expected " + std::to_string(size));
  }
  std::vector<complex> get(const std::string& name) const override { return vectors.at(name); }
};

}  // namespace heom

#endif
