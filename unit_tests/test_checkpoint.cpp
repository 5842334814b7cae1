// Saved solver states (Solver::save_state, Solver::load_state): a run stopped at any step and
// continued in a new Solver gives the bits of an uninterrupted run, for every integrator, the
// Hermitian form and observed output times (a hierarchy split between devices: multi_device_suite.hpp);
// a state from another model, depth, method, tolerance or share is refused naming what differs.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "distributed_cases.hpp"

namespace {

namespace ht = heom::testing;
using heom::GeneratorKernel;
using heom::Matrix;
using heom::Method;
using heom::SolverState;
using Exec = Kokkos::DefaultHostExecutionSpace;

const Method all_methods[] = {Method::exp_adams, Method::dopri5, Method::rk4, Method::lsrk4};

/// rho at each of `times`, flattened.
struct Observed {
  std::vector<double> times;
  std::vector<heom::complex> rho;
};

/// Runs `c` through `times`, saving the state after step `stop_after` (when given).
Observed run_through(heom::Solver<Exec>& solver, const std::vector<double>& times, long long stop_after = -1,
                     SolverState* saved = nullptr) {
  Observed out;
  long long steps = 0;
  solver.run(
      times,
      [&](const heom::Snapshot<Exec>& s) {
        out.times.push_back(s.time);
        const Matrix rho = s.rho();
        out.rho.insert(out.rho.end(), rho.data(), rho.data() + rho.rows() * rho.cols());
      },
      [&](double) {
        if (++steps == stop_after) *saved = solver.save_state();
      });
  return out;
}

bool same_bits(const std::vector<heom::complex>& a, const std::vector<heom::complex>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(heom::complex) * a.size()) == 0;
}

std::vector<double> output_times() {
  std::vector<double> times;
  for (int i = 0; i <= 40; ++i) times.push_back(0.05 * i);
  return times;
}

TEST(Checkpoint, EveryMethodContinuesBitForBit) {
  // (The fourth case has two fermionic leads and a phonon bath; the last is driven: the drive resumes
  // at the saved time, across a breakpoint too.)
  const std::vector<ht::Case> all = ht::cases();
  const auto leads =
      std::find_if(all.begin(), all.end(), [](const ht::Case& c) { return c.model.has_fermionic_bath(); });
  ASSERT_NE(leads, all.end());
  for (const ht::Case& c : {all[0], all[1], all[2], *leads, all.back()})
    for (Method method : all_methods) {
      SCOPED_TRACE(std::string(c.name) + ", " + heom::to_string(method));
      const heom::SolverOptions options = ht::options(method, GeneratorKernel::automatic);
      const std::vector<double> times = output_times();
      heom::Solver<Exec> whole(Exec(), c.model, c.depth, options);
      whole.set_initial_state(c.rho0);
      SolverState saved;
      const Observed uninterrupted = run_through(whole, times, 7, &saved);
      ASSERT_GT(whole.statistics().steps, 10);
      ASSERT_FALSE(saved.integrator.vectors.empty());
      EXPECT_EQ(saved.integrator.statistics.steps, 7);

      // A new solver continues from the saved state through the output times still ahead.
      heom::Solver<Exec> continued(Exec(), c.model, c.depth, options);
      continued.load_state(saved);
      EXPECT_EQ(continued.time(), saved.integrator.time);
      EXPECT_EQ(continued.kernel(), whole.kernel());
      std::vector<double> rest;
      for (double t : times)
        if (t > saved.integrator.time) rest.push_back(t);
      const Observed tail = run_through(continued, rest);
      const std::size_t skipped = times.size() - rest.size();
      const std::size_t n2 = static_cast<std::size_t>(c.model.dimension()) * c.model.dimension();
      EXPECT_TRUE(same_bits(
          tail.rho, std::vector<heom::complex>(uninterrupted.rho.begin() + skipped * n2, uninterrupted.rho.end())));
      EXPECT_TRUE(same_bits(ht::host_copy(continued.ados()), ht::host_copy(whole.ados())));
      EXPECT_EQ(continued.statistics().steps, whole.statistics().steps);
      EXPECT_EQ(continued.statistics().rejected, whole.statistics().rejected);
      EXPECT_EQ(continued.statistics().rhs_evaluations, whole.statistics().rhs_evaluations);
    }
}

TEST(Checkpoint, AStateOfAnotherDriveIsRefused) {
  const ht::Case c = ht::cases().back();  // spin-boson, driven
  ASSERT_TRUE(c.model.is_driven());
  const heom::SolverOptions options = ht::options(Method::exp_adams, GeneratorKernel::automatic);
  heom::Solver<Exec> solver(Exec(), c.model, c.depth, options);
  solver.set_initial_state(c.rho0);
  solver.run_until(0.3);
  const SolverState saved = solver.save_state();
  heom::Model other = ht::spin_boson();
  other.add_drive(heom::operators::sigma_x(), heom::DriveShape::cosine(0.3, 1.1, 0.5000001));
  other.add_drive(heom::operators::sigma_z(), heom::DriveShape::constant(0.2, 0.7, 1.5));
  heom::Solver<Exec> different(Exec(), other, c.depth, options);
  try {
    different.load_state(saved);
    ADD_FAILURE() << "a state of another drive was accepted";
  } catch (const heom::StateMismatchError& e) {
    EXPECT_NE(std::string(e.what()).find("hamiltonian"), std::string::npos) << e.what();
  }
  heom::Solver<Exec> same(Exec(), c.model, c.depth, options);
  EXPECT_NO_THROW(same.load_state(saved));
}

TEST(Checkpoint, SavingDoesNotDisturbTheRun) {
  const ht::Case c = ht::cases()[2];
  const heom::SolverOptions options = ht::options(Method::exp_adams, GeneratorKernel::automatic);
  heom::Solver<Exec> plain(Exec(), c.model, c.depth, options), saving(Exec(), c.model, c.depth, options);
  plain.set_initial_state(c.rho0);
  saving.set_initial_state(c.rho0);
  plain.run_until(2.0);
  saving.run(output_times(), {}, [&](double) { (void)saving.save_state(); });
  EXPECT_TRUE(same_bits(ht::host_copy(plain.ados()), ht::host_copy(saving.ados())));
}

TEST(Checkpoint, ATruncatedHierarchyContinuesBitForBitAndOnlyAtItsThreshold) {
  const ht::Case c = ht::cases()[0];
  heom::SolverOptions options = ht::options(Method::exp_adams, GeneratorKernel::automatic);
  options.importance_threshold = 1e-4;
  heom::Solver<Exec> whole(Exec(), c.model, c.depth, options);
  ASSERT_TRUE(whole.hierarchy().truncated());
  whole.set_initial_state(c.rho0);
  SolverState saved;
  const Observed uninterrupted = run_through(whole, output_times(), 7, &saved);
  heom::Solver<Exec> continued(Exec(), c.model, c.depth, options);
  continued.load_state(saved);
  std::vector<double> rest;
  for (double t : output_times())
    if (t > saved.integrator.time) rest.push_back(t);
  run_through(continued, rest);
  EXPECT_TRUE(same_bits(ht::host_copy(continued.ados()), ht::host_copy(whole.ados())));

  auto refusal = [&](double threshold) {
    heom::SolverOptions other = options;
    other.importance_threshold = threshold;
    heom::Solver<Exec> solver(Exec(), c.model, c.depth, other);
    try {
      solver.load_state(saved);
    } catch (const heom::StateMismatchError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal(0.0), "the saved state was written for importance_threshold 0.0001, not the default");
  EXPECT_EQ(refusal(1e-3).find("the saved state was written for importance_threshold"), 0u);
  // And a whole hierarchy's state into a truncated one.
  heom::Solver<Exec> untruncated(Exec(), c.model, c.depth, ht::options(Method::exp_adams, GeneratorKernel::automatic));
  untruncated.set_initial_state(c.rho0);
  untruncated.run_until(0.5);
  EXPECT_THROW(whole.load_state(untruncated.save_state()), heom::StateMismatchError);
}

TEST(Checkpoint, AStateFromAnotherRunIsRefusedNamingWhatDiffers) {
  const ht::Case c = ht::cases()[0];
  const heom::SolverOptions options = ht::options(Method::exp_adams, GeneratorKernel::automatic);
  heom::Solver<Exec> solver(Exec(), c.model, c.depth, options);
  solver.set_initial_state(c.rho0);
  solver.run_until(0.5);
  const SolverState saved = solver.save_state();

  auto refusal = [&](const heom::Model& model, int depth, const heom::SolverOptions& o) {
    heom::Solver<Exec> other(Exec(), model, depth, o);
    try {
      other.load_state(saved);
    } catch (const heom::StateMismatchError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal(c.model, c.depth - 1, options), "the saved state was written for depth 10, not 9");
  heom::SolverOptions other = options;
  other.integrator.rtol = 1e-6;
  EXPECT_EQ(refusal(c.model, c.depth, other), "the saved state was written for rtol 1e-07, not 1e-06");
  EXPECT_NE(refusal(c.model, c.depth, ht::options(Method::dopri5, GeneratorKernel::automatic)).find("method exp-adams"),
            std::string::npos);
  const Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  const heom::Model shifted(0.25 * sz + 0.5000001 * sx, c.model.baths());
  EXPECT_EQ(refusal(shifted, c.depth, options), "the saved state was written for a different hamiltonian");
  const heom::Model weaker(c.model.hamiltonian(), {heom::Bath::drude_lorentz(sz, {0.1, 0.5, 0.49, 2})});
  EXPECT_EQ(refusal(weaker, c.depth, options), "the saved state was written for a different baths");
  heom::Model with_decay = c.model;  // (Lindblad terms belong to the environment)
  with_decay.add_lindblad(Matrix{{0.0, 0.0}, {1.0, 0.0}}, 1e-9);
  EXPECT_EQ(refusal(with_decay, c.depth, options), "the saved state was written for a different baths");

  // A damaged state: a vector of the wrong size, a missing history value.
  SolverState truncated = saved;
  truncated.integrator.vectors["y"].pop_back();
  heom::Solver<Exec> fresh(Exec(), c.model, c.depth, options);
  EXPECT_THROW(fresh.load_state(truncated), heom::Error);
  SolverState incomplete = saved;
  incomplete.integrator.scalars.erase("h");
  EXPECT_THROW(fresh.load_state(incomplete), heom::Error);
}

/// Keeps the vectors it is given, and how many times each was read back.
struct CountingStore : heom::VectorStore {
  std::map<std::string, std::vector<heom::complex>> kept;
  mutable std::map<std::string, int> reads;
  void put(const std::string& name, std::vector<heom::complex>&& elements) override {
    kept[name] = std::move(elements);
  }
  void require(const std::string& name, std::size_t size) const override {
    if (!kept.count(name) || kept.at(name).size() != size) throw heom::Error("no " + name);
  }
  std::vector<heom::complex> get(const std::string& name) const override {
    ++reads[name];
    return kept.at(name);
  }
};

// A checkpoint file takes the vectors one at a time: the state itself then holds none.
TEST(Checkpoint, AStoreTakesTheVectorsOneAtATime) {
  const ht::Case c = ht::cases()[2];
  for (Method method : {Method::exp_adams, Method::dopri5}) {
    SCOPED_TRACE(heom::to_string(method));
    const heom::SolverOptions options = ht::options(method, GeneratorKernel::automatic);
    heom::Solver<Exec> whole(Exec(), c.model, c.depth, options), first(Exec(), c.model, c.depth, options);
    whole.set_initial_state(c.rho0);
    first.set_initial_state(c.rho0);
    whole.run_until(0.5);
    whole.run_until(2.0);
    first.run_until(0.5);
    CountingStore store;
    const SolverState saved = first.save_state(&store);
    EXPECT_TRUE(saved.integrator.vectors.empty());
    EXPECT_GE(store.kept.size(), method == Method::exp_adams ? 6u : 8u);  // y, y_previous, the history
    heom::Solver<Exec> continued(Exec(), c.model, c.depth, options);
    EXPECT_THROW(continued.load_state(saved), heom::Error) << "the state alone has no vectors";
    continued.load_state(saved, &store);
    for (const auto& [name, count] : store.reads) EXPECT_EQ(count, 1) << name << " read more than once";
    EXPECT_EQ(store.reads.size(), store.kept.size());
    continued.run_until(2.0);
    EXPECT_TRUE(same_bits(ht::host_copy(continued.ados()), ht::host_copy(whole.ados())));
  }
}

}  // namespace
