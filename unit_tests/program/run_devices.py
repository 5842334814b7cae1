#!/usr/bin/python3
"""`mpirun -n 2 heom run`: one hierarchy split over two ranks gives the bits one rank gives, writes one
output file with the partition in it, and a rank that fails ends both within seconds with its message.
`heom plan --devices N` prints each device's share and names the smallest N that fits.

    run_mpi.py HEOM_EXECUTABLE MPIEXEC EXAMPLE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np


def mpirun(mpiexec, ranks, args, env=None, timeout=300):
    full_env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false", OMPI_ALLOW_RUN_AS_ROOT="1",
                    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **(env or {}))
    return subprocess.run([mpiexec, "-n", str(ranks), "--oversubscribe"] + args, env=full_env, capture_output=True,
                          text=True, timeout=timeout)


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)


def main():
    heom, mpiexec, example_dir = sys.argv[1:4]
    work = tempfile.mkdtemp()
    # The spin-boson example made deep enough (286 ADOs, 5 units of 64) to be split.
    with open(os.path.join(example_dir, "spin_boson.toml")) as f:
        text = f.read()
    text = re.sub(r"depth = \d+", "depth = 10", text)
    text = re.sub(r"t_end = [0-9.]+", "t_end = 5.0", text)
    text = re.sub(r'file = ".*"', 'file = "unused.h5"', text)
    model = os.path.join(work, "spin_boson_deep.toml")
    with open(model, "w") as f:
        f.write(text)

    one, two = os.path.join(work, "one.h5"), os.path.join(work, "two.h5")
    r1 = mpirun(mpiexec, 1, [heom, "run", model, "-o", one])
    check(r1.returncode == 0, "one rank: " + r1.stderr)
    r2 = mpirun(mpiexec, 2, [heom, "run", model, "-o", two])
    check(r2.returncode == 0, "two ranks: " + r2.stderr)
    check(r2.stdout.count("heom 0.") == 1, "two ranks print one report:\n" + r2.stdout)
    check("MPI, 2 ranks" in r2.stdout, "the report names the ranks:\n" + r2.stdout)
    with h5py.File(one) as a, h5py.File(two) as b:
        check(np.array_equal(a["rho"][...], b["rho"][...]), "rho differs between one rank and two")
        check(a.attrs["steps"] == b.attrs["steps"], "the step counts differ")
        check(b.attrs["devices"] == "MPI, 2 ranks", "devices attribute: " + str(b.attrs["devices"]))
        partition = list(b["partition"][...])
        check(len(partition) == 3 and partition[0] == 0 and partition[2] == a.attrs["num_ados"] and
              0 < partition[1] < partition[2], "partition: " + str(partition))
        check(list(a["partition"][...]) == [0, a.attrs["num_ados"]], "one rank's partition")
    print(f"two ranks: rho bit-identical to one rank's over {b_steps(two)} steps; partition {partition}")

    # A rank that throws at its third step ends the job within seconds, with its message.
    failed = os.path.join(work, "failed.h5")
    start = time.monotonic()
    r = mpirun(mpiexec, 2, [heom, "run", model, "-o", failed], env={"HEOM_TEST_FAIL": "1:3"}, timeout=60)
    elapsed = time.monotonic() - start
    check(r.returncode == 1, f"injected failure: exit {r.returncode}, stderr:\n{r.stderr}")
    check("heom: rank 1: run failed: injected failure (HEOM_TEST_FAIL) at step 3" in r.stderr,
          "the failing rank's message:\n" + r.stderr)
    check(not os.path.exists(failed), "a failed run left an output file")
    check(elapsed < 20.0, f"the job took {elapsed:.1f} s to end")  # (mpirun's own start-up included)
    print(f"injected failure on rank 1: exit 1 after {elapsed:.1f} s, message kept")

    # heom plan --devices: a share per device; a device too small for one share names the smallest N.
    fmo = os.path.join(example_dir, "fmo_77k.toml")
    p4 = subprocess.run([heom, "plan", fmo, "--devices", "4", "--device-memory", "64GiB"], capture_output=True, text=True)
    check(p4.returncode == 0, p4.stderr)
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\S+ \S+\s+([0-9.]+) (\w+)$", p4.stdout, re.M)
    check(len(rows) == 4, "four device rows:\n" + p4.stdout)
    check(sum(int(r[1]) for r in rows) == 3060, "the devices own the 3060 ADOs between them")
    scale = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
    largest = max(float(r[4]) * scale[r[5]] for r in rows)
    limit = str(int(largest * 1.02))
    p1 = subprocess.run([heom, "plan", fmo, "--devices", "1", "--device-memory", limit], capture_output=True, text=True)
    check(p1.returncode == 2, f"one device of {limit} bytes: exit {p1.returncode}\n{p1.stderr}")
    fits = re.search(r"the smallest number of devices that fits is (\d+)", p1.stderr)
    check(fits is not None and 2 <= int(fits.group(1)) <= 4, "names the smallest count:\n" + p1.stderr)
    p4 = subprocess.run([heom, "plan", fmo, "--devices", "4", "--device-memory", limit], capture_output=True, text=True)
    check(p4.returncode == 0, "four devices fit:\n" + p4.stderr)
    print(f"plan: one device of {limit} B refused ({fits.group(0)}); four fit")


def b_steps(path):
    with h5py.File(path) as f:
        return int(f.attrs["steps"])


if __name__ == "__main__":
    main()
