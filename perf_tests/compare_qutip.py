#!/usr/bin/python3
"""heom against QuTiP 4.7's and QuTiP 5.3's HEOMSolver on the same input files, in one run.

For each input it runs `heom run` (on --threads threads) and each QuTiP (build + solve, one core:
OMP_NUM_THREADS=1) at the input's rtol/atol, and prints the wall times, the ratios, the peak
memories (max RSS of the process), and each program's max |rho - rho_ref| against a tight
reference: heom's dopri5 at rtol 1e-12 / atol 1e-14, whose agreement with QuTiP at rtol = atol =
1e-12 the unit tests establish (3e-9 for FMO at depth 4). QuTiP 4.7 is Debian's (/usr/bin/python3);
QuTiP 5.3 runs in the virtual environment scripts/qutip5_python makes from PyPI on first use
(--no-qutip5 leaves it out).

    /usr/bin/python3 perf_tests/compare_qutip.py [--heom build/openmp/src/heom] [--threads 2]
                                                 [--also-rtol 1e-6 ...] [--also-method dopri5 ...]
                                                 [--also-max-order 4 ...] [--no-qutip5] [--json results.json]
                                                 [INPUT.toml ...]

--also-rtol runs heom once more per input at each given rtol (atol = rtol / 100) and reports its
time and error too: heom controls rho's own error at rtol (QuTiP's RMS over the whole hierarchy
does not), so at equal rtol it is more accurate; a looser rtol finds equal accuracy.
--also-method runs heom once more per input with each given method, at the input's tolerances.
--also-max-order repeats each --also-rtol run with exp-adams' order capped at each given value
([dynamics] max_order).

Default inputs: example/spin_boson.toml, example/fmo_77k.toml (FMO depth 4),
perf_tests/inputs/fmo_depth5.toml and perf_tests/inputs/spin_boson_deep.toml.
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

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_INPUTS = ["example/spin_boson.toml", "example/fmo_77k.toml", "perf_tests/inputs/spin_boson_deep.toml",
                  "perf_tests/inputs/fmo_depth5.toml"]


# --- QuTiP side (runs in a child process, so that its peak memory is its own) -------------------

def qutip_heom():
    """The module that holds HEOMSolver and the bath classes: QuTiP 4.7's or QuTiP 5's."""
    import qutip
    if int(qutip.__version__.split(".")[0]) >= 5:
        import qutip.solver.heom as heom_module
        return heom_module
    import qutip.nonmarkov.bofin_baths as baths
    import qutip.nonmarkov.bofin_solvers as solvers
    for name in ("BosonicBath", "DrudeLorentzBath", "DrudeLorentzPadeBath", "FermionicBath", "LorentzianBath",
                 "LorentzianPadeBath", "UnderDampedBath"):
        setattr(solvers, name, getattr(baths, name))
    return solvers


def qutip_model(cfg):
    """The same model QuTiP-side, converted exactly as heom converts it (docs/program.md); the bath
    classes have the same names and arguments in QuTiP 4.7 and 5."""
    from qutip import Qobj
    h = qutip_heom()
    BosonicBath, DrudeLorentzBath, DrudeLorentzPadeBath = h.BosonicBath, h.DrudeLorentzBath, h.DrudeLorentzPadeBath
    FermionicBath, LorentzianBath, LorentzianPadeBath = h.FermionicBath, h.LorentzianBath, h.LorentzianPadeBath
    UnderDampedBath = h.UnderDampedBath
    spectroscopy = cfg.get("units", "natural") == "spectroscopy"
    e = 2 * np.pi * 2.99792458e-5 if spectroscopy else 1.0
    k = 0.695034800 * e if spectroscopy else 1.0

    def matrix(table, key):
        m = np.array(table[key], dtype=complex)
        if key + "_imag" in table:
            m = m + 1j * np.array(table[key + "_imag"])
        return m

    H = Qobj(matrix(cfg["system"], "hamiltonian") * e)
    baths, terminators = [], []
    for b in cfg.get("bath", []):
        Q = Qobj(matrix(b, "coupling"))
        if b["kind"] == "drude-lorentz":
            cls = DrudeLorentzPadeBath if b.get("expansion", "matsubara") == "pade" else DrudeLorentzBath
            bath = cls(Q, lam=b["lambda"] * e, gamma=b["gamma"] * e, T=b["temperature"] * k, Nk=b["terms"])
            if b.get("terminator", False):
                terminators.append(bath.terminator()[1])
        elif b["kind"] == "lorentzian":
            cls = LorentzianPadeBath if b.get("expansion", "pade") == "pade" else LorentzianBath
            bath = cls(Q, gamma=b["gamma"] * e, w=b["width"] * e, mu=b["mu"] * e, T=b["temperature"] * k,
                       Nk=b["terms"])
        elif b["kind"] == "fermionic-exponents":
            def flst(key, f):
                re_ = np.array(b[key], dtype=complex)
                return list(f * (re_ + 1j * np.array(b.get(key + "_imag", np.zeros(len(re_))))))
            bath = FermionicBath(Q, flst("ck_plus", e * e), flst("vk_plus", e), flst("ck_minus", e * e),
                                 flst("vk_minus", e))
        elif b["kind"] == "underdamped":
            bath = UnderDampedBath(Q, lam=b["lambda"] * e, gamma=b["gamma"] * e, w0=b["w0"] * e,
                                   T=b["temperature"] * k, Nk=b["terms"])
        else:
            def lst(key, f):
                re_ = np.array(b.get(key, []), dtype=complex)
                return list(f * (re_ + 1j * np.array(b.get(key + "_imag", np.zeros(len(re_))))))
            bath = BosonicBath(Q, lst("ck_real", e * e), lst("vk_real", e), lst("ck_imag", e * e), lst("vk_imag", e))
        baths.append(bath)
    rho0 = Qobj(matrix(cfg["initial_state"], "rho"))
    return H, baths, terminators, rho0


def qutip_system(cfg):
    """(the system Liouvillian with any terminators, QuTiP baths, rho0) of an input, as heom reads it."""
    from qutip import liouvillian
    H, baths, terminators, rho0 = qutip_model(cfg)
    L = liouvillian(H)
    for term in terminators:
        L = L + term
    return L, baths, rho0


def output_times(cfg):
    d = cfg["dynamics"]
    n = int(np.floor(d["t_end"] / d["output_every"] + 1e-9))
    t = [min(d["t_end"], i * d["output_every"]) for i in range(n + 1)]
    if d["t_end"] - t[-1] > 1e-9 * d["t_end"]:
        t.append(d["t_end"])
    return np.array(t)


def qutip_worker(input_path, output_path):
    """Runs QuTiP's HEOMSolver (that of the interpreter running it) with its default method (zvode's
    Adams in both versions) at the input's tolerances; prints its version, times and RHS count."""
    import qutip
    cfg = tomllib.load(open(input_path, "rb"))
    HEOMSolver = qutip_heom().HEOMSolver
    five = int(qutip.__version__.split(".")[0]) >= 5
    start = time.perf_counter()
    L, baths, rho0 = qutip_system(cfg)
    d = cfg["dynamics"]
    tolerances = dict(nsteps=10**8, rtol=d.get("rtol", 1e-8), atol=d.get("atol", 1e-10), store_states=True)
    opts = dict(tolerances, progress_bar=False) if five else qutip.Options(**tolerances)
    solver = HEOMSolver(L, baths, cfg["hierarchy"]["depth"], options=opts)
    built = time.perf_counter()
    result = solver.run(rho0, output_times(cfg))
    done = time.perf_counter()
    rho = np.array([s.full() for s in result.states])
    np.save(output_path, rho)
    zvode = solver._integrator._ode_solver._integrator if five else solver._ode._integrator
    print(json.dumps({"version": qutip.__version__, "build_s": built - start, "solve_s": done - built,
                      "ados": len(solver.ados.labels), "rhs_evaluations": int(zvode.iwork[11])}))


# --- driver ---------------------------------------------------------------------------------------

def run_measured(command, cwd=None):
    """(wall seconds, stdout, stderr) of a child process; exits when it fails."""
    start = time.perf_counter()
    p = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    wall = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({p.returncode}):\n{err}")
    return wall, out, err


def run_with_rss(command, cwd=None):
    """Runs a command under /usr/bin/time -f to read its peak RSS as well."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        wall, out, err = run_measured(["/usr/bin/time", "-f", "%M", "-o", tf.name] + command, cwd)
        rss_mb = int(open(tf.name).read().strip().splitlines()[-1]) / 1024
    return wall, rss_mb, out


def read_rho(path):
    import h5py  # (here: the QuTiP 5 environment that runs the workers has no h5py)
    with h5py.File(path, "r") as f:
        return f["rho"][()], dict(f.attrs)


def with_settings(text, rtol, atol, method=None, max_order=None):
    """The input text with other tolerances (and method and exp-adams' max_order, when given)."""
    keys = ["rtol", "atol"] + (["method"] if method else []) + (["max_order"] if max_order else [])
    for key in keys:
        text = re.sub(rf"(?m)^{key}\s*=.*$", "", text)
    settings = (f"rtol = {rtol}\natol = {atol}\n" + (f'method = "{method}"\n' if method else "") +
                (f"max_order = {max_order}\n" if max_order else ""))
    return text.replace("[dynamics]\n", "[dynamics]\n" + settings, 1)


def run_qutip(python, input_path, work, name, rho_ref):
    """One QuTiP worker on one core: its wall time, peak memory, RHS evaluations and error."""
    out = os.path.join(work, name + "_qutip.npy")
    worker = [python, os.path.abspath(__file__), "--qutip-worker", os.path.abspath(input_path), out]
    wall, rss, stdout = run_with_rss(["env", "OMP_NUM_THREADS=1"] + worker)
    info = json.loads(stdout.strip().splitlines()[-1])
    return {"version": info["version"], "s": wall, "build_s": info["build_s"], "solve_s": info["solve_s"],
            "rss_mb": rss, "rhs": info["rhs_evaluations"], "error": float(np.max(np.abs(np.load(out) - rho_ref)))}


def compare(heom, input_path, threads, work, also_rtol=(), also_method=(), also_max_order=(), qutip5=None):
    text = open(input_path).read()
    cfg = tomllib.loads(text)
    name = os.path.splitext(os.path.basename(input_path))[0]
    rtol, atol = cfg["dynamics"].get("rtol", 1e-8), cfg["dynamics"].get("atol", 1e-10)

    # The reference: dopri5 at rtol 1e-12, whatever method is compared (it agrees with QuTiP at
    # rtol 1e-12 to 3e-9).
    tight = os.path.join(work, name + "_tight.toml")
    open(tight, "w").write(with_settings(text, 1e-12, 1e-14, "dopri5"))
    run_measured([heom, "run", tight, "-o", os.path.join(work, name + "_ref.h5"), "--threads", str(threads)])
    rho_ref, _ = read_rho(os.path.join(work, name + "_ref.h5"))

    h_wall, h_rss, _ = run_with_rss([heom, "run", os.path.abspath(input_path), "-o", os.path.join(work, name + ".h5"),
                                     "--threads", str(threads)])
    rho_h, attrs = read_rho(os.path.join(work, name + ".h5"))

    q = run_qutip("/usr/bin/python3", input_path, work, name, rho_ref)
    q5 = run_qutip(qutip5, input_path, work, name, rho_ref) if qutip5 else None
    extra = []
    variants = ([(r, r / 100, None, None) for r in also_rtol] + [(rtol, atol, m, None) for m in also_method] +
                [(r, r / 100, None, cap) for cap in also_max_order for r in also_rtol])
    for r, at, method, max_order in variants:
        path = os.path.join(work, f"{name}_variant.toml")
        open(path, "w").write(with_settings(text, r, at, method, max_order))
        wall, rss, _ = run_with_rss([heom, "run", path, "-o", os.path.join(work, name + "_x.h5"), "--threads", str(threads)])
        rho_x, xattrs = read_rho(os.path.join(work, name + "_x.h5"))
        extra.append({"rtol": r, "method": xattrs["method"], "max_order": max_order, "heom_s": wall, "heom_rss_mb": rss,
                      "heom_rhs": int(xattrs["rhs_evaluations"]), "heom_error": float(np.max(np.abs(rho_x - rho_ref))),
                      "speedup": q["s"] / wall, "speedup_qutip5": q5["s"] / wall if q5 else None})
    return {
        "input": input_path, "ados": int(attrs["num_ados"]), "rtol": rtol, "atol": atol,
        "heom_s": h_wall, "qutip_s": q["s"], "qutip_version": q["version"], "qutip_build_s": q["build_s"],
        "qutip_solve_s": q["solve_s"], "speedup": q["s"] / h_wall, "heom_rss_mb": h_rss, "qutip_rss_mb": q["rss_mb"],
        "memory_ratio": q["rss_mb"] / h_rss, "heom_error": float(np.max(np.abs(rho_h - rho_ref))),
        "qutip_error": q["error"], "heom_rhs": int(attrs["rhs_evaluations"]), "qutip_rhs": q["rhs"],
        "qutip5": q5, "speedup_qutip5": q5["s"] / h_wall if q5 else None,
        "heom_threads": int(attrs["threads"]), "heom_method": attrs["method"], "also": extra,
    }


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--qutip-worker":
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        qutip_worker(sys.argv[2], sys.argv[3])
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="*", default=DEFAULT_INPUTS)
    p.add_argument("--heom", default=os.path.join(ROOT, "build/openmp/src/heom"))
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--also-rtol", type=float, nargs="*", default=[], help="extra heom runs at these rtol")
    p.add_argument("--also-method", nargs="*", default=[], help="extra heom runs with these methods")
    p.add_argument("--also-max-order", type=int, nargs="*", default=[],
                   help="the --also-rtol runs again with exp-adams' order capped at these")
    p.add_argument("--no-qutip5", action="store_true", help="QuTiP 4.7 alone")
    p.add_argument("--json", help="also write the results here")
    a = p.parse_args()
    qutip5 = None
    if not a.no_qutip5:
        qutip5 = subprocess.run([os.path.join(ROOT, "scripts/qutip5_python")], check=True, stdout=subprocess.PIPE,
                                text=True).stdout.strip()
    print(f"heom on {a.threads} threads; QuTiP 4.7" + (" and QuTiP 5" if qutip5 else "") +
          " on one core each (OMP_NUM_THREADS=1)", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for input_path in a.inputs:
            path = input_path if os.path.isabs(input_path) else os.path.join(ROOT, input_path)
            row = compare(os.path.abspath(a.heom), path, a.threads, work, a.also_rtol, a.also_method,
                          a.also_max_order, qutip5)
            rows.append(row)
            print(f"{os.path.relpath(path, ROOT)}: {row['ados']} ADOs, rtol {row['rtol']:g} atol {row['atol']:g}\n"
                  f"  heom  {row['heom_s']:8.2f} s  {row['heom_rss_mb']:7.0f} MB  error {row['heom_error']:.1e}"
                  f"  ({row['heom_rhs']} RHS, {row['heom_method']}, {row['heom_threads']} threads)\n"
                  f"  QuTiP {row['qutip_version']:<6} {row['qutip_s']:8.2f} s  {row['qutip_rss_mb']:7.0f} MB  error"
                  f" {row['qutip_error']:.1e}  ({row['qutip_rhs']} RHS; build {row['qutip_build_s']:.1f} s + solve"
                  f" {row['qutip_solve_s']:.1f} s)", flush=True)
            q5 = row["qutip5"]
            if q5:
                print(f"  QuTiP {q5['version']:<6} {q5['s']:8.2f} s  {q5['rss_mb']:7.0f} MB  error {q5['error']:.1e}"
                      f"  ({q5['rhs']} RHS; build {q5['build_s']:.1f} s + solve {q5['solve_s']:.1f} s)", flush=True)
            print(f"  heom is {row['speedup']:.1f}x faster than QuTiP {row['qutip_version']}" +
                  (f", {row['speedup_qutip5']:.1f}x than QuTiP {q5['version']}" if q5 else "") +
                  f", and uses {row['memory_ratio']:.1f}x less memory than QuTiP {row['qutip_version']}", flush=True)
            for x in row["also"]:
                cap = f", max_order {x['max_order']}" if x["max_order"] else ""
                print(f"  heom {x['method']} at rtol {x['rtol']:g}{cap}: {x['heom_s']:.2f} s, error {x['heom_error']:.1e}"
                      f" ({x['heom_rhs']} RHS):"
                      f" {x['speedup']:.1f}x faster than QuTiP 4.7" +
                      (f", {x['speedup_qutip5']:.1f}x than QuTiP 5" if x["speedup_qutip5"] else ""), flush=True)
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
