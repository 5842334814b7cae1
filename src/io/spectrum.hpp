// Spectra from correlation functions: a one-sided Fourier transform by FFT (FFTW), with zero padding
// and an optional window, normalized so that the spectrum integrates to Re C(0).
#ifndef HEOM_IO_SPECTRUM_HPP
#define HEOM_IO_SPECTRUM_HPP

#include <string>
#include <vector>

#include "heom/core/matrix.hpp"

namespace heom::io {

/// What multiplies the correlation function before the transform, so that its truncation at t_end
/// does not ring: none, or the half Hann window cos^2(pi t / (2 t_end)) (1 at t = 0, 0 at t_end).
enum class SpectrumWindow { none, hann };
const char* to_string(SpectrumWindow window);

struct SpectrumGrid {
  std::vector<double> omega;      ///< ascending angular frequencies, in the sampling's energy unit
  std::vector<double> intensity;  ///< per unit of omega
};

/// S(w) = (1/pi) Re int_0^T C(t) w(t) exp(sign i w t) dt for samples C(k dt), k = 0..N-1, by the
/// trapezoidal rule (the end samples at half weight) after zero padding to `padding` x N samples, at the FFT's
/// frequencies 2 pi m / (padding N dt), m = -M/2 .. M/2 - 1. Whatever the window (it is 1 at t = 0),
/// the sum of S over the grid times its spacing is Re C(0) exactly. sign = +1: absorption
/// (<mu(t) mu(0)> ~ exp(-i E t) peaks at w = +E); sign = -1: a power spectrum <Q^dagger(t) Q(0)>.
SpectrumGrid one_sided_spectrum(const std::vector<complex>& samples, double dt, int sign, SpectrumWindow window,
                                int padding);

/// A 2D spectrum on the FFT's grids: values[i1 * omega3.size() + i3] at (omega1[i1], omega3[i3]).
struct Spectrum2D {
  std::vector<double> omega1, omega3;  ///< ascending, as one_sided_spectrum's
  std::vector<complex> values;
};

/// S(w1, w3) = int_0^T1 int_0^T3 R(t1, t3) W(t1) W(t3) exp(sign1 i w1 t1 + i w3 t3) dt1 dt3 for samples
/// R(k1 dt1, k3 dt3) given [k1][k3] (n1 x n3, each >= 2), by the trapezoidal rule on each axis after
/// zero padding each to `padding` x its samples: a third-order signal's transform, sign1 = -1 for the
/// rephasing one (its w1 flipped, so that a coherence exp(+i E t1) peaks at w1 = +E) and +1 for the
/// non-rephasing one. The window W is one_sided_spectrum's, on each axis.
Spectrum2D two_dimensional_spectrum(const std::vector<complex>& samples, int n1, int n3, double dt1, double dt3,
                                    int sign1, SpectrumWindow window, int padding);

}  // namespace heom::io

#endif
