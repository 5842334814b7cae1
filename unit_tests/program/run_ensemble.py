#!/usr/bin/python3
"""`heom run` of an [ensemble]:
  - a disordered FMO ensemble (depth 3, seed 7, sigma 50 cm^-1): member 2's recorded H is the one
    the reference script draws with its own Philox, its rho(t) matches QuTiP 4.7's run of that H, and
    a solo run of the recorded H gives the member's bits;
  - the same bits from --devices 1, --devices 3 and mpirun -n 2; /rho is the members' mean;
  - a sweep (temperature x a diagonal element of H x initial states, with disorder): each member's
    parameters and H follow the documented order, and a solo run with those values gives its bits;
  - example/plot.py plots an ensemble.

    run_ensemble.py HEOM_EXECUTABLE EXAMPLE_DIR REFERENCE_DIR [MPIEXEC]
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

TOLERANCE = 1e-7  # heom at rtol 1e-8 against QuTiP at 1e-12 (as for the FMO example)


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)


def run(args, env=None, timeout=600):
    full_env = dict(os.environ, OMP_PROC_BIND="false", **(env or {}))
    r = subprocess.run(args, env=full_env, capture_output=True, text=True, timeout=timeout)
    check(r.returncode == 0, f"{' '.join(args)}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def toml_matrix(m):
    return "[" + ", ".join("[" + ", ".join(repr(float(x)) for x in row) + "]" for row in m) + "]"


def replace_array(text, key, value):
    """`text` with the first `key = [...]` (brackets matched, over lines) replaced by `key = value`."""
    start = text.index(key + " = [")
    depth, end = 0, text.index("[", start)
    for end in range(end, len(text)):
        depth += {"[": 1, "]": -1}.get(text[end], 0)
        if depth == 0:
            break
    return text[:start] + key + " = " + value + text[end + 1:]


def with_hamiltonian(text, h):
    """`text` with [system] hamiltonian replaced by h (real, written exactly)."""
    return replace_array(text, "hamiltonian", toml_matrix(h))


def read(path):
    with h5py.File(path) as f:
        out = {"rho": f["rho"][()], "steps": f.attrs["steps"], "devices": f.attrs["devices"]}
        for name, item in f["ensemble"].items():
            out["ensemble/" + name] = item[()]
        out["attrs"] = dict(f["ensemble"].attrs)
    return out


def solo_rho(heom, work, name, text):
    path = write(os.path.join(work, name + ".toml"), text)
    out = os.path.join(work, name + ".h5")
    run([heom, "run", path, "-o", out], env={"OMP_NUM_THREADS": "2"})
    with h5py.File(out) as f:
        return f["rho"][()]


def fmo_ensemble(heom, example_dir, reference_dir, work, mpiexec):
    with open(os.path.join(example_dir, "fmo_77k.toml")) as f:
        base = f.read()
    base = re.sub(r"depth = \d+", "depth = 3", base)
    base = re.sub(r"\[output\]\nfile = .*\n?", "", base)
    text = base + "\n[ensemble]\nmembers = 4\nseed = 7\nsite_energy_sigma = 50.0\nstore_members = true\n"
    model = write(os.path.join(work, "fmo_ensemble.toml"), text)

    runs = {}
    out = os.path.join(work, "one.h5")
    r = run([heom, "run", model, "-o", out], env={"OMP_NUM_THREADS": "2"})
    check("ensemble    4 members: 4 realizations x 1 sweep points" in r.stdout, "the plan:\n" + r.stdout)
    runs["--devices 1"] = read(out)
    out = os.path.join(work, "three.h5")
    run([heom, "run", model, "-o", out, "--devices", "3"])
    runs["--devices 3"] = read(out)
    if mpiexec:
        out = os.path.join(work, "ranks.h5")
        r = run([mpiexec, "-n", "2", "--oversubscribe", heom, "run", model, "-o", out],
                env={"OMP_NUM_THREADS": "1", "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
        check(r.stdout.count("heom 0.") == 1, "two ranks print one report:\n" + r.stdout)
        runs["mpirun -n 2"] = read(out)
        check(runs["mpirun -n 2"]["devices"] == "MPI, 2 ranks", "devices: " + runs["mpirun -n 2"]["devices"])

    one = runs["--devices 1"]
    for name, other in runs.items():
        for key in ("rho", "ensemble/rho", "ensemble/hamiltonian", "ensemble/steps"):
            check(np.array_equal(one[key], other[key]), f"{key} differs between --devices 1 and {name}")
        check(one["steps"] == other["steps"], f"the step counts differ between --devices 1 and {name}")
    workers = sorted(set(runs["--devices 3"]["ensemble/worker"]))
    check(all(0 <= w < 3 for w in workers), f"workers of --devices 3: {workers}")
    print(f"FMO ensemble: the same bits from {', '.join(runs)}")

    members = one["ensemble/rho"]
    check(members.shape == (4, 101, 7, 7), f"/ensemble/rho shape {members.shape}")
    check(np.max(np.abs(one["rho"] - members.mean(axis=0))) < 1e-15, "/rho is not the members' mean")
    check(one["attrs"]["seed"] == 7 and one["attrs"]["members"] == 4, f"attributes {one['attrs']}")
    check(np.array_equal(one["ensemble/site_energy_sigma"], np.full(7, 50.0)), "site_energy_sigma")
    h = one["ensemble/hamiltonian"]
    offsets = np.array([np.diag(h[i]).real for i in range(4)]) - np.diag(h[0]).real
    check(np.max(np.abs(h[:, 0, 1] - h[0, 0, 1])) == 0, "disorder touched an off-diagonal element")
    check(np.min(np.abs(offsets[1:])) > 0, "the realizations share a site energy")

    # Member 2 against the reference script's draw and QuTiP's run of it.
    with open(os.path.join(reference_dir, "fmo_disordered.json")) as f:
        ref = json.load(f)
    check(ref["seed"] == 7 and ref["realization"] == 2 and ref["site_energy_sigma"] == 50.0, "reference case")
    h_ref = np.array(ref["hamiltonian_file_units"])
    check(np.max(np.abs(h[2] - h_ref)) < 1e-12 * np.max(np.abs(h_ref)),
          f"member 2's H differs from the reference draw by {np.max(np.abs(h[2] - h_ref)):.3g} cm^-1")
    rho_ref = np.array([[[complex(*x) for x in row] for row in s] for s in ref["rho"]])
    error = np.max(np.abs(members[2] - rho_ref))
    check(error < TOLERANCE, f"member 2 differs from QuTiP by {error:.3g}")
    # Batches of two: the same bits on 1 and 3 devices, within the tolerance of the members alone.
    batched = write(os.path.join(work, "fmo_batched.toml"), text.replace("store_members = true", "store_members = true\nbatch = 2"))
    out1, out3 = os.path.join(work, "batched1.h5"), os.path.join(work, "batched3.h5")
    r = run([heom, "run", batched, "-o", out1], env={"OMP_NUM_THREADS": "2"})
    check("in batches of up to 2" in r.stdout, "the plan names the batches:\n" + r.stdout)
    run([heom, "run", batched, "-o", out3, "--devices", "3"])
    b1, b3 = read(out1), read(out3)
    check(np.array_equal(b1["ensemble/rho"], b3["ensemble/rho"]), "batched members differ between 1 and 3 devices")
    difference = np.max(np.abs(b1["ensemble/rho"] - members))
    check(difference < 1e-6, f"batched members differ from unbatched ones by {difference:.3g}")
    steps = b1["ensemble/steps"]
    check(sorted(steps) == sorted([steps[0], steps[0], steps[2], steps[2]]) or len(set(steps)) <= 2,
          f"batched steps {steps}")
    print(f"batches of 2: the same bits on 1 and 3 devices, {difference:.1e} from the unbatched members")

    # A device or rank that fails ends the ensemble at once with its message, and writes nothing.
    failures = [([heom, "run", model, "--devices", "2"], {}, "run failed: device 1: injected failure")]
    if mpiexec:
        failures.append(([mpiexec, "-n", "2", "--oversubscribe", heom, "run", model],
                         {"OMP_NUM_THREADS": "1", "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"},
                         "rank 1: run failed: injected failure"))
    for command, env, message in failures:
        failed = os.path.join(work, "failed.h5")
        start = time.monotonic()
        r = subprocess.run(command + ["-o", failed], env=dict(os.environ, OMP_PROC_BIND="false",
                                                              HEOM_TEST_FAIL="1:3", **env),
                           capture_output=True, text=True, timeout=120)
        elapsed = time.monotonic() - start
        check(r.returncode == 1 and message in r.stderr, f"injected failure: exit {r.returncode}\n{r.stderr}")
        check(not os.path.exists(failed) and elapsed < 30, f"a failed ensemble left a file or took {elapsed:.0f} s")
    print("a failing device and a failing rank end the ensemble with their message, writing nothing")

    solo = solo_rho(heom, work, "member2", with_hamiltonian(base, h[2].real))
    check(np.array_equal(solo, members[2]), "a solo run of member 2's recorded H gives other bits")
    print(f"FMO member 2: H as the reference draws it, {error:.2e} from QuTiP 4.7, bit-identical solo run")


def swept_ensemble(heom, example_dir, work):
    with open(os.path.join(example_dir, "spin_boson.toml")) as f:
        base = f.read()
    base = re.sub(r"depth = \d+", "depth = 4", base)
    base = re.sub(r"t_end = [0-9.]+", "t_end = 4.0", base)
    base = re.sub(r"output_every = [0-9.]+", "output_every = 0.5", base)
    base = re.sub(r"\[output\]\nfile = .*\n?", "", base)
    rho_list = [[[1.0, 0.0], [0.0, 0.0]], [[0.5, 0.5], [0.5, 0.5]]]
    text = base + f"""
[ensemble]
members = 2
seed = 3
site_energy_sigma = [0.1, 0.0]
store_members = true

[[ensemble.sweep]]
parameter = "bath[1].temperature"
values = [0.5, 1.5]

[[ensemble.sweep]]
parameter = "system.hamiltonian[0][0]"
values = [0.25, -0.25, 0.0]

[[ensemble.sweep]]
parameter = "initial_state.rho"
values = [{toml_matrix(rho_list[0])}, {toml_matrix(rho_list[1])}]
"""
    model = write(os.path.join(work, "swept.toml"), text)
    out = os.path.join(work, "swept.h5")
    run([heom, "run", model, "-o", out], env={"OMP_NUM_THREADS": "2"})
    e = read(out)
    names = [x.decode() if isinstance(x, bytes) else x for x in e["ensemble/parameter_names"]]
    check(names == ["bath[1].temperature", "system.hamiltonian[0][0]", "initial_state.rho"], f"names {names}")
    params, h = e["ensemble/parameters"], e["ensemble/hamiltonian"]
    check(params.shape == (24, 3) and e["attrs"]["sweep_points"] == 12, f"parameters {params.shape}")
    # Member i = point * 2 + realization, the first sweep slowest.
    i = 0
    for temperature in (0.5, 1.5):
        for h00 in (0.25, -0.25, 0.0):
            for state in (0, 1):
                for realization in (0, 1):
                    check(list(params[i]) == [temperature, h00, state], f"member {i}: parameters {params[i]}")
                    # Realization r has the same disorder at every point; sigma 0 leaves H_11 alone.
                    offset = h[i, 0, 0].real - h00
                    check(abs(offset - (h[realization, 0, 0].real - 0.25)) < 1e-15, f"member {i}: disorder")
                    check(h[i, 1, 1] == -0.25 and h[i, 0, 1] == 0.5, f"member {i}: H {h[i]}")
                    i += 1
    check(abs(h[0, 0, 0] - h[1, 0, 0]) > 1e-6, "the two realizations have the same disorder")
    mean = e["ensemble/sweep_mean"]
    check(np.max(np.abs(mean[5] - e["ensemble/rho"][10:12].mean(axis=0))) < 1e-15, "sweep_mean of point 5")
    check(np.max(np.abs(e["rho"] - e["ensemble/rho"].mean(axis=0))) < 1e-15, "/rho is not the members' mean")
    # A solo run of member 19's values (temperature 1.5, H_00 = -0.25 plus its disorder, the second state).
    i = 19
    check(list(params[i]) == [1.5, -0.25, 1.0], f"member 19: {params[i]}")
    solo_text = with_hamiltonian(base, h[i].real).replace("temperature = 0.5", "temperature = 1.5")
    solo_text = replace_array(solo_text, "rho", toml_matrix(rho_list[1]))
    check(np.array_equal(solo_rho(heom, work, "member19", solo_text), e["ensemble/rho"][i]),
          "a solo run with member 19's parameters gives other bits")
    print("sweep: 24 members in the documented order with their parameters, disorder and means; "
          "member 19 = its solo run")
    return out


def bias_sweep(heom, example_dir, work):
    """A sweep of one lead's mu: the current into each lead at each bias (/ensemble/current), each
    member's the bits of its solo run, /current their mean."""
    with open(os.path.join(example_dir, "anderson_impurity.toml")) as f:
        base = f.read()
    base = re.sub(r"t_end = [0-9.]+", "t_end = 6.0", base)
    base = re.sub(r"output_every = [0-9.]+", "output_every = 1.0", base)
    base = re.sub(r"\[output\]\nfile = .*\n?", "", base)
    biases = [0.0, 0.5, 1.0]
    text = base + f"""
[ensemble]
members = 1

[[ensemble.sweep]]
parameter = "bath[1].mu"
values = {biases}
"""
    out = os.path.join(work, "bias.h5")
    run([heom, "run", write(os.path.join(work, "bias.toml"), text), "-o", out], env={"OMP_NUM_THREADS": "2"})
    with h5py.File(out) as f:
        current, mean, points = f["ensemble/current"][()], f["current"][()], f["ensemble/sweep_current"][()]
    check(current.shape == (3, 7, 2), f"/ensemble/current has shape {current.shape}")
    check(np.max(np.abs(mean - current.mean(axis=0))) < 1e-15, "/current is not the members' mean")
    check(np.array_equal(points, current), "/ensemble/sweep_current is not each point's (one member's) current")
    # More bias (mu_left up, mu_right = -0.5 fixed) drives more current out of the level into the right lead.
    into_right = current[:, -1, 1].real
    check(into_right[0] < into_right[1] < into_right[2], f"the current into the right lead grows with bias: {into_right}")
    solo = base.replace("mu = 0.5", "mu = 1.0", 1)
    path = os.path.join(work, "bias_solo.h5")
    run([heom, "run", write(os.path.join(work, "bias_solo.toml"), solo), "-o", path], env={"OMP_NUM_THREADS": "2"})
    with h5py.File(path) as f:
        check(np.array_equal(f["current"][()], current[2]), "member 2's currents are not its solo run's")
    print(f"bias sweep: the current into the right lead at mu_left = {biases}: {into_right}; member 2 = its solo run")


def main():
    heom, example_dir, reference_dir = sys.argv[1:4]
    mpiexec = sys.argv[4] if len(sys.argv) > 4 else None
    work = tempfile.mkdtemp()
    fmo_ensemble(heom, example_dir, reference_dir, work, mpiexec)
    swept = swept_ensemble(heom, example_dir, work)
    bias_sweep(heom, example_dir, work)
    png = os.path.join(work, "swept.png")
    subprocess.run([sys.executable, os.path.join(example_dir, "plot.py"), swept, png], check=True)
    check(os.path.getsize(png) > 10000, "example/plot.py wrote no plot of the ensemble")
    print("example/plot.py plots the ensemble")


if __name__ == "__main__":
    main()
