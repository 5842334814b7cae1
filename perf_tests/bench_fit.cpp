// Fitting a spectral density's C(t) with exponents (heom::fit_correlation): time to fit, and the
// exponents and error it reaches, per method and tolerance (counters "exponents" and "error").
//   heom_bench_fit [--benchmark_filter=BM_Fit/case:0]
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>

#include "heom/core/error.hpp"

#include "heom/model/correlation_fit.hpp"
#include "heom/model/spectral_density.hpp"

namespace {

struct FitCase {
  const char* name;
  heom::SpectralDensity j;
  double temperature, time;
};

/// 0: Ohmic s = 1, wc = 1, T = 0.5, t <= 20 / wc; 1: sub-Ohmic s = 0.5 at T = 0, t <= 20 / wc; 2: the
/// Ohmic bath of example/ohmic_spin_boson.toml (wc = 5, T = 0.5, t <= 20); 3: Ohmic plus an
/// underdamped mode, T = 0.2, t <= 30.
FitCase fit_case(int index) {
  switch (index) {
    case 0:
      return {"ohmic", heom::SpectralDensity::ohmic(0.05, 1.0, 1.0), 0.5, 20.0};
    case 1:
      return {"sub-ohmic", heom::SpectralDensity::ohmic(0.05, 1.0, 0.5), 0.0, 20.0};
    case 2:
      return {"example", heom::SpectralDensity::ohmic(0.05, 5.0, 1.0), 0.5, 20.0};
    default: {
      heom::SpectralDensity j = heom::SpectralDensity::ohmic(0.05, 1.0, 1.0);
      j += heom::SpectralDensity::underdamped(0.3, 0.1, 2.0);
      return {"ohmic+mode", j, 0.2, 30.0};
    }
  }
}

void BM_Fit(benchmark::State& state) {
  const FitCase c = fit_case(static_cast<int>(state.range(0)));
  heom::FitOptions options;
  options.method = state.range(1) == 0 ? heom::FitMethod::esprit : heom::FitMethod::prony;
  options.tolerance = std::pow(10.0, -static_cast<double>(state.range(2)));
  options.time = c.time;
  options.max_exponents = 60;
  heom::CorrelationFit fit;
  try {
    for (auto _ : state) benchmark::DoNotOptimize(fit = heom::fit_correlation(c.j, c.temperature, options));
  } catch (const heom::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  state.SetLabel(std::string(c.name) + " " + heom::to_string(options.method));
  state.counters["exponents"] = static_cast<double>(fit.exponents.size());
  state.counters["error"] = fit.error;
  state.counters["samples"] = fit.samples;
}

}  // namespace

BENCHMARK(BM_Fit)
    ->ArgNames({"case", "method", "tol_exp"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}, {3, 4, 5, 6}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

BENCHMARK_MAIN();
