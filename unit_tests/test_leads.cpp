// A resonant level between two Lorentzian leads, where the exact answers are known in closed form
// (non-interacting: the hierarchy is exact once deep enough, up to the Fermi function's expansion):
// the steady-state current against the Landauer formula, and the spectral function A(w) from the
// odd-parity hierarchy against -Im G^R(w) / pi.
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "heom/solver/lead_currents.hpp"
#include "heom/solver/spectral_function.hpp"
#include "test_support.hpp"

namespace {

using heom::complex;
using heom::Matrix;
namespace ht = heom::testing;
using ht::tolerances;
constexpr double pi = 3.14159265358979323846;

template <class E>
class Leads : public ::testing::Test {};
TYPED_TEST_SUITE(Leads, ht::Backends);

/// eps d^dagger d between leads L and R (QuTiP's LorentzianBath: coupling gamma, width W).
struct ResonantLevel {
  double eps = 0.3, gamma = 0.2, width = 1.0, temperature = 0.5, mu_left = 0.5, mu_right = -0.5;

  Matrix d() const { return Matrix{{0, 1}, {0, 0}}; }
  heom::Model model(int terms, heom::LorentzianExpansion expansion = heom::LorentzianExpansion::Pade) const {
    const Matrix h{{0, 0}, {0, eps}};
    return heom::Model(h, {heom::Bath::lorentzian(d(), {gamma, width, mu_left, temperature, terms, expansion}),
                           heom::Bath::lorentzian(d(), {gamma, width, mu_right, temperature, terms, expansion})});
  }
  /// Lead a's retarded self-energy gamma W / 2 / (w - mu + i W): -2 Im of it is gamma W^2 / ((w - mu)^2 + W^2).
  complex self_energy(double w, double mu) const { return 0.5 * gamma * width / complex(w - mu, width); }
  complex green(double w) const { return 1.0 / (w - eps - self_energy(w, mu_left) - self_energy(w, mu_right)); }
  double spectral_function(double w) const { return -green(w).imag() / pi; }
  double fermi(double w, double mu) const { return 1.0 / (std::exp((w - mu) / temperature) + 1.0); }
  /// The Landauer current from lead L through the level into lead R: int dw / 2 pi T(w) (f_L - f_R),
  /// T = Gamma_L Gamma_R |G|^2 (Simpson's rule over +-60, where the integrand is below 1e-12).
  double landauer_current() const {
    const int intervals = 240000;
    const double a = -60.0, b = 60.0, h = (b - a) / intervals;
    double sum = 0.0;
    for (int i = 0; i <= intervals; ++i) {
      const double w = a + i * h;
      const double gl = -2.0 * self_energy(w, mu_left).imag(), gr = -2.0 * self_energy(w, mu_right).imag();
      const double f = gl * gr * std::norm(green(w)) * (fermi(w, mu_left) - fermi(w, mu_right));
      sum += (i == 0 || i == intervals ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0)) * f;
    }
    return sum * h / 3.0 / (2.0 * pi);
  }
};

Matrix kron(const Matrix& a, const Matrix& b) {
  Matrix k(a.rows() * b.rows(), a.cols() * b.cols());
  for (int i = 0; i < a.rows(); ++i)
    for (int j = 0; j < a.cols(); ++j)
      for (int r = 0; r < b.rows(); ++r)
        for (int c = 0; c < b.cols(); ++c) k(i * b.rows() + r, j * b.cols() + c) = a(i, j) * b(r, c);
  return k;
}

template <class E>
void solve_steady(heom::Solver<E>& solver) {
  heom::SteadyStateOptions options;
  options.tolerance = 1e-12;
  solver.solve_steady_state(options);
}

/// A(w) on a grid of w, from samples of C(t) every dt: (1/pi) Re int_0^T C(t) exp(i w t) dt by the
/// trapezoidal rule (exact enough here: its leading error, from t = 0, is imaginary).
std::vector<double> spectral_function(const std::vector<complex>& c, double dt, const std::vector<double>& omega) {
  std::vector<double> a;
  for (const double w : omega) {
    complex integral = 0.0;
    for (std::size_t k = 0; k < c.size(); ++k)
      integral += (k == 0 || k + 1 == c.size() ? 0.5 : 1.0) * c[k] * std::exp(complex(0.0, w * k * dt));
    a.push_back((integral * dt).real() / pi);
  }
  return a;
}

std::vector<double> delays(double dt, double t_end) {
  std::vector<double> out;
  for (int k = 0; k * dt <= t_end + 1e-9; ++k) out.push_back(k * dt);
  return out;
}

std::vector<double> frequencies(double from, double to, double step) {
  std::vector<double> out;
  for (double w = from; w <= to + 1e-9; w += step) out.push_back(w);
  return out;
}

TYPED_TEST(Leads, SteadyCurrentIsLandauersAsTheExpansionGrows) {
  // The Pade expansion of the Fermi function converges, and the current with it: relative errors
  // 1.1e-2, 1.8e-5, 3.4e-9 and 2.6e-11 for 1, 2, 4 and 6 terms (measured). Non-interacting, the
  // hierarchy is exact at depth 2: depth 3 gives the same current.
  using E = TypeParam;
  const ResonantLevel level;
  const double exact = level.landauer_current();
  ASSERT_GT(exact, 1e-2);  // (from L, at the higher mu, to R)
  const std::vector<std::pair<int, double>> bounds{{1, 2e-2}, {2, 4e-5}, {4, 1e-8}, {6, 1e-10}};
  double previous = 1.0;
  for (const auto& [terms, bound] : bounds) {
    std::vector<complex> into_left;
    for (const int depth : {2, 3}) {
      heom::Solver<E> solver(E(), level.model(terms), depth);
      solve_steady(solver);
      const auto currents = heom::lead_currents(E(), solver.model(), solver.hierarchy(), solver.ados());
      ASSERT_EQ(currents.size(), 2u);
      // What leaves L enters R; the lead at the higher mu feeds the level (a negative current into it).
      EXPECT_NEAR(currents[0].real(), -currents[1].real(), 1e-12 * exact) << terms << " terms, depth " << depth;
      EXPECT_LT(currents[0].real(), 0.0);
      into_left.push_back(currents[0]);
    }
    const double error = std::abs(-into_left[0].real() - exact) / exact;
    EXPECT_LT(error, bound) << terms << " terms: " << -into_left[0].real() << " against Landauer's " << exact;
    EXPECT_LT(error, previous) << terms << " terms";
    EXPECT_NEAR(into_left[1].real(), into_left[0].real(), 1e-9 * exact) << terms << " terms: depth 3 against 2";
    previous = error;
  }
}

TYPED_TEST(Leads, SpectralFunctionIsTheExactOne) {
  // A(w) of the level in the steady state at bias is -Im G^R(w) / pi with the leads' self-energies,
  // whatever the Pade terms (they cancel in the anticommutator) and from depth 1 on (measured: 4e-8
  // of the peak at depths 1-3, the quadrature's error). (A single level cannot tell the parities
  // apart: the even hierarchy gives the same; the spinful dot below can.)
  using E = TypeParam;
  const ResonantLevel level;
  const double dt = 0.05;
  const std::vector<double> tau = delays(dt, 100.0), omega = frequencies(-2.0, 2.0, 0.05);
  const double peak = level.spectral_function(level.eps);
  for (const int depth : {1, 2}) {
    heom::Solver<E> solver(E(), level.model(2), depth, tolerances(1e-10, 1e-12));
    solve_steady(solver);
    const Matrix rho = solver.rho();
    const std::vector<complex> c = heom::anticommutator_correlation(solver, level.d(), tau);
    EXPECT_LT(std::abs(c[0] - 1.0), 1e-12) << "C(0) = <{d, d^dagger}>";
    EXPECT_LT(std::abs(c.back()), 1e-7) << "C(t) has decayed at t_end";
    EXPECT_EQ(solver.time(), 0.0);
    EXPECT_EQ((solver.rho() - rho).max_abs(), 0.0) << "the steady solver is left as it was";
    const std::vector<double> a = spectral_function(c, dt, omega);
    for (std::size_t i = 0; i < omega.size(); ++i)
      EXPECT_NEAR(a[i], level.spectral_function(omega[i]), 1e-6 * peak) << "depth " << depth << ", w = " << omega[i];
  }
}

/// A spin-degenerate level with interaction U: Jordan-Wigner d_up = a x 1, d_down = P x a; each spin
/// couples to both leads (four baths, one Pade term each).
struct SpinfulDot {
  Matrix d_up, d_down;
  SpinfulDot() {
    const Matrix a{{0, 1}, {0, 0}}, p{{1, 0}, {0, -1}};
    d_up = kron(a, Matrix::identity(2));
    d_down = kron(p, a);
  }
  Matrix n_down() const { return d_down.adjoint() * d_down; }
  heom::Model model(double eps, double u, double mu_left, double mu_right) const {
    const Matrix n_up = d_up.adjoint() * d_up;
    const Matrix h = eps * (n_up + n_down()) + u * (n_up * n_down());
    std::vector<heom::Bath> baths;
    for (const double mu : {mu_left, mu_right})
      for (const Matrix& d : {d_up, d_down})
        baths.push_back(heom::Bath::lorentzian(d, {0.2, 1.0, mu, 0.5, 1, heom::LorentzianExpansion::Pade}));
    return heom::Model(h, baths);
  }
};

TYPED_TEST(Leads, SpinfulDotWithoutInteractionIsTheResonantLevel) {
  // U = 0: each spin is the resonant level again, four baths and Jordan-Wigner signs in between.
  using E = TypeParam;
  const SpinfulDot dot;
  const ResonantLevel level;
  const double dt = 0.05;
  const std::vector<double> tau = delays(dt, 100.0), omega = frequencies(-2.0, 2.0, 0.05);
  heom::Solver<E> solver(E(), dot.model(level.eps, 0.0, level.mu_left, level.mu_right), 2, tolerances(1e-10, 1e-12));
  solve_steady(solver);
  const std::vector<double> a = spectral_function(heom::anticommutator_correlation(solver, dot.d_up, tau), dt, omega);
  const double peak = level.spectral_function(level.eps);
  for (std::size_t i = 0; i < omega.size(); ++i)
    EXPECT_NEAR(a[i], level.spectral_function(omega[i]), 1e-6 * peak) << "w = " << omega[i];
}

TYPED_TEST(Leads, SpinfulDotHasHubbardPeaksAtParticleHoleSymmetry) {
  // e = -U/2 with both leads at mu = 0: A(w) = A(-w) exactly, >= 0, its weight split into peaks near
  // +-U/2 over a dip at w = 0.
  using E = TypeParam;
  const SpinfulDot dot;
  const double u = 1.5, dt = 0.05;
  const std::vector<double> tau = delays(dt, 100.0), omega = frequencies(-2.0, 2.0, 0.05);
  heom::Solver<E> solver(E(), dot.model(-u / 2, u, 0.0, 0.0), 2, tolerances(1e-10, 1e-12));
  solve_steady(solver);
  const std::vector<double> a = spectral_function(heom::anticommutator_correlation(solver, dot.d_up, tau), dt, omega);
  const std::size_t middle = omega.size() / 2;
  ASSERT_NEAR(omega[middle], 0.0, 1e-12);
  double largest = 0.0, at = 0.0;
  for (std::size_t i = 0; i < omega.size(); ++i) {
    EXPECT_NEAR(a[i], a[omega.size() - 1 - i], 1e-8) << "A(w) = A(-w), w = " << omega[i];
    EXPECT_GT(a[i], -1e-8) << "A(w) >= 0, w = " << omega[i];
    if (omega[i] > 0.0 && a[i] > largest) largest = a[i], at = omega[i];
  }
  EXPECT_NEAR(at, u / 2, 0.2) << "a Hubbard peak near U/2";
  EXPECT_GT(largest, 2.0 * a[middle]) << "above the dip at w = 0";
}

TYPED_TEST(Leads, FirstMomentSumRuleHoldsWithTheOddHierarchy) {
  // int w A(w) dw = <{[d, H], d^dagger}> = e + U <n_down> exactly (the leads add nothing), and it is
  // i C'(0). With the odd hierarchy it holds to the finite difference's error; the even one (the
  // wrong parity for d^dagger rho) misses it by 0.06 (measured), away from particle-hole symmetry.
  using E = TypeParam;
  const SpinfulDot dot;
  const double eps = -0.3, u = 1.5, h = 1e-3;
  heom::Solver<E> solver(E(), dot.model(eps, u, 0.2, -0.2), 2, tolerances(1e-12, 1e-14));
  solve_steady(solver);
  const double exact = eps + u * (dot.n_down() * solver.rho()).trace().real();
  const std::vector<double> tau{0.0, h, 2 * h, 3 * h, 4 * h};
  auto first_moment = [&](const std::vector<complex>& c) {  // i C'(0), fourth order
    return complex(0.0, 1.0) * (-25.0 * c[0] + 48.0 * c[1] - 36.0 * c[2] + 16.0 * c[3] - 3.0 * c[4]) / (12.0 * h);
  };
  const complex odd = first_moment(heom::anticommutator_correlation(solver, dot.d_up, tau));
  EXPECT_NEAR(odd.real(), exact, 1e-8);
  EXPECT_NEAR(odd.imag(), 0.0, 1e-8);
  std::vector<complex> even(tau.size(), 0.0);
  for (int pass = 0; pass < 2; ++pass) {
    heom::Solver<E> propagate(E(), solver.model(), 2, tolerances(1e-12, 1e-14));
    propagate.set_initial_ados(solver.ados(), 0.0);
    const std::vector<complex> part = pass == 0
                                          ? heom::correlation_function(propagate, dot.d_up, dot.d_up.adjoint(), tau)
                                          : heom::correlation_function(propagate, dot.d_up.adjoint(), dot.d_up, tau);
    for (std::size_t k = 0; k < tau.size(); ++k) even[k] += pass == 0 ? part[k] : std::conj(part[k]);
  }
  EXPECT_GT(std::abs(first_moment(even).real() - exact), 1e-2);
}

// A mixed hierarchy (QuTiP 5's definition: bosonic excitations count towards the depth, not towards
// the fermionic signs) on a level between two leads beside a qubit that a weak phonon bath relaxes:
// the two parts never meet, so rho(t) is the product of the level's and the qubit's, each computed
// alone, and the qubit's <sigma_z> relaxes at the golden-rule rate 2 J(w) coth(w / 2T) towards
// -tanh(w / 2T) (second order in the phonon coupling; J(w) = 2 lambda gamma w / (w^2 + gamma^2)).
TYPED_TEST(Leads, AMixedHierarchyOfIndependentPartsIsTheirProductAndTheGoldenRule) {
  using E = TypeParam;
  const ResonantLevel level;
  const double w = 1.0, lambda = 0.01, cutoff = 1.0, temperature = 0.5;
  const int depth = 4;  // (the parts share it: at depth 2, 3, 4 the product holds to 4e-4, 4e-6, 3e-8)
  const Matrix one = Matrix::identity(2), sz{{1, 0}, {0, -1}}, sx{{0, 1}, {1, 0}};
  const Matrix level_h{{0, 0}, {0, level.eps}}, qubit_h = 0.5 * w * sz;
  auto lead = [&](const Matrix& d, double mu) {
    return heom::Bath::lorentzian(
        d, {level.gamma, level.width, mu, level.temperature, 2, heom::LorentzianExpansion::Pade});
  };
  auto phonons = [&](const Matrix& q) {
    return heom::Bath::drude_lorentz(q, {lambda, cutoff, temperature, 3, heom::DrudeLorentzExpansion::Pade});
  };
  const Matrix d = level.d(), big_d = kron(d, one);
  const heom::Model alone_level(level_h, {lead(d, level.mu_left), lead(d, level.mu_right)});
  const heom::Model alone_qubit(qubit_h, {phonons(sx)});
  const heom::Model both(kron(level_h, one) + kron(one, qubit_h),
                         {lead(big_d, level.mu_left), phonons(kron(one, sx)), lead(big_d, level.mu_right)});
  const Matrix empty{{1, 0}, {0, 0}}, qubit0{{0.9, 0.2}, {0.2, 0.1}};
  std::vector<double> times;
  for (int k = 0; k <= 12; ++k) times.push_back(5.0 * k);
  auto run = [&](const heom::Model& model, const Matrix& rho0) {
    heom::SolverOptions o;
    o.integrator.rtol = 1e-9;
    o.integrator.atol = 1e-11;
    heom::Solver<E> solver(E(), model, depth, o);
    solver.set_initial_state(rho0);
    std::vector<Matrix> rho;
    solver.run(times, [&](const heom::Snapshot<E>& s) { rho.push_back(s.rho()); });
    return rho;
  };
  const auto a = run(alone_level, empty), b = run(alone_qubit, qubit0), ab = run(both, kron(empty, qubit0));
  double worst = 0.0;
  for (std::size_t t = 0; t < times.size(); ++t) worst = std::max(worst, heom::max_abs_diff(ab[t], kron(a[t], b[t])));
  EXPECT_LE(worst, 1e-7) << "rho(t) of the mixed hierarchy against the product of its parts'";
  EXPECT_GT(heom::max_abs_diff(a.back(), empty), 0.05);  // (the level fills)

  // <sigma_z>(t) - z_infinity decays as exp(-Gamma_1 t) once the bath's memory (1 / cutoff) has passed.
  const double j = 2.0 * lambda * cutoff * w / (w * w + cutoff * cutoff);
  const double rate = 2.0 * j / std::tanh(w / (2.0 * temperature)), z_infinity = -std::tanh(w / (2.0 * temperature));
  auto z = [&](std::size_t t) { return (b[t] * sz).trace().real(); };
  const double fitted = std::log((z(2) - z_infinity) / (z(12) - z_infinity)) / (times[12] - times[2]);
  EXPECT_NEAR(fitted, rate, 0.03 * rate) << "the qubit's relaxation rate against the golden rule";
  EXPECT_LT(std::abs(z(12) - z_infinity), 0.5 * std::abs(z(0) - z_infinity));  // (it has relaxed)
  // The same rate read from the mixed hierarchy.
  const Matrix big_sz = kron(one, sz);
  auto mixed_z = [&](std::size_t t) { return (ab[t] * big_sz).trace().real(); };
  EXPECT_NEAR(std::log((mixed_z(2) - z_infinity) / (mixed_z(12) - z_infinity)) / (times[12] - times[2]), rate,
              0.03 * rate);
}

TYPED_TEST(Leads, SpectralFunctionInFrequencyIsTheExactOneAndTheTimeDomainOnes) {
  // Solved in frequency, A(w) has no quadrature or cut-off error: the level's is exact to the solves'
  // tolerance (measured: 7e-15 of the peak). On the interacting dot away from particle-hole symmetry
  // (where the parity of the hierarchy matters: see the first-moment test) it is the transform of the
  // propagated C(t) (measured: to 2e-9; the time domain's quadrature errs 4e-8 of the peak).
  using E = TypeParam;
  const ResonantLevel level;
  std::vector<double> omega = frequencies(-2.0, 2.0, 0.05);
  // At a transition of the system, and close by, a preconditioner's own term at tier 0 passes near zero.
  for (const double offset : {0.0, 1e-6, 1e-8, -1e-10}) omega.push_back(level.eps + offset);
  heom::SteadyStateOptions gmres;
  gmres.tolerance = 1e-11;
  const double peak = level.spectral_function(level.eps);
  for (const int depth : {1, 2}) {
    heom::Solver<E> solver(E(), level.model(2), depth, tolerances(1e-10, 1e-12));
    solve_steady(solver);
    const Matrix rho = solver.rho();
    heom::FrequencySolveReport report;
    std::int64_t seen = 0;
    const std::vector<double> a = heom::density_of_states_in_frequency(
        solver, level.d(), omega, gmres, [&](std::int64_t done) { seen = done; }, &report);
    ASSERT_EQ(a.size(), omega.size());
    EXPECT_EQ(seen, static_cast<std::int64_t>(2 * omega.size()));
    EXPECT_EQ(report.solves, static_cast<std::int64_t>(2 * omega.size()));
    EXPECT_GT(report.iterations, report.solves);
    EXPECT_LE(report.worst_residual, gmres.tolerance);
    EXPECT_EQ((solver.rho() - rho).max_abs(), 0.0) << "the steady solver is left as it was";
    for (std::size_t i = 0; i < omega.size(); ++i)
      EXPECT_NEAR(a[i], level.spectral_function(omega[i]), 1e-12 * peak) << "depth " << depth << ", w = " << omega[i];
  }

  // The level's {d(t), d^dagger} is a number: A(w) is the same from any state, also from one where the
  // level is exactly empty or full (the bath uncorrelated with it), where d x or d^dagger x is zero and
  // its solves have nothing to add.
  for (const Matrix& rho0 : {Matrix{{1.0, 0.0}, {0.0, 0.0}}, Matrix{{0.0, 0.0}, {0.0, 1.0}}}) {
    heom::Solver<E> solver(E(), level.model(2), 2, tolerances(1e-10, 1e-12));
    solver.set_initial_state(rho0);
    const std::vector<double> few{-0.5, level.eps, 1.0};
    heom::FrequencySolveReport report;
    const std::vector<double> a = heom::density_of_states_in_frequency(solver, level.d(), few, gmres, {}, &report);
    EXPECT_EQ(report.solves, 6);
    for (std::size_t i = 0; i < few.size(); ++i)
      EXPECT_NEAR(a[i], level.spectral_function(few[i]), 1e-10 * peak) << "from rho(0, 0) = " << rho0(0, 0).real();
  }

  const SpinfulDot dot;
  const double dt = 0.05;
  const std::vector<double> tau = delays(dt, 100.0);
  heom::Solver<E> solver(E(), dot.model(-0.3, 1.5, 0.2, -0.2), 2, tolerances(1e-10, 1e-12));
  solve_steady(solver);
  const std::vector<double> in_time =
      spectral_function(heom::anticommutator_correlation(solver, dot.d_up, tau), dt, omega);
  const std::vector<double> in_frequency = heom::density_of_states_in_frequency(solver, dot.d_up, omega, gmres);
  double largest = 0.0;
  for (std::size_t i = 0; i < omega.size(); ++i) {
    EXPECT_NEAR(in_frequency[i], in_time[i], 1e-7) << "w = " << omega[i];
    largest = std::max(largest, in_frequency[i]);
  }
  EXPECT_GT(largest, 0.1);  // (a spectrum, not zeros)
}

TYPED_TEST(Leads, AnticommutatorCorrelationRefusesWhatItCannotDo) {
  using E = TypeParam;
  const ResonantLevel level;
  heom::Solver<E> solver(E(), level.model(1), 2);
  EXPECT_THROW(heom::anticommutator_correlation(solver, Matrix::identity(3), {0.0, 1.0}), heom::Error);
  EXPECT_THROW(heom::anticommutator_correlation(solver, level.d(), {1.0, 0.5}), heom::Error);
  heom::Model with_jump = level.model(1);
  with_jump.add_lindblad(level.d(), 0.1);
  heom::Solver<E> lossy(E(), with_jump, 2);
  EXPECT_THROW(heom::anticommutator_correlation(lossy, level.d(), {0.0, 1.0}), heom::Error);
  EXPECT_THROW(heom::density_of_states_in_frequency(solver, Matrix::identity(3), {0.0}), heom::Error);
  EXPECT_THROW(heom::density_of_states_in_frequency(solver, level.d(), {0.0, NAN}), heom::Error);
  heom::SteadyStateOptions bad;
  bad.restart = 0;
  EXPECT_THROW(heom::density_of_states_in_frequency(solver, level.d(), {0.0}, bad), heom::Error);
  // The Krylov vectors are held to the memory limit beside the odd hierarchy.
  {
    heom::SolverOptions limited = tolerances(1e-10, 1e-12);
    limited.memory_limit = solver.memory_plan().bytes_total + 1024;
    heom::Solver<E> small(E(), level.model(1), 2, limited);  // (its state need not be steady to be refused)
    EXPECT_THROW(heom::density_of_states_in_frequency(small, level.d(), {0.0}), heom::OutOfMemoryError);
    limited.memory_limit = 100 * solver.memory_plan().bytes_total;
    heom::Solver<E> roomy(E(), level.model(1), 2, limited);
    solve_steady(roomy);
    EXPECT_EQ(heom::density_of_states_in_frequency(roomy, level.d(), {0.0}).size(), 1u);
  }
  // A solve held to too few iterations says so.
  heom::SteadyStateOptions short_of;
  short_of.max_iterations = 1;
  short_of.tolerance = 1e-14;
  solve_steady(solver);
  EXPECT_THROW(heom::density_of_states_in_frequency(solver, level.d(), {0.0}, short_of), heom::SteadyStateError);
}

}  // namespace
