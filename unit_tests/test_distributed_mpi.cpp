// One hierarchy split over the ranks of an MPI job (run under mpirun with 1, 2, 3 and 4 ranks): every
// ADO, rho and the step counts are bit-identical to one device's run, for every generator kernel and
// integrator, with balanced and uneven partitions and a rank that owns no ADO. And an ensemble spread
// over the ranks.
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

namespace {

namespace ht = heom::testing;
using heom::GeneratorKernel;
using heom::Method;
using Exec = Kokkos::DefaultHostExecutionSpace;

std::shared_ptr<const heom::Communicator> world() {
  static const auto communicator = std::make_shared<const heom::MpiCommunicator>(MPI_COMM_WORLD);
  return communicator;
}

void expect_identical(const ht::Case& c, Method method, GeneratorKernel kernel, const std::vector<int>& partition = {},
                      heom::ExchangeOverlap overlap = heom::ExchangeOverlap::automatic) {
  SCOPED_TRACE(std::string(c.name) + ", " + heom::to_string(method) + ", " + heom::to_string(kernel) + " kernel");
  const ht::Reference reference = ht::run_on_one_device(Exec(), c, method, kernel);
  ht::expect_share_identical(Exec(), c, method, kernel, world(), partition, reference, overlap);
}

TEST(DistributedMpi, EveryKernelAndMethodIsBitIdenticalToOneDevice) {
  for (const ht::Case& c : ht::cases())
    for (Method method : {Method::exp_adams, Method::dopri5, Method::rk4, Method::lsrk4})
      expect_identical(c, method, GeneratorKernel::automatic);
  for (const ht::Case& c : ht::cases())
    for (GeneratorKernel kernel : ht::kernels_for<Exec>(c))
      for (Method method : {Method::exp_adams, Method::dopri5}) expect_identical(c, method, kernel);
}

// Computing the ADOs that read no halo while it is in flight (what GPUs do) gives the same bits.
TEST(DistributedMpi, OverlappedExchangeIsBitIdenticalToo) {
  for (const ht::Case& c : ht::cases())
    for (GeneratorKernel kernel : ht::kernels_for<Exec>(c))
      expect_identical(c, Method::exp_adams, kernel, {}, heom::ExchangeOverlap::always);
}

TEST(DistributedMpi, UnevenPartitionsAndAnEmptyDevice) {
  for (const ht::Case& c : ht::cases())
    for (Method method : {Method::exp_adams, Method::dopri5})
      expect_identical(c, method, GeneratorKernel::automatic, ht::uneven_partition(c, world()->size()));
}

TEST(DistributedMpi, DevicesThatDisagreeRefuseToStart) {
  if (world()->size() < 2) GTEST_SKIP() << "needs two ranks";
  heom::SolverOptions o = ht::options(Method::exp_adams, GeneratorKernel::automatic);
  o.communicator = world();
  // The last rank runs one depth deeper: every rank refuses, none hangs.
  const int depth = world()->rank() == world()->size() - 1 ? 6 : 5;
  try {
    heom::Solver<Exec> solver(Exec(), ht::three_level(), depth, o);
    ADD_FAILURE() << "started although the ranks disagree on the depth";
  } catch (const heom::Error& e) {
    EXPECT_NE(std::string(e.what()).find("different model, depth"), std::string::npos) << e.what();
  }
  // The same with a different tolerance on the last rank: the ranks would take different steps.
  if (world()->rank() == world()->size() - 1) o.integrator.rtol *= 2;
  EXPECT_THROW(heom::Solver<Exec>(Exec(), ht::three_level(), 5, o), heom::Error);
}

TEST(DistributedMpi, ObservingEveryAdoAndAPartitionWithoutCommunicatorAreRefused) {
  heom::SolverOptions o = ht::options(Method::exp_adams, GeneratorKernel::automatic);
  o.communicator = world();
  o.observe_all_ados = true;
  EXPECT_THROW(heom::Solver<Exec>(Exec(), ht::spin_boson(), 4, o), heom::Error);
  heom::SolverOptions p = ht::options(Method::exp_adams, GeneratorKernel::automatic);
  p.partition = {0, 15};
  EXPECT_THROW(heom::Solver<Exec>(Exec(), ht::spin_boson(), 4, p), heom::Error);
}

// An ensemble's members spread over the ranks (an MPI window hands them out): every rank ends with
// every member's result, bit-identical to one process running them all.
TEST(EnsembleMpi, MembersOverRanksEqualOneProcess) {
  const auto members = ht::disordered_spin_bosons(7);
  const auto times = ht::ensemble_times();
  heom::EnsembleOptions options;
  options.depth = ht::ensemble_depth;
  const heom::EnsembleResult alone = heom::run_ensemble(Exec(), members, times, options);
  options.ranks = world();
  std::int64_t reported = -1;
  options.progress = [&](std::int64_t finished, std::int64_t total) {
    EXPECT_EQ(total, 7);
    EXPECT_GE(finished, reported);
    reported = finished;
  };
  const heom::EnsembleResult spread = heom::run_ensemble(Exec(), members, times, options);
  ht::expect_same_members(alone, spread);
  EXPECT_EQ(spread.workers, world()->size());
  for (std::size_t t = 0; t < times.size(); ++t)
    EXPECT_EQ(std::memcmp(alone.mean[t].data(), spread.mean[t].data(), 4 * sizeof(heom::complex)), 0);
  for (const auto& m : spread.members) EXPECT_TRUE(m.worker >= 0 && m.worker < world()->size()) << m.worker;
  // Only rank 0 reports, after each of its members at least.
  if (world()->rank() == 0)
    EXPECT_GE(reported, 1);
  else
    EXPECT_EQ(reported, -1);
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
