#!/usr/bin/python3
"""Importance truncation ([hierarchy] threshold) against the whole hierarchy: for each input and each
threshold, the kept ADOs, the wall time of `heom run`, and the error max |rho(t) - rho_whole(t)| over
the output times, rho_whole from the same input without a threshold (same method and tolerances, so
the integrator's own error largely cancels; it is printed as the whole run's floor for reference).

    truncation_study.py [--heom build/openmp/src/heom] [--threads 2] [--depth L] [--t-end T]
                        [--thresholds 1e-2 1e-3 ...] INPUT.toml [INPUT.toml ...]

--depth and --t-end override the inputs'. Prints a Markdown table per input.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def variant(text, depth, t_end, threshold):
    if depth is not None:
        text = re.sub(r"(?m)^depth = \d+", f"depth = {depth}", text)
    if t_end is not None:
        text = re.sub(r"(?m)^t_end = [0-9.eE+-]+", f"t_end = {t_end}", text)
    if threshold is not None:
        text = re.sub(r"(?m)^(depth = \d+)", rf"\1\nthreshold = {threshold!r}", text)
    return text


def run(heom, text, work, name, threads):
    path = os.path.join(work, name + ".toml")
    out = os.path.join(work, name + ".h5")
    with open(path, "w") as f:
        f.write(text)
    start = time.perf_counter()
    result = subprocess.run([heom, "run", path, "-o", out, "--threads", str(threads)], capture_output=True, text=True,
                            env=dict(os.environ, OMP_PROC_BIND="spread", OMP_PLACES="threads"))
    wall = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"{name}: heom failed\n{result.stderr}")
    with h5py.File(out) as f:
        return f["rho"][...], int(f.attrs["num_ados"]), int(f.attrs["steps"]), wall


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--heom", default=os.path.join(HERE, "..", "build", "openmp", "src", "heom"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--depth", type=int)
    parser.add_argument("--t-end", type=float)
    parser.add_argument("--thresholds", type=float, nargs="+", default=[1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        for input_path in args.inputs:
            with open(input_path) as f:
                text = f.read()
            name = os.path.splitext(os.path.basename(input_path))[0]
            whole, ados, steps, wall = run(args.heom, variant(text, args.depth, args.t_end, None), work, "whole",
                                           args.threads)
            print(f"\n{name} (depth {args.depth or 'as input'}, t_end {args.t_end or 'as input'})\n")
            print("| threshold | ADOs kept | share | steps | wall time | speed-up | max error vs whole |")
            print("| --- | --- | --- | --- | --- | --- | --- |")
            print(f"| none | {ados:,} | 1 | {steps} | {wall:.2f} s | 1 | - |")
            for threshold in args.thresholds:
                rho, kept, steps, t = run(args.heom, variant(text, args.depth, args.t_end, threshold), work,
                                          f"t{threshold}", args.threads)
                error = float(np.abs(rho - whole).max())
                print(f"| {threshold:g} | {kept:,} | {kept / ados:.3f} | {steps} | {t:.2f} s | {wall / t:.1f}x | "
                      f"{error:.1e} |", flush=True)


if __name__ == "__main__":
    main()
