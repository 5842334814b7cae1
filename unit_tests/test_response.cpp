// The optical response: the manifolds built from a one-exciton model, the third-order response of a
// two-level system against its exact second-order cumulant result (exact for a harmonic bath), the
// relations between pathways and signals, the orientation average, and the first-order response
// against the absorption's dipole correlation.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "heom/solver/correlation_function.hpp"
#include "heom/solver/response.hpp"
#include "test_support.hpp"

namespace {

using heom::Bath;
using heom::complex;
using heom::Matrix;
using heom::Pathway;
using heom::ResponseSignal;
namespace ht = heom::testing;

template <class E>
class Response : public ::testing::Test {};
TYPED_TEST_SUITE(Response, ht::Backends);

/// C(t) = sum_k a_k exp(-v_k t) of a bath's exponents (C_R + i C_I).
struct Correlation {
  std::vector<complex> a, v;
  explicit Correlation(const Bath& bath) {
    for (const heom::Exponent& e : bath.exponents()) {
      using K = heom::ExponentKind;
      a.push_back(e.kind == K::R ? e.c : e.kind == K::I ? complex(0, 1) * e.c : e.c + complex(0, 1) * e.c2);
      v.push_back(e.v);
    }
  }
  /// The line-shape function g(t) = int_0^t int_0^s C(u) du ds.
  complex g(double t) const {
    complex sum = 0.0;
    for (std::size_t k = 0; k < a.size(); ++k) sum += a[k] / (v[k] * v[k]) * (std::exp(-v[k] * t) + v[k] * t - 1.0);
    return sum;
  }
};

/// The exact response of a pathway of a two-level system (gap w, coupling |e><e|, a Gaussian bath of
/// correlation C), given whether the ket and the bra are excited in each of the three intervals: the
/// influence functional to second order (exact here),
///   ln F = -int_0^t ds int_0^s ds' [k(s) - b(s)] [k(s') C(s - s') - b(s') C*(s - s')],
/// with the phase exp(-i w int (k - b)).
complex exact_pathway(const Correlation& c, double w, const double (&length)[3], const int (&ket)[3],
                      const int (&bra)[3]) {
  double start[3], end[3];
  double t = 0.0;
  for (int a = 0; a < 3; ++a) {
    start[a] = t;
    t += length[a];
    end[a] = t;
  }
  complex log_f = 0.0, phase = 0.0;
  for (int a = 0; a < 3; ++a) {
    phase += static_cast<double>(ket[a] - bra[a]) * length[a];
    for (int b = 0; b <= a; ++b) {
      // int_{I_a} ds int_{I_b, s' < s} ds' C(s - s').
      const complex block =
          a == b ? c.g(length[a])
                 : c.g(end[a] - start[b]) - c.g(start[a] - start[b]) - c.g(end[a] - end[b]) + c.g(start[a] - end[b]);
      log_f -= static_cast<double>(ket[a] - bra[a]) *
               (static_cast<double>(ket[b]) * block - static_cast<double>(bra[b]) * std::conj(block));
    }
  }
  return std::exp(complex(0.0, -w) * phase + log_f);
}

/// Which side is excited in t1, t2, t3 for each signal and pathway of a two-level system.
complex exact_response(const Correlation& c, double w, ResponseSignal signal, Pathway pathway, double t1, double t2,
                       double t3) {
  const double length[3] = {t1, t2, t3};
  const bool rephasing = signal == ResponseSignal::rephasing;
  if (pathway == Pathway::ground_state_bleach)
    return rephasing ? exact_pathway(c, w, length, {0, 0, 1}, {1, 0, 0})
                     : exact_pathway(c, w, length, {1, 0, 1}, {0, 0, 0});
  return rephasing ? exact_pathway(c, w, length, {0, 1, 1}, {1, 1, 0})
                   : exact_pathway(c, w, length, {1, 1, 1}, {0, 1, 0});
}

/// A two-level system (gap w) with its bath on |e><e| and a dipole along x.
heom::ExcitonManifolds monomer(double w, const Bath& bath_on_site) {
  heom::ExcitonAggregate aggregate;
  aggregate.hamiltonian = Matrix{{w}};
  aggregate.dipoles = {{1.0, 0.0, 0.0}};
  aggregate.baths = {bath_on_site};
  aggregate.two_exciton = false;
  return heom::build_manifolds(aggregate);
}

heom::ResponseOptions small_grid() {
  heom::ResponseOptions o;
  o.waiting_times = {0.0, 3.0};
  o.t1_step = o.t3_step = 1.5;
  o.t1_points = o.t3_points = 5;
  o.polarization.isotropic = false;  // xxxx in the lab frame: R itself for a dipole along x
  return o;
}

/// The largest |heom - exact| over every entry, relative to the largest |exact|.
double relative_error(const heom::ThirdOrderResponse& r, const Correlation& c, double w) {
  double worst = 0.0, scale = 0.0;
  for (std::size_t s = 0; s < r.signals.size(); ++s)
    for (std::size_t p = 0; p < r.pathways.size(); ++p)
      for (std::size_t b = 0; b < r.waiting_times.size(); ++b)
        for (std::size_t i1 = 0; i1 < r.t1.size(); ++i1)
          for (std::size_t i3 = 0; i3 < r.t3.size(); ++i3) {
            const complex exact =
                exact_response(c, w, r.signals[s], r.pathways[p], r.t1[i1], r.waiting_times[b], r.t3[i3]);
            const complex got = r(static_cast<int>(s), static_cast<int>(p), static_cast<int>(b), static_cast<int>(i1),
                                  static_cast<int>(i3));
            worst = std::max(worst, std::abs(got - exact));
            scale = std::max(scale, std::abs(exact));
          }
  return worst / scale;
}

struct CumulantCase {
  const char* name;
  Bath bath;
  int coarse_depth, depth;
};

std::vector<CumulantCase> cumulant_cases() {
  const Matrix site{{1.0}};
  return {
      {"drude-lorentz, T = 1", Bath::drude_lorentz(site, {0.1, 0.5, 1.0, 2, heom::DrudeLorentzExpansion::Pade}), 2, 9},
      {"drude-lorentz, T = 0.1", Bath::drude_lorentz(site, {0.1, 0.5, 0.1, 2, heom::DrudeLorentzExpansion::Pade}), 2,
       6},
      {"underdamped", Bath::underdamped(site, {0.3, 0.2, 1.0, 0.5, 2}), 2, 8},
  };
}

// The exact limit: a two-level system linearly coupled to a harmonic bath, whose response functions
// the line-shape function g(t) gives exactly; heom's converge to them as the depth grows.
TYPED_TEST(Response, ConvergesToTheCumulantResultOfATwoLevelSystem) {
  using E = TypeParam;
  const double w = 0.7;
  for (const CumulantCase& k : cumulant_cases()) {
    SCOPED_TRACE(k.name);
    const heom::ExcitonManifolds m = monomer(w, k.bath);
    const Correlation c(m.model.baths()[0]);
    double errors[2];
    const int depths[2] = {k.coarse_depth, k.depth};
    for (int d = 0; d < 2; ++d) {
      const heom::Propagator<E> propagator(E(), m.model, depths[d], ht::tolerances(1e-11, 1e-13));
      const heom::ThirdOrderResponse r = heom::third_order_response(propagator, m, small_grid());
      errors[d] = relative_error(r, c, w);
      std::printf("    %s, depth %d: relative error %.2e\n", k.name, depths[d], errors[d]);
    }
    EXPECT_LT(errors[1], 1e-6);
    EXPECT_GT(errors[0], 10 * errors[1]);  // converging, not agreeing by accident
  }
}

// At T = 0 a two-level system's bleach equals its emission; at t1 = 0 both signals are the linear
// response J(t3), and at t3 = 0 the rephasing one is J(t1)* where the non-rephasing one is J(t1).
TYPED_TEST(Response, PathwaysAndSignalsOfATwoLevelSystemAtZeroWaitingTime) {
  using E = TypeParam;
  const heom::ExcitonManifolds m =
      monomer(0.7, Bath::drude_lorentz(Matrix{{1.0}}, {0.1, 0.5, 0.5, 2, heom::DrudeLorentzExpansion::Pade}));
  const heom::Propagator<E> propagator(E(), m.model, 5, ht::tolerances(1e-10, 1e-12));
  heom::ResponseOptions o = small_grid();
  o.waiting_times = {0.0};
  const heom::ThirdOrderResponse r = heom::third_order_response(propagator, m, o);
  const std::vector<complex> j = heom::first_order_response(propagator, m, o.t1_step, o.t1_points);
  ASSERT_EQ(r.signals.size(), 2u);
  ASSERT_EQ(r.pathways.size(), 2u);  // no two-exciton manifold: no excited-state absorption
  const int R = 0, NR = 1, gsb = 0, se = 1;
  for (int a = 0; a < 5; ++a) {
    const complex j3 = 3.0 * j[a];  // (J is averaged over orientations: a dipole along x gives 1/3)
    EXPECT_NEAR(std::abs(r(R, gsb, 0, 0, a) - j3), 0.0, 1e-8);
    EXPECT_NEAR(std::abs(r(NR, gsb, 0, 0, a) - j3), 0.0, 1e-8);
    EXPECT_NEAR(std::abs(r(R, gsb, 0, a, 0) - std::conj(j3)), 0.0, 1e-8);
    EXPECT_NEAR(std::abs(r(NR, gsb, 0, a, 0) - j3), 0.0, 1e-8);
    for (int b = 0; b < 5; ++b)
      for (int s : {R, NR}) EXPECT_NEAR(std::abs(r(s, gsb, 0, a, b) - r(s, se, 0, a, b)), 0.0, 1e-8);
  }
  // Not a tautology: J decays and turns.
  EXPECT_LT(std::abs(j[4]), 0.9 * std::abs(j[0]));
  EXPECT_GT(std::abs(j[2].imag()), 0.05 * std::abs(j[0]));
}

/// A dimer with its two-exciton state and one bath per site.
heom::ExcitonAggregate dimer(const heom::Dipole& d1, const heom::Dipole& d2) {
  heom::ExcitonAggregate a;
  a.hamiltonian = Matrix{{0.2, 0.1}, {0.1, -0.2}};
  a.dipoles = {d1, d2};
  const heom::DrudeLorentz bath{0.05, 0.5, 0.5, 1, heom::DrudeLorentzExpansion::Pade};
  a.baths = {Bath::drude_lorentz(heom::operators::projector(2, 0, 0), bath),
             Bath::drude_lorentz(heom::operators::projector(2, 1, 1), bath)};
  a.biexciton_shift = -0.05;
  return a;
}

// The isotropic average of parallel dipoles is 1/5 of the response with the fields along them.
TYPED_TEST(Response, IsotropicAverageOfParallelDipolesIsAFifth) {
  using E = TypeParam;
  const heom::ExcitonManifolds m = heom::build_manifolds(dimer({1.0, 0.0, 0.0}, {-0.6, 0.0, 0.0}));
  const heom::Propagator<E> propagator(E(), m.model, 2, ht::tolerances(1e-9, 1e-11));
  heom::ResponseOptions o = small_grid();
  o.t1_points = o.t3_points = 3;
  o.polarization = *heom::Polarization::named("xxxx", false);
  const heom::ThirdOrderResponse fixed = heom::third_order_response(propagator, m, o);
  o.polarization = *heom::Polarization::named("xxxx", true);
  const heom::ThirdOrderResponse averaged = heom::third_order_response(propagator, m, o);
  ASSERT_EQ(fixed.pathways.size(), 3u);
  double largest = 0.0;
  for (std::size_t e = 0; e < fixed.values.size(); ++e) {
    EXPECT_NEAR(std::abs(averaged.values[e] - fixed.values[e] / 5.0), 0.0, 1e-12) << "entry " << e;
    largest = std::max(largest, std::abs(fixed.values[e]));
  }
  EXPECT_GT(largest, 0.1);
}

// The first-order response equals the absorption's dipole correlation <mu(t) mu(0)>, propagated by
// correlation_function in the ground-column shape, for dipoles that are not parallel.
TYPED_TEST(Response, FirstOrderResponseIsTheAbsorptionCorrelation) {
  using E = TypeParam;
  const heom::ExcitonManifolds m = heom::build_manifolds(dimer({1.0, 0.2, 0.0}, {-0.3, 0.8, 0.4}));
  const heom::SolverOptions options = ht::tolerances(1e-10, 1e-12);
  const heom::Propagator<E> propagator(E(), m.model, 3, options);
  const std::vector<complex> j = heom::first_order_response(propagator, m, 2.0, 8);
  heom::SolverOptions columns = options;
  columns.generator.shape = heom::AdoShape::ground_column;
  std::vector<complex> expected(8, 0.0);
  for (int c = 0; c < 3; ++c) {
    heom::Solver<E> solver(E(), m.model, 3, columns);
    solver.set_initial_state(heom::operators::projector(m.dimension(), 0, 0));
    Matrix mu = m.raise_ground[c];
    mu += m.raise_ground[c].adjoint();
    const std::vector<complex> cf =
        heom::correlation_function(solver, mu, mu, {0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0});
    for (int k = 0; k < 8; ++k) expected[k] += cf[k] / 3.0;
  }
  EXPECT_LT(ht::max_diff(j, expected), 1e-8);
  EXPECT_NEAR(j[0].real(), (1.0 + 0.04 + 0.09 + 0.64 + 0.16) / 3.0, 1e-12);
}

// A dimer with its two-exciton state against QuTiP 4.7's HEOMSolver propagating each pathway, the
// manifolds written out by hand there (make_reference.py, response_dimer_case), every pathway of both
// signals with four different field polarizations.
TYPED_TEST(Response, DimerMatchesQuTiPPathwayByPathway) {
  using E = TypeParam;
  const nlohmann::json ref = ht::load_reference("response_dimer");
  heom::ExcitonAggregate a;
  const double e0 = ref.at("site_energies").at(0), e1 = ref.at("site_energies").at(1), j = ref.at("coupling");
  a.hamiltonian = Matrix{{e0, j}, {j, e1}};
  for (const auto& d : ref.at("dipoles")) a.dipoles.push_back({d.at(0), d.at(1), d.at(2)});
  for (int s = 0; s < 2; ++s)
    a.baths.push_back(
        Bath::drude_lorentz(heom::operators::projector(2, s, s), ht::drude_lorentz_from_json(ref.at("bath"))));
  a.biexciton_shift = ref.at("biexciton_shift");
  const heom::ExcitonManifolds m = heom::build_manifolds(a);
  const heom::Propagator<E> propagator(E(), m.model, ref.at("depth"), ht::tolerances(1e-11, 1e-13));
  ASSERT_EQ(propagator.hierarchy().size(), ref.at("num_ados").get<int>());
  heom::ResponseOptions o;
  o.waiting_times = ref.at("waiting_times").get<std::vector<double>>();
  const std::vector<double> t1 = ref.at("t1"), t3 = ref.at("t3");
  o.t1_step = t1[1];
  o.t3_step = t3[1];
  o.t1_points = static_cast<int>(t1.size());
  o.t3_points = static_cast<int>(t3.size());
  o.signals = {ResponseSignal::rephasing, ResponseSignal::non_rephasing};
  o.pathways = {Pathway::ground_state_bleach, Pathway::stimulated_emission, Pathway::excited_state_absorption};
  o.polarization.isotropic = false;
  for (int f = 0; f < 4; ++f) {
    const auto& e = ref.at("fields").at(f);
    o.polarization.fields[f] = {e.at(0), e.at(1), e.at(2)};
  }
  const heom::ThirdOrderResponse r = heom::third_order_response(propagator, m, o);
  const heom::ResponseWork work = heom::response_work(m, o);
  EXPECT_EQ(r.propagations, work.t1_legs + work.waiting_legs + work.t3_legs);
  EXPECT_EQ(work.one_exciton_levels, 3);  // the bleach and emission on g and the two sites
  const std::vector<complex> expected = ht::to_complex_list(ref.at("values"));
  ASSERT_EQ(r.values.size(), expected.size());
  double largest = 0.0;
  for (std::size_t k = 0; k < expected.size(); ++k) {
    EXPECT_NEAR(std::abs(r.values[k] - expected[k]), 0.0, 1e-8) << "entry " << k;
    largest = std::max(largest, std::abs(expected[k]));
  }
  EXPECT_GT(largest, 0.1);
}

TEST(Manifolds, TwoExcitonStatesCarryTheOneBodyOperatorsAndDipoles) {
  heom::ExcitonAggregate a;
  a.hamiltonian = Matrix{{1.0, 0.1, 0.02}, {0.1, 1.2, 0.3}, {0.02, 0.3, 0.9}};
  a.dipoles = {{1, 0, 0}, {0, 2, 0}, {0, 0, 3}};
  for (int s = 0; s < 3; ++s)
    a.baths.push_back(Bath::drude_lorentz(heom::operators::projector(3, s, s), {0.05, 0.5, 0.5, 1}));
  a.biexciton_shift = -0.1;
  const heom::ExcitonManifolds m = heom::build_manifolds(a);
  ASSERT_EQ(m.dimension(), 1 + 3 + 3);
  ASSERT_EQ(m.pairs.size(), 3u);  // (0,1), (0,2), (1,2): levels 4, 5, 6
  const Matrix& h = m.model.hamiltonian();
  EXPECT_DOUBLE_EQ(h(4, 4).real(), 1.0 + 1.2 - 0.1);
  EXPECT_DOUBLE_EQ(h(6, 6).real(), 1.2 + 0.9 - 0.1);
  EXPECT_DOUBLE_EQ(h(4, 5).real(), 0.3);   // |01> <-> |02>: J_12
  EXPECT_DOUBLE_EQ(h(4, 6).real(), 0.02);  // |01> <-> |12>: J_02
  EXPECT_DOUBLE_EQ(h(5, 6).real(), 0.1);   // |02> <-> |12>: J_01
  EXPECT_DOUBLE_EQ(h(1, 2).real(), 0.1);
  EXPECT_EQ(h(0, 1), complex(0.0));
  // Site 1's bath: the excitations on site 1 (levels 2, 4 = |01>, 6 = |12>).
  const Matrix& q = m.model.baths()[1].coupling();
  for (int l = 0; l < 7; ++l) EXPECT_DOUBLE_EQ(q(l, l).real(), (l == 2 || l == 4 || l == 6) ? 1.0 : 0.0) << l;
  EXPECT_DOUBLE_EQ(q.max_abs(), 1.0);
  // Dipoles: g -> m, and m -> mn with the other site's dipole.
  EXPECT_DOUBLE_EQ(m.raise_ground[1](2, 0).real(), 2.0);
  EXPECT_DOUBLE_EQ(m.raise_one[2](5, 1).real(), 3.0);  // |0> -> |02> by site 2's dipole (z)
  EXPECT_DOUBLE_EQ(m.raise_one[0](5, 3).real(), 1.0);  // |2> -> |02> by site 0's dipole (x)
  EXPECT_DOUBLE_EQ(m.raise_one[0](6, 2).real(), 0.0);  // |1> -> |12> needs site 2's (z)
  // Without the two-exciton states: g and the sites, H and the baths' blocks kept; none where a term
  // connects the two-exciton states to the rest.
  const std::optional<heom::ExcitonManifolds> one = heom::without_two_excitons(m);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->dimension(), 4);
  EXPECT_FALSE(one->two_exciton);
  EXPECT_EQ(one->model.hamiltonian()(2, 3), h(2, 3));
  EXPECT_DOUBLE_EQ(one->model.baths()[1].coupling()(2, 2).real(), 1.0);
  EXPECT_DOUBLE_EQ(one->raise_ground[1](2, 0).real(), 2.0);
  heom::Model leaking = m.model;
  Matrix jump(7, 7);
  jump(2, 5) = 1.0;  // |02> -> |1>
  leaking.add_lindblad(jump, 0.1);
  EXPECT_FALSE(heom::without_two_excitons(heom::explicit_manifolds(leaking, 3, m.raise_ground, m.raise_one)));
  // The explicit form accepts what was built, and refuses a bath on g.
  EXPECT_NO_THROW(heom::explicit_manifolds(m.model, 3, m.raise_ground, m.raise_one));
  heom::Model bad = m.model;
  Matrix q0(7, 7);
  q0(0, 1) = q0(1, 0) = 1.0;
  bad.add_bath(Bath::drude_lorentz(q0, {0.05, 0.5, 0.5, 1}));
  EXPECT_THROW(heom::explicit_manifolds(bad, 3, m.raise_ground, m.raise_one), heom::Error);
  a.dipoles.pop_back();
  EXPECT_THROW(heom::build_manifolds(a), heom::Error);
}

TEST(ResponseOptions, RefusesWhatItCannotRun) {
  heom::ResponseOptions o = small_grid();
  EXPECT_FALSE(o.validate());
  o.waiting_times = {2.0, 1.0};
  EXPECT_EQ(o.validate()->field, "waiting_times");
  o = small_grid();
  o.t1_step = 0.0;
  EXPECT_EQ(o.validate()->field, "t1_step");
  o = small_grid();
  o.pathways = {Pathway::stimulated_emission, Pathway::stimulated_emission};
  EXPECT_EQ(o.validate()->field, "pathways");
  o = small_grid();
  o.polarization.fields[2] = {1.0, 1.0, 0.0};
  EXPECT_EQ(o.validate()->field, "polarization.fields[2]");
  EXPECT_FALSE(heom::Polarization::named("xxqx"));
  EXPECT_NEAR(heom::Polarization::named("magic-angle")->weight(0, 0, 1, 1), 1.0 / 9.0, 1e-15);
  EXPECT_NEAR(heom::Polarization::named("magic-angle")->weight(0, 1, 0, 1), 0.0, 1e-15);
}

// The isotropic weights against the average over orientations by quadrature (Euler angles: 8 points in
// alpha and gamma, 5-point Gauss-Legendre in cos beta: exact for the fourth-degree products).
TEST(ResponseOptions, IsotropicWeightsAreTheAverageOverOrientations) {
  const double pi = 3.14159265358979323846;
  const double u[5] = {0.0, 0.5384693101056831, -0.5384693101056831, 0.9061798459386640, -0.9061798459386640};
  const double wu[5] = {0.5688888888888889, 0.4786286704993665, 0.4786286704993665, 0.2369268850561891,
                        0.2369268850561891};
  std::vector<heom::Polarization> cases;
  for (const char* name : {"xxxx", "xxyy", "xyxy", "xyyx", "magic-angle"})
    cases.push_back(*heom::Polarization::named(name));
  heom::Polarization tilted;  // four different directions
  const heom::Dipole e[4] = {{1, 0, 0}, {0.6, 0.8, 0}, {0, 0.6, 0.8}, {0.48, 0.6, 0.64}};
  for (int f = 0; f < 4; ++f) tilted.fields[f] = e[f];
  cases.push_back(tilted);
  for (const heom::Polarization& p : cases) {
    ASSERT_FALSE(p.validate());
    double average[3][3][3][3] = {};
    for (int ia = 0; ia < 8; ++ia)
      for (int ib = 0; ib < 5; ++ib)
        for (int ig = 0; ig < 8; ++ig) {
          const double a = 2 * pi * ia / 8, g = 2 * pi * ig / 8, cb = u[ib], sb = std::sqrt(1 - cb * cb);
          const double ca = std::cos(a), sa = std::sin(a), cg = std::cos(g), sg = std::sin(g);
          // R = Rz(a) Ry(b) Rz(g); the fields seen from the rotated aggregate are R^T e.
          const double r[3][3] = {{ca * cb * cg - sa * sg, -ca * cb * sg - sa * cg, ca * sb},
                                  {sa * cb * cg + ca * sg, -sa * cb * sg + ca * cg, sa * sb},
                                  {-sb * cg, sb * sg, cb}};
          double seen[4][3];
          for (int f = 0; f < 4; ++f)
            for (int i = 0; i < 3; ++i)
              seen[f][i] = r[0][i] * p.fields[f][0] + r[1][i] * p.fields[f][1] + r[2][i] * p.fields[f][2];
          const double weight = wu[ib] / 2 / 64;
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
              for (int k = 0; k < 3; ++k)
                for (int l = 0; l < 3; ++l)
                  average[i][j][k][l] += weight * seen[0][i] * seen[1][j] * seen[2][k] * seen[3][l];
        }
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 3; ++k)
          for (int l = 0; l < 3; ++l) EXPECT_NEAR(p.weight(i, j, k, l), average[i][j][k][l], 1e-14) << i << j << k << l;
  }
  EXPECT_NEAR(cases[0].weight(0, 0, 0, 0), 1.0 / 5.0, 1e-15);
}

}  // namespace
