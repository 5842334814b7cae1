#!/usr/bin/python3
"""A density of states in time against one in frequency: wall time and error on the same grid.

For each input with `[spectrum] kind = "density-of-states"` (method "time"), runs `heom run`:
- in time, as the input is and at each --rtol (atol = rtol / 100) and --t-end;
- in frequency ([spectrum] method = "frequency") on exactly the FFT grid the time method outputs
  (its frequency_range), at each --tolerance, and once more on --few evenly spaced points;
and prints each run's wall time (whole process, min of --repeat runs) and its largest |A - A_ref|
against the frequency method at relative residual 1e-12 on that grid (which the unit tests hold to
the exact A(w) of a non-interacting level to 1e-14 of its peak).

    /usr/bin/python3 perf_tests/dos_methods.py [--heom build/openmp/src/heom] [--threads 2] [--repeat 3]
        [--rtol 1e-6 ...] [--t-end 50 ...] [--tolerance 1e-6 ...] [--few 21] INPUT.toml ...
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def set_keys(text, section, values):
    """The input text with `values` ({key: TOML literal}) replacing those keys in [section]."""
    lines = text.splitlines()
    start = lines.index(f"[{section}]")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    body = [line for line in lines[start + 1:end] if not any(re.match(rf"{k}\s*=", line) for k in values)]
    new = [f"{k} = {v}" for k, v in values.items()]
    return "\n".join(lines[:start + 1] + new + body + lines[end:]) + "\n"


def fft_grid(cfg):
    """The first and last multiple m of the spacing that the time method outputs, and the spacing."""
    dyn, spec = cfg["dynamics"], cfg["spectrum"]
    samples = round(dyn["t_end"] / dyn["output_every"]) + 1
    points = samples * spec.get("padding", 4)
    spacing = 2.0 * math.pi / (points * dyn["output_every"])
    low, high = spec.get("frequency_range", [-math.inf, math.inf])
    first = max(math.ceil(low / spacing), -math.floor(points / 2))
    last = min(math.floor(high / spacing), math.ceil(points / 2) - 1)
    return first, last, spacing


def run(heom, text, threads, work, repeat):
    """(min wall seconds, omega, A, /spectrum attributes) of `heom run` on the input text."""
    path, out = os.path.join(work, "case.toml"), os.path.join(work, "case.h5")
    with open(path, "w") as f:
        f.write(text)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        p = subprocess.run([heom, "run", path, "-o", out, "--threads", str(threads)], env=env,
                           capture_output=True, text=True)
        best = min(best, time.perf_counter() - start)
        if p.returncode != 0:
            sys.exit(f"heom run failed ({p.returncode}):\n{p.stderr}")
    with h5py.File(out, "r") as f:
        s = f["spectrum"]
        return best, s["omega"][()], s["intensity"][()], dict(s.attrs)


def in_frequency(text, first, last, spacing, tolerance, points=None):
    values = {"method": '"frequency"', "frequency_range": f"[{first * spacing!r}, {last * spacing!r}]",
              "frequency_points": str(points or last - first + 1), "tolerance": repr(tolerance)}
    lines = [line for line in text.splitlines() if not re.match(r"(padding|window)\s*=", line)]
    return set_keys("\n".join(lines) + "\n", "spectrum", values)


def study(args, input_path):
    text = open(input_path).read()
    cfg = tomllib.loads(text)
    first, last, spacing = fft_grid(cfg)
    print(f"{input_path}: {last - first + 1} frequencies from {first * spacing:.4g} to {last * spacing:.4g}")
    with tempfile.TemporaryDirectory() as work:
        _, _, reference, _ = run(args.heom, in_frequency(text, first, last, spacing, 1e-12), args.threads,
                                         work, 1)
        peak = np.max(np.abs(reference))

        def reference_at(omega):
            """The reference at frequencies of its grid, or solved anew at others."""
            grid = omega / spacing
            if np.all(np.abs(grid - np.rint(grid)) < 1e-6):
                return reference[np.rint(grid).astype(int) - first]
            _, _, values, _ = run(args.heom, in_frequency(text, omega[0] / spacing, omega[-1] / spacing, spacing,
                                                          1e-12, len(omega)), args.threads, work, 1)
            return values
        rows = []
        dyn = cfg["dynamics"]
        for rtol in [dyn["rtol"]] + args.rtol:
            for t_end in [dyn["t_end"]] + args.t_end:
                if t_end != dyn["t_end"] and rtol != dyn["rtol"]:
                    continue
                case = set_keys(text, "dynamics", {"rtol": repr(rtol), "atol": repr(rtol / 100)})
                if t_end != dyn["t_end"]:
                    case = set_keys(case, "dynamics", {"t_end": repr(t_end)})
                wall, omega, a, _ = run(args.heom, case, args.threads, work, args.repeat)
                # (a shorter t_end's coarser grid holds every other frequency of the reference's, or so)
                error = np.max(np.abs(a - reference_at(omega)))
                rows.append((f"time, rtol {rtol:g}, t_end {t_end:g}", len(omega), wall, error))
        for tolerance in args.tolerance:
            wall, omega, a, attrs = run(args.heom, in_frequency(text, first, last, spacing, tolerance),
                                        args.threads, work, args.repeat)
            rows.append((f"frequency, tolerance {tolerance:g} ({attrs['iterations']} iterations)", len(omega), wall,
                         np.max(np.abs(a - reference))))
        if args.few:
            for tolerance in args.tolerance:
                wall, omega, a, attrs = run(args.heom, in_frequency(text, first, last, spacing, tolerance, args.few),
                                            args.threads, work, args.repeat)
                error = np.max(np.abs(a - reference_at(omega)))
                rows.append((f"frequency, {args.few} points, tolerance {tolerance:g} ({attrs['iterations']} "
                             f"iterations)", len(omega), wall, error))
    print(f"{'run':58} {'points':>6} {'wall s':>8} {'max |A - A_ref| / peak':>24}")
    for name, points, wall, error in rows:
        print(f"{name:58} {points:6d} {wall:8.3f} {error / peak:24.2e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--heom", default=os.path.join(ROOT, "build/openmp/src/heom"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rtol", type=float, nargs="*", default=[])
    parser.add_argument("--t-end", type=float, nargs="*", default=[])
    parser.add_argument("--tolerance", type=float, nargs="*", default=[1e-6, 1e-8, 1e-10])
    parser.add_argument("--few", type=int, default=0)
    parser.add_argument("inputs", nargs="+")
    args = parser.parse_args()
    for path in args.inputs:
        study(args, path)


if __name__ == "__main__":
    main()
