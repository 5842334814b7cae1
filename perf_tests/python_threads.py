#!/usr/bin/python3
"""heom.HEOMSolver's run time on an idle machine and with other processes keeping cores busy, by
thread setting: the module's default (the cores idle when heom starts), and HEOM_NUM_THREADS fixed.
Each measurement is a fresh process (heom's threads are chosen when it starts); idle and busy rounds
alternate (ABBA), and the medians are quoted.

    PYTHONPATH=build/openmp/python /usr/bin/python3 perf_tests/python_threads.py [--rounds 4] [--busy 1]
        [--json results.json]

Cases: QuTiP's spin-boson tutorial (example/quickstart.py's model, depth 5, 501 output times) and
FMO at depth 4 (example/fmo_77k.toml), both through heom.HEOMSolver with QuTiP 4.7's objects.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One run in a child process: prints the run call's wall time and the threads heom chose.
CHILD = r"""
import sys, time, tomllib
import numpy as np, qutip, heom
from qutip.nonmarkov.heom import DrudeLorentzBath
case = sys.argv[1]
if case == "spin-boson":
    H = 0.25 * qutip.sigmaz() + 0.5 * qutip.sigmax()
    bath = DrudeLorentzBath(qutip.sigmaz(), lam=0.1, gamma=0.5, T=0.5, Nk=2)
    solver = heom.HEOMSolver(H, bath, 5)
    rho0, times = qutip.basis(2, 0).proj(), np.linspace(0, 50, 501)
    e_ops = [qutip.sigmaz()]
else:
    sys.path.insert(0, sys.argv[2] + "/perf_tests")
    from compare_qutip import output_times, qutip_model
    cfg = tomllib.load(open(sys.argv[2] + "/example/fmo_77k.toml", "rb"))
    H, baths, _, rho0 = qutip_model(cfg)
    solver = heom.HEOMSolver(H, baths, cfg["hierarchy"]["depth"], options=qutip.Options(rtol=1e-6, atol=1e-8))
    times, e_ops = output_times(cfg), None
start = time.perf_counter()
solver.run(rho0, times, e_ops=e_ops)
print(time.perf_counter() - start, heom.threads())
"""


def busy_processes(count):
    """`count` processes that keep a core busy each."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def measure(case, threads):
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    env.pop("HEOM_NUM_THREADS", None)
    if threads:
        env["HEOM_NUM_THREADS"] = str(threads)
    out = subprocess.run([sys.executable, "-c", CHILD, case, ROOT], env=env, check=True, capture_output=True,
                         text=True).stdout.split()
    return float(out[0]), int(out[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=4, help="idle and busy measurements of each setting")
    parser.add_argument("--busy", type=int, default=1, help="busy processes in the busy rounds")
    parser.add_argument("--json")
    args = parser.parse_args()
    settings = [("default", 0), ("HEOM_NUM_THREADS=1", 1), (f"HEOM_NUM_THREADS={os.cpu_count()}", os.cpu_count())]
    rows = []
    for case in ("spin-boson", "fmo-depth-4"):
        for label, threads in settings:
            samples = {"idle": [], "busy": []}
            chosen = {"idle": set(), "busy": set()}
            for r in range(args.rounds):
                for load in (("idle", "busy") if r % 2 == 0 else ("busy", "idle")):  # (ABBA)
                    hogs = busy_processes(args.busy) if load == "busy" else []
                    try:
                        time.sleep(0.3)  # (the load is seen when heom starts)
                        seconds, used = measure(case, threads)
                    finally:
                        for h in hogs:
                            h.kill()
                            h.wait()
                    samples[load].append(seconds)
                    chosen[load].add(used)
            idle, busy = statistics.median(samples["idle"]), statistics.median(samples["busy"])
            rows.append({"case": case, "setting": label, "idle_s": idle, "busy_s": busy, "ratio": busy / idle,
                         "threads_idle": sorted(chosen["idle"]), "threads_busy": sorted(chosen["busy"]),
                         "samples": samples})
            print(f"{case:12} {label:20} idle {idle:.3f} s ({'/'.join(map(str, sorted(chosen['idle'])))} threads)"
                  f"  busy {busy:.3f} s ({'/'.join(map(str, sorted(chosen['busy'])))} threads)  busy/idle "
                  f"{busy / idle:.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpus": os.cpu_count(), "busy_processes": args.busy, "rounds": args.rounds, "rows": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
