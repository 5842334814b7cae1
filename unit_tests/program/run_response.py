#!/usr/bin/python3
"""The third-order response and 2D spectra through the heom program, read back with h5py:

- a dimer with its two-exciton state ([response], polarization "xyxy" in the lab frame) against
  QuTiP 4.7 propagating each pathway (unit_tests/reference/response_dimer_xyxy.json);
- /spectrum2d against the transform written out here (explicit sums at the frequencies written,
  with the trapezoidal weights, the half Hann window and the rephasing signal's w1 flipped), the
  absorptive spectrum as the real part of the signals' sum, and its sum rule
  sum S dw1 dw3 = pi^2 R(t3 = 0, T, t1 = 0);
- `heom plan` counts the propagations;
- with an [ensemble] (static disorder) /response/values is the mean of its members' responses, each
  run alone with the member's H from /ensemble/hamiltonian, and the same bits under mpirun -n 2.

    run_response.py HEOM_EXECUTABLE REFERENCE_DIR [MPIEXEC]
"""
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def dimer_input(ref):
    e, j, b = ref["site_energies"], ref["coupling"], ref["bath"]
    baths = ""
    for s in range(2):
        q = [[0.0] * 3 for _ in range(3)]
        q[1 + s][1 + s] = 1.0
        baths += f"""
[[bath]]
kind = "drude-lorentz"
expansion = "pade"
coupling = {q}
lambda = {b["lambda"]}
gamma = {b["gamma"]}
temperature = {b["temperature"]}
terms = {b["terms"]}
"""
    t1, t3 = ref["t1"], ref["t3"]
    return f"""units = "natural"
[system]
hamiltonian = [[0.0, 0.0, 0.0], [0.0, {e[0]}, {j}], [0.0, {j}, {e[1]}]]
{baths}
[hierarchy]
depth = {ref["depth"]}
[dynamics]
rtol = 1e-11
atol = 1e-13
[response]
dipoles = {ref["dipoles"]}
waiting_times = {ref["waiting_times"]}
t1_step = {t1[1]}
t1_points = {len(t1)}
t3_step = {t3[1]}
t3_points = {len(t3)}
polarization = "xyxy"
isotropic = false
biexciton_shift = {ref["biexciton_shift"]}
window = "hann"
padding = 2
"""


def run(heom, work, name, text, launcher=()):
    """heom run of `text` in work/name.toml; /response/values and the file."""
    open(os.path.join(work, name + ".toml"), "w").write(text)
    env = dict(os.environ)
    if launcher:  # one thread per rank
        env.update(OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run([*launcher, heom, "run", name + ".toml", "-o", name + ".h5"], cwd=work, capture_output=True,
                       text=True, timeout=900, env=env)
    if r.returncode != 0:
        sys.exit(f"heom run {name} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    f = h5py.File(os.path.join(work, name + ".h5"), "r")
    return f["response/values"][()], f


def ensemble_checks(heom, ref, work, mpiexec):
    base = dimer_input(ref).replace("t1_points = 16", "t1_points = 4").replace("t3_points = 16", "t3_points = 8")
    ensemble = "\n[ensemble]\nmembers = 3\nseed = 11\nsite_energy_sigma = [0.0, 0.2, 0.2]\n"
    mean, f = run(heom, work, "ensemble", base + ensemble)
    hamiltonians = f["ensemble/hamiltonian"][()]
    check(hamiltonians.shape == (3, 3, 3) and f["ensemble"].attrs["members"] == 3,
          "/ensemble holds the three members' H")
    total = np.zeros_like(mean)
    for m, h in enumerate(hamiltonians):
        rows = ", ".join("[" + ", ".join(repr(float(x.real)) for x in row) + "]" for row in h)
        solo = base.replace(base[base.index("hamiltonian = "):base.index("\n", base.index("hamiltonian = "))],
                            f"hamiltonian = [{rows}]")
        total = total + run(heom, work, f"member{m}", solo)[0]
    solo_mean = total / 3
    scale = np.abs(mean).max()
    check(np.abs(mean - solo_mean).max() <= 1e-14 * scale,
          f"the ensemble's R is the mean of its members' run alone (difference {np.abs(mean - solo_mean).max():.1e})")
    plain = run(heom, work, "plain", base)[0]
    check(np.abs(mean - plain).max() > 1e-3 * scale, "the disorder changes R")
    if mpiexec:
        ranks, g = run(heom, work, "ensemble_ranks", base + ensemble, launcher=(mpiexec, "-n", "2", "--oversubscribe"))
        workers = list(g["ensemble/worker"][()])
        check(np.array_equal(ranks, mean) and set(workers) <= {0, 1} and len(workers) == 3,
              f"mpirun -n 2 gives the same bits (the members ran on ranks {workers})")


def weights(n):
    """The trapezoidal rule's weights times the half Hann window cos^2(pi k / (2 (n - 1)))."""
    w = np.cos(0.5 * np.pi * np.arange(n) / (n - 1)) ** 2
    w[0] *= 0.5
    w[-1] *= 0.5
    return w


def main():
    heom, reference = sys.argv[1], sys.argv[2]
    mpiexec = sys.argv[3] if len(sys.argv) > 3 else None
    ref = json.load(open(os.path.join(reference, "response_dimer_xyxy.json")))
    with tempfile.TemporaryDirectory() as work:
        open(os.path.join(work, "dimer.toml"), "w").write(dimer_input(ref))
        plan = subprocess.run([heom, "plan", "dimer.toml"], cwd=work, capture_output=True, text=True, timeout=300)
        check(plan.returncode == 0 and "propagations: 4 through t1, 96 through the waiting times, 192 through t3"
              in plan.stdout, "heom plan counts the propagations")
        r = subprocess.run([heom, "run", "dimer.toml", "-o", "dimer.h5"], cwd=work, capture_output=True, text=True,
                           timeout=900)
        if r.returncode != 0:
            sys.exit(f"heom run failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
        f = h5py.File(os.path.join(work, "dimer.h5"), "r")
        values = f["response/values"][()]
        expected = np.array([complex(*z) for z in ref["values"]]).reshape(values.shape)
        error = np.abs(values - expected).max()
        check(error < 1e-7 and np.abs(expected).max() > 0.5,
              f"/response/values against QuTiP: max difference {error:.2e} (|R| up to {np.abs(expected).max():.3f})")
        check([s.decode() if isinstance(s, bytes) else s for s in f["response/signals"][()]] == ref["signals"] and
              [p.decode() if isinstance(p, bytes) else p for p in f["response/pathways"][()]] == ref["pathways"],
              "/response names its signals and pathways in order")

        t1, t3 = f["response/t1"][()], f["response/t3"][()]
        w1, w3 = f["spectrum2d/omega1"][()], f["spectrum2d/omega3"][()]
        spectra = f["spectrum2d/signal_spectra"][()]
        absorptive = f["spectrum2d/absorptive"][()]
        check(len(w1) == 2 * len(t1) and len(w3) == 2 * len(t3), "padding 2 doubles each frequency axis")
        weighted = np.outer(weights(len(t1)), weights(len(t3)))
        worst, total = 0.0, None
        for s, signal in enumerate(ref["signals"]):
            sign = -1.0 if signal == "rephasing" else 1.0
            e1, e3 = np.exp(1j * sign * np.outer(w1, t1)), np.exp(1j * np.outer(w3, t3))
            for b in range(len(ref["waiting_times"])):
                r_sum = values[s, :, b].sum(axis=0)  # the signal: its pathways' sum, [t1][t3]
                mine = (t1[1] * t3[1]) * e1 @ (weighted * r_sum) @ e3.T
                worst = max(worst, np.abs(mine - spectra[s, b]).max() / np.abs(mine).max())
            total = spectra[s] if total is None else total + spectra[s]
        check(worst < 1e-10, f"each signal's 2D spectrum is the transform written out here (difference {worst:.1e})")
        check(np.abs(absorptive - total.real).max() < 1e-12 * np.abs(absorptive).max(),
              "the absorptive spectrum is the real part of the signals' sum")
        dw1, dw3 = w1[1] - w1[0], w3[1] - w3[0]
        for b in range(len(ref["waiting_times"])):
            integral = absorptive[b].sum() * dw1 * dw3
            r0 = values[:, :, b, 0, 0].sum().real
            check(abs(integral - np.pi ** 2 * r0) < 1e-9 * abs(r0),
                  f"T = {ref['waiting_times'][b]}: sum S dw1 dw3 = {integral:.6f} = pi^2 R(0, T, 0)")
        # Where the absorptive spectrum peaks at T = 0: on the diagonal, within a grid step of an exciton.
        excitons = np.linalg.eigvalsh(np.array([[ref["site_energies"][0], ref["coupling"]],
                                                [ref["coupling"], ref["site_energies"][1]]]))
        i1, i3 = np.unravel_index(np.argmax(absorptive[0]), absorptive[0].shape)
        check(abs(w1[i1] - w3[i3]) <= dw1 + 1e-12 and min(abs(excitons - w1[i1])) < 2 * dw1,
              f"the T = 0 spectrum peaks on the diagonal at w = {w1[i1]:.3f}, an exciton at {excitons}")
        ensemble_checks(heom, ref, work, mpiexec)
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("PASS")


if __name__ == "__main__":
    main()
