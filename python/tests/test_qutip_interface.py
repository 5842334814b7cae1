"""heom.HEOMSolver as QuTiP 4.7's HEOMSolver: the same call in each form QuTiP's tutorials use gives
QuTiP's numbers, in objects QuTiP's own functions take; what heom cannot take is refused naming
the argument."""
import warnings

import numpy as np
import pytest
import qutip
from qutip.nonmarkov.bofin_baths import DrudeLorentzBath, LorentzianPadeBath
from qutip.nonmarkov.heom import HEOMSolver as QutipHEOMSolver
from qutip.ui.progressbar import BaseProgressBar

import heom
from qutip_tutorials import state_current

H = 0.25 * qutip.sigmaz() + 0.5 * qutip.sigmax()
RHO0 = qutip.basis(2, 0).proj()
TIMES = np.linspace(0, 5, 11)
TIGHT = qutip.Options(nsteps=15000, store_states=True, rtol=1e-10, atol=1e-12)


def spin_boson_bath():
    return DrudeLorentzBath(qutip.sigmaz(), lam=0.1, gamma=0.5, T=0.5, Nk=2)


@pytest.fixture(scope="module")
def pair():
    """heom's and QuTiP's solvers of one spin-boson model at depth 4."""
    return (heom.HEOMSolver(H, spin_boson_bath(), 4, options=TIGHT),
            QutipHEOMSolver(H, spin_boson_bath(), 4, options=TIGHT))


def test_e_ops_in_every_form_give_qutips_values(pair):
    ours, theirs = pair
    # One Qobj (QuTiP makes it a list of one; heom once read it row by row, silently).
    a, b = ours.run(RHO0, TIMES, e_ops=qutip.sigmaz()), theirs.run(RHO0, TIMES, e_ops=qutip.sigmaz())
    assert len(a.expect) == 1 and len(a.states) == len(TIMES)  # (TIGHT's store_states)
    assert heom.HEOMSolver(H, spin_boson_bath(), 2).run(RHO0, TIMES, e_ops=qutip.sigmaz()).states == []  # (QuTiP's)
    assert np.abs(a.expect[0] - np.array(b.expect[0])).max() < 1e-8
    assert np.abs(a.expect[0]).max() > 0.5
    # A dict of an operator and a callable f(t, ado_state), keyed as given.
    e_ops = {"z": qutip.sigmaz(), "x via rho": lambda t, s: (s.rho * qutip.sigmax()).tr(),
             "ADO (0, 1, 0)": lambda t, s: s.extract((0, 1, 0)).tr()}
    a, b = ours.run(RHO0, TIMES, e_ops=e_ops), theirs.run(RHO0, TIMES, e_ops=e_ops)
    assert list(a.expect) == list(e_ops)
    for key in e_ops:
        assert np.abs(np.asarray(a.expect[key]) - np.array(b.expect[key])).max() < 1e-8, key
    assert np.abs(a.expect["x via rho"]).max() > 0.1
    # A single callable, and a tuple (any iterable) of operators.
    a = ours.run(RHO0, TIMES, e_ops=lambda t, s: t)
    assert np.array_equal(a.expect[0], TIMES)
    a = ours.run(RHO0, TIMES, e_ops=(qutip.sigmax(), qutip.sigmay()))
    assert len(a.expect) == 2


def test_results_are_what_qutips_functions_take(pair):
    ours, _ = pair
    r = ours.run(RHO0, TIMES)
    assert isinstance(r, qutip.solver.Result)
    assert isinstance(r.states, list) and all(isinstance(s, qutip.Qobj) for s in r.states)
    direct = heom.Solver(heom.Model(H, spin_boson_bath()), 4, rtol=1e-10, atol=1e-12, progress=False).run(RHO0, TIMES)
    np.testing.assert_array_equal(np.array(qutip.expect(qutip.sigmaz(), r.states)), direct.expect(qutip.sigmaz()))
    np.testing.assert_array_equal(np.array(qutip.expect(r.states, qutip.sigmaz())), direct.expect(qutip.sigmaz()))
    assert r.times == list(TIMES)


def test_ado_states_at_every_time_and_continuing_from_them(pair):
    ours, theirs = pair
    a, b = ours.run(RHO0, TIMES, ado_return=True), theirs.run(RHO0, TIMES, ado_return=True)
    assert len(a.ado_states) == len(TIMES)
    for i in (1, 5, 10):
        for label in b.ado_states[i].labels:
            assert np.abs((a.ado_states[i].extract(label) - b.ado_states[i].extract(label)).full()).max() < 1e-8
        assert isinstance(a.ado_states[i].rho, qutip.Qobj)
    assert a.ado_states[5].idx((0, 1, 0)) == ours.ados.labels.index((0, 1, 0))
    assert np.abs(a.ado_states[5].extract((0, 1, 0)).full()).max() > 1e-3
    # Continued from time 5 with every ADO: heom's state, QuTiP's state, and QuTiP's array.
    for start in (a.ado_states[5], b.ado_states[5], b.ado_states[5]._ado_state):
        c = ours.run(start, TIMES[5:], ado_init=True)
        assert max(np.abs((x - y).full()).max() for x, y in zip(c.states, b.states[5:])) < 1e-8
    with pytest.raises(ValueError, match="rho0: ADOs passed with ado_init have shape"):
        ours.run(np.zeros((3, 2, 2)), TIMES, ado_init=True)


def test_steady_state_as_qutips(pair):
    ours, theirs = pair
    rho, ados = ours.steady_state(use_mkl=False)
    their_rho, their_ados = theirs.steady_state(use_mkl=False)
    assert isinstance(rho, qutip.Qobj) and rho.dims == their_rho.dims
    assert np.abs((rho - their_rho).full()).max() < 1e-9
    assert np.abs((ados.extract((0, 1, 0)) - their_ados.extract((0, 1, 0))).full()).max() < 1e-9
    assert np.abs(their_ados.extract((0, 1, 0)).full()).max() > 1e-3


def test_a_liouvillian_with_a_terminator_as_in_qutips_first_tutorial():
    bath = DrudeLorentzBath(qutip.sigmaz(), lam=0.1, gamma=0.5, T=0.5, Nk=2)
    _, terminator = bath.terminator()
    L = qutip.liouvillian(H) + terminator
    ours = heom.HEOMSolver(L, bath, 4, options=TIGHT).run(RHO0, TIMES, e_ops=[qutip.sigmaz(), qutip.sigmax()])
    theirs = QutipHEOMSolver(L, bath, 4, options=TIGHT).run(RHO0, TIMES, e_ops=[qutip.sigmaz(), qutip.sigmax()])
    without = heom.HEOMSolver(H, bath, 4, options=TIGHT).run(RHO0, TIMES, e_ops=[qutip.sigmax()])
    for k in range(2):
        assert np.abs(ours.expect[k] - np.array(theirs.expect[k])).max() < 1e-8
    assert np.abs(ours.expect[1] - without.expect[0]).max() > 1e-4  # (the terminator acts)
    assert ours.states[0].dims == [[2], [2]]


def test_lindblad_form_rebuilds_the_liouvillian_and_refuses_what_is_not_one():
    c_ops = [0.3 * qutip.destroy(3), 0.2 * qutip.rand_dm(3, seed=2)]
    Hr = qutip.rand_herm(3, seed=1)
    H_found, terms = heom.lindblad_form(qutip.liouvillian(Hr, c_ops))
    rebuilt = qutip.liouvillian(qutip.Qobj(H_found), [np.sqrt(rate) * qutip.Qobj(Lk) for Lk, rate in terms])
    assert np.abs((rebuilt - qutip.liouvillian(Hr, c_ops)).full()).max() < 1e-12
    assert len(terms) == 2
    with pytest.raises(ValueError, match="H_sys: the Liouvillian is not"):
        heom.HEOMSolver(qutip.spre(qutip.destroy(2)), spin_boson_bath(), 2)
    with pytest.raises(ValueError, match="negative rate"):
        heom.lindblad_form(-qutip.lindblad_dissipator(qutip.sigmam()))


def test_the_fermionic_tutorials_current_from_the_ados():
    d = qutip.destroy(2)
    H_imp = 1.0 * d.dag() * d
    leads = [LorentzianPadeBath(d, 0.01, 1.0, mu, 0.025851991, 2, tag=tag) for mu, tag in ((1.0, "L"), (-1.0, "R"))]
    options = qutip.Options(nsteps=15000, rtol=1e-12, atol=1e-12)
    ours, theirs = heom.HEOMSolver(H_imp, leads, 2, options=options), QutipHEOMSolver(H_imp, leads, 2, options=options)
    rho, ados = ours.steady_state()
    _, their_ados = theirs.steady_state()
    for tag in ("L", "R"):
        assert abs(state_current(ados, tag) - state_current(their_ados, tag)) < 1e-10
    assert abs(state_current(ados, "L")) > 1e-4
    assert abs(state_current(ados, "L") + state_current(ados, "R")) < 1e-10  # (steady: what enters leaves)
    r = ours.run(qutip.basis(2, 0).proj(), [0.0, 5.0, 10.0], ado_return=True)
    currents = r.heom_result.currents[-1]  # (heom's own, per lead)
    assert abs(state_current(r.ado_states[-1], "L") - currents[0]) < 1e-10
    # heom's own baths: QuTiP's exponent objects without tags, filtered by type.
    native = heom.HEOMSolver(H_imp, [heom.Lorentzian(d, 0.01, w=1.0, mu=mu, T=0.025851991, Nk=2)
                                     for mu in (1.0, -1.0)], 2, options=options)
    _, native_ados = native.steady_state()
    assert len(native_ados.filter(level=1, types=["+"])) == len(native_ados.filter(level=1)) // 2
    assert abs(sum(native_ados.extract(lb).tr() for lb in native_ados.filter(level=1))
               - sum(ados.extract(lb).tr() for lb in ados.filter(level=1))) < 1e-10


def test_a_time_dependent_hamiltonian_as_qutips_heomsolver_takes_it():
    def f(t):  # (QuTiP 4.7's HEOMSolver calls a coefficient with t alone)
        return np.cos(2.0 * t)

    H_t = [0.25 * qutip.sigmaz(), [0.5 * qutip.sigmax(), f]]
    ours = heom.HEOMSolver(H_t, spin_boson_bath(), 4, options=TIGHT).run(RHO0, TIMES, e_ops=[qutip.sigmaz()])
    theirs = QutipHEOMSolver(H_t, spin_boson_bath(), 4, options=TIGHT).run(RHO0, TIMES, e_ops=[qutip.sigmaz()])
    undriven = heom.HEOMSolver(0.25 * qutip.sigmaz(), spin_boson_bath(), 4).run(RHO0, TIMES, e_ops=[qutip.sigmaz()])
    assert np.abs(ours.expect[0] - np.array(theirs.expect[0])).max() < 1e-8
    assert np.abs(ours.expect[0] - undriven.expect[0]).max() > 0.1  # (the drive acts)
    # The other solvers' f(t, args) and strings, which QuTiP 4.7's HEOMSolver does not take: the same.
    for coefficient in (lambda t, args: np.cos(args["w"] * t), "cos(w * t)"):
        H_args = qutip.QobjEvo([0.25 * qutip.sigmaz(), [0.5 * qutip.sigmax(), coefficient]], args={"w": 2.0})
        again = heom.HEOMSolver(H_args, spin_boson_bath(), 4, options=TIGHT).run(RHO0, TIMES, e_ops=[qutip.sigmaz()])
        assert np.abs(again.expect[0] - ours.expect[0]).max() < 1e-12
    # A coefficient that is not real is refused, naming the term.
    with pytest.raises(ValueError, match="H_sys term 0"):
        heom.HEOMSolver([H, [qutip.sigmax(), lambda t: 1j * t]], spin_boson_bath(), 2).run(RHO0, TIMES)


def test_hsolverdl_with_its_terminator_and_a_drive():
    from qutip.nonmarkov.heom import HSolverDL as QutipHSolverDL

    def f(t):
        return np.cos(2.0 * t)

    for H_sys in (H, [0.25 * qutip.sigmaz(), [0.5 * qutip.sigmax(), f]]):
        arguments = (H_sys, qutip.sigmaz(), 0.1, 0.5, 4, 3, 0.5)
        ours = heom.HSolverDL(*arguments, bnd_cut_approx=True, options=TIGHT).run(RHO0, TIMES, e_ops=[qutip.sigmax()])
        theirs = QutipHSolverDL(*arguments, bnd_cut_approx=True, options=TIGHT).run(RHO0, TIMES,
                                                                                    e_ops=[qutip.sigmax()])
        assert np.abs(ours.expect[0] - np.array(theirs.expect[0])).max() < 1e-8
    plain = heom.HSolverDL(*arguments, options=TIGHT).run(RHO0, TIMES, e_ops=[qutip.sigmax()])
    assert np.abs(plain.expect[0] - ours.expect[0]).max() > 1e-5  # (the terminator acts)


def test_a_system_of_two_qubits_keeps_its_dims():
    sz1, sx2 = qutip.tensor(qutip.sigmaz(), qutip.qeye(2)), qutip.tensor(qutip.qeye(2), qutip.sigmax())
    H2 = 0.5 * sz1 + 0.3 * sx2 + 0.1 * qutip.tensor(qutip.sigmax(), qutip.sigmax())
    rho0 = qutip.tensor(qutip.basis(2, 0).proj(), qutip.basis(2, 1).proj())
    bath = DrudeLorentzBath(sz1, lam=0.1, gamma=0.5, T=0.5, Nk=1)
    for H_sys in (H2, [H2, [sx2, lambda t: 0.2 * np.sin(t)]]):
        ours = heom.HEOMSolver(H_sys, bath, 3, options=TIGHT).run(rho0, TIMES, ado_return=True)
        theirs = QutipHEOMSolver(H_sys, bath, 3, options=TIGHT).run(rho0, TIMES)
        assert ours.states[-1].dims == [[2, 2], [2, 2]] and ours.ado_states[-1].extract((1, 0)).dims == [[2, 2], [2, 2]]
        assert max(np.abs((x - y).full()).max() for x, y in zip(ours.states, theirs.states)) < 1e-8
    # A bosonic exponent capped at a number of excitations (QuTiP's dim) is refused, not run uncapped.
    capped = DrudeLorentzBath(sz1, lam=0.1, gamma=0.5, T=0.5, Nk=1)
    capped.exponents[0].dim = 2
    with pytest.raises(ValueError, match="exponent 0 has dim = 2"):
        heom.HEOMSolver(H2, capped, 3)


def test_drives_of_heoms_own_model():
    model = heom.Model(H.full(), spin_boson_bath(), drives=[(qutip.sigmax(), heom.DriveShape.cosine(0.3, 2.0))])
    same = heom.Model(H.full(), spin_boson_bath(), drives=[(qutip.sigmax(), lambda t: 0.3 * np.cos(2.0 * t))])
    assert model.is_driven and same.is_driven
    a = heom.Solver(model, 3, progress=False).run(RHO0, TIMES)
    b = heom.Solver(same, 3, progress=False).run(RHO0, TIMES)
    plain = heom.Solver(heom.Model(H.full(), spin_boson_bath()), 3, progress=False).run(RHO0, TIMES)
    assert np.abs(a.states - b.states).max() < 1e-12
    assert np.abs(a.states - plain.states).max() > 1e-3
    with pytest.raises(TypeError, match=r"drives\[0\]: f is a heom.DriveShape or a function"):
        heom.Model(H.full(), spin_boson_bath(), drives=[(qutip.sigmax(), 0.3)])

    def broken(t):
        raise ZeroDivisionError("from the drive")

    with pytest.raises(ZeroDivisionError, match="from the drive"):
        heom.Solver(heom.Model(H.full(), [], drives=[(qutip.sigmax(), broken)]), 0, progress=False).run(RHO0, TIMES)


class RecordingBar(BaseProgressBar):
    def __init__(self):
        super().__init__()
        self.calls = []

    def start(self, iterations, chunk_size=10):
        self.calls.append(("start", iterations))

    def update(self, n):
        self.calls.append(("update", n))

    def finished(self):
        self.calls.append(("finished",))


def test_progress_bar_as_qutip_takes_it(capfd):
    bar = RecordingBar()
    heom.HEOMSolver(H, spin_boson_bath(), 2, progress_bar=bar).run(RHO0, TIMES)
    assert bar.calls[0] == ("start", len(TIMES)) and bar.calls[-1] == ("finished",)
    updates = [c[1] for c in bar.calls if c[0] == "update"]
    assert updates == list(range(len(TIMES)))  # (as QuTiP 4.7: each output time's index, once)
    heom.HEOMSolver(H, spin_boson_bath(), 2, progress_bar=None).run(RHO0, TIMES)
    assert "heom run" not in capfd.readouterr().err
    with pytest.raises(TypeError, match="progress_bar"):
        heom.HEOMSolver(H, spin_boson_bath(), 2, progress_bar="text please")


def test_what_heom_cannot_take_is_refused_naming_the_argument():
    with pytest.raises(ValueError, match="H_sys: time-dependent term 0 is a dissipator"):
        heom.HEOMSolver([qutip.liouvillian(H), [qutip.lindblad_dissipator(qutip.sigmam()), "sin(t)"]],
                        spin_boson_bath(), 2)
    solver = heom.HEOMSolver(H, spin_boson_bath(), 2)
    with pytest.raises(TypeError, match=r"e_ops\[1\]"):
        solver.run(RHO0, TIMES, e_ops=[qutip.sigmaz(), "sigmaz"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        heom.HEOMSolver(H, spin_boson_bath(), 2, options=qutip.Options(method="bdf", nsteps=20000))
    assert [str(w.message).split(":")[0] for w in caught] == ["options['method'] = 'bdf'"]


def test_lorentzian_takes_qutips_names():
    d = np.array([[0, 1], [0, 0]], dtype=complex)
    ours = heom.Lorentzian(d, 0.01, w=1.0, mu=0.5, T=0.3, Nk=2).exponents
    assert ours == heom.Lorentzian(d, 0.01, 1.0, 0.5, 0.3, 2).exponents
    theirs = LorentzianPadeBath(qutip.Qobj(d), 0.01, 1.0, 0.5, 0.3, 2).exponents
    assert max(abs(o[1] - t.ck) + abs(o[2] - t.vk) for o, t in zip(ours, theirs)) < 1e-15
    with pytest.raises(ValueError, match="width once"):
        heom.Lorentzian(d, 0.01, 1.0, 0.5, 0.3, 2, w=1.0)
