// Google Benchmark: the matrix-free generator beside the assembled CRS operator and a STREAM triad
// measured in the same binary, on the default execution space.
//
//   heom_bench_generator --benchmark_out=generator.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <memory>

#include "heom/heom.hpp"

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Vector = heom::Generator<Exec>::vector_type;

/// Spin-boson as in QuTiP's guide with Nk Matsubara terms (K = Nk + 1 exponents).
heom::Model spin_boson(int nk) {
  const heom::Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  return heom::Model(0.25 * sz + 0.5 * sx, {heom::Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, nk})});
}

/// FMO (Ishizaki-Fleming 2009) in rad/fs: seven site-local Drude-Lorentz baths, Nk = 1 (K = 14).
heom::Model fmo() {
  const double cm = 2 * M_PI * 2.99792458e-5;
  const double h[7][7] = {{200, -87.7, 5.5, -5.9, 6.7, -13.7, -9.9}, {-87.7, 320, 30.8, 8.2, 0.7, 11.8, 4.3},
                          {5.5, 30.8, 0, -53.5, -2.2, -9.6, 6.0},    {-5.9, 8.2, -53.5, 110, -70.7, -17.0, -63.3},
                          {6.7, 0.7, -2.2, -70.7, 270, 81.1, -1.3},  {-13.7, 11.8, -9.6, -17.0, 81.1, 420, 39.7},
                          {-9.9, 4.3, 6.0, -63.3, -1.3, 39.7, 230}};
  heom::Matrix H(7, 7);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j) H(i, j) = h[i][j] * cm;
  heom::Model model(H);
  for (int j = 0; j < 7; ++j)
    model.add_bath(
        heom::Bath::drude_lorentz(heom::operators::projector(7, j, j), {35 * cm, 0.02, 77 * 0.6950348 * cm, 1}));
  return model;
}

heom::Model model_for(int which) { return which == 0 ? spin_boson(5) : fmo(); }

Vector random_state(std::int64_t size) {
  Vector v(Kokkos::view_alloc(Kokkos::WithoutInitializing, "heom::bench::x"), size);
  Kokkos::parallel_for(
      "heom::bench::fill", Kokkos::RangePolicy<Exec>(0, size), KOKKOS_LAMBDA(std::int64_t i) {
        v(i) = heom::device_complex(1e-3 * static_cast<double>(i % 97), -1e-3 * static_cast<double>(i % 89));
      });
  Kokkos::fence();
  return v;
}

/// Compulsory traffic of one application: read and write every ADO once, 2 x 16 n^2 bytes.
void set_counters(benchmark::State& state, int n, int num_ados) {
  const double per_call_bytes = 32.0 * n * n * num_ados;
  state.counters["ADOs"] = num_ados;
  state.counters["ADOs/s"] =
      benchmark::Counter(static_cast<double>(num_ados), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes/s"] =
      benchmark::Counter(per_call_bytes, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
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

void BM_MatrixFree(benchmark::State& state) {
  const heom::Model model = model_for(static_cast<int>(state.range(0)));
  const heom::Hierarchy hierarchy(model.num_exponents(), static_cast<int>(state.range(1)));
  const heom::Generator<Exec> generator(Exec(), model, hierarchy);
  const Vector x = random_state(generator.vector_size());
  const Vector y("heom::bench::y", generator.vector_size());
  time_loop(state, [&](const Exec& exec) { generator.apply(exec, x, y); });
  set_counters(state, model.dimension(), hierarchy.size());
}

void BM_AssembledCrs(benchmark::State& state) {
  const heom::Model model = model_for(static_cast<int>(state.range(0)));
  const heom::Hierarchy hierarchy(model.num_exponents(), static_cast<int>(state.range(1)));
  const heom::AssembledOperator<Exec> op(Exec(), model, hierarchy);
  const Vector x = random_state(op.num_rows());
  const Vector y("heom::bench::y", op.num_rows());
  time_loop(state, [&](const Exec& exec) { op.apply(exec, x, y); });
  set_counters(state, model.dimension(), hierarchy.size());
  state.counters["nnz"] = static_cast<double>(op.num_nonzeros());
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

// Model 0: spin-boson, 6 exponents (depth 10: 8,008 ADOs); model 1: FMO, 14 exponents.
BENCHMARK(BM_MatrixFree)
    ->ArgNames({"model", "depth"})
    ->Args({0, 6})
    ->Args({0, 10})
    ->Args({1, 3})
    ->Args({1, 4})
    ->Args({1, 5})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AssembledCrs)
    ->ArgNames({"model", "depth"})
    ->Args({0, 6})
    ->Args({0, 10})
    ->Args({1, 3})
    ->Args({1, 4})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StreamTriad)->Arg(11628 * 49 * 2)->UseManualTime()->Unit(benchmark::kMillisecond);

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
