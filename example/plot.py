#!/usr/bin/python3
"""Plots populations and coherences from any heom output file to a PNG. For an ensemble it plots
the mean over the members with their spread (the band between the 10th and 90th percentiles of each
population, from /ensemble/rho when the members were stored), and with sweeps, the mean at each point.
A spectrum (/spectrum) is plotted with its correlation function; a third-order response's
absorptive 2D spectra (/spectrum2d) one panel per waiting time; a steady state alone (/steady) as
its populations and coherences; a driven run's drives (/drive) and a run's currents into its leads
(/current) in panels of their own.

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
        if "spectrum" in f:
            return plot_spectrum(f, source, target)
        if "spectrum2d" in f:
            return plot_spectrum2d(f, source, target)
        if "t" not in f:
            return plot_steady(f, source, target)
        t = f["t"][()]
        rho = f["rho"][()]
        attrs = dict(f.attrs)
        drive = f["drive"][()] if "drive" in f else None
        current = f["current"][()] if "current" in f else None
        ensemble = f.get("ensemble")
        members = ensemble["rho"][()] if ensemble is not None and "rho" in ensemble else None
        sweep_mean = ensemble["sweep_mean"][()] if ensemble is not None and "sweep_mean" in ensemble else None
        count = int(ensemble.attrs["members"]) if ensemble is not None else 0
        names = [str(x, "utf-8") if isinstance(x, bytes) else str(x)
                 for x in ensemble["parameter_names"][()]] if sweep_mean is not None else []
        points = []
        if sweep_mean is not None:  # each point's values: those of its first member
            realizations = int(ensemble.attrs["realizations"])
            points = ensemble["parameters"][()][::realizations]
    n = rho.shape[1]
    unit = attrs.get("time_unit", "")
    unit_label = f" [{unit}]" if unit and unit != "1/energy" else ""

    panels = 2 + (drive is not None) + (current is not None)
    fig, axes = plt.subplots(panels, 1, figsize=(8, 3.5 * panels), sharex=True, constrained_layout=True)
    pop, coh = axes[0], axes[1]
    for i in range(n):
        label = f"site {i + 1}" if n > 2 else f"rho_{i}{i}"
        line, = pop.plot(t, rho[:, i, i].real, label=label + (" (mean)" if count else ""))
        if members is not None:
            low, high = np.percentile(members[:, :, i, i].real, [10, 90], axis=0)
            pop.fill_between(t, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    if sweep_mean is not None and n <= 4:  # each sweep point's mean, dashed (population of site 1)
        for p, values in enumerate(points):
            label = ", ".join(f"{name} = {v:g}" for name, v in zip(names, values))
            pop.plot(t, sweep_mean[p, :, 0, 0].real, linestyle="--", linewidth=1, label=label)
    pop.set_ylabel("population")
    pop.legend(ncol=min(n, 4) if sweep_mean is None else 1, fontsize="small")
    title = (f"heom {attrs.get('heom_version', '')}: {os.path.basename(source)} "
             f"({n} levels, depth {attrs.get('depth')}, {attrs.get('num_ados')} ADOs)")
    if count:
        title += f"\nmean of {count} members" + (", 10-90% band" if members is not None else "")
    pop.set_title(title)

    # The largest coherences |rho_ij|, i < j, over the run (at most six, to stay readable).
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    pairs.sort(key=lambda p: -np.max(np.abs(rho[:, p[0], p[1]])))
    for i, j in pairs[:6]:
        coh.plot(t, np.abs(rho[:, i, j]), label=f"|rho_{i + 1}{j + 1}|")
    coh.set_ylabel("coherence magnitude")
    axes[-1].set_xlabel("time" + unit_label)
    if pairs:
        coh.legend(ncol=3, fontsize="small")
    if drive is not None:  # f_d(t) of each [[system.drive]] (the imaginary part where it has one)
        for d in range(drive.shape[1]):
            axes[2].plot(t, drive[:, d].real, label=f"drive {d + 1}")
            if np.any(drive[:, d].imag != 0):
                axes[2].plot(t, drive[:, d].imag, linestyle="--", label=f"drive {d + 1}, imaginary part")
        axes[2].set_ylabel("drive f(t)" + (" [" + attrs["units"] + "]" if attrs.get("units") == "spectroscopy" else ""))
        axes[2].legend(fontsize="small")
    if current is not None:  # the particle current from the system into each lead (leads: fermionic baths)
        ax = axes[-1]
        for b in range(current.shape[1]):
            if np.any(current[:, b] != 0):
                ax.plot(t, current[:, b].real, label=f"into lead {b + 1}" + (" (mean)" if count else ""))
        ax.axhline(0.0, color="grey", linewidth=0.5)
        ax.set_ylabel("current" + (f" [1/{unit}]" if unit and unit != "1/energy" else ""))
        ax.legend(fontsize="small")
    fig.savefig(target, dpi=120)
    print(f"wrote {target}")


def plot_spectrum(f, source, target):
    s = f["spectrum"]
    kind, unit = s.attrs["kind"], s.attrs["frequency_unit"]
    omega, intensity = s["omega"][()], s["intensity"][()]
    t, c = s["t"][()], s["correlation"][()]
    members = s["member_intensity"][()] if "member_intensity" in s else None
    time_unit = f.attrs.get("time_unit", "")
    fig, (spec, corr) = plt.subplots(2, 1, figsize=(8, 7), constrained_layout=True)
    if members is not None:
        low, high = np.percentile(members, [10, 90], axis=0)
        spec.fill_between(omega, low, high, alpha=0.2, linewidth=0, label="members, 10-90%")
    spec.plot(omega, intensity, label=f"{kind} ({s.attrs['window']} window)")
    spec.set_xlabel(f"frequency [{unit}]" if unit != "energy" else "frequency")
    per_unit = f" [1/{unit}]" if unit != "energy" else ""
    if kind == "density-of-states":
        spec.set_ylabel("spectral function A(w)" + per_unit)
        if "steady/current" in f:  # (a level between leads: its steady current into each)
            currents = ", ".join(f"{z.real:.4g}" for z in f["steady/current"][()])
            spec.text(0.02, 0.95, f"steady current into each lead: {currents}", transform=spec.transAxes,
                      va="top", fontsize="small")
    else:
        spec.set_ylabel("intensity" + per_unit)
    spec.legend(fontsize="small")
    spec.set_title(f"heom {f.attrs.get('heom_version', '')}: {os.path.basename(source)} "
                   f"({f.attrs.get('dimension')} levels, depth {f.attrs.get('depth')}, "
                   f"{f.attrs.get('num_ados')} ADOs)")
    corr.plot(t, c.real, label="Re C(t)")
    corr.plot(t, c.imag, label="Im C(t)")
    corr.plot(t, np.abs(c), color="k", linewidth=0.8, label="|C(t)|")
    corr.set_xlabel("time" + (f" [{time_unit}]" if time_unit and time_unit != "1/energy" else ""))
    corr.set_ylabel("correlation function")
    corr.legend(ncol=3, fontsize="small")
    fig.savefig(target, dpi=120)
    print(f"wrote {target}")


def plot_spectrum2d(f, source, target):
    s = f["spectrum2d"]
    unit = s.attrs["frequency_unit"]
    w1, w3, waiting = s["omega1"][()], s["omega3"][()], s["waiting_times"][()]
    absorptive = s["absorptive"][()]
    time_unit = f.attrs.get("time_unit", "")
    label = f" [{unit}]" if unit != "energy" else ""
    shown = min(len(waiting), 4)
    fig, axes = plt.subplots(1, shown, figsize=(4.2 * shown, 4.2), constrained_layout=True, squeeze=False)
    scale = np.abs(absorptive).max()
    levels = np.linspace(-1.0, 1.0, 21) * scale
    for ax, b in zip(axes[0], range(shown)):
        # w1 across, w3 up: the usual picture, the diagonal from bottom left to top right.
        picture = ax.contourf(w1, w3, absorptive[b].T, levels=levels, cmap="RdBu_r")
        ax.contour(w1, w3, absorptive[b].T, levels=levels, colors="k", linewidths=0.3)
        ax.plot([w1[0], w1[-1]], [w1[0], w1[-1]], color="0.4", linewidth=0.6, linestyle="--")
        ax.set_xlim(w1[0], w1[-1])
        ax.set_ylim(w3[0], w3[-1])
        ax.set_aspect("equal")
        ax.set_title(f"T = {waiting[b]:g}" + (f" {time_unit}" if time_unit and time_unit != "1/energy" else ""))
        ax.set_xlabel("w1" + label)
        ax.set_ylabel("w3" + label)
    fig.colorbar(picture, ax=axes[0].tolist(), shrink=0.8, label="absorptive S(w1, T, w3)")
    fig.suptitle(f"heom {f.attrs.get('heom_version', '')}: {os.path.basename(source)} "
                 f"({f.attrs.get('dimension')} levels, depth {f.attrs.get('depth')}, {f.attrs.get('num_ados')} ADOs; "
                 f"{f['response'].attrs['polarization']})", fontsize="small")
    fig.savefig(target, dpi=120)
    print(f"wrote {target}")


def plot_steady(f, source, target):
    rho = f["steady/rho"][()]
    n = rho.shape[0]
    fig, (pop, coh) = plt.subplots(1, 2, figsize=(9, 4), constrained_layout=True)
    pop.bar(range(1, n + 1), rho.diagonal().real)
    pop.set_xlabel("level")
    pop.set_ylabel("steady-state population")
    image = coh.imshow(np.abs(rho), cmap="viridis")
    fig.colorbar(image, ax=coh, label="|rho_ij|")
    coh.set_title(f"residual {f['steady'].attrs['residual']:.1e}")
    fig.suptitle(f"heom {f.attrs.get('heom_version', '')}: {os.path.basename(source)} (steady state)")
    fig.savefig(target, dpi=120)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
