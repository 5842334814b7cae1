// heom::Devices' checks.
#include "heom/distributed/devices.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "heom/core/kokkos_compat.hpp"

namespace heom {

std::optional<OptionProblem> Devices::validate(const DeviceContext& context, bool running) const {
  if (count < 1) return OptionProblem{"count", "must be >= 1, got " + std::to_string(count)};
  for (int id : gpu_ids)
    if (id < 0) return OptionProblem{"gpu_ids", "must be >= 0, got " + std::to_string(id)};
  if (!gpu_ids.empty() && !context.gpus)
    return OptionProblem{"gpu_ids",
                         "chooses GPUs, and this heom runs on " + context.backend + " (a CUDA build chooses GPUs)"};
  if (static_cast<int>(gpu_ids.size()) > count)
    return OptionProblem{"gpu_ids", "names " + std::to_string(gpu_ids.size()) + " GPUs for " + std::to_string(count) +
                                        (count == 1 ? " device" : " devices")};
  if (!running) return std::nullopt;
  if (count > 1 && !context.can_partition)
    return OptionProblem{"count", "several devices in one process are not available on " + context.backend +
                                      " with Kokkos " + std::to_string(KOKKOS_VERSION) +
                                      " (Kokkos 4.3 and later can); run one rank per device with mpirun"};
  if (context.gpus && (count > 1 || !gpu_ids.empty())) {
    try {
      (void)impl::gpu_placement(count, gpu_ids, context.visible_gpus);
    } catch (const std::invalid_argument& e) {
      return OptionProblem{gpu_ids.empty() ? "count" : "gpu_ids", e.what()};
    }
  }
  if (!context.gpus && context.threads > 0 && count > context.threads)
    return OptionProblem{"count", std::to_string(count) + " devices of this CPU need a thread each, and heom runs " +
                                      std::to_string(context.threads)};
  return std::nullopt;
}

}  // namespace heom
