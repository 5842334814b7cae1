// The multi-device suite (multi_device_suite.hpp) over the ranks of an MPI job (run under mpirun with
// 1, 2, 3 and 4 ranks): heom::MpiCommunicator, and heom::NcclCommunicator on the same ranks where
// heom is built with NCCL (CUDA). And what only ranks show: a rank that observes every ADO, or a
// partition without a communicator, is refused; only rank 0 reports an ensemble's progress.
#include <gtest/gtest.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "distributed_cases.hpp"
#include "ensemble_cases.hpp"
#include "heom/distributed/mpi_communicator.hpp"
#include "multi_device_suite.hpp"
#if HEOM_ENABLE_NCCL
#include "heom/distributed/nccl_communicator.hpp"
#endif

namespace heom::testing {

std::shared_ptr<const Communicator> world() {
  static const auto communicator = std::make_shared<const MpiCommunicator>(MPI_COMM_WORLD);
  return communicator;
}

/// The job's ranks, one device each.
template <class Exec>
DeviceGroup<Exec> ranks(const std::string& name, std::function<std::shared_ptr<const Communicator>()> communicator) {
  DeviceGroup<Exec> group;
  group.name = std::to_string(world()->size()) + " " + name + " on " + Exec::name();
  group.devices = world()->size();
  group.run = [communicator](const typename DeviceGroup<Exec>::Device& device) {
    device(Exec(), world()->rank(), communicator());
  };
  group.spread = [](EnsembleOptions& options) { options.ranks = world(); };
  group.one_process = false;
  return group;
}

template <class Exec>
std::vector<DeviceGroup<Exec>> device_groups() {
  std::vector<DeviceGroup<Exec>> groups{ranks<Exec>("MPI ranks", world)};
#if HEOM_ENABLE_NCCL
  if constexpr (BackendTraits<Exec>::nccl_exchange) {
    // NCCL wants a GPU per rank: every rank of each node must see as many GPUs as the node has ranks,
    // and all ranks agree (they make the group's collective calls together).
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_ranks = 1, gpus = 0;
    MPI_Comm_size(node, &node_ranks);
    MPI_Comm_free(&node);
    int mine = cudaGetDeviceCount(&gpus) == cudaSuccess && gpus >= node_ranks ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all == 1) {
      DeviceGroup<Exec> nccl = ranks<Exec>("ranks over NCCL", []() {
        static const auto communicator = std::make_shared<const NcclCommunicator>(MPI_COMM_WORLD);
        return std::static_pointer_cast<const Communicator>(communicator);
      });
      nccl.spread = nullptr;  // ensembles spread over MPI ranks alone
      groups.push_back(std::move(nccl));
    }
  }
#endif
  return groups;
}

}  // namespace heom::testing

namespace {

namespace ht = heom::testing;
using heom::GeneratorKernel;
using heom::Method;
using Exec = Kokkos::DefaultHostExecutionSpace;
using ht::world;

TEST(DistributedMpi, ObservingEveryAdoAndAPartitionWithoutCommunicatorAreRefused) {
  heom::SolverOptions o = ht::options(Method::exp_adams, GeneratorKernel::automatic);
  o.communicator = world();
  o.observe_all_ados = true;
  EXPECT_THROW(heom::Solver<Exec>(Exec(), ht::spin_boson(), 4, o), heom::Error);
  heom::SolverOptions p = ht::options(Method::exp_adams, GeneratorKernel::automatic);
  p.partition = {0, 15};
  EXPECT_THROW(heom::Solver<Exec>(Exec(), ht::spin_boson(), 4, p), heom::Error);
}

// Only rank 0 reports an ensemble's progress, after each of its members at least (the suite checks
// the members).
TEST(EnsembleMpi, OnlyRankZeroReportsProgress) {
  heom::EnsembleOptions options;
  options.depth = ht::ensemble_depth;
  options.ranks = world();
  std::int64_t reported = -1;
  options.progress = [&](std::int64_t finished, std::int64_t total) {
    EXPECT_EQ(total, 7);
    EXPECT_GE(finished, reported);
    reported = finished;
  };
  const heom::EnsembleResult spread =
      heom::run_ensemble(Exec(), ht::disordered_spin_bosons(7), ht::ensemble_times(), options);
  EXPECT_EQ(spread.members.size(), 7u);
  if (world()->rank() == 0)
    EXPECT_GE(reported, 1);
  else
    EXPECT_EQ(reported, -1);
}

// A stream over the ranks: each rank sends its results to rank 0 as they finish, rank 0 alone sees
// them, in member order (handed out in member order and backwards), and the bits of one process's
// run_ensemble, batched or not.
TEST(EnsembleMpi, StreamedResultsReachRankZeroInMemberOrder) {
  const auto members = ht::disordered_spin_bosons(7);
  for (int batch : {1, 2}) {
    heom::EnsembleOptions options;
    options.depth = ht::ensemble_depth;
    options.batch = batch;
    const heom::EnsembleResult alone = heom::run_ensemble(Exec(), members, ht::ensemble_times(), options);
    options.ranks = world();
    for (bool backwards : {false, true}) {
      SCOPED_TRACE("batch " + std::to_string(batch) + (backwards ? ", backwards" : ""));
      heom::EnsembleStream stream;
      stream.members = 7;
      stream.make = [&](std::int64_t i) { return members.at(i); };
      const std::int64_t units = (7 + batch - 1) / batch;
      if (backwards) {
        stream.units = units;
        stream.unit = [&](std::int64_t u) {
          std::vector<std::int64_t> unit;
          for (std::int64_t i = (units - 1 - u) * batch; i < std::min<std::int64_t>(7, (units - u) * batch); ++i)
            unit.push_back(i);
          return unit;
        };
      }
      heom::EnsembleResult got;
      got.members.resize(7);
      std::vector<std::int64_t> order;
      stream.sink = [&](std::int64_t i, heom::MemberResult&& r) {
        order.push_back(i);
        got.members.at(i) = std::move(r);
      };
      const heom::EnsembleSummary summary = heom::stream_ensemble(Exec(), stream, ht::ensemble_times(), options);
      EXPECT_EQ(summary.workers, world()->size());
      if (world()->rank() != 0) {
        EXPECT_TRUE(order.empty());
        EXPECT_TRUE(summary.mean.empty());
        continue;
      }
      EXPECT_EQ(order, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}));
      ht::expect_same_members(alone, got);
      ASSERT_EQ(summary.mean.size(), alone.mean.size());
      for (std::size_t t = 0; t < alone.mean.size(); ++t)
        EXPECT_EQ(std::memcmp(alone.mean[t].data(), summary.mean[t].data(), 4 * sizeof(heom::complex)), 0);
      for (const auto& m : got.members) EXPECT_TRUE(m.worker >= 0 && m.worker < world()->size()) << m.worker;
    }
  }
}

TEST(EnsembleMpi, DevicesPerRankAreRefused) {
  heom::EnsembleOptions options;
  options.ranks = world();
  options.devices = 2;
  EXPECT_THROW(heom::run_ensemble(Exec(), ht::disordered_spin_bosons(2), ht::ensemble_times(), options), heom::Error);
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int result = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    // One report: rank 0's (a failure on any rank still fails the job through its exit code).
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    if (rank != 0) delete listeners.Release(listeners.default_result_printer());
    result = RUN_ALL_TESTS();
  }
  MPI_Finalize();
  return result;
}
