// heom::IntegratorState: everything an integrator carries from one step to the next, on the host.
#ifndef HEOM_INTEGRATOR_STATE_HPP
#define HEOM_INTEGRATOR_STATE_HPP

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/error.hpp"
#include "heom/integrator/options.hpp"

namespace heom {

/// An integrator between two steps: its time, statistics, step-size controller and history (named
/// scalars) and every vector the next steps or interpolations read (named, this device's owned
/// elements each; "y" is the state). An integrator of the same method on the same hierarchy loaded
/// with it takes the very steps, bit for bit, that the saved one would have taken.
struct IntegratorState {
  Method method = Method::exp_adams;
  double time = 0.0;
  IntegratorStatistics statistics;
  std::map<std::string, double> scalars;
  std::map<std::string, std::vector<device_complex>> vectors;

  /// The scalar `name`; throws heom::Error when the state lacks it.
  double scalar(const std::string& name) const {
    const auto it = scalars.find(name);
    if (it == scalars.end()) throw Error("integrator state: the value '" + name + "' is missing");
    return it->second;
  }
  /// The vector `name` of `size` elements; throws heom::Error when it is missing or of another size.
  const std::vector<device_complex>& vector(const std::string& name, std::size_t size) const {
    const auto it = vectors.find(name);
    if (it == vectors.end()) throw Error("integrator state: the vector '" + name + "' is missing");
    if (it->second.size() != size)
      throw Error("integrator state: the vector '" + name + "' has " + std::to_string(it->second.size()) +
                  " elements, expected " + std::to_string(size));
    return it->second;
  }
};

}  // namespace heom

#endif
