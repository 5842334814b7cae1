#!/usr/bin/python3
"""`heom fit`: the fitted spectral density of an input written as an exponents bath, which run in
place of the spectral-density bath gives the same rho(t) (the same exponents, to the last printed
digit); an input without a spectral-density bath exits 2 with one line.

    run_fit.py HEOM INPUT.toml OTHER_INPUT.toml
"""
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, timeout=600, **kwargs)


def main():
    heom, source, without_fit = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
    with tempfile.TemporaryDirectory() as work:
        fitted = os.path.join(work, "fitted.toml")
        r = run([heom, "fit", source, "-o", fitted])
        if r.returncode != 0 or not os.path.exists(fitted):
            sys.exit(f"FAIL: heom fit exited with {r.returncode}: {r.stderr}")
        bath = open(fitted).read()
        if 'kind = "exponents"' not in bath or not re.search(r"^# bath 1 of .*esprit fit: error", bath, re.M):
            sys.exit(f"FAIL: heom fit wrote no exponents bath with its fit:\n{bath}")
        text = open(source).read()
        start, end = text.index("[[bath]]"), text.index("[hierarchy]")
        runs = {"spectral-density": text, "exponents": text[:start] + bath + text[end:]}
        rho = {}
        for name, body in runs.items():
            path = os.path.join(work, name + ".toml")
            open(path, "w").write(body)
            out = os.path.join(work, name + ".h5")
            r = run([heom, "run", path, "-o", out], cwd=work)
            if r.returncode != 0:
                sys.exit(f"FAIL: heom run {name} exited with {r.returncode}: {r.stderr}")
            with h5py.File(out, "r") as f:
                rho[name] = np.array(f["rho"])
        difference = np.max(np.abs(rho["spectral-density"] - rho["exponents"]))
        print(f"max |rho(fitted) - rho(written exponents)| = {difference:.2e}")
        if difference > 1e-12:
            sys.exit("FAIL: the written exponents do not give the fitted bath's dynamics")

        r = run([heom, "fit", os.path.abspath(without_fit)])
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or "spectral-density" not in lines[0]:
            sys.exit(f"FAIL: heom fit of an input without a spectral density: exit {r.returncode}, {r.stderr!r}")
    print("PASS")


if __name__ == "__main__":
    main()
