"""Shared by the Python module's tests: the reference data, the heom program, and quiet solvers."""
import json
import os
import pathlib
import sys

import numpy as np
import pytest

import heom

SOURCE_DIR = pathlib.Path(os.environ.get("HEOM_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
REFERENCE_DIR = SOURCE_DIR / "unit_tests" / "reference"
sys.path.insert(0, str(SOURCE_DIR / "unit_tests" / "fixtures"))
import fixtures  # noqa: E402  (the inputs the C++, program and Python suites share)

# Two threads at least, for the tests that split a hierarchy between two simulated devices.
heom.initialize(max(2, os.cpu_count() or 1))

SZ = np.diag([1.0, -1.0]).astype(complex)
SX = np.array([[0, 1], [1, 0]], dtype=complex)


def complex_array(x):
    a = np.asarray(x, dtype=float)
    return a[..., 0] + 1j * a[..., 1]


def reference(name):
    """A QuTiP 4.7 reference case (unit_tests/reference/make_reference.py) with its arrays as numpy."""
    d = json.loads((REFERENCE_DIR / f"{name}.json").read_text())
    for key in ("hamiltonian", "rho0", "rho", "current"):
        if key in d:
            d[key] = complex_array(d[key])
    return d


def heom_bath(spec):
    """A reference case's bath as heom's own constructor makes it."""
    Q = complex_array(spec["coupling"])
    if spec["kind"] == "drude-lorentz":
        return heom.DrudeLorentz(Q, spec["lambda"], spec["gamma"], spec["temperature"], spec["terms"],
                                 expansion=spec["expansion"], terminator=spec.get("terminator", False))
    if spec["kind"] == "lorentzian":
        return heom.Lorentzian(Q, spec["gamma"], spec["width"], spec["mu"], spec["temperature"], spec["terms"],
                               expansion=spec["expansion"])
    raise ValueError(spec["kind"])


@pytest.fixture
def program():
    path = os.environ.get("HEOM_PROGRAM")
    if not path:
        pytest.skip("HEOM_PROGRAM is not set (ctest sets it)")
    return path
