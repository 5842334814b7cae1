"""heom.response_2d: the third-order response of an exciton aggregate and its 2D spectra."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from . import _heom
from ._baths import as_array, as_bath
from ._progress import CountProgress
from ._spectra import spectrum_2d


@dataclass
class Response2D:
    """What response_2d computed. values[s, p, b, i1, i3] is R(t3[i3], waiting_times[b], t1[i1]) of
    signal signals[s] and pathway pathways[p], with the pathway's sign (excited-state absorption
    negative) and without the factor i^3: a signal is the sum over its pathways. omega1 and omega3 are
    the 2D spectra's frequencies, spectra[signal][b, i1, i3] each signal's S(w1, T, w3) and
    absorptive[b, i1, i3] the real part of their sum (None with a single t1 or t3 point)."""
    t1: np.ndarray
    waiting_times: np.ndarray
    t3: np.ndarray
    signals: list
    pathways: list
    values: np.ndarray
    omega1: Optional[np.ndarray] = None
    omega3: Optional[np.ndarray] = None
    spectra: dict = field(default_factory=dict)
    absorptive: Optional[np.ndarray] = None
    levels: int = 0
    statistics: dict = field(default_factory=dict)

    def signal(self, name: str) -> np.ndarray:
        """R of one signal ("rephasing" or "non-rephasing"), its pathways summed: [T, t1, t3]."""
        return self.values[self.signals.index(name)].sum(axis=0)


def response_2d(hamiltonian, dipoles, baths, *, depth: int, waiting_times: Sequence[float], t1_step: float,
                t1_points: int, t3_step: float, t3_points: int, pathways: Optional[Sequence[str]] = None,
                signals: Optional[Sequence[str]] = None, polarization: str = "xxxx", isotropic: bool = True,
                biexciton_shift: float = 0.0, window: str = "hann", padding: int = 2, method: str = "automatic",
                rtol: float = 1e-8, atol: float = 1e-10, progress: bool = True) -> Response2D:
    """The third-order response R(t3, T, t1) of an exciton aggregate in the impulsive limit, and its 2D
    spectra, as the heom program's [response] computes them (docs/program.md).

    hamiltonian: the one-exciton model, N x N (site energies on the diagonal, couplings J). dipoles: one
    per site, numbers (along x) or [x, y, z]. baths: bosonic baths (heom's or QuTiP's) whose coupling
    operators are N x N in the one-exciton space (a site's bath: the projector on it); heom builds the
    ground, one- and two-exciton manifolds (the two-exciton ones with energies e_m + e_n +
    biexciton_shift, where excited-state absorption is computed) and couples each bath through the
    number of excitations on its site. Every pathway ("ground-state-bleach", "stimulated-emission",
    "excited-state-absorption") of both signals ("rephasing", "non-rephasing") unless fewer are named;
    polarization "xxxx", "xxyy", "xyxy", "xyyx" or "magic-angle", averaged over orientations unless
    isotropic=False. The propagations run on one device without the GIL; progress counts the t3
    propagations."""
    d = np.asarray(dipoles, dtype=float)
    if d.ndim == 1:
        d = np.stack([d, np.zeros_like(d), np.zeros_like(d)], axis=1)
    if d.ndim != 2 or d.shape[1] != 3:
        raise ValueError("dipoles: expected one number or [x, y, z] vector per site")
    options = _heom.solver_options(method, float(rtol), float(atol), 0.0, 0.0, 5, "automatic", 0, False, 0.0)
    bar = CountProgress("response", 1, enabled=progress)
    try:
        raw = _heom.third_order_response(
            as_array(hamiltonian, "hamiltonian"), [list(map(float, row)) for row in d], [as_bath(b) for b in baths],
            float(biexciton_shift), int(depth), options, [float(w) for w in waiting_times], float(t1_step),
            int(t1_points), float(t3_step), int(t3_points), list(pathways or []), list(signals or []), polarization,
            bool(isotropic), lambda done, total: (setattr(bar, "end", total), bar(done)))
    finally:
        bar.close()
    r = Response2D(t1=raw["t1"], waiting_times=raw["waiting_times"], t3=raw["t3"], signals=list(raw["signals"]),
                   pathways=list(raw["pathways"]), values=raw["values"], levels=raw["levels"],
                   statistics={k: raw[k] for k in ("propagations", "steps", "evaluations")})
    if len(r.t1) >= 2 and len(r.t3) >= 2:
        total = None
        for name in r.signals:
            per_time = []
            for b in range(len(r.waiting_times)):
                r.omega1, r.omega3, s = spectrum_2d(r.signal(name)[b], t1_step, t3_step,
                                                    sign1=-1 if name == "rephasing" else 1, window=window,
                                                    padding=padding)
                per_time.append(s)
            r.spectra[name] = np.array(per_time)
            total = r.spectra[name] if total is None else total + r.spectra[name]
        r.absorptive = total.real
    return r
