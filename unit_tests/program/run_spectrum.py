#!/usr/bin/python3
"""Steady states and spectra through the heom program, read back with h5py as users read them:

- `heom steady` against QuTiP 4.7's HEOMSolver.steady_state() (rho and every first-tier ADO);
- an absorption spectrum integrates to the total dipole strength, its orientation average is a third
  of one polarization's, and its peak moves with the site energies;
- with an [ensemble] (static disorder) it is the mean of its members' spectra, and the same from
  --devices 2 as from one device;
- a power spectrum integrates to <Q^dagger Q> in the steady state it writes beside it;
- `heom steady` on example/anderson_impurity.toml (a level between two leads) against QuTiP's steady
  state and the current into each lead (/steady/current);
- a density of states, example/anderson_spectral_function.toml, against the level's exact A(w);
- the examples example/fmo_absorption.toml (its peak in the FMO exciton band) and
  example/spin_boson_emission.toml run.

    run_spectrum.py HEOM_EXECUTABLE REFERENCE_DIR EXAMPLE_DIR
"""
import json
import os
import re
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


def run(heom, args, work):
    r = subprocess.run([heom] + args, cwd=work, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        sys.exit(f"heom {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def matrix_toml(m):
    return "[" + ", ".join("[" + ", ".join(repr(float(x)) for x in row) + "]" for row in m) + "]"


def steady_against_qutip(heom, reference, work):
    ref = json.load(open(os.path.join(reference, "steady_spin_boson_matsubara.json")))
    H = np.array([[complex(*z) for z in row] for row in ref["hamiltonian"]])
    b = ref["baths"][0]
    Q = np.array([[complex(*z) for z in row] for row in b["coupling"]])
    text = f"""
[system]
hamiltonian = {matrix_toml(H.real)}
[[bath]]
kind = "drude-lorentz"
coupling = {matrix_toml(Q.real)}
lambda = {b["lambda"]}
gamma = {b["gamma"]}
temperature = {b["temperature"]}
terms = {b["terms"]}
[hierarchy]
depth = {ref["depth"]}
[dynamics]
t_end = 1.0
output_every = 1.0
[steady]
tolerance = 1e-12
[output]
ados = true
"""
    path = os.path.join(work, "steady.toml")
    open(path, "w").write(text)
    r = run(heom, ["steady", path, "-o", "steady.h5"], work)
    check("GMRES(60), tiers preconditioner" in r.stdout, "heom steady prints its plan")
    with h5py.File(os.path.join(work, "steady.h5")) as f:
        check("t" not in f and "rho" not in f, "a steady state has no /t, /rho")
        rho = f["steady/rho"][()]
        ados, labels = f["steady/ados"][()], f["steady/ado_labels"][()]
        residual = f["steady"].attrs["residual"]
    expected = np.array([[complex(*z) for z in row] for row in ref["rho"]])
    check(np.max(np.abs(rho - expected)) < 1e-9,
          f"/steady/rho matches QuTiP's steady_state(): {np.max(np.abs(rho - expected)):.1e}")
    check(residual <= 1e-12, f"residual {residual:.1e} <= tolerance")
    index = {tuple(l): a for a, l in enumerate(labels)}
    worst = 0.0
    for entry in ref["tier1"]:
        ado = np.array([[complex(*z) for z in row] for row in entry["ado"]])
        worst = max(worst, np.max(np.abs(ados[index[tuple(entry["label"])]] - ado)))
    check(worst < 1e-9, f"first-tier steady ADOs match QuTiP's: {worst:.1e}")


# One Drude-Lorentz bath on each site of the dimer (levels 1 and 2; level 0 is the ground state).
SITE_BATH = """[[bath]]
kind = "drude-lorentz"
coupling = {coupling}
lambda = 0.05
gamma = 0.5
temperature = 0.5
terms = 1
"""
DIMER = """
[system]
hamiltonian = [[0, 0, 0], [0, {e1}, 0.1], [0, 0.1, {e2}]]
""" + "".join(SITE_BATH.format(coupling=c)
             for c in ("[[0, 0, 0], [0, 1, 0], [0, 0, 0]]", "[[0, 0, 0], [0, 0, 0], [0, 0, 1]]")) + """[hierarchy]
depth = 3
[dynamics]
t_end = 80.0
output_every = 0.25
[spectrum]
kind = "absorption"
dipoles = {dipoles}
window = "hann"
"""


def absorption(heom, work, name, e1=1.0, e2=1.3, dipoles="[1.0, 0.5]", extra="", args=()):
    path = os.path.join(work, name + ".toml")
    open(path, "w").write(DIMER.format(e1=e1, e2=e2, dipoles=dipoles) + extra)
    r = run(heom, ["run", path, "-o", name + ".h5"] + list(args), work)
    with h5py.File(os.path.join(work, name + ".h5")) as f:
        s = f["spectrum"]
        out = {k: s[k][()] for k in s}
        out.update({k: s.attrs[k] for k in s.attrs})
        out["generator_kernel"] = f.attrs["generator_kernel"]
    out["stdout"] = r.stdout
    return out


def integral(s):
    return np.sum(s["intensity"]) * (s["omega"][1] - s["omega"][0])


def absorption_checks(heom, work):
    one = absorption(heom, work, "dimer")
    check(abs(integral(one) - 1.25) < 1e-9, f"absorption integrates to sum d_j^2 = 1.25: {integral(one):.12f}")
    check(abs(one["dipole_strength"] - 1.25) < 1e-12, "dipole_strength = Re C(0)")
    check(abs(one["correlation"][0] - 1.25) < 1e-12, "C(0) = sum d_j^2")
    check(one["generator_kernel"] == "ground-column" and "column 0 of each" in one["stdout"],
          f"absorption propagates ground columns, and the plan says so ({one['generator_kernel']})")
    # Parallel dipole vectors: the orientation average is a third of the one polarization's spectrum.
    vectors = absorption(heom, work, "dimer_vectors", dipoles="[[0.0, 1.0, 0.0], [0.0, 0.5, 0.0]]")
    check(np.max(np.abs(3 * vectors["intensity"] - one["intensity"])) < 1e-9 * np.max(one["intensity"]),
          "orientation average of parallel dipoles = 1/3 of one polarization")
    # Moving both sites by +0.4 moves the spectrum by +0.4 (to the grid spacing).
    shifted = absorption(heom, work, "dimer_shifted", e1=1.4, e2=1.7)
    spacing = one["omega"][1] - one["omega"][0]
    move = shifted["omega"][np.argmax(shifted["intensity"])] - one["omega"][np.argmax(one["intensity"])]
    check(abs(move - 0.4) <= spacing, f"the peak moves with the site energies: {move:.4f} (expected 0.4)")
    peak = one["omega"][np.argmax(one["intensity"])]
    exciton = np.linalg.eigvalsh(np.array([[1.0, 0.1], [0.1, 1.3]]))
    check(min(abs(peak - e) for e in exciton) < 0.1, f"the peak {peak:.3f} is at an exciton energy {exciton}")
    check(peak > 0, "absorption at +E (the exp(+i w t) convention)")
    cropped = absorption(heom, work, "dimer_cropped", extra="frequency_range = [0.5, 2.0]\n")
    check(cropped["omega"][0] >= 0.5 and cropped["omega"][-1] <= 2.0 and len(cropped["omega"]) > 10,
          "frequency_range crops the output")
    return one


def ensemble_checks(heom, work):
    ensemble = "\n[ensemble]\nmembers = 4\nseed = 3\nsite_energy_sigma = [0.0, 0.1, 0.1]\nstore_members = true\n"
    mean = absorption(heom, work, "dimer_ensemble", extra=ensemble)
    members = mean["member_intensity"]
    check(members.shape[0] == 4, "4 members' spectra stored")
    check(np.max(np.abs(members.mean(axis=0) - mean["intensity"])) < 1e-12 * np.max(mean["intensity"]),
          "the ensemble's spectrum is the mean of its members'")
    check(np.max(np.abs(members[0] - members[1])) > 1e-3 * np.max(members[0]), "the members differ (disorder)")
    devices = absorption(heom, work, "dimer_ensemble_2", extra=ensemble, args=["--devices", "2"])
    check(np.array_equal(devices["intensity"], mean["intensity"]), "--devices 2 gives the same bits")


def power(heom, examples, work, name, incoherent):
    text = open(os.path.join(examples, "spin_boson_emission.toml")).read()
    text = re.sub(r"frequency_range = .*\n", "", text)
    text = re.sub(r"incoherent = .*\n", f"incoherent = {str(incoherent).lower()}\n", text)
    path = os.path.join(work, name + ".toml")
    open(path, "w").write(text)
    run(heom, ["run", path, "-o", name + ".h5"], work)
    with h5py.File(os.path.join(work, name + ".h5")) as f:
        return f["steady/rho"][()], {k: f["spectrum"][k][()] for k in f["spectrum"]}


def power_checks(heom, examples, work):
    rho, s = power(heom, examples, work, "power", incoherent=False)
    total = integral(s)
    # Q = sigma- = |1><0|: <Q^dagger Q> = rho_00, <Q> = rho_01.
    check(abs(total - rho[0, 0].real) < 1e-9, f"power spectrum integrates to <Q^dagger Q> = rho_00: {total:.10f}")
    # An elastic line at w = 0 (<sigma-> != 0 in the steady state: C(t) -> |<sigma->|^2), and the
    # inelastic one at the transition: sigma- (site basis) takes the mostly-ground steady state up, to
    # exp(-i gap t) in C(t), so at w = -gap in exp(-i w t).
    omega, intensity = s["omega"], s["intensity"]
    coherent = abs(rho[0, 1]) ** 2
    check(abs(s["correlation"][-1] - coherent) < 1e-3, f"C(t) -> |<sigma->|^2 = {coherent:.4f}")
    check(omega[np.argmax(intensity)] == 0.0, "the elastic line at w = 0")
    gap = np.ptp(np.linalg.eigvalsh(np.array([[0.25, 0.5], [0.5, -0.25]])))
    away = np.abs(omega) > 0.3
    peak = omega[away][np.argmax(intensity[away])]
    check(abs(peak + gap) < 0.15, f"the inelastic line near -gap = {-gap:.3f}: {peak:.3f}")
    # The incoherent part: C(t) - |<sigma->|^2, which decays, integrates to rho_00 - |rho_01|^2 and peaks
    # at the transition.
    _, inc = power(heom, examples, work, "power_incoherent", incoherent=True)
    check(np.max(np.abs(inc["correlation"] - (s["correlation"] - coherent))) < 1e-12, "incoherent = C(t) - |<Q>|^2")
    check(abs(inc["correlation"][-1]) < 1e-3, "the incoherent part decays")
    check(abs(integral(inc) - (rho[0, 0].real - coherent)) < 1e-9, "and integrates to rho_00 - |rho_01|^2")
    check(abs(inc["omega"][np.argmax(inc["intensity"])] + gap) < 0.15, "its peak is the transition's")
    run(heom, ["steady", os.path.join(examples, "spin_boson_emission.toml"), "-o", "emission_steady.h5"], work)
    with h5py.File(os.path.join(work, "emission_steady.h5")) as f:
        check(np.array_equal(f["steady/rho"][()], rho), "heom steady gives the steady state the spectrum used")


def anderson_example(heom, examples, reference, work):
    ref = json.load(open(os.path.join(reference, "steady_siam_pade.json")))
    run(heom, ["steady", os.path.join(examples, "anderson_impurity.toml"), "-o", "anderson.h5"], work)
    with h5py.File(os.path.join(work, "anderson.h5")) as f:
        rho, current = f["steady/rho"][()], f["steady/current"][()]
    expected_rho = np.array([[complex(*x) for x in row] for row in ref["rho"]])
    expected = np.array([complex(*x) for x in ref["current"]])
    check(np.max(np.abs(rho - expected_rho)) < 1e-9, "the Anderson example's steady rho matches QuTiP's")
    worst = np.max(np.abs(current - expected) / np.abs(expected))
    check(current.shape == (2,) and worst < 1e-8,
          f"/steady/current matches QuTiP's current into each lead: {current}, relative error {worst:.1e}")


def spectral_function_example(heom, examples, work):
    """example/anderson_spectral_function.toml: a non-interacting level, whose A(w) is known exactly."""
    path = os.path.join(examples, "anderson_spectral_function.toml")
    r = run(heom, ["run", path, "-o", "dos.h5"], work)
    check("density of states" in r.stdout and "odd parity" in r.stdout, "the plan names the density of states")
    with h5py.File(os.path.join(work, "dos.h5")) as f:
        s = {k: f["spectrum"][k][()] for k in f["spectrum"]}
        kind = f["spectrum"].attrs["kind"]
        current = f["steady/current"][()]
    check(kind == "density-of-states", f"/spectrum kind is density-of-states: {kind}")
    check(abs(s["correlation"][0] - 1.0) < 1e-12, f"C(0) = <{{d, d^dagger}}> = 1: {s['correlation'][0]}")
    check(current.shape == (2,) and abs(current[0] + current[1]) < 1e-9, "and the steady currents, equal and opposite")
    # Sigma(w) = gamma W / 2 / (w - mu + i W) per lead, A = -Im G / pi (the example's parameters).
    w = s["omega"]
    sigma = sum(0.5 * 0.2 * 1.0 / (w - mu + 1j) for mu in (0.5, -0.5))
    exact = -np.imag(1.0 / (w - 0.5 - sigma)) / np.pi
    worst = np.max(np.abs(s["intensity"] - exact))
    check(worst < 1e-5 * np.max(exact), f"A(w) is the exact spectral function: largest error {worst:.1e} of "
                                        f"{np.max(exact):.3f}")
    window = (w > -1.5) & (w < 2.5)  # (the peak and its wings; the tails beyond +-3 are cut off)
    check(np.sum(s["intensity"][window]) * (w[1] - w[0]) > 0.8, "A(w) holds most of its weight around the level")

    # The same in frequency: two solves at each of 41 frequencies, no C(t), exact to the solves.
    with open(path) as f:
        text = f.read().replace("padding = 4\n", 'method = "frequency"\nfrequency_points = 41\ntolerance = 1e-11\n')
    in_frequency = os.path.join(work, "dos_frequency.toml")
    with open(in_frequency, "w") as f:
        f.write(text)
    r = run(heom, ["run", in_frequency, "-o", "dos_frequency.h5"], work)
    check("in frequency: A(w) at 41 frequencies" in r.stdout, "the plan names the frequency method")
    check("82 solves" in r.stdout, "the summary counts two solves per frequency")
    with h5py.File(os.path.join(work, "dos_frequency.h5")) as f:
        g = f["spectrum"]
        w, a, method = g["omega"][()], g["intensity"][()], g.attrs["method"]
        solves, strength, samples = g.attrs["solves"], g.attrs["dipole_strength"], g["correlation"].shape[0]
    check(method == "frequency" and solves == 82 and samples == 0, f"/spectrum says how it was made: {method}, {solves}")
    check(np.allclose(w, np.linspace(-3.0, 3.0, 41), rtol=0, atol=1e-14), "41 frequencies over frequency_range")
    check(abs(strength - 1.0) < 1e-12, f"C(0) = <{{d, d^dagger}}> from the steady state: {strength}")
    sigma = sum(0.5 * 0.2 * 1.0 / (w - mu + 1j) for mu in (0.5, -0.5))
    exact = -np.imag(1.0 / (w - 0.5 - sigma)) / np.pi
    worst = np.max(np.abs(a - exact))
    check(worst < 1e-10 * np.max(exact), f"A(w) in frequency is the exact one: largest error {worst:.1e}")


def fmo_example(heom, examples, work):
    run(heom, ["run", os.path.join(examples, "fmo_absorption.toml"), "-o", "fmo_absorption.h5"], work)
    with h5py.File(os.path.join(work, "fmo_absorption.h5")) as f:
        omega, intensity = f["spectrum/omega"][()], f["spectrum/intensity"][()]
        unit = f["spectrum"].attrs["frequency_unit"]
    peak = omega[np.argmax(intensity)]
    check(unit == "cm^-1", "FMO spectrum in cm^-1")
    check(0.0 < peak < 450.0, f"FMO absorbs within its exciton band (0..450 cm^-1 above 12210): peak at {peak:.0f}")


def main():
    heom, reference, examples = (os.path.abspath(a) for a in sys.argv[1:4])
    with tempfile.TemporaryDirectory() as work:
        steady_against_qutip(heom, reference, work)
        absorption_checks(heom, work)
        ensemble_checks(heom, work)
        power_checks(heom, examples, work)
        fmo_example(heom, examples, work)
        anderson_example(heom, examples, reference, work)
        spectral_function_example(heom, examples, work)
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("all spectrum and steady-state checks passed")


if __name__ == "__main__":
    main()
