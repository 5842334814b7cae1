#!/usr/bin/python3
"""Checks a heom output file with h5py alone (no heom code): layout, types, attributes, and rho(t)
against a QuTiP reference file from unit_tests/reference.

    check_output.py OUT.h5 REFERENCE.json TOLERANCE [--input INPUT.toml] [--ados]
"""
import argparse
import json
import sys

import h5py
import numpy as np


def check(output, reference, tolerance, input_file=None, ados=False):
    """Raises AssertionError (or exits) when `output` is malformed or differs from `reference`."""
    a = argparse.Namespace(output=output, reference=reference, tolerance=tolerance, input=input_file, ados=ados)
    ref = json.load(open(a.reference))
    ref_t = np.array(ref["times"])
    ref_rho = np.array(ref["rho"])[..., 0] + 1j * np.array(ref["rho"])[..., 1]

    with h5py.File(a.output, "r") as f:
        t = f["t"][()]
        rho = f["rho"][()]
        assert f["t"].dtype == np.float64, f["t"].dtype
        assert rho.dtype == np.complex128, f"/rho reads as {rho.dtype}, not complex128"
        assert rho.shape == ref_rho.shape, f"/rho shape {rho.shape}, reference {ref_rho.shape}"
        np.testing.assert_allclose(t, ref_t, rtol=0, atol=1e-9 * max(1.0, ref_t[-1]))
        attrs = dict(f.attrs)
        for key in ["heom_version", "units", "dimension", "num_exponents", "depth", "num_ados", "backend",
                    "generator_kernel", "threads", "wall_time_s", "steps", "rejected_steps", "rhs_evaluations",
                    "method", "devices"]:
            assert key in attrs, f"attribute {key} missing"
        assert attrs["devices"] == "1 device", attrs["devices"]
        assert list(f["partition"][()]) == [0, attrs["num_ados"]], f["partition"][()]
        kernels = ("portable", "host-block", "hermitian", "two-level", "ground-column", "portable-hermitian")
        assert attrs["generator_kernel"] in kernels, attrs
        assert isinstance(attrs["units"], str), "string attributes must read as str"
        assert attrs["dimension"] == rho.shape[1]
        assert attrs["depth"] == ref["depth"], (attrs["depth"], ref["depth"])
        assert attrs["num_ados"] == ref["num_ados"], (attrs["num_ados"], ref["num_ados"])
        # Generator applications per accepted step: one for exp-adams (and a chebyshev term), at least six
        # for dopri5. Automatic's record names its choice: "automatic: chebyshev from t = 1.44".
        method = attrs["method"].split(": ")[-1].split(" ")[0]
        per_step = {"exp-adams": 1, "chebyshev": 1, "dopri5": 6, "rk4": 4, "lsrk4": 5}[method]
        assert attrs["steps"] > 0 and attrs["rhs_evaluations"] >= per_step * attrs["steps"], attrs
        if a.input:
            assert f["input"].asstr()[()] == open(a.input).read(), "/input is not the input file verbatim"
        if a.ados:
            ados = f["ados_final"][()]
            labels = f["ado_labels"][()]
            assert ados.dtype == np.complex128 and labels.dtype == np.int32
            assert ados.shape == (attrs["num_ados"], rho.shape[1], rho.shape[2])
            assert labels.shape == (attrs["num_ados"], attrs["num_exponents"])
            assert (labels[0] == 0).all() and labels.sum(axis=1).max() == attrs["depth"]
            np.testing.assert_allclose(ados[0], rho[-1], atol=1e-14, err_msg="ADO 0 is rho at the last time")
        # A driven run's /drive: each cosine drive's f(t) at the output times (the reference's drives).
        cosines = [d for d in ref.get("drives", []) if d["shape"] == "cosine"]
        assert ("drive" in f) == bool(ref.get("drives")), "/drive must be there exactly for a driven run"
        if cosines:
            drive = f["drive"][()]
            assert drive.dtype == np.complex128 and drive.shape == (len(t), len(ref["drives"])), drive.shape
            for d, spec in enumerate(ref["drives"]):
                if spec["shape"] == "cosine":
                    expected = spec["amplitude"] * np.cos(spec["frequency"] * t + spec.get("phase", 0.0))
                    np.testing.assert_allclose(drive[:, d], expected, rtol=0, atol=1e-14)
        # A run with leads: /current, the particle current into each lead over time (the reference's).
        assert ("current" in f) == ("current" in ref), "/current must be there exactly for a run with leads"
        if "current" in ref:
            current = f["current"][()]
            ref_current = np.array(ref["current"])[..., 0] + 1j * np.array(ref["current"])[..., 1]
            assert current.dtype == np.complex128 and current.shape == ref_current.shape, current.shape
            current_error = np.max(np.abs(current - ref_current))
            print(f"{a.output}: max |I - I_qutip| = {current_error:.3e} (largest |I| {np.max(np.abs(ref_current)):.3f})")
            if not (current_error <= a.tolerance and np.max(np.abs(ref_current)) > 1e-2):
                sys.exit(f"FAIL: /current differs from {a.reference} by {current_error:.3e} > {a.tolerance:g}")

    error = np.max(np.abs(rho - ref_rho))
    trace_error = np.max(np.abs(np.trace(rho, axis1=1, axis2=2) - 1))
    print(f"{a.output}: max |rho - rho_qutip| = {error:.3e} over {len(t)} times (tolerance {a.tolerance:g}); "
          f"max |tr rho - 1| = {trace_error:.1e}")
    if not error <= a.tolerance:
        sys.exit(f"FAIL: {a.output} differs from {a.reference} by {error:.3e} > {a.tolerance:g}")
    if not trace_error <= 1e-10:
        sys.exit(f"FAIL: trace of rho drifts by {trace_error:.3e}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("output")
    p.add_argument("reference")
    p.add_argument("tolerance", type=float)
    p.add_argument("--input", help="the input file the output must embed verbatim")
    p.add_argument("--ados", action="store_true", help="the file must hold /ados_final and /ado_labels")
    a = p.parse_args()
    check(a.output, a.reference, a.tolerance, a.input, a.ados)


if __name__ == "__main__":
    main()
