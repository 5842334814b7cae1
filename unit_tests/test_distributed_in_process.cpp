// The multi-device suite (multi_device_suite.hpp) on devices of one process (heom::run_on_devices; on
// CPUs, simulated devices that share the host's threads): 1 to 4 devices where the backend can
// partition, one elsewhere. And what only one process can show: a failing device ends the others
// with its message.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "distributed_cases.hpp"
#include "heom/distributed/in_process.hpp"
#include "multi_device_suite.hpp"

namespace heom::testing {

template <class Exec>
std::vector<DeviceGroup<Exec>> device_groups() {
  constexpr int most_devices = 4;
  const int devices = impl::can_partition<Exec>() ? most_devices : 1;
  // On GPUs, the devices take this machine's GPUs in turn (several devices on one GPU: each its own
  // stream, the halo copied GPU to GPU all the same).
  std::vector<int> gpu_ids;
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<Exec, Kokkos::Cuda>::value)
    for (int gpu = 0; gpu < backend::visible_gpus(); ++gpu) gpu_ids.push_back(gpu);
#endif
  std::vector<DeviceGroup<Exec>> groups;
  for (int d = 1; d <= devices; ++d) {
    DeviceGroup<Exec> group;
    group.name = std::to_string(d) + (d == 1 ? " device" : " devices") + " in one process on " + Exec::name();
    group.devices = d;
    group.run = [d, gpu_ids](const typename DeviceGroup<Exec>::Device& device) {
      run_on_devices(Exec(), d, device, gpu_ids);
    };
    group.spread = [d, gpu_ids](EnsembleOptions& options) {
      options.devices = d;
      options.gpu_ids = gpu_ids;
    };
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace heom::testing

namespace {

namespace ht = heom::testing;
using heom::GeneratorKernel;
using heom::Method;
using Exec = Kokkos::DefaultHostExecutionSpace;

TEST(DistributedInProcess, TheHostRunsFourDevices) {
  ASSERT_TRUE(heom::impl::can_partition<Exec>()) << "Kokkos " << KOKKOS_VERSION << " cannot partition " << Exec::name();
  ASSERT_GE(Exec().concurrency(), 4) << "run with OMP_NUM_THREADS >= 4";
  EXPECT_EQ(ht::device_groups<Exec>().back().devices, 4);
}

// A device that throws mid-run ends the others at their next exchange; the error names it.
TEST(DistributedInProcess, AFailingDeviceEndsEveryDeviceWithItsMessage) {
  const ht::Case c = ht::cases().front();
  std::atomic<int> finished{0};
  const auto start = std::chrono::steady_clock::now();
  try {
    heom::run_on_devices(Exec(), 3, [&](const Exec& exec, int device, std::shared_ptr<const heom::Communicator> comm) {
      heom::SolverOptions o = ht::options(Method::exp_adams, GeneratorKernel::automatic);
      o.communicator = comm;
      heom::Solver<Exec> solver(exec, c.model, c.depth, o);
      solver.set_initial_state(c.rho0);
      for (int step = 0; step < 1000000; ++step) {
        if (device == 1 && step == 20) throw heom::Error("injected failure at step 20");
        solver.step();
      }
      ++finished;
    });
    ADD_FAILURE() << "run_on_devices returned although a device failed";
  } catch (const heom::Error& e) {
    EXPECT_EQ(std::string(e.what()), "device 1: injected failure at step 20");
  }
  EXPECT_EQ(finished, 0);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

TEST(DistributedInProcess, MoreDevicesThanThreadsAreRefused) {
#if KOKKOS_VERSION < 40000  // (Kokkos 3.4 partitions the OpenMP pool: a thread per device at least)
  EXPECT_THROW(heom::run_on_devices(Exec(), Exec().concurrency() + 1, [](const Exec&, int, auto) {}), heom::Error);
#endif
  EXPECT_THROW(heom::run_on_devices(Exec(), 0, [](const Exec&, int, auto) {}), heom::Error);
}

}  // namespace

namespace {

TEST(DistributedInProcess, DevicesArePlacedOnTheNamedGpusInTurn) {
  using heom::impl::gpu_placement;
  EXPECT_EQ(gpu_placement(3, {}, 4), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(gpu_placement(4, {2, 3}, 4), (std::vector<int>{2, 3, 2, 3}));
  EXPECT_EQ(gpu_placement(2, {0}, 1), (std::vector<int>{0, 0}));  // two streams of one GPU
  // More devices than GPUs when none are named, or a GPU that is not there: refused, saying so.
  try {
    (void)gpu_placement(2, {}, 1);
    ADD_FAILURE() << "2 devices were placed on 1 GPU unasked";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2 devices asked for, but this process sees 1 GPU "), std::string::npos)
        << e.what();
  }
  try {
    (void)gpu_placement(2, {0, 4}, 4);
    ADD_FAILURE() << "GPU 4 of 4 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("GPU 4 is not there: this process sees 4 GPUs", 0), 0u) << e.what();
  }
  EXPECT_THROW((void)gpu_placement(1, {-1}, 2), std::invalid_argument);
  EXPECT_THROW((void)gpu_placement(1, {0}, 0), std::invalid_argument);
}

TEST(DistributedInProcess, DevicesSharingAMemoryShareItsFreeBytes) {
  // A CPU's simulated devices share one memory equally; (on CUDA, the devices placed on one GPU).
  using Host = Kokkos::DefaultHostExecutionSpace;
  const std::vector<std::uint64_t> one = heom::impl::memory_shares(Host(), 1, {});
  const std::vector<std::uint64_t> three = heom::impl::memory_shares(Host(), 3, {});
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_GT(three[0], 0u);
  EXPECT_EQ(three[0], three[1]);
  EXPECT_EQ(three[1], three[2]);
  // A third of the whole (the host's free memory moves between the two readings: other tests run).
  EXPECT_LT(three[0], one[0] / 2);
  EXPECT_GT(three[0], one[0] / 6);
}

#if !defined(KOKKOS_ENABLE_CUDA)
TEST(DistributedInProcess, GpuBuffersNeedCuda) { EXPECT_THROW(heom::InProcessGroup(2, true), heom::Error); }
#endif

}  // namespace
