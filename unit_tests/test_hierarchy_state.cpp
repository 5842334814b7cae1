// A hierarchy state apart from its propagator: copies that step on to the same bits, branches by an
// operator that share one propagator (each with its own generator form), sums of states, the memory a
// further state needs, and states saved by one propagator and loaded by another of the same run.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "test_support.hpp"

namespace {

using heom::Bath;
using heom::complex;
using heom::Matrix;
using heom::Model;

template <class E>
class HierarchyStateTest : public ::testing::Test {};
TYPED_TEST_SUITE(HierarchyStateTest, heom::testing::Backends);

/// Three levels with site baths (a model that keeps ADOs Hermitian: Hermitian states run the
/// generator's Hermitian form where the backend has one).
Model three_levels() {
  using heom::operators::projector;
  const Matrix h{{0.0, 0.3, 0.05}, {0.3, 0.4, 0.2}, {0.05, 0.2, 0.9}};
  Model model(h);
  for (int i = 0; i < 3; ++i) model.add_bath(Bath::drude_lorentz(projector(3, i, i), {0.05, 0.5, 0.5, 1}));
  return model;
}

/// Every element of this device's ADOs, on the host.
template <class E>
std::vector<heom::device_complex> host_ados(const heom::HierarchyState<E>& state) {
  const auto ados = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), state.ados());
  return std::vector<heom::device_complex>(ados.data(), ados.data() + ados.size());
}

template <class E>
bool same_bits(const heom::HierarchyState<E>& a, const heom::HierarchyState<E>& b) {
  const auto x = host_ados(a), y = host_ados(b);
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(heom::device_complex)) == 0;
}

const Matrix rho0{{1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};

TYPED_TEST(HierarchyStateTest, ACopyStepsOnAsTheOriginalWould) {
  using E = TypeParam;
  for (const heom::Method method : {heom::Method::exp_adams, heom::Method::dopri5}) {
    SCOPED_TRACE(heom::to_string(method));
    heom::SolverOptions options;
    options.integrator.method = method;
    const heom::Propagator<E> propagator(E(), three_levels(), 3, options);
    heom::HierarchyState<E> state = propagator.make_state();
    state.set_rho(rho0);
    for (int s = 0; s < 12; ++s) propagator.step(state);
    heom::HierarchyState<E> copy = state;
    EXPECT_EQ(copy.time(), state.time());
    EXPECT_EQ(copy.hermitian(), state.hermitian());
    EXPECT_TRUE(same_bits(copy, state));
    for (int s = 0; s < 12; ++s) {
      propagator.step(state);
      propagator.step(copy);
    }
    EXPECT_EQ(copy.time(), state.time());
    EXPECT_EQ(copy.statistics().steps, state.statistics().steps);
    EXPECT_TRUE(same_bits(copy, state)) << "the copy's history gave other steps";
  }
}

TYPED_TEST(HierarchyStateTest, BranchesShareAPropagatorEachInItsOwnForm) {
  // <A(t) B(0)>: B x is not Hermitian, the state it branched from is; one propagator steps both, each
  // with its own generator form, and the branch gives the bits a Solver of its own gives.
  using E = TypeParam;
  const Model model = three_levels();
  const heom::Propagator<E> propagator(E(), model, 3);
  heom::HierarchyState<E> state = propagator.make_state();
  state.set_rho(rho0);
  propagator.run_until(state, 2.0);
  const Matrix b{{0.0, 1.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};
  const heom::HierarchyState<E> at_two = state;
  heom::HierarchyState<E> branch = state.with_operator(b, heom::Side::left);
  EXPECT_TRUE(state.hermitian());
  EXPECT_FALSE(branch.hermitian());
  EXPECT_EQ(branch.time(), state.time());
  EXPECT_FALSE(heom::is_hermitian_form(branch.kernel()));
  if (heom::BackendTraits<E>::host_shape) {
    EXPECT_EQ(state.kernel(), heom::GeneratorKernel::hermitian);
  }
  propagator.run_until(branch, 4.0);
  propagator.run_until(state, 4.0);

  // (A fresh solver given the ADOs at t = 2, as a correlation function of the state at t = 2 starts.)
  heom::Solver<E> alone(E(), model, 3);
  alone.set_initial_ados(at_two.ados(), 2.0);
  alone.apply_operator(b, heom::Side::left);
  alone.run_until(4.0);
  EXPECT_TRUE(same_bits(alone.state(), branch));
  // The state it branched from went on as if alone.
  heom::Solver<E> unbranched(E(), model, 3);
  unbranched.set_initial_state(rho0);
  unbranched.run_until(2.0);
  unbranched.run_until(4.0);
  EXPECT_TRUE(same_bits(unbranched.state(), state));
}

TYPED_TEST(HierarchyStateTest, AddSumsEveryAdo) {
  using E = TypeParam;
  const heom::Propagator<E> propagator(E(), three_levels(), 2);
  heom::HierarchyState<E> x = propagator.make_state(), y = propagator.make_state();
  x.set_rho(rho0);
  y.set_rho(Matrix{{0.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 0.0}});
  propagator.run_until(x, 1.0);
  propagator.run_until(y, 1.0);
  const auto before = host_ados(x), other = host_ados(y);
  x.add(complex(2.0, -1.0), y);
  const auto after = host_ados(x);
  double worst = 0.0;
  for (std::size_t i = 0; i < after.size(); ++i)
    worst = std::max(worst, Kokkos::abs(after[i] - (before[i] + heom::device_complex(2.0, -1.0) * other[i])));
  EXPECT_LE(worst, 1e-15);
  EXPECT_FALSE(x.hermitian());  // ((2 - i) y is not Hermitian)
  heom::HierarchyState<E> later = propagator.make_state();
  later.set_rho(rho0, 3.0);
  EXPECT_THROW(x.add(1.0, later), heom::Error);  // (another time)
  const heom::Propagator<E> other_propagator(E(), three_levels(), 2);
  heom::HierarchyState<E> foreign = other_propagator.make_state();
  EXPECT_THROW(x.add(1.0, foreign), heom::Error);
}

TYPED_TEST(HierarchyStateTest, AFurtherStateNeedsItsOwnMemory) {
  using E = TypeParam;
  heom::SolverOptions options;
  options.memory_limit = heom::MemoryPlan::make(3, 6, 3, heom::state_vectors(heom::Method::exp_adams)).bytes_total;
  const heom::Propagator<E> propagator(E(), three_levels(), 3, options);
  heom::HierarchyState<E> state = propagator.make_state();  // (the plan's)
  try {
    heom::HierarchyState<E> another = propagator.make_state();
    FAIL() << "a second state beyond the memory limit was made";
  } catch (const heom::OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("another hierarchy state needs"), std::string::npos) << e.what();
  }
  EXPECT_THROW(heom::HierarchyState<E>{state}, heom::OutOfMemoryError);
}

TYPED_TEST(HierarchyStateTest, AStateSavedByOnePropagatorContinuesOnAnother) {
  using E = TypeParam;
  const heom::Propagator<E> first(E(), three_levels(), 3), second(E(), three_levels(), 3);
  heom::HierarchyState<E> state = first.make_state();
  state.set_rho(rho0);
  for (int s = 0; s < 9; ++s) first.step(state);
  const heom::SolverState saved = state.save();
  heom::HierarchyState<E> loaded = second.make_state();
  loaded.load(saved);
  EXPECT_EQ(loaded.hermitian(), state.hermitian());
  first.run_until(state, 3.0);
  second.run_until(loaded, 3.0);
  EXPECT_TRUE(same_bits(loaded, state));
  // Another model's propagator refuses it, naming what differs.
  const heom::Propagator<E> other(E(), three_levels().with_hamiltonian(Matrix::identity(3)), 3);
  heom::HierarchyState<E> refused = other.make_state();
  EXPECT_THROW(refused.load(saved), heom::StateMismatchError);
}

}  // namespace
