#!/usr/bin/python3
"""`heom run` of ensembles that stream (members made when scheduled, results written by rank 0 in
member order as they arrive):
  - a disordered spin-boson ensemble with two sweeps (uneven: 5 realizations x 3 points, member costs
    that differ), store_members, batch 1 and 2: every dataset and attribute the same bits from
    --devices 1, --devices 3, mpirun -n 2 and -n 3;
  - /rho, /ensemble/sweep_mean, /current and /ensemble/sweep_current are the members' rows summed in
    member order and divided as the program divides (bit for bit);
  - leads (/ensemble/current) the same over ranks;
  - a failing rank or device leaves neither the file nor its temporary file.
With HEOM_REFERENCE_PROGRAM set (a heom built before ensembles streamed), every dataset also equals
its output bit for bit (not in CI: there is no such binary there).

    run_ensemble_stream.py HEOM_EXECUTABLE EXAMPLE_DIR [MPIEXEC]
"""
import os
import re
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

MPI_ENV = {"OMP_NUM_THREADS": "1", "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# What legitimately differs between runs of one input.
VARYING = {"wall_time_s", "devices", "threads", "worker", "heom_version"}


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)


def run(args, env=None, timeout=600):
    r = subprocess.run(args, env=dict(os.environ, OMP_PROC_BIND="false", **(env or {})), capture_output=True,
                       text=True, timeout=timeout)
    check(r.returncode == 0, f"{' '.join(args)}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def contents(path):
    """Every dataset and attribute of the file, by name."""
    out = {}
    with h5py.File(path) as f:
        for k, v in f.attrs.items():
            out["@" + k] = v
        for k, v in f["ensemble"].attrs.items():
            out["ensemble@" + k] = v

        def visit(name, item):
            if isinstance(item, h5py.Dataset):
                out[name] = item[()]
        f.visititems(visit)
    return out


def same(a, b, what):
    keys = set(a) | set(b)
    check(set(a) == set(b), f"{what}: the files hold different items: {sorted(set(a) ^ set(b))}")
    for k in sorted(keys):
        if k.split("@")[-1].split("/")[-1] in VARYING:
            continue
        x, y = np.asarray(a[k]), np.asarray(b[k])
        check(x.dtype == y.dtype and x.shape == y.shape, f"{what}: {k} is {x.dtype}{x.shape} and {y.dtype}{y.shape}")
        if x.dtype == object:  # (strings: compare the values, not the pointers)
            check(x.tolist() == y.tolist(), f"{what}: {k} differs")
        else:
            check(x.tobytes() == y.tobytes(), f"{what}: {k} differs")


def member_order_mean(rows, count):
    """Rows summed from zero in member order, real and imaginary parts divided by `count` (as C++ does)."""
    total = np.zeros(rows.shape[1:], dtype=complex)
    for r in rows:
        total = total + r
    return total.real / count + 1j * (total.imag / count)


def spin_boson_ensemble(example_dir, work, batch):
    with open(os.path.join(example_dir, "spin_boson.toml")) as f:
        text = f.read()
    text = re.sub(r"depth = \d+", "depth = 3", text)
    text = re.sub(r"t_end = [0-9.]+", "t_end = 3.0", text)
    text = re.sub(r"output_every = [0-9.]+", "output_every = 0.5", text)
    text = re.sub(r"\[output\]\nfile = .*\n?", "", text)
    text += f"""
[ensemble]
members = 5
seed = 21
site_energy_sigma = [0.3, 0.1]
store_members = true
batch = {batch}

[[ensemble.sweep]]
parameter = "bath[1].temperature"
values = [0.2, 1.0, 3.0]

[[ensemble.sweep]]
parameter = "initial_state.rho"
values = [[[1.0, 0.0], [0.0, 0.0]], [[0.5, 0.5], [0.5, 0.5]]]
"""
    path = os.path.join(work, f"stream_b{batch}.toml")
    with open(path, "w") as f:
        f.write(text)
    return path


def runs(heom, model, work, name, mpiexec, reference):
    """The outputs of `model` from each way of running it."""
    out = {}
    ways = [("--devices 1", [heom, "run", model], {"OMP_NUM_THREADS": "2"}),
            ("--devices 3", [heom, "run", model, "--devices", "3"], {"OMP_NUM_THREADS": "3"})]
    if mpiexec:
        for n in (2, 3):
            ways.append((f"mpirun -n {n}", [mpiexec, "-n", str(n), "--oversubscribe", heom, "run", model], MPI_ENV))
    if reference:
        ways.append(("the reference program", [reference, "run", model], {"OMP_NUM_THREADS": "2"}))
    for way, command, env in ways:
        path = os.path.join(work, f"{name}_{len(out)}.h5")
        run(command + ["-o", path], env=env)
        check(not os.path.exists(path + ".tmp"), f"{way} left {path}.tmp")
        out[way] = contents(path)
    first = next(iter(out))
    for way, c in out.items():
        same(out[first], c, f"{name}: {first} and {way}")
    return out[first], list(out)


def main():
    heom, example_dir = sys.argv[1:3]
    mpiexec = sys.argv[3] if len(sys.argv) > 3 else None
    reference = os.environ.get("HEOM_REFERENCE_PROGRAM")
    work = tempfile.mkdtemp()

    for batch in (1, 2):
        c, ways = runs(heom, spin_boson_ensemble(example_dir, work, batch), work, f"batch{batch}", mpiexec, reference)
        members = c["ensemble/rho"]
        check(members.shape == (30, 7, 2, 2), f"/ensemble/rho has shape {members.shape}")
        check(c["rho"].tobytes() == member_order_mean(members, 30).tobytes(), "/rho is not the member-order mean")
        for point in range(6):
            mean = member_order_mean(members[point * 5:(point + 1) * 5], 5)
            check(c["ensemble/sweep_mean"][point].tobytes() == mean.tobytes(), f"sweep_mean of point {point}")
        check(len(set(c["ensemble/steps"])) > 2, f"the members' costs do not differ: {c['ensemble/steps']}")
        print(f"batch {batch}: the same bits from {', '.join(ways)}; means in member order")

    # Leads: each member's currents and their means, the same over ranks.
    with open(os.path.join(example_dir, "anderson_impurity.toml")) as f:
        base = f.read()
    base = re.sub(r"t_end = [0-9.]+", "t_end = 2.0", base)
    base = re.sub(r"output_every = [0-9.]+", "output_every = 1.0", base)
    base = re.sub(r"\[output\]\nfile = .*\n?", "", base)
    leads = os.path.join(work, "leads.toml")
    with open(leads, "w") as f:
        f.write(base + "\n[ensemble]\nmembers = 1\n\n[[ensemble.sweep]]\nparameter = \"bath[1].mu\"\n"
                "values = [0.0, 0.5, 1.0, 1.5]\n")
    c, ways = runs(heom, leads, work, "leads", mpiexec, reference)
    current = c["ensemble/current"]
    check(current.shape[0] == 4, f"/ensemble/current has shape {current.shape}")
    check(c["current"].tobytes() == member_order_mean(current, 4).tobytes(), "/current is not the member-order mean")
    check(c["ensemble/sweep_current"].tobytes() == member_order_mean(current[:, None], 1)[:, 0].tobytes()
          or np.array_equal(c["ensemble/sweep_current"], current), "/ensemble/sweep_current")
    print(f"leads: the same bits from {', '.join(ways)}")

    # A failing rank or device: exit 1 with its message, no file, no temporary file.
    model = spin_boson_ensemble(example_dir, work, 1)
    failures = [([heom, "run", model, "--devices", "3"], {"OMP_NUM_THREADS": "3"}, "device 1: injected failure")]
    if mpiexec:
        failures += [([mpiexec, "-n", "3", "--oversubscribe", heom, "run", model], MPI_ENV,
                      f"rank {rank}: run failed: injected failure") for rank in (0, 2)]
    for command, env, message in failures:
        failed = os.path.join(work, "failed.h5")
        rank = message.split(":")[0].split()[-1]
        r = subprocess.run(command + ["-o", failed], capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, OMP_PROC_BIND="false", HEOM_TEST_FAIL=f"{rank}:20", **env))
        check(r.returncode != 0 and message in r.stderr, f"{' '.join(command)}: exit {r.returncode}\n{r.stderr}")
        check(not os.path.exists(failed), f"{' '.join(command)}: a failed ensemble left its file")
        # Rank 0 killed by the launcher after another rank's failure removes FILE.tmp on SIGTERM, which
        # may come after the launcher has returned; a SIGKILL that follows before it runs (a loaded
        # machine) leaves it (docs/program.md).
        killed_by_launcher = bool(mpiexec) and command[0] == mpiexec and rank != "0"
        for _ in range(50 if killed_by_launcher else 0):
            if not os.path.exists(failed + ".tmp"):
                break
            time.sleep(0.1)
        check(killed_by_launcher or not os.path.exists(failed + ".tmp"),
              f"{' '.join(command)}: a failed ensemble left its temporary file")
        if os.path.exists(failed + ".tmp"):
            print(f"{' '.join(command)}: FILE.tmp left by rank 0, killed by the launcher")
            os.remove(failed + ".tmp")
    print("a failing device or rank (0 or another) ends the ensemble with its message and leaves no output file")


if __name__ == "__main__":
    main()
