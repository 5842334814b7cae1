// heom::Devices: the devices of this process a run asks for (one hierarchy split between them, or an
// ensemble's members spread over them), and its checks against the backend, Kokkos and the GPUs and
// threads there are: one place for the program's --devices and --device-ids and Python's devices
// and gpus.
#ifndef HEOM_DISTRIBUTED_DEVICES_HPP
#define HEOM_DISTRIBUTED_DEVICES_HPP

#include <optional>
#include <string>
#include <vector>

#include "heom/core/error.hpp"

namespace heom {

/// What the devices of a run are checked against.
struct DeviceContext {
  std::string backend;         ///< ExecSpace::name()
  bool gpus = false;           ///< the backend runs on GPUs (backend::is_gpu_backend)
  bool can_partition = false;  ///< several devices in one process run with this Kokkos (impl::can_partition)
  int visible_gpus = 0;        ///< the GPUs this process sees
  int threads = 0;             ///< the host threads Kokkos runs (host backends; 0: not known yet)
};

struct Devices {
  /// Devices of this process (simulated ones sharing the host's threads on a CPU, GPUs in a GPU build).
  int count = 1;
  /// On GPUs, which GPU each is on: device d on gpu_ids[d % gpu_ids.size()]; empty: GPU d.
  std::vector<int> gpu_ids;

  /// The first field at fault ("count", "gpu_ids") and why, for this backend and Kokkos; `running`:
  /// also against the GPUs and threads this process has (a plan may be made for GPUs elsewhere).
  std::optional<OptionProblem> validate(const DeviceContext& context, bool running) const;
};

}  // namespace heom

#endif
