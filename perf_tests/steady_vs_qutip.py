#!/usr/bin/python3
"""`heom steady` against QuTiP 4.7's HEOMSolver.steady_state() (sparse LU, one core), in one run;
with --absorption, also example/fmo_absorption.toml's spectrum against QuTiP propagating the same
start (mu |0><0|, every other ADO zero) over the same times.

For each depth of the FMO model (example/fmo_77k.toml) it runs `heom steady` at the tolerance given
and QuTiP's steady_state() in a child process with a time limit, and prints both wall times (QuTiP's
including building its HEOM matrix), both peak memories (max RSS), heom's GMRES iterations and
residual, and max |rho_heom - rho_qutip| where QuTiP finished. Depths past --qutip-depths run heom
alone.

    /usr/bin/python3 perf_tests/steady_vs_qutip.py [--heom build/openmp/src/heom] [--threads 2]
        [--depths 3 4 5 6] [--qutip-depths 3 4] [--qutip-timeout 3600] [--tolerance 1e-10]
        [--restart 60] [--absorption [--absorption-rtol 1e-6 1e-7]] [--json results.json]
    /usr/bin/python3 perf_tests/steady_vs_qutip.py --inputs perf_tests/inputs/siam_tutorial.toml [--threads 2]
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import tomllib

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_qutip import ROOT, qutip_system  # noqa: E402  (the same model conversion)


def qutip_worker(input_path, output_path):
    from qutip.nonmarkov.bofin_solvers import HEOMSolver
    cfg = tomllib.load(open(input_path, "rb"))
    start = time.perf_counter()
    L, baths, _ = qutip_system(cfg)
    solver = HEOMSolver(L, baths, cfg["hierarchy"]["depth"])
    built = time.perf_counter()
    rho, _ = solver.steady_state(use_mkl=False)
    done = time.perf_counter()
    np.save(output_path, rho.full())
    print(json.dumps({"build_s": built - start, "solve_s": done - built, "ados": len(solver.ados.labels)}))


def qutip_absorption_worker(input_path, output_path):
    """The same correlation function as heom's [spectrum]: tr[mu rho(t)] from rho(0) = mu |0><0|."""
    import qutip
    from qutip import Qobj
    from qutip.nonmarkov.bofin_solvers import HEOMSolver
    cfg = tomllib.load(open(input_path, "rb"))
    n = len(cfg["system"]["hamiltonian"])
    cfg["initial_state"] = {"rho": np.eye(n).tolist()}  # (unused: qutip_model reads one)
    start = time.perf_counter()
    L, baths, _ = qutip_system(cfg)
    mu = np.zeros((n, n))
    mu[0, 1:] = mu[1:, 0] = cfg["spectrum"]["dipoles"]
    ground = np.zeros((n, n))
    ground[0, 0] = 1.0
    d = cfg["dynamics"]
    opts = qutip.Options(nsteps=10**8, rtol=d.get("rtol", 1e-8), atol=d.get("atol", 1e-10), store_states=True)
    solver = HEOMSolver(L, baths, cfg["hierarchy"]["depth"], options=opts)
    built = time.perf_counter()
    times = np.linspace(0.0, d["t_end"], int(round(d["t_end"] / d["output_every"])) + 1)
    result = solver.run(Qobj(mu @ ground), times)
    done = time.perf_counter()
    np.save(output_path, np.array([np.trace(mu @ s.full()) for s in result.states]))
    print(json.dumps({"build_s": built - start, "solve_s": done - built, "ados": len(solver.ados.labels)}))


def with_tolerances(text, rtol, atol, method=None):
    text = re.sub(r"(?m)^(rtol|atol|method)\s*=.*$", "", text)
    extra = f'method = "{method}"\n' if method else ""
    return text.replace("[dynamics]", f"[dynamics]\nrtol = {rtol}\natol = {atol}\n{extra}", 1)


def absorption(a, work):
    """The example at its tolerances against QuTiP at the same ones; with --absorption-rtol also heom at
    those, and every error against heom's dopri5 at rtol 1e-12 (equal accuracy, not equal rtol: heom
    bounds rho's own error, QuTiP the hierarchy's RMS)."""
    path = os.path.join(ROOT, "example/fmo_absorption.toml")
    text = open(path).read()

    def heom_c(name, source):
        p = os.path.join(work, name + ".toml")
        open(p, "w").write(source)
        wall, rss, _ = timed([a.heom, "run", p, "-o", os.path.join(work, name + ".h5"), "--threads", str(a.threads)])
        with h5py.File(os.path.join(work, name + ".h5")) as f:
            return wall, rss, f["spectrum/correlation"][()], int(f.attrs["steps"]), int(f.attrs["num_ados"])

    wall, rss, c, steps, ados = heom_c("absorption", text)
    row = {"case": "fmo_absorption", "ados": ados, "heom_s": wall, "heom_rss_mb": rss, "steps": steps,
           "threads": a.threads}
    q_out = os.path.join(work, "qutip_absorption.npy")
    row.update(run_qutip("--qutip-absorption-worker", path, q_out, a.qutip_timeout, wall, rss, c))
    if a.absorption_rtol and "qutip_s" in row:
        _, _, reference, _, _ = heom_c("reference", with_tolerances(text, 1e-12, 1e-14, "dopri5"))
        row["heom_error"] = float(np.max(np.abs(c - reference)))
        row["qutip_error"] = float(np.max(np.abs(np.load(q_out) - reference)))
        row["also"] = []
        for rtol in a.absorption_rtol:
            w, r, cx, st, _ = heom_c("looser", with_tolerances(text, rtol, rtol / 100))
            row["also"].append({"rtol": rtol, "heom_s": w, "steps": st, "heom_error": float(np.max(np.abs(cx - reference))),
                                "speedup": row["qutip_s"] / w})
    return row


def run_qutip(worker, path, out, timeout, heom_s, heom_rss, heom_result):
    """QuTiP's side of a row: times, memory, and the difference of its result (saved to `out`) from
    heom's; or why it has none."""
    q = timed([sys.executable, os.path.abspath(__file__), worker, path, out], timeout, may_fail=True)
    if q is None:
        return {"qutip": f"did not finish in {timeout:.0f} s"}
    if isinstance(q, str):
        return {"qutip": q}
    info = json.loads(q[2].strip().splitlines()[-1])
    return {"qutip_s": q[0], "qutip_rss_mb": q[1], "qutip_build_s": info["build_s"], "qutip_solve_s": info["solve_s"],
            "speedup": q[0] / heom_s, "memory_ratio": q[1] / heom_rss,
            "difference": float(np.max(np.abs(heom_result - np.load(out))))}


def timed(command, timeout=None, may_fail=False):
    """(wall s, peak RSS MB, stdout), or None when the time limit passed (with may_fail, a failure is
    returned as its last line of stderr rather than ending the script)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        start = time.perf_counter()
        # Its own process group, so that a time limit ends the measured program, not only /usr/bin/time.
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", tf.name] + command, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            stdout, stderr = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return None
        wall = time.perf_counter() - start
        if p.returncode != 0:
            if may_fail:
                return f"failed ({p.returncode}): " + (stderr.strip().splitlines() or [""])[-1]
            sys.exit(f"{' '.join(command)} failed ({p.returncode}):\n{stderr}")
        rss = int(open(tf.name).read().strip().splitlines()[-1]) / 1024
    return wall, rss, stdout


def main():
    if len(sys.argv) == 4 and sys.argv[1] in ("--qutip-worker", "--qutip-absorption-worker"):
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        (qutip_worker if sys.argv[1] == "--qutip-worker" else qutip_absorption_worker)(sys.argv[2], sys.argv[3])
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--heom", default=os.path.join(ROOT, "build/openmp/src/heom"))
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--depths", type=int, nargs="*", default=[3, 4, 5, 6])
    p.add_argument("--qutip-depths", type=int, nargs="*", default=[3, 4])
    p.add_argument("--qutip-timeout", type=float, default=3600.0)
    p.add_argument("--tolerance", type=float, default=1e-10)
    p.add_argument("--restart", type=int, default=60)
    p.add_argument("--absorption", action="store_true", help="also the FMO absorption example against QuTiP")
    p.add_argument("--absorption-rtol", type=float, nargs="*", default=[],
                   help="also heom at these rtol (atol = rtol / 100), all errors against a tight reference")
    p.add_argument("--inputs", nargs="*", default=[],
                   help="instead of the FMO depths: these input files (their own [steady] table), each with QuTiP")
    p.add_argument("--json")
    a = p.parse_args()
    base = open(os.path.join(ROOT, "example/fmo_77k.toml")).read()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for path in a.inputs:
            out = os.path.join(work, os.path.basename(path) + ".h5")
            wall, rss, _ = timed([a.heom, "steady", path, "-o", out, "--threads", str(a.threads)])
            with h5py.File(out) as f:
                rho = f["steady/rho"][()]
                s = f["steady"].attrs
                row = {"input": path, "ados": int(f.attrs["num_ados"]), "heom_s": wall, "heom_rss_mb": rss,
                       "iterations": int(s["iterations"]), "residual": float(s["residual"]), "threads": a.threads}
                if "steady/current" in f:
                    row["current"] = [float(c.real) for c in f["steady/current"][()]]
            row.update(run_qutip("--qutip-worker", path, out + ".npy", a.qutip_timeout, wall, rss, rho))
            rows.append(row)
            print(json.dumps(row), flush=True)
        for depth in a.depths if not a.inputs else []:
            text = re.sub(r"(?m)^depth = .*$", f"depth = {depth}", base)
            text += f"\n[steady]\ntolerance = {a.tolerance}\nrestart = {a.restart}\n"
            path = os.path.join(work, f"fmo_depth{depth}.toml")
            open(path, "w").write(text)
            out = os.path.join(work, f"fmo_depth{depth}.h5")
            wall, rss, _ = timed([a.heom, "steady", path, "-o", out, "--threads", str(a.threads)])
            with h5py.File(out) as f:
                rho = f["steady/rho"][()]
                s = f["steady"].attrs
                row = {"depth": depth, "ados": int(f.attrs["num_ados"]), "heom_s": wall, "heom_rss_mb": rss,
                       "iterations": int(s["iterations"]), "residual": float(s["residual"]),
                       "restart": a.restart, "threads": a.threads}
            if depth in a.qutip_depths:
                q_out = os.path.join(work, f"qutip{depth}.npy")
                row.update(run_qutip("--qutip-worker", path, q_out, a.qutip_timeout, wall, rss, rho))
            rows.append(row)
            print(json.dumps(row), flush=True)
        if a.absorption:
            rows.append(absorption(a, work))
            print(json.dumps(rows[-1]), flush=True)
    if a.json:
        json.dump({"machine_cpus": os.cpu_count(), "rows": rows}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
