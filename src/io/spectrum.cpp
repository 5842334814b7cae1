// One-sided Fourier transforms of sampled correlation functions with FFTW.
#include "io/spectrum.hpp"

#include <fftw3.h>

#include <cmath>
#include <complex>
#include <memory>
#include <string>

#include "heom/core/error.hpp"

namespace heom::io {

const char* to_string(SpectrumWindow window) { return window == SpectrumWindow::hann ? "hann" : "none"; }

SpectrumGrid one_sided_spectrum(const std::vector<complex>& samples, double dt, int sign, SpectrumWindow window,
                                int padding) {
  const std::size_t n = samples.size();
  if (n < 2) throw Error("spectrum: the correlation function needs at least 2 samples");
  if (!(dt > 0.0) || !std::isfinite(dt)) throw Error("spectrum: the sampling interval must be > 0");
  if (padding < 1) throw Error("spectrum: padding must be >= 1");
  if (sign != 1 && sign != -1) throw Error("spectrum: sign must be +1 or -1");
  const std::size_t m = n * static_cast<std::size_t>(padding);
  constexpr double pi = 3.14159265358979323846;

  // FFTW's own allocation (aligned for its SIMD kernels), freed however this ends.
  const auto deleter = [](fftw_complex* p) { fftw_free(p); };
  std::unique_ptr<fftw_complex, decltype(deleter)> buffer(fftw_alloc_complex(m), deleter);
  if (!buffer) throw Error("spectrum: cannot allocate " + std::to_string(m) + " FFT points");
  std::complex<double>* data = reinterpret_cast<std::complex<double>*>(buffer.get());
  for (std::size_t k = 0; k < m; ++k) {
    if (k >= n) {
      data[k] = 0.0;
      continue;
    }
    double weight = k == 0 || k == n - 1 ? 0.5 : 1.0;  // the trapezoidal rule's half weights at the ends
    if (window == SpectrumWindow::hann) {
      const double c = std::cos(0.5 * pi * static_cast<double>(k) / static_cast<double>(n - 1));
      weight *= c * c;
    }
    data[k] = weight * samples[k];
  }
  // FFTW_BACKWARD sums exp(+2 pi i k m / M): the sign +1 transform.
  fftw_plan plan = fftw_plan_dft_1d(static_cast<int>(m), buffer.get(), buffer.get(),
                                    sign > 0 ? FFTW_BACKWARD : FFTW_FORWARD, FFTW_ESTIMATE);
  if (!plan) throw Error("spectrum: FFTW could not plan a transform of " + std::to_string(m) + " points");
  fftw_execute(plan);
  fftw_destroy_plan(plan);

  SpectrumGrid grid;
  grid.omega.resize(m);
  grid.intensity.resize(m);
  const double spacing = 2.0 * pi / (static_cast<double>(m) * dt);
  const std::size_t negative = m / 2;  // frequencies -M/2 .. -1 come first
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t bin = (i + m - negative) % m;
    const double index = static_cast<double>(i) - static_cast<double>(negative);
    grid.omega[i] = index * spacing;
    grid.intensity[i] = dt / pi * data[bin].real();
  }
  return grid;
}

}  // namespace heom::io
