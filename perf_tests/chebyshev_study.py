#!/usr/bin/python3
"""How many generator applications a Faber (Chebyshev) propagator needs for HEOM, at a given accuracy.

The study behind `method = "chebyshev"`. For an input file it builds QuTiP 4.7's HEOM matrix L (as
method_study.py does, with the exact rho(t) from scipy's expm_multiply), estimates L's spectral hull
from the Ritz values of --arnoldi Arnoldi steps from the initial state (or, --exact-hull, from every
eigenvalue: small inputs; --damping-bound adds the largest ADO damping on the real axis), puts the cheapest ellipse around them (least a + b), grown by --margin,
with its right end at Re z = --right-end / step (the coefficients grow as e^{h right end} and cancel,
so that is the accuracy a step loses), and sums exp(L h) y = sum_k a_k F_k(L) y over steps of length --step,
every output time inside a step taken from the same terms (one accumulator of rho per output time),
each series cut where its tail sum_k |a_k| falls below --tail. It prints, for every combination, the
applications of L per 1000 time units (per ps in spectroscopy units; the Arnoldi steps included),
max |rho - rho_exact| over the output times, and the largest ||F_k(L) y|| / ||y|| met (at most 2
when the ellipse holds L's numerical range; the series diverges when it misses part of the spectrum).

    /usr/bin/python3 perf_tests/chebyshev_study.py example/fmo_77k.toml [--arnoldi 20 30 | --exact-hull]
        [--margin 0.05 0.1] [--step 100 250 500] [--tail 1e-8 1e-10] [--right-end 1 3] [--json out.json]

The coefficients are those of heom::faber_exp_coefficients (src/integrator/faber_series.cpp),
written again here in numpy.
"""
import argparse
import itertools
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from method_study import build  # noqa: E402


def faber_coefficients(center, semi_real, semi_imag, h, tail):
    """a_0 .. a_m of exp(h z) on the ellipse, cut where the tail is below `tail` (the C++ algorithm:
    Miller's backward recurrence in ratios, logarithms of the magnitudes, normalized by the sum)."""
    g = 0.5 * (semi_real + semi_imag)
    q = (semi_real - semi_imag) / (semi_real + semi_imag)
    front = np.exp(h * (center + semi_real))
    if h == 0:
        return np.array([1.0 + 0j])
    hg = h * g
    first = n = int(np.ceil(1.5 * hg + 12 * np.sqrt(hg) + 40))
    while True:
        ratio = np.zeros(n + 2)
        for k in range(n, 0, -1):
            ratio[k] = 1.0 / (k / hg + q * ratio[k + 1])
        with np.errstate(divide="ignore"):
            log_u = np.concatenate([[0.0], np.cumsum(np.log(np.abs(ratio[1:n + 1])))])
        sign = np.concatenate([[1.0], np.cumprod(np.sign(ratio[1:n + 1]))])
        weights = np.concatenate([[1.0], 1 + q ** np.arange(1, n + 1)])
        total = np.sum(sign * np.exp(log_u - log_u.max()) * weights)
        u = np.sign(total) * sign * np.exp(log_u - log_u.max() - np.log(abs(total)))
        a = front * u
        rest = np.cumsum(np.abs(a[::-1]))[::-1]  # rest[k] = sum_{j >= k} |a_j|
        m = int(np.argmax(rest <= tail)) - 1 if np.any(rest <= tail) else n
        if m + 20 <= n:
            return a[:max(m, 0) + 1]
        if n > 16 * first:
            raise RuntimeError("the Faber series did not fall below the tail")
        n *= 2


def ritz_values(L, y, steps):
    """The eigenvalues of the Arnoldi Hessenberg matrix after `steps` applications of L from y."""
    V = [y / np.linalg.norm(y)]
    H = np.zeros((steps + 1, steps), complex)
    for j in range(steps):
        w = L @ V[j]
        for i in range(j + 1):
            H[i, j] = np.vdot(V[i], w)
            w = w - H[i, j] * V[i]
        H[j + 1, j] = np.linalg.norm(w)
        if H[j + 1, j] < 1e-13:
            return np.linalg.eigvals(H[:j + 1, :j + 1])
        V.append(w / H[j + 1, j])
    return np.linalg.eigvals(H[:steps, :steps])


def ellipse_around(points, margin, right_end):
    """(centre, semi_real, semi_imag): the axis-aligned ellipse of least a + b (what a unit of time
    costs) around the points grown by `margin` (relative to their spread), its right end at
    Re z = right_end >= their largest real part. The right end sets the rounding: the coefficients
    scale as e^{h right_end} and cancel in the sum, so a step of h loses e^{h right_end} of accuracy."""
    points = np.append(points, 0.0)
    middle = complex(0.5 * (points.real.min() + points.real.max()), 0.5 * (points.imag.min() + points.imag.max()))
    spread = max(np.max(np.abs(points - middle)), 1e-300)
    d = points - middle
    rightmost = points.real.max()
    points = middle + d * (1 + margin) + margin * spread * np.exp(1j * np.angle(d))  # (a ring, away from the middle)
    # (but not to the right: the rightmost eigenvalue is the steady state's 0, known exactly)
    points = np.minimum(points.real, rightmost) + 1j * points.imag
    x_r = max(right_end, points.real.max())
    y_c = 0.5 * (points.imag.min() + points.imag.max())
    best = None
    while best is None:  # (a point at the right end off the axis: move the end right until one fits)
        a_least = 0.5 * (x_r - points.real.min())
        for a in a_least * np.geomspace(1.0 + 1e-6, 50.0, 400):
            c = x_r - a
            inside = 1 - ((points.real - c) / a) ** 2
            if np.any((inside <= 1e-12) & (np.abs(points.imag - y_c) > 0)):
                continue
            b = max(np.max(np.abs(points.imag - y_c) / np.sqrt(np.maximum(inside, 1e-12))), 1e-6 * a)
            if best is None or a + b < best[1] + best[2]:
                best = (complex(c, y_c), a, b)
        x_r += 0.01 * spread
    return best


def propagate(L, y0, times, n2, ellipse, step, tail, active=None, step_log=None):
    """rho at `times` by Faber series over steps of length <= step; (rho, applications, growth).
    active(y, t), when given: the elements a step computes (a boolean mask; the others are zero for
    the step: filtering_study.py); step_log, when given, receives each step's applications."""
    center, a, b = ellipse
    g, q = 0.5 * (a + b), (a - b) / (a + b)
    y, t, applications, growth = y0.copy(), times[0], 0, 0.0
    out = [y0[:n2].copy()]
    i = 1
    while i < len(times):
        h = min(step, times[-1] - t)
        mask = None if active is None else active(y, t)
        if mask is not None:
            y = y * mask
        before = applications
        inside = [j for j in range(i, len(times)) if times[j] <= t + h * (1 + 1e-12)]
        coefficients = [faber_coefficients(center, a, b, times[j] - t, tail) for j in inside]
        lands = inside and abs(times[inside[-1]] - (t + h)) < 1e-12 * max(1, t + h)
        final = coefficients[-1] if lands else faber_coefficients(center, a, b, h, tail)
        terms = max([len(final)] + [len(c) for c in coefficients])
        norm = np.linalg.norm(y)
        f_prev, f = None, y
        accumulators = [c[0] * y[:n2] for c in coefficients]
        result = final[0] * y
        for k in range(1, terms):
            w = L @ f if mask is None else (L @ f) * mask
            s = (w - center * f) / g
            applications += 1
            f_next = s if k == 1 else s - (2 * q if k == 2 else q) * f_prev
            f_prev, f = f, f_next
            growth = max(growth, np.linalg.norm(f) / norm)
            for acc, c in zip(accumulators, coefficients):
                if k < len(c):
                    acc += c[k] * f[:n2]
            if k < len(final):
                result = result + final[k] * f
        out.extend(accumulators)
        if step_log is not None:
            step_log.append(applications - before)
        y, t, i = result, t + h, inside[-1] + 1 if inside else i
        if not np.all(np.isfinite(y[:n2])) or growth > 1e6:
            return None, applications, growth
    return np.array(out), applications, growth


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("--arnoldi", type=int, nargs="+", default=[20, 30])
    p.add_argument("--margin", type=float, nargs="+", default=[0.05, 0.1])
    p.add_argument("--step", type=float, nargs="+", default=[100, 250, 500])
    p.add_argument("--tail", type=float, nargs="+", default=[1e-8, 1e-10])
    p.add_argument("--right-end", type=float, nargs="+", default=[1.0, 3.0],
                   help="the ellipse's right end times the step")
    p.add_argument("--exact-hull", action="store_true", help="every eigenvalue of L (dense: small inputs)")
    p.add_argument("--damping-bound", action="store_true",
                   help="also the largest ADO damping, -max |sum_k n_k Re v_k|, on the real axis (what Arnoldi misses)")
    p.add_argument("--exact-cache", help="a file for the exact solution (read if there and of this input, else written)")
    p.add_argument("--json")
    a = p.parse_args()
    L, D, y0, times, n2, back, exact = build(a.input, exact_cache=a.exact_cache)
    span = times[-1] - times[0]
    rows = []
    for arnoldi in ([0] if a.exact_hull else a.arnoldi):
        ritz = np.linalg.eigvals(L.toarray()) if a.exact_hull else ritz_values(L, y0, arnoldi)
        if a.damping_bound:
            ritz = np.append(ritz, D.real.min())
        for margin, step, tail, right in itertools.product(a.margin, a.step, a.tail, a.right_end):
            ellipse = ellipse_around(ritz, margin, right / step)
            rho, applications, growth = propagate(L, y0, times, n2, ellipse, step, tail)
            error = None if rho is None else float(np.max(np.abs(rho @ back.T - exact)))
            per_1000 = (applications + arnoldi) * 1000 / span
            row = {"arnoldi": arnoldi, "margin": margin, "step": step, "tail": tail, "right_end": right,
                   "ellipse": [ellipse[0].real, ellipse[0].imag, ellipse[1], ellipse[2]],
                   "applications_per_1000": per_1000, "error": error, "growth": growth}
            rows.append(row)
            print(f"arnoldi {arnoldi:3d}  margin {margin:4.2f}  step {step:6g}  tail {tail:.0e}  right end {right:g}/h:"
                  f" ellipse centre "
                  f"{ellipse[0]:.4f}, half-axes {ellipse[1]:.4f} x {ellipse[2]:.4f};  {per_1000:7.1f} applications"
                  f" per 1000;  error {'diverged' if error is None else f'{error:.1e}'};  growth {growth:.2f}",
                  flush=True)
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
