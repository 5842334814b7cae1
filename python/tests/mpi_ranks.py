"""heom from Python over the ranks of an MPI job (mpi4py communicators), run by ctest as
    mpirun -n RANKS python3 -m mpi4py mpi_ranks.py
(`-m mpi4py`: a failing rank aborts the job rather than leaving the others waiting). Every rank
checks that a hierarchy split between the ranks gives one device's bits on every rank, that an
ensemble spread over them gives each member's solo bits, and that what a split hierarchy cannot do
is refused."""
import numpy as np
from mpi4py import MPI

import heom

SZ = np.diag([1.0, -1.0]).astype(complex)
SX = np.array([[0, 1], [1, 0]], dtype=complex)
UP = np.diag([1.0, 0.0]).astype(complex)
D = np.array([[0, 1], [0, 0]], dtype=complex)  # a spinless level's annihilation operator

comm = MPI.COMM_WORLD
heom.initialize(1)


def check(condition, what):
    if not condition:
        raise AssertionError(f"rank {comm.Get_rank()} of {comm.Get_size()}: {what}")


def raises(exception, match, call):
    try:
        call()
    except exception as e:
        check(match in str(e), f"{exception.__name__} says {e!r}, not {match!r}")
        return
    check(False, f"no {exception.__name__} ({match})")


def spin_boson():
    return heom.Model(0.25 * SZ + 0.5 * SX, heom.DrudeLorentz(SZ, lam=0.1, gamma=0.5, T=0.5, Nk=2))


def a_split_hierarchy_gives_one_devices_bits():
    times = np.linspace(0, 3, 7)
    for model, depth in ((spin_boson(), 5),
                         (heom.Model(0.5 * D.conj().T @ D, [heom.Lorentzian(D, 0.1, 5.0, mu, 1.0, 2, expansion="pade")
                                                             for mu in (1.0, -1.0)]), 4)):
        split = heom.Solver(model, depth, comm=comm, progress=False)
        check(split.num_ados > 2 * comm.Get_size(), "the hierarchy has ADOs on every rank")
        got = split.run(UP, times)
        alone = heom.Solver(model, depth, progress=False).run(UP, times)
        check(np.array_equal(got.times, alone.times), "the output times")
        check(np.array_equal(got.states, alone.states), "rho(t) is one device's bits")
        check(got.statistics["steps"] == alone.statistics["steps"], "the same steps")
        if model.baths[0].is_fermionic:
            check(np.array_equal(got.currents, alone.currents), "the leads' currents are one device's bits")
            check(np.abs(got.currents).max() > 1e-3, "the currents flow")
        # Continuing from the split state.
        more = split.run(None, [3.0, 4.0])
        check(more.states.shape == (2, 2, 2) and np.isfinite(more.states).all(), "continuing from the state")
        if comm.Get_size() > 1:
            raises(ValueError, "ranks of comm", split.ados)
        else:  # (one rank holds every ADO)
            whole = heom.Solver(model, depth, progress=False)
            whole.run(UP, times)
            whole.run(None, [3.0, 4.0])
            check(np.array_equal(split.ados().rho, whole.ados().rho), "one rank's ADOs are the whole hierarchy's")
        raises(ValueError, "split hierarchy", split.steady_state)


def an_ensemble_spreads_over_the_ranks():
    times = np.linspace(0, 2, 5)
    members = heom.disorder_realizations(spin_boson(), [0.2, 0.05], 5, seed=3)
    spread = heom.run_ensemble(members, UP, times, 3, comm=comm, progress=False)
    check(spread.statistics["workers"] == comm.Get_size(), "a worker per rank")
    here = heom.run_ensemble(members, UP, times, 3, progress=False)
    check(np.array_equal(spread.states, here.states), "every member's bits on every rank")
    check(np.array_equal(spread.mean, here.mean), "the mean's bits")


def bad_communicators_are_refused():
    raises(ValueError, "mpi4py communicator", lambda: heom.Solver(spin_boson(), 2, comm="world", progress=False))
    raises(ValueError, "COMM_NULL", lambda: heom.Solver(spin_boson(), 2, comm=MPI.COMM_NULL, progress=False))
    raises(ValueError, "each rank is one device",
           lambda: heom.Solver(spin_boson(), 2, comm=comm, devices=2, progress=False))


a_split_hierarchy_gives_one_devices_bits()
an_ensemble_spreads_over_the_ranks()
bad_communicators_are_refused()
comm.Barrier()
if comm.Get_rank() == 0:
    print(f"heom from Python on {comm.Get_size()} ranks: all checks passed")
