// Reductions over the devices of a split hierarchy, the same bits on any number of devices.
#include "heom/distributed/reductions.hpp"

namespace heom::impl {

double fixed_order_sum(const double* x, std::size_t count) {
  double partial[8] = {};
  const std::size_t whole = count / 8 * 8;
  for (std::size_t i = 0; i < whole; i += 8)
    for (int q = 0; q < 8; ++q) partial[q] += x[i + q];
  for (std::size_t i = whole; i < count; ++i) partial[i - whole] += x[i];
  return ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
         ((partial[4] + partial[5]) + (partial[6] + partial[7]));
}

double sum_in_global_order(const Communicator* communicator, const std::vector<double>& partials) {
  double total = 0.0;
  for (double partial : communicator ? communicator->gather_all(partials) : partials) total += partial;
  return total;
}

double fixed_order_sum_over_devices(const Communicator* communicator, const std::vector<double>& partials) {
  return fixed_order_sum(communicator ? communicator->gather_all(partials) : partials);
}

double max_over_devices(const Communicator* communicator, double value) {
  return communicator ? communicator->max(value) : value;
}

double from_device(const Communicator* communicator, double value, int owner) {
  if (communicator) communicator->broadcast(&value, 1, owner);
  return value;
}

}  // namespace heom::impl
