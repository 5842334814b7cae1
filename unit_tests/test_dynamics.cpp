// Dynamics: the von Neumann limit, conservation laws, the analytic pure-dephasing coherence, and
// rho(t) against QuTiP 4.7 for spin-boson (Matsubara, Pade + terminator, underdamped), FMO and a
// three-level system with two baths; an Ohmic bath fitted with exponents; driven systems (H(t)).
#include <gtest/gtest.h>

#include <cmath>

#include "heom/solver/lead_currents.hpp"
#include "test_support.hpp"

namespace {

using heom::Bath;
using heom::complex;
using heom::Matrix;
using heom::Model;
namespace ht = heom::testing;

/// The default method (exp-adams) unless told otherwise.
heom::SolverOptions adaptive(double rtol, double atol, heom::Method method = heom::IntegratorOptions{}.method) {
  heom::SolverOptions o;
  o.integrator.method = method;
  o.integrator.rtol = rtol;
  o.integrator.atol = atol;
  return o;
}

/// rho at each time of `times`, from `solver` started in rho0 at t = 0.
template <class E>
std::vector<Matrix> trajectory(heom::Solver<E>& solver, const Matrix& rho0, const std::vector<double>& times) {
  solver.set_initial_state(rho0);
  std::vector<Matrix> out;
  std::vector<double> seen;
  solver.run(times, [&](const heom::Snapshot<E>& s) {
    seen.push_back(s.time);
    out.push_back(s.rho());
  });
  EXPECT_EQ(seen, times) << "observer times differ from the requested ones";
  return out;
}

template <class ExecSpace>
class DynamicsTest : public ::testing::Test {};
TYPED_TEST_SUITE(DynamicsTest, ht::Backends);

TYPED_TEST(DynamicsTest, DepthZeroIsTheVonNeumannEquation) {
  using E = TypeParam;
  // H = h . sigma: exp(-iHt) = cos(|h| t) - i sin(|h| t) H / |h|.
  const Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x(), sy = heom::operators::sigma_y();
  const Matrix H = 0.25 * sz + 0.5 * sx + 0.1 * sy;
  const double w = std::sqrt(0.25 * 0.25 + 0.5 * 0.5 + 0.1 * 0.1);
  Model model(H, {Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, 2})});  // a bath, but depth 0 cuts it off
  heom::Solver<E> solver(E(), model, 0, adaptive(1e-12, 1e-14));
  const Matrix rho0{{0.8, complex(0.1, 0.3)}, {complex(0.1, -0.3), 0.2}};
  std::vector<double> times;
  for (int i = 0; i <= 40; ++i) times.push_back(0.25 * i);
  const auto rho = trajectory(solver, rho0, times);
  for (std::size_t i = 0; i < times.size(); ++i) {
    const double t = times[i];
    const Matrix u = std::cos(w * t) * Matrix::identity(2) - complex(0.0, std::sin(w * t) / w) * H;
    const Matrix exact = u * rho0 * u.adjoint();
    EXPECT_LE(heom::max_abs_diff(rho[i], exact), 1e-10) << "t = " << t;
  }
}

TYPED_TEST(DynamicsTest, LindbladTermsAloneGiveTheBlochEquations) {
  // No bath: H = w sz / 2, decay sigma_- = |1><0| at gamma and dephasing sz at gamma_phi. Then
  // rho_00 = rho_00(0) e^{-gamma t} and rho_01 = rho_01(0) e^{-i w t - (gamma / 2 + 2 gamma_phi) t}.
  using E = TypeParam;
  const double w = 0.7, gamma = 0.3, gamma_phi = 0.05;
  Model model(0.5 * w * heom::operators::sigma_z());
  model.add_lindblad(Matrix{{0.0, 0.0}, {1.0, 0.0}}, gamma).add_lindblad(heom::operators::sigma_z(), gamma_phi);
  heom::Solver<E> solver(E(), model, 0, adaptive(1e-12, 1e-14));
  const Matrix rho0{{0.8, complex(0.1, 0.3)}, {complex(0.1, -0.3), 0.2}};
  std::vector<double> times;
  for (int i = 0; i <= 40; ++i) times.push_back(0.25 * i);
  const auto rho = trajectory(solver, rho0, times);
  for (std::size_t i = 0; i < times.size(); ++i) {
    const double t = times[i];
    const complex coherence = rho0(0, 1) * std::exp(complex(-(0.5 * gamma + 2.0 * gamma_phi) * t, -w * t));
    const double excited = 0.8 * std::exp(-gamma * t);
    const Matrix exact{{excited, coherence}, {std::conj(coherence), 1.0 - excited}};
    EXPECT_LE(heom::max_abs_diff(rho[i], exact), 1e-9) << "t = " << t;
  }
}

TYPED_TEST(DynamicsTest, TraceConservedAndRhoHermitian) {
  using E = TypeParam;
  const auto ref = ht::load_reference("three_level_two_baths");
  heom::Solver<E> solver(E(), ht::model_from_json(ref), 4, adaptive(1e-8, 1e-10));
  std::vector<double> times;
  for (int i = 0; i <= 30; ++i) times.push_back(0.5 * i);
  const auto rho = trajectory(solver, ht::to_matrix(ref.at("rho0")), times);
  for (std::size_t i = 0; i < rho.size(); ++i) {
    EXPECT_NEAR(std::abs(rho[i].trace() - complex(1.0)), 0.0, 1e-12) << "t = " << times[i];
    EXPECT_LE(heom::max_abs_diff(rho[i], rho[i].adjoint()), 1e-9) << "t = " << times[i];
  }
  // Not trivially constant: populations move.
  EXPECT_GT(std::abs(rho.back()(0, 0) - rho.front()(0, 0)), 0.05);
}

/// Pure dephasing (H = 0, Q = sz): rho_01(t) = rho_01(0) exp(-Gamma(t)) exactly, with
/// Gamma(t) = 4 sum_k Re[c_k (v_k t - 1 + exp(-v_k t)) / v_k^2] over the exponents of C_R, plus
/// 4 Delta t from a terminator (Delta (2 sz X sz - 2 X) multiplies rho_01 by -4 Delta).
double expansion_coherence(const Bath& bath, double t) {
  complex gamma = 0.0;
  for (const auto& e : bath.exponents()) {
    const complex c = e.commutator_coefficient();  // the C_R coefficient (0 for I exponents)
    gamma += c * (e.v * t - 1.0 + std::exp(-e.v * t)) / (e.v * e.v);
  }
  return 0.5 * std::exp(-4.0 * gamma.real() - 4.0 * bath.terminator_delta().real() * t);
}

TYPED_TEST(DynamicsTest, PureDephasingMatchesAnalyticCoherence) {
  using E = TypeParam;
  const auto ref = ht::load_reference("pure_dephasing_analytic");
  const double lambda = ref.at("lambda"), gamma = ref.at("gamma"), temperature = ref.at("temperature");
  const auto times = ref.at("times").get<std::vector<double>>();
  const auto exact = ref.at("coherence").get<std::vector<double>>();
  const Matrix sz = heom::operators::sigma_z();
  const Matrix rho0{{0.5, 0.5}, {0.5, 0.5}};

  struct Variant {
    const char* name;
    heom::DrudeLorentz bath;
    double tolerance_to_quadrature;
  };
  const Variant variants[] = {
      // Observed: 1.2e-4, 2.7e-6 and 6.8e-7. The terminator must help by a large factor: with its sign
      // flipped the error would double instead.
      {"matsubara Nk=2", {lambda, gamma, temperature, 2}, 5e-4},
      {"matsubara Nk=2 + terminator",
       {lambda, gamma, temperature, 2, heom::DrudeLorentzExpansion::Matsubara, true},
       1e-5},
      {"pade Nk=2 + terminator", {lambda, gamma, temperature, 2, heom::DrudeLorentzExpansion::Pade, true}, 3e-6},
  };
  for (const auto& v : variants) {
    const Bath bath = Bath::drude_lorentz(sz, v.bath);
    // The hierarchy converges to the expansion's exact coherence as the depth grows (error 4e-5 at
    // depth 14, 6e-9 at 20, 6e-14 at 30 for this bath).
    heom::Solver<E> solver(E(), Model(Matrix(2, 2), {bath}), 20, adaptive(1e-11, 1e-13));
    const auto rho = trajectory(solver, rho0, times);
    double worst_expansion = 0.0, worst_exact = 0.0;
    for (std::size_t i = 0; i < times.size(); ++i) {
      // rho_01 is real here (H = 0); QuTiP's test reads the same element via <0|rho|1>.
      EXPECT_NEAR(rho[i](0, 1).imag(), 0.0, 1e-9) << v.name;
      worst_expansion = std::max(worst_expansion, std::abs(rho[i](0, 1).real() - expansion_coherence(bath, times[i])));
      worst_exact = std::max(worst_exact, std::abs(rho[i](0, 1).real() - exact[i]));
    }
    // Depth 20 reproduces the coherence of the expansion it was given (a wrong sign or factor 2 in
    // any coupling shows as an error above 1e-2).
    EXPECT_LE(worst_expansion, 1e-7) << v.name;
    // And the expansion approximates the true bath (QuTiP's test tolerance is 1e-3); a factor of 2 in
    // Gamma would show as an error of about 0.1 at t = 1.
    EXPECT_LE(worst_exact, v.tolerance_to_quadrature) << v.name;
  }
}

struct QutipCase {
  const char* file;
  double rtol, atol;
  bool hermitian_form = false;  // real rates and coefficients, n >= 3: the generator's Hermitian form
};

class QutipDynamics : public ::testing::TestWithParam<QutipCase> {};

template <class E>
void compare_with_qutip(const QutipCase& c, heom::Method method) {
  SCOPED_TRACE(heom::to_string(method));
  const auto ref = ht::load_reference(c.file);
  const Model model = ht::model_from_json(ref);
  if (method == heom::Method::chebyshev && model.is_driven()) return;  // (for undriven models alone)
  heom::Solver<E> solver(E(), model, ref.at("depth"), adaptive(c.rtol, c.atol, method));
  ASSERT_EQ(solver.hierarchy().size(), ref.at("num_ados").get<int>()) << "exponent merging differs from QuTiP's";
  const auto times = ref.at("times").get<std::vector<double>>();
  const auto rho = trajectory(solver, ht::to_matrix(ref.at("rho0")), times);
  // The host kernel's Hermitian form where the model allows it (and n >= 3), so that it too is
  // checked against QuTiP.
  EXPECT_EQ(heom::is_hermitian_form(solver.kernel()), c.hermitian_form && heom::BackendTraits<E>::host_shape);
  double worst = 0.0, moved = 0.0;
  for (std::size_t i = 0; i < times.size(); ++i) {
    const Matrix expected = ht::to_matrix(ref.at("rho").at(i));
    worst = std::max(worst, heom::max_abs_diff(rho[i], expected));
    moved = std::max(moved, heom::max_abs_diff(expected, ht::to_matrix(ref.at("rho").at(0))));
  }
  EXPECT_LE(worst, 1e-7) << c.file << ": max |rho - rho_qutip| over " << times.size() << " times";
  EXPECT_GT(moved, 0.05) << c.file << ": the reference hardly evolves, so the comparison says little";
  ::testing::Test::RecordProperty(std::string("max_abs_error_") + heom::to_string(method), std::to_string(worst));
}

TEST_P(QutipDynamics, MatchesQutipOnEveryBackend) {
#define HEOM_COMPARE(E)                                       \
  compare_with_qutip<E>(GetParam(), heom::Method::exp_adams); \
  compare_with_qutip<E>(GetParam(), heom::Method::dopri5);    \
  compare_with_qutip<E>(GetParam(), heom::Method::chebyshev);
  HEOM_FOR_EACH_BACKEND(HEOM_COMPARE)
#undef HEOM_COMPARE
}

INSTANTIATE_TEST_SUITE_P(
    Reference, QutipDynamics,
    ::testing::Values(
        QutipCase{"spin_boson_matsubara", 1e-10, 1e-12}, QutipCase{"spin_boson_pade_terminator", 1e-10, 1e-12},
        QutipCase{"spin_boson_underdamped", 1e-10, 1e-12}, QutipCase{"three_level_two_baths", 1e-10, 1e-12},
        QutipCase{"three_level_exponents", 1e-10, 1e-12}, QutipCase{"fmo_depth3", 1e-10, 1e-12, true},
        QutipCase{"spin_boson_lindblad", 1e-10, 1e-12}, QutipCase{"three_level_lindblad", 1e-10, 1e-12, true},
        QutipCase{"spin_boson_ohmic_fitted", 1e-10, 1e-12}, QutipCase{"driven_qubit_resonant", 1e-10, 1e-12},
        QutipCase{"driven_qubit_off_resonant", 1e-10, 1e-12}, QutipCase{"driven_three_level_pulse", 1e-10, 1e-12},
        QutipCase{"driven_qubit_table", 1e-10, 1e-12}, QutipCase{"siam_pade", 1e-10, 1e-12},
        QutipCase{"siam_matsubara", 1e-10, 1e-12}, QutipCase{"anderson_spinful", 1e-10, 1e-12},
        QutipCase{"fermionic_exponents", 1e-10, 1e-12}),
    [](const auto& param_info) { return std::string(param_info.param.file); });

// The current into each lead over time, from the first-tier ADOs an observer of every ADO sees,
// against QuTiP's (its documented state_current on each stored ADO state).
TYPED_TEST(DynamicsTest, LeadCurrentsMatchQutipOverTime) {
  using E = TypeParam;
  for (const auto& run :
       {std::pair{"siam_pade", heom::Method::exp_adams}, std::pair{"anderson_spinful", heom::Method::exp_adams},
        std::pair{"siam_pade", heom::Method::chebyshev}}) {
    const char* file = run.first;
    const heom::Method method = run.second;
    SCOPED_TRACE(heom::to_string(method));
    const auto ref = ht::load_reference(file);
    heom::SolverOptions options = adaptive(1e-10, 1e-12, method);
    options.observe_all_ados = true;
    heom::Solver<E> solver(E(), ht::model_from_json(ref), ref.at("depth"), options);
    solver.set_initial_state(ht::to_matrix(ref.at("rho0")));
    const auto times = ref.at("times").get<std::vector<double>>();
    double worst = 0.0, largest = 0.0;
    std::size_t i = 0;
    solver.run(times, [&](const heom::Snapshot<E>& s) {
      const auto currents = heom::lead_currents(s.exec, solver.model(), solver.hierarchy(), s.ados);
      const auto& expected = ref.at("current").at(i++);
      ASSERT_EQ(currents.size(), expected.size());
      for (std::size_t b = 0; b < currents.size(); ++b) {
        worst = std::max(worst, std::abs(currents[b] - ht::to_complex(expected.at(b))));
        largest = std::max(largest, std::abs(ht::to_complex(expected.at(b))));
      }
    });
    EXPECT_EQ(i, times.size());
    EXPECT_GT(largest, 1e-2) << file;
    EXPECT_LE(worst, 1e-7) << file << ": max |I - I_qutip|";
  }
}

// Mixed hierarchies: where the baths stand in the model changes the ADOs' signs (the fermionic order),
// not rho(t), for leads and a phonon bath in two orders.
TYPED_TEST(DynamicsTest, BathOrderDoesNotChangeAMixedHierarchysRho) {
  using E = TypeParam;
  const Matrix d{{0.0, 1.0}, {0.0, 0.0}}, number{{0.0, 0.0}, {0.0, 1.0}};
  const Bath left = Bath::lorentzian(d, {0.2, 1.0, 0.5, 0.5, 1, heom::LorentzianExpansion::Pade});
  const Bath right = Bath::lorentzian(d, {0.2, 1.0, -0.5, 0.5, 1, heom::LorentzianExpansion::Pade});
  const Bath phonons = Bath::drude_lorentz(number, {0.1, 0.5, 0.5, 1});
  const Matrix h = 0.5 * number;
  const Matrix rho0{{1.0, 0.0}, {0.0, 0.0}};
  const std::vector<double> times = {0.0, 2.0, 5.0, 10.0};
  heom::Solver<E> one(E(), Model(h, {left, phonons, right}), 3, adaptive(1e-10, 1e-12));
  heom::Solver<E> other(E(), Model(h, {phonons, right, left}), 3, adaptive(1e-10, 1e-12));
  EXPECT_EQ(one.hierarchy().size(), other.hierarchy().size());
  const auto a = trajectory(one, rho0, times), b = trajectory(other, rho0, times);
  double worst = 0.0;
  for (std::size_t i = 0; i < times.size(); ++i) worst = std::max(worst, heom::max_abs_diff(a[i], b[i]));
  EXPECT_LE(worst, 1e-8);
  EXPECT_GT(heom::max_abs_diff(a.back(), rho0), 0.05);  // (it fills)
  // The phonons matter: without them rho differs.
  heom::Solver<E> without(E(), Model(h, {left, right}), 3, adaptive(1e-10, 1e-12));
  EXPECT_GT(heom::max_abs_diff(trajectory(without, rho0, times).back(), a.back()), 1e-4);
}

TYPED_TEST(DynamicsTest, FixedStepMethodsMatchQutip) {
  using E = TypeParam;
  const auto ref = ht::load_reference("spin_boson_matsubara");
  for (const heom::Method method : {heom::Method::rk4, heom::Method::lsrk4}) {
    SCOPED_TRACE(heom::to_string(method));
    heom::SolverOptions o;
    o.integrator.method = method;
    o.integrator.step = 0.005;
    heom::Solver<E> solver(E(), ht::model_from_json(ref), ref.at("depth"), o);
    const auto times = ref.at("times").get<std::vector<double>>();
    const auto rho = trajectory(solver, ht::to_matrix(ref.at("rho0")), times);
    double worst = 0.0;
    for (std::size_t i = 0; i < times.size(); ++i)
      worst = std::max(worst, heom::max_abs_diff(rho[i], ht::to_matrix(ref.at("rho").at(i))));
    EXPECT_LE(worst, 1e-7);
  }
}

TYPED_TEST(DynamicsTest, DrivesMatchQutipWithEveryIntegrator) {
  // exp-adams and dopri5 run every driven reference above; here the fixed-step methods, and a check
  // that the drive matters (the undriven qubit ends far from the reference).
  using E = TypeParam;
  for (const char* file : {"driven_qubit_resonant", "driven_qubit_table"}) {
    const auto ref = ht::load_reference(file);
    const auto times = ref.at("times").get<std::vector<double>>();
    for (const heom::Method method : {heom::Method::rk4, heom::Method::lsrk4}) {
      SCOPED_TRACE(std::string(file) + " " + heom::to_string(method));
      heom::SolverOptions o;
      o.integrator.method = method;
      o.integrator.step = 0.005;
      heom::Solver<E> solver(E(), ht::model_from_json(ref), ref.at("depth"), o);
      const auto rho = trajectory(solver, ht::to_matrix(ref.at("rho0")), times);
      double worst = 0.0;
      for (std::size_t i = 0; i < times.size(); ++i)
        worst = std::max(worst, heom::max_abs_diff(rho[i], ht::to_matrix(ref.at("rho").at(i))));
      EXPECT_LE(worst, 1e-7);
    }
    const Model undriven =
        ht::model_from_json(ref).frozen_at(0.0).with_hamiltonian(ht::to_matrix(ref.at("hamiltonian")));
    heom::Solver<E> solver(E(), undriven, ref.at("depth"), adaptive(1e-10, 1e-12));
    const auto rho = trajectory(solver, ht::to_matrix(ref.at("rho0")), times);
    EXPECT_GT(heom::max_abs_diff(rho.back(), ht::to_matrix(ref.at("rho").back())), 0.02) << file;
  }
}

TYPED_TEST(DynamicsTest, DriveOnPureDephasingAddsItsPhaseExactly) {
  // H(t) = f(t) sz commutes with the coupling sz: every ADO's coherence only gains the phase
  // exp(-2i F(t)), F the integral of f, on top of the undriven bath's decay.
  using E = TypeParam;
  const double amplitude = 0.3, frequency = 0.7, phase = 0.2;
  Model undriven(Matrix(2, 2), {Bath::drude_lorentz(heom::operators::sigma_z(), {0.025, 0.05, 1.05, 2})});
  Model driven = undriven;
  driven.add_drive(heom::operators::sigma_z(), heom::DriveShape::cosine(amplitude, frequency, phase));
  const Matrix rho0{{0.5, 0.5}, {0.5, 0.5}};
  std::vector<double> times;
  for (int t = 0; t <= 40; ++t) times.push_back(0.5 * t);
  for (const heom::Method method : {heom::Method::exp_adams, heom::Method::dopri5, heom::Method::rk4}) {
    SCOPED_TRACE(heom::to_string(method));
    heom::SolverOptions o = adaptive(1e-12, 1e-14, method);
    if (!heom::is_adaptive(method)) o.integrator.step = 0.01;  // (an adaptive method's first step)
    heom::Solver<E> plain(E(), undriven, 4, o), with_drive(E(), driven, 4, o);
    const auto reference = trajectory(plain, rho0, times), rho = trajectory(with_drive, rho0, times);
    double worst = 0.0;
    for (std::size_t i = 0; i < times.size(); ++i) {
      const double f_integral = amplitude / frequency * (std::sin(frequency * times[i] + phase) - std::sin(phase));
      const complex expected = reference[i](0, 1) * std::exp(complex(0.0, -2.0 * f_integral));
      worst = std::max(worst, std::abs(rho[i](0, 1) - expected));
      worst = std::max(worst, std::abs(rho[i](0, 0) - reference[i](0, 0)));
    }
    EXPECT_LE(worst, 1e-9);
    EXPECT_GT(std::abs(rho.back()(0, 1) - reference.back()(0, 1)), 1e-3) << "the phase hardly differs";
  }
}

TYPED_TEST(DynamicsTest, ConstantDriveEqualsPiecewiseStaticRuns) {
  // A drive that is on for 2 <= t < 5: the same as H0 up to 2, H0 + A sx up to 5, H0 after. Steps
  // stop on the jumps (for rk4: equal steps landing on them), so each method keeps its accuracy.
  using E = TypeParam;
  const Matrix h0 = 0.5 * heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  Model base(h0, {Bath::drude_lorentz(heom::operators::sigma_z(), {0.05, 0.5, 0.5, 2})});
  Model driven = base;
  driven.add_drive(sx, heom::DriveShape::constant(0.4, 2.0, 5.0));
  const Matrix rho0 = heom::operators::projector(2, 0, 0);
  for (const heom::Method method : {heom::Method::exp_adams, heom::Method::dopri5, heom::Method::rk4}) {
    SCOPED_TRACE(heom::to_string(method));
    heom::SolverOptions o = adaptive(1e-11, 1e-13, method);
    if (!heom::is_adaptive(method)) o.integrator.step = 0.01;
    heom::Solver<E> solver(E(), driven, 4, o);
    solver.set_initial_state(rho0);
    solver.run_until(8.0);
    // The piecewise run: each leg continues from the previous leg's ADOs.
    heom::Solver<E> before(E(), base, 4, o), during(E(), base.with_hamiltonian(h0 + 0.4 * sx), 4, o),
        after(E(), base, 4, o);
    before.set_initial_state(rho0);
    before.run_until(2.0);
    during.set_initial_ados(before.ados(), 2.0);
    during.run_until(5.0);
    after.set_initial_ados(during.ados(), 5.0);
    after.run_until(8.0);
    EXPECT_LE(heom::max_abs_diff(solver.rho(), after.rho()), 1e-8);
    heom::Solver<E> never(E(), base, 4, o);
    never.set_initial_state(rho0);
    never.run_until(8.0);
    EXPECT_GT(heom::max_abs_diff(never.rho(), after.rho()), 0.05) << "the pulse hardly acts";
  }
}

TYPED_TEST(DynamicsTest, AStepLandingOnABreakpointReadsTheValueBeforeIt) {
  // One rk4 step from t0 = 1.23 onto the drive's end at 5.3, where t0 + (5.3 - t0) rounds to
  // 5.300000000000001: the step's last stage must still see the drive on, as a static H0 + A sx does.
  using E = TypeParam;
  const Matrix h0 = 0.5 * heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  ASSERT_GT(1.23 + (5.3 - 1.23), 5.3);
  Model base(h0, {Bath::drude_lorentz(heom::operators::sigma_z(), {0.05, 0.5, 0.5, 1})});
  Model driven = base;
  driven.add_drive(sx, heom::DriveShape::constant(0.4, 0.0, 5.3));
  heom::SolverOptions o;
  o.integrator.method = heom::Method::rk4;
  o.integrator.step = 10.0;
  heom::Solver<E> solver(E(), driven, 3, o), fixed(E(), base.with_hamiltonian(h0 + 0.4 * sx), 3, o);
  const Matrix rho0 = heom::operators::projector(2, 0, 0);
  solver.set_initial_state(rho0, 1.23);
  fixed.set_initial_state(rho0, 1.23);
  solver.run_until(5.3);
  fixed.run_until(5.3);
  EXPECT_EQ(solver.statistics().steps, 1);
  EXPECT_LE(heom::max_abs_diff(solver.rho(), fixed.rho()), 1e-12);
}

TYPED_TEST(DynamicsTest, HermitianFormFollowsTheInitialState) {
  // L is complex-linear, so from rho0 + i K (K Hermitian: not a Hermitian start, the general form)
  // rho(t) must equal rho_1(t) + i rho_2(t) from rho0 and K (Hermitian starts: the Hermitian form
  // on the host). A fixed step makes the three runs take the same steps.
  using E = TypeParam;
  Model model(Matrix{{0.2, -0.08, 0.005}, {-0.08, 0.3, 0.03}, {0.005, 0.03, 0.0}});
  for (int j = 0; j < 3; ++j)
    model.add_bath(Bath::drude_lorentz(heom::operators::projector(3, j, j),
                                       {0.035, 0.1, 0.05, 1, heom::DrudeLorentzExpansion::Matsubara, true}));
  heom::SolverOptions o;
  o.integrator.method = heom::Method::lsrk4;
  o.integrator.step = 0.5;
  const Matrix rho0{{0.7, complex(0.1, 0.2), 0.0}, {complex(0.1, -0.2), 0.3, 0.05}, {0.0, 0.05, 0.0}};
  const Matrix k{{0.1, 0.3, complex(0.0, 0.2)}, {0.3, -0.2, 0.0}, {complex(0.0, -0.2), 0.0, 0.4}};
  const complex i_unit(0.0, 1.0);
  std::vector<double> times;
  for (int t = 0; t <= 20; ++t) times.push_back(5.0 * t);
  const bool host = heom::BackendTraits<E>::host_shape;
  heom::Solver<E> solver(E(), model, 4, o);
  const auto mixed = trajectory(solver, rho0 + i_unit * k, times);
  EXPECT_FALSE(heom::is_hermitian_form(solver.kernel()));
  const auto first = trajectory(solver, rho0, times);
  EXPECT_EQ(heom::is_hermitian_form(solver.kernel()), host);
  const auto second = trajectory(solver, k, times);
  double worst = 0.0;
  for (std::size_t t = 0; t < times.size(); ++t)
    worst = std::max(worst, heom::max_abs_diff(mixed[t], first[t] + i_unit * second[t]));
  EXPECT_LE(worst, 1e-13);
  EXPECT_GT(heom::max_abs_diff(first.back(), rho0), 0.05) << "rho hardly moves: the comparison says little";

  // A saved Hermitian state continues in the Hermitian form; one with a non-Hermitian ADO does not.
  solver.set_initial_state(rho0);
  solver.run_until(10.0);
  const auto saved = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), solver.ados());
  typename heom::Generator<E>::vector_type copy("copy", saved.size());
  auto host_copy = Kokkos::create_mirror_view(copy);
  for (std::size_t e = 0; e < saved.size(); ++e) host_copy(e) = saved.data()[e];
  Kokkos::deep_copy(copy, host_copy);
  const heom::AdoView<E> ados(copy.data(), saved.extent(0), 3, 3);
  solver.set_initial_ados(ados, 10.0);
  EXPECT_EQ(heom::is_hermitian_form(solver.kernel()), host);
  host_copy(9 * 5 + 1) += 1e-3;  // ADO 5, element (0, 1)
  Kokkos::deep_copy(copy, host_copy);
  solver.set_initial_ados(ados, 10.0);
  EXPECT_FALSE(heom::is_hermitian_form(solver.kernel()));
}

}  // namespace

namespace {

/// The Ohmic bath of example/ohmic_spin_boson.toml, as make_reference.py describes its fit.
Bath fitted_ohmic_from_json(const nlohmann::json& ref) {
  const auto& fit = ref.at("fit");
  heom::FitOptions options;
  options.tolerance = fit.at("fit_tolerance");
  options.time = fit.at("fit_time");
  const auto j = heom::SpectralDensity::ohmic(fit.at("alpha"), fit.at("cutoff"), fit.at("exponent"));
  return Bath::fitted(ht::to_matrix(ref.at("baths").at(0).at("coupling")), j, fit.at("temperature"), options);
}

TYPED_TEST(DynamicsTest, FittedOhmicBathMatchesQutipOnTheSameExponents) {
  using E = TypeParam;
  const auto ref = ht::load_reference("spin_boson_ohmic_fitted");
  // The fit today gives the exponents QuTiP was run with (a change to the fit shows here first:
  // rerun make_reference.py fitted).
  const Bath fitted = fitted_ohmic_from_json(ref);
  const Bath qutips = ht::bath_from_json(ref.at("baths").at(0));
  ASSERT_EQ(fitted.exponents().size(), qutips.exponents().size());
  for (std::size_t k = 0; k < fitted.exponents().size(); ++k) {
    const auto &a = fitted.exponents()[k], &b = qutips.exponents()[k];
    EXPECT_EQ(a.kind, b.kind) << k;
    EXPECT_LE(std::abs(a.v - b.v), 1e-9 * std::abs(b.v)) << k;
    EXPECT_LE(std::abs(a.c - b.c) + std::abs(a.c2 - b.c2), 1e-9 * (std::abs(b.c) + std::abs(b.c2))) << k;
  }
  ASSERT_TRUE(fitted.fit());
  EXPECT_LE(fitted.fit()->error, ref.at("fit").at("fit_tolerance").get<double>());

  Model model(ht::to_matrix(ref.at("hamiltonian")));
  model.add_bath(fitted);
  heom::Solver<E> solver(E(), model, ref.at("depth"), adaptive(1e-11, 1e-13));
  ASSERT_EQ(solver.hierarchy().size(), ref.at("num_ados").get<int>());
  const auto times = ref.at("times").get<std::vector<double>>();
  const auto rho = trajectory(solver, ht::to_matrix(ref.at("rho0")), times);
  double worst = 0.0, moved = 0.0;
  for (std::size_t i = 0; i < times.size(); ++i) {
    const Matrix expected = ht::to_matrix(ref.at("rho").at(i));
    worst = std::max(worst, heom::max_abs_diff(rho[i], expected));
    moved = std::max(moved, heom::max_abs_diff(expected, ht::to_matrix(ref.at("rho").at(0))));
  }
  EXPECT_LE(worst, 1e-8) << "max |rho - rho_qutip| on the same fitted exponents";
  EXPECT_GT(moved, 0.05);
}

TYPED_TEST(DynamicsTest, OhmicDynamicsConvergeAsTheFitTightens) {
  using E = TypeParam;
  const Matrix h{{0.25, 0.5}, {0.5, -0.25}};
  const auto j = heom::SpectralDensity::ohmic(0.1, 2.0, 1.0);
  std::vector<double> times;
  for (int k = 0; k <= 40; ++k) times.push_back(0.25 * k);
  auto run = [&](double tolerance) {
    heom::FitOptions options;
    options.tolerance = tolerance;
    options.time = times.back();
    Model model(h);
    model.add_bath(Bath::fitted(heom::operators::sigma_z(), j, 0.5, options));
    heom::Solver<E> solver(E(), model, 4, adaptive(1e-10, 1e-12));
    return trajectory(solver, heom::operators::projector(2, 0, 0), times);
  };
  const auto reference = run(1e-6);
  double previous = INFINITY;
  for (double tolerance : {1e-2, 1e-3, 1e-4}) {
    const auto rho = run(tolerance);
    double worst = 0.0;
    for (std::size_t i = 0; i < times.size(); ++i) worst = std::max(worst, heom::max_abs_diff(rho[i], reference[i]));
    ::testing::Test::RecordProperty("fit_" + std::to_string(tolerance), std::to_string(worst));
    EXPECT_LT(worst, previous) << "fit tolerance " << tolerance;
    EXPECT_LT(worst, tolerance) << "fit tolerance " << tolerance;
    previous = worst;
  }
}

}  // namespace
