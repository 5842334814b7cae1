"""heom.Solver from Python: QuTiP 4.7's reference data, the heom program's bits, batches, split
hierarchies, steady states, currents, spectra, ensembles, and errors (QuTiP's HEOMSolver interface:
test_qutip_interface.py)."""
import io
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

import heom
from heom._progress import Progress, ResidualProgress
from conftest import SX, SZ, fixtures, heom_bath, reference

H = 0.25 * SZ + 0.5 * SX
UP = np.diag([1.0, 0.0]).astype(complex)


def spin_boson(terminator=False, expansion="matsubara"):
    return heom.Model(H, heom.DrudeLorentz(SZ, lam=0.1, gamma=0.5, T=0.5, Nk=2, expansion=expansion,
                                           terminator=terminator))


def reference_model(ref):
    return heom.Model(ref["hamiltonian"], [heom_bath(b) for b in ref["baths"]])


@pytest.mark.parametrize("name", ["spin_boson_pade_terminator", "spin_boson_matsubara", "siam_pade"])
def test_dynamics_match_qutip(name):
    ref = reference(name)
    solver = heom.Solver(reference_model(ref), ref["depth"], rtol=1e-10, atol=1e-12, progress=False)
    assert solver.num_ados == ref["num_ados"]
    result = solver.run(ref["rho0"], ref["times"])
    np.testing.assert_array_equal(result.times, ref["times"])
    assert np.abs(result.states - ref["rho"]).max() < 1e-7
    if "current" in ref:  # (the leads' currents observed by default for a fermionic model)
        assert np.abs(result.currents - ref["current"]).max() < 1e-8
        assert np.abs(result.currents).max() > 1e-3


def run_program(program, path, changes, after=""):
    """Runs the heom program on the shared spin-boson (unit_tests/fixtures/), made spin_boson()'s model
    (a real H), with `changes` to its keys and `after` appended; returns the output file."""
    changes = {"system": {"hamiltonian_imag": None}, **changes}
    path.write_text(fixtures.spin_boson(changes, after))
    out = path.with_suffix(".h5")
    subprocess.run([program, "run", str(path), "-o", str(out)], check=True, capture_output=True)
    return out


def test_the_same_bits_as_the_heom_program(program, tmp_path):
    out = run_program(program, tmp_path / "sb.toml", {
        "bath": {"expansion": "pade", "terminator": True},
        "dynamics": {"t_end": 5.0, "output_every": 0.25, "rtol": 1e-8, "atol": 1e-10}})
    with h5py.File(out, "r") as f:
        times, rho, steps = f["t"][()], f["rho"][()], f.attrs["steps"]
    result = heom.Solver(spin_boson(True, "pade"), 5, progress=False).run(UP, times)
    assert np.array_equal(result.states, rho)
    assert result.statistics["steps"] == steps


def test_a_split_hierarchy_and_a_batch_give_one_devices_bits():
    times = np.linspace(0, 4, 9)
    one = heom.Solver(spin_boson(), 4, progress=False).run(UP, times)
    two = heom.Solver(spin_boson(), 4, devices=2, progress=False).run(UP, times)
    assert np.array_equal(one.states, two.states)
    other = spin_boson().with_hamiltonian(0.5 * SZ + 0.5 * SX)
    batch = heom.Solver([spin_boson(), other], 4, method="rk4", step=0.05, progress=False).run(UP, times)
    solo = [heom.Solver(m, 4, method="rk4", step=0.05, progress=False).run(UP, times) for m in (spin_boson(), other)]
    for b, s in zip(batch, solo):
        assert np.array_equal(b.states, s.states)
    assert np.abs(batch[0].states - batch[1].states).max() > 1e-3


def test_gpus_are_chosen_for_a_split_in_a_cuda_build_only():
    if heom.execution_space != "Cuda":
        with pytest.raises(ValueError, match="gpus: chooses GPUs"):
            heom.Solver(spin_boson(), 2, devices=2, gpus=[0, 1], progress=False)
    with pytest.raises(ValueError, match="gpus"):
        heom.Solver(spin_boson(), 2, gpus=[0], progress=False)


def test_an_importance_threshold_keeps_fewer_ados_and_converges_to_the_whole_hierarchy():
    # The program's [hierarchy] threshold: the spin-boson at depth 10 (286 ADOs) keeps 11 at 1e-4
    # and 31 at 1e-8 (heom plan prints the same), and rho(t) approaches the whole hierarchy's.
    tlist = np.linspace(0.0, 5.0, 11)
    rho0 = np.array([[1.0, 0.0], [0.0, 0.0]])
    whole = heom.Solver(spin_boson(), 10, progress=False)
    assert whole.num_ados == 286
    errors = []
    for threshold, kept in ((1e-4, 11), (1e-8, 31)):
        solver = heom.Solver(spin_boson(), 10, threshold=threshold, progress=False)
        assert solver.num_ados == kept
        errors.append(np.abs(solver.run(rho0, tlist).states - whole.run(rho0, tlist).states).max())
    assert 1e-5 < errors[0] < 1e-3 and errors[1] < 1e-5
    with pytest.raises(ValueError, match="threshold: must be finite and >= 0"):
        heom.Solver(spin_boson(), 10, threshold=-1.0, progress=False)


def test_exp_adams_order_cap():
    # max_order caps exp-adams' order: another step sequence, as accurate (1..5: refused_settings.json).
    tlist = np.linspace(0.0, 5.0, 11)
    rho0 = np.array([[1.0, 0.0], [0.0, 0.0]])
    runs = [heom.Solver(spin_boson(), 4, rtol=1e-7, atol=1e-9, max_order=order, progress=False).run(rho0, tlist)
            for order in (5, 3)]
    assert runs[0].statistics["steps"] != runs[1].statistics["steps"]
    assert np.abs(runs[0].states - runs[1].states).max() < 1e-6


def test_steady_state_and_its_currents_match_qutip():
    ref = reference("steady_siam_pade")
    solver = heom.Solver(reference_model(ref), ref["depth"], progress=False)
    rho, info = solver.steady_state(tolerance=1e-12)
    assert info["residual"] <= 1e-12
    assert np.abs(rho - ref["rho"]).max() < 1e-8
    currents = solver.lead_currents()
    np.testing.assert_allclose(currents.real, ref["current"].real, rtol=1e-8)
    assert np.array_equal(solver.ados().rho, rho)


@pytest.mark.parametrize("refused", fixtures.refused_settings(), ids=lambda r: f"{r['setting']}={r['value']}")
def test_refuses_the_settings_every_front_end_refuses(refused):
    # The same words as the program's refusal (unit_tests/fixtures/refused_settings.json).
    with pytest.raises(ValueError) as e:
        heom.Solver(spin_boson(), 4, progress=False, **{refused["setting"]: refused["value"]})
    assert str(e.value) == refused["message"]


def test_continuing_from_the_state_and_ados_by_label():
    solver = heom.Solver(spin_boson(), 4, progress=False)
    first = solver.run(UP, [0.0, 1.0, 2.0], ado_return=True)
    assert solver.time == 2.0
    rest = solver.run(None, [2.0, 3.0])
    whole = heom.Solver(spin_boson(), 4, progress=False).run(UP, [0.0, 1.0, 2.0, 3.0])
    assert np.abs(rest.states[-1] - whole.states[-1]).max() < 1e-8
    ados = first.ados
    assert np.array_equal(ados.extract([0, 0, 0]), first.states[-1])
    assert np.abs(ados.extract([1, 0, 0])).max() > 1e-4
    with pytest.raises(KeyError):
        ados.extract([9, 9, 9])
    with pytest.raises(ValueError, match="before the solver's time"):
        solver.run(None, [0.0, 1.0])


def test_spectral_function_of_a_level_integrates_to_one():
    ref = reference("steady_siam_pade")
    solver = heom.Solver(reference_model(ref), ref["depth"], progress=False)
    solver.steady_state(tolerance=1e-12)
    d = np.array([[0, 1], [0, 0]], dtype=complex)
    omega, A = solver.spectral_function(d, t_max=40.0, dt=0.1)
    assert abs(A.sum() * (omega[1] - omega[0]) - 1.0) < 1e-12
    # The level at 0.5, broadened by both leads: the peak lies there.
    assert abs(omega[np.argmax(A)] - 0.5) < 0.1


def test_density_of_states_in_frequency_is_the_time_domains():
    ref = reference("steady_siam_pade")
    solver = heom.Solver(reference_model(ref), ref["depth"], rtol=1e-8, atol=1e-10, progress=False)
    solver.steady_state(tolerance=1e-12)
    d = np.array([[0, 1], [0, 0]], dtype=complex)
    omega, in_time = solver.spectral_function(d, t_max=100.0, dt=0.1, window="none")
    near = np.abs(omega) < 2.0
    in_frequency, info = solver.density_of_states(d, omega[near], tolerance=1e-10)
    assert info["solves"] == 2 * near.sum() and info["worst_residual"] <= 1e-10
    assert np.abs(in_frequency - in_time[near]).max() < 1e-5 * in_time.max()
    with pytest.raises(heom.SteadyStateError):
        solver.density_of_states(d, [0.5], tolerance=1e-14, max_iterations=1)
    with pytest.raises(ValueError, match="preconditioner"):
        solver.density_of_states(d, [0.5], preconditioner="magic")


def test_ensemble_members_have_their_solo_bits():
    times = np.linspace(0, 2, 5)
    models = [spin_boson().with_hamiltonian(e * SZ + 0.5 * SX) for e in (0.1, 0.2, 0.3)]
    result = heom.run_ensemble(models, UP, times, 3, devices=2, progress=False)
    for m, states in zip(models, result.states):
        assert np.array_equal(states, heom.Solver(m, 3, progress=False).run(UP, times).states)
    np.testing.assert_allclose(result.mean, np.mean(result.states, axis=0), rtol=0, atol=1e-15)


def test_disorder_realizations_are_the_heom_programs(program, tmp_path):
    out = run_program(program, tmp_path / "dimer.toml", {
        "hierarchy": {"depth": 3}, "dynamics": {"t_end": 2.0, "output_every": 0.5}}, """[ensemble]
members = 4
seed = 7
site_energy_sigma = [0.2, 0.05]
store_members = true
""")
    with h5py.File(out, "r") as f:
        times, mean = f["t"][()], f["rho"][()]
        hamiltonians, members = f["ensemble/hamiltonian"][()], f["ensemble/rho"][()]
    model = heom.Model(H, heom.DrudeLorentz(SZ, lam=0.1, gamma=0.5, T=0.5, Nk=2))
    realizations = heom.disorder_realizations(model, [0.2, 0.05], 4, seed=7)
    got = np.array([m.H for m in realizations])
    assert np.array_equal(got, hamiltonians)
    assert np.abs(got[:, 0, 0] - 0.25).max() > 0.01  # (disordered, and each differently)
    assert len({round(g[0, 0].real, 12) for g in got}) == 4
    assert np.array_equal(heom.with_diagonal_disorder(H, [0.2, 0.05], 7, 3), got[3])
    result = heom.run_ensemble(realizations, UP, times, 3, progress=False)
    assert np.array_equal(result.states, members)
    assert np.array_equal(result.mean, mean)
    with pytest.raises(ValueError, match="site_energy_sigma"):
        heom.disorder_realizations(model, [0.1, 0.2, 0.3], 2)
    with pytest.raises(ValueError, match="standard deviation 1 must be finite and >= 0"):
        heom.disorder_realizations(model, [0.1, -0.2], 2)
    with pytest.raises(ValueError, match="seed"):
        heom.disorder_realizations(model, 0.1, 2, seed=-1)


def test_a_callback_that_raises_stops_the_run_between_steps():
    solver = heom.Solver(spin_boson(), 4, method="rk4", step=0.001, progress=False)

    def stop(t):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        solver._core.run(UP, [0.0, 50.0], stop)
    assert 0.0 < solver.time < 50.0
    solver.run(None, [solver.time, solver.time + 0.01])  # (still usable)


def test_errors_are_python_exceptions():
    with pytest.raises(MemoryError, match="depth"):
        heom.Solver(spin_boson(), 200, memory_limit=10**7, progress=False)
    with pytest.raises(ValueError, match="method"):
        heom.Solver(spin_boson(), 2, method="euler")
    with pytest.raises(ValueError, match="initial state rho is 3x3"):
        heom.Solver(spin_boson(), 2, progress=False).run(np.eye(3), [0.0, 1.0])
    with pytest.raises(ValueError, match="tlist"):
        heom.Solver(spin_boson(), 2, progress=False).run(UP, [1.0, 0.0])
    with pytest.raises(TypeError, match="heom.Model"):
        heom.Solver(H, 2)
    with pytest.raises(heom.IntegrationError):
        heom.Solver(spin_boson(), 2, method="dopri5", max_step=1e-3, rtol=1e-8, progress=False).run(
            UP * 1e300, [0.0, 1.0])


def test_progress_lines_and_a_steady_states_residual_on_a_log_scale():
    out = io.StringIO()
    bar = Progress("heom run", 0.0, 10.0, delay=0.0, stream=out)
    for t in range(11):
        bar(float(t))
    lines = out.getvalue().splitlines()
    assert len(lines) == 10 and lines[0].startswith("heom run: 10%") and lines[-1].startswith("heom run: 100%")
    out = io.StringIO()
    bar = ResidualProgress("heom steady state", 1e-10, delay=0.0, stream=out)
    bar(1, 1e-2)
    bar(10, 1e-6)  # half way down from 1e-2 to 1e-10 in log(residual)
    assert out.getvalue().splitlines()[-1].startswith("heom steady state (iteration 10, residual 1.0e-06): 50%")
    quiet = io.StringIO()
    Progress("heom run", 0.0, 1.0, enabled=False, delay=0.0, stream=quiet)(1.0)
    assert quiet.getvalue() == ""


def test_threads_are_chosen_when_heom_starts_and_kokkos_stays_quiet():
    def start(env_extra, code="import heom; print(heom.threads())"):
        env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES")}
        env.update(env_extra)
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)

    one = start({"HEOM_NUM_THREADS": "1"})
    assert one.returncode == 0 and one.stdout.split() == ["1"]
    assert "Kokkos" not in one.stderr and "OMP_PROC_BIND" not in one.stderr  # (no advice printed)
    idle = start({})
    assert idle.returncode == 0 and 1 <= int(idle.stdout.split()[0]) <= (os.cpu_count() or 1)
    chosen = start({}, "import heom; heom.set_threads(1); print(heom.threads())")
    assert chosen.stdout.split() == ["1"]
    bad = start({"HEOM_NUM_THREADS": "all"})
    assert bad.returncode != 0 and "HEOM_NUM_THREADS: expected a number of threads >= 1" in bad.stderr
    with pytest.raises(ValueError, match="threads: expected a number of threads >= 1"):
        heom.set_threads(0)
