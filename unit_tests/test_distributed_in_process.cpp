// One hierarchy split between devices of one process (heom::run_on_devices; on CPUs, simulated
// devices that share the host's threads): bit-identical to one device for 1 to 4 devices, every
// generator kernel and integrator, uneven partitions and an empty device; a failing device ends the
// others with its message.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <utility>
#include <string>
#include <vector>

#include "distributed_cases.hpp"
#include "heom/distributed/in_process.hpp"

namespace {

namespace ht = heom::testing;
using heom::GeneratorKernel;
using heom::Method;
using Exec = Kokkos::DefaultHostExecutionSpace;

constexpr int most_devices = 4;

void expect_identical(int devices, const ht::Case& c, Method method, GeneratorKernel kernel,
                      const std::vector<int>& partition = {},
                      heom::ExchangeOverlap overlap = heom::ExchangeOverlap::automatic) {
  SCOPED_TRACE(std::to_string(devices) + " devices, " + c.name + ", " + heom::to_string(method) + ", " +
               heom::to_string(kernel) + " kernel");
  const ht::Reference reference = ht::run_on_one_device(Exec(), c, method, kernel);
  // GoogleTest's assertions are thread-safe on POSIX: each device checks its own share.
  heom::run_on_devices(Exec(), devices, [&](const Exec& exec, int, std::shared_ptr<const heom::Communicator> comm) {
    ht::expect_share_identical(exec, c, method, kernel, comm, partition, reference, overlap);
  });
}

TEST(DistributedInProcess, EveryKernelAndMethodIsBitIdenticalToOneDevice) {
  ASSERT_GE(Exec().concurrency(), most_devices) << "run with OMP_NUM_THREADS >= " << most_devices;
  for (int devices = 1; devices <= most_devices; ++devices)
    for (const ht::Case& c : ht::cases())
      for (Method method : {Method::exp_adams, Method::dopri5, Method::rk4, Method::lsrk4})
        expect_identical(devices, c, method, GeneratorKernel::automatic);
  for (const ht::Case& c : ht::cases())
    for (GeneratorKernel kernel : ht::kernels_for<Exec>(c))
      for (Method method : {Method::exp_adams, Method::dopri5}) expect_identical(3, c, method, kernel);
}

// Computing the ADOs that read no halo while it is in flight (what GPUs do) gives the same bits, and
// so does never overlapping (an MPI without a progress thread's choice, asked for explicitly).
TEST(DistributedInProcess, OverlappedExchangeIsBitIdenticalToo) {
  for (int devices = 2; devices <= most_devices; ++devices)
    for (const ht::Case& c : ht::cases())
      for (GeneratorKernel kernel : ht::kernels_for<Exec>(c))
        expect_identical(devices, c, Method::exp_adams, kernel, {}, heom::ExchangeOverlap::always);
  for (const ht::Case& c : ht::cases())
    expect_identical(2, c, Method::exp_adams, GeneratorKernel::automatic, {}, heom::ExchangeOverlap::never);
}

TEST(DistributedInProcess, UnevenPartitionsAndAnEmptyDevice) {
  for (int devices = 2; devices <= most_devices; ++devices)
    for (const ht::Case& c : ht::cases())
      expect_identical(devices, c, Method::exp_adams, GeneratorKernel::automatic, ht::uneven_partition(c, devices));
}

// Each device continues from its own ADOs (Solver::set_initial_ados) exactly as one device continues
// from all of them.
TEST(DistributedInProcess, EachDeviceContinuesFromItsOwnAdos) {
  const ht::Case c = ht::cases()[1];  // the Hermitian form: set_initial_ados must agree on it globally
  const auto options = ht::options(Method::exp_adams, GeneratorKernel::automatic);
  auto continued = [&](const Exec& exec, heom::SolverOptions o) {
    heom::Solver<Exec> first(exec, c.model, c.depth, o);
    first.set_initial_state(c.rho0);
    first.run_until(1.0);
    heom::Solver<Exec> second(exec, c.model, c.depth, o);
    second.set_initial_ados(first.ados(), first.time());
    EXPECT_TRUE(second.generator().runs_hermitian_form());
    second.run_until(2.0);
    return std::make_pair(ht::host_copy(second.ados()), second.first_ado());
  };
  const std::vector<heom::complex> reference = continued(Exec(), options).first;
  const int n2 = c.model.dimension() * c.model.dimension();
  heom::run_on_devices(Exec(), 3, [&](const Exec& exec, int, std::shared_ptr<const heom::Communicator> comm) {
    heom::SolverOptions o = options;
    o.communicator = comm;
    const auto [mine, first] = continued(exec, o);
    EXPECT_TRUE(mine.empty() || std::memcmp(mine.data(), reference.data() + static_cast<std::size_t>(first) * n2,
                                            sizeof(heom::complex) * mine.size()) == 0);
  });
}

// The Hermitian form reads one row of a site-projector bath's neighbours: only the rows it reads cross
// (the bit-identical runs above show that they are all it reads); the general form takes whole blocks.
TEST(DistributedInProcess, TheHermitianFormExchangesOnlyTheRowsItReads) {
  const ht::Case c = ht::cases()[1];  // excitons: a site projector per site
  const int n = c.model.dimension();
  heom::run_on_devices(Exec(), 2, [&](const Exec& exec, int, std::shared_ptr<const heom::Communicator> comm) {
    heom::SolverOptions o = ht::options(Method::exp_adams, GeneratorKernel::automatic);
    o.communicator = comm;
    heom::Solver<Exec> solver(exec, c.model, c.depth, o);
    solver.set_initial_state(c.rho0);
    EXPECT_TRUE(solver.generator().runs_hermitian_form());  // (not ASSERT: every device must go on)
    const std::uint64_t row_bytes = sizeof(heom::complex) * n;
    const std::uint64_t whole = solver.distribution()->plan.halo.size() * n * row_bytes;
    const std::uint64_t rows = solver.generator().halo_bytes_received();
    EXPECT_GT(whole, 0u);
    EXPECT_EQ(rows % row_bytes, 0u);
    // At least one row of each halo block, and far fewer than all n.
    EXPECT_GE(rows, whole / n);
    EXPECT_LT(rows, whole / 3);
    heom::Matrix raise(n, n);  // a non-Hermitian start: the general form
    raise(1, 0) = 1.0;         // |1><0| rho = |1><0|
    solver.apply_operator(raise);
    EXPECT_FALSE(solver.generator().runs_hermitian_form());
    EXPECT_EQ(solver.generator().halo_bytes_received(), whole);
  });
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
