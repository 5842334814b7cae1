// The ground-column shape (heom::AdoShape::ground_column): ADOs of rho = X |0><0| held as their
// column 0. Its generator against the square one on the same columns, its propagations against the
// square solver's and an exact correlation function, and what it refuses.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using heom::AdoShape;
using heom::Bath;
using heom::complex;
using heom::Matrix;
using heom::Model;
namespace ht = heom::testing;

template <class E>
class GroundColumn : public ::testing::Test {};
TYPED_TEST_SUITE(GroundColumn, ht::Backends);

/// `block` (m x m) as the excited levels 1..m of an (m + 1)-level system whose level 0 it leaves alone.
Matrix with_ground(const Matrix& block) {
  const int m = block.rows();
  Matrix out(m + 1, m + 1);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) out(i + 1, j + 1) = block(i, j);
  return out;
}

using ht::random_hermitian;

struct Case {
  std::string name;
  Model model;
};

/// Exciton models with a ground state: every kind of bath term the generator has (diagonal baths on
/// site projectors and on a diagonal with several coupled rows, rank-one and general dense couplings,
/// terminators, complex rates, a complex H and a non-zero ground energy).
std::vector<Case> cases() {
  std::vector<Case> out;
  const heom::DrudeLorentz matsubara{0.05, 0.5, 0.5, 2};
  const heom::DrudeLorentz pade_terminated{0.04, 0.7, 0.4, 2, heom::DrudeLorentzExpansion::Pade, true};
  {
    // A dimer on site projectors, as in FMO.
    const Matrix h = with_ground(Matrix{{1.0, 0.2}, {0.2, 1.3}});
    out.push_back({"dimer, site projectors",
                   Model(h, {Bath::drude_lorentz(heom::operators::projector(3, 1, 1), matsubara),
                             Bath::drude_lorentz(heom::operators::projector(3, 2, 2), pade_terminated)})});
  }
  {
    // Three sites with a complex H and ground energy 0.3; a diagonal coupling on two rows, and a site's
    // projector in another basis (rank one, dense) with a terminator.
    Matrix h = with_ground(random_hermitian(3, 0.5, 7u));
    h(0, 0) = 0.3;
    Matrix diagonal(4, 4);
    diagonal(1, 1) = 1.0;
    diagonal(3, 3) = -0.5;
    const Matrix u = with_ground(random_hermitian(3, 1.0, 8u));
    Matrix c(4, 1);
    for (int i = 1; i < 4; ++i) c(i, 0) = u(i, 1);
    const Matrix rank_one = c * c.adjoint();
    heom::DrudeLorentz terminated{0.03, 0.6, 0.8, 1, heom::DrudeLorentzExpansion::Matsubara, true};
    out.push_back({"trimer, complex H, rank-one and two-row couplings",
                   Model(h, {Bath::drude_lorentz(diagonal, matsubara), Bath::drude_lorentz(rank_one, terminated)})});
  }
  {
    // Lindblad terms with L |0> = 0, which leave column 0's equation closed: relaxation 2 -> 1, decay
    // 1 -> 0 (into the ground state: lifetime broadening), dephasing of site 1.
    Model m(with_ground(Matrix{{1.0, 0.2}, {0.2, 1.3}}),
            {Bath::drude_lorentz(heom::operators::projector(3, 1, 1), matsubara)});
    Matrix relaxation(3, 3);
    relaxation(1, 2) = complex(0.6, 0.8);
    m.add_lindblad(relaxation, 0.2)
        .add_lindblad(heom::operators::projector(3, 0, 1), 0.15)
        .add_lindblad(heom::operators::projector(3, 1, 1), 0.1);
    out.push_back({"dimer, Lindblad terms among the excited states", m});
  }
  {
    // A general dense coupling (rank two) with an underdamped bath: complex rates.
    const Matrix h = with_ground(Matrix{{1.0, 0.1}, {0.1, 0.8}});
    const Matrix q = with_ground(Matrix{{0.5, 0.3}, {0.3, -0.2}});
    out.push_back({"dimer, dense coupling, complex rates",
                   Model(h, {Bath::underdamped(q, {0.15, 0.3, 1.2, 0.6, 1}),
                             Bath::drude_lorentz(heom::operators::projector(3, 1, 1), matsubara)})});
  }
  {
    // Driven among the excited states, and the ground energy too (the (0, 0) element): H(t) keeps
    // level 0 an eigenstate, so the shape holds.
    Model m(with_ground(Matrix{{1.0, 0.2}, {0.2, 1.3}}),
            {Bath::drude_lorentz(heom::operators::projector(3, 1, 1), matsubara)});
    m.add_drive(with_ground(Matrix{{0.0, 1.0}, {1.0, 0.0}}), heom::DriveShape::cosine(0.4, 1.1, 0.3));
    m.add_drive(heom::operators::projector(3, 0, 0), heom::DriveShape::gaussian(0.5, 0.2, 1.0));
    out.push_back({"dimer, driven", m});
  }
  return out;
}

heom::GeneratorOptions ground_columns() {
  heom::GeneratorOptions o;
  o.shape = AdoShape::ground_column;
  return o;
}

/// The generator of the ground-column shape gives column 0 of the square generator's output on the
/// same columns, and the square one leaves every other column zero: the shape is closed and exact.
TYPED_TEST(GroundColumn, GeneratorIsColumnZeroOfTheSquareOne) {
  using E = TypeParam;
  using Generator = heom::Generator<E>;
  for (const Case& c : cases()) {
    const int n = c.model.dimension();
    const heom::Hierarchy hierarchy(c.model.num_exponents(), 3);
    const Generator square(E(), c.model, hierarchy), columns(E(), c.model, hierarchy, ground_columns());
    EXPECT_EQ(columns.kernel(), heom::GeneratorKernel::ground_column);
    ASSERT_EQ(columns.block_size(), n);
    ASSERT_EQ(columns.vector_size() * n, square.vector_size());
    EXPECT_FALSE(columns.preserves_hermiticity());
    const auto in_columns = ht::random_vector<E>(columns.vector_size(), 11u);
    const auto h_columns = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in_columns);
    auto h_square = Kokkos::create_mirror_view(typename Generator::vector_type("square_in", square.vector_size()));
    for (int a = 0; a < hierarchy.size(); ++a)
      for (int i = 0; i < n; ++i) h_square((a * n + i) * n) = h_columns(a * n + i);
    typename Generator::vector_type in_square("square_in", square.vector_size());
    Kokkos::deep_copy(in_square, h_square);
    for (auto damping : {Generator::Damping::included, Generator::Damping::excluded}) {
      typename Generator::vector_type out_square("square_out", square.vector_size()),
          out_columns("columns_out", columns.vector_size());
      square.apply(E(), in_square, out_square, damping);
      columns.apply(E(), in_columns, out_columns, damping);
      const auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out_square);
      const auto col = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out_columns);
      double difference = 0.0, scale = 0.0, outside = 0.0;
      for (int a = 0; a < hierarchy.size(); ++a)
        for (int i = 0; i < n; ++i) {
          difference = std::max(difference, Kokkos::abs(s((a * n + i) * n) - col(a * n + i)));
          scale = std::max(scale, Kokkos::abs(col(a * n + i)));
          for (int j = 1; j < n; ++j) outside = std::max(outside, Kokkos::abs(s((a * n + i) * n + j)));
        }
      EXPECT_GT(scale, 0.1) << c.name;
      EXPECT_LE(difference, 1e-14 * scale) << c.name;
      EXPECT_EQ(outside, 0.0) << c.name << ": the square generator left column 0";
    }
  }
}

/// A batch of members with different H computes each member's columns as its own generator does.
TYPED_TEST(GroundColumn, BatchMembersAreTheirOwnGenerators) {
  using E = TypeParam;
  using Generator = heom::Generator<E>;
  const Model first = cases().front().model;
  Matrix shifted = first.hamiltonian();
  shifted(1, 1) += 0.25;
  shifted(0, 0) = -0.4;  // the member's own B_00 too
  const Model second(shifted, first.baths());
  const heom::Hierarchy hierarchy(first.num_exponents(), 3);
  const Generator batch(E(), std::vector<Model>{first, second}, hierarchy, ground_columns());
  const auto in = ht::random_vector<E>(batch.vector_size(), 12u);
  typename Generator::vector_type out("out", batch.vector_size());
  batch.apply(E(), in, out);
  const auto h_out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  int member = 0;
  for (const Model& model : {first, second}) {
    const Generator solo(E(), model, hierarchy, ground_columns());
    const auto part =
        Kokkos::subview(in, std::make_pair(member * solo.vector_size(), (member + 1) * solo.vector_size()));
    typename Generator::vector_type in_solo("in_solo", solo.vector_size()), out_solo("out_solo", solo.vector_size());
    Kokkos::deep_copy(in_solo, part);
    solo.apply(E(), in_solo, out_solo);
    const auto h_solo = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out_solo);
    for (std::int64_t i = 0; i < solo.vector_size(); ++i)
      ASSERT_EQ(h_solo(i), h_out(member * solo.vector_size() + i)) << "member " << member << ", element " << i;
    ++member;
  }
}

heom::SolverOptions solver_options(heom::Method method, AdoShape shape) {
  heom::SolverOptions o;
  o.integrator.method = method;
  o.integrator.rtol = 1e-10;
  o.integrator.atol = 1e-12;
  o.generator.shape = shape;
  return o;
}

/// A dipole correlation function <mu(t) mu(0)> from |0><0|, in the ground-column shape, equals the
/// square solver's to the tolerances, with both adaptive methods; rho keeps column 0 alone.
TYPED_TEST(GroundColumn, CorrelationFunctionMatchesTheSquareSolver) {
  using E = TypeParam;
  std::vector<double> times;
  for (int i = 0; i <= 20; ++i) times.push_back(1.0 * i);
  for (const Case& c : cases()) {
    const int n = c.model.dimension();
    Matrix mu(n, n);
    for (int i = 1; i < n; ++i) mu(i, 0) = mu(0, i) = 1.0 / i;
    for (heom::Method method : {heom::Method::exp_adams, heom::Method::dopri5}) {
      std::vector<std::vector<complex>> results;
      std::vector<Matrix> last_rho;
      for (AdoShape shape : {AdoShape::square, AdoShape::ground_column}) {
        heom::Solver<E> solver(E(), c.model, 4, solver_options(method, shape));
        solver.set_initial_state(heom::operators::projector(n, 0, 0));
        results.push_back(heom::correlation_function(solver, mu, mu, times));
        last_rho.push_back(solver.rho());
      }
      double worst = 0.0;
      for (std::size_t k = 0; k < times.size(); ++k) worst = std::max(worst, std::abs(results[0][k] - results[1][k]));
      EXPECT_LE(worst, 1e-8) << c.name << ", " << heom::to_string(method);
      EXPECT_GT(std::abs(results[1].back() - results[1].front()), 0.1) << c.name << ": C(t) moves";
      EXPECT_LE(heom::max_abs_diff(last_rho[0], last_rho[1]), 1e-8) << c.name;
      for (int i = 0; i < n; ++i)
        for (int j = 1; j < n; ++j) EXPECT_EQ(last_rho[1](i, j), complex(0.0));
    }
  }
}

// <mu(t) mu(0)> of a trimer with site baths of three kinds, against QuTiP propagating mu |0><0| (rtol =
// atol = 1e-12), in both shapes.
TYPED_TEST(GroundColumn, AbsorptionCorrelationMatchesQutip) {
  using E = TypeParam;
  const auto ref = ht::load_reference("absorption_trimer");
  const Model model = ht::model_from_json(ref);
  const Matrix mu = ht::to_matrix(ref.at("dipole"));
  const std::vector<double> times = ref.at("times");
  const auto expected = ht::to_complex_list(ref.at("correlation"));
  EXPECT_GT(std::abs(expected.back() - expected.front()), 0.5);  // it moves: the comparison checks something
  for (AdoShape shape : {AdoShape::square, AdoShape::ground_column}) {
    heom::Solver<E> solver(E(), model, ref.at("depth"), solver_options(heom::Method::exp_adams, shape));
    ASSERT_EQ(solver.hierarchy().size(), ref.at("num_ados").get<int>());
    solver.set_initial_state(heom::operators::projector(model.dimension(), 0, 0));
    const auto c = heom::correlation_function(solver, mu, mu, times);
    double worst = 0.0;
    for (std::size_t k = 0; k < times.size(); ++k) worst = std::max(worst, std::abs(c[k] - expected[k]));
    EXPECT_LE(worst, 1e-7) << heom::to_string(shape);
  }
}

// The pure-dephasing monomer of SteadyState.PureDephasingDipoleCorrelationIsExact, in the ground-column
// shape: <mu(t) mu(0)> = exp(-i eps t - g(t)) exactly.
TYPED_TEST(GroundColumn, PureDephasingDipoleCorrelationIsExact) {
  using E = TypeParam;
  const double eps = 1.0;
  const heom::DrudeLorentz dl{0.05, 0.5, 0.5, 1};
  const heom::Model model(Matrix{{0, 0}, {0, eps}}, {Bath::drude_lorentz(heom::operators::projector(2, 1, 1), dl)});
  heom::SolverOptions o = solver_options(heom::Method::exp_adams, AdoShape::ground_column);
  o.integrator.rtol = 1e-12;
  o.integrator.atol = 1e-14;
  heom::Solver<E> solver(E(), model, 14, o);
  solver.set_initial_state(Matrix{{1, 0}, {0, 0}});
  std::vector<double> times;
  for (int i = 0; i <= 40; ++i) times.push_back(0.5 * i);
  const auto c = heom::correlation_function(solver, heom::operators::sigma_x(), heom::operators::sigma_x(), times);
  const complex i_unit(0.0, 1.0);
  double worst = 0.0;
  for (std::size_t k = 0; k < times.size(); ++k) {
    const double t = times[k];
    complex g = 0.0;
    for (const heom::Exponent& e : model.baths()[0].exponents()) {
      const complex ck = e.kind == heom::ExponentKind::R   ? e.c
                         : e.kind == heom::ExponentKind::I ? i_unit * e.c
                                                           : e.c + i_unit * e.c2;
      g += ck * (t / e.v - (1.0 - std::exp(-e.v * t)) / (e.v * e.v));
    }
    worst = std::max(worst, std::abs(c[k] - std::exp(-i_unit * eps * t - g)));
  }
  EXPECT_LE(worst, 1e-9);
  EXPECT_LT(std::abs(c.back()), 0.9);  // it has dephased visibly
}

/// The state vectors hold n elements per ADO, and the memory plan says so.
TYPED_TEST(GroundColumn, HoldsOneColumnPerAdo) {
  using E = TypeParam;
  const Model model = cases().front().model;
  heom::Solver<E> solver(E(), model, 4, solver_options(heom::Method::exp_adams, AdoShape::ground_column));
  const heom::Solver<E> square(E(), model, 4, solver_options(heom::Method::exp_adams, AdoShape::square));
  EXPECT_EQ(solver.memory_plan().bytes_per_vector, solver.hierarchy().size() * 3u * 16u);
  EXPECT_EQ(square.memory_plan().bytes_per_vector, 3 * solver.memory_plan().bytes_per_vector);
  EXPECT_EQ(solver.ados().extent(1), 3u);
  EXPECT_EQ(solver.ados().extent(2), 1u);
}

/// What the shape cannot hold is refused, each with its reason.
TYPED_TEST(GroundColumn, RefusesWhatItCannotHold) {
  using E = TypeParam;
  const Model model = cases().front().model;
  const heom::Hierarchy hierarchy(model.num_exponents(), 2);
  auto refusal = [](const auto& make) {
    try {
      make();
    } catch (const heom::Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  Matrix coupled_ground = model.hamiltonian();
  coupled_ground(0, 2) = coupled_ground(2, 0) = 0.1;
  EXPECT_NE(refusal([&] {
              heom::Generator<E>(E(), Model(coupled_ground, model.baths()), hierarchy, ground_columns());
            }).find("H has element (0, 2)"),
            std::string::npos);
  const Model bath_on_ground(model.hamiltonian(),
                             {Bath::drude_lorentz(heom::operators::projector(3, 0, 0), {0.05, 0.5, 0.5, 1})});
  EXPECT_NE(refusal([&] {
              heom::Generator<E>(E(), bath_on_ground, heom::Hierarchy(2, 2), ground_columns());
            }).find("the coupling of bath 0 has element (0, 0)"),
            std::string::npos);
  Model pumped = model;  // a term that takes level 0 elsewhere (decay into it is fine)
  pumped.add_lindblad(Matrix{{0.0, 0.0, 0.0}, {1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}}, 0.1);
  EXPECT_NE(refusal([&] {
              heom::Generator<E>(E(), pumped, hierarchy, ground_columns());
            }).find("the operator of lindblad term 0 has element (1, 0)"),
            std::string::npos);
  heom::GeneratorOptions mismatched = ground_columns();
  mismatched.kernel = heom::GeneratorKernel::portable;
  EXPECT_NE(refusal([&] { heom::Generator<E>(E(), model, hierarchy, mismatched); }).find("not ground columns"),
            std::string::npos);
  heom::GeneratorOptions square;
  square.kernel = heom::GeneratorKernel::ground_column;
  EXPECT_NE(refusal([&] { heom::Generator<E>(E(), model, hierarchy, square); }).find("not square blocks"),
            std::string::npos);

  heom::Solver<E> solver(E(), model, 2, solver_options(heom::Method::exp_adams, AdoShape::ground_column));
  Matrix excited_population(3, 3);
  excited_population(1, 1) = 1.0;
  EXPECT_NE(refusal([&] { solver.set_initial_state(excited_population); }).find("element (1, 1) outside column 0"),
            std::string::npos);
  solver.set_initial_state(heom::operators::projector(3, 0, 0));
  EXPECT_NE(
      refusal([&] { solver.apply_operator(Matrix::identity(3), heom::Solver<E>::Side::right); }).find("from the right"),
      std::string::npos);
  EXPECT_NE(refusal([&] { solver.solve_steady_state(); }).find("ground-column"), std::string::npos);

  // A state saved in one shape is not loaded into the other.
  heom::Solver<E> other(E(), model, 2, solver_options(heom::Method::exp_adams, AdoShape::square));
  try {
    other.load_state(solver.save_state());
    ADD_FAILURE() << "a ground-column state was loaded into a square solver";
  } catch (const heom::StateMismatchError& e) {
    EXPECT_NE(std::string(e.what()).find("shape ground-column, not square"), std::string::npos) << e.what();
  }
}

}  // namespace
