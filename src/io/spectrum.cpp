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

namespace {
constexpr double pi = 3.14159265358979323846;

/// The weight of sample k of n: the trapezoidal rule's (half at the ends) times the window's.
double sample_weight(std::size_t k, std::size_t n, SpectrumWindow window) {
  double weight = k == 0 || k == n - 1 ? 0.5 : 1.0;
  if (window == SpectrumWindow::hann) {
    const double c = std::cos(0.5 * pi * static_cast<double>(k) / static_cast<double>(n - 1));
    weight *= c * c;
  }
  return weight;
}

/// FFTW's own allocation (aligned for its SIMD kernels), freed however the caller ends.
struct FftwFree {
  void operator()(fftw_complex* p) const { fftw_free(p); }
};
std::unique_ptr<fftw_complex, FftwFree> fft_buffer(std::size_t m) {
  std::unique_ptr<fftw_complex, FftwFree> buffer(fftw_alloc_complex(m));
  if (!buffer) throw Error("spectrum: cannot allocate " + std::to_string(m) + " FFT points");
  return buffer;
}

/// The FFT's frequencies 2 pi m / (M dt), m = -M/2 .. M/2 - 1, and the bin of each.
std::vector<double> fft_frequencies(std::size_t m, double dt) {
  std::vector<double> omega(m);
  const double spacing = 2.0 * pi / (static_cast<double>(m) * dt);
  for (std::size_t i = 0; i < m; ++i) omega[i] = (static_cast<double>(i) - static_cast<double>(m / 2)) * spacing;
  return omega;
}
std::size_t fft_bin(std::size_t i, std::size_t m) { return (i + m - m / 2) % m; }
}  // namespace

SpectrumGrid one_sided_spectrum(const std::vector<complex>& samples, double dt, int sign, SpectrumWindow window,
                                int padding) {
  const std::size_t n = samples.size();
  if (n < 2) throw Error("spectrum: the correlation function needs at least 2 samples");
  if (!(dt > 0.0) || !std::isfinite(dt)) throw Error("spectrum: the sampling interval must be > 0");
  if (padding < 1) throw Error("spectrum: padding must be >= 1");
  if (sign != 1 && sign != -1) throw Error("spectrum: sign must be +1 or -1");
  const std::size_t m = n * static_cast<std::size_t>(padding);
  const auto buffer = fft_buffer(m);
  std::complex<double>* data = reinterpret_cast<std::complex<double>*>(buffer.get());
  for (std::size_t k = 0; k < m; ++k) data[k] = k < n ? sample_weight(k, n, window) * samples[k] : 0.0;
  // FFTW_BACKWARD sums exp(+2 pi i k m / M): the sign +1 transform.
  fftw_plan plan = fftw_plan_dft_1d(static_cast<int>(m), buffer.get(), buffer.get(),
                                    sign > 0 ? FFTW_BACKWARD : FFTW_FORWARD, FFTW_ESTIMATE);
  if (!plan) throw Error("spectrum: FFTW could not plan a transform of " + std::to_string(m) + " points");
  fftw_execute(plan);
  fftw_destroy_plan(plan);

  SpectrumGrid grid;
  grid.omega = fft_frequencies(m, dt);
  grid.intensity.resize(m);
  for (std::size_t i = 0; i < m; ++i) grid.intensity[i] = dt / pi * data[fft_bin(i, m)].real();
  return grid;
}

Spectrum2D two_dimensional_spectrum(const std::vector<complex>& samples, int n1, int n3, double dt1, double dt3,
                                    int sign1, SpectrumWindow window, int padding) {
  if (n1 < 2 || n3 < 2) throw Error("2D spectrum: each time axis needs at least 2 samples");
  if (samples.size() != static_cast<std::size_t>(n1) * static_cast<std::size_t>(n3))
    throw Error("2D spectrum: " + std::to_string(samples.size()) + " samples for a " + std::to_string(n1) + " x " +
                std::to_string(n3) + " grid");
  if (!(dt1 > 0.0) || !(dt3 > 0.0) || !std::isfinite(dt1) || !std::isfinite(dt3))
    throw Error("2D spectrum: the sampling intervals must be > 0");
  if (padding < 1) throw Error("2D spectrum: padding must be >= 1");
  if (sign1 != 1 && sign1 != -1) throw Error("2D spectrum: sign1 must be +1 or -1");
  const std::size_t a = static_cast<std::size_t>(n1), b = static_cast<std::size_t>(n3);
  const std::size_t m1 = a * static_cast<std::size_t>(padding), m3 = b * static_cast<std::size_t>(padding);
  const auto buffer = fft_buffer(m1 * m3);
  std::complex<double>* data = reinterpret_cast<std::complex<double>*>(buffer.get());
  for (std::size_t k1 = 0; k1 < m1; ++k1)
    for (std::size_t k3 = 0; k3 < m3; ++k3)
      data[k1 * m3 + k3] =
          k1 < a && k3 < b ? sample_weight(k1, a, window) * sample_weight(k3, b, window) * samples[k1 * b + k3] : 0.0;
  // exp(+i w1 t1 + i w3 t3) on both axes; the rephasing sign reads the w1 axis backwards.
  fftw_plan plan = fftw_plan_dft_2d(static_cast<int>(m1), static_cast<int>(m3), buffer.get(), buffer.get(),
                                    FFTW_BACKWARD, FFTW_ESTIMATE);
  if (!plan) throw Error("2D spectrum: FFTW could not plan a transform of " + std::to_string(m1 * m3) + " points");
  fftw_execute(plan);
  fftw_destroy_plan(plan);
  Spectrum2D s;
  s.omega1 = fft_frequencies(m1, dt1);
  s.omega3 = fft_frequencies(m3, dt3);
  s.values.resize(m1 * m3);
  for (std::size_t i1 = 0; i1 < m1; ++i1) {
    const std::size_t bin1 = sign1 > 0 ? fft_bin(i1, m1) : (m1 - fft_bin(i1, m1)) % m1;
    for (std::size_t i3 = 0; i3 < m3; ++i3) s.values[i1 * m3 + i3] = dt1 * dt3 * data[bin1 * m3 + fft_bin(i3, m3)];
  }
  return s;
}

}  // namespace heom::io
