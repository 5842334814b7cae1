"""heom.HEOMSolver as QuTiP 5's HEOMSolver (run by CTest in the QuTiP 5.3 environment that
scripts/qutip5_python makes): QuTiP 5's HEOM tutorials written as their users write them, with the
import changed, give QuTiP 5's numbers to 1e-7 in QuTiP 5's own result objects."""
import pathlib
import sys

import numpy as np
import pytest
import qutip
from qutip import basis, liouvillian, sigmax, sigmaz
from qutip.core.environment import (DrudeLorentzEnvironment, ExponentialBosonicEnvironment, LorentzianEnvironment,
                                    UnderDampedEnvironment, system_terminator)
from qutip.solver.heom import DrudeLorentzBath, HEOMResult
from qutip.solver.heom import HEOMSolver as QutipHEOMSolver

import heom

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from qutip_tutorials import state_current  # noqa: E402

assert qutip.__version__.startswith("5."), qutip.__version__

QUIET = {"progress_bar": "", "nsteps": 15000, "rtol": 1e-10, "atol": 1e-12, "store_states": True}
H = 0.25 * sigmaz() + 0.5 * sigmax()
RHO0 = basis(2, 0).proj()
TIMES = np.linspace(0, 5, 11)


def both(H_sys, bath, depth, options=QUIET):
    return heom.HEOMSolver(H_sys, bath, depth, options=options), QutipHEOMSolver(H_sys, bath, depth, options=options)


def largest(a, b):
    return max(np.abs(np.asarray(x) - np.asarray(y)).max() for x, y in zip(a, b))


def test_spin_boson_with_a_terminator_from_an_approximated_environment():
    env = DrudeLorentzEnvironment(T=0.5, lam=0.1, gamma=0.5)
    approx, delta = env.approximate("matsubara", Nk=2, compute_delta=True)
    L = liouvillian(H) + system_terminator(sigmaz(), delta)
    ours, theirs = both(L, (approx, sigmaz()), 4)
    e_ops = {"z": sigmaz(), "x": sigmax()}
    a, b = ours.run(RHO0, TIMES, e_ops=e_ops), theirs.run(RHO0, TIMES, e_ops=e_ops)
    assert isinstance(a, HEOMResult)
    assert list(a.e_data) == ["z", "x"] and len(a.expect) == 2
    for key in e_ops:
        assert largest([a.e_data[key]], [b.e_data[key]]) < 1e-7
    assert np.abs(np.asarray(a.e_data["x"])).max() > 0.1
    assert largest([s.full() for s in a.states], [s.full() for s in b.states]) < 1e-7
    assert a.final_state.dims == [[2], [2]]
    assert a.times == list(TIMES)  # (NumPy 2: the times once all read as the first)
    assert a.stats["max_depth"] == 4 and a.stats["run time"] > 0


def test_pade_and_underdamped_environments_and_a_list_of_baths():
    pade = DrudeLorentzEnvironment(T=0.5, lam=0.1, gamma=0.5).approximate("pade", Nk=2)
    under = UnderDampedEnvironment(T=0.5, lam=0.05, gamma=0.1, w0=1.0).approximate("matsubara", Nk=1)
    baths = [(pade, sigmaz()), (under, sigmax())]
    ours, theirs = both(H, baths, 3)
    a, b = ours.run(RHO0, TIMES, e_ops=[sigmaz()]), theirs.run(RHO0, TIMES, e_ops=[sigmaz()])
    assert largest(a.expect, b.expect) < 1e-7
    # An environment that is not a sum of exponentials is refused, naming what to do.
    with pytest.raises(ValueError, match=r"bath\[0\]: DrudeLorentzEnvironment is not a sum of exponentials"):
        heom.HEOMSolver(H, [(DrudeLorentzEnvironment(T=0.5, lam=0.1, gamma=0.5), sigmaz())], 2)


def test_fmo_from_qutips_tutorial():
    # 7 sites (cm^-1 and ps as the tutorial's), a Drude-Lorentz bath per site.
    cm = 2 * np.pi * 3e10 * 1e-12  # (cm^-1 to rad/ps)
    energies = [200, 320, 0, 110, 270, 420, 230]
    couplings = {(0, 1): -87.7, (0, 2): 5.5, (0, 3): -5.9, (0, 4): 6.7, (0, 5): -13.7, (0, 6): -9.9,
                 (1, 2): 30.8, (1, 3): 8.2, (1, 4): 0.7, (1, 5): 11.8, (1, 6): 4.3, (2, 3): -53.5, (2, 4): -2.2,
                 (2, 5): -9.6, (2, 6): 6.0, (3, 4): -70.7, (3, 5): -17.0, (3, 6): -63.3, (4, 5): 81.1,
                 (4, 6): -1.3, (5, 6): 39.7}
    Hm = np.diag(energies).astype(float)
    for (i, j), v in couplings.items():
        Hm[i, j] = Hm[j, i] = v
    Hsys = qutip.Qobj(Hm * cm)
    env = DrudeLorentzEnvironment(T=77 * 0.695 * cm, lam=35 * cm, gamma=1 / 0.166)
    approx = env.approximate("matsubara", Nk=0)
    baths = [(approx, basis(7, m).proj()) for m in range(7)]
    rho0 = basis(7, 0).proj()
    times = np.linspace(0, 0.2, 5)
    ours, theirs = both(Hsys, baths, 3, {**QUIET, "rtol": 1e-9, "atol": 1e-11})
    e_ops = [basis(7, m).proj() for m in range(7)]
    a, b = ours.run(rho0, times, e_ops=e_ops), theirs.run(rho0, times, e_ops=e_ops)
    assert largest(a.expect, b.expect) < 1e-7
    assert abs(a.expect[1][-1]) > 0.05  # (site 2 fills)


def test_the_fermionic_single_impurity_and_its_state_current():
    d = qutip.destroy(2)
    H_imp = 1.0 * d.dag() * d
    envs = [LorentzianEnvironment(T=0.025851991, mu=mu, gamma=0.01, W=1.0, tag=tag).approx_by_pade(Nk=2)
            for mu, tag in ((1.0, "L"), (-1.0, "R"))]
    tags = [env.tag for env in envs]
    options = {**QUIET, "rtol": 1e-12, "atol": 1e-12}
    ours, theirs = both(H_imp, [(env, d) for env in envs], 2, options)
    rho, ados = ours.steady_state()
    their_rho, their_ados = theirs.steady_state()
    assert np.abs((rho - their_rho).full()).max() < 1e-8
    for tag in tags:
        assert abs(state_current(ados, tag) - state_current(their_ados, tag)) < 1e-9
    assert abs(state_current(ados, tags[0])) > 1e-4
    # During a run, from the ADOs kept at every time (options["store_ados"]).
    times = [0.0, 5.0, 10.0]
    a = ours.run(basis(2, 0).proj(), times, e_ops={"L": lambda t, s: state_current(s, tags[0])})
    b = theirs.run(basis(2, 0).proj(), times, e_ops={"L": lambda t, s: state_current(s, tags[0])})
    assert largest([a.e_data["L"]], [b.e_data["L"]]) < 1e-8


def test_ados_kept_continued_and_stepped():
    options = {**QUIET, "store_ados": True}
    ours, theirs = both(H, DrudeLorentzBath(sigmaz(), lam=0.1, gamma=0.5, T=0.5, Nk=2), 4, options)
    a, b = ours.run(RHO0, TIMES), theirs.run(RHO0, TIMES)
    assert len(a.ado_states) == len(TIMES)
    for label in b.ado_states[5].labels:
        assert np.abs((a.ado_states[5].extract(label) - b.ado_states[5].extract(label)).full()).max() < 1e-8
    assert a.final_ado_state is a.ado_states[-1]
    # Any state that is not a Qobj holds every ADO: heom's, QuTiP's, QuTiP's array.
    for start in (a.ado_states[5], b.ado_states[5], b.ado_states[5]._ado_state):
        c = ours.run(start, TIMES[5:])
        assert largest([s.full() for s in c.states], [s.full() for s in b.states[5:]]) < 1e-8
    # start/step as QuTiP 5's solvers have them: every ADO at each step, and step() goes on after run().
    plain, theirs_plain = both(H, DrudeLorentzBath(sigmaz(), lam=0.1, gamma=0.5, T=0.5, Nk=2), 4)
    plain.start(RHO0, 0.0)
    theirs_plain.start(RHO0, 0.0)
    for t in TIMES[1:4]:
        ours_state, their_state = plain.step(t), theirs_plain.step(t)
        assert np.abs((ours_state.extract((0, 1, 0)) - their_state.extract((0, 1, 0))).full()).max() < 1e-8
        assert np.abs((ours_state.rho - their_state.rho).full()).max() < 1e-8
    plain.run(RHO0, TIMES[:6])
    assert np.abs((plain.step(TIMES[6]).rho - b.states[6]).full()).max() < 1e-8
    # Options changed in place, or replaced, are read at the next run.
    ours.options["store_ados"] = False
    assert ours.run(RHO0, TIMES).ado_states == []
    def error():
        return largest([s.full() for s in plain.run(RHO0, TIMES).states], [s.full() for s in b.states])

    tight = error()
    plain.options = {**QUIET, "rtol": 1e-5, "atol": 1e-7}
    assert error() > 10 * tight  # (the new tolerance took)


def test_a_time_dependent_hamiltonian():
    def f(t, w):
        return np.cos(w * t)

    # Callables among e_ops see each output time (NumPy 2 once gave them the first).
    seen = heom.HEOMSolver(H, DrudeLorentzBath(sigmaz(), lam=0.1, gamma=0.5, T=0.5, Nk=2), 2, options=QUIET).run(
        RHO0, TIMES, e_ops=[lambda t, s: t])
    assert np.array_equal(seen.expect[0], TIMES)

    bath = DrudeLorentzBath(sigmaz(), lam=0.1, gamma=0.5, T=0.5, Nk=2)
    samples = np.linspace(0, 5, 501)
    for H_t in (qutip.QobjEvo([0.25 * sigmaz(), [0.5 * sigmax(), f]], args={"w": 2.0}),
                qutip.QobjEvo([0.25 * sigmaz(), [0.5 * sigmax(), "cos(2 * t)"]]),
                qutip.QobjEvo([0.25 * sigmaz(), [0.5 * sigmax(), np.cos(2 * samples)]], tlist=samples)):
        ours, theirs = both(H_t, bath, 4)
        a, b = ours.run(RHO0, TIMES, e_ops=[sigmaz()]), theirs.run(RHO0, TIMES, e_ops=[sigmaz()])
        assert largest(a.expect, b.expect) < 1e-7
    a = heom.heomsolve([0.25 * sigmaz(), [0.5 * sigmax(), f]], bath, 4, RHO0, TIMES, e_ops=[sigmaz()],
                       args={"w": 2.0}, options=QUIET)
    assert largest(a.expect, b.expect) < 1e-7
    # An array coefficient sampled at tlist, as QuTiP's heomsolve takes it.
    sampled = heom.heomsolve([0.25 * sigmaz(), [0.5 * sigmax(), np.cos(2 * TIMES)]], bath, 4, RHO0, TIMES,
                             e_ops=[sigmaz()], options=QUIET)
    theirs = qutip.solver.heom.heomsolve([0.25 * sigmaz(), [0.5 * sigmax(), np.cos(2 * TIMES)]], bath, 4, RHO0,
                                         TIMES, e_ops=[sigmaz()], options=QUIET)
    assert largest(sampled.expect, theirs.expect) < 1e-7
    undriven = heom.heomsolve(0.25 * sigmaz(), bath, 4, RHO0, TIMES, e_ops=[sigmaz()], options=QUIET)
    assert largest(a.expect, undriven.expect) > 0.1


def test_hsolverdl_with_its_terminator():
    from qutip.solver.heom import HSolverDL as QutipHSolverDL

    arguments = (H, sigmaz(), 0.1, 0.5, 4, 3, 0.5)
    ours = heom.HSolverDL(*arguments, bnd_cut_approx=True, options=QUIET).run(RHO0, TIMES, e_ops=[sigmax()])
    theirs = QutipHSolverDL(*arguments, bnd_cut_approx=True, options=QUIET).run(RHO0, TIMES, e_ops=[sigmax()])
    assert largest(ours.expect, theirs.expect) < 1e-7


def test_heomsolve_options_and_progress(capsys):
    bath = DrudeLorentzBath(sigmaz(), lam=0.1, gamma=0.5, T=0.5, Nk=2)
    a = heom.heomsolve(H, bath, 3, RHO0, TIMES, e_ops=sigmaz(), options=QUIET)
    b = qutip.solver.heom.heomsolve(H, bath, 3, RHO0, TIMES, e_ops=sigmaz(), options=QUIET)
    assert len(a.expect) == 1 and largest(a.expect, b.expect) < 1e-7
    with pytest.warns(UserWarning, match=r"options\['method'\] = 'bdf'"):
        heom.HEOMSolver(H, bath, 2, options={"method": "bdf", "progress_bar": ""})
    capsys.readouterr()
    r = heom.HEOMSolver(H, bath, 2, options={"progress_bar": "text"}).run(RHO0, TIMES)
    assert len(r.states) == len(TIMES)
    shown = capsys.readouterr().out  # (QuTiP 5's text bar: every 10% of the intervals, then the total)
    assert shown.count("Run time") == len(TIMES) - 1 and "Total run time" in shown
    with pytest.raises(ValueError, match="progress_bar: unknown bar"):
        heom.HEOMSolver(H, bath, 2, options={"progress_bar": "fancy"})
    with pytest.raises(ValueError, match="odd_parity"):
        heom.HEOMSolver(H, bath, 2, odd_parity=True)


def test_an_exponential_environment_given_by_its_exponents():
    env = ExponentialBosonicEnvironment(ck_real=[0.05, 0.01], vk_real=[0.5, 3.0], ck_imag=[-0.05], vk_imag=[0.5],
                                        T=0.5)
    ours, theirs = both(H, (env, sigmaz()), 4)
    a, b = ours.run(RHO0, TIMES, e_ops=[sigmaz()]), theirs.run(RHO0, TIMES, e_ops=[sigmaz()])
    assert largest(a.expect, b.expect) < 1e-7
