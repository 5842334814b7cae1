#!/usr/bin/python3
"""Weak scaling of an ensemble (heom_bench_ensemble): M disordered members on one worker with one
thread, against P workers with M members each -- P MPI ranks with one thread each, and P devices of one
process -- and, for the machine's own capacity, P independent one-rank processes at once. Efficiency
is T(1 worker, M) / T(P workers, P M): 1 is perfect. Each point is the best of --repeat runs, taken in
turns. Also reports each configuration's spread of step counts over the members (what a batch that
shares one step size would cost). Writes JSON and a plot.

    ensemble_scaling.py BUILD_DIR [--model fmo --depth 4 --members 8] [--workers 2] [--repeat 2]
                        --json OUT.json [--plot OUT.png]
"""
import argparse
import json
import os
import shutil
import subprocess
import time


def env(threads):
    return dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false", OMPI_ALLOW_RUN_AS_ROOT="1",
                OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def run(command, threads):
    out = subprocess.run(command, env=env(threads), capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_copies(command, copies):
    """`copies` one-rank processes at once: the wall time until the last one ends."""
    start = time.monotonic()
    procs = [subprocess.Popen(command, env=env(1), stdout=subprocess.PIPE, text=True) for _ in range(copies)]
    results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    seconds = time.monotonic() - start
    r = dict(results[0], mode="copies", workers=copies, members=sum(x["members"] for x in results), seconds=seconds)
    r["members_per_second"] = r["members"] / seconds
    return r


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir")
    parser.add_argument("--model", default="fmo", choices=["fmo", "spin-boson"])
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--members", type=int, default=8, help="members per worker (M)")
    parser.add_argument("--workers", type=int, default=2, help="P")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", required=True)
    parser.add_argument("--plot")
    args = parser.parse_args()

    bench = os.path.join(args.build_dir, "perf_tests", "heom_bench_ensemble")
    common = ["--model", args.model, "--depth", str(args.depth), "--members-per-worker", str(args.members)]
    mpirun = [shutil.which("mpiexec"), "-n", str(args.workers), "--oversubscribe"]
    p = args.workers
    configurations = {
        "one worker": lambda: run([bench, "--mode", "ranks"] + common, 1),
        f"{p} ranks": lambda: run(mpirun + [bench, "--mode", "ranks"] + common, 1),
        f"{p} devices": lambda: run([bench, "--mode", "devices", "--devices", str(p)] + common, p),
        f"{p} copies": lambda: run_copies([bench, "--mode", "ranks"] + common, p),
    }
    best = {}
    for _ in range(args.repeat):
        for name, measure in configurations.items():
            r = measure()
            if name not in best or r["seconds"] < best[name]["seconds"]:
                best[name] = dict(r, configuration=name)
    one = best["one worker"]["seconds"]
    results = []
    for name, r in best.items():
        r["efficiency"] = one / r["seconds"]
        results.append(r)
        print(f"{name:>12}: {r['members']:3d} members in {r['seconds']:7.2f} s, {r['members_per_second']:6.2f} "
              f"members/s, efficiency {r['efficiency']:.3f}, steps per member {r['fewest_steps']}-{r['most_steps']}")
    with open(args.json, "w") as f:
        json.dump({"cores": os.cpu_count(), "model": args.model, "depth": args.depth, "members_per_worker": args.members,
                   "results": results}, f, indent=1)

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6.5, 3.6))
        names = [r["configuration"] for r in results]
        bars = ax.bar(names, [r["efficiency"] for r in results], color=["gray", "C0", "C1", "C2"][:len(results)])
        for bar, r in zip(bars, results):
            ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height() + 0.01,
                    f"{r['efficiency']:.2f}\n{r['members']} in {r['seconds']:.1f} s", ha="center", fontsize=8)
        ax.axhline(0.9, color="gray", ls=":", label="target 0.9")
        ax.set(ylim=(0, 1.25), ylabel="weak-scaling efficiency",
               title=f"{args.model} depth {args.depth}: {args.members} members per worker, 1 thread each "
                     f"({os.cpu_count()} cores)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main()
