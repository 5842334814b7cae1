"""heom: the hierarchical equations of motion on Kokkos, from Python.

    import heom
    bath = heom.DrudeLorentz(sigma_z, lam=0.1, gamma=0.5, T=0.5, Nk=2, expansion="pade")
    solver = heom.Solver(heom.Model(H, bath), depth=6, rtol=1e-8)
    result = solver.run(rho0, tlist)
    result.states          # numpy complex128 [nt, n, n]
    result.expect(sigma_z)

Matrices may be numpy arrays or QuTiP Qobjs, baths heom's own or QuTiP's bath objects. The solver
runs on the Kokkos device heom was built for (OpenMP threads: heom.set_threads, else HEOM_NUM_THREADS,
else the cores idle when it starts), releases the GIL while it steps, shows progress on long calls,
and stops cleanly on Ctrl-C.
"""
from __future__ import annotations

import atexit
import os
from typing import Optional, Sequence

import numpy as np

from . import _heom
from ._baths import (DrudeLorentz, Exponents, Fermionic, Lorentzian, Model, Underdamped, as_array, as_bath, as_model,
                     from_qutip)
from ._heom import Bath, DriveShape, IntegrationError, SteadyStateError
from ._progress import CountProgress, Progress, ResidualProgress
from ._qutip import HEOMSolver, HierarchyADOs, HierarchyADOsState, HSolverDL, heomsolve, lindblad_form
from ._response import Response2D, response_2d
from ._results import AdoState, EnsembleResult, Result, expect
from ._spectra import spectrum, spectrum_2d

__version__ = _heom.version
__all__ = [
    "AdoState", "Bath", "DriveShape", "DrudeLorentz", "EnsembleResult", "Exponents", "Fermionic", "HEOMSolver",
    "HierarchyADOs", "HierarchyADOsState", "HSolverDL", "IntegrationError", "Lorentzian", "Model", "Response2D", "Result",
    "Solver",
    "SteadyStateError", "Underdamped", "disorder_realizations", "expect", "from_qutip", "heomsolve", "initialize",
    "lindblad_form", "response_2d", "run_ensemble", "set_threads", "spectrum", "spectrum_2d", "threads",
    "with_diagonal_disorder",
]

#: The Kokkos execution space solvers run on ("OpenMP", "Cuda", ...).
execution_space = _heom.execution_space


def initialize(threads: int = 0) -> None:
    """Starts Kokkos with `threads` host threads (0: the default, as set_threads says). Optional: heom
    starts it at first use; call this first to choose the threads."""
    _heom.initialize(threads)


def set_threads(threads: int) -> None:
    """The host threads heom's solvers run on (OpenMP builds), before the first solver is made (Kokkos
    keeps its threads from then on; asking again for another number raises). Without it: the
    environment's HEOM_NUM_THREADS, else OMP_NUM_THREADS, else the cores idle when heom starts, so
    that a notebook on a busy machine does not wait, at every step, on a core another process holds."""
    if int(threads) != threads or threads < 1:
        raise ValueError(f"threads: expected a number of threads >= 1, got {threads}")
    _heom.initialize(int(threads))


def threads() -> int:
    """The host threads heom runs on (starting it, with the default, if it has not started)."""
    return _heom.threads()


atexit.register(_heom.finalize)


def _dims(H):
    return getattr(H, "dims", None) if hasattr(H, "full") else None


def _options(method, rtol, atol, step, max_step, max_order, kernel, memory_limit, lead_currents, threshold,
             ado_states=False):
    return _heom.solver_options(method, float(rtol), float(atol), float(step), float(max_step), int(max_order),
                                kernel, int(memory_limit), bool(lead_currents), float(threshold), bool(ado_states))


def _tlist(tlist) -> list:
    t = np.asarray(tlist, dtype=float)
    if t.ndim != 1 or len(t) == 0:
        raise ValueError("tlist: expected a 1-d list of times")
    return t.tolist()


class Solver:
    """A hierarchy of depth `depth` for a model (or a batch: a list of models that differ in H alone,
    stepped together), on one device, or split between `devices` devices of this process
    (bit-identical to one device).

    method: "automatic" (default: exp-adams, then chebyshev where its series measures cheaper once
    exp-adams' steps settle), "exp-adams", "dopri5", "chebyshev" (undriven models: long steps of a
    Faber series), "rk4" or "lsrk4" (the last two take `step`); rtol, atol: the adaptive methods'
    tolerances; max_order: the highest order exp-adams chooses, 1..5 (it chooses lower ones where
    stability, not accuracy, holds the step: docs/program.md); kernel: the generator kernel
    ("automatic"); memory_limit: bytes
    the hierarchy may take (0: what the device has; a MemoryError names the largest depth that fits);
    lead_currents: observe the current into each fermionic lead at every output time (default: when
    the model has a fermionic bath); threshold: importance truncation, ADOs of tier 2 and deeper whose
    importance value (HierarchicalEOM.jl's) is below it are left out (0: the whole hierarchy);
    ado_states: every run's Result keeps every ADO at every output time (Result.ado_states; one model
    on one device; it costs a dense output of the whole hierarchy and a copy per output time);
    progress: show progress on long calls.

    devices > 1 in a CUDA build are GPUs of this process, one stream each: GPU 0, 1, ... or those `gpus`
    names (device d on gpus[d % len(gpus)]; a GPU named twice runs two devices).

    comm: an mpi4py communicator whose ranks split the hierarchy, one part each (every rank of it
    makes this Solver with the same arguments, and calls run() alike); run() returns the whole result
    on every rank, bit-identical to one device, and rank 0 shows the progress.
    """

    def __init__(self, model, depth: int, *, method: str = "automatic", rtol: float = 1e-8, atol: float = 1e-10,
                 step: float = 0.0, max_step: float = 0.0, max_order: int = 5, kernel: str = "automatic",
                 memory_limit: int = 0,
                 lead_currents: Optional[bool] = None, threshold: float = 0.0, ado_states: bool = False,
                 devices: int = 1, gpus: Optional[Sequence[int]] = None, comm=None, progress: bool = True):
        models = list(model) if isinstance(model, (list, tuple)) else [model]
        for i, m in enumerate(models):
            if not isinstance(m, _heom.Model):
                raise TypeError(f"model{'' if len(models) == 1 else f'[{i}]'}: expected a heom.Model "
                                f"(heom.Model(H, baths)), got {type(m).__name__}")
        if lead_currents is None:
            lead_currents = any(b.is_fermionic for b in models[0].baths)
        self.batch = isinstance(model, (list, tuple))
        self.models = models
        self.depth = int(depth)
        self._rank = _rank(comm)
        self.progress = progress and self._rank == 0
        self.lead_currents_observed = bool(lead_currents)
        self.keeps_ado_states = bool(ado_states)
        self._options = _options(method, rtol, atol, step, max_step, max_order, kernel, memory_limit, lead_currents,
                                 threshold, ado_states)
        self._core = _heom.Solver(models, self.depth, self._options, int(devices), _gpus(gpus, int(devices)), comm)
        self._dims = None

    def _shows(self, progress: Optional[bool]) -> bool:
        """Whether a call shows progress: its own choice, else the solver's (on rank 0 alone)."""
        return self.progress if progress is None else progress and self._rank == 0

    def _bar(self, progress, label: str, start: float, end: float):
        """progress: True, False, None (the solver's choice) or an object called with the value
        reached and closed at the end (such as heom's Progress)."""
        if callable(progress) and hasattr(progress, "close"):
            return progress
        return Progress(label, start, end, self._shows(progress))

    # --- dynamics -------------------------------------------------------------------------------
    def run(self, rho0, tlist, e_ops: Sequence = (), *, ado_return: bool = False, progress=None):
        """Propagates from rho0 at tlist[0] (every other ADO zero) through tlist, and returns a Result
        (a batch: a list of them, one per model; rho0 then one state per model, or one for all).
        rho0=None continues from the solver's state (after steady_state() or an earlier run) at
        tlist[0] >= solver.time. ado_return: the Result holds every ADO at the last time (one model on
        one device); a solver made with ado_states=True keeps them at every time (Result.ado_states)."""
        times = _tlist(tlist)
        if rho0 is not None:
            if self.batch:
                starts = [rho0] * len(self.models) if _is_matrix(rho0) else list(rho0)
                self._dims = _dims(starts[0])
                rho0 = [as_array(r, f"rho0[{i}]") for i, r in enumerate(starts)]
            else:
                self._dims = _dims(rho0)
                rho0 = as_array(rho0, "rho0")
        bar = self._bar(progress, "heom run", times[0], times[-1])
        try:
            out = self._core.run(rho0, times, bar)
        finally:
            bar.close()
        statistics = {k: out[k] for k in ("steps", "rejected", "evaluations", "wall_time")}
        ados = self.ados() if ado_return else None
        ado_states = None
        if out["ados"] is not None:
            labels = self._core.labels()
            ado_states = [AdoState(at, labels, self._dims) for at in out["ados"]]
        results = []
        for m, states in enumerate(out["states"]):
            currents = out["currents"][m] if out["currents"] is not None else None
            results.append(Result(out["times"], states, currents, e_ops, statistics, ados, self._dims, ado_states))
        return results if self.batch else results[0]

    # --- steady states --------------------------------------------------------------------------
    def steady_state(self, *, tolerance: float = 1e-10, restart: int = 60, max_iterations: int = 5000,
                     preconditioner: str = "tiers", fallback_time: float = 0.0, progress: Optional[bool] = None):
        """Replaces the state by the steady state (preconditioned GMRES on the whole hierarchy) and
        returns (rho, info); every ADO is then in ados(), the currents in lead_currents(). Raises
        SteadyStateError when the residual stays above `tolerance`."""
        bar = ResidualProgress("heom steady state", tolerance, self._shows(progress))
        try:
            rho, info = self._core.steady_state(float(tolerance), int(restart), int(max_iterations), preconditioner,
                                                float(fallback_time), bar)
        finally:
            bar.close()
        return rho, info

    # --- the state ------------------------------------------------------------------------------
    @property
    def time(self) -> float:
        return self._core.time

    @property
    def num_ados(self) -> int:
        return self._core.info()["num_ados"]

    @property
    def statistics(self) -> dict:
        """Steps, rejected steps and generator evaluations since the solver was made."""
        return self._core.statistics()

    @property
    def kernel(self) -> str:
        """The generator kernel that runs."""
        return self._core.info()["kernel"]

    def ados(self) -> AdoState:
        """Every ADO at solver.time, with its label."""
        return AdoState(self._core.ados(), self._core.labels(), self._dims)

    def set_ados(self, ados, t0: float) -> None:
        """Makes every ADO the state at time t0: `ados` an AdoState of this hierarchy, or an array
        [num_ados, n, n] in labels' order (ados().ados' layout); run(None, tlist) continues from it."""
        blocks = ados.ados if isinstance(ados, AdoState) else np.asarray(ados, dtype=np.complex128)
        self._core.set_ados(blocks, float(t0))

    def lead_currents(self) -> np.ndarray:
        """The particle current from the system into each lead (0 for bosonic baths) at solver.time."""
        return np.asarray(self._core.lead_currents())

    # --- correlation functions and spectra ------------------------------------------------------
    def correlation_function(self, A, B, taus, *, progress: Optional[bool] = None) -> np.ndarray:
        """<A(t0 + tau) B(t0)> for each tau (ascending, >= 0) from the solver's state at t0 (a steady
        state for a stationary correlation), by the quantum regression theorem on the whole hierarchy.
        The solver is left at t0 + taus[-1] holding the propagated B x."""
        taus = _tlist(taus)
        bar = Progress("heom correlation", 0, taus[-1], self._shows(progress))
        try:
            return np.asarray(self._core.correlation(as_array(A, "A"), as_array(B, "B"), taus, bar))
        finally:
            bar.close()

    def anticommutator_correlation(self, d, taus, *, progress: Optional[bool] = None) -> np.ndarray:
        """<{d(t0 + tau), d^+(t0)}> for a fermionic level d, by the odd-parity hierarchy from the
        solver's state (left as it was): i G^R(tau) of the impurity."""
        taus = _tlist(taus)
        bar = Progress("heom spectral function", 0, 2 * taus[-1], self._shows(progress))
        try:
            return np.asarray(self._core.anticommutator(as_array(d, "d"), taus, bar))
        finally:
            bar.close()

    def density_of_states(self, d, omegas, *, tolerance: float = 1e-8, restart: int = 60, max_iterations: int = 5000,
                          preconditioner: str = "tiers", progress: Optional[bool] = None):
        """The density of states A(w) = (1/pi) Re int_0^inf <{d(tau), d^+}> exp(i w tau) dtau of level d at
        each w of `omegas`, from the solver's state (solve the steady state first; left as it was),
        solved in frequency: two GMRES solves per w on the odd-parity hierarchy, each to relative
        residual `tolerance` (no time grid, window or cut-off). Returns (A, info). Cheaper than
        spectral_function for a few frequencies or a narrow line (a slowly decaying C(t)); see
        perf_tests/README.md. Raises SteadyStateError when a solve stops above the tolerance."""
        omegas = np.asarray(omegas, dtype=float).ravel()
        bar = Progress("heom density of states", 0, 2 * len(omegas), self._shows(progress))
        try:
            a, info = self._core.density_of_states(as_array(d, "d"), list(omegas), float(tolerance), int(restart),
                                                   int(max_iterations), preconditioner, bar)
        finally:
            bar.close()
        return np.asarray(a), info

    def spectral_function(self, d, t_max: float, dt: float, *, window: str = "hann", padding: int = 4,
                          progress: Optional[bool] = None):
        """The density of states A(w) = (1/pi) Re int_0^t_max <{d(tau), d^+}> exp(i w tau) dtau of level
        d, from the solver's state (solve the steady state first), sampled every dt. Returns (omega, A)."""
        if not (t_max > 0 and dt > 0):
            raise ValueError("t_max and dt must be > 0")
        taus = dt * np.arange(int(round(t_max / dt)) + 1)
        c = self.anticommutator_correlation(d, taus, progress=progress)
        return spectrum(c, dt, sign=1, window=window, padding=padding)


def _gpus(gpus, devices) -> list:
    # (CUDA builds read HEOM_DEVICE_IDS, "2,3", for a split's devices when gpus is not given, as the
    # program does.)
    if gpus is None and devices > 1 and execution_space == "Cuda" and os.environ.get("HEOM_DEVICE_IDS"):
        gpus = os.environ["HEOM_DEVICE_IDS"].split(",")
    return [] if gpus is None else [int(g) for g in gpus]


def _rank(comm) -> int:
    """This process's rank in an mpi4py communicator (0 without one, or for what the C++ then refuses
    as no communicator)."""
    try:
        return 0 if comm is None else int(comm.Get_rank())
    except Exception:  # (not a communicator, or MPI.COMM_NULL)
        return 0


def with_diagonal_disorder(H, sigma, seed: int, realization: int) -> np.ndarray:
    """H with Gaussian static disorder on its diagonal: H_jj + sigma_j z(seed, realization, j), z a
    standard normal that depends on (seed, realization, j) alone (Philox4x32-10, Box-Muller): the same
    draw as the heom program's [ensemble] site_energy_sigma and heom::with_diagonal_disorder. sigma: one
    standard deviation (>= 0) per diagonal element, or one for all."""
    H = as_array(H, "H")
    return _heom.with_diagonal_disorder(H, _sigmas(sigma, H.shape[0]), _seed(seed), int(realization))


def disorder_realizations(model, site_energy_sigma, members: int, *, seed: int = 0) -> list:
    """`members` models that differ from `model` in H alone: realization r has
    with_diagonal_disorder(model.H, site_energy_sigma, seed, r), as the heom program's [ensemble] makes
    them. For run_ensemble, whose mean over them is the disorder average."""
    model = as_model(model)
    return _heom.disorder_realizations(model, _sigmas(site_energy_sigma, model.dimension), members=int(members),
                                       seed=_seed(seed))


def _sigmas(sigma, n: int) -> list:
    values = np.atleast_1d(np.asarray(sigma, dtype=float))
    if values.ndim != 1 or len(values) not in (1, n):
        raise ValueError(f"site_energy_sigma: expected one standard deviation or {n}, got shape {values.shape}")
    return (np.full(n, values[0]) if len(values) == 1 else values).tolist()


def _seed(seed) -> int:
    if int(seed) < 0 or int(seed) != seed:
        raise ValueError(f"seed: expected an integer >= 0, got {seed}")
    return int(seed)


def _is_matrix(x) -> bool:
    return hasattr(x, "full") or np.asarray(x).ndim == 2


def run_ensemble(models: Sequence, rho0, tlist, depth: int, *, method: str = "automatic", rtol: float = 1e-8,
                 atol: float = 1e-10, step: float = 0.0, max_step: float = 0.0, max_order: int = 5,
                 kernel: str = "automatic", lead_currents: bool = False, threshold: float = 0.0, devices: int = 1,
                 gpus: Optional[Sequence[int]] = None, batch: int = 1, store_members: bool = True, comm=None,
                 progress: bool = True) -> EnsembleResult:
    """Runs every model (disorder realizations, a parameter sweep) from rho0 (one state for all, or one
    per model) through tlist, spread over `devices` devices of this process (GPUs in a CUDA build, as
    Solver places them with `gpus`; batch > 1: up to that many
    members that differ in H alone stepped together). Each member's result is the same bits however
    the members were scheduled (with batch 1, those of its solo run); the mean is summed in member
    order. comm: an mpi4py communicator whose ranks share the members (every rank calls run_ensemble
    with the same arguments and receives the whole result; rank 0 shows the progress)."""
    models = list(models)
    times = _tlist(tlist)
    options = _options(method, rtol, atol, step, max_step, max_order, kernel, 0, lead_currents, threshold)
    start = as_array(rho0, "rho0") if _is_matrix(rho0) else [as_array(r, f"rho0[{i}]") for i, r in enumerate(rho0)]
    bar = CountProgress("heom ensemble", len(models), progress and _rank(comm) == 0)
    try:
        out = _heom.run_ensemble(models, start, times, int(depth), options, int(devices), _gpus(gpus, int(devices)),
                                 int(batch), bool(store_members), comm, bar)
    finally:
        bar.close()
    return EnsembleResult(out["times"], out["mean"], out["states"], out["currents"],
                          {"steps": out["steps"], "workers": out["workers"]})
