"""heom.response_2d: a dimer's third-order response against QuTiP 4.7 propagating each pathway, the
same numbers and spectra as the heom program's [response], and its refusals."""
import subprocess
import sys

import h5py
import numpy as np
import pytest

import heom
from conftest import SOURCE_DIR, complex_array, reference

sys.path.insert(0, str(SOURCE_DIR / "unit_tests" / "program"))
from run_response import dimer_input  # noqa: E402  (the program test's input of the same dimer)


def dimer_response(ref, **overrides):
    e, j, b = ref["site_energies"], ref["coupling"], ref["bath"]
    baths = [heom.DrudeLorentz(np.diag([1.0, 0.0] if s == 0 else [0.0, 1.0]), lam=b["lambda"], gamma=b["gamma"],
                               T=b["temperature"], Nk=b["terms"], expansion="pade") for s in range(2)]
    t1, t3 = ref["t1"], ref["t3"]
    kwargs = dict(depth=ref["depth"], waiting_times=ref["waiting_times"], t1_step=t1[1], t1_points=len(t1),
                  t3_step=t3[1], t3_points=len(t3), polarization="xyxy", isotropic=False,
                  biexciton_shift=ref["biexciton_shift"], rtol=1e-11, atol=1e-13, progress=False)
    kwargs.update(overrides)
    return heom.response_2d([[e[0], j], [j, e[1]]], ref["dipoles"], baths, **kwargs)


def test_a_dimers_response_matches_qutip_pathway_by_pathway():
    ref = reference("response_dimer_xyxy")
    r = dimer_response(ref)
    expected = complex_array(ref["values"]).reshape(r.values.shape)
    assert r.signals == ref["signals"] and r.pathways == ref["pathways"]
    assert np.abs(expected).max() > 0.5
    assert np.abs(r.values - expected).max() < 1e-7
    assert r.levels == 4  # g, two sites, their two-exciton state
    assert np.allclose(r.signal("rephasing"), expected[0].sum(axis=0), atol=1e-7)
    # The 2D spectra's sum rule: sum S dw1 dw3 = pi^2 R(0, T, 0).
    dw1, dw3 = r.omega1[1] - r.omega1[0], r.omega3[1] - r.omega3[0]
    for b in range(len(r.waiting_times)):
        assert r.absorptive[b].sum() * dw1 * dw3 == pytest.approx(np.pi ** 2 * r.values[:, :, b, 0, 0].sum().real,
                                                                  rel=1e-9)


def test_the_heom_programs_response_and_spectra(program, tmp_path):
    ref = reference("response_dimer_xyxy")
    (tmp_path / "dimer.toml").write_text(dimer_input(ref))
    subprocess.run([program, "run", "dimer.toml", "-o", "dimer.h5"], cwd=tmp_path, check=True, capture_output=True)
    r = dimer_response(ref)
    with h5py.File(tmp_path / "dimer.h5", "r") as f:
        assert np.array_equal(f["response/values"][()], r.values)
        assert np.array_equal(f["spectrum2d/omega1"][()], r.omega1)
        scale = np.abs(r.absorptive).max()
        assert np.abs(f["spectrum2d/absorptive"][()] - r.absorptive).max() < 1e-12 * scale
        for s, name in enumerate(r.signals):
            assert np.abs(f["spectrum2d/signal_spectra"][s] - r.spectra[name]).max() < 1e-12 * scale


def test_refusals_name_what_is_wrong():
    ref = reference("response_dimer")
    # (the program's [response] refuses the same values in the same words: make_response_options)
    with pytest.raises(ValueError, match="pathways: unknown name \"bleach\""):
        dimer_response(ref, pathways=["bleach"])
    with pytest.raises(ValueError, match="signals: names rephasing twice"):
        dimer_response(ref, signals=["rephasing", "rephasing"])
    with pytest.raises(ValueError, match="biexciton_shift: shifts the two-exciton states"):
        dimer_response(ref, pathways=["ground-state-bleach"], biexciton_shift=-0.1)
    with pytest.raises(ValueError, match="waiting_times"):
        dimer_response(ref, waiting_times=[3.0, 1.0])
    with pytest.raises(ValueError, match="polarization"):
        dimer_response(ref, polarization="xx")
    with pytest.raises(ValueError, match="1 dipoles for 2 sites"):
        heom.response_2d([[0.1, 0.0], [0.0, -0.1]], [1.0], [], depth=2, waiting_times=[0.0], t1_step=1.0,
                         t1_points=2, t3_step=1.0, t3_points=2, progress=False)
