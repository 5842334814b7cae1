#!/usr/bin/env python3
"""Deterministic measures of the adaptive methods: generator applications at equal error.

For each input and method, runs `heom run` at each tolerance (atol = rtol / 100) and reads the
applications, steps and retaken steps the output records, and the error against a tight reference
(dopri5 at rtol 1e-12): max |rho - rho_ref| for dynamics, max |I - I_ref| / max |I_ref| for spectra.
These counts do not depend on the machine or on what else runs on it; wall time does, so it is
printed for orientation only. `--callgrind` also runs each variant under valgrind's callgrind on one
thread and divides the instructions of the propagation by the applications and by the steps (also deterministic; about
50x slower than the run itself, so give it the smaller inputs).

    /usr/bin/python3 perf_tests/method_counts.py [--heom build/openmp/src/heom] [--threads 2]
        [--methods exp-adams chebyshev] [--rtol 1e-6 1e-8 1e-10] [--callgrind] [--json out.json]
        [INPUT.toml ...]

Default inputs: FMO at depth 4 (example/fmo_77k.toml) and 5 (perf_tests/inputs/fmo_depth5.toml),
the deep spin-boson, QuTiP's single-impurity tutorial, FMO's absorption (ground columns) and the
SIAM's density of states.
"""
import argparse
import json
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
DEFAULT_INPUTS = ["example/fmo_77k.toml", "perf_tests/inputs/fmo_depth5.toml", "perf_tests/inputs/spin_boson_deep.toml",
                  "perf_tests/inputs/siam_tutorial.toml", "example/fmo_absorption.toml",
                  "perf_tests/inputs/siam_dos.toml"]


def with_settings(text, method, rtol, atol):
    """The input text with [dynamics]' method and tolerances replaced."""
    for key in ("method", "rtol", "atol", "max_order"):
        text = re.sub(rf"(?m)^{key}\s*=.*$", "", text)
    return text.replace("[dynamics]", f'[dynamics]\nmethod = "{method}"\nrtol = {rtol}\natol = {atol}', 1)


def run(command, env=None):
    start = time.perf_counter()
    p = subprocess.run(command, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({p.returncode}):\n{p.stderr}")
    return time.perf_counter() - start, p


def result(path):
    """(the compared array, whether it is a spectrum, the output's attributes)."""
    with h5py.File(path, "r") as f:
        if "spectrum" in f:
            return np.asarray(f["spectrum"]["intensity"][()]), True, dict(f.attrs)
        return np.asarray(f["rho"][()]), False, dict(f.attrs)


def error(values, reference, spectrum):
    difference = np.max(np.abs(values - reference))
    return float(difference / np.max(np.abs(reference)) if spectrum else difference)


def instructions(heom, path, work):
    """Instructions callgrind counts in the propagation (Propagator::run, whatever it calls), on one
    thread: the program's start, the input and the output are left out."""
    out = os.path.join(work, "callgrind.out")
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--toggle-collect=heom::Propagator<*>::run(*",
         heom, "run", path, "-o",
         os.path.join(work, "callgrind.h5"), "--threads", "1"], env)
    summary = next(line for line in open(out) if line.startswith("summary:") or line.startswith("totals:"))
    return int(summary.split()[1])


def study(args, input_path, work):
    text = open(input_path).read()
    cfg = tomllib.loads(text)
    name = os.path.splitext(os.path.basename(input_path))[0]
    span = cfg["dynamics"]["t_end"]
    unit = "ps" if cfg.get("units") == "spectroscopy" else "unit of time"
    per = 1000.0 if unit == "ps" else 1.0
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OMP_PROC_BIND="spread", OMP_PLACES="threads")

    tight = os.path.join(work, name + "_tight.toml")
    open(tight, "w").write(with_settings(text, "dopri5", 1e-12, 1e-14))
    run([args.heom, "run", tight, "-o", os.path.join(work, name + "_ref.h5"), "--threads", str(args.threads)], env)
    reference, spectrum, attrs = result(os.path.join(work, name + "_ref.h5"))
    rows = []
    for method in args.methods:
        for rtol in args.rtol:
            path = os.path.join(work, f"{name}_{method}_{rtol}.toml")
            open(path, "w").write(with_settings(text, method, rtol, rtol / 100))
            out = os.path.join(work, f"{name}_{method}_{rtol}.h5")
            wall, _ = run([args.heom, "run", path, "-o", out, "--threads", str(args.threads)], env)
            values, _, a = result(out)
            row = {"method": method, "rtol": rtol, "atol": rtol / 100, "applications": int(a["rhs_evaluations"]),
                   "applications_per": int(a["rhs_evaluations"]) * per / span, "steps": int(a["steps"]),
                   "retaken": int(a["rejected_steps"]), "error": error(values, reference, spectrum), "wall_s": wall}
            if args.callgrind:
                ir = instructions(args.heom, path, work)
                row.update(instructions=ir, instructions_per_application=ir / max(row["applications"], 1),
                           instructions_per_step=ir / max(row["steps"], 1))
            rows.append(row)
            print(f"  {name:16s} {method:10s} rtol {rtol:7.0e}: {row['applications']:7d} applications "
                  f"({row['applications_per']:9.1f} per {unit}), {row['steps']:5d} steps ({row['retaken']} retaken), "
                  f"error {row['error']:.1e}" + (f", {row['instructions_per_application'] / 1e6:.3g} M instructions "
                                                  f"per application" if args.callgrind else "") +
                  f"  [{wall:.2f} s]", flush=True)
    return {"input": os.path.relpath(input_path, ROOT), "ados": int(attrs["num_ados"]), "span": span, "per": unit,
            "error_of": "intensity, relative to its largest" if spectrum else "max |rho - rho_ref|", "runs": rows}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("inputs", nargs="*", default=[os.path.join(ROOT, i) for i in DEFAULT_INPUTS])
    p.add_argument("--heom", default=os.path.join(ROOT, "build/openmp/src/heom"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--methods", nargs="+", default=["exp-adams", "chebyshev"])
    p.add_argument("--rtol", nargs="+", type=float, default=[1e-6, 1e-8, 1e-10])
    p.add_argument("--callgrind", action="store_true", help="instructions per application (valgrind, one thread)")
    p.add_argument("--json", help="write every figure here")
    args = p.parse_args()
    cases = []
    with tempfile.TemporaryDirectory() as work:
        for input_path in args.inputs:
            cases.append(study(args, os.path.abspath(input_path), work))
    if args.json:
        machine = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((line.split(":", 1)[1].strip() for line in machine.splitlines() if "Model name" in line), "?")
        json.dump({"cpu": model, "threads": args.threads, "cases": cases}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
