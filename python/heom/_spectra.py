"""Spectra from sampled correlation functions, as the heom program computes them."""
from __future__ import annotations

import numpy as np


def spectrum(samples, dt: float, *, sign: int = 1, window: str = "hann", padding: int = 4):
    """S(w) = (1/pi) Re int_0^T C(t) w(t) exp(sign i w t) dt for samples C(k dt), k = 0..N-1: the
    trapezoidal rule after zero padding to padding x N samples, at the FFT's frequencies
    2 pi m / (padding N dt), m = -M/2 .. M/2 - 1. window "hann": the half Hann window
    cos^2(pi t / (2 T)), so that the truncation at T does not ring; "none": none. sign +1 for an
    absorption spectrum or a density of states (C ~ exp(-i E t) peaks at w = +E), -1 for a power
    spectrum. Returns (omega, S); sum(S) * spacing equals Re C(0) whatever the window."""
    c = np.asarray(samples, dtype=np.complex128)
    n = len(c)
    if n < 2:
        raise ValueError("samples: the correlation function needs at least 2 samples")
    if not (dt > 0 and np.isfinite(dt)):
        raise ValueError("dt: the sampling interval must be > 0")
    if padding < 1:
        raise ValueError("padding must be >= 1")
    if sign not in (1, -1):
        raise ValueError("sign must be +1 or -1")
    if window not in ("hann", "none"):
        raise ValueError(f'window: "{window}" is not "hann" or "none"')
    weight = np.ones(n)
    weight[0] = weight[-1] = 0.5
    if window == "hann":
        weight *= np.cos(0.5 * np.pi * np.arange(n) / (n - 1)) ** 2
    m = n * padding
    data = np.zeros(m, dtype=np.complex128)
    data[:n] = weight * c
    transformed = np.fft.ifft(data) * m if sign > 0 else np.fft.fft(data)
    omega = 2 * np.pi * np.fft.fftshift(np.fft.fftfreq(m, d=dt))
    return omega, dt / np.pi * np.fft.fftshift(transformed).real


def _weights(n: int, window: str):
    """The trapezoidal rule's weights (half at the ends) times the window's."""
    weight = np.ones(n)
    weight[0] = weight[-1] = 0.5
    if window == "hann":
        weight *= np.cos(0.5 * np.pi * np.arange(n) / (n - 1)) ** 2
    return weight


def spectrum_2d(samples, dt1: float, dt3: float, *, sign1: int, window: str = "hann", padding: int = 2):
    """S(w1, w3) = int int R(t1, t3) W(t1) W(t3) exp(sign1 i w1 t1 + i w3 t3) dt1 dt3 for samples
    R(k1 dt1, k3 dt3) given as [k1, k3]: the trapezoidal rule on each axis after zero padding each to
    padding x its samples, as the heom program's /spectrum2d. sign1 = -1 for a rephasing signal (its w1
    flipped, so that a transition at E peaks at w1 = +E), +1 for a non-rephasing one. Returns (omega1,
    omega3, S[w1, w3]) on the FFT's grids, ascending."""
    r = np.asarray(samples, dtype=np.complex128)
    if r.ndim != 2 or min(r.shape) < 2:
        raise ValueError("samples: expected a 2-d array of at least 2 x 2 samples")
    if sign1 not in (1, -1):
        raise ValueError("sign1 must be +1 or -1")
    if window not in ("hann", "none"):
        raise ValueError(f'window: "{window}" is not "hann" or "none"')
    if padding < 1:
        raise ValueError("padding must be >= 1")
    n1, n3 = r.shape
    m1, m3 = n1 * padding, n3 * padding
    data = np.zeros((m1, m3), dtype=np.complex128)
    data[:n1, :n3] = np.outer(_weights(n1, window), _weights(n3, window)) * r
    data = np.fft.ifft(data, axis=0) * m1 if sign1 > 0 else np.fft.fft(data, axis=0)
    data = np.fft.ifft(data, axis=1) * m3
    omega1 = 2 * np.pi * np.fft.fftshift(np.fft.fftfreq(m1, d=dt1))
    omega3 = 2 * np.pi * np.fft.fftshift(np.fft.fftfreq(m3, d=dt3))
    return omega1, omega3, dt1 * dt3 * np.fft.fftshift(data)
