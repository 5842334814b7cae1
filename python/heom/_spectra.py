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
