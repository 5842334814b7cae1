#!/usr/bin/python3
"""Strong scaling of one hierarchy split between devices, measured with heom_bench_scaling: time per
exp-adams step on one device (1 thread, and all threads), split over P simulated devices of one
process (--devices) and over P MPI ranks, and P independent whole copies (the machine's own capacity
for P processes). Each point is the best of --repeat runs, taken in turns so that drifts in the
machine's speed hit every configuration alike. Writes JSON and a plot of time per step, speedup over
one device with one thread, and the halo fraction against P.

    scaling.py BUILD_DIR [--model fmo --depth 6] [--devices 1 2 4] [--repeat 3] --json OUT.json --plot OUT.png
"""
import argparse
import json
import os
import shutil
import subprocess


def run(command, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir")
    parser.add_argument("--model", default="fmo", choices=["fmo", "spin-boson"])
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", required=True)
    parser.add_argument("--plot")
    args = parser.parse_args()

    bench = os.path.join(args.build_dir, "perf_tests", "heom_bench_scaling")
    mpiexec = shutil.which("mpiexec")
    common = ["--model", args.model, "--depth", str(args.depth), "--steps", str(args.steps)]
    cores = os.cpu_count()
    configurations = [("one", 1, 1, [bench, "--mode", "one"] + common),
                      (f"one, {cores} threads", 1, cores, [bench, "--mode", "one"] + common)]
    for p in args.devices:
        configurations.append(("devices", p, p, [bench, "--mode", "devices", "--devices", str(p)] + common))
        mpirun = [mpiexec, "-n", str(p), "--oversubscribe"]
        configurations.append(("split", p, 1, mpirun + [bench, "--mode", "split"] + common))
        if p > 1:
            configurations.append(("copies", p, 1, mpirun + [bench, "--mode", "copies"] + common))
    best = {}
    for _ in range(args.repeat):
        for name, p, threads, command in configurations:
            r = run(command, threads)
            key = (name, p)
            if key not in best or r["seconds_per_step"] < best[key]["seconds_per_step"]:
                best[key] = dict(r, configuration=name)
    one = best[("one", 1)]["seconds_per_step"]
    results = []
    for (name, p), r in sorted(best.items(), key=lambda item: (item[0][0], item[0][1])):
        r["speedup_over_one_thread"] = one / r["seconds_per_step"]
        if name == "copies":  # p whole problems at once: the throughput the machine gives p processes
            r["speedup_over_one_thread"] = p * one / r["seconds_per_step"]
        results.append(r)
        print(f"{name:>16} P={p}: {1e3 * r['seconds_per_step']:8.2f} ms/step, speedup {r['speedup_over_one_thread']:.2f}, "
              f"halo fraction {r['halo_fraction']:.2f}")
    with open(args.json, "w") as f:
        json.dump({"cores": cores, "model": args.model, "depth": args.depth, "results": results}, f, indent=1)

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
        for name, marker in [("devices", "o"), ("split", "s"), ("copies", "^")]:
            rows = [r for r in results if r["configuration"] == name]
            ps = [r["devices"] for r in rows]
            axes[0].plot(ps, [1e3 * r["seconds_per_step"] for r in rows], marker=marker, label=name)
            axes[1].plot(ps, [r["speedup_over_one_thread"] for r in rows], marker=marker, label=name)
            if name != "copies":
                axes[2].plot(ps, [r["halo_fraction"] for r in rows], marker=marker, label=name)
        axes[0].axhline(1e3 * one, color="gray", ls=":", label="one device, 1 thread")
        axes[0].axhline(1e3 * best[("one, %d threads" % cores, 1)]["seconds_per_step"], color="gray", ls="--",
                        label=f"one device, {cores} threads")
        axes[1].plot(args.devices, args.devices, color="gray", ls=":", label="ideal")
        axes[0].set(xlabel="devices P", ylabel="ms per step", title=f"{args.model}, depth {args.depth}")
        axes[1].set(xlabel="devices P", ylabel="speedup over one device, 1 thread")
        axes[2].set(xlabel="devices P", ylabel="halo / owned ADOs (all devices)")
        for a in axes:
            a.legend(fontsize=7)
            a.grid(alpha=0.3)
        fig.suptitle(f"heom_bench_scaling on {cores} cores (P > {cores} oversubscribes them)", fontsize=9)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main()
