// heom::InProcessGroup: several devices of one process sharing a hierarchy, one host thread each, and
// heom::run_on_devices, which runs them.
#ifndef HEOM_DISTRIBUTED_IN_PROCESS_HPP
#define HEOM_DISTRIBUTED_IN_PROCESS_HPP

#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/kokkos_compat.hpp"
#include "heom/distributed/communicator.hpp"
#include "heom/distributed/devices.hpp"

namespace heom {

/// The communicators of `devices` parts in one process. Messages are copies between the parts'
/// buffers: host memory, or with `gpu_buffers` GPU memory (CUDA builds), copied GPU to GPU (peer to
/// peer where the GPUs allow it, else through the host, as CUDA chooses); collective calls meet at a
/// barrier. When a part fails, every other part's next collective call throws instead of waiting for it.
class InProcessGroup {
 public:
  explicit InProcessGroup(int devices, bool gpu_buffers = false);
  ~InProcessGroup();
  InProcessGroup(const InProcessGroup&) = delete;
  InProcessGroup& operator=(const InProcessGroup&) = delete;

  int size() const;
  std::shared_ptr<const Communicator> communicator(int device) const;
  /// Records "device d: message" as the group's failure (the first one wins) and wakes every part.
  void fail(int device, const std::string& message, std::exception_ptr exception = nullptr);
  /// The first failure, empty if none.
  std::string failure() const;
  /// Throws the first failure, if any, as what it was (heom::OutOfMemoryError, heom::IntegrationError,
  /// heom::StateMismatchError, else heom::Error) with "device d: " before its message.
  void rethrow_failure() const;

  struct State;

 private:
  std::shared_ptr<State> m_state;
};

/// What heom::Devices are checked against on ExecSpace (threads: the host threads Kokkos runs, 0 where
/// Kokkos has not started yet).
template <class ExecSpace>
DeviceContext device_context(int threads = 0) {
  return {ExecSpace::name(), backend::is_gpu_backend<ExecSpace>, impl::can_partition<ExecSpace>(),
          backend::visible_gpus(), threads};
}

/// Runs device(instance, d, communicator) for d = 0 .. devices - 1 at once, each on its own host thread
/// and execution-space instance (impl::run_partitioned): simulated devices sharing the host's
/// threads on a CPU, GPUs of the process on CUDA (device d on GPU gpu_ids[d % gpu_ids.size()], or GPU
/// d when gpu_ids is empty). Every View a device allocates must be made for its instance
/// (impl::allocate); the halo then goes from GPU to GPU. When one throws, the others stop at their
/// next collective call; after all have stopped, throws the first failure
/// (InProcessGroup::rethrow_failure), "device d: what it said". Throws heom::Error before any device
/// starts for a GPU that is not there, or more devices than GPUs when none are named.
template <class ExecSpace, class Device>
void run_on_devices(const ExecSpace& exec, int devices, const Device& device, const std::vector<int>& gpu_ids = {}) {
  require_valid(Devices{devices, gpu_ids}.validate(device_context<ExecSpace>(), false), "devices");
  // (GPU buffers where several GPUs can run: CUDA. Elsewhere run_partitioned says what cannot.)
  InProcessGroup group(devices, !BackendTraits<ExecSpace>::is_host && impl::can_partition<ExecSpace>());
  try {
    impl::run_partitioned(
        exec, devices,
        [&](const ExecSpace& instance, int d) {
          try {
            device(instance, d, group.communicator(d));
          } catch (const std::exception& e) {
            group.fail(d, e.what(), std::current_exception());
          } catch (...) {
            group.fail(d, "unknown exception");
          }
        },
        gpu_ids);
  } catch (const std::invalid_argument& e) {
    throw Error(std::string("devices: ") + e.what());
  } catch (const std::runtime_error& e) {
    if (group.failure().empty()) throw Error(e.what());
  }
  group.rethrow_failure();
}

}  // namespace heom

#endif
