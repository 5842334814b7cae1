// Google Benchmark: the HEOM generator (matrix-free, and the assembled CRS operator beside it), one
// integrator step and whole runs, next to a STREAM triad and a peak-FLOP loop measured in the same
// binary, on the default execution space.
//
//   heom_bench_generator --benchmark_out=results.json --benchmark_out_format=json
//   python3 perf_tests/plot.py results.json results.png
#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench_models.hpp"
#include "heom/generator/assembled_operator.hpp"
#include "heom/heom.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Vector = heom::Generator<Exec>::vector_type;

/// Model 0: spin-boson, 6 exponents (depth 10: 8,008 ADOs); model 1: FMO, 14 exponents; model 2:
/// FMO with Lindblad dephasing and transfers; model 3: FMO with two drives; model 4: QuTiP's
/// single-impurity tutorial (44 fermionic exponents); model 5: a spinful Anderson impurity (n = 4,
/// 40 fermionic exponents) (bench_models.hpp).
heom::Model model_for(int which) {
  switch (which) {
    case 0:
      return heom::bench::spin_boson(5);
    case 1:
      return heom::bench::fmo();
    case 2:
      return heom::bench::fmo_lindblad();
    case 3:
      return heom::bench::fmo_driven();
    case 4:
      return heom::bench::siam();
    case 5:
      return heom::bench::spinful_anderson();
    default:
      return heom::bench::fmo_manifolds();
  }
}
const char* model_name(int which) {
  const char* names[] = {
      "spin-boson", "FMO", "FMO + Lindblad", "FMO + drives", "SIAM", "spinful Anderson", "FMO manifolds (29 levels)"};
  return names[which];
}

Vector filled_state(std::int64_t size) {
  Vector v(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("heom::bench::x")), size);
  Kokkos::parallel_for(
      "heom::bench::fill", Kokkos::RangePolicy<Exec>(0, size), KOKKOS_LAMBDA(std::int64_t i) {
        v(i) = heom::device_complex(1e-3 * static_cast<double>(i % 97), -1e-3 * static_cast<double>(i % 89));
      });
  Kokkos::fence();
  return v;
}

/// Hermitian ADO blocks (what a density matrix's hierarchy holds), filled in parallel.
Vector hermitian_state(std::int64_t size, int n) {
  Vector v(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("heom::bench::x")), size);
  Kokkos::parallel_for(
      "heom::bench::fill_hermitian", Kokkos::RangePolicy<Exec>(0, size), KOKKOS_LAMBDA(std::int64_t i) {
        const std::int64_t ado = i / (n * n);
        const int row = static_cast<int>(i % (n * n)) / n, col = static_cast<int>(i % n);
        v(i) = heom::device_complex(1e-3 * static_cast<double>((ado + row + col) % 97), 1e-3 * (row - col));
      });
  Kokkos::fence();
  return v;
}

/// Floating-point operations of one application, counted from the formula (not the code): the
/// commutator with H, 2 n^3 complex multiply-adds (16 n^3 flops), and per link to a neighbour one
/// complex multiply-add (8 flops) for each element a bath's coupling operator touches.
double model_flops(const heom::Model& model, const heom::Hierarchy& hierarchy) {
  const double n = model.dimension();
  double per_link_total = 0.0;
  int k = 0;
  for (const heom::Bath& bath : model.baths()) {
    const heom::Matrix& q = bath.coupling();
    double touched = n * n;  // a dense Q touches every element (twice: Q X and X Q, counted once)
    if (q.is_diagonal()) {
      touched = 0;
      for (int i = 0; i < q.rows(); ++i)
        for (int j = 0; j < q.cols(); ++j)
          if (q(i, i) != q(j, j) || q(i, i) + q(j, j) != heom::complex(0.0)) ++touched;
    }
    for (int e = 0; e < bath.num_exponents(); ++e, ++k) {
      double links = 0.0;
      for (int a = 0; a < hierarchy.size(); ++a) links += (hierarchy.next(a, k) >= 0) + (hierarchy.prev(a, k) >= 0);
      per_link_total += 8.0 * touched * links;
    }
  }
  return 16.0 * n * n * n * hierarchy.size() + per_link_total;
}

/// Compulsory traffic of one application: read and write every ADO once, 2 x 16 n^2 bytes.
void set_counters(benchmark::State& state, const heom::Model& model, const heom::Hierarchy& hierarchy) {
  const double n = model.dimension();
  state.counters["ADOs"] = hierarchy.size();
  state.counters["ADOs/s"] =
      benchmark::Counter(static_cast<double>(hierarchy.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/s"] = benchmark::Counter(
      32.0 * n * n * hierarchy.size(), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
  state.counters["FLOP/s"] =
      benchmark::Counter(model_flops(model, hierarchy), benchmark::Counter::kIsIterationInvariantRate);
}

template <class Apply>
void time_loop(benchmark::State& state, Apply apply) {
  const Exec exec;
  apply(exec);  // warm up (first touch, caches)
  exec.fence();
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    apply(exec);
    exec.fence();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
}

/// kernel: a heom::GeneratorKernel (0 automatic, 1 portable, 2 host-block, 3 hermitian, 4 two-level,
/// 6 portable-hermitian); the Hermitian forms get Hermitian ADOs, as the solver gives them for these
/// models.
void BM_MatrixFree(benchmark::State& state) {
  const heom::Model model = model_for(static_cast<int>(state.range(0)));
  const heom::Hierarchy hierarchy(model.max_excitations(), static_cast<int>(state.range(1)));
  const auto kernel = static_cast<heom::GeneratorKernel>(state.range(2));
  if (!heom::Generator<Exec>::can_run(kernel, model.dimension(), true)) {
    state.SkipWithError("this kernel does not run here");
    return;
  }
  const heom::Generator<Exec> generator(Exec(), model, hierarchy, {kernel});
  const bool hermitian = heom::is_hermitian_form(kernel);
  const heom::InputForm form = hermitian ? heom::InputForm::hermitian : heom::InputForm::general;
  const Vector x =
      hermitian ? hermitian_state(generator.vector_size(), model.dimension()) : filled_state(generator.vector_size());
  const Vector y("heom::bench::y", generator.vector_size());
  time_loop(state,
            [&](const Exec& exec) { generator.apply(exec, x, y, heom::Generator<Exec>::Damping::included, form); });
  set_counters(state, model, hierarchy);
  state.SetLabel(std::string(model_name(static_cast<int>(state.range(0)))) + " " +
                 heom::to_string(generator.kernel(form)));
}

/// What a driven model's generator pays per stage beyond its application: H(t) evaluated and the
/// system tables rewritten and copied to the device (Generator::at_time at a new time).
void BM_DriveUpdate(benchmark::State& state) {
  const heom::Model model = model_for(static_cast<int>(state.range(0)));
  const heom::Hierarchy hierarchy(model.max_excitations(), static_cast<int>(state.range(1)));
  const heom::Generator<Exec> generator(Exec(), model, hierarchy);
  double t = 0.0;
  time_loop(state, [&](const Exec& exec) { generator.at_time(exec, t += 0.37); });
  state.SetLabel(model_name(static_cast<int>(state.range(0))));
}

void BM_AssembledCrs(benchmark::State& state) {
  const heom::Model model = model_for(static_cast<int>(state.range(0)));
  const heom::Hierarchy hierarchy(model.max_excitations(), static_cast<int>(state.range(1)));
  const heom::AssembledOperator<Exec> op(Exec(), model, hierarchy);
  const Vector x = filled_state(op.num_rows());
  const Vector y("heom::bench::y", op.num_rows());
  time_loop(state, [&](const Exec& exec) { op.apply(exec, x, y); });
  set_counters(state, model, hierarchy);
  state.counters["nnz"] = static_cast<double>(op.num_nonzeros());
  state.SetLabel(model_name(static_cast<int>(state.range(0))));
}

/// Method 0: exp-adams, 1: dopri5 (both at rtol 1e-8 / atol 1e-10), 2: lsrk4 (fixed step: 0.02 for
/// spin-boson, 1 fs for FMO).
heom::SolverOptions method_options(int method, int which) {
  heom::SolverOptions o;
  const heom::Method methods[] = {heom::Method::exp_adams, heom::Method::dopri5, heom::Method::lsrk4};
  o.integrator.method = methods[method];
  if (method == 2) o.integrator.step = which == 0 ? 0.02 : 1.0;
  return o;
}

heom::Matrix initial_rho(const heom::Model& model) {
  heom::Matrix rho0(model.dimension(), model.dimension());
  rho0(0, 0) = 1.0;
  return rho0;
}

/// One accepted step of a method (its generator applications and vector updates).
void BM_Step(benchmark::State& state) {
  const int which = static_cast<int>(state.range(0));
  const heom::Model model = model_for(which);
  const heom::SolverOptions options = method_options(static_cast<int>(state.range(2)), which);
  heom::Solver<Exec> solver(Exec(), model, static_cast<int>(state.range(1)), options);
  solver.set_initial_state(initial_rho(model));
  for (int i = 0; i < 20; ++i) solver.step();  // past the start-up steps
  const auto evaluations = solver.statistics().rhs_evaluations;
  const auto steps = solver.statistics().steps;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    solver.step();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  state.counters["RHS/step"] = static_cast<double>(solver.statistics().rhs_evaluations - evaluations) /
                               static_cast<double>(solver.statistics().steps - steps);
  state.counters["ADOs"] = solver.hierarchy().size();
  state.counters["vectors"] = heom::state_vectors(options.integrator.method);
  state.SetLabel(std::string(model_name(which)) + " " + heom::to_string(options.integrator.method));
}

/// A whole run: FMO to 1 ps (depth as given), spin-boson to t = 50.
void BM_WholeRun(benchmark::State& state) {
  const int which = static_cast<int>(state.range(0));
  const heom::Model model = model_for(which);
  const heom::SolverOptions options = method_options(static_cast<int>(state.range(2)), which);
  const double t_end = which == 0 ? 50.0 : 1000.0;
  std::int64_t evaluations = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    heom::Solver<Exec> solver(Exec(), model, static_cast<int>(state.range(1)), options);
    solver.set_initial_state(initial_rho(model));
    solver.run_until(t_end);
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    evaluations = solver.statistics().rhs_evaluations;
  }
  state.counters["RHS"] = static_cast<double>(evaluations);
  state.SetLabel(std::string(model_name(which)) + " " + heom::to_string(options.integrator.method));
}

/// Ensembles: `batch` spin-boson members (Nk = 2, K = 3) at depth 6 (84 ADOs each) that differ in H
/// (Gaussian disorder on its diagonal, sigma 0.1), as one batch.
std::vector<heom::Model> disordered_spin_bosons(int count) {
  const heom::Model base = heom::bench::spin_boson(2);
  std::vector<heom::Model> members;
  for (int r = 0; r < count; ++r)
    members.emplace_back(heom::with_diagonal_disorder(base.hamiltonian(), {0.1, 0.1}, 7, r), base.baths());
  return members;
}

/// One application of a batch's generator (the kernel launch over member x ADO), counted as each
/// member's own: ADOs/s and effective bytes/s over all members.
void BM_BatchedGenerator(benchmark::State& state) {
  const auto members = disordered_spin_bosons(static_cast<int>(state.range(0)));
  const heom::Hierarchy hierarchy(members.front().num_exponents(), 6);
  const heom::Generator<Exec> generator(Exec(), members, hierarchy);
  const Vector x = filled_state(generator.vector_size());
  const Vector y("heom::bench::y", generator.vector_size());
  time_loop(state, [&](const Exec& exec) { generator.apply(exec, x, y); });
  const double ados = static_cast<double>(generator.num_ados());
  state.counters["ADOs/s"] = benchmark::Counter(ados, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/s"] =
      benchmark::Counter(32.0 * 4 * ados, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
  state.SetLabel(std::string("spin-boson depth 6 ") + heom::to_string(generator.kernel()));
}

/// 64 such members run to t = 20 (exp-adams, rtol 1e-8) through heom::run_ensemble, `batch` at a
/// time on one device (batch 1: one by one), or one by one on `devices` devices sharing the threads.
void BM_Ensemble(benchmark::State& state) {
  constexpr int count = 64;
  std::vector<heom::EnsembleMember> members;
  for (heom::Model& m : disordered_spin_bosons(count)) members.push_back({std::move(m), heom::Matrix{{1, 0}, {0, 0}}});
  std::vector<double> times;
  for (int i = 0; i <= 100; ++i) times.push_back(0.2 * i);
  heom::EnsembleOptions options;
  options.depth = 6;
  options.batch = static_cast<int>(state.range(0));
  options.devices = static_cast<int>(state.range(1));
  double steps = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const heom::EnsembleResult result = heom::run_ensemble(Exec(), members, times, options);
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    steps = 0.0;
    for (const auto& m : result.members) steps += static_cast<double>(m.statistics.steps);
  }
  state.counters["members/s"] = benchmark::Counter(count, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["steps/member"] = steps / count;
  state.SetLabel("64 spin-boson members, depth 6");
}

/// a = b + s c on doubles, sized like an FMO depth-5 state: the bandwidth the generator is held to.
void BM_StreamTriad(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Kokkos::View<double*, Exec::memory_space> a("heom::bench::a", n), b("heom::bench::b", n), c("heom::bench::c", n);
  Kokkos::deep_copy(b, 1.0);
  Kokkos::deep_copy(c, 2.0);
  time_loop(state, [&](const Exec& exec) {
    Kokkos::parallel_for(
        "heom::bench::triad", Kokkos::RangePolicy<Exec>(exec, 0, n),
        KOKKOS_LAMBDA(std::int64_t i) { a(i) = b(i) + 3.0 * c(i); });
  });
  state.counters["bytes/s"] = benchmark::Counter(
      24.0 * static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}

/// Independent multiply-add chains in registers, as many lanes as a thread's vector units take: the
/// floating-point peak the generator's FLOP/s is compared with.
void BM_PeakFlops(benchmark::State& state) {
  constexpr int lanes = 64, rounds = 4096;
  const int threads = Exec().concurrency();
  Kokkos::View<double*, Exec::memory_space> sink("heom::bench::sink", threads);
  time_loop(state, [&](const Exec& exec) {
    Kokkos::parallel_for(
        "heom::bench::peak", Kokkos::RangePolicy<Exec>(exec, 0, threads), KOKKOS_LAMBDA(int t) {
          double x[lanes];
          for (int j = 0; j < lanes; ++j) x[j] = 1.0 + 1e-3 * (j + t);
          for (int r = 0; r < rounds; ++r)
            for (int j = 0; j < lanes; ++j) x[j] = x[j] * 0.999999 + 1e-7;
          double s = 0.0;
          for (int j = 0; j < lanes; ++j) s += x[j];
          sink(t) = s;
        });
  });
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * lanes * rounds * threads, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_MatrixFree)
    ->ArgNames({"model", "depth", "kernel"})
    ->ArgsProduct({{0}, {6, 10}, {0}})  // automatic: the two-level kernel on AVX-512 hosts
    ->Args({0, 10, 1})                  // the portable kernel, as a reference
    ->ArgsProduct({{1}, {3, 4, 5}, {2, 3}})
    ->Args({1, 5, 1})
    ->Args({1, 5, 6})                  // the portable Hermitian form (what GPUs run for FMO), as a reference
    ->ArgsProduct({{2}, {5}, {2, 3}})  // what Lindblad terms cost (against model 1)
    ->Args({3, 5, 3})                  // a driven model at one time: the same work as model 1
    ->ArgsProduct({{4}, {2, 3}, {0}})  // fermionic leads (the automatic kernel: host-block)
    ->ArgsProduct({{5}, {2, 3}, {0}})
    ->ArgsProduct({{6}, {3}, {1, 2}})  // a response's 29 levels: the portable and host-block kernels
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DriveUpdate)->ArgNames({"model", "depth"})->Args({3, 5})->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AssembledCrs)
    ->ArgNames({"model", "depth"})
    ->Args({0, 10})
    ->Args({1, 4})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Step)
    ->ArgNames({"model", "depth", "method"})
    ->ArgsProduct({{0}, {10}, {0, 1, 2}})
    ->ArgsProduct({{1}, {5}, {0, 1, 2}})
    ->ArgsProduct({{3}, {5}, {0, 1}})  // what the drives cost per step (against model 1)
    ->ArgsProduct({{4, 5}, {3}, {0}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WholeRun)
    ->ArgNames({"model", "depth", "method"})
    ->ArgsProduct({{0}, {10}, {0, 1}})
    ->ArgsProduct({{1}, {4}, {0, 1}})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_BatchedGenerator)
    ->ArgName("batch")
    ->Arg(1)
    ->Arg(4)
    ->Arg(16)
    ->Arg(64)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Ensemble)
    ->ArgNames({"batch", "devices"})
    ->ArgsProduct({{1, 4, 16, 64}, {1}})
    ->Args({1, 2})
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_StreamTriad)->Arg(11628 * 49 * 2)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PeakFlops)->UseManualTime()->Unit(benchmark::kMillisecond);

/// y = x on doubles in the default execution space's memory, far larger than any cache (two 256 MiB
/// Views; a GPU's L2 holds the triad's 27 MB): the memory bandwidth a GPU's generator is measured
/// against (perf_tests/gpu_check). Bytes counted: one read and one write of each element.
void BM_DeviceCopy(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Kokkos::View<double*, Exec::memory_space> x("heom::bench::copy_x", n), y("heom::bench::copy_y", n);
  Kokkos::deep_copy(x, 1.0);
  time_loop(state, [&](const Exec& exec) {
    Kokkos::parallel_for(
        "heom::bench::copy", Kokkos::RangePolicy<Exec>(exec, 0, n), KOKKOS_LAMBDA(std::int64_t i) { y(i) = x(i); });
  });
  state.counters["bytes/s"] = benchmark::Counter(
      2.0 * 8.0 * static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}
BENCHMARK(BM_DeviceCopy)->Arg(std::int64_t{1} << 25)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("kokkos_execution_space", heom::BackendTraits<Exec>::describe(Exec()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
