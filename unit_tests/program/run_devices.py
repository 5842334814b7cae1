#!/usr/bin/python3
"""`heom run --devices 2` and `mpirun -n 2 heom run`: one hierarchy split over two devices (of one
process, or one per rank) gives the bits one device gives, writes one output file with the partition
in it, and a device that fails ends the others within seconds with its message. `heom plan --devices N`
prints each device's share and names the smallest N that fits.

    run_devices.py HEOM_EXECUTABLE EXAMPLE_DIR [MPIEXEC]
"""
import os
import re
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)


def run(args, env=None, timeout=300):
    full_env = dict(os.environ, OMP_PROC_BIND="false", **(env or {}))
    return subprocess.run(args, env=full_env, capture_output=True, text=True, timeout=timeout)


def deep_spin_boson(example_dir, work):
    """The spin-boson example made deep enough (286 ADOs, 5 units of 64) to be split."""
    with open(os.path.join(example_dir, "spin_boson.toml")) as f:
        text = f.read()
    text = re.sub(r"depth = \d+", "depth = 10", text)
    text = re.sub(r"t_end = [0-9.]+", "t_end = 5.0", text)
    text = re.sub(r'file = ".*"', 'file = "unused.h5"', text)
    model = os.path.join(work, "spin_boson_deep.toml")
    with open(model, "w") as f:
        f.write(text)
    return model


def check_split_run(one, split, devices):
    with h5py.File(one) as a, h5py.File(split) as b:
        check(np.array_equal(a["rho"][...], b["rho"][...]), f"rho differs between one device and {devices}")
        check(a.attrs["steps"] == b.attrs["steps"], "the step counts differ")
        check(b.attrs["devices"] == devices, "devices attribute: " + str(b.attrs["devices"]))
        partition = list(b["partition"][...])
        check(len(partition) == 3 and partition[0] == 0 and partition[2] == a.attrs["num_ados"] and
              0 < partition[1] < partition[2], "partition: " + str(partition))
        check(list(a["partition"][...]) == [0, a.attrs["num_ados"]], "one device's partition")
        return int(b.attrs["steps"]), partition


def check_failure(result, elapsed, who, path):
    check(result.returncode == 1, f"injected failure: exit {result.returncode}, stderr:\n{result.stderr}")
    check(f"heom: {who}injected failure (HEOM_TEST_FAIL) at step 3" in result.stderr,
          "the failing device's message:\n" + result.stderr)
    check(not os.path.exists(path), "a failed run left an output file")
    check(elapsed < 20.0, f"the job took {elapsed:.1f} s to end")  # (mpirun's own start-up included)


def main():
    heom, example_dir = sys.argv[1:3]
    mpiexec = sys.argv[3] if len(sys.argv) > 3 else None
    work = tempfile.mkdtemp()
    model = deep_spin_boson(example_dir, work)
    one = os.path.join(work, "one.h5")
    r = run([heom, "run", model, "-o", one], env={"OMP_NUM_THREADS": "1"})
    check(r.returncode == 0, "one device: " + r.stderr)

    # Two simulated devices in one process.
    two = os.path.join(work, "two_devices.h5")
    r = run([heom, "run", model, "-o", two, "--devices", "2"])
    check(r.returncode == 0, "--devices 2: " + r.stderr)
    check("2 devices in one process" in r.stdout, "the report names the devices:\n" + r.stdout)
    steps, partition = check_split_run(one, two, "2 devices in one process")
    print(f"--devices 2: rho bit-identical to one device's over {steps} steps; partition {partition}")
    failed = os.path.join(work, "failed_devices.h5")
    start = time.monotonic()
    r = run([heom, "run", model, "-o", failed, "--devices", "2"], env={"HEOM_TEST_FAIL": "1:3"}, timeout=60)
    check_failure(r, time.monotonic() - start, "run failed: device 1: ", failed)
    print("--devices 2, injected failure on device 1: exit 1, message kept")

    if mpiexec:
        mpi_env = {"OMP_NUM_THREADS": "1", "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        mpirun = [mpiexec, "-n", "2", "--oversubscribe"]
        two = os.path.join(work, "two_ranks.h5")
        r = run(mpirun + [heom, "run", model, "-o", two], env=mpi_env)
        check(r.returncode == 0, "two ranks: " + r.stderr)
        check(r.stdout.count("heom 0.") == 1, "two ranks print one report:\n" + r.stdout)
        steps, partition = check_split_run(one, two, "MPI, 2 ranks")
        print(f"two ranks: rho bit-identical to one device's over {steps} steps; partition {partition}")
        # A rank that throws at its third step ends the job within seconds, with its message.
        failed = os.path.join(work, "failed_ranks.h5")
        start = time.monotonic()
        r = run(mpirun + [heom, "run", model, "-o", failed], env=dict(mpi_env, HEOM_TEST_FAIL="1:3"), timeout=60)
        check_failure(r, time.monotonic() - start, "rank 1: run failed: ", failed)
        print("two ranks, injected failure on rank 1: exit 1, message kept")
        r = run(mpirun + [heom, "run", model, "--devices", "2", "-o", failed], env=mpi_env)
        check(r.returncode == 2 and "--devices: under mpirun" in r.stderr, "--devices under mpirun:\n" + r.stderr)

    # heom plan --devices: a share per device; a device too small for one share names the smallest N.
    fmo = os.path.join(example_dir, "fmo_77k.toml")
    p4 = run([heom, "plan", fmo, "--devices", "4", "--device-memory", "64GiB"])
    check(p4.returncode == 0, p4.stderr)
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\S+ \S+\s+([0-9.]+) (\w+)$", p4.stdout, re.M)
    check(len(rows) == 4, "four device rows:\n" + p4.stdout)
    check(sum(int(r[1]) for r in rows) == 3060, "the devices own the 3060 ADOs between them")
    scale = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
    largest = max(float(r[4]) * scale[r[5]] for r in rows)
    limit = str(int(largest * 1.02))
    p1 = run([heom, "plan", fmo, "--devices", "1", "--device-memory", limit])
    check(p1.returncode == 2, f"one device of {limit} bytes: exit {p1.returncode}\n{p1.stderr}")
    fits = re.search(r"the smallest number of devices that fits is (\d+)", p1.stderr)
    check(fits is not None and 2 <= int(fits.group(1)) <= 4, "names the smallest count:\n" + p1.stderr)
    p4 = run([heom, "plan", fmo, "--devices", "4", "--device-memory", limit])
    check(p4.returncode == 0, "four devices fit:\n" + p4.stderr)
    bad = run([heom, "plan", fmo, "--devices", "2", "--device-memory", "lots"])
    check(bad.returncode == 2 and "--device-memory" in bad.stderr, "a bad size:\n" + bad.stderr)

    # GPUs are chosen in a CUDA build only, among those there are: a CPU build says so, and a CUDA build
    # names the missing GPU, before anything starts (exit 2, no output).
    chosen = os.path.join(work, "chosen_gpus.h5")
    r = run([heom, "run", model, "-o", chosen, "--devices", "2", "--device-ids", "0,99"])
    check(r.returncode == 2 and ("--device-ids: chooses GPUs" in r.stderr or "--device-ids: GPU 99 is not there" in r.stderr)
          and not os.path.exists(chosen), "--device-ids 0,99:\n" + r.stderr)
    r = run([heom, "run", model, "-o", chosen, "--devices", "2", "--device-ids", "0,-1"])
    check(r.returncode == 2 and "--device-ids" in r.stderr, "a negative GPU id:\n" + r.stderr)
    print("--device-ids: a GPU that is not there (or a CPU build), and a negative id, refused with exit 2")
    print(f"plan: one device of {limit} B refused ({fits.group(0)}); four fit")


if __name__ == "__main__":
    main()
