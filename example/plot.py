#!/usr/bin/python3
"""Plots populations and coherences from any heom output file to a PNG.

    example/plot.py OUT.h5 [PLOT.png]      (default: OUT.png next to OUT.h5)

Needs numpy, h5py and matplotlib (Debian: python3-numpy python3-h5py python3-matplotlib).
"""
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip())
    source = sys.argv[1]
    target = sys.argv[2] if len(sys.argv) == 3 else os.path.splitext(source)[0] + ".png"
    with h5py.File(source, "r") as f:
        t = f["t"][()]
        rho = f["rho"][()]
        attrs = dict(f.attrs)
    n = rho.shape[1]
    unit = attrs.get("time_unit", "")
    unit_label = f" [{unit}]" if unit and unit != "1/energy" else ""

    fig, (pop, coh) = plt.subplots(2, 1, figsize=(8, 7), sharex=True, constrained_layout=True)
    for i in range(n):
        pop.plot(t, rho[:, i, i].real, label=f"site {i + 1}" if n > 2 else f"rho_{i}{i}")
    pop.set_ylabel("population")
    pop.legend(ncol=min(n, 4), fontsize="small")
    pop.set_title(f"heom {attrs.get('heom_version', '')}: {os.path.basename(source)} "
                  f"({n} levels, depth {attrs.get('depth')}, {attrs.get('num_ados')} ADOs)")

    # The largest coherences |rho_ij|, i < j, over the run (at most six, to stay readable).
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    pairs.sort(key=lambda p: -np.max(np.abs(rho[:, p[0], p[1]])))
    for i, j in pairs[:6]:
        coh.plot(t, np.abs(rho[:, i, j]), label=f"|rho_{i + 1}{j + 1}|")
    coh.set_ylabel("coherence magnitude")
    coh.set_xlabel("time" + unit_label)
    if pairs:
        coh.legend(ncol=3, fontsize="small")
    fig.savefig(target, dpi=120)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
