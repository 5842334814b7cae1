"""QuTiP 4.7's HEOMSolver interface on heom: the constructor and run/steady_state arguments QuTiP
takes, e_ops in each form QuTiP accepts, results that QuTiP's own functions accept (states a list of
Qobjs, expect a list or dict), and ADO states with QuTiP's extract, filter, exps and labels."""
from __future__ import annotations

import bisect
import warnings

import numpy as np

from . import _heom
from ._baths import Model, as_array
from ._results import expect


def _qutip():
    import qutip  # (this interface is for QuTiP users: QuTiP is there)

    return qutip


def _bath_exponent_class():
    from qutip.nonmarkov.bofin_baths import BathExponent

    return BathExponent


# --- the system: a Hamiltonian, or a Liouvillian such as QuTiP's tutorials build -------------------

def _operator_basis(n: int) -> np.ndarray:
    """An orthonormal basis [n^2][n][n] of n x n matrices (tr(F_i^+ F_j) = delta_ij) whose first
    element is I / sqrt(n): the GKS form's basis."""
    vectors = np.eye(n * n, dtype=complex)
    vectors[:, 0] = np.eye(n).ravel() / np.sqrt(n)
    q, _ = np.linalg.qr(vectors)
    q[:, 0] *= np.vdot(q[:, 0], vectors[:, 0]) / abs(np.vdot(q[:, 0], vectors[:, 0]))  # (+I / sqrt(n) exactly)
    return q.T.reshape(n * n, n, n)


def lindblad_form(S, name: str = "H_sys"):
    """A Liouvillian S (a QuTiP super Qobj or its matrix, column-stacked) as (H, [(L, rate), ...])
    with S(rho) = -i[H, rho] + sum rate (L rho L^+ - {L^+ L, rho} / 2), by the Gorini-Kossakowski-
    Sudarshan theorem (the rates are the Kossakowski matrix's eigenvalues). A terminator's
    Liouvillian is such a term. Raises ValueError naming `name` where S is not of that form."""
    M = np.asarray(S.full() if hasattr(S, "full") else S, dtype=complex)
    n = int(round(np.sqrt(M.shape[0]))) if M.ndim == 2 else 0
    if M.ndim != 2 or n == 0 or M.shape != (n * n, n * n):
        raise ValueError(f"{name}: a Liouvillian is n^2 x n^2, got shape {M.shape}")
    F = _operator_basis(n)
    # S(rho) = sum_ij a_ij F_i rho F_j^+ over the basis (the maps rho -> F_i rho F_j^+ are orthonormal):
    # with T[p, q, r, c] = S(E_rc)[p, q], a_ij = sum conj(F_i[p, r]) T[p, q, r, c] F_j[q, c].
    T = M.reshape((n, n, n, n), order="F").transpose(0, 2, 1, 3).reshape(n * n, n * n)
    flat = F.reshape(n * n, n * n)
    a = flat.conj() @ T @ flat.T
    a = 0.5 * (a + a.conj().T)  # (Hermitian up to rounding where S keeps rho Hermitian; checked below)
    # S(rho) = a_00 rho / n + K rho + rho K^+ + sum_ij>0 a_ij F_i rho F_j^+ with K = sum_i a_i0 F_i / sqrt(n):
    # K = G - i H gives -i[H, rho], and G the anticommutator that keeping the trace fixes.
    K = np.einsum("i,ipq->pq", a[1:, 0], F[1:]) / np.sqrt(n)
    H = (K.conj().T - K) / 2j
    H = 0.5 * (H + H.conj().T)
    rates, U = np.linalg.eigh(a[1:, 1:])
    scale = max(np.abs(M).max(), 1e-300)
    terms = []
    for k, rate in enumerate(rates):
        if abs(rate) <= 1e-13 * scale:
            continue
        if rate < 0:
            raise ValueError(f"{name}: the Liouvillian has a negative rate ({rate:.3g}): it is not of Lindblad form")
        terms.append((np.einsum("i,ipq->pq", U[:, k], F[1:]), float(rate)))
    # The check: S rebuilt from (H, terms) (vec(A X B) = (B^T (x) A) vec(X)). What is not of the form,
    # such as a map that does not keep the trace, does not come back.
    eye = np.eye(n)
    rebuilt = -1j * (np.kron(eye, H) - np.kron(H.T, eye))
    for L, rate in terms:
        LdL = L.conj().T @ L
        rebuilt += rate * (np.kron(L.conj(), L) - 0.5 * np.kron(eye, LdL) - 0.5 * np.kron(LdL.T, eye))
    if np.abs(rebuilt - M).max() > 1e-10 * scale:
        raise ValueError(f"{name}: the Liouvillian is not -i[H, rho] plus Lindblad terms (it does not keep the "
                         "trace, or does not keep rho Hermitian): heom cannot take it")
    return H, terms


def _system(H_sys):
    """(H, Lindblad terms) of QuTiP's H_sys: a Hamiltonian, or a Liouvillian (such as liouvillian(H)
    plus a bath's terminator)."""
    if isinstance(H_sys, list) or type(H_sys).__name__ == "QobjEvo":
        raise ValueError("H_sys: a time-dependent Hamiltonian (a list or QobjEvo) is not taken by heom's Python "
                         "module; the heom program's [[drive]] tables take drives")
    if getattr(H_sys, "issuper", False):
        return lindblad_form(H_sys)
    return as_array(H_sys, "H_sys"), []


# --- the hierarchy's ADOs as QuTiP names them ------------------------------------------------------

def _exponents_of(bath, max_depth: int) -> list:
    """The exponents of one bath as QuTiP's BathExponent objects: a QuTiP bath's own (in its order,
    which heom keeps), a heom bath's made from its exponents (no tag)."""
    if not isinstance(bath, _heom.Bath):
        return list(bath.exponents)
    BathExponent = _bath_exponent_class()
    Q = _qutip().Qobj(bath.Q)
    listed = bath.exponents
    plus = [k for k, e in enumerate(listed) if e[0] == "+"]
    minus = [k for k, e in enumerate(listed) if e[0] == "-"]
    partner = dict(zip(plus, minus)) | dict(zip(minus, plus))
    out = []
    for k, (kind, ck, vk, ck2, _) in enumerate(listed):
        fermionic = kind in ("+", "-")
        out.append(BathExponent(kind, 2 if fermionic else None, Q, ck, vk, ck2=ck2 if kind == "RI" else None,
                                sigma_bar_k_offset=partner[k] - k if fermionic else None))
    return out


class HierarchyADOs:
    """QuTiP's HierarchyADOs for a heom hierarchy: `labels` (tuples, in heom's order, which is the
    order of its ADO arrays), `exponents` (QuTiP BathExponent objects, in the order of the labels'
    entries), idx, next, prev, exps and filter as QuTiP's."""

    def __init__(self, exponents, max_depth: int, labels):
        self.exponents = list(exponents)
        self.max_depth = int(max_depth)
        self.dims = [exp.dim or (self.max_depth + 1) for exp in self.exponents]
        self.vk = [exp.vk for exp in self.exponents]
        self.ck = [exp.ck for exp in self.exponents]
        self.ck2 = [exp.ck2 for exp in self.exponents]
        self.sigma_bar_k_offset = [exp.sigma_bar_k_offset for exp in self.exponents]
        self.labels = [tuple(int(x) for x in row) for row in labels]
        self._label_idx = {label: i for i, label in enumerate(self.labels)}

    def idx(self, label) -> int:
        """The index of the ADO with this label in `labels` (and in the ADO arrays)."""
        return self._label_idx[tuple(label)]

    def next(self, label, k):
        """The label with one more excitation of exponent k, or None beyond the hierarchy."""
        if sum(label) >= self.max_depth or label[k] >= self.dims[k] - 1:
            return None
        following = tuple(label[:k]) + (label[k] + 1,) + tuple(label[k + 1:])
        return following if following in self._label_idx else None

    def prev(self, label, k):
        """The label with one excitation of exponent k fewer, or None."""
        if label[k] <= 0:
            return None
        return tuple(label[:k]) + (label[k] - 1,) + tuple(label[k + 1:])

    def exps(self, label) -> tuple:
        """One exponent per excitation of the label, in the exponents' order."""
        return sum(((exp,) * n for n, exp in zip(label, self.exponents) if n > 0), ())

    def filter(self, level=None, tags=None, dims=None, types=None) -> list:
        """The labels whose excitations match the patterns, as QuTiP's HierarchyADOs.filter: `tags`,
        `dims`, `types` lists of one entry per excitation (None a wildcard; types by name such as "+"
        or as BathExponent types), `level` the labels' level."""
        BathExponent = _bath_exponent_class()
        if types is not None:
            types = [t if t is None or isinstance(t, BathExponent.types) else BathExponent.types[t] for t in types]
        filters = [(attr, f) for attr, f in (("tag", tags), ("type", types), ("dim", dims)) if f is not None]
        n = max((len(f) for _, f in filters), default=0)
        if any(len(f) != n for _, f in filters):
            raise ValueError("The tags, dims and types filters must all be the same length.")
        if n > self.max_depth:
            raise ValueError(f"The maximum depth for the hierarchy is {self.max_depth} but {n} levels of "
                             "excitation filters were given.")
        if not filters:
            return self.labels[:] if level is None else [label for label in self.labels if sum(label) == level]
        if level is not None and level != n:
            raise ValueError(f"The level parameter is {level} but {n} levels of excitation filters were given.")
        # (QuTiP's rule: exponent j may take as many excitations as the positions it matches.)
        allowed = [0] * len(self.exponents)
        for lvl in range(n):
            level_filters = [(attr, f[lvl]) for attr, f in filters if f[lvl] is not None]
            for j, exp in enumerate(self.exponents):
                if all(getattr(exp, attr) == f for attr, f in level_filters):
                    allowed[j] = min(self.dims[j] - 1, allowed[j] + 1)
        return [label for label in self.labels
                if sum(label) == n and all(x <= limit for x, limit in zip(label, allowed))]


class HierarchyADOsState:
    """Every ADO at one time, as QuTiP's HierarchyADOsState: `rho` (a Qobj), extract(index or
    label) -> Qobj, and the attributes and methods of the HierarchyADOs (labels, exponents, idx,
    filter, exps, ...)."""

    def __init__(self, rho, ados: HierarchyADOs, blocks: np.ndarray):
        self.rho = rho
        self._ados = ados
        self._blocks = blocks  # [num_ados, n, n]: each ADO as a matrix

    @property
    def _ado_state(self) -> np.ndarray:
        """QuTiP's layout of the same numbers: each ADO transposed (column-major)."""
        return self._blocks.transpose(0, 2, 1)

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_ados", "_blocks"):
            raise AttributeError(name)
        return getattr(self._ados, name)

    def extract(self, idx_or_label):
        """The ADO with this index (in `labels`' order) or label, as a Qobj."""
        idx = int(idx_or_label) if isinstance(idx_or_label, (int, np.integer)) else self._ados.idx(idx_or_label)
        return _qutip().Qobj(self._blocks[idx], dims=self.rho.dims)


# --- run's arguments ------------------------------------------------------------------------------

def _e_ops(e_ops):
    """QuTiP's forms of e_ops: None, one operator or callable, a list (or other iterable), or a dict.
    Returns ({key: op}, as_dict)."""
    if e_ops is None:
        return {}, False
    if isinstance(e_ops, dict):
        items = dict(e_ops)
        as_dict = True
    else:
        if hasattr(e_ops, "full") or callable(e_ops) or (isinstance(e_ops, np.ndarray) and e_ops.ndim == 2):
            e_ops = [e_ops]
        try:
            items = dict(enumerate(e_ops))
        except TypeError:
            raise TypeError("e_ops: expected an operator, a callable, or a list or dict of them") from None
        as_dict = False
    for key, op in items.items():
        if not (callable(op) or hasattr(op, "full") or np.asarray(op).ndim == 2):
            raise TypeError(f"e_ops[{key!r}]: expected a Qobj, a matrix or a callable f(t, ado_state), "
                            f"got {type(op).__name__}")
    return items, as_dict


class _QutipBar:
    """A QuTiP progress bar (start(n), update(i), finished()) driven by the run's times: update(i)
    once output time i is passed."""

    def __init__(self, bar, times):
        self.bar, self.times = bar, list(times)
        self.bar.start(len(self.times))

    def __call__(self, t, *_):
        self.bar.update(bisect.bisect_right(self.times, t))

    def close(self):
        self.bar.finished()


def _progress_of(progress_bar):
    """QuTiP's progress_bar: None or False (none), True (heom's own), or a QuTiP progress bar object."""
    if progress_bar is None or progress_bar is False:
        return False
    if progress_bar is True:
        return True
    if all(callable(getattr(progress_bar, m, None)) for m in ("start", "update", "finished")):
        return progress_bar
    raise TypeError("progress_bar: expected None, True, False or a QuTiP progress bar (start, update, finished), "
                    f"got {type(progress_bar).__name__}")


#: qutip.Options fields heom reads (rtol, atol, max_step), and those it has no need for (heom takes
#: as many steps as a run needs, keeps every state, and chooses its own method and order).
_OPTIONS_USED = ("rtol", "atol", "max_step")
_OPTIONS_NOT_NEEDED = ("nsteps", "store_states", "store_final_state", "num_cpus", "openmp_threads", "use_openmp",
                       "normalize_output")


def _solver_options(options) -> dict:
    """heom Solver keywords from QuTiP 4.7's Options (or a dict of its fields): rtol, atol,
    max_step; a field set to what heom cannot honour (an ODE method, an order, a first step, ...)
    warns, naming it."""
    if options is None:
        return {}
    fields = dict(options) if isinstance(options, dict) else dict(vars(options))
    defaults = {}
    try:
        defaults = dict(vars(_qutip().Options()))
    except Exception:  # (QuTiP 5 has no Options: every field not used is reported)
        pass
    out = {key: float(fields[key]) for key in _OPTIONS_USED if key in fields and fields[key] is not None}
    if out.get("max_step") == 0.0:
        del out["max_step"]  # (QuTiP's 0: no limit; heom's default too)
    for key, value in fields.items():
        if key in _OPTIONS_USED or key in _OPTIONS_NOT_NEEDED:
            continue
        if key in defaults and _same(defaults[key], value):
            continue
        warnings.warn(f"options.{key} = {value!r}: heom does not use it (its own integrator and tolerances "
                      "rtol and atol decide the steps)", stacklevel=3)
    return out


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _qutip_result():
    """An empty result of QuTiP's own Result class where it takes no arguments (QuTiP 4.7), else a
    plain object with the same fields."""
    try:
        from qutip.solver import Result as QutipResult

        return QutipResult()
    except Exception:
        return _PlainResult()


class _PlainResult:
    def __init__(self):
        self.solver, self.times, self.states, self.expect = None, None, [], []


class HEOMSolver:
    """QuTiP 4.7's HEOMSolver on heom: HEOMSolver(H_sys, bath, max_depth, options=None,
    progress_bar=None) with run(rho0, tlist, e_ops=None, ado_init=False, ado_return=False) and
    steady_state(), taking the same Qobjs and bath objects (QuTiP's or heom's; a list for several).

    H_sys: the Hamiltonian, or a Liouvillian (such as liouvillian(H) plus a bath's terminator, as
    QuTiP's tutorials build it), read as H and Lindblad terms (lindblad_form). options: QuTiP's
    Options (rtol, atol and max_step are used; a field heom cannot honour warns). Keywords beyond
    QuTiP's (method, devices, ...) go to heom.Solver. `solver` is the heom.Solver that runs, `ados`
    the hierarchy's ADOs as QuTiP's HierarchyADOs."""

    def __init__(self, H_sys, bath, max_depth: int, options=None, progress_bar=None, *, progress=None,
                 **solver_options):
        H, lindblad = _system(H_sys)
        dims = getattr(H_sys, "dims", None)
        self.dims = dims[0] if dims is not None and getattr(H_sys, "issuper", False) else dims
        baths = list(bath) if isinstance(bath, (list, tuple)) else [bath]
        self._progress = _progress_of(progress_bar) if progress is None else bool(progress)
        self._keywords = {**_solver_options(options), **solver_options}
        self._model = Model(H, baths, lindblad=lindblad)
        self.max_depth = int(max_depth)
        self.solver = self._make_solver(False)
        exponents = [exp for b in baths for exp in _exponents_of(b, self.max_depth)]
        self.ados = HierarchyADOs(exponents, self.max_depth, self.solver._core.labels())

    def _make_solver(self, ado_states: bool):
        from . import Solver  # (heom's Solver; this module is imported by heom's __init__)

        return Solver(self._model, self.max_depth, progress=False, ado_states=ado_states, **self._keywords)

    def _rho(self, block):
        return _qutip().Qobj(block, dims=self.dims) if self.dims is not None else _qutip().Qobj(block)

    def _state(self, rho, blocks) -> HierarchyADOsState:
        return HierarchyADOsState(self._rho(rho), self.ados, blocks)

    def _start_blocks(self, rho0) -> np.ndarray:
        """ado_init's rho0 as blocks in heom's order: a HierarchyADOsState (heom's, or QuTiP's of the
        same hierarchy, matched label by label) or an array in QuTiP's layout and `ados.labels`' order."""
        if isinstance(rho0, HierarchyADOsState):
            return rho0._blocks
        if hasattr(rho0, "_ado_state") and hasattr(rho0, "labels"):
            theirs = np.asarray(rho0._ado_state).transpose(0, 2, 1)
            index = {tuple(label): i for i, label in enumerate(rho0.labels)}
            if set(index) != set(self.ados.labels):
                raise ValueError("rho0: a HierarchyADOsState of another hierarchy (its labels differ from ados.labels)")
            return theirs[[index[label] for label in self.ados.labels]]
        blocks = np.asarray(rho0, dtype=np.complex128)
        shape = (len(self.ados.labels),) + self.solver.models[0].H.shape
        if blocks.shape != shape:
            raise ValueError(f"rho0: ADOs passed with ado_init have shape {blocks.shape}, the hierarchy's is {shape}")
        return blocks.transpose(0, 2, 1)

    def run(self, rho0, tlist, e_ops=None, ado_init: bool = False, ado_return: bool = False):
        """rho(t) at each time of tlist from rho0 (a Qobj; with ado_init, every ADO: a
        HierarchyADOsState or an array as QuTiP takes it). e_ops: an operator, a callable f(t,
        ado_state), or a list or dict of them; result.expect is then a list (a dict) of arrays.
        ado_return: result.ado_states holds every ADO at each time (HierarchyADOsState)."""
        ops, as_dict = _e_ops(e_ops)
        callables = any(callable(op) and not hasattr(op, "full") for op in ops.values())
        keeps_ados = bool(ado_return) or callables
        if keeps_ados != self.solver.keeps_ado_states:
            self.solver = None  # (its memory goes before the other is made)
            self.solver = self._make_solver(keeps_ados)
        times = np.asarray(tlist, dtype=float)
        progress = self._progress
        if progress not in (True, False):
            progress = _QutipBar(progress, times)  # (the run closes it)
        if ado_init:
            self.solver.set_ados(self._start_blocks(rho0), float(times[0]))
            r = self.solver.run(None, times, progress=progress)
        else:
            r = self.solver.run(rho0, times, progress=progress)
        states = [self._rho(rho) for rho in r.states]
        ado_states = [self._state(rho, a.ados) for rho, a in zip(r.states, r.ado_states)] if keeps_ados else None
        values = {}
        for key, op in ops.items():
            if hasattr(op, "full") or not callable(op):
                values[key] = expect(op, r.states)
            else:
                values[key] = np.array([op(t, s) for t, s in zip(r.times, ado_states)])
        result = _qutip_result()
        result.solver = "HEOMSolver (heom)"
        result.times = list(times)
        result.states = states
        result.expect = values if as_dict else [values[k] for k in range(len(values))]
        result.num_expect = len(values)
        if ado_return:
            result.ado_states = ado_states
        result.stats = dict(r.statistics)
        result.heom_result = r
        return result

    def steady_state(self, use_mkl: bool = True, mkl_max_iter_refine: int = 100, mkl_weighted_matching: bool = False,
                     **options):
        """(steady_state, steady_ados) as QuTiP's: rho as a Qobj and every ADO (HierarchyADOsState).
        heom solves by preconditioned GMRES to `tolerance` (heom.Solver.steady_state's keywords); the
        MKL arguments choose QuTiP's direct solver and change nothing here."""
        rho, _ = self.solver.steady_state(**options)
        return self._rho(rho), self._state(rho, self.solver.ados().ados)
