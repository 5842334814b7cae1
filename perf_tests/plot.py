#!/usr/bin/python3
"""Plots a Google Benchmark JSON from heom_bench_generator to a PNG: the generator's effective
bandwidth against the STREAM triad and its FLOP rate against the peak-FLOP loop, both measured in
the same run, the matrix-free / assembled-CRS comparison, and whole runs by integrator.

    perf_tests/plot.py results.json [results.png]
"""
import json
import re
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip())
    source = sys.argv[1]
    target = sys.argv[2] if len(sys.argv) == 3 else os.path.splitext(source)[0] + ".png"
    data = json.load(open(source))
    runs = [b for b in data["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    triad = next((b["bytes/s"] for b in runs if b["name"].startswith("BM_StreamTriad")), None)
    peak = next((b["FLOP/s"] for b in runs if b["name"].startswith("BM_PeakFlops")), None)
    free = [b for b in runs if b["name"].startswith("BM_MatrixFree")]
    crs = {b["name"].replace("BM_AssembledCrs", ""): b for b in runs if b["name"].startswith("BM_AssembledCrs")}

    def label(b):
        return b.get("label", "") + " " + b["name"].split("/")[2].replace("depth:", "d") + f"\n{int(b['ADOs'])} ADOs"

    whole = [b for b in runs if b["name"].startswith("BM_WholeRun")]

    fig, (bw, fl, ratio, runs_ax) = plt.subplots(1, 4, figsize=(20, 4.5), constrained_layout=True)
    names = [label(b) for b in free]
    bw.bar(names, [b["bytes/s"] / 2**30 for b in free], color="tab:blue")
    if triad:
        bw.axhline(triad / 2**30, color="k", ls="--", label=f"STREAM triad {triad / 2**30:.0f} GiB/s")
        bw.axhline(triad / 2**31, color="gray", ls=":", label="half of it")
        bw.legend(fontsize="small")
    bw.set_ylabel("effective GiB/s (32 n^2 bytes per ADO)")
    bw.set_title("generator: bandwidth")
    fl.bar(names, [b["FLOP/s"] / 1e9 for b in free], color="tab:orange")
    if peak:
        fl.axhline(peak / 1e9, color="k", ls="--", label=f"peak loop {peak / 1e9:.0f} GFLOP/s")
        fl.legend(fontsize="small")
    fl.set_ylabel("GFLOP/s (counted from the formula)")
    fl.set_yscale("log")
    fl.set_title("generator: floating point")
    # CRS against each kernel of the matrix-free generator on the same model.
    pairs = [(b, crs.get(re.sub(r"/kernel:\d", "", b["name"].replace("BM_MatrixFree", "")))) for b in free]
    pairs = [(f, c) for f, c in pairs if c]
    ratio.bar([label(f) for f, _ in pairs], [c["real_time"] / f["real_time"] for f, c in pairs], color="tab:green")
    ratio.set_ylabel("assembled CRS time / matrix-free time")
    ratio.set_title("matrix-free speed-up")
    runs_ax.bar([b.get("label", "") for b in whole], [b["real_time"] for b in whole], color="tab:purple")
    for i, b in enumerate(whole):
        runs_ax.annotate(f"{int(b['RHS'])} RHS", (i, b["real_time"]), ha="center", va="bottom", fontsize="small")
    runs_ax.set_ylabel("seconds")
    runs_ax.set_title("whole runs (spin-boson d10 to t=50, FMO d4 to 1 ps)")
    for ax in (bw, fl, ratio, runs_ax):
        ax.tick_params(axis="x", labelsize="small", labelrotation=20)
    ctx = data.get("context", {})
    fig.suptitle(f"heom perf_tests on {ctx.get('num_cpus', '?')} CPUs, {ctx.get('kokkos_execution_space', '')}")
    fig.savefig(target, dpi=110)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
