// The multi-device test suite, one set of tests for every way heom splits work between devices: a
// test binary includes it and defines heom::testing::device_groups<Exec>(), the groups it runs each
// test on (test_distributed_in_process.cpp: 1 to 4 simulated devices of one process;
// test_distributed_mpi.cpp: the ranks of an MPI job, run at 1 to 4 ranks, and the same ranks over NCCL
// where heom is built with it). The tests are typed over the enabled backends (the default device
// space and the host's). On every group: a split hierarchy holds the very bits of one device's run,
// for every kernel and integrator, overlapped or not, balanced or uneven with an empty device; it
// continues from each device's own ADOs and from each device's saved state; the Hermitian form
// exchanges only the rows it reads; devices that disagree on the run refuse to start; and an
// ensemble spread over the group gives one process's bits.
#ifndef HEOM_UNIT_TESTS_MULTI_DEVICE_SUITE_HPP
#define HEOM_UNIT_TESTS_MULTI_DEVICE_SUITE_HPP

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "distributed_cases.hpp"
#include "ensemble_cases.hpp"
#include "heom/heom.hpp"

namespace heom::testing {

/// Devices that share one hierarchy (or an ensemble), as one test binary drives them.
template <class Exec>
struct DeviceGroup {
  using Device = std::function<void(const Exec&, int device, std::shared_ptr<const Communicator>)>;
  std::string name;  // for the test's trace: "3 devices in one process", "4 MPI ranks"
  int devices = 1;   // how many share the work, in this process and in others
  /// Runs device(instance, d, communicator) on each of the group's devices in this process.
  std::function<void(const Device&)> run;
  /// Spreads an ensemble over the group's devices (empty: the group splits hierarchies alone).
  std::function<void(EnsembleOptions&)> spread;
  /// Whether every device runs in this process (then a test may compare what they saved).
  bool one_process = true;
};

/// The groups the suite runs on, defined by the test binary that includes it.
template <class Exec>
std::vector<DeviceGroup<Exec>> device_groups();

/// The default device space and, where it differs, the host's.
using Backends =
    std::conditional_t<std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value,
                       ::testing::Types<Kokkos::DefaultHostExecutionSpace>,
                       ::testing::Types<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>>;

/// One device's run of `c`, then the group's split run checked against it, share by share.
template <class Exec>
void expect_group_identical(const DeviceGroup<Exec>& group, const Case& c, Method method, GeneratorKernel kernel,
                            const std::vector<int>& partition = {},
                            ExchangeOverlap overlap = ExchangeOverlap::automatic) {
  SCOPED_TRACE(group.name + ", " + c.name + ", " + to_string(method) + ", " + to_string(kernel) + " kernel, " +
               (partition.empty() ? "balanced" : "uneven"));
  const Reference reference = run_on_one_device(Exec(), c, method, kernel);
  // GoogleTest's assertions are thread-safe on POSIX: each device checks its own share.
  group.run([&](const Exec& exec, int, std::shared_ptr<const Communicator> comm) {
    expect_share_identical(exec, c, method, kernel, std::move(comm), partition, reference, overlap);
  });
}

template <class Exec>
class MultiDevice : public ::testing::Test {};
TYPED_TEST_SUITE(MultiDevice, Backends);

TYPED_TEST(MultiDevice, EveryKernelAndMethodIsBitIdenticalToOneDevice) {
  using Exec = TypeParam;
  for (const auto& group : device_groups<Exec>()) {
    for (const Case& c : cases())
      for (Method method : {Method::exp_adams, Method::dopri5, Method::rk4, Method::lsrk4, Method::chebyshev})
        if (method != Method::chebyshev || !c.model.is_driven())  // (chebyshev: undriven models alone)
          expect_group_identical(group, c, method, GeneratorKernel::automatic);
    for (const Case& c : cases())
      for (GeneratorKernel kernel : kernels_for<Exec>(c))
        for (Method method : {Method::exp_adams, Method::dopri5}) expect_group_identical(group, c, method, kernel);
  }
}

// Computing the ADOs that read no halo while it is in flight (what GPUs do) gives the same bits, and
// so does never overlapping (an MPI without a progress thread's choice, asked for explicitly).
TYPED_TEST(MultiDevice, OverlappedExchangeIsBitIdenticalToo) {
  using Exec = TypeParam;
  for (const auto& group : device_groups<Exec>()) {
    for (const Case& c : cases())
      for (GeneratorKernel kernel : kernels_for<Exec>(c))
        expect_group_identical(group, c, Method::exp_adams, kernel, {}, ExchangeOverlap::always);
    for (const Case& c : cases())
      expect_group_identical(group, c, Method::exp_adams, GeneratorKernel::automatic, {}, ExchangeOverlap::never);
  }
}

TYPED_TEST(MultiDevice, UnevenPartitionsAndAnEmptyDevice) {
  using Exec = TypeParam;
  for (const auto& group : device_groups<Exec>())
    for (const Case& c : cases())
      for (Method method : {Method::exp_adams, Method::dopri5})
        expect_group_identical(group, c, method, GeneratorKernel::automatic, uneven_partition(c, group.devices));
}

// Each device continues from its own ADOs (Solver::set_initial_ados) exactly as one device continues
// from all of them.
TYPED_TEST(MultiDevice, EachDeviceContinuesFromItsOwnAdos) {
  using Exec = TypeParam;
  const Case c = cases()[1];  // excitons: the Hermitian form, which set_initial_ados must agree on globally
  const SolverOptions options = testing::options(Method::exp_adams, GeneratorKernel::automatic);
  auto continued = [&](const Exec& exec, SolverOptions o) {
    Solver<Exec> first(exec, c.model, c.depth, o);
    first.set_initial_state(c.rho0);
    first.run_until(1.0);
    Solver<Exec> second(exec, c.model, c.depth, o);
    second.set_initial_ados(first.ados(), first.time());
    EXPECT_TRUE(heom::is_hermitian_form(second.kernel()));  // (host kernel on CPUs, portable on GPUs)
    second.run_until(2.0);
    return std::make_pair(host_copy(second.ados()), second.first_ado());
  };
  const std::vector<complex> reference = continued(Exec(), options).first;
  const int n2 = c.model.dimension() * c.model.dimension();
  for (const auto& group : device_groups<Exec>()) {
    SCOPED_TRACE(group.name);
    group.run([&](const Exec& exec, int, std::shared_ptr<const Communicator> comm) {
      SolverOptions o = options;
      o.communicator = std::move(comm);
      const auto [mine, first] = continued(exec, o);
      EXPECT_TRUE(mine.empty() || std::memcmp(mine.data(), reference.data() + static_cast<std::size_t>(first) * n2,
                                              sizeof(complex) * mine.size()) == 0);
    });
  }
}

// Each device saves and loads its own share: the split run continues bit for bit as one device's,
// and (where the group's states are all at hand) a device refuses another device's share.
TYPED_TEST(MultiDevice, EachDeviceContinuesFromItsSavedShare) {
  using Exec = TypeParam;
  const Case c = cases()[1];
  for (Method method : {Method::exp_adams, Method::dopri5}) {
    const SolverOptions options = testing::options(method, GeneratorKernel::automatic);
    Solver<Exec> one(Exec(), c.model, c.depth, options);
    one.set_initial_state(c.rho0);
    one.run_until(0.7);  // (where the split run saves: a step lands there)
    one.run_until(t_end);
    const std::vector<complex> reference = host_copy(one.ados());
    const int n2 = c.model.dimension() * c.model.dimension();
    for (const auto& group : device_groups<Exec>()) {
      SCOPED_TRACE(group.name + ", " + c.name + ", " + to_string(method));
      std::vector<SolverState> saved(group.devices);
      group.run([&](const Exec& exec, int d, std::shared_ptr<const Communicator> comm) {
        SolverOptions o = options;
        o.communicator = comm;
        Solver<Exec> first(exec, c.model, c.depth, o);
        first.set_initial_state(c.rho0);
        first.run_until(0.7);
        saved[d] = first.save_state();
        comm->max(0.0);  // (every device has saved)
        Solver<Exec> second(exec, c.model, c.depth, o);
        const SolverState& neighbour = saved[(d + 1) % group.devices];
        if (group.one_process &&
            (neighbour.first_ado != saved[d].first_ado || neighbour.num_ados != saved[d].num_ados)) {
          EXPECT_THROW(second.load_state(neighbour), StateMismatchError) << "another device's share";
        }
        second.load_state(saved[d]);
        second.run_until(t_end);
        const std::vector<complex> mine = host_copy(second.ados());
        EXPECT_TRUE(mine.empty() ||
                    std::memcmp(mine.data(), reference.data() + static_cast<std::size_t>(second.first_ado()) * n2,
                                sizeof(complex) * mine.size()) == 0);
        EXPECT_EQ(second.statistics().steps, one.statistics().steps);
      });
    }
  }
}

// The Hermitian form (the host kernel's and the portable one's) reads one row of a site-projector
// bath's neighbours: only the rows it reads cross (the bit-identical runs above show that they are all
// it reads); the general form takes whole blocks.
TYPED_TEST(MultiDevice, TheHermitianFormExchangesOnlyTheRowsItReads) {
  using Exec = TypeParam;
  const Case c = cases()[1];  // excitons: a site projector per site
  const int n = c.model.dimension();
  for (const auto& group : device_groups<Exec>()) {
    if (group.devices < 2) continue;
    for (GeneratorKernel kernel : {GeneratorKernel::automatic, GeneratorKernel::portable_hermitian}) {
      SCOPED_TRACE(group.name + ", " + to_string(kernel) + " kernel");
      group.run([&](const Exec& exec, int, std::shared_ptr<const Communicator> comm) {
        SolverOptions o = testing::options(Method::exp_adams, kernel);
        o.communicator = std::move(comm);
        Solver<Exec> solver(exec, c.model, c.depth, o);
        solver.set_initial_state(c.rho0);
        EXPECT_TRUE(heom::is_hermitian_form(solver.kernel()));  // (not ASSERT: every device must go on)
        const std::uint64_t row_bytes = sizeof(complex) * n;
        const std::uint64_t whole = solver.distribution()->plan.halo.size() * n * row_bytes;
        const std::uint64_t rows = solver.generator().halo_bytes_received(solver.state().form());
        EXPECT_GT(whole, 0u);
        EXPECT_EQ(rows % row_bytes, 0u);
        // At least one row of each halo block, and far fewer than all n.
        EXPECT_GE(rows, whole / n);
        EXPECT_LT(rows, whole / 3);
        if (kernel != GeneratorKernel::automatic) return;  // (an asked-for Hermitian form stays)
        Matrix raise(n, n);                                // a non-Hermitian start: the general form
        raise(1, 0) = 1.0;                                 // |1><0| rho = |1><0|
        solver.apply_operator(raise);
        EXPECT_FALSE(heom::is_hermitian_form(solver.kernel()));
        EXPECT_EQ(solver.generator().halo_bytes_received(solver.state().form()), whole);
      });
    }
  }
}

// Devices that would run different hierarchies, or take different steps, all refuse; none hangs.
TYPED_TEST(MultiDevice, DevicesThatDisagreeRefuseToStart) {
  using Exec = TypeParam;
  for (const auto& group : device_groups<Exec>()) {
    if (group.devices < 2) continue;
    SCOPED_TRACE(group.name);
    group.run([&](const Exec& exec, int d, std::shared_ptr<const Communicator> comm) {
      SolverOptions o = testing::options(Method::exp_adams, GeneratorKernel::automatic);
      o.communicator = std::move(comm);
      const bool last = d == group.devices - 1;
      try {
        Solver<Exec> solver(exec, three_level(), last ? 6 : 5, o);  // the last device one level deeper
        ADD_FAILURE() << "started although the devices disagree on the depth";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("different model, depth"), std::string::npos) << e.what();
      }
      SolverOptions looser = o;
      if (last) looser.integrator.rtol *= 2;
      EXPECT_THROW(Solver<Exec>(exec, three_level(), 5, looser), Error);
      // Observing the lead currents adds a collective per output time: all devices or none.
      SolverOptions observing = o;
      observing.observe_lead_currents = last;
      EXPECT_THROW(Solver<Exec>(exec, three_level(), 5, observing), Error);
      observing.observe_lead_currents = true;
      EXPECT_NO_THROW(Solver<Exec>(exec, three_level(), 5, observing));
    });
  }
}

// An ensemble's members, batched or not, spread over the group: every device ends with every
// member's result, bit-identical to one device running them all.
TYPED_TEST(MultiDevice, AnEnsembleOverTheGroupEqualsOneDevice) {
  using Exec = TypeParam;
  const auto members = disordered_spin_bosons(7);
  const auto times = ensemble_times();
  for (int batch : {1, 3}) {
    EnsembleOptions options;
    options.depth = ensemble_depth;
    options.batch = batch;
    const EnsembleResult alone = run_ensemble(Exec(), members, times, options);
    for (const auto& group : device_groups<Exec>()) {
      if (!group.spread) continue;  // (a group for hierarchies alone)
      SCOPED_TRACE(group.name + ", batches of " + std::to_string(batch));
      EnsembleOptions spread_options = options;
      group.spread(spread_options);
      const EnsembleResult spread = run_ensemble(Exec(), members, times, spread_options);
      expect_same_members(alone, spread);
      EXPECT_EQ(spread.workers, group.devices);
      for (std::size_t t = 0; t < times.size(); ++t)
        EXPECT_EQ(std::memcmp(alone.mean[t].data(), spread.mean[t].data(), 4 * sizeof(complex)), 0);
      // (Which device ran which member is up to timing: members go to devices as they become free.)
      for (const auto& m : spread.members) EXPECT_TRUE(m.worker >= 0 && m.worker < group.devices) << m.worker;
    }
  }
}

// Output times inside chebyshev's long steps (each device sums its own share of them: the steps must
// still be those of one device), rho alone or the lead currents (whose outputs read a share of every
// device's ADOs), and automatic's hand-over from exp-adams: one device's bits.
TYPED_TEST(MultiDevice, OutputsInsideLongStepsAreOneDevicesBits) {
  using Exec = TypeParam;
  std::vector<double> times;
  for (int i = 0; i <= 120; ++i) times.push_back(0.05 * i);
  struct Run {
    Method method;
    std::size_t case_index;
    bool lead_currents;
  };
  // (Excitons: damping of the system's scale, where the series pays; leads and phonons: the currents'
  // outputs read a share of every device's ADOs.)
  for (const Run& r :
       {Run{Method::chebyshev, 1, false}, Run{Method::automatic, 1, false}, Run{Method::chebyshev, 7, true}}) {
    const Method method = r.method;
    const Case c = cases()[r.case_index];
    SolverOptions options = testing::options(method, GeneratorKernel::automatic);
    options.integrator.step = 0.0;
    options.observe_lead_currents = r.lead_currents;
    auto observe = [&](const Exec& exec, const SolverOptions& o, std::int64_t& steps, std::string& taken) {
      Solver<Exec> solver(exec, c.model, c.depth, o);
      solver.set_initial_state(c.rho0);
      std::vector<Matrix> rho;
      solver.run(times, [&](const Snapshot<Exec>& s) { rho.push_back(s.rho()); });
      steps = solver.statistics().steps;
      taken = solver.method_taken();
      return rho;
    };
    std::int64_t steps = 0;
    std::string taken;
    const auto reference = observe(Exec(), options, steps, taken);
    ASSERT_EQ(reference.size(), times.size());
    if (method == Method::automatic) {
      EXPECT_NE(taken.find("chebyshev from t = "), std::string::npos) << taken;
    }
    EXPECT_LT(steps, static_cast<std::int64_t>(times.size())) << "steps spanning several output times";
    for (const auto& group : device_groups<Exec>()) {
      SCOPED_TRACE(group.name + ", " + c.name + ", " + to_string(method));
      group.run([&](const Exec& exec, int, std::shared_ptr<const Communicator> comm) {
        SolverOptions o = options;
        o.communicator = std::move(comm);
        std::int64_t split_steps = 0;
        std::string split_taken;
        const bool holds_rho = o.communicator->rank() == 0;
        const auto mine = observe(exec, o, split_steps, split_taken);
        EXPECT_EQ(split_steps, steps);
        EXPECT_EQ(split_taken, taken);
        if (holds_rho) {
          ASSERT_EQ(mine.size(), reference.size());
          for (std::size_t i = 0; i < mine.size(); ++i) EXPECT_EQ(heom::max_abs_diff(mine[i], reference[i]), 0.0);
        }
      });
    }
  }
}

// The lead currents a split run observes (each device's first-tier terms, gathered) are one device's
// bits, balanced or uneven, and those of heom::lead_currents on every ADO; an ensemble's members
// carry theirs through the group's gathering unchanged.
TYPED_TEST(MultiDevice, LeadCurrentsAreOneDevicesBits) {
  using Exec = TypeParam;
  const Case c{"leads and phonons", leads_and_phonons(), 4, spin_boson_start};
  const std::vector<double> times = {0.0, 0.7, 1.5, 3.0};
  SolverOptions options = testing::options(Method::exp_adams, GeneratorKernel::automatic);
  options.observe_lead_currents = true;
  auto observe = [&](const Exec& exec, const SolverOptions& o) {
    Solver<Exec> solver(exec, c.model, c.depth, o);
    solver.set_initial_state(c.rho0);
    std::vector<std::vector<complex>> currents;
    solver.run(times, [&](const Snapshot<Exec>& s) {
      ASSERT_EQ(s.lead_currents.size(), 1u);
      currents.push_back(s.lead_currents.front());
      if (o.observe_all_ados) {  // (every ADO at hand: the free function's bits)
        EXPECT_EQ(s.lead_currents.front(), lead_currents(s.exec, solver.model(), solver.hierarchy(), s.ados));
      }
    });
    return currents;
  };
  SolverOptions every_ado = options;
  every_ado.observe_all_ados = true;
  const auto reference = observe(Exec(), every_ado);
  ASSERT_EQ(reference.size(), times.size());
  ASSERT_EQ(reference.back().size(), 3u);                                // left, phonons, right
  EXPECT_EQ(reference.back()[1], complex(0.0));                          // (a bosonic bath)
  EXPECT_GT(std::abs(reference.back()[0] - reference.back()[2]), 1e-3);  // (biased: they differ)
  EXPECT_EQ(observe(Exec(), options), reference);
  for (const auto& group : device_groups<Exec>())
    for (const bool uneven : {false, true}) {
      SCOPED_TRACE(group.name + (uneven ? ", uneven" : ", balanced"));
      group.run([&](const Exec& exec, int, std::shared_ptr<const Communicator> comm) {
        SolverOptions o = options;
        o.communicator = std::move(comm);
        if (uneven) o.partition = uneven_partition(c, group.devices);
        const auto mine = observe(exec, o);
        if (o.communicator->rank() == 0) {
          EXPECT_EQ(mine, reference);
        }
      });
    }

  // An ensemble: two members of one shape (H differs) in a batch, and spread over each group.
  std::vector<EnsembleMember> members = {{c.model, c.rho0},
                                         {Model(1.3 * c.model.hamiltonian(), c.model.baths()), c.rho0}};
  EnsembleOptions ensemble;
  ensemble.depth = c.depth;
  ensemble.solver = options;
  ensemble.batch = 2;
  const EnsembleResult alone = run_ensemble(Exec(), members, times, ensemble);
  ASSERT_EQ(alone.members[0].lead_currents.size(), times.size());
  EXPECT_GT(std::abs(alone.members[0].lead_currents.back()[0] - alone.members[1].lead_currents.back()[0]), 1e-4);
  // (A batch's step sizes are shared, so its members equal their solo runs to the tolerance.)
  for (std::size_t t = 0; t < times.size(); ++t)
    EXPECT_LE(std::abs(alone.members[0].lead_currents[t][0] - reference[t][0]), 1e-6);
  for (const auto& group : device_groups<Exec>()) {
    if (!group.spread) continue;
    SCOPED_TRACE(group.name + ", an ensemble");
    EnsembleOptions spread_options = ensemble;
    group.spread(spread_options);
    const EnsembleResult spread = run_ensemble(Exec(), members, times, spread_options);
    for (std::size_t m = 0; m < members.size(); ++m)
      EXPECT_EQ(spread.members[m].lead_currents, alone.members[m].lead_currents);
  }
}

}  // namespace heom::testing

#endif
