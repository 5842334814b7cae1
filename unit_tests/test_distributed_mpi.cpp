// One hierarchy split over the ranks of an MPI job (run under mpirun with 1, 2, 3 and 4 ranks): every
// ADO, rho and the step counts are bit-identical to one device's run, for every generator kernel and
// integrator, with balanced and uneven partitions and a rank that owns no ADO.
#include <gtest/gtest.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "heom/distributed/mpi_communicator.hpp"
#include "heom/solver/solver.hpp"

namespace {

using heom::Bath;
using heom::complex;
using heom::GeneratorKernel;
using heom::Matrix;
using heom::Method;
using heom::Model;
using Exec = Kokkos::DefaultHostExecutionSpace;

std::shared_ptr<const heom::Communicator> world() {
  static const auto communicator = std::make_shared<const heom::MpiCommunicator>(MPI_COMM_WORLD);
  return communicator;
}

// Spin-boson: n = 2 (the two-level kernel), K = 3, depth 10: 286 ADOs, 5 units of 64.
Model spin_boson() {
  const Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  return Model(0.25 * sz + 0.5 * sx, {Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, 2})});
}
const Matrix spin_boson_start{{1.0, 0.0}, {0.0, 0.0}};

// An FMO-like exciton model: n = 7, a site projector bath per site (the Hermitian form), K = 7,
// depth 4: 330 ADOs.
Model excitons() {
  Matrix h(7, 7);
  for (int i = 0; i < 7; ++i) {
    h(i, i) = 0.2 * i;
    if (i + 1 < 7) h(i, i + 1) = h(i + 1, i) = 0.1 + 0.01 * i;
  }
  std::vector<Bath> baths;
  for (int i = 0; i < 7; ++i) baths.push_back(Bath::drude_lorentz(heom::operators::projector(7, i, i), {0.05, 0.5, 1.0, 0}));
  return Model(h, baths);
}
Matrix excitons_start() {
  Matrix rho(7, 7);
  rho(0, 0) = 1.0;
  return rho;
}

// A complex three-level model with two baths, one of them dense (sigma_x-like): K = 6, depth 5, 462
// ADOs; started from a non-Hermitian rho (the general form).
Model three_level() {
  const Matrix h{{0.5, complex(0.3, 0.1), 0.0}, {complex(0.3, -0.1), 0.0, 0.2}, {0.0, 0.2, -0.4}};
  const Matrix q_diagonal{{1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, -1.0}};
  const Matrix q_dense{{0.0, 1.0, 0.0}, {1.0, 0.0, 1.0}, {0.0, 1.0, 0.0}};
  return Model(h, {Bath::drude_lorentz(q_diagonal, {0.1, 0.5, 0.5, 2}), Bath::drude_lorentz(q_dense, {0.05, 1.0, 0.5, 2})});
}
const Matrix three_level_start{{0.5, 0.5, 0.0}, {0.0, 0.5, 0.0}, {0.0, 0.0, 0.0}};

struct Case {
  const char* name;
  Model model;
  int depth;
  Matrix rho0;
};

std::vector<Case> cases() {
  return {{"spin-boson", spin_boson(), 10, spin_boson_start},
          {"excitons", excitons(), 4, excitons_start()},
          {"three-level", three_level(), 5, three_level_start}};
}

heom::SolverOptions options(Method method, GeneratorKernel kernel) {
  heom::SolverOptions o;
  o.integrator.method = method;
  if (heom::is_adaptive(method)) {
    o.integrator.rtol = 1e-7;
    o.integrator.atol = 1e-9;
  } else {
    o.integrator.step = 0.02;
  }
  o.generator.kernel = kernel;
  return o;
}

std::vector<complex> host_copy(const heom::AdoView<Exec>& ados) {
  std::vector<complex> out(ados.size());
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ados);
  std::memcpy(static_cast<void*>(out.data()), host.data(), sizeof(complex) * out.size());
  return out;
}

/// Runs `c` on one device and split over the world with `partition` (empty: balanced); expects the
/// same steps and the same bits in every ADO this rank owns.
void expect_identical(const Case& c, Method method, GeneratorKernel kernel, const std::vector<int>& partition = {}) {
  SCOPED_TRACE(std::string(c.name) + ", " + heom::to_string(method) + ", " + heom::to_string(kernel) + " kernel");
  heom::Solver<Exec> one(Exec(), c.model, c.depth, options(method, kernel));
  heom::SolverOptions split_options = options(method, kernel);
  split_options.communicator = world();
  split_options.partition = partition;
  heom::Solver<Exec> split(Exec(), c.model, c.depth, split_options);
  ASSERT_EQ(split.generator().kernel(), one.generator().kernel());
  one.set_initial_state(c.rho0);
  split.set_initial_state(c.rho0);
  const double t_end = 2.0;
  one.run_until(t_end);
  split.run_until(t_end);
  EXPECT_EQ(split.statistics().steps, one.statistics().steps);
  EXPECT_EQ(split.statistics().rejected, one.statistics().rejected);
  EXPECT_GT(one.statistics().steps, 5);

  const std::vector<complex> all = host_copy(one.ados()), mine = host_copy(split.ados());
  const int n2 = c.model.dimension() * c.model.dimension();
  ASSERT_EQ(static_cast<int>(mine.size()), split.generator().num_ados() * n2);
  const std::size_t offset = static_cast<std::size_t>(split.first_ado()) * n2;
  EXPECT_EQ(std::memcmp(mine.data(), all.data() + offset, sizeof(complex) * mine.size()), 0)
      << "ADOs " << split.first_ado() << ".." << split.first_ado() + split.generator().num_ados()
      << " differ from one device's";
  if (split.owns_rho()) EXPECT_EQ(heom::max_abs_diff(split.rho(), one.rho()), 0.0);
  else EXPECT_THROW(split.rho(), heom::Error);
}

TEST(DistributedMpi, EveryKernelAndMethodIsBitIdenticalToOneDevice) {
  const std::vector<Case> all = cases();
  for (const Case& c : all)
    for (Method method : {Method::exp_adams, Method::dopri5, Method::rk4, Method::lsrk4})
      expect_identical(c, method, GeneratorKernel::automatic);
  for (const Case& c : all) {
    const bool hermitian = c.model.dimension() == 7;
    std::vector<GeneratorKernel> kernels = {GeneratorKernel::portable};
    if (heom::Generator<Exec>::can_run(GeneratorKernel::host_block, c.model.dimension(), false))
      kernels.push_back(GeneratorKernel::host_block);
    if (hermitian && heom::Generator<Exec>::can_run(GeneratorKernel::hermitian, 7, true))
      kernels.push_back(GeneratorKernel::hermitian);
    if (heom::Generator<Exec>::can_run(GeneratorKernel::two_level, c.model.dimension(), false))
      kernels.push_back(GeneratorKernel::two_level);
    for (GeneratorKernel kernel : kernels)
      for (Method method : {Method::exp_adams, Method::dopri5}) expect_identical(c, method, kernel);
  }
}

// Part 0 owns one unit, the last part owns nothing, the others split the rest unevenly.
TEST(DistributedMpi, UnevenPartitionsAndAnEmptyDevice) {
  const int parts = world()->size();
  for (const Case& c : cases()) {
    const int size = static_cast<int>(heom::Hierarchy::count(c.model.num_exponents(), c.depth));
    const int unit = heom::Partition::ados_per_unit;
    std::vector<int> boundaries{0};
    if (parts == 1) {
      boundaries.push_back(size);
    } else {
      boundaries.push_back(unit);
      const int owning = parts > 2 ? parts - 2 : 1;  // parts after the first that own ADOs
      const int rest_units = (size - unit + unit - 1) / unit;
      for (int p = 1; p <= owning; ++p) boundaries.push_back(std::min(size, unit + rest_units * p / owning * unit));
      if (parts > 2) boundaries.push_back(size);
    }
    for (Method method : {Method::exp_adams, Method::dopri5}) expect_identical(c, method, GeneratorKernel::automatic, boundaries);
  }
}

TEST(DistributedMpi, DevicesThatDisagreeRefuseToStart) {
  if (world()->size() < 2) GTEST_SKIP() << "needs two ranks";
  heom::SolverOptions o = options(Method::exp_adams, GeneratorKernel::automatic);
  o.communicator = world();
  // The last rank runs one depth deeper: every rank refuses, none hangs.
  const int depth = world()->rank() == world()->size() - 1 ? 6 : 5;
  try {
    heom::Solver<Exec> solver(Exec(), three_level(), depth, o);
    ADD_FAILURE() << "started although the ranks disagree on the depth";
  } catch (const heom::Error& e) {
    EXPECT_NE(std::string(e.what()).find("different model, depth"), std::string::npos) << e.what();
  }
}

TEST(DistributedMpi, ObservingEveryAdoAndAPartitionWithoutCommunicatorAreRefused) {
  heom::SolverOptions o = options(Method::exp_adams, GeneratorKernel::automatic);
  o.communicator = world();
  o.observe_all_ados = true;
  EXPECT_THROW(heom::Solver<Exec>(Exec(), spin_boson(), 4, o), heom::Error);
  heom::SolverOptions p = options(Method::exp_adams, GeneratorKernel::automatic);
  p.partition = {0, 15};
  EXPECT_THROW(heom::Solver<Exec>(Exec(), spin_boson(), 4, p), heom::Error);
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
    if (rank != 0) delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
    result = RUN_ALL_TESTS();
  }
  MPI_Finalize();
  return result;
}
