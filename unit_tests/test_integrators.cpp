// Integrators: RK4's order; for the adaptive methods (exponential Adams, Dormand-Prince) tolerance,
// dense output, exact output times, determinism and the errors a diverging run stops with; the Faber
// (Chebyshev) propagator's tolerance, applications, output times, checkpoints and refusals.
// (Exponential Adams' building blocks: test_exponential_adams.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "heom/integrator/faber_propagator.hpp"
#include "test_support.hpp"

namespace {

using heom::Bath;
using heom::complex;
using heom::Matrix;
using heom::Model;
namespace ht = heom::testing;
using ht::max_diff;

Model spin_boson() {
  const Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  return Model(0.25 * sz + 0.5 * sx, {Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, 2})});
}

const Matrix ground{{1.0, 0.0}, {0.0, 0.0}};

const heom::Method adaptive_methods[] = {heom::Method::exp_adams, heom::Method::dopri5};

heom::SolverOptions options(heom::Method method, double rtol_or_step, double atol = 0.0) {
  heom::SolverOptions o;
  o.integrator.method = method;
  if (!heom::is_adaptive(method)) {
    o.integrator.step = rtol_or_step;
  } else {
    o.integrator.rtol = rtol_or_step;
    o.integrator.atol = atol;
  }
  return o;
}

/// The solver's full ADO state on the host, as a flat vector.
template <class E>
std::vector<complex> flat_state(const heom::Solver<E>& solver) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), solver.ados());
  std::vector<complex> out;
  for (std::size_t a = 0; a < h.extent(0); ++a)
    for (std::size_t i = 0; i < h.extent(1); ++i)
      for (std::size_t j = 0; j < h.extent(2); ++j) out.emplace_back(h(a, i, j).real(), h(a, i, j).imag());
  return out;
}

/// The full ADO state at t from rho0, as a flat vector.
template <class E>
std::vector<complex> state_at(heom::Solver<E>& solver, double t, const Matrix& rho0 = ground) {
  solver.set_initial_state(rho0);
  solver.run_until(t);
  EXPECT_EQ(solver.time(), t) << "run_until must land exactly";
  return flat_state(solver);
}

/// The tests' exact solution: the full ADO state at t from rho0 by dopri5 at rtol 1e-13 / atol 1e-15.
template <class E>
std::vector<complex> reference_state(const Model& model, int depth, double t, const Matrix& rho0 = ground) {
  heom::Solver<E> reference(E(), model, depth, options(heom::Method::dopri5, 1e-13, 1e-15));
  return state_at(reference, t, rho0);
}

template <class ExecSpace>
class IntegratorTest : public ::testing::Test {};
TYPED_TEST_SUITE(IntegratorTest, ht::Backends);

TYPED_TEST(IntegratorTest, FixedStepMethodsConvergeAtFourthOrder) {
  using E = TypeParam;
  const double t = 2.0;
  const auto exact = reference_state<E>(spin_boson(), 3, t);
  for (const auto& [method, stages] : {std::pair{heom::Method::rk4, 4}, std::pair{heom::Method::lsrk4, 5}}) {
    SCOPED_TRACE(heom::to_string(method));
    double previous = 0.0;
    for (double h : {0.04, 0.02, 0.01}) {
      heom::Solver<E> solver(E(), spin_boson(), 3, options(method, h));
      const double err = max_diff(state_at(solver, t), exact);
      EXPECT_EQ(solver.statistics().steps, std::llround(t / h));
      EXPECT_EQ(solver.statistics().rhs_evaluations, stages * std::llround(t / h));
      if (previous > 0.0) {
        const double order = std::log2(previous / err);
        EXPECT_GT(order, 3.7) << "h = " << h << ": errors " << previous << " -> " << err;
        EXPECT_LT(order, 4.3) << "h = " << h << ": errors " << previous << " -> " << err;
      }
      previous = err;
    }
  }
  EXPECT_LT(heom::state_vectors(heom::Method::lsrk4), heom::state_vectors(heom::Method::rk4));
}

TYPED_TEST(IntegratorTest, AdaptiveMethodsMeetTheirTolerance) {
  using E = TypeParam;
  const double t = 10.0;
  const auto exact = reference_state<E>(spin_boson(), 5, t);
  for (const heom::Method method : adaptive_methods) {
    SCOPED_TRACE(heom::to_string(method));
    double previous_error = 1.0;
    std::int64_t previous_steps = 0;
    for (double rtol : {1e-5, 1e-7, 1e-9}) {
      heom::Solver<E> solver(E(), spin_boson(), 5, options(method, rtol, rtol * 1e-2));
      const double err = max_diff(state_at(solver, t), exact);
      // The global error of a run controlled in rho's and the hierarchy's RMS norms stays within a
      // small multiple of the tolerance (observed: exp-adams 0.2-0.7 rtol, dopri5 0.03-0.3 rtol).
      EXPECT_LE(err, 10 * rtol) << "rtol " << rtol;
      EXPECT_LT(err, previous_error) << "rtol " << rtol;
      EXPECT_GT(solver.statistics().steps, previous_steps) << "tighter tolerance, more steps";
      previous_error = err;
      previous_steps = solver.statistics().steps;
    }
  }
}

TYPED_TEST(IntegratorTest, AdaptiveMethodsControlTheWholeHierarchy) {
  using E = TypeParam;
  // Pure dephasing from the maximally mixed state: rho stays I/2 exactly while the ADOs evolve, so
  // only the error norm over the whole hierarchy holds the step size down.
  const Matrix sz = heom::operators::sigma_z();
  const Model model(0.5 * sz, {Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, 2})});
  const Matrix mixed{{0.5, 0.0}, {0.0, 0.5}};
  const double t = 10.0;
  const auto exact = reference_state<E>(model, 5, t, mixed);
  for (const heom::Method method : adaptive_methods) {
    SCOPED_TRACE(heom::to_string(method));
    heom::Solver<E> solver(E(), model, 5, options(method, 1e-7, 1e-9));
    const double err = max_diff(state_at(solver, t, mixed), exact);
    // Observed: exp-adams 2.7e-9, dopri5 1.1e-8; 0.03 when exp-adams left the hierarchy's norm out.
    EXPECT_LE(err, 1e-7);
    EXPECT_EQ(heom::max_abs_diff(solver.rho(), mixed), 0.0);
  }
}

TYPED_TEST(IntegratorTest, EveryGeneratorKernelMeetsTheTolerance) {
  // The adaptive methods on each generator kernel this backend runs (on host backends exp-adams
  // updates each ADO inside the kernel's pass, through its per-range hook).
  using E = TypeParam;
  using K = heom::GeneratorKernel;
  const double t = 10.0, rtol = 1e-7;
  const auto exact = reference_state<E>(spin_boson(), 5, t);
  int kernels = 0;
  for (const K kernel : {K::portable, K::host_block, K::hermitian, K::two_level}) {
    if (!heom::Generator<E>::can_run(kernel, 2, true)) continue;
    ++kernels;
    for (const heom::Method method : adaptive_methods) {
      SCOPED_TRACE(std::string(heom::to_string(kernel)) + ", " + heom::to_string(method));
      heom::SolverOptions o = options(method, rtol, rtol * 1e-2);
      o.generator.kernel = kernel;
      heom::Solver<E> solver(E(), spin_boson(), 5, o);
      EXPECT_LE(max_diff(state_at(solver, t), exact), 10 * rtol);
      EXPECT_EQ(solver.kernel(), kernel);
    }
  }
  EXPECT_GE(kernels, 1);
}

TYPED_TEST(IntegratorTest, ExponentialAdamsStepsPastTheDampingLimit) {
  using E = TypeParam;
  // Five Matsubara terms at depth 8: damping rates up to 8 x 2 pi 5 T = 126, against dopri5's
  // stability interval of about 3.3. Explicit Runge-Kutta steps are bounded near 3.3 / 126; the
  // exponential method treats the damping exactly and steps for accuracy alone.
  const Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  const Model model(0.25 * sz + 0.5 * sx, {Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, 5})});
  const double t = 10.0;
  heom::Solver<E> reference(E(), model, 8, options(heom::Method::dopri5, 1e-10, 1e-12));
  heom::Solver<E> dopri5(E(), model, 8, options(heom::Method::dopri5, 1e-7, 1e-9));
  heom::Solver<E> adams(E(), model, 8, options(heom::Method::exp_adams, 1e-7, 1e-9));
  const auto exact = state_at(reference, t);
  const double err_dopri5 = max_diff(state_at(dopri5, t), exact);
  const double err_adams = max_diff(state_at(adams, t), exact);
  EXPECT_LE(err_adams, 1e-6);
  EXPECT_LE(err_dopri5, 1e-6);
  // Observed: 2,558 evaluations for dopri5 (stability-bound: about 6 per 3.3 / 126), 276 for
  // exp-adams; errors 1.2e-8 and 6.9e-8.
  EXPECT_GT(dopri5.statistics().rhs_evaluations, 6 * t * 126 / 3.5);
  EXPECT_LT(adams.statistics().rhs_evaluations * 5, dopri5.statistics().rhs_evaluations);
}

TYPED_TEST(IntegratorTest, DenseOutputHitsRequestedTimesExactly) {
  using E = TypeParam;
  heom::Solver<E> reference(E(), spin_boson(), 4, options(heom::Method::dopri5, 1e-13, 1e-15));
  // (chebyshev: its output times are sums of the step's own terms; over several of its long steps)
  for (const heom::Method method : {heom::Method::exp_adams, heom::Method::dopri5, heom::Method::chebyshev}) {
    SCOPED_TRACE(heom::to_string(method));
    heom::Solver<E> solver(E(), spin_boson(), 4, options(method, 1e-9, 1e-11));
    std::vector<double> times;
    const double spacing = method == heom::Method::chebyshev ? 0.1 : 0.07;
    for (int i = 0; i <= (method == heom::Method::chebyshev ? 300 : 70); ++i)
      times.push_back(spacing * i + 0.013);  // off any step grid
    std::vector<Matrix> fine, coarse;
    std::vector<double> seen;
    reference.set_initial_state(ground, 0.013);
    reference.run(times, [&](const auto& s) { fine.push_back(s.rho()); });
    solver.set_initial_state(ground, 0.013);
    solver.run(times, [&](const auto& s) {
      seen.push_back(s.time);
      coarse.push_back(s.rho());
    });
    EXPECT_EQ(seen, times);
    EXPECT_EQ(solver.time(), times.back());
    // Output times do not force steps: dense output interpolates, so the step sequence is that of a
    // plain run to the same end.
    heom::Solver<E> plain(E(), spin_boson(), 4, options(method, 1e-9, 1e-11));
    plain.set_initial_state(ground, 0.013);
    plain.run_until(times.back());
    EXPECT_EQ(solver.statistics().steps, plain.statistics().steps);
    EXPECT_EQ(solver.statistics().rhs_evaluations, plain.statistics().rhs_evaluations);
    double worst = 0.0;
    for (std::size_t i = 0; i < fine.size(); ++i) worst = std::max(worst, heom::max_abs_diff(fine[i], coarse[i]));
    EXPECT_LE(worst, 1e-8);
  }
}

TYPED_TEST(IntegratorTest, ObserversSeeRhoOrEveryAdo) {
  using E = TypeParam;
  for (const auto& [method, all] : {std::pair{heom::Method::exp_adams, false}, std::pair{heom::Method::exp_adams, true},
                                    std::pair{heom::Method::dopri5, false}, std::pair{heom::Method::dopri5, true}}) {
    SCOPED_TRACE(heom::to_string(method));
    heom::SolverOptions o = options(method, 1e-9, 1e-11);
    o.observe_all_ados = all;
    heom::Solver<E> solver(E(), spin_boson(), 3, o);
    solver.set_initial_state(ground);
    std::size_t observed = 0;
    std::vector<complex> last;
    solver.run({0.0, 0.37, 1.0}, [&](const heom::Snapshot<E>& s) {
      observed = s.ados.extent(0);
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.ados);
      last.assign(h.data(), h.data() + h.size());  // (Kokkos::complex and std::complex share a layout)
    });
    EXPECT_EQ(observed, all ? static_cast<std::size_t>(solver.hierarchy().size()) : 1u);
    // At the last time the observer saw the solver's own state.
    auto state = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), solver.ados());
    for (std::size_t i = 0; i < last.size(); ++i)
      EXPECT_EQ(last[i], complex(state.data()[i].real(), state.data()[i].imag())) << "element " << i;
  }
  for (const heom::Method method : adaptive_methods)
    EXPECT_EQ(heom::state_vectors(method, true), heom::state_vectors(method) + 1);
}

#if defined(KOKKOS_ENABLE_SERIAL) && defined(KOKKOS_ENABLE_OPENMP)
TEST(Determinism, SerialAndOpenMPTakeTheSameSteps) {
  // Each ADO's derivative is computed the same way by any thread, and the error norm sums fixed
  // chunks in order: one thread or many take the same steps and give the same bits.
  EXPECT_GT(Kokkos::OpenMP().concurrency(), 1) << "run with more than one OpenMP thread for this test to mean much";
  // Two host kernels: the two-level one (ranges of 64 ADOs) and the general one (one ADO at a time),
  // each with exp-adams' update run inside the generator's pass.
  const Matrix p0{{1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}},
      p2{{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 1.0}};
  const Matrix h3{{0.5, 0.3, 0.0}, {0.3, 0.0, 0.2}, {0.0, 0.2, -0.4}};
  const Model three_level(h3,
                          {Bath::drude_lorentz(p0, {0.1, 0.5, 0.5, 1}), Bath::drude_lorentz(p2, {0.1, 0.5, 0.5, 1})});
  const Matrix three_level_start{{0.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 0.0}};
  for (const bool two_level : {true, false}) {
    for (const heom::Method method : adaptive_methods) {
      SCOPED_TRACE(std::string(heom::to_string(method)) + (two_level ? ", two levels" : ", three levels"));
      const Model& model = two_level ? spin_boson() : three_level;
      const int depth = two_level ? 6 : 4;
      heom::Solver<Kokkos::Serial> serial(Kokkos::Serial(), model, depth, options(method, 1e-8, 1e-10));
      heom::Solver<Kokkos::OpenMP> openmp(Kokkos::OpenMP(), model, depth, options(method, 1e-8, 1e-10));
      serial.set_initial_state(two_level ? ground : three_level_start);
      openmp.set_initial_state(two_level ? ground : three_level_start);
      serial.run_until(7.0);
      openmp.run_until(7.0);
      EXPECT_GT(serial.statistics().steps, 10);
      EXPECT_EQ(serial.statistics().steps, openmp.statistics().steps);
      EXPECT_EQ(serial.statistics().rejected, openmp.statistics().rejected);
      EXPECT_EQ(heom::max_abs_diff(serial.rho(), openmp.rho()), 0.0);
    }
  }
}
#endif

TYPED_TEST(IntegratorTest, StepAdvancesAndRunsContinue) {
  using E = TypeParam;
  for (const heom::Method method : adaptive_methods) {
    SCOPED_TRACE(heom::to_string(method));
    heom::Solver<E> solver(E(), spin_boson(), 3, options(method, 1e-8, 1e-10));
    solver.set_initial_state(ground);
    const double t1 = solver.step();
    EXPECT_GT(t1, 0.0);
    EXPECT_EQ(solver.time(), t1);
    const double t2 = solver.step();
    EXPECT_GT(t2, t1);
    solver.run_until(1.5);
    EXPECT_EQ(solver.time(), 1.5);
    EXPECT_THROW(solver.run_until(1.0), heom::Error);
    // Continuing from saved ADOs reproduces an uninterrupted run.
    heom::Solver<E> straight(E(), spin_boson(), 3, options(method, 1e-8, 1e-10));
    straight.set_initial_state(ground);
    straight.run_until(3.0);
    heom::Solver<E> resumed(E(), spin_boson(), 3, options(method, 1e-8, 1e-10));
    resumed.set_initial_ados(solver.ados(), solver.time());
    resumed.run_until(3.0);
    EXPECT_LE(heom::max_abs_diff(resumed.rho(), straight.rho()), 1e-7);
  }
}

TYPED_TEST(IntegratorTest, DivergingRunStopsWithTheTimeReached) {
  using E = TypeParam;
  // An exponent with a negative rate makes the hierarchy grow like exp(20 t) per level.
  heom::CorrelationExpansion growing;
  growing.ck_real = {0.5};
  growing.vk_real = {-20.0};
  Model model(0.5 * heom::operators::sigma_x(), {Bath::from_expansion(heom::operators::sigma_z(), growing)});
  // (At rtol 1e-8 exp-adams once took accepted steps too small to move t, forever: a step is now held
  // at 16 eps |t| at least.)
  for (const double rtol : {1e-6, 1e-8})
    for (const heom::Method method : adaptive_methods) {
      SCOPED_TRACE(std::string(heom::to_string(method)) + " at rtol " + std::to_string(rtol));
      heom::Solver<E> solver(E(), model, 6, options(method, rtol, rtol / 100));
      solver.set_initial_state(ground);
      try {
        solver.run_until(1000.0);
        FAIL() << "a diverging run finished";
      } catch (const heom::IntegrationError& e) {
        EXPECT_GT(e.time(), 0.1);
        EXPECT_LT(e.time(), 1000.0);
        EXPECT_NE(std::string(e.what()).find("t = "), std::string::npos) << e.what();
      }
    }

  for (const heom::Method method : {heom::Method::rk4, heom::Method::lsrk4}) {
    SCOPED_TRACE(heom::to_string(method));
    heom::Solver<E> fixed(E(), model, 6, options(method, 0.01));
    fixed.set_initial_state(ground);
    try {
      fixed.run_until(1000.0);
      FAIL() << "a diverging fixed-step run finished";
    } catch (const heom::IntegrationError& e) {
      EXPECT_GT(e.time(), 1.0);
      EXPECT_NE(std::string(e.what()).find("NaN or Inf"), std::string::npos) << e.what();
    }
  }
}

TYPED_TEST(IntegratorTest, RunContinuesAfterAStepFloorError) {
  using E = TypeParam;
  const double t = 2.0;
  const auto exact = reference_state<E>(spin_boson(), 4, t);
  for (const heom::Method method : adaptive_methods) {
    SCOPED_TRACE(heom::to_string(method));
    heom::SolverOptions o = options(method, 1e-9, 1e-11);
    o.integrator.step = 1e-4;      // the first step (the heuristic's would be below the floor)
    o.integrator.min_step = 1e-6;  // far below the steps these tolerances take
    heom::Solver<E> solver(E(), spin_boson(), 4, o);
    solver.set_initial_state(ground);
    solver.run_until(1.0);
    // A landing step below the step floor is refused; the state and the method's history stay as
    // they were.
    EXPECT_THROW(solver.run_until(1.0 + 1e-9), heom::IntegrationError);
    EXPECT_EQ(solver.time(), 1.0);
    solver.run_until(t);
    // Observed: exp-adams 1.7e-9, dopri5 1.3e-10; 6.9e-7 when the refused step had already moved
    // exp-adams' history on.
    EXPECT_LE(max_diff(flat_state(solver), exact), 2e-8);
  }
}

TYPED_TEST(IntegratorTest, RunsFarFromTimeZero) {
  using E = TypeParam;
  // At t = 1e7 the least step that moves t (16 eps |t| = 3.6e-8) is above the first step that tight
  // tolerances estimate (1.4e-10 here): the first step is raised to it (without, the run stopped at
  // once), and the run is the run from t = 0 to what that larger first step costs (3.8e-8 observed).
  for (const heom::Method method : adaptive_methods) {
    SCOPED_TRACE(heom::to_string(method));
    heom::Solver<E> late(E(), spin_boson(), 3, options(method, 1e-12, 1e-14)),
        early(E(), spin_boson(), 3, options(method, 1e-12, 1e-14));
    late.set_initial_state(ground, 1e7);
    early.set_initial_state(ground);
    late.run_until(1e7 + 1.0);
    early.run_until(1.0);
    EXPECT_LE(heom::max_abs_diff(late.rho(), early.rho()), 2e-7);
    EXPECT_GT(heom::max_abs_diff(early.rho(), ground), 1e-3);  // (it moved)
  }
}

TYPED_TEST(IntegratorTest, StepBelowFloorIsAnError) {
  using E = TypeParam;
  for (const heom::Method method : adaptive_methods) {
    SCOPED_TRACE(heom::to_string(method));
    heom::SolverOptions o = options(method, 1e-12, 1e-14);
    o.integrator.min_step = 0.5;  // far above what these tolerances need
    heom::Solver<E> solver(E(), spin_boson(), 4, o);
    solver.set_initial_state(ground);
    try {
      solver.run_until(10.0);
      FAIL() << "the floor was ignored";
    } catch (const heom::IntegrationError& e) {
      EXPECT_NE(std::string(e.what()).find("fell below"), std::string::npos) << e.what();
    }
  }
}

TYPED_TEST(IntegratorTest, SolverRefusesHierarchyLargerThanMemory) {
  using E = TypeParam;
  heom::SolverOptions o;
  o.memory_limit = heom::MemoryPlan::make(2, 3, 6, heom::state_vectors(heom::Method::dopri5)).bytes_total;
  try {
    heom::Solver<E> solver(E(), spin_boson(), 9, o);
    FAIL() << "an oversized hierarchy was allocated";
  } catch (const heom::OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("largest depth that fits is 6"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW((heom::Solver<E>(E(), spin_boson(), 6, o)));
}

TEST(IntegratorOptions, RejectsBadValuesNamingThem) {
  auto message = [](heom::IntegratorOptions o) -> std::string {
    const std::optional<heom::OptionProblem> problem = o.validate();
    return problem ? problem->message() : "";
  };
  heom::IntegratorOptions o;
  o.rtol = -1;
  EXPECT_EQ(message(o), "rtol: must be > 0, got -1");
  o = {};
  o.atol = 0;
  EXPECT_NE(message(o).find("atol"), std::string::npos);
  o = {};
  o.method = heom::Method::rk4;
  EXPECT_NE(message(o).find("step"), std::string::npos);
  for (const int order : {0, 6}) {
    o = {};
    o.max_order = order;
    EXPECT_EQ(message(o).find("max_order: must be 1..5"), 0u) << order;
  }
  o = {};
  o.method = heom::Method::dopri5;
  o.max_order = 4;
  EXPECT_EQ(message(o), "max_order: applies to exp-adams only, not dopri5");
  EXPECT_EQ(message(heom::IntegratorOptions{}), "") << "the defaults are valid";
  o = {};
  o.rtol = 1e-15;
  EXPECT_THROW(heom::require_valid(o.validate()), heom::OptionError);
  EXPECT_THROW(heom::parse_method("euler"), heom::Error);
  for (const heom::Method method : {heom::Method::exp_adams, heom::Method::dopri5, heom::Method::rk4,
                                    heom::Method::lsrk4, heom::Method::chebyshev, heom::Method::automatic})
    EXPECT_EQ(heom::parse_method(heom::to_string(method)), method);
  EXPECT_EQ(heom::IntegratorOptions{}.method, heom::Method::automatic) << "the default method";
}

// The Faber (Chebyshev) propagator (its coefficients and ellipse: test_faber_series.cpp; against
// QuTiP: test_dynamics.cpp).
TYPED_TEST(IntegratorTest, ChebyshevMeetsItsTolerance) {
  using E = TypeParam;
  const double t = 60.0;
  const auto exact = reference_state<E>(spin_boson(), 5, t);
  for (double rtol : {1e-5, 1e-7, 1e-9}) {
    heom::Solver<E> chebyshev(E(), spin_boson(), 5, options(heom::Method::chebyshev, rtol, rtol * 1e-2));
    const double err = max_diff(state_at(chebyshev, t), exact);
    // The cut bounds the error by the coefficients' tail (atol / max |y| here: 5e-8 to 5e-12 per step);
    // what is left is the rounding of a series whose terms cancel (observed 8e-13 to 2e-12).
    EXPECT_LE(err, 0.1 * rtol) << "rtol " << rtol;
    EXPECT_EQ(chebyshev.statistics().rejected, 0) << "the ellipse held the spectrum";
    EXPECT_LT(chebyshev.statistics().steps, 10) << "long steps";
  }
}

// Where the damping's spread is of the system's scale (a bath without Matsubara terms: its spread is
// depth x gamma) the series needs fewer applications than exp-adams, more so at tight tolerances;
// where high Matsubara rates dominate it, exp-adams, exact in the damping, needs fewer (perf_tests).
TYPED_TEST(IntegratorTest, ChebyshevNeedsFewerApplicationsWhereTheDampingIsOfTheSystemsScale) {
  using E = TypeParam;
  const Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  const Model model(0.25 * sz + 0.5 * sx, {Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, 0})});
  const double t = 200.0;
  const auto exact = reference_state<E>(model, 5, t);
  for (const auto& [rtol, ratio] : {std::pair{1e-6, 1.1}, std::pair{1e-9, 2.5}}) {
    heom::Solver<E> chebyshev(E(), model, 5, options(heom::Method::chebyshev, rtol, rtol * 1e-2));
    heom::Solver<E> adams(E(), model, 5, options(heom::Method::exp_adams, rtol, rtol * 1e-2));
    EXPECT_LE(max_diff(state_at(chebyshev, t), exact), max_diff(state_at(adams, t), exact)) << "rtol " << rtol;
    // (`heom run` of this model: 967 against 1,242 at 1e-6, 954 against 2,940 at 1e-9.)
    EXPECT_GT(double(adams.statistics().rhs_evaluations), ratio * double(chebyshev.statistics().rhs_evaluations))
        << "rtol " << rtol;
  }
}

TYPED_TEST(IntegratorTest, ChebyshevObserversOfEveryAdoSeeTheSameStates) {
  using E = TypeParam;
  const std::vector<double> times = {0.0, 3.7, 11.0, 25.0};
  std::vector<std::vector<complex>> seen[2];
  for (const bool all : {false, true}) {
    heom::SolverOptions o = options(heom::Method::chebyshev, 1e-9, 1e-11);
    o.observe_all_ados = all;
    heom::Solver<E> solver(E(), spin_boson(), 3, o);
    solver.set_initial_state(ground);
    solver.run(times, [&](const heom::Snapshot<E>& s) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.ados);
      seen[all].emplace_back();
      for (std::size_t i = 0; i < 4; ++i) seen[all].back().emplace_back(h.data()[i].real(), h.data()[i].imag());
    });
  }
  ASSERT_EQ(seen[0].size(), times.size());
  ASSERT_EQ(seen[1].size(), times.size());
  // Every ADO's accumulator costs memory, so the steps end on output times there: other steps, the
  // same values to the tolerance.
  for (std::size_t i = 0; i < times.size(); ++i) EXPECT_LE(max_diff(seen[0][i], seen[1][i]), 1e-9) << times[i];
}

TYPED_TEST(IntegratorTest, ChebyshevResumesASavedStateBitForBit) {
  using E = TypeParam;
  const heom::Propagator<E> propagator(E(), spin_boson(), 4, options(heom::Method::chebyshev, 1e-8, 1e-10));
  heom::HierarchyState<E> state = propagator.make_state();
  state.set_rho(ground);
  propagator.step(state, 1e9);
  const heom::SolverState saved = state.save();
  heom::HierarchyState<E> loaded = propagator.make_state();
  loaded.load(saved);
  propagator.run_until(state, 70.0);
  propagator.run_until(loaded, 70.0);
  auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), state.vector());
  auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), loaded.vector());
  ASSERT_EQ(a.extent(0), b.extent(0));
  for (std::size_t i = 0; i < a.extent(0); ++i) ASSERT_EQ(a(i), b(i)) << "element " << i;
}

// An ellipse that misses most of the spectrum: the terms grow, each step is retaken on a larger one
// until they do not, and the result is as accurate as with the method's own ellipse.
TYPED_TEST(IntegratorTest, ChebyshevRetakesStepsWhoseTermsOutgrowTheEllipse) {
  using E = TypeParam;
  const double t = 30.0;
  const auto exact = reference_state<E>(spin_boson(), 4, t);
  const Model model = spin_boson();
  const heom::Hierarchy hierarchy(model.max_excitations(), 4);
  const heom::Generator<E> generator(E(), model, hierarchy);
  heom::FaberPropagator<E> chebyshev(E(), generator, options(heom::Method::chebyshev, 1e-8, 1e-10).integrator);
  // (ground: rho's first element 1, every other element 0)
  Kokkos::deep_copy(Kokkos::subview(chebyshev.state(), std::make_pair(0, 1)), heom::device_complex(1.0));
  chebyshev.restart(0.0, heom::InputForm::general);
  chebyshev.use_ellipse({complex(-0.05, 0.0), 0.05, 0.05}, 10.0);
  while (chebyshev.time() < t) chebyshev.step(E(), t);
  EXPECT_GT(chebyshev.statistics().rejected, 0);
  EXPECT_GT(chebyshev.ellipse()->semi_imag, 0.2) << "enlarged until it held the terms";
  auto y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), chebyshev.state());
  std::vector<complex> mine;
  for (std::size_t i = 0; i < exact.size(); ++i) mine.emplace_back(y(i).real(), y(i).imag());
  EXPECT_LE(max_diff(mine, exact), 1e-8);
  EXPECT_THROW(chebyshev.use_ellipse({0.0, 0.0, 0.0}, 1.0), heom::OptionError);
  EXPECT_THROW(chebyshev.use_ellipse({0.0, 1.0, 1.0}, 0.0), heom::Error);
}

// The output times a run announced hold for its own steps alone: a later step reads none of them
// (they may be gone), and a zero state steps on without a limit too.
TYPED_TEST(IntegratorTest, ChebyshevStepsAfterARunWithoutItsOutputTimes) {
  using E = TypeParam;
  heom::Solver<E> solver(E(), spin_boson(), 3, options(heom::Method::chebyshev, 1e-8, 1e-10));
  solver.set_initial_state(ground);
  {
    std::vector<double> times = {0.0, 0.5, 1.0};
    solver.run(times, [](const auto&) {});
    times.assign(times.size(), -1.0);  // (what a step reading them would now see)
  }
  const double t = solver.step();
  EXPECT_GT(t, 1.0);
  EXPECT_TRUE(std::isfinite(t));
  heom::Solver<E> zero(E(), spin_boson(), 3, options(heom::Method::chebyshev, 1e-8, 1e-10));
  zero.set_initial_state(Matrix(2, 2));
  EXPECT_TRUE(std::isfinite(zero.step()));
}

TYPED_TEST(IntegratorTest, ChebyshevKeepsAZeroStateWithoutApplications) {
  using E = TypeParam;
  heom::Solver<E> solver(E(), spin_boson(), 3, options(heom::Method::chebyshev, 1e-8, 1e-10));
  solver.set_initial_state(Matrix(2, 2));
  int outputs = 0;
  solver.run({0.0, 1.0, 2.5}, [&](const heom::Snapshot<E>& s) {
    ++outputs;
    EXPECT_EQ(s.rho().max_abs(), 0.0);
  });
  EXPECT_EQ(outputs, 3);
  EXPECT_EQ(solver.statistics().rhs_evaluations, 0);
}

TYPED_TEST(IntegratorTest, ChebyshevRefusesDrivenModelsByName) {
  using E = TypeParam;
  Model driven = spin_boson();
  driven.add_drive(heom::operators::sigma_x(), heom::DriveShape::cosine(0.1, 1.0));
  try {
    heom::Solver<E> solver(E(), driven, 2, options(heom::Method::chebyshev, 1e-8, 1e-10));
    FAIL() << "a driven model was taken";
  } catch (const heom::Error& e) {
    EXPECT_NE(std::string(e.what()).find("chebyshev: the model is driven"), std::string::npos) << e.what();
  }
}

// Method::automatic: exp-adams first, chebyshev once exp-adams' steps settle where the series
// measures cheaper; exp-adams' own bits where it does not (perf_tests: method_counts.py).
Model qubit_without_matsubara_terms() {  // (the damping's spread is of the system's scale)
  const Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  return Model(0.25 * sz + 0.5 * sx, {Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, 0})});
}

template <class E>
std::vector<complex> host_vector(const heom::HierarchyState<E>& state) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), state.vector());
  return std::vector<complex>(reinterpret_cast<const complex*>(h.data()),
                              reinterpret_cast<const complex*>(h.data()) + h.extent(0));
}

TYPED_TEST(IntegratorTest, AutomaticHandsOverWhereTheSeriesPays) {
  using E = TypeParam;
  const Model model = qubit_without_matsubara_terms();
  const double t = 200.0;
  const auto exact = reference_state<E>(model, 5, t);
  heom::Solver<E> automatic(E(), model, 5, options(heom::Method::automatic, 1e-9, 1e-11));
  heom::Solver<E> adams(E(), model, 5, options(heom::Method::exp_adams, 1e-9, 1e-11));
  EXPECT_LE(max_diff(state_at(automatic, t), exact), 1e-9);
  (void)state_at(adams, t);
  EXPECT_EQ(automatic.method_taken().rfind("automatic: chebyshev from t = ", 0), 0u) << automatic.method_taken();
  // (`heom run` of this model: 958 against 2,940, and chebyshev alone 954.)
  EXPECT_LT(double(automatic.statistics().rhs_evaluations), 0.6 * double(adams.statistics().rhs_evaluations));
}

// One Matsubara term at T = 2 (rate 4 pi, times the depth) stretches the spectrum along the real
// axis, where exp-adams is exact: automatic stays with it, with its bits, and pays the hull's
// applications once.
TYPED_TEST(IntegratorTest, AutomaticKeepsExpAdamsWhereTheDampingDominates) {
  using E = TypeParam;
  const Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  const Model model(0.25 * sz + 0.5 * sx, {Bath::drude_lorentz(sz, {0.1, 0.5, 2.0, 1})});
  heom::Solver<E> automatic(E(), model, 5, options(heom::Method::automatic, 1e-6, 1e-8));
  heom::Solver<E> adams(E(), model, 5, options(heom::Method::exp_adams, 1e-6, 1e-8));
  EXPECT_EQ(state_at(automatic, 200.0), state_at(adams, 200.0));
  EXPECT_EQ(automatic.method_taken(), "automatic: exp-adams");
  EXPECT_EQ(automatic.statistics().steps, adams.statistics().steps);
  EXPECT_EQ(automatic.statistics().rhs_evaluations,
            adams.statistics().rhs_evaluations + heom::FaberPropagator<E>::arnoldi_steps);
  // A driven model: exp-adams throughout, without a hull.
  Model driven = qubit_without_matsubara_terms();
  driven.add_drive(sx, heom::DriveShape::cosine(0.1, 1.0));
  heom::Solver<E> driven_automatic(E(), driven, 4, options(heom::Method::automatic, 1e-8, 1e-10));
  heom::Solver<E> driven_adams(E(), driven, 4, options(heom::Method::exp_adams, 1e-8, 1e-10));
  EXPECT_EQ(state_at(driven_automatic, 100.0), state_at(driven_adams, 100.0));
  EXPECT_EQ(driven_automatic.statistics().rhs_evaluations, driven_adams.statistics().rhs_evaluations);
  EXPECT_EQ(driven_automatic.method_taken(), "automatic: exp-adams");
}

// A new initial state starts the choice again from exp-adams: a solver run twice gives a fresh
// one's bits the second time (Python's devices > 1 build a fresh solver per run, 1 device does not).
TYPED_TEST(IntegratorTest, AutomaticChoosesAnewForANewInitialState) {
  using E = TypeParam;
  const Model model = qubit_without_matsubara_terms();
  heom::Solver<E> twice(E(), model, 4, options(heom::Method::automatic, 1e-8, 1e-10));
  heom::Solver<E> fresh(E(), model, 4, options(heom::Method::automatic, 1e-8, 1e-10));
  const auto first = state_at(twice, 100.0);
  EXPECT_EQ(twice.method_taken().rfind("automatic: chebyshev from t = ", 0), 0u) << twice.method_taken();
  const heom::IntegratorStatistics after_first = twice.statistics();
  EXPECT_EQ(state_at(twice, 100.0), state_at(fresh, 100.0));
  EXPECT_EQ(twice.method_taken(), fresh.method_taken());
  EXPECT_EQ(twice.statistics().rhs_evaluations - after_first.rhs_evaluations, fresh.statistics().rhs_evaluations);
  EXPECT_EQ(first, state_at(fresh, 100.0));
}

// A state saved (or copied) before exp-adams' steps settle, and after the series took over, steps on
// bit for bit as the one it came from.
TYPED_TEST(IntegratorTest, AutomaticResumesAndCopiesAcrossTheHandOver) {
  using E = TypeParam;
  const heom::Propagator<E> propagator(E(), qubit_without_matsubara_terms(), 4,
                                       options(heom::Method::automatic, 1e-8, 1e-10));
  heom::HierarchyState<E> state = propagator.make_state();
  state.set_rho(ground);
  std::vector<heom::SolverState> saved;
  std::vector<heom::HierarchyState<E>> copies;
  for (int step = 1; (state.method() == heom::Method::exp_adams || saved.size() < 4) && step < 2000; ++step) {
    propagator.step(state, 1e9);
    if (step == 20 || step == 40 || state.method() == heom::Method::chebyshev) {
      saved.push_back(state.save());
      copies.push_back(state);
    }
  }
  EXPECT_EQ(saved.front().integrator.method, heom::Method::exp_adams);
  EXPECT_EQ(saved.back().integrator.method, heom::Method::chebyshev);
  const double t = state.time() + 50.0;
  propagator.run_until(state, t);
  for (std::size_t i = 0; i < saved.size(); ++i) {
    heom::HierarchyState<E> loaded = propagator.make_state();
    loaded.load(saved[i]);
    propagator.run_until(loaded, t);
    propagator.run_until(copies[i], t);
    EXPECT_EQ(host_vector(loaded), host_vector(state)) << "saved state " << i;
    EXPECT_EQ(host_vector(copies[i]), host_vector(state)) << "copy " << i;
    EXPECT_EQ(loaded.method_taken(), state.method_taken());
    EXPECT_EQ(loaded.statistics().rhs_evaluations, state.statistics().rhs_evaluations);
  }
}

}  // namespace
