#!/usr/bin/python3
"""[hierarchy] threshold (importance truncation) in the heom program: `heom plan` prints the kept ADOs
against the whole triangle; rho(t) approaches the whole hierarchy's as the threshold falls (1e-2,
1e-4, 1e-8), with fewer ADOs the higher it is; a truncated hierarchy split over two devices (and two
MPI ranks where an MPI launcher is given) gives the bits of one device.

    run_truncation.py HEOM_EXECUTABLE EXAMPLE_DIR [MPIEXEC]
"""
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)


def run(args, env=None):
    full_env = dict(os.environ, OMP_PROC_BIND="false", **(env or {}))
    result = subprocess.run(args, env=full_env, capture_output=True, text=True, timeout=300)
    check(result.returncode == 0, f"{' '.join(args)}: exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def spin_boson(example_dir, work, threshold, terms=2):
    """The spin-boson example at depth 10 (286 ADOs; 8,008 with 5 Matsubara terms), truncated at
    `threshold` (None: whole)."""
    with open(os.path.join(example_dir, "spin_boson.toml")) as f:
        text = f.read()
    text = text.replace("terms = 2", f"terms = {terms}")
    text = re.sub(r"depth = \d+", "depth = 10" + ("" if threshold is None else f"\nthreshold = {threshold!r}"), text)
    text = re.sub(r"t_end = [0-9.]+", "t_end = 5.0", text)
    text = re.sub(r'file = ".*"', 'file = "unused.h5"', text)
    path = os.path.join(work, f"spin_boson_{terms}_{threshold}.toml")
    with open(path, "w") as f:
        f.write(text)
    return path


def main():
    heom, example_dir = sys.argv[1], sys.argv[2]
    mpiexec = sys.argv[3] if len(sys.argv) > 3 else ""
    with tempfile.TemporaryDirectory() as work:
        whole_input = spin_boson(example_dir, work, None)
        whole_out = os.path.join(work, "whole.h5")
        run([heom, "run", whole_input, "-o", whole_out, "--threads", "2"])
        with h5py.File(whole_out) as f:
            whole_rho, whole_ados = f["rho"][...], int(f.attrs["num_ados"])
        check(whole_ados == 286, f"the whole hierarchy has {whole_ados} ADOs")

        errors, counts = [], []
        for threshold in (1e-2, 1e-4, 1e-8):
            path = spin_boson(example_dir, work, threshold)
            plan = run([heom, "plan", path]).stdout
            kept = re.search(r"importance threshold \S+ keeps (\d+) of the (\d+) ADOs up to depth 10", plan)
            check(kept is not None, "heom plan does not print the kept ADOs:\n" + plan)
            check(int(kept.group(2)) == whole_ados, "the whole triangle's count: " + kept.group(2))
            out = os.path.join(work, f"truncated_{threshold}.h5")
            run([heom, "run", path, "-o", out, "--threads", "2"])
            with h5py.File(out) as f:
                check(int(f.attrs["num_ados"]) == int(kept.group(1)), "num_ados differs from the plan's kept count")
                counts.append(int(f.attrs["num_ados"]))
                errors.append(float(np.abs(f["rho"][...] - whole_rho).max()))
        print("thresholds 1e-2, 1e-4, 1e-8: ADOs", counts, "errors", errors)
        check(counts[0] < counts[1] < counts[2] < whole_ados, f"kept ADOs do not grow as the threshold falls: {counts}")
        check(errors[0] > errors[1] > errors[2], f"errors do not fall with the threshold: {errors}")
        check(errors[0] > 1e-6, f"truncating at 1e-2 changes nothing measurable: {errors[0]}")
        check(errors[2] < 1e-5, f"threshold 1e-8 is far from the whole hierarchy: {errors[2]}")

        # Split over two devices, and two ranks: the bits of one device (186 of 8,008 ADOs kept: three
        # units of the partition, so that both parts own some).
        path = spin_boson(example_dir, work, 1e-12, terms=5)
        one = os.path.join(work, "one_device.h5")
        run([heom, "run", path, "-o", one, "--threads", "2"])
        two = os.path.join(work, "two_devices.h5")
        run([heom, "run", path, "-o", two, "--threads", "2", "--devices", "2"])
        splits = [two]
        if mpiexec:
            ranks = os.path.join(work, "two_ranks.h5")
            run(mpiexec.split() + ["-n", "2", "--oversubscribe", heom, "run", path, "-o", ranks, "--threads", "1"],
                env={"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMP_NUM_THREADS": "1"})
            splits.append(ranks)
        with h5py.File(one) as a:
            for split in splits:
                with h5py.File(split) as b:
                    check(np.array_equal(a["rho"][...], b["rho"][...]), f"{os.path.basename(split)}: rho differs")
                    partition = list(b["partition"][...])
                    check(len(partition) == 3 and 0 < partition[1] < partition[2] == a.attrs["num_ados"] == 186,
                          f"partition {partition}")
    print("PASS")


if __name__ == "__main__":
    main()
