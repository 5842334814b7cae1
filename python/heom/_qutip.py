"""QuTiP's HEOMSolver interface on heom, as QuTiP 5 and QuTiP 4.7 define it (whichever is
installed): the constructor and run/steady_state arguments QuTiP takes, baths and environments,
e_ops in each form QuTiP accepts, results of QuTiP's own result class, and ADO states with QuTiP's
extract, filter, exps and labels."""
from __future__ import annotations

import bisect
import inspect
import warnings

import numpy as np

from . import _heom
from ._baths import Model, as_array
from ._results import expect


def _qutip():
    import qutip  # (this interface is for QuTiP users: QuTiP is there)

    return qutip


def _qutip5() -> bool:
    """Whether the QuTiP installed is QuTiP 5 (else 4.7)."""
    return int(_qutip().__version__.split(".")[0]) >= 5


def _bath_exponent_class():
    if _qutip5():
        from qutip.solver.heom import BathExponent
    else:
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


def _system(H_sys, args=None):
    """(H, Lindblad terms, drives) of QuTiP's H_sys: a Hamiltonian, or a Liouvillian (such as
    liouvillian(H) plus a bath's terminator), constant or with time-dependent Hamiltonian terms (a
    list [H0, [H1, f1], ...] or a QobjEvo; QuTiP evaluates each f(t) for heom)."""
    if isinstance(H_sys, list) or type(H_sys).__name__ == "QobjEvo":
        constant, terms = _time_dependent_terms(H_sys, args)
    else:
        constant, terms = H_sys, []
    drives = []
    for k, (op, f) in enumerate(terms):
        if getattr(op, "issuper", False):  # (a Hamiltonian term's Liouvillian, -i[H_k, rho], is taken)
            op, dissipators = lindblad_form(op, f"H_sys term {k}")
            if dissipators:
                raise ValueError(f"H_sys: time-dependent term {k} is a dissipator; heom's time-dependent terms are "
                                 "Hamiltonian (Hermitian operators with real coefficients)")
        drives.append((as_array(op, f"H_sys term {k}"), _heom.DriveShape.function(f, f"H_sys term {k}")))
    if constant is None:
        constant = np.zeros_like(drives[0][0])
    if getattr(constant, "issuper", False):
        H, lindblad = lindblad_form(constant)
    else:
        H, lindblad = as_array(constant, "H_sys"), []
    return H, lindblad, drives


def _dims_of(H_sys):
    """rho's dims for QuTiP's H_sys (a Hamiltonian's, a Liouvillian's first half), or None."""
    first = H_sys[0] if isinstance(H_sys, list) and H_sys else H_sys
    if isinstance(first, list):  # (a list that starts with a time-dependent term)
        first = first[0]
    if not hasattr(first, "dims") and hasattr(first, "cte"):  # (QuTiP 4.7's QobjEvo: its constant part's)
        first = first.cte
    dims = getattr(first, "dims", None)
    return dims[0] if dims is not None and getattr(first, "issuper", False) else dims


def _coefficient47(element, args):
    """f(t) of a QuTiP 4.7 QobjEvo term: a function as QuTiP 4.7's HEOMSolver calls it, f(t) (or
    f(t, args), the other solvers' form, where it takes two arguments); a string or array as the
    QobjEvo evaluates it."""
    f = element.coeff
    if not callable(f):
        return lambda t: element.get_coeff(t, args)
    try:
        required = [p for p in inspect.signature(f).parameters.values()
                    if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        required = [None]
    return f if len(required) <= 1 else (lambda t: f(t, args))


def _time_dependent_terms(H_sys, args):
    """(the constant part or None, [(op, f)]) of a time-dependent H_sys, f(t) QuTiP's own evaluation
    of each term's coefficient (a function, a string, an array with its times)."""
    qutip = _qutip()
    try:
        evo = H_sys if isinstance(H_sys, qutip.QobjEvo) and not args else qutip.QobjEvo(H_sys, args=args or {})
    except Exception as e:
        raise ValueError(f"H_sys: QuTiP cannot read it as a time-dependent operator ({e})") from None
    if not _qutip5():
        return evo.cte, [(e.qobj, _coefficient47(e, evo.args)) for e in evo.ops]
    constant, terms = None, []
    for term in evo.to_list():
        if isinstance(term, qutip.Qobj):
            constant = term if constant is None else constant + term
        else:
            op, coefficient = term
            terms.append((op, lambda t, c=coefficient: c(t)))
    return constant, terms


# --- baths: heom's, QuTiP's bath objects, and QuTiP 5's (environment, Q) pairs ----------------------

def _is_environment_pair(spec) -> bool:
    if not isinstance(spec, (list, tuple)) or len(spec) < 2 or not hasattr(spec[1], "full"):
        return False
    return type(spec[0]).__module__.startswith("qutip.core.environment")


def _as_bath(spec, where: str):
    """One bath of HEOMSolver's `bath`: a heom Bath or a QuTiP bath object as it is, an (env, Q)
    pair (QuTiP 5: env an exponential environment, such as env.approximate(...)) as QuTiP's bath."""
    if isinstance(spec, _heom.Bath) or (hasattr(spec, "exponents") and not _is_environment_pair(spec)
                                        and not type(spec).__module__.startswith("qutip.core.environment")):
        return spec
    if not _is_environment_pair(spec):
        raise ValueError(f"{where}: expected a bath (heom's or QuTiP's) or an (environment, Q) pair, "
                         f"got {type(spec).__name__}")
    env, Q, *dim = spec
    from qutip.core.environment import ExponentialBosonicEnvironment, ExponentialFermionicEnvironment
    from qutip.solver.heom import BosonicBath, FermionicBath

    if isinstance(env, ExponentialBosonicEnvironment):
        return BosonicBath.from_environment(env, Q, *dim)
    if isinstance(env, ExponentialFermionicEnvironment):
        return FermionicBath.from_environment(env, Q, *dim)
    raise ValueError(f"{where}: {type(env).__name__} is not a sum of exponentials: give "
                     "env.approximate(\"matsubara\" | \"pade\" | \"aaa\" | ..., ...) instead")


def _baths(bath) -> list:
    """HEOMSolver's `bath` (one, or a list) as a list of heom or QuTiP bath objects."""
    if isinstance(bath, (list, tuple)) and not _is_environment_pair(bath):
        return [_as_bath(b, f"bath[{i}]") for i, b in enumerate(bath)]
    return [_as_bath(bath, "bath")]


# --- the hierarchy's ADOs as QuTiP names them ------------------------------------------------------

def _exponents_of(bath, dims) -> list:
    """The exponents of one bath as QuTiP's BathExponent objects: a QuTiP bath's own (in its order,
    which heom keeps), a heom bath's made from its exponents (no tag; Q with the system's `dims`)."""
    if not isinstance(bath, _heom.Bath):
        return list(bath.exponents)
    BathExponent = _bath_exponent_class()
    Q = _qobj(bath.Q, dims)
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


def _qobj(matrix, dims):
    return _qutip().Qobj(matrix, dims=dims) if dims is not None else _qutip().Qobj(matrix)


class HierarchyADOsState:
    """Every ADO at one time, as QuTiP's HierarchyADOsState: `rho` (a Qobj), extract(index or
    label) -> Qobj, and the attributes and methods of the HierarchyADOs (labels, exponents, idx,
    filter, exps, ...)."""

    def __init__(self, rho, ados: HierarchyADOs, blocks: np.ndarray, dims=None):
        self._rho = rho  # a Qobj, or a matrix made one (with `dims`) when first read
        self._dims = dims
        self._ados = ados
        self._blocks = blocks  # [num_ados, n, n]: each ADO as a matrix (None: rho alone was kept)

    @property
    def rho(self):
        """rho as a Qobj (made when first read: a run's thousand Qobjs cost more than a short run)."""
        if not hasattr(self._rho, "full"):
            self._rho = _qobj(self._rho, self._dims)
        return self._rho

    @property
    def _ado_state(self) -> np.ndarray:
        """QuTiP's layout of the same numbers: each ADO transposed (column-major)."""
        return None if self._blocks is None else self._blocks.transpose(0, 2, 1)

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_ados", "_blocks", "_rho", "_dims"):
            raise AttributeError(name)
        return getattr(self._ados, name)

    def extract(self, idx_or_label):
        """The ADO with this index (in `labels`' order) or label, as a Qobj."""
        if self._blocks is None:
            raise ValueError("extract: this state holds rho alone (run with ado_return=True, or QuTiP 5's "
                             "options[\"store_ados\"], to keep every ADO)")
        idx = int(idx_or_label) if isinstance(idx_or_label, (int, np.integer)) else self._ados.idx(idx_or_label)
        return _qobj(self._blocks[idx], self._dims if self._dims is not None else self.rho.dims)


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
    """A QuTiP progress bar driven by the run's times as they pass: QuTiP 4.7's bar objects
    (start(n), update(i), finished()) or QuTiP 5's bar classes (made with the number of intervals,
    update() once per interval, finished())."""

    def __init__(self, bar, times, kwargs=None):
        self.times = list(times)
        self.counts = isinstance(bar, type)
        if self.counts:
            self.bar = bar(len(self.times) - 1, **(kwargs or {}))
            self.passed = 1  # (QuTiP 5 counts the intervals after the first time)
        else:
            self.bar = bar
            self.bar.start(len(self.times))
            self.passed = 0  # (QuTiP 4.7 updates with each time's index)

    def __call__(self, t, *_):
        """The run reached t: one update for each output time passed since the last call."""
        reached = bisect.bisect_right(self.times, t)
        for index in range(self.passed, reached):
            self.bar.update() if self.counts else self.bar.update(index)
        self.passed = max(self.passed, reached)

    def close(self):
        self(self.times[-1])
        self.bar.finished()


def _progress_of(progress_bar):
    """QuTiP's progress_bar: None, False or "" (none), True (heom's own), a QuTiP 5 bar's name
    ("text", "enhanced", "tqdm", "html": its class), or a QuTiP 4.7 progress bar object."""
    if progress_bar is None or progress_bar is False or progress_bar == "":
        return False
    if progress_bar is True:
        return True
    if isinstance(progress_bar, str) and _qutip5():
        from qutip.ui.progressbar import progress_bars

        if progress_bar not in progress_bars:
            raise ValueError(f"progress_bar: unknown bar \"{progress_bar}\" (QuTiP 5's are "
                             f"{', '.join(repr(k) for k in progress_bars if k)})")
        return progress_bars[progress_bar]
    if all(callable(getattr(progress_bar, m, None)) for m in ("start", "update", "finished")):
        return progress_bar
    raise TypeError("progress_bar: expected None, True, False, a QuTiP 5 bar's name or a QuTiP progress bar "
                    f"(start, update, finished), got {type(progress_bar).__name__}")


#: QuTiP's options that heom reads (rtol, atol, max_step), those that decide what a result keeps or
#: how progress shows (QuTiP 5), and those heom has no need for (it takes as many steps as a run
#: needs, keeps every state, and does not renormalize).
_OPTIONS_USED = ("rtol", "atol", "max_step")
_OPTIONS_OF_RESULTS = ("store_states", "store_final_state", "store_ados", "progress_bar", "progress_kwargs")
_OPTIONS_NOT_NEEDED = ("nsteps", "num_cpus", "openmp_threads", "use_openmp", "normalize_output", "state_data_type")
#: QuTiP 5's HEOMSolver defaults of the options (its solver_options, and the integrator's).
_QUTIP5_DEFAULTS = {"progress_bar": "text", "progress_kwargs": {"chunk_size": 10}, "store_final_state": False,
                    "store_states": None, "normalize_output": False, "method": "adams", "store_ados": False,
                    "state_data_type": "dense", "order": 12, "first_step": 0, "min_step": 0}


def _solver_options(options) -> tuple:
    """(heom Solver keywords, QuTiP's result options) from QuTiP 4.7's Options or QuTiP 5's dict:
    rtol, atol and max_step are used; a field set to what heom cannot honour (an ODE method, an
    order, a first step, ...) warns, naming it."""
    fields = {} if options is None else dict(options) if isinstance(options, dict) else dict(vars(options))
    defaults = dict(_QUTIP5_DEFAULTS)
    if not _qutip5():  # (QuTiP 4.7 shows no progress by default and keeps ADOs only when asked to)
        defaults.update(vars(_qutip().Options()), progress_bar=None, progress_kwargs=None)
    results = {key: fields.get(key, defaults.get(key)) for key in _OPTIONS_OF_RESULTS}
    used = {key: float(fields[key]) for key in _OPTIONS_USED if fields.get(key) is not None}
    if used.get("max_step") == 0.0:
        del used["max_step"]  # (QuTiP's 0: no limit; heom's default too)
    for key, value in fields.items():
        if key in _OPTIONS_USED or key in _OPTIONS_OF_RESULTS or key in _OPTIONS_NOT_NEEDED:
            continue
        if key in defaults and _same(defaults[key], value):
            continue
        warnings.warn(f"options[{key!r}] = {value!r}: heom does not use it (its own integrator and tolerances "
                      "rtol and atol decide the steps)", stacklevel=3)
    return used, results


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return a is b


def _result47(times, rhos, states, ops, as_dict, keep_ados, keep_states):
    """QuTiP 4.7's Result of a run: `rhos` its rho(t), `states` its HierarchyADOsStates."""
    from qutip.solver import Result as QutipResult

    result = QutipResult()
    values = {}
    for key, op in ops.items():
        if hasattr(op, "full") or not callable(op):
            values[key] = expect(op, rhos)
        else:
            values[key] = np.array([op(t, s) for t, s in zip(times, states)])
    result.solver = "HEOMSolver (heom)"
    result.times = list(times)
    result.states = [s.rho for s in states] if keep_states else []  # (QuTiP's rule: Options.store_states)
    result.expect = values if as_dict else [values[k] for k in range(len(values))]
    result.num_expect = len(values)
    if keep_ados:
        result.ado_states = states
    return result


class HEOMSolver:
    """QuTiP's HEOMSolver on heom, as the QuTiP installed defines it:
    QuTiP 5: HEOMSolver(H, bath, max_depth, *, odd_parity=False, options=None) with
    run(state0, tlist, *, args=None, e_ops=None), start/step and steady_state;
    QuTiP 4.7: HEOMSolver(H_sys, bath, max_depth, options=None, progress_bar=None) with
    run(rho0, tlist, e_ops=None, ado_init=False, ado_return=False) and steady_state.

    H_sys: the Hamiltonian, or a Liouvillian (such as liouvillian(H) plus a bath's terminator, as
    QuTiP's tutorials build it), read as H and Lindblad terms (lindblad_form). bath: one or a list of
    heom's baths, QuTiP's bath objects, or QuTiP 5's (environment, Q) pairs. options: QuTiP 5's dict
    or QuTiP 4.7's Options (rtol, atol and max_step are used, the result options honoured; a field
    heom cannot honour warns). Keywords beyond QuTiP's (method, devices, ...) go to heom.Solver.
    `solver` is the heom.Solver that runs, `ados` the hierarchy's ADOs as QuTiP's HierarchyADOs."""

    def __init__(self, H_sys, bath, max_depth: int, options=None, progress_bar=None, *, odd_parity: bool = False,
                 progress=None, **solver_options):
        if odd_parity:
            raise ValueError("odd_parity: heom's HEOMSolver runs the even hierarchy; heom.Solver's "
                             "anticommutator_correlation and density_of_states run the odd one")
        H, lindblad, drives = _system(H_sys)
        dims = _dims_of(H_sys)
        self.dims = dims
        baths = _baths(bath)
        self._progress_argument, self._heom_keywords = progress, dict(solver_options)
        self._keywords = None
        self.options = options
        if progress_bar is not None:  # (QuTiP 4.7's argument; QuTiP 5's is an option)
            self._options["progress_bar"] = progress_bar
        self._model = Model(H, baths, lindblad=lindblad, drives=drives)
        self.max_depth = int(max_depth)
        self._read_options()
        exponents = [exp for b in baths for exp in _exponents_of(b, self.dims)]
        self.ados = HierarchyADOs(exponents, self.max_depth, self.solver._core.labels())
        self._t = None  # (where step() goes on from)

    @property
    def options(self) -> dict:
        """The options as given (QuTiP 5's dict; QuTiP 4.7's Options as a dict of its fields). Changed
        in place or replaced, they are read again at the next run."""
        return self._options

    @options.setter
    def options(self, options) -> None:
        self._options = {} if options is None else dict(options) if isinstance(options, dict) else dict(vars(options))
        self._read = None

    def _read_options(self) -> None:
        """The options read (again, where they changed): a new heom solver where its keywords did."""
        if self._read == self._options:
            return
        used, self._result_options = _solver_options(self._options)
        bar = self._result_options["progress_bar"]
        self._progress = bool(self._progress_argument) if self._progress_argument is not None else _progress_of(bar)
        keywords = {**used, **self._heom_keywords}
        if keywords != self._keywords:
            self._keywords = keywords
            self.solver = None  # (its memory goes before the other is made)
            self.solver = self._make_solver(False)
        self._read = dict(self._options)

    def _make_solver(self, ado_states: bool):
        from . import Solver  # (heom's Solver; this module is imported by heom's __init__)

        return Solver(self._model, self.max_depth, progress=False, ado_states=ado_states, **self._keywords)

    def _state(self, rho, blocks) -> HierarchyADOsState:
        return HierarchyADOsState(rho, self.ados, blocks, self.dims)

    @staticmethod
    def _is_rho(rho0) -> bool:
        return hasattr(rho0, "full") or np.asarray(rho0).ndim == 2

    def _start_blocks(self, rho0) -> np.ndarray:
        """Every ADO of a start, as blocks in heom's order: a HierarchyADOsState (heom's, or QuTiP's of
        the same hierarchy, matched label by label) or an array in QuTiP's layout and `ados.labels`' order."""
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

    def _run(self, rho0, times, keep_ados: bool, ado_init: bool, show: bool = True):
        """heom's run from rho0 (or every ADO) through `times`, and its states as HierarchyADOsStates
        (every ADO where kept, else rho alone); `show`: with the progress bar asked for."""
        if keep_ados != self.solver.keeps_ado_states:
            self.solver = None  # (its memory goes before the other is made)
            self.solver = self._make_solver(keep_ados)
        progress = self._progress if show else False
        if progress not in (True, False):
            progress = _QutipBar(progress, times, self._result_options.get("progress_kwargs"))  # (the run closes it)
        if ado_init:
            self.solver.set_ados(self._start_blocks(rho0), float(times[0]))
            r = self.solver.run(None, times, progress=progress)
        else:
            r = self.solver.run(rho0, times, progress=progress)
        blocks = [a.ados for a in r.ado_states] if keep_ados else [None] * len(r.states)
        return r, [self._state(rho, b) for rho, b in zip(r.states, blocks)]

    def run(self, rho0, tlist, e_ops=None, ado_init: bool = False, ado_return: bool = False, *, args=None):
        """rho(t) at each time of tlist from rho0: a density matrix, or every ADO (QuTiP 5: any
        state that is not a Qobj; QuTiP 4.7: with ado_init) as a HierarchyADOsState or an array as
        QuTiP takes it. e_ops: an operator, a callable f(t, ado_state), or a list or dict of them.
        ado_return (QuTiP 5: options["store_ados"]): result.ado_states holds every ADO at each time."""
        if args is not None:
            raise ValueError("args: give them with H_sys when making the solver (HEOMSolver(QobjEvo(H, args=args), "
                             "...)): heom reads the time-dependent terms once")
        self._read_options()
        ops, as_dict = _e_ops(e_ops)
        callables = any(callable(op) and not hasattr(op, "full") for op in ops.values())
        store_ados = bool(ado_return) or bool(self._result_options.get("store_ados"))
        ado_init = bool(ado_init) or not self._is_rho(rho0)
        times = np.asarray(tlist, dtype=float)
        r, states = self._run(rho0, times, store_ados or callables, ado_init)
        if not _qutip5():
            keep_states = not ops or bool(self._result_options.get("store_states"))
            result = _result47(r.times, r.states, states, ops, as_dict, store_ados, keep_states)
        else:
            from qutip.solver.heom import HEOMResult

            options = {**_QUTIP5_DEFAULTS, **self._result_options, "store_ados": store_ados}
            result = HEOMResult(e_ops, options, solver="HEOMSolver (heom)", stats=self._stats(r))
            for t, state in zip(times, states):
                result.add(float(t), state)
        if not _qutip5():
            result.stats = self._stats(r)
        result.heom_result = r
        self._t = float(times[-1])
        return result

    def _stats(self, r) -> dict:
        """QuTiP's statistics of a run (the solver, the method, max_depth, run time) with heom's counts
        (steps, rejected, evaluations, wall_time)."""
        return {"solver": "Hierarchical Equations of Motion Solver (heom)",
                "method": self._keywords.get("method", "automatic"), "max_depth": self.max_depth,
                "run time": r.statistics["wall_time"], **r.statistics}

    def start(self, state0, t0: float) -> None:
        """QuTiP 5's start: the state (rho, or every ADO) at t0, from which step() goes on."""
        times = np.array([float(t0)])
        self._run(state0, times, False, not self._is_rho(state0), show=False)
        self._t = float(t0)

    def step(self, t: float, *, args=None, copy: bool = True) -> HierarchyADOsState:
        """QuTiP 5's step: every ADO at t (after the last start, step or run), as a HierarchyADOsState.
        (`copy` changes nothing: the state is always a copy.)"""
        if args is not None:
            raise ValueError("args: give them with H_sys when making the solver: heom reads the time-dependent "
                             "terms once")
        if self._t is None:
            raise RuntimeError("step: call start(state0, t0) first")
        self.solver.run(None, [self._t, float(t)], progress=False)
        self._t = float(t)
        blocks = self.solver.ados().ados
        return self._state(blocks[0], blocks)

    def steady_state(self, use_mkl: bool = True, mkl_max_iter_refine: int = 100, mkl_weighted_matching: bool = False,
                     **options):
        """(steady_state, steady_ados) as QuTiP's: rho as a Qobj and every ADO (HierarchyADOsState).
        heom solves by preconditioned GMRES to `tolerance` (heom.Solver.steady_state's keywords); the
        MKL arguments choose QuTiP's direct solver and change nothing here."""
        rho, _ = self.solver.steady_state(**options)
        state = self._state(rho, self.solver.ados().ados)
        return state.rho, state


def heomsolve(H, bath, max_depth: int, state0, tlist, *, e_ops=None, args=None, options=None, **solver_options):
    """QuTiP 5's heomsolve on heom: HEOMSolver(H, bath, max_depth, options=options).run(state0, tlist,
    e_ops=e_ops)."""
    if isinstance(H, list) or args is not None:  # (as QuTiP's: an array coefficient's times are tlist)
        H = _qutip().QobjEvo(H, args=args or {}, tlist=np.asarray(tlist, dtype=float))
    return HEOMSolver(H, bath, max_depth, options=options, **solver_options).run(state0, tlist, e_ops=e_ops)


class HSolverDL(HEOMSolver):
    """QuTiP's HSolverDL on heom: a HEOMSolver for one Drude-Lorentz bath (QuTiP's DrudeLorentzBath
    with N_exp - 1 Matsubara terms), its terminator added to the Liouvillian with bnd_cut_approx."""

    def __init__(self, H_sys, coup_op, coup_strength, temperature, N_cut, N_exp, cut_freq, bnd_cut_approx=False,
                 options=None, progress_bar=None, combine=True, **solver_options):
        if _qutip5():
            from qutip.solver.heom import DrudeLorentzBath
        else:
            from qutip.nonmarkov.bofin_baths import DrudeLorentzBath
        qutip = _qutip()
        bath = DrudeLorentzBath(Q=coup_op, lam=coup_strength, gamma=cut_freq, Nk=N_exp - 1, T=temperature,
                                combine=combine)
        if bnd_cut_approx:
            H_sys = qutip.QobjEvo(H_sys) if isinstance(H_sys, list) else H_sys
            if not getattr(H_sys, "issuper", False):
                H_sys = qutip.liouvillian(H_sys)
            H_sys = H_sys + bath.terminator()[1]
        super().__init__(H_sys, bath, N_cut, options=options, progress_bar=progress_bar, **solver_options)
        self.coup_strength, self.cut_freq, self.temperature = coup_strength, cut_freq, temperature
        self.N_exp, self.bnd_cut_approx = N_exp, bnd_cut_approx
