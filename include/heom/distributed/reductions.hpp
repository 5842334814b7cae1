// The reductions over the devices of a split hierarchy that the integrators and the solver need, in
// one place; each gives every device the same bits, on any number of devices. A null communicator
// is one device.
#ifndef HEOM_DISTRIBUTED_REDUCTIONS_HPP
#define HEOM_DISTRIBUTED_REDUCTIONS_HPP

#include <cstddef>
#include <vector>

#include "heom/distributed/communicator.hpp"

namespace heom::impl {

/// sum_i x[i] in a fixed order (8 interleaved partial sums, then a fixed tree).
double fixed_order_sum(const double* x, std::size_t count);
inline double fixed_order_sum(const std::vector<double>& x) { return fixed_order_sum(x.data(), x.size()); }

/// Every device's `partials` (per-chunk sums, in this device's chunk order), summed one after the
/// other in global chunk order.
double sum_in_global_order(const Communicator* communicator, const std::vector<double>& partials);
/// Every device's `partials`, gathered in global order and summed by fixed_order_sum.
double fixed_order_sum_over_devices(const Communicator* communicator, const std::vector<double>& partials);
/// The largest `value` over every device.
double max_over_devices(const Communicator* communicator, double value);
/// `value` as device `owner` has it, on every device.
double from_device(const Communicator* communicator, double value, int owner);

}  // namespace heom::impl

#endif
