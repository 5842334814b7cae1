#!/usr/bin/python3
"""Reference data for heom's tests, computed with QuTiP 4.7 (Debian's python3-qutip).

Run with Debian's interpreter (/usr/bin/python3), which sees python3-qutip:

    /usr/bin/python3 unit_tests/reference/make_reference.py

It writes unit_tests/reference/*.json. Every number is QuTiP's; heom's tests rebuild the same
models from these files and compare. Complex numbers are [re, im] pairs, matrices are row-major.
"""

import json
import math
import os
import sys
import time

import numpy as np
import qutip
from qutip import Qobj, basis, liouvillian, lindblad_dissipator, sigmam, sigmax, sigmaz
from qutip.nonmarkov.bofin_baths import (
    BathExponent, BosonicBath, DrudeLorentzBath, DrudeLorentzPadeBath, FermionicBath, LorentzianBath,
    LorentzianPadeBath, UnderDampedBath,
)
from qutip.nonmarkov.bofin_solvers import HEOMSolver
from scipy.integrate import quad

HERE = os.path.dirname(os.path.abspath(__file__))
QUTIP_RTOL = 1e-12
QUTIP_ATOL = 1e-12
QUTIP_NSTEPS = 10**7


def cpx(z):
    z = complex(z)
    return [z.real, z.imag]


def mat(m):
    a = m.full() if isinstance(m, Qobj) else np.asarray(m, dtype=complex)
    return [[cpx(x) for x in row] for row in a]


def exps(bath):
    out = []
    for i, e in enumerate(bath.exponents):
        out.append({
            "kind": e.type.name,
            "c": cpx(e.ck),
            "c2": cpx(e.ck2 if e.ck2 is not None else 0.0),
            "v": cpx(e.vk),
            **({"partner_c": cpx(bath.exponents[i + e.sigma_bar_k_offset].ck)}
               if e.sigma_bar_k_offset is not None else {}),
        })
    return out


def write(name, payload):
    payload["generator"] = {
        "script": "unit_tests/reference/make_reference.py",
        "qutip": qutip.__version__,
        "numpy": np.__version__,
    }
    path = os.path.join(HERE, name + ".json")
    with open(path, "w") as f:
        json.dump(payload, f, indent=1)
        f.write("\n")
    print("wrote", os.path.relpath(path), file=sys.stderr)


# --- static disorder ----------------------------------------------------------------------------
# heom draws static disorder from a counter-based RNG (src/ensemble/disorder.cpp); the same draws are
# reproduced here bit for bit, so a disordered ensemble member can be checked against QuTiP.

M32 = 0xFFFFFFFF


def philox4x32(ctr, key):
    """Philox4x32-10 exactly as Random123 (and heom's philox4x32)."""
    ctr, key = list(ctr), list(key)
    for rnd in range(10):
        if rnd > 0:  # the key is bumped before every round but the first
            key = [(key[0] + 0x9E3779B9) & M32, (key[1] + 0xBB67AE85) & M32]
        p0, p1 = 0xD2511F53 * ctr[0], 0xCD9E8D57 * ctr[2]
        ctr = [(p1 >> 32) ^ ctr[1] ^ key[0], p1 & M32, (p0 >> 32) ^ ctr[3] ^ key[1], p0 & M32]
    return ctr


# Random123's known answers: a wrong round or key schedule fails here, not in a tolerance later.
assert philox4x32([0, 0, 0, 0], [0, 0]) == [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
assert philox4x32([M32] * 4, [M32] * 2) == [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]


def counter_normal(seed, realization, element):
    """heom's counter_normal: one Box-Muller normal per (seed, realization, element)."""
    block = philox4x32([element, realization & M32, realization >> 32, 0], [seed & M32, seed >> 32])
    a = ((block[0] << 32) | block[1]) >> 11
    b = ((block[2] << 32) | block[3]) >> 11
    u1 = (a + 0.5) * 2.0**-53  # in (0, 1): the logarithm is finite
    u2 = b * 2.0**-53
    # math, not numpy: the same libm log/cos as the C++ build
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586476925286766559 * u2)


# --- exponents ----------------------------------------------------------------------------------

def exponent_cases():
    Q = sigmaz()
    dl_params = [
        (0.1, 0.5, 0.5), (0.025, 0.05, 1 / 0.95), (1.3, 2.7, 0.21), (0.006589, 0.0200, 0.010081),
    ]
    cases = []
    for lam, gamma, T in dl_params:
        for nk in [0, 1, 2, 4]:
            b = DrudeLorentzBath(Q, lam=lam, gamma=gamma, T=T, Nk=nk)
            delta, _ = b.terminator()
            cases.append({"kind": "drude-lorentz", "expansion": "matsubara", "lambda": lam, "gamma": gamma,
                          "temperature": T, "terms": nk, "exponents": exps(b), "terminator_delta": cpx(delta)})
        for nk in [1, 2, 3, 5]:
            b = DrudeLorentzPadeBath(Q, lam=lam, gamma=gamma, T=T, Nk=nk)
            delta, _ = b.terminator()
            cases.append({"kind": "drude-lorentz", "expansion": "pade", "lambda": lam, "gamma": gamma,
                          "temperature": T, "terms": nk, "exponents": exps(b), "terminator_delta": cpx(delta)})
    for lam, gamma, w0, T in [(0.2, 0.4, 1.0, 0.5), (0.05, 0.1, 0.2, 1.7), (1.5, 3.0, 1.6, 0.3)]:
        for nk in [0, 1, 3]:
            b = UnderDampedBath(Q, lam=lam, gamma=gamma, w0=w0, T=T, Nk=nk)
            cases.append({"kind": "underdamped", "lambda": lam, "gamma": gamma, "w0": w0, "temperature": T,
                          "terms": nk, "exponents": exps(b)})

    # The merge rule on user lists: equal rates (exactly, within rtol, and just outside it), complex
    # values, groups of R only, I only and mixed.
    merge_lists = [
        dict(ck_real=[1.0, 0.5, 0.25], vk_real=[1.0, 2.0, 3.0], ck_imag=[-0.3], vk_imag=[1.0]),
        dict(ck_real=[0.3 + 0.1j, 0.2 - 0.05j, 0.7], vk_real=[0.5 - 1j, 0.5 + 1j, 0.5 - 1j],
             ck_imag=[0.4j, -0.4j, 0.11], vk_imag=[0.5 - 1j, 0.5 + 1j, 7.0]),
        dict(ck_real=[1.0, 2.0], vk_real=[1.0, 1.0 + 5e-6], ck_imag=[3.0, 4.0], vk_imag=[2.0, 2.0 + 3e-5]),
        dict(ck_real=[], vk_real=[], ck_imag=[0.1, 0.2, 0.3], vk_imag=[0.9, 0.9, 0.9]),
        dict(ck_real=[0.1, 0.2], vk_real=[4.0, 5.0], ck_imag=[], vk_imag=[]),
        dict(ck_real=[1e-3, 2e-3], vk_real=[1e-8, 5e-8], ck_imag=[1e-3], vk_imag=[9e-8]),
    ]
    for lists in merge_lists:
        b = BosonicBath(Q, **lists)
        cases.append({"kind": "exponents", **{k: [cpx(x) for x in v] for k, v in lists.items()},
                      "exponents": exps(b)})
    write("bath_exponents", {"cases": cases})


# --- dynamics -----------------------------------------------------------------------------------

def bath_spec(spec, Q):
    """(QuTiP bath, terminator Liouvillian or None, JSON description)."""
    kind = spec["kind"]
    desc = dict(spec)
    desc["coupling"] = mat(Q)
    if kind == "drude-lorentz":
        cls = DrudeLorentzPadeBath if spec.get("expansion", "matsubara") == "pade" else DrudeLorentzBath
        b = cls(Q, lam=spec["lambda"], gamma=spec["gamma"], T=spec["temperature"], Nk=spec["terms"])
        term = None
        if spec.get("terminator", False):
            delta, term = b.terminator()
            desc["terminator_delta"] = cpx(delta)
        return b, term, desc
    if kind == "underdamped":
        b = UnderDampedBath(Q, lam=spec["lambda"], gamma=spec["gamma"], w0=spec["w0"], T=spec["temperature"],
                            Nk=spec["terms"])
        return b, None, desc
    if kind == "exponents":
        lists = {k: spec[k] for k in ("ck_real", "vk_real", "ck_imag", "vk_imag")}
        b = BosonicBath(Q, **lists)
        desc.update({k: [cpx(x) for x in v] for k, v in lists.items()})
        return b, None, desc
    if kind == "lorentzian":
        cls = LorentzianPadeBath if spec.get("expansion", "pade") == "pade" else LorentzianBath
        b = cls(Q, gamma=spec["gamma"], w=spec["width"], mu=spec["mu"], T=spec["temperature"], Nk=spec["terms"])
        desc["exponents"] = exps(b)
        return b, None, desc
    if kind == "fermionic-exponents":
        lists = {k: spec[k] for k in ("ck_plus", "vk_plus", "ck_minus", "vk_minus")}
        b = FermionicBath(Q, **lists)
        desc.update({k: [cpx(x) for x in v] for k, v in lists.items()})
        return b, None, desc
    raise ValueError(kind)


def system_and_baths(H, baths, lindblad=()):
    """(the system Liouvillian with any terminators and Lindblad terms [(operator, rate)], QuTiP baths,
    JSON descriptions)."""
    qbaths, descs = [], []
    L = liouvillian(H)
    for op, rate in lindblad:
        L = L + rate * lindblad_dissipator(op)
    for spec, Q in baths:
        b, term, desc = bath_spec(spec, Q)
        for e in b.exponents:
            e.tag = len(qbaths)
        qbaths.append(b)
        descs.append(desc)
        if term is not None:
            L = L + term
    return L, qbaths, descs


def lindblad_json(lindblad):
    return {"lindblad": [{"operator": mat(op), "rate": rate} for op, rate in lindblad]} if lindblad else {}


def drive_coefficient(d):
    """f(t) of a drive as heom defines it (DriveShape), for QuTiP's HEOMSolver, which calls a
    time-dependent term's coefficient as f(t) (so 4.7 takes functions there, not strings or arrays)."""
    shape = d["shape"]
    if shape == "cosine":
        return lambda t, args=None: d["amplitude"] * math.cos(d["frequency"] * t + d.get("phase", 0.0))
    if shape == "gaussian":
        def f(t, args=None):
            x = (t - d["center"]) / d["width"]
            return d["amplitude"] * math.exp(-0.5 * x * x) * math.cos(
                d.get("frequency", 0.0) * (t - d["center"]) + d.get("phase", 0.0))
        return f
    if shape == "table":
        from scipy.interpolate import CubicSpline
        values = np.array(d["values"]) + 1j * np.array(d.get("values_imag", [0.0] * len(d["values"])))
        spline = CubicSpline(d["times"], values, bc_type="natural")
        return lambda t, args=None: complex(spline(t))
    raise ValueError(shape)


def run_case(name, description, H, baths, depth, rho0, tlist, tolerances=(QUTIP_RTOL, QUTIP_ATOL), extra=None,
             lindblad=(), drives=()):
    """drives: [(operator, heom's [[system.drive]] keys)]: H(t) = H + sum f(t) operator."""
    L, qbaths, descs = system_and_baths(H, baths, lindblad)
    if drives:
        L = [L] + [[liouvillian(op), drive_coefficient(d)] for op, d in drives]
    states = {}
    for rtol, atol in [tolerances, (tolerances[0] * 1e3, tolerances[1] * 1e3)]:
        opts = qutip.Options(nsteps=QUTIP_NSTEPS, rtol=rtol, atol=atol, store_states=True)
        solver = HEOMSolver(L, qbaths, depth, options=opts)
        start = time.time()
        result = solver.run(rho0, tlist)
        states[(rtol, atol)] = np.array([s.full() for s in result.states])
        print(f"{name}: {len(solver.ados.labels)} ADOs, rtol {rtol:g}: {time.time() - start:.1f} s", file=sys.stderr)
    tight, loose = states[tolerances], states[(tolerances[0] * 1e3, tolerances[1] * 1e3)]
    self_error = float(np.max(np.abs(tight - loose)))
    print(f"{name}: max |rho(rtol) - rho(1e3 rtol)| = {self_error:.2e}", file=sys.stderr)
    write(name, {
        "description": description,
        "hamiltonian": mat(H),
        "baths": descs,
        "depth": depth,
        "num_ados": len(solver.ados.labels),
        "rho0": mat(rho0),
        "times": list(map(float, tlist)),
        "rho": [[[cpx(x) for x in row] for row in s] for s in tight],
        "qutip_options": {"rtol": tolerances[0], "atol": tolerances[1], "method": "adams",
                          "difference_to_1e3_looser": self_error},
        **lindblad_json(lindblad),
        **({"drives": [{"operator": mat(op), **d} for op, d in drives]} if drives else {}),
        **(extra or {}),  # case-specific keys (e.g. the disorder draw behind H)
    })


def spin_boson_cases():
    # QuTiP's HEOM guide: H = eps/2 sz + Delta/2 sx, eps = 0.5, Delta = 1, Q = sz.
    H = 0.25 * sigmaz() + 0.5 * sigmax()
    rho0 = basis(2, 0) * basis(2, 0).dag()
    tlist = np.linspace(0, 20, 201)
    dl = {"kind": "drude-lorentz", "lambda": 0.1, "gamma": 0.5, "temperature": 0.5, "terms": 2}
    run_case("spin_boson_matsubara", "QuTiP guide spin-boson, Drude-Lorentz Matsubara Nk=2, depth 5",
             H, [({**dl, "expansion": "matsubara"}, sigmaz())], 5, rho0, tlist)
    run_case("spin_boson_pade_terminator", "spin-boson, Drude-Lorentz Pade Nk=2 with terminator, depth 5",
             H, [({**dl, "expansion": "pade", "terminator": True}, sigmaz())], 5, rho0, tlist)
    ud = {"kind": "underdamped", "lambda": 0.2, "gamma": 0.4, "w0": 1.0, "temperature": 0.5, "terms": 1}
    run_case("spin_boson_underdamped", "spin-boson, underdamped bath (complex rates) coupled by sx, depth 6",
             H, [(ud, sigmax())], 6, rho0, tlist)


# Ishizaki & Fleming's FMO site Hamiltonian in cm^-1 (as in example/fmo_77k.toml).
FMO_H_CM = np.array([
    [200, -87.7, 5.5, -5.9, 6.7, -13.7, -9.9],
    [-87.7, 320, 30.8, 8.2, 0.7, 11.8, 4.3],
    [5.5, 30.8, 0, -53.5, -2.2, -9.6, 6.0],
    [-5.9, 8.2, -53.5, 110, -70.7, -17.0, -63.3],
    [6.7, 0.7, -2.2, -70.7, 270, 81.1, -1.3],
    [-13.7, 11.8, -9.6, -17.0, 81.1, 420, 39.7],
    [-9.9, 4.3, 6.0, -63.3, -1.3, 39.7, 230]], dtype=float)


def fmo_model(H_cm=FMO_H_CM):
    """Ishizaki & Fleming, PNAS 106, 17255 (2009): 7 sites, lambda = 35 cm^-1, 1/gamma = 50 fs,
    T = 77 K, one Drude-Lorentz bath per site; converted from spectroscopy units exactly as heom
    converts example/fmo_77k.toml (energies cm^-1 -> rad/fs, times fs). H_cm: the site Hamiltonian
    in cm^-1 (a disordered copy for ensemble members)."""
    c_cm_per_fs = 2.99792458e-5
    cm = 2 * np.pi * c_cm_per_fs  # 1 cm^-1 in rad/fs
    kelvin = 0.695034800 * cm  # kB * 1 K in rad/fs
    H = Qobj(np.asarray(H_cm, dtype=float) * cm)
    dl = {"kind": "drude-lorentz", "expansion": "matsubara", "lambda": 35 * cm, "gamma": 106.1767491775 * cm,
          "temperature": 77 * kelvin, "terms": 1}
    baths = [(dl, basis(7, j) * basis(7, j).dag()) for j in range(7)]
    rho0 = basis(7, 0) * basis(7, 0).dag()
    return H, baths, rho0


def fmo_case():
    H, baths, rho0 = fmo_model()
    tlist = np.linspace(0, 1000, 101)
    run_case("fmo_depth3", "FMO 7 sites (Ishizaki-Fleming 2009) at 77 K, Matsubara Nk=1, depth 3, rad/fs and fs",
             H, baths, 3, rho0, tlist)


def fmo_example_case():
    # example/fmo_77k.toml (and what `heom` runs without arguments): depth 4, 0..1000 fs every 10 fs.
    H, baths, rho0 = fmo_model()
    run_case("fmo_77k", "example/fmo_77k.toml: FMO at 77 K, Matsubara Nk=1, depth 4, rad/fs and fs",
             H, baths, 4, rho0, np.linspace(0, 1000, 101))


def fmo_disordered_case():
    # One member of a static-disorder ensemble: heom adds sigma_j * counter_normal(seed, realization, j)
    # to site j's energy in the input's units (cm^-1), before converting to rad/fs.
    seed, realization, sigma = 7, 2, 50.0
    offsets = [sigma * counter_normal(seed, realization, j) for j in range(7)]
    print("fmo_disordered: site offsets (cm^-1):", " ".join(f"{x:.17g}" for x in offsets), file=sys.stderr)
    H_cm = FMO_H_CM.copy()
    for j, x in enumerate(offsets):
        H_cm[j, j] += x
    H, baths, rho0 = fmo_model(H_cm)
    run_case("fmo_disordered",
             "FMO at 77 K, Matsubara Nk=1, depth 3, rad/fs and fs, site energies of member 2 of a seed-7, "
             "sigma-50 cm^-1 static-disorder ensemble", H, baths, 3, rho0, np.linspace(0, 1000, 101),
             extra={"seed": seed, "realization": realization, "site_energy_sigma": sigma,
                    "hamiltonian_file_units": [[float(x) for x in row] for row in H_cm]})


def three_level_case():
    H = Qobj(np.array([[1.0, 0.3 - 0.2j, 0.1j], [0.3 + 0.2j, 0.2, 0.25], [-0.1j, 0.25, -0.8]]))
    Q1 = Qobj(np.diag([1.0, 0.0, -1.0]))
    Q2 = Qobj(np.array([[0, 1, 0], [1, 0, -1j], [0, 1j, 0]]))
    assert (Q1 * Q2 - Q2 * Q1).norm() > 0.1
    rho0 = Qobj(np.array([[0.5, 0.2 - 0.1j, 0.0], [0.2 + 0.1j, 0.3, 0.05], [0.0, 0.05, 0.2]]))
    assert min(rho0.eigenenergies()) > 0
    dl = {"kind": "drude-lorentz", "expansion": "matsubara", "lambda": 0.05, "gamma": 0.8, "temperature": 0.6,
          "terms": 1}
    ud = {"kind": "underdamped", "lambda": 0.15, "gamma": 0.3, "w0": 1.2, "temperature": 0.6, "terms": 1}
    tlist = np.linspace(0, 15, 151)
    run_case("three_level_two_baths",
             "3 levels, complex H, a Drude-Lorentz bath on a diagonal Q and an underdamped bath on a complex "
             "non-commuting Q, depth 4", H, [(dl, Q1), (ud, Q2)], 4, rho0, tlist)
    ex = {"kind": "exponents", "ck_real": [0.05 + 0.01j, 0.02], "vk_real": [0.7 - 0.4j, 2.5],
          "ck_imag": [-0.03], "vk_imag": [0.7 - 0.4j]}
    run_case("three_level_exponents", "3 levels, complex H, a user exponent list on the complex Q, depth 4",
             H, [(ex, Q2)], 4, rho0, tlist)


def lindblad_cases():
    """Lindblad terms beside the baths: QuTiP's HEOMSolver with the Liouvillian of H and the
    dissipators. The spin-boson's decay (sigma_-, a jump of a non-diagonal L) and dephasing (sigma_z,
    real diagonal) take heom's two paths; the three levels add a complex L and pumping."""
    H = 0.25 * sigmaz() + 0.5 * sigmax()
    dl = {"kind": "drude-lorentz", "expansion": "matsubara", "lambda": 0.1, "gamma": 0.5, "temperature": 0.5,
          "terms": 2}
    decay = [(sigmam(), 0.08), (sigmaz(), 0.03)]
    run_case("spin_boson_lindblad", "spin-boson, Drude-Lorentz Matsubara Nk=2, depth 5, with Lindblad decay "
             "(sigma_-, 0.08) and dephasing (sigma_z, 0.03)", H, [(dl, sigmaz())], 5, basis(2, 0) * basis(2, 0).dag(),
             np.linspace(0, 20, 201), lindblad=decay)
    steady_case("steady_spin_boson_lindblad", "steady state: the spin-boson of spin_boson_lindblad, depth 5",
                H, [(dl, sigmaz())], 5, lindblad=decay)
    H3 = Qobj(np.array([[1.0, 0.3 - 0.2j, 0.1j], [0.3 + 0.2j, 0.2, 0.25], [-0.1j, 0.25, -0.8]]))
    Q1 = Qobj(np.diag([1.0, 0.0, -1.0]))
    Q2 = Qobj(np.array([[0, 1, 0], [1, 0, -1j], [0, 1j, 0]]))
    dl3 = {"kind": "drude-lorentz", "expansion": "matsubara", "lambda": 0.05, "gamma": 0.8, "temperature": 0.6,
           "terms": 1}
    lowering = Qobj(np.array([[0, 0.6 + 0.8j, 0], [0, 0, 0], [0, 0.3, 0]], dtype=complex))
    pump = Qobj(np.array([[0, 0, 0], [0, 0, 0], [1.0, 0, 0]], dtype=complex))
    phase = Qobj(np.diag([1.0, 1j, -0.5]))
    rho0 = Qobj(np.array([[0.5, 0.2 - 0.1j, 0.0], [0.2 + 0.1j, 0.3, 0.05], [0.0, 0.05, 0.2]]))
    run_case("three_level_lindblad", "3 levels, complex H, Drude-Lorentz baths on a diagonal and a complex Q, "
             "depth 4, with a complex lowering L, pumping and a complex diagonal L",
             H3, [(dl3, Q1), (dl3, Q2)], 4, rho0, np.linspace(0, 15, 151),
             lindblad=[(lowering, 0.1), (pump, 0.04), (phase, 0.05)])


def driven_cases():
    """Time-dependent H(t) = H + sum f(t) H_d: QuTiP's HEOMSolver with a list Hamiltonian (a QobjEvo),
    coefficients as functions of t. A qubit driven on and off resonance, a Gaussian pulse on three
    levels with two baths, and tabulated complex drives f(t) sigma_+ + conj(f(t)) sigma_-."""
    from qutip import sigmap
    qubit = 0.5 * sigmaz()  # splitting 1
    dl = {"kind": "drude-lorentz", "expansion": "matsubara", "lambda": 0.05, "gamma": 0.5, "temperature": 0.5,
          "terms": 2}
    up = basis(2, 0) * basis(2, 0).dag()
    tlist = np.linspace(0, 20, 201)
    for name, w in [("driven_qubit_resonant", 1.0), ("driven_qubit_off_resonant", 1.6)]:
        run_case(name, f"qubit sz/2 driven by 0.2 cos({w} t + 0.4) sx, Drude-Lorentz Matsubara Nk=2 on sz, depth 5",
                 qubit, [(dl, sigmaz())], 5, up, tlist,
                 drives=[(sigmax(), {"shape": "cosine", "amplitude": 0.2, "frequency": w, "phase": 0.4})])
    H3 = Qobj(np.array([[1.0, 0.3 - 0.2j, 0.1j], [0.3 + 0.2j, 0.2, 0.25], [-0.1j, 0.25, -0.8]]))
    Q1 = Qobj(np.diag([1.0, 0.0, -1.0]))
    Q2 = Qobj(np.array([[0, 1, 0], [1, 0, -1j], [0, 1j, 0]]))
    dl3 = {"kind": "drude-lorentz", "expansion": "matsubara", "lambda": 0.05, "gamma": 0.8, "temperature": 0.6,
           "terms": 1}
    ud = {"kind": "underdamped", "lambda": 0.15, "gamma": 0.3, "w0": 1.2, "temperature": 0.6, "terms": 1}
    dipole = Qobj(np.array([[0, 1.0, 0.4], [1.0, 0, 0], [0.4, 0, 0]]))
    run_case("driven_three_level_pulse", "3 levels, complex H, two baths (three_level_two_baths), a Gaussian pulse "
             "0.6 exp(-(t-5)^2/(2 1.5^2)) cos(1.1 (t-5) + 0.3) on a dipole operator, depth 4",
             H3, [(dl3, Q1), (ud, Q2)], 4, basis(3, 2) * basis(3, 2).dag(), np.linspace(0, 15, 151),
             drives=[(dipole, {"shape": "gaussian", "amplitude": 0.6, "center": 5.0, "width": 1.5, "frequency": 1.1,
                               "phase": 0.3})])
    times = [float(t) for t in np.linspace(0, 20, 41)]
    re = [0.25 * math.sin(0.9 * t) * math.exp(-0.05 * t) for t in times]
    im = [0.1 * math.cos(0.5 * t) for t in times]
    plus = {"shape": "table", "times": times, "values": re, "values_imag": im}
    minus = {"shape": "table", "times": times, "values": re, "values_imag": [-x for x in im]}
    run_case("driven_qubit_table", "qubit sz/2 + 0.1 sx driven by a tabulated complex f(t) sigma_+ + conj(f(t)) "
             "sigma_- (natural cubic splines of 41 samples), Drude-Lorentz Matsubara Nk=2 on sz, depth 5",
             qubit + 0.1 * sigmax(), [(dl, sigmaz())], 5, up, tlist,
             drives=[(sigmap(), plus), (sigmap().dag(), minus)])


def fitted_ohmic_case():
    """An Ohmic spin-boson (example/ohmic_spin_boson.toml): no closed-form expansion exists, so heom
    fits C(t) with exponents (`heom fit`, the program named by $HEOM, default build/openmp/src/heom),
    and QuTiP's HEOMSolver runs a BosonicBath of exactly those exponents. The fit's parameters and
    its exponents are stored, so that the test can refit and see the same exponents."""
    import subprocess
    import tomllib
    root = os.path.dirname(os.path.dirname(HERE))
    example = os.path.join(root, "example", "ohmic_spin_boson.toml")
    heom = os.environ.get("HEOM", os.path.join(root, "build", "openmp", "src", "heom"))
    fitted = tomllib.loads(subprocess.run([heom, "fit", example], check=True, capture_output=True, text=True).stdout)
    config = tomllib.loads(open(example, "rb").read().decode())
    bath = config["bath"][0]
    lists = {}
    for key in ("ck_real", "vk_real", "ck_imag", "vk_imag"):
        re = fitted["bath"][0][key]
        im = fitted["bath"][0].get(key + "_imag", [0.0] * len(re))
        lists[key] = [complex(a, b) for a, b in zip(re, im)]
    spec = {"kind": "exponents", **lists}
    H = Qobj(np.array(config["system"]["hamiltonian"], dtype=complex))
    Q = Qobj(np.array(bath["coupling"], dtype=complex))
    rho0 = Qobj(np.array(config["initial_state"]["rho"], dtype=complex))
    tlist = np.linspace(0, config["dynamics"]["t_end"], 201)
    fit = {k: bath[k] for k in ("j", "alpha", "cutoff", "exponent", "temperature", "fit_tolerance")}
    fit["fit_time"] = config["dynamics"]["t_end"]
    run_case("spin_boson_ohmic_fitted", "spin-boson, Ohmic J (alpha 0.05, wc 5, T 0.5) fitted by heom with "
             f"{len(lists['ck_real'])} exponents (example/ohmic_spin_boson.toml), depth 4", H, [(spec, Q)],
             config["hierarchy"]["depth"], rho0, tlist, extra={"fit": fit})


def pure_dephasing_case():
    # QuTiP's own test model (test_bofin_solvers.py, DrudeLorentzPureDephasingModel): the exact
    # coherence from the spectral density by quadrature, for comparison with truncated expansions.
    lam, gamma, T = 0.025, 0.05, 1 / 0.95
    tlist = np.linspace(0, 10, 21)
    lam_c = lam / np.pi

    def integrand(omega, t):
        J = 2 * lam_c * omega * gamma / (omega**2 + gamma**2)
        return -4 * J * (1 - np.cos(omega * t)) / (np.tanh(0.5 * omega / T) * omega**2)

    coherence = [0.5 * np.exp(quad(integrand, 0, np.inf, args=(t,), limit=5000)[0]) for t in tlist]
    write("pure_dephasing_analytic", {
        "description": "Drude-Lorentz pure dephasing: rho_01(t) = 0.5 exp(-Gamma(t)) from J(w) by quadrature",
        "lambda": lam, "gamma": gamma, "temperature": T, "times": list(map(float, tlist)),
        "coherence": list(map(float, coherence)),
    })


# --- steady states ------------------------------------------------------------------------------

# --- fermionic leads -----------------------------------------------------------------------------

def lead_currents(ado_state, num_baths):
    """The current into each lead (QuTiP's documented SIAM example, state_current): -i sum over the
    lead's first-tier ADOs of sign tr(op ADO), sign +1 and op Q for a + exponent, -1 and Q^dagger for a
    - exponent. For Q = d it is the particle current from the system into the lead."""
    out = []
    for b in range(num_baths):
        total = 0.0
        for label in ado_state.filter(level=1, tags=[b]):
            exp = ado_state.exps(label)[0]
            plus = exp.type == exp.types["+"]
            op = exp.Q if plus else exp.Q.dag()
            total += (1 if plus else -1) * (op * ado_state.extract(label)).tr()
        out.append(-1.0j * total)
    return out


def fermionic_dynamics_case(name, description, H, baths, depth, rho0, tlist):
    """rho(t) and each lead's current at every time, QuTiP at rtol = atol = 1e-12 and 1e3 looser."""
    L, qbaths, descs = system_and_baths(H, baths)
    results = {}
    for rtol in (QUTIP_RTOL, QUTIP_RTOL * 1e3):
        opts = qutip.Options(nsteps=QUTIP_NSTEPS, rtol=rtol, atol=rtol, store_states=True)
        solver = HEOMSolver(L, qbaths, depth, options=opts)
        start = time.time()
        result = solver.run(rho0, tlist, ado_return=True)
        rho = np.array([s.full() for s in result.states])
        currents = np.array([lead_currents(a, len(qbaths)) for a in result.ado_states])
        results[rtol] = (rho, currents)
        print(f"{name}: {len(solver.ados.labels)} ADOs, rtol {rtol:g}: {time.time() - start:.1f} s", file=sys.stderr)
    (rho, currents), (loose_rho, loose_currents) = results[QUTIP_RTOL], results[QUTIP_RTOL * 1e3]
    self_error = float(max(np.max(np.abs(rho - loose_rho)), np.max(np.abs(currents - loose_currents))))
    print(f"{name}: max difference to 1e3 looser = {self_error:.2e}", file=sys.stderr)
    write(name, {
        "description": description,
        "hamiltonian": mat(H),
        "baths": descs,
        "depth": depth,
        "num_ados": len(solver.ados.labels),
        "rho0": mat(rho0),
        "times": list(map(float, tlist)),
        "rho": [[[cpx(x) for x in row] for row in s] for s in rho],
        "current": [[cpx(x) for x in row] for row in currents],
        "qutip_options": {"rtol": QUTIP_RTOL, "atol": QUTIP_RTOL, "method": "adams",
                          "difference_to_1e3_looser": self_error},
    })


def siam_leads(d, expansion, terms, gamma=0.2, width=1.0, temperature=0.5, bias=1.0):
    lead = {"kind": "lorentzian", "gamma": gamma, "width": width, "temperature": temperature, "terms": terms,
            "expansion": expansion}
    return [({**lead, "mu": bias / 2}, d), ({**lead, "mu": -bias / 2}, d)]


def fermionic_cases():
    d = qutip.destroy(2)
    H = 0.5 * d.dag() * d
    empty = basis(2, 0) * basis(2, 0).dag()
    tlist = np.linspace(0, 20, 101)
    fermionic_dynamics_case("siam_pade", "resonant level between two Pade leads (Nk=2) at bias 1, depth 2",
                            H, siam_leads(d, "pade", 2), 2, empty, tlist)
    fermionic_dynamics_case("siam_matsubara", "resonant level between two Matsubara leads (Nk=3) at bias 1, depth 2",
                            H, siam_leads(d, "matsubara", 3, temperature=1.0), 2, empty, tlist)
    # A spinful level (Jordan-Wigner: d_up = d x 1, d_down = sz x d), Coulomb U and a spin-flip term.
    d_up = qutip.tensor(d, qutip.qeye(2))
    d_down = qutip.tensor(qutip.sigmaz(), d)
    n_up, n_down = d_up.dag() * d_up, d_down.dag() * d_down
    H4 = 0.3 * (n_up + n_down) + 1.0 * n_up * n_down + 0.2 * (d_up.dag() * d_down + d_down.dag() * d_up)
    H4 = Qobj(H4.full())
    d_up, d_down = Qobj(d_up.full()), Qobj(d_down.full())
    empty4 = Qobj(np.diag([1.0, 0.0, 0.0, 0.0]).astype(complex))
    leads = []
    for op in (d_up, d_down):
        leads += siam_leads(op, "pade", 1, gamma=0.3)
    fermionic_dynamics_case("anderson_spinful", "spinful Anderson level (U = 1, spin flip 0.2) between two Pade "
                            "leads (Nk=1) per spin at bias 1, depth 2", H4, leads, 2, empty4, np.linspace(0, 10, 51))
    explicit = {"kind": "fermionic-exponents",
                "ck_plus": [0.05 + 0.02j, -0.01j], "vk_plus": [1.0 - 0.3j, 2.0 - 0.3j],
                "ck_minus": [0.05 - 0.03j, 0.015j], "vk_minus": [1.0 + 0.3j, 2.0 + 0.3j]}
    H_x = 0.5 * d.dag() * d
    mixed = Qobj(np.array([[0.6, 0.3], [0.3, 0.4]], dtype=complex))
    fermionic_dynamics_case("fermionic_exponents", "level coupled to one lead of explicit exponents, depth 2",
                            H_x, [(explicit, d)], 2, mixed, tlist)


def steady_fermionic_case(name, description, H, baths, depth):
    """QuTiP's steady state of a fermionic model and each lead's current in it."""
    L, qbaths, descs = system_and_baths(H, baths)
    solver = HEOMSolver(L, qbaths, depth, options=qutip.Options())
    start = time.time()
    rho, ados = solver.steady_state(use_mkl=False)
    seconds = time.time() - start
    currents = lead_currents(ados, len(qbaths))
    print(f"{name}: {len(solver.ados.labels)} ADOs, steady_state {seconds:.1f} s, currents {currents}",
          file=sys.stderr)
    write(name, {
        "description": description, "hamiltonian": mat(H), "baths": descs, "depth": depth,
        "dimension": H.shape[0], "num_ados": len(solver.ados.labels), "rho": mat(rho),
        "current": [cpx(c) for c in currents], "qutip_seconds": seconds,
    })


def steady_fermionic_cases():
    d = qutip.destroy(2)
    steady_fermionic_case("steady_siam_pade", "steady state: resonant level between two Pade leads (Nk=2), bias 1",
                          0.5 * d.dag() * d, siam_leads(d, "pade", 2), 2)
    steady_fermionic_case("steady_siam_matsubara", "steady state: the same with Matsubara leads (Nk=3) at T = 1",
                          0.5 * d.dag() * d, siam_leads(d, "matsubara", 3, temperature=1.0), 2)


def steady_case(name, description, H, baths, depth, lindblad=()):
    """QuTiP's HEOMSolver.steady_state() (sparse LU with the first row replaced by the trace), its rho
    and every first-tier ADO by label, and its time and residual ||L x||_2."""
    L, qbaths, descs = system_and_baths(H, baths, lindblad)
    solver = HEOMSolver(L, qbaths, depth, options=qutip.Options())
    start = time.time()
    rho, ados = solver.steady_state(use_mkl=False)
    seconds = time.time() - start
    n = H.shape[0]
    # QuTiP's ADO vectors stack columns; x below is its solution in RHSmat's own ordering.
    x = np.concatenate([ados.extract(i).full().T.reshape(-1) for i in range(len(solver.ados.labels))])
    residual = float(np.linalg.norm(solver.RHSmat @ x))
    tier1 = [{"label": list(label), "ado": mat(ados.extract(label))}
             for label in solver.ados.labels if sum(label) == 1]
    print(f"{name}: {len(solver.ados.labels)} ADOs, steady_state {seconds:.1f} s, ||L x|| = {residual:.2e}",
          file=sys.stderr)
    write(name, {
        "description": description,
        "hamiltonian": mat(H),
        "baths": descs,
        "depth": depth,
        "dimension": n,
        "num_ados": len(solver.ados.labels),
        "rho": mat(rho),
        "tier1": tier1,
        "qutip_seconds": seconds,
        "qutip_residual": residual,
        **lindblad_json(lindblad),
    })


def steady_cases():
    H = 0.25 * sigmaz() + 0.5 * sigmax()
    dl = {"kind": "drude-lorentz", "lambda": 0.1, "gamma": 0.5, "temperature": 0.5, "terms": 2}
    steady_case("steady_spin_boson_matsubara", "steady state: QuTiP guide spin-boson, Matsubara Nk=2, depth 5",
                H, [({**dl, "expansion": "matsubara"}, sigmaz())], 5)
    steady_case("steady_spin_boson_pade", "steady state: spin-boson, Pade Nk=2 with terminator, depth 6",
                H, [({**dl, "expansion": "pade", "terminator": True}, sigmaz())], 6)


def steady_fmo_case():
    H, baths, _ = fmo_model()
    steady_case("steady_fmo_depth3", "steady state: FMO at 77 K, Matsubara Nk=1, depth 3, rad/fs", H, baths, 3)


def correlation_case():
    """<A(t) B(0)> in the spin-boson steady state: B applied to every steady ADO (a non-Hermitian
    start), propagated by QuTiP's HEOMSolver, tr[A rho(t)] read off."""
    from qutip import sigmam, sigmap
    H = 0.25 * sigmaz() + 0.5 * sigmax()
    spec = {"kind": "drude-lorentz", "expansion": "matsubara", "lambda": 0.1, "gamma": 0.5, "temperature": 0.5,
            "terms": 2}
    b, _, desc = bath_spec(spec, sigmaz())
    depth = 5
    A, B = sigmap(), sigmam()
    tlist = np.linspace(0, 20, 81)
    solver = HEOMSolver(liouvillian(H), [b], depth,
                        options=qutip.Options(nsteps=QUTIP_NSTEPS, rtol=QUTIP_RTOL, atol=QUTIP_ATOL,
                                              store_states=True))
    _, steady = solver.steady_state(use_mkl=False)
    # The solver's own layout stores each ADO transposed (its vectors stack columns).
    start = np.array([(B.full() @ steady.extract(i).full()).T for i in range(len(solver.ados.labels))])
    result = solver.run(start, tlist, ado_init=True)
    corr = [complex((A * s).tr()) for s in result.states]
    print(f"correlation_spin_boson: C(0) = {corr[0]:.6f}, C(end) = {corr[-1]:.3e}", file=sys.stderr)
    write("correlation_spin_boson", {
        "description": "<sigma+(t) sigma-(0)> in the steady state of the QuTiP guide spin-boson model (Matsubara "
                       "Nk=2, depth 5), by propagating sigma- times every steady ADO",
        "hamiltonian": mat(H), "baths": [desc], "depth": depth, "a": mat(A), "b": mat(B),
        "times": list(map(float, tlist)), "correlation": [cpx(c) for c in corr],
        "qutip_options": {"rtol": QUTIP_RTOL, "atol": QUTIP_ATOL, "method": "adams"},
    })


def absorption_case():
    """<mu(t) mu(0)> of a trimer with a ground state: mu |0><0| propagated by QuTiP's HEOMSolver (a
    non-Hermitian start whose ADOs keep column 0 alone), tr[mu rho(t)] read off. Site baths of three
    kinds: Matsubara, Pade with a terminator, underdamped (complex rates)."""
    H = Qobj(np.array([[0.0, 0, 0, 0], [0, 1.0, 0.15, 0.05], [0, 0.15, 1.2, 0.1], [0, 0.05, 0.1, 0.9]]))
    site = [Qobj(np.diag([1.0 if i == j else 0.0 for i in range(4)])) for j in range(4)]
    dl = {"kind": "drude-lorentz", "expansion": "matsubara", "lambda": 0.05, "gamma": 0.5, "temperature": 0.5,
          "terms": 2}
    pade = {"kind": "drude-lorentz", "expansion": "pade", "lambda": 0.04, "gamma": 0.7, "temperature": 0.5,
            "terms": 1, "terminator": True}
    ud = {"kind": "underdamped", "lambda": 0.1, "gamma": 0.3, "w0": 1.1, "temperature": 0.5, "terms": 1}
    L, qbaths, descs = system_and_baths(H, [(dl, site[1]), (pade, site[2]), (ud, site[3])])
    depth = 4
    mu = Qobj(np.array([[0.0, 1.0, -0.5, 0.3], [1.0, 0, 0, 0], [-0.5, 0, 0, 0], [0.3, 0, 0, 0]]))
    tlist = np.linspace(0, 30, 121)
    solver = HEOMSolver(L, qbaths, depth,
                        options=qutip.Options(nsteps=QUTIP_NSTEPS, rtol=QUTIP_RTOL, atol=QUTIP_ATOL,
                                              store_states=True))
    result = solver.run(mu * basis(4, 0) * basis(4, 0).dag(), tlist)
    corr = [complex((mu * s).tr()) for s in result.states]
    print(f"absorption_trimer: {len(solver.ados.labels)} ADOs, C(0) = {corr[0]:.6f}, |C(end)| = {abs(corr[-1]):.3e}",
          file=sys.stderr)
    write("absorption_trimer", {
        "description": "<mu(t) mu(0)> from mu |0><0| for a trimer with a ground state and site baths (Matsubara "
                       "Nk=2; Pade Nk=1 with a terminator; underdamped Nk=1), depth 4",
        "hamiltonian": mat(H), "baths": descs, "depth": depth, "num_ados": len(solver.ados.labels), "dipole": mat(mu),
        "times": list(map(float, tlist)), "correlation": [cpx(c) for c in corr],
        "qutip_options": {"rtol": QUTIP_RTOL, "atol": QUTIP_ATOL, "method": "adams"},
    })


def response_dimer_case(name, fields, field_names, t1, waiting, t3):
    """The third-order response of a dimer with its two-exciton state, pathway by pathway: each
    interaction multiplies every ADO by a dipole operator (from the left or the right), QuTiP's
    HEOMSolver propagates between them. The manifolds are written out here (g, |1>, |2>, |12>) rather
    than built by heom; the fields' polarizations (unit vectors) project each interaction's dipole (lab
    frame, no orientation average)."""
    e, J, shift = [0.2, -0.2], 0.1, -0.05
    n = 4  # g, |1>, |2>, |12>
    H = np.zeros((n, n))
    H[1, 1], H[2, 2], H[1, 2], H[2, 1] = e[0], e[1], J, J
    H[3, 3] = e[0] + e[1] + shift
    number = [np.diag([0.0, 1.0, 0.0, 1.0]), np.diag([0.0, 0.0, 1.0, 1.0])]  # excitations on each site
    dipoles = [np.array([1.0, 0.2, 0.0]), np.array([-0.3, 0.8, 0.0])]
    spec = {"kind": "drude-lorentz", "expansion": "pade", "lambda": 0.05, "gamma": 0.5, "temperature": 0.5,
            "terms": 1}
    L, qbaths, descs = system_and_baths(Qobj(H), [(spec, Qobj(number[0])), (spec, Qobj(number[1]))])
    depth = 3
    solver = HEOMSolver(L, qbaths, depth,
                        options=qutip.Options(nsteps=QUTIP_NSTEPS, rtol=QUTIP_RTOL, atol=QUTIP_ATOL))

    def raise_ground(f):  # mu+ from g, projected on field f
        m = np.zeros((n, n))
        m[1, 0], m[2, 0] = dipoles[0] @ f, dipoles[1] @ f
        return m

    def raise_one(f):  # mu+ from the one-exciton manifold: |1> -> |12> by site 2's dipole, |2> -> |12> by site 1's
        m = np.zeros((n, n))
        m[3, 1], m[3, 2] = dipoles[1] @ f, dipoles[0] @ f
        return m

    def apply(state, op, side):
        # QuTiP stores each ADO transposed: (op A)^T = A^T op^T, (A op)^T = op^T A^T.
        return np.array([a @ op.T if side == "left" else op.T @ a for a in state])

    def propagate(state, span, points):
        times = np.linspace(0.0, span, points)
        if span == 0.0:
            return [state]
        result = solver.run(state, times, ado_init=True, ado_return=True)
        return [s._ado_state for s in result.ado_states]

    num_ados = len(solver.ados.labels)
    ground = np.zeros((num_ados, n, n), dtype=complex)
    ground[0, 0, 0] = 1.0
    mu1, mu2, mu3, mu4 = (raise_ground(f) + raise_one(f) for f in fields)
    signals, pathways = ["rephasing", "non-rephasing"], ["ground-state-bleach", "stimulated-emission",
                                                         "excited-state-absorption"]
    values = np.zeros((2, 3, len(waiting), len(t1), len(t3)), dtype=complex)
    for s, signal in enumerate(signals):
        rephasing = signal == "rephasing"
        x0 = apply(ground, raise_ground(fields[0]).T, "right") if rephasing else \
            apply(ground, raise_ground(fields[0]), "left")
        x1 = propagate(x0, t1[-1], len(t1))
        for a in range(len(t1)):
            for p, pathway in enumerate(pathways):
                mu2g = raise_ground(fields[1])
                if pathway == "ground-state-bleach":
                    y0 = apply(x1[a], mu2g, "right") if rephasing else apply(x1[a], mu2g.T, "left")
                else:
                    y0 = apply(x1[a], mu2g, "left") if rephasing else apply(x1[a], mu2g.T, "right")
                y = propagate(y0, waiting[-1], len(waiting))
                for b in range(len(waiting)):
                    if pathway == "ground-state-bleach":
                        z0 = apply(y[b], raise_ground(fields[2]), "left")
                    elif pathway == "stimulated-emission":
                        z0 = apply(y[b], raise_ground(fields[2]), "right")
                    else:
                        z0 = apply(y[b], raise_one(fields[2]), "left")
                    z = propagate(z0, t3[-1], len(t3))
                    sign = -1.0 if pathway == "excited-state-absorption" else 1.0
                    for c in range(len(t3)):
                        values[s, p, b, a, c] = sign * np.trace(mu4.T @ z[c][0].T)
    print(f"{name}: {num_ados} ADOs, |R| up to {np.abs(values).max():.4f}", file=sys.stderr)
    write(name, {
        "description": "third-order response of a dimer with its two-exciton state (site baths on the excitation "
                       f"numbers, Pade Nk=1, depth 3), every pathway of both signals, fields {field_names}",
        "site_energies": e, "coupling": J, "biexciton_shift": shift, "dipoles": [list(d) for d in dipoles],
        "fields": [list(map(float, f)) for f in fields], "bath": spec, "depth": depth, "num_ados": num_ados,
        "t1": t1, "waiting_times": waiting, "t3": t3, "signals": signals, "pathways": pathways,
        "values": [cpx(v) for v in values.ravel()],
        "qutip_options": {"rtol": QUTIP_RTOL, "atol": QUTIP_ATOL, "method": "adams"},
    })


if __name__ == "__main__":
    which = sys.argv[1:] or ["exponents", "dephasing", "spin_boson", "three_level", "fmo", "fmo_example",
                             "fmo_disordered", "steady", "steady_fmo", "correlation", "absorption", "lindblad",
                             "fitted", "driven", "fermionic", "steady_fermionic", "response"]
    if "exponents" in which:
        exponent_cases()
    if "dephasing" in which:
        pure_dephasing_case()
    if "spin_boson" in which:
        spin_boson_cases()
    if "three_level" in which:
        three_level_case()
    if "fmo" in which:
        fmo_case()
    if "fmo_example" in which:
        fmo_example_case()
    if "fmo_disordered" in which:
        fmo_disordered_case()
    if "steady" in which:
        steady_cases()
    if "correlation" in which:
        correlation_case()
    if "steady_fmo" in which:
        steady_fmo_case()
    if "absorption" in which:
        absorption_case()
    if "lindblad" in which:
        lindblad_cases()
    if "fitted" in which:
        fitted_ohmic_case()
    if "driven" in which:
        driven_cases()
    if "fermionic" in which:
        fermionic_cases()
    if "steady_fermionic" in which:
        steady_fermionic_cases()
    if "response" in which:
        x, y = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
        # Four different fields, a few times each (heom's tests, every component tuple).
        response_dimer_case("response_dimer", [x, y, (x + y) / math.sqrt(2.0), x], "x, y, (x+y)/sqrt2, x",
                            [0.0, 1.5, 3.0], [0.0, 3.0], [0.0, 1.5, 3.0])
        # A named polarization on grids long enough for a 2D spectrum (the program's test).
        response_dimer_case("response_dimer_xyxy", [x, y, x, y], "x, y, x, y", list(np.arange(16) * 2.0), [0.0, 5.0],
                            list(np.arange(16) * 2.0))
