#!/usr/bin/python3
"""Dynamic filtering of ADOs on top of the Faber (Chebyshev) propagator: how much of the hierarchy
stays active, and what error it adds, by threshold (issue 61's second lever, studied before it is
built into the library).

On QuTiP 4.7's HEOM matrix of an input (method_study.build, with the exact rho(t) from
expm_multiply), each step of the Faber series (chebyshev_study.propagate's recurrence, over steps of
--step) runs on the active set alone: the ADOs whose scaled magnitude max |rho_n| / prod_k
sqrt(n_k! |c_k|^n_k) (Shi et al., J. Chem. Phys. 130, 084105 (2009)) is at least the threshold at
the step's start, and the ADOs up to --reach neighbour links n +- e_k from them (those that can grow
from them within the step); every other ADO is zero for the step. The cost of an application is
counted as the active fraction of the hierarchy (a kernel that skips inactive ADOs); the error is
max |rho - rho_exact| over the output times. Counts, not times: any machine gives the same.

    /usr/bin/python3 perf_tests/filtering_study.py example/fmo_77k.toml [--threshold 1e-8 1e-7 1e-6]
        [--step 100 250] [--reach 1 2 3 5] [--exact-cache fmo4.npz] [--json out.json]
"""
import argparse
import json
import math
import os
import sys
import tomllib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chebyshev_study import ellipse_around, ritz_values  # noqa: E402
from chebyshev_study import propagate as faber_propagate  # noqa: E402
from compare_qutip import qutip_model  # noqa: E402
from method_study import build  # noqa: E402


def hierarchy(path):
    """(labels [ADOs][K], the scale of each ADO, up and down neighbours [ADOs][2K]) of the input's
    hierarchy, in QuTiP's order (that of method_study.build's matrix)."""
    from qutip.nonmarkov.bofin_solvers import HierarchyADOs
    cfg = tomllib.load(open(path, "rb"))
    _, baths, _, _ = qutip_model(cfg)
    exponents = [e for b in (baths if isinstance(baths, list) else [baths]) for e in b.exponents]
    ados = HierarchyADOs(exponents, cfg["hierarchy"]["depth"])
    labels = np.array(ados.labels)
    weight = np.array([abs(e.ck + 1j * (e.ck2 or 0.0)) for e in exponents])
    scale = np.array([math.prod(math.sqrt(math.factorial(int(n)) * weight[k] ** n) for k, n in enumerate(label))
                      for label in labels])
    index = {tuple(label): i for i, label in enumerate(ados.labels)}
    neighbours = []
    for label in ados.labels:
        near = []
        for k in range(len(label)):
            for step in (1, -1):
                other = label[:k] + (label[k] + step,) + label[k + 1:]
                if other in index:
                    near.append(index[other])
        neighbours.append(near)
    return labels, scale, neighbours


def active_set(y, n2, scale, neighbours, threshold, reach):
    """The ADOs a step computes: those of scaled magnitude >= threshold, and those up to `reach`
    neighbour links from them (what can grow from them within the step)."""
    magnitude = np.abs(y.reshape(-1, n2)).max(axis=1) / scale
    active = magnitude >= threshold
    frontier = np.flatnonzero(active)
    for _ in range(reach):
        grown = {b for a in frontier for b in neighbours[a] if not active[b]}
        frontier = np.fromiter(grown, dtype=int, count=len(grown))
        active[frontier] = True
    return active


def propagate(L, y0, times, n2, ellipse, step, tail, scale, neighbours, threshold, reach, full_first=False):
    """rho at `times` over Faber steps on the active set; (rho, applications, applications counted by
    the active fraction of the hierarchy, mean active fraction)."""
    fractions, per_step = [], []

    def active(y, t):
        whole = threshold == 0 or (full_first and t == times[0])
        chosen = np.ones(len(scale), bool) if whole else active_set(y, n2, scale, neighbours, threshold, reach)
        fractions.append(chosen.mean())
        return np.repeat(chosen, n2)

    rho, applications, _ = faber_propagate(L, y0, times, n2, ellipse, step, tail, active, per_step)
    work = float(np.dot(fractions, per_step))
    return rho, applications, work, float(np.mean(fractions))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("--threshold", type=float, nargs="+", default=[1e-9, 1e-8, 1e-7, 1e-6, 1e-5])
    p.add_argument("--step", type=float, nargs="+", default=[100.0, 250.0])
    p.add_argument("--reach", type=int, nargs="+", default=[1, 2, 3, 5],
                   help="neighbour links from the significant ADOs that a step also computes")
    p.add_argument("--tail", type=float, default=1e-9)
    p.add_argument("--arnoldi", type=int, default=20)
    p.add_argument("--margin", type=float, default=0.05)
    p.add_argument("--full-first", action="store_true",
                   help="the first step on the whole hierarchy (it fills every tier from rho alone)")
    p.add_argument("--exact-cache")
    p.add_argument("--json")
    a = p.parse_args()
    L, D, y0, times, n2, back, exact = build(a.input, exact_cache=a.exact_cache)
    _, scale, neighbours = hierarchy(a.input)
    ritz = np.append(ritz_values(L, y0, a.arnoldi), D.real.min())
    span = (times[-1] - times[0]) / 1000
    rows = []
    for step in a.step:
        ellipse = ellipse_around(ritz, a.margin, 10.0 / step)
        for threshold, reach in [(0.0, 0)] + [(t, r) for t in a.threshold for r in a.reach]:
            rho, applications, work, fraction = propagate(L, y0, times, n2, ellipse, step, a.tail, scale,
                                                          neighbours, threshold, reach, a.full_first)
            error = float(np.max(np.abs(rho @ back.T - exact)))
            row = {"step": step, "threshold": threshold, "reach": reach, "full_first": a.full_first,
                   "applications_per_1000": applications / span,
                   "active_work_per_1000": work / span, "mean_active_fraction": fraction, "error": error}
            rows.append(row)
            print(f"step {step:5g}  threshold {threshold:7.0e}  reach {reach}: {applications / span:7.1f} applications "
                  f"per 1000 time units, {work / span:7.1f} counted by active ADOs (mean active fraction "
                  f"{fraction:.3f}); error {error:.1e}", flush=True)
    if a.json:
        json.dump({"input": a.input, "tail": a.tail, "rows": rows}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
