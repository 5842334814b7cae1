#!/usr/bin/python3
"""Weak scaling of a disorder-averaged third-order response ([response] with an [ensemble]): M members
on one rank with one thread, against P ranks (mpirun, one thread each) with M members each (taken as
ranks become free), and, for the machine's own capacity, P independent one-rank processes of M
members at once. Efficiency is T(1 rank, M) / T(P ranks, P M): 1 is perfect. Times are whole `heom
run` processes, each point the best of --repeat runs taken in turns. The response is a disordered
dimer with its two-exciton state (every pathway, both signals, parallel dipoles averaged
isotropically), small enough that a member takes about a second.

    response_scaling.py HEOM_EXECUTABLE [--members 50] [--ranks 2] [--repeat 2] [--json OUT.json]
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

INPUT = """units = "natural"
[system]
hamiltonian = [[0.0, 0.0, 0.0], [0.0, 0.25, 0.1], [0.0, 0.1, -0.25]]
[[bath]]
kind = "drude-lorentz"
coupling = [[0, 0, 0], [0, 1, 0], [0, 0, 0]]
lambda = 0.05
gamma = 0.5
temperature = 0.5
terms = 1
[[bath]]
kind = "drude-lorentz"
coupling = [[0, 0, 0], [0, 0, 0], [0, 0, 1]]
lambda = 0.05
gamma = 0.5
temperature = 0.5
terms = 1
[hierarchy]
depth = 4
[dynamics]
rtol = 1e-8
atol = 1e-10
[response]
dipoles = [1.0, -0.5]
waiting_times = [0.0, 10.0]
t1_step = 1.0
t1_points = 16
t3_step = 1.0
t3_points = 32
[ensemble]
members = {members}
seed = 5
site_energy_sigma = [0.0, 0.05, 0.05]
"""


def timed(command, work, env):
    start = time.monotonic()
    subprocess.run(command, cwd=work, env=env, check=True, capture_output=True, text=True)
    return time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("heom")
    parser.add_argument("--members", type=int, default=50, help="members per rank (M)")
    parser.add_argument("--ranks", type=int, default=2, help="P")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json")
    args = parser.parse_args()
    heom, m, p = os.path.abspath(args.heom), args.members, args.ranks
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory() as work:
        for name, members in (("one", m), ("all", p * m)):
            open(os.path.join(work, name + ".toml"), "w").write(INPUT.format(members=members))
        mpirun = [shutil.which("mpiexec"), "-n", str(p), "--oversubscribe"]

        def copies():
            start = time.monotonic()
            procs = [subprocess.Popen([heom, "run", "one.toml", "-o", f"copy{k}.h5"], cwd=work, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for k in range(p)]
            if any(proc.wait() != 0 for proc in procs):
                raise SystemExit("a copy failed")
            return time.monotonic() - start

        configurations = {
            f"1 rank, {m} members": lambda: timed([heom, "run", "one.toml", "-o", "one.h5"], work, env),
            f"{p} ranks, {p * m} members": lambda: timed(mpirun + [heom, "run", "all.toml", "-o", "all.h5"], work, env),
            f"{p} independent processes of {m} members": copies,
        }
        best = {name: float("inf") for name in configurations}
        for _ in range(args.repeat):
            for name, measure in configurations.items():
                best[name] = min(best[name], measure())
    names = list(configurations)
    result = {"members_per_rank": m, "ranks": p, "seconds": best,
              "efficiency": best[names[0]] / best[names[1]],
              "capacity": best[names[0]] / best[names[2]]}
    for name in names:
        print(f"{name:45s} {best[name]:8.2f} s")
    print(f"weak-scaling efficiency on {p} ranks: {result['efficiency']:.3f} "
          f"({p} independent processes: {result['capacity']:.3f})")
    if args.json:
        json.dump(result, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
