#!/usr/bin/python3
"""The Python module's cost and speed: (1) what a Solver.run call costs beyond the C++ run it makes
(the model of QuTiP's spin-boson tutorial, many calls); (2) an input file run from Python through
heom.HEOMSolver and through QuTiP 4.7's HEOMSolver, the same Qobjs and bath objects, side by side in
one process, with both wall times and the largest difference of rho(t).

    PYTHONPATH=build/openmp/python /usr/bin/python3 perf_tests/python_vs_qutip.py [INPUT.toml] [--calls 200]

Default input: perf_tests/inputs/fmo_depth5.toml (QuTiP takes over a minute on one core).
"""
import argparse
import os
import sys
import time
import tomllib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_qutip import ROOT, output_times, qutip_model  # noqa: E402  (the same model QuTiP-side)

import heom  # noqa: E402


def call_overhead(calls):
    """Median wall time of Solver.run minus the C++ run's own, over `calls` calls, in ms."""
    sz, sx = np.diag([1.0, -1.0]), np.array([[0.0, 1.0], [1.0, 0.0]])
    solver = heom.Solver(heom.Model(0.25 * sz + 0.5 * sx, heom.DrudeLorentz(sz, 0.1, 0.5, 0.5, 2)), 5,
                         progress=False)
    rho0, overheads = np.diag([1.0, 0.0]), {}
    for outputs in (2, 1000):
        times = np.linspace(0, 50, outputs)
        samples = []
        for _ in range(calls):
            start = time.perf_counter()
            result = solver.run(rho0, times)
            samples.append(time.perf_counter() - start - result.statistics["wall_time"])
        overheads[outputs] = 1e3 * float(np.median(samples))
    return overheads


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", nargs="?", default=os.path.join(ROOT, "perf_tests/inputs/fmo_depth5.toml"))
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()

    for outputs, ms in call_overhead(args.calls).items():
        print(f"Solver.run beyond the C++ run, {outputs} output times: {ms:.3f} ms (median of {args.calls} calls)")

    import qutip
    from qutip.nonmarkov.heom import HEOMSolver as QutipHEOMSolver

    cfg = tomllib.load(open(args.input, "rb"))
    H, baths, terminators, rho0 = qutip_model(cfg)
    if terminators:
        sys.exit("this comparison takes inputs without terminators (QuTiP adds them to a Liouvillian)")
    d = cfg["dynamics"]
    options = qutip.Options(nsteps=10**8, rtol=d.get("rtol", 1e-8), atol=d.get("atol", 1e-10), store_states=True)
    depth, times = cfg["hierarchy"]["depth"], output_times(cfg)

    start = time.perf_counter()
    ours = heom.HEOMSolver(H, baths, depth, options=options).run(rho0, times)
    heom_s = time.perf_counter() - start
    start = time.perf_counter()
    theirs = QutipHEOMSolver(H, baths, depth, options=options).run(rho0, times)
    qutip_s = time.perf_counter() - start
    difference = np.abs(ours.heom_result.states - np.array([s.full() for s in theirs.states])).max()
    print(f"{os.path.relpath(args.input, ROOT)} (depth {depth}, rtol {options.rtol:g}), from Python: "
          f"QuTiP {qutip.__version__} {qutip_s:.2f} s, heom {heom_s:.2f} s ({heom.execution_space}, "
          f"{ours.heom_result.statistics['steps']} steps): {qutip_s / heom_s:.1f}x; "
          f"largest |rho_heom - rho_QuTiP| {difference:.1e}")


if __name__ == "__main__":
    main()
