// Steady states against QuTiP 4.7's HEOMSolver.steady_state() (sparse LU), and what a steady state
// must be: unchanged by propagation, trace one, Hermitian; the GMRES solve's failure paths; and
// multiplying every ADO by an operator (the start of a correlation function).
#include <cmath>
#include <string>
#include <vector>

#include "heom/solver/lead_currents.hpp"
#include "test_support.hpp"

namespace {

using heom::complex;
using heom::Matrix;
namespace ht = heom::testing;
using ht::tolerances;

template <class E>
class SteadyState : public ::testing::Test {};
TYPED_TEST_SUITE(SteadyState, ht::Backends);

/// The steady state's ADOs on the host, [ado] of n x n.
template <class E>
std::vector<Matrix> host_ados(const heom::Solver<E>& solver) {
  const auto ados = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), solver.ados());
  const int n = static_cast<int>(ados.extent(1));
  std::vector<Matrix> out;
  for (std::size_t a = 0; a < ados.extent(0); ++a) {
    Matrix m(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) m(i, j) = heom::complex(ados(a, i, j).real(), ados(a, i, j).imag());
    out.push_back(m);
  }
  return out;
}

/// rho and every first-tier ADO against QuTiP's, to `tolerance` (absolute; rho's elements are <= 1).
template <class E>
void check_against_qutip(const std::string& name, double tolerance) {
  const auto ref = ht::load_reference(name);
  heom::Solver<E> solver(E(), ht::model_from_json(ref), ref.at("depth"));
  ASSERT_EQ(solver.hierarchy().size(), ref.at("num_ados").get<int>());
  heom::SteadyStateOptions options;
  options.tolerance = 1e-12;
  const heom::SteadyStateReport report = solver.solve_steady_state(options);
  EXPECT_LE(report.residual, 1e-12);
  EXPECT_GT(report.iterations, 0);

  const Matrix rho = solver.rho();
  EXPECT_NEAR(std::abs(rho.trace() - heom::complex(1.0)), 0.0, 1e-14);
  EXPECT_TRUE(rho.is_hermitian(0.0));
  EXPECT_LE(heom::max_abs_diff(rho, ht::to_matrix(ref.at("rho"))), tolerance) << name << ": rho";

  const std::vector<Matrix> ados = host_ados(solver);
  int tier1 = 0;
  for (const auto& entry : ref.at("tier1")) {
    const int a = solver.hierarchy().index_of(entry.at("label").get<std::vector<int>>());
    ASSERT_GE(a, 0);
    const Matrix expected = ht::to_matrix(entry.at("ado"));
    EXPECT_GT(expected.max_abs(), 1e-6) << "a first-tier ADO that is zero checks nothing";
    EXPECT_LE(heom::max_abs_diff(ados[a], expected), tolerance) << name << ": ADO " << a;
    ++tier1;
  }
  EXPECT_EQ(tier1, solver.model().num_exponents());
}

TYPED_TEST(SteadyState, MatchesQutipSpinBosonMatsubara) {
  check_against_qutip<TypeParam>("steady_spin_boson_matsubara", 1e-9);
}

TYPED_TEST(SteadyState, MatchesQutipSpinBosonPadeWithTerminator) {
  check_against_qutip<TypeParam>("steady_spin_boson_pade", 1e-9);
}

TYPED_TEST(SteadyState, MatchesQutipSpinBosonWithLindbladTerms) {
  check_against_qutip<TypeParam>("steady_spin_boson_lindblad", 1e-9);
}
TYPED_TEST(SteadyState, MatchesQutipFmoDepth3) { check_against_qutip<TypeParam>("steady_fmo_depth3", 1e-9); }

// A level between two leads at bias: QuTiP's steady rho and the current into each lead (which the
// two leads' currents, equal and opposite, must also show), with every preconditioner.
TYPED_TEST(SteadyState, FermionicLeadsMatchQutipsStateAndCurrents) {
  using E = TypeParam;
  for (const char* file : {"steady_siam_pade", "steady_siam_matsubara"}) {
    const auto ref = ht::load_reference(file);
    for (auto preconditioner : {heom::SteadyPreconditioner::tiers, heom::SteadyPreconditioner::system}) {
      heom::Solver<E> solver(E(), ht::model_from_json(ref), ref.at("depth"));
      ASSERT_EQ(solver.hierarchy().size(), ref.at("num_ados").get<int>()) << file;
      heom::SteadyStateOptions options;
      options.tolerance = 1e-12;
      options.preconditioner = preconditioner;
      solver.solve_steady_state(options);
      EXPECT_LE(heom::max_abs_diff(solver.rho(), ht::to_matrix(ref.at("rho"))), 1e-9) << file;
      const auto currents = heom::lead_currents(E(), solver.model(), solver.hierarchy(), solver.ados());
      ASSERT_EQ(currents.size(), 2u);
      for (int b = 0; b < 2; ++b) {
        const complex expected = ht::to_complex(ref.at("current").at(b));
        EXPECT_GT(std::abs(expected), 1e-3) << file;  // (a current that flows)
        EXPECT_LE(std::abs(currents[b] - expected), 1e-8 * std::abs(expected))
            << file << ", lead " << b << ": " << currents[b] << " against " << expected;
      }
      EXPECT_LE(std::abs(currents[0] + currents[1]), 1e-10 * std::abs(currents[0])) << file;
    }
  }
}

// d x / dt = 0: propagating the steady state leaves it where it is (here over ten relaxation times).
TYPED_TEST(SteadyState, IsStationaryUnderPropagation) {
  using E = TypeParam;
  const auto ref = ht::load_reference("steady_spin_boson_matsubara");
  heom::Solver<E> solver(E(), ht::model_from_json(ref), ref.at("depth"), tolerances(1e-10, 1e-12));
  solver.set_initial_state(Matrix{{1, 0}, {0, 0}});
  solver.run_until(3.0);  // a start far from the steady state
  heom::SteadyStateOptions options;
  options.tolerance = 1e-12;
  solver.solve_steady_state(options);
  EXPECT_EQ(solver.time(), 3.0);
  EXPECT_TRUE(heom::is_hermitian_form(solver.kernel()) || solver.kernel() != heom::GeneratorKernel::hermitian);
  const Matrix steady = solver.rho();
  solver.run_until(23.0);
  EXPECT_LE(heom::max_abs_diff(solver.rho(), steady), 1e-9);
  // ... while the start it came from does move.
  EXPECT_GT(heom::max_abs_diff(steady, Matrix{{1, 0}, {0, 0}}), 0.1);
}

// The preconditioner changes the work, not the answer.
TYPED_TEST(SteadyState, PreconditionerSavesIterationsNotAccuracy) {
  using E = TypeParam;
  const auto ref = ht::load_reference("steady_spin_boson_matsubara");
  heom::SteadyStateOptions options;
  options.tolerance = 1e-11;
  heom::Solver<E> with(E(), ht::model_from_json(ref), ref.at("depth"));
  const auto preconditioned = with.solve_steady_state(options);
  options.preconditioner = heom::SteadyPreconditioner::none;
  options.max_iterations = 20000;
  heom::Solver<E> without(E(), ht::model_from_json(ref), ref.at("depth"));
  const auto plain = without.solve_steady_state(options);
  EXPECT_LT(2 * preconditioned.iterations, plain.iterations);
  EXPECT_LE(heom::max_abs_diff(with.rho(), without.rho()), 1e-9);
}

// The sweeps over the tiers take far fewer iterations than each ADO's own term alone, to the same state,
// and the symmetric sweep fewer again.
TYPED_TEST(SteadyState, TierSweepsTakeFewerIterationsToTheSameState) {
  using E = TypeParam;
  EXPECT_EQ(heom::SteadyStateOptions{}.preconditioner, heom::SteadyPreconditioner::tiers);
  const auto ref = ht::load_reference("steady_fmo_depth3");
  heom::SteadyStateOptions options;
  options.tolerance = 1e-12;
  std::vector<heom::SteadyStateReport> reports;
  std::vector<Matrix> states;
  for (auto preconditioner : {heom::SteadyPreconditioner::system, heom::SteadyPreconditioner::tiers,
                              heom::SteadyPreconditioner::tiers_symmetric}) {
    options.preconditioner = preconditioner;
    heom::Solver<E> solver(E(), ht::model_from_json(ref), ref.at("depth"));
    reports.push_back(solver.solve_steady_state(options));
    states.push_back(solver.rho());
    EXPECT_LE(reports.back().residual, options.tolerance) << to_string(preconditioner);
    EXPECT_LE(heom::max_abs_diff(states.back(), ht::to_matrix(ref.at("rho"))), 1e-9) << to_string(preconditioner);
  }
  EXPECT_LT(3 * reports[1].iterations, reports[0].iterations)
      << reports[1].iterations << " against " << reports[0].iterations;
  EXPECT_LT(reports[2].iterations, reports[1].iterations);
  EXPECT_LE(heom::max_abs_diff(states[1], states[0]), 1e-10);
  EXPECT_LE(heom::max_abs_diff(states[2], states[0]), 1e-10);
}

TYPED_TEST(SteadyState, RefusesToReportAStateAboveTheTolerance) {
  using E = TypeParam;
  const auto ref = ht::load_reference("steady_fmo_depth3");
  heom::Solver<E> solver(E(), ht::model_from_json(ref), ref.at("depth"));
  heom::SteadyStateOptions options;
  options.tolerance = 1e-12;
  options.max_iterations = 3;
  try {
    solver.solve_steady_state(options);
    FAIL() << "three iterations cannot reach 1e-12";
  } catch (const heom::SteadyStateError& e) {
    EXPECT_GT(e.report().residual, 1e-12);
    EXPECT_LE(e.report().iterations, 3);
    EXPECT_FALSE(e.report().fell_back);
    EXPECT_NE(std::string(e.what()).find("steady state not reached"), std::string::npos) << e.what();
  }
  // The fallback propagates and tries again (and says so when that is not enough either).
  options.fallback_time = 100.0;
  try {
    solver.solve_steady_state(options);
    FAIL() << "six iterations cannot reach 1e-12";
  } catch (const heom::SteadyStateError& e) {
    EXPECT_TRUE(e.report().fell_back);
    EXPECT_NE(std::string(e.what()).find("after propagating"), std::string::npos) << e.what();
  }
  options.restart = 0;
  EXPECT_THROW(solver.solve_steady_state(options), heom::Error);
}

TYPED_TEST(SteadyState, RefusesKrylovVectorsThatDoNotFit) {
  using E = TypeParam;
  const auto ref = ht::load_reference("steady_fmo_depth3");
  heom::SolverOptions o;
  o.memory_limit = 4u << 20;  // the solver's own vectors fit, 64 more do not
  heom::Solver<E> solver(E(), ht::model_from_json(ref), ref.at("depth"), o);
  EXPECT_THROW(solver.solve_steady_state(), heom::OutOfMemoryError);
}

TYPED_TEST(SteadyState, ApplyOperatorMultipliesEveryAdo) {
  using E = TypeParam;
  const auto ref = ht::load_reference("steady_spin_boson_matsubara");
  heom::Solver<E> solver(E(), ht::model_from_json(ref), ref.at("depth"));
  solver.set_initial_state(Matrix{{0.7, 0.1}, {0.1, 0.3}});
  solver.run_until(2.0);  // every ADO non-zero
  const std::vector<Matrix> before = host_ados(solver);
  const Matrix op{{0.0, 1.0}, {0.0, heom::complex(0.0, 0.5)}};
  solver.apply_operator(op, heom::Solver<E>::Side::left);
  EXPECT_FALSE(heom::is_hermitian_form(solver.kernel()));
  std::vector<Matrix> after = host_ados(solver);
  for (std::size_t a = 0; a < before.size(); ++a) EXPECT_LE(heom::max_abs_diff(after[a], op * before[a]), 1e-15);
  solver.apply_operator(op, heom::Solver<E>::Side::right);
  const std::vector<Matrix> twice = host_ados(solver);
  for (std::size_t a = 0; a < before.size(); ++a) EXPECT_LE(heom::max_abs_diff(twice[a], op * before[a] * op), 1e-15);
  EXPECT_EQ(solver.time(), 2.0);
  EXPECT_THROW(solver.apply_operator(Matrix::identity(3)), heom::Error);
}

// <sigma+(t) sigma-(0)> in the steady state: sigma- times every steady ADO, propagated with the general
// form, against QuTiP propagating the same start (rtol = atol = 1e-12).
TYPED_TEST(SteadyState, CorrelationFunctionMatchesQutip) {
  using E = TypeParam;
  const auto ref = ht::load_reference("correlation_spin_boson");
  heom::Solver<E> solver(E(), ht::model_from_json(ref), ref.at("depth"), tolerances(1e-10, 1e-12));
  heom::SteadyStateOptions options;
  options.tolerance = 1e-12;
  solver.solve_steady_state(options);
  const std::vector<double> times = ref.at("times");
  const auto c = heom::correlation_function(solver, ht::to_matrix(ref.at("a")), ht::to_matrix(ref.at("b")), times);
  ASSERT_EQ(c.size(), times.size());
  const auto expected = ht::to_complex_list(ref.at("correlation"));
  double worst = 0.0;
  for (std::size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::abs(c[i] - expected[i]));
  EXPECT_LE(worst, 1e-7);
  EXPECT_GT(std::abs(expected.back() - expected.front()), 0.1);  // it moves: the comparison checks something
  EXPECT_EQ(solver.time(), times.back());
}

// A monomer with pure dephasing (Q = |e><e| commutes with H): <mu(t) mu(0)> from the ground state is
// exp(-i eps t - g(t)) exactly, with g(t) = sum_k c_k (t / v_k - (1 - exp(-v_k t)) / v_k^2) from the same
// exponents that the hierarchy is built from (it is exact for them once deep enough).
TYPED_TEST(SteadyState, PureDephasingDipoleCorrelationIsExact) {
  using E = TypeParam;
  const double eps = 1.0;
  heom::DrudeLorentz dl;
  dl.lambda = 0.05;
  dl.gamma = 0.5;
  dl.temperature = 0.5;
  dl.terms = 1;
  const Matrix excited = heom::operators::projector(2, 1, 1);
  const heom::Model model(Matrix{{0, 0}, {0, eps}}, {heom::Bath::drude_lorentz(excited, dl)});
  heom::Solver<E> solver(E(), model, 14, tolerances(1e-12, 1e-14));
  solver.set_initial_state(Matrix{{1, 0}, {0, 0}});
  std::vector<double> times;
  for (int i = 0; i <= 40; ++i) times.push_back(0.5 * i);
  const Matrix mu = heom::operators::sigma_x();
  const auto c = heom::correlation_function(solver, mu, mu, times);
  double worst = 0.0;
  for (std::size_t i = 0; i < times.size(); ++i) {
    const double t = times[i];
    heom::complex g = 0.0;
    for (const heom::Exponent& e : model.baths()[0].exponents()) {
      const heom::complex i_unit(0.0, 1.0);
      const heom::complex ck = e.kind == heom::ExponentKind::R   ? e.c
                               : e.kind == heom::ExponentKind::I ? i_unit * e.c
                                                                 : e.c + i_unit * e.c2;
      g += ck * (t / e.v - (1.0 - std::exp(-e.v * t)) / (e.v * e.v));
    }
    const heom::complex exact = std::exp(heom::complex(0.0, -eps * t) - g);
    worst = std::max(worst, std::abs(c[i] - exact));
  }
  EXPECT_LE(worst, 1e-9);
  EXPECT_LT(std::abs(c.back()), 0.9);  // it has dephased visibly
}

}  // namespace

// On an importance-truncated hierarchy the tier sweeps (Generator::apply_tier) precondition the kept
// ADOs alone: every preconditioner gives one state, stationary under propagation on the same
// hierarchy, and near the whole hierarchy's.
TYPED_TEST(SteadyState, ATruncatedHierarchyHasOneStationaryState) {
  using E = TypeParam;
  const auto ref = ht::load_reference("steady_spin_boson_matsubara");
  heom::SolverOptions truncated = tolerances(1e-10, 1e-12);
  truncated.importance_threshold = 1e-6;
  std::vector<Matrix> states;
  for (const auto preconditioner : {heom::SteadyPreconditioner::tiers, heom::SteadyPreconditioner::tiers_symmetric,
                                    heom::SteadyPreconditioner::system}) {
    heom::Solver<E> solver(E(), ht::model_from_json(ref), ref.at("depth"), truncated);
    ASSERT_TRUE(solver.hierarchy().truncated());
    heom::SteadyStateOptions options;
    options.tolerance = 1e-12;
    options.preconditioner = preconditioner;
    EXPECT_LE(solver.solve_steady_state(options).residual, 1e-12) << heom::to_string(preconditioner);
    states.push_back(solver.rho());
    if (preconditioner != heom::SteadyPreconditioner::tiers) continue;
    solver.run_until(20.0);
    EXPECT_LE(heom::max_abs_diff(solver.rho(), states.front()), 1e-9);
  }
  for (const Matrix& rho : states) EXPECT_LE(heom::max_abs_diff(rho, states.front()), 1e-9);
  heom::Solver<E> whole(E(), ht::model_from_json(ref), ref.at("depth"), tolerances(1e-10, 1e-12));
  heom::SteadyStateOptions options;
  options.tolerance = 1e-12;
  whole.solve_steady_state(options);
  const double truncation_error = heom::max_abs_diff(whole.rho(), states.front());
  EXPECT_GT(truncation_error, 0.0);
  EXPECT_LE(truncation_error, 1e-3);
}
