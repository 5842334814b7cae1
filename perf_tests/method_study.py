#!/usr/bin/python3
"""Which time-stepping method needs the fewest generator evaluations for HEOM, at a given accuracy.

The study that chose heom's default integrator (exp-adams). For an input file it builds QuTiP 4.7's
HEOM right-hand side (a sparse matrix L), splits off each ADO's damping D = -sum_k n_k v_k (a scalar
per ADO: L = D + N), and runs fixed-step methods over the input's output times, printing for each
method and step the number of evaluations of L (or N) and max |rho - rho_exact| over the output
times, rho_exact from scipy's expm_multiply. Fixed steps show both what accuracy costs and where a
method's stability ends (error "unstable").

    /usr/bin/python3 perf_tests/method_study.py perf_tests/inputs/spin_boson_deep.toml \\
        --steps-per-output 4 8 16 32 [--methods dopri5 exp-adams5 ...] [--eigenbasis | --system-diagonal]
        [--json out.json]

Methods: rk4, dopri5 and dop853 (the explicit Runge-Kutta methods, 5th and 8th order solutions);
lawson-dopri5 (integrating factor: dopri5 on e^{-tD} y); exprk4 (Hochbruck-Ostermann's stiffly
accurate exponential Runge-Kutta method of order 4); exp-adams<k> (exponential Adams-Bashforth with
k past values of N: heom's exp-adams at its top order k = 5); exp-pece<k> (the same predictor with an
exponential Adams-Moulton corrector, two evaluations per step); exp-pec<k> (the same corrector, one
evaluation per step: the history keeps N at the predicted values); krylov<m> (Arnoldi with m vectors
per step and the small exponential exact: a Krylov exponential of the time-independent generator,
m + 1 full vectors of memory). A fractional steps-per-output (0.5) takes one step per two output
intervals.
"""

import argparse
import json
import os
import sys
import time
import tomllib
from math import factorial

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_qutip import output_times, qutip_model  # noqa: E402


def build(path, eigenbasis=False, system_diagonal=False, exact_cache=None):
    """(L as CSR, D per element, y0, output times, n^2, back, exact) for an input file: back maps
    rho's vector (column-major) in the basis used to the input's basis, and exact is rho at the output
    times in the input's basis (expm_multiply on the input's L, the sparser one).

    eigenbasis: every ADO in the eigenbasis of H, and D also holds H's part, -i (E_m - E_n) on
    element (m, n): the exponential methods then treat the system's own oscillation exactly too.
    system_diagonal: in the input's basis, D also holds -i (H_mm - H_nn) on element (m, n) (heom's
    exp-adams where rates are complex).
    exact_cache: a file that holds the exact solution of this input (read when it is there and of this
    input, written when not): expm_multiply takes minutes at FMO depth 5."""
    import qutip
    import scipy.sparse as sp
    from qutip import liouvillian
    from qutip.nonmarkov.bofin_solvers import HEOMSolver
    from scipy.sparse.linalg import expm_multiply
    cfg = tomllib.load(open(path, "rb"))
    H, baths, terminators, rho0 = qutip_model(cfg)
    L = liouvillian(H)
    for term in terminators:
        L = L + term
    solver = HEOMSolver(L, baths, cfg["hierarchy"]["depth"], options=qutip.Options(nsteps=10**8))
    n2 = L.shape[0]
    vk = np.array(solver.ados.vk)
    damping = np.array([-sum(n * v for n, v in zip(label, vk)) for label in solver.ados.labels])
    y0 = np.zeros(solver.RHSmat.shape[0], complex)
    y0[:n2] = rho0.full().ravel(order="F")
    L, D, times = solver.RHSmat.tocsr(), np.repeat(damping, n2), output_times(cfg)
    start = time.perf_counter()
    # (A cache holds the input's path and text beside the solution: another input's is not read.)
    key = np.frombuffer((os.path.abspath(path) + "\n" + open(path).read()).encode(), dtype=np.uint8)
    cached = np.load(exact_cache) if exact_cache and os.path.exists(exact_cache) else None
    if cached is not None and np.array_equal(cached["key"], key) and cached["exact"].shape == (len(times), n2):
        exact = cached["exact"]
    else:
        exact = expm_multiply(L, y0, start=times[0], stop=times[-1], num=len(times), endpoint=True)[:, :n2]
        if exact_cache:
            with open(exact_cache, "wb") as f:
                np.savez(f, key=key, exact=exact)
    print(f"{path}: {L.shape[0] // n2} ADOs, {L.nnz} non-zeros; exact solution (computed or read) in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    if system_diagonal:
        h = np.real(np.diag(H.full()))
        n = len(h)
        rows, cols = np.tile(np.arange(n), n), np.repeat(np.arange(n), n)
        D = D + np.tile(-1j * (h[rows] - h[cols]), L.shape[0] // n2)
    if not eigenbasis:
        return L, D, y0, times, n2, np.identity(n2), exact
    E, U = np.linalg.eigh(H.full())
    n, ados = U.shape[0], L.shape[0] // n2
    to_eigen = np.kron(U.T, U.conj().T)  # vec(U^dagger rho U) for column-major vec
    back = np.kron(U.conj(), U)
    T = sp.kron(sp.identity(ados), sp.csr_matrix(to_eigen)).tocsr()
    L = (T @ L @ sp.kron(sp.identity(ados), sp.csr_matrix(back))).tocsr()
    rows, cols = np.tile(np.arange(n), n), np.repeat(np.arange(n), n)
    D = D + np.tile(-1j * (E[rows] - E[cols]), ados)
    return L, D, T @ y0, times, n2, back, exact


def phis(z, count):
    """[phi_0(z), ..., phi_count(z)] elementwise, phi_k(z) = sum_j z^j / (j + k)!."""
    out = [np.exp(z)]
    small = np.abs(z) < 2.0
    zs = np.where(small, 1.0, z)
    for k in range(1, count + 1):
        recurrence = (out[-1] - 1.0 / factorial(k - 1)) / zs
        series, term = np.zeros_like(z), np.full_like(z, 1.0 / factorial(k))
        for j in range(30):
            series, term = series + term, term * z / (j + k + 1)
        out.append(np.where(small, series, recurrence))
    return out


class Problem:
    def __init__(self, L, D):
        self.L, self.D, self.evaluations = L, D, 0

    def f(self, y):
        self.evaluations += 1
        return self.L @ y

    def N(self, y):
        self.evaluations += 1
        return self.L @ y - self.D * y


def explicit_rk(A, b):
    def step(P, y, h, memo):
        k = []
        for i in range(len(b)):
            yi = y + h * sum(A[i][j] * k[j] for j in range(i) if A[i][j] != 0) if i else y
            k.append(P.f(yi))
        return y + h * sum(bi * ki for bi, ki in zip(b, k) if bi != 0)
    return step


def lawson(A, b, c):
    def step(P, y, h, memo):
        E = lambda s: np.exp(s * h * P.D)  # noqa: E731
        k = []
        for i in range(len(b)):
            yi = E(c[i]) * y + h * sum(A[i][j] * E(c[i] - c[j]) * k[j] for j in range(i) if A[i][j] != 0)
            k.append(P.N(yi))
        return E(1) * y + h * sum(bi * E(1 - ci) * ki for bi, ci, ki in zip(b, c, k) if bi != 0)
    return step


def exprk4(P, y, h, memo):
    """Hochbruck & Ostermann, SIAM J. Numer. Anal. 43, 1069 (2005), the five-stage method of order 4."""
    if memo.get("h") != h:
        memo.update(h=h, full=phis(h * P.D, 3), half=phis(0.5 * h * P.D, 3))
    e, p1, p2, p3 = memo["full"]
    eh, q1, q2, q3 = memo["half"]
    N1 = P.N(y)
    N2 = P.N(eh * y + h * 0.5 * q1 * N1)
    N3 = P.N(eh * y + h * ((0.5 * q1 - q2) * N1 + q2 * N2))
    N4 = P.N(e * y + h * ((p1 - 2 * p2) * N1 + p2 * (N2 + N3)))
    a52 = 0.5 * q2 - p3 + 0.25 * p2 - 0.5 * q3
    a54 = 0.25 * q2 - a52
    N5 = P.N(eh * y + h * ((0.5 * q1 - 2 * a52 - a54) * N1 + a52 * (N2 + N3) + a54 * N4))
    return e * y + h * ((p1 - 3 * p2 + 4 * p3) * N1 + (-p2 + 4 * p3) * N4 + (4 * p2 - 8 * p3) * N5)


def exp_weights(nodes, phi):
    """Weights of int_0^1 e^{(1-u)z} p(u) du for p interpolating at `nodes` (in steps)."""
    k = len(nodes)
    lagrange = np.linalg.inv(np.vander(np.asarray(nodes, float), k, increasing=True)).T
    return [sum(lagrange[j, m] * factorial(m) * phi[m + 1] for m in range(k)) for j in range(k)]


def exp_adams(k, corrector=False, evaluate_corrected=True):
    """Constant-step exponential Adams-Bashforth with k past values (PECE with the corrector; PEC,
    one evaluation per step, where the history keeps N at the predicted value instead)."""
    def step(P, y, h, memo):
        if memo.get("h") != h:
            phi = phis(h * P.D, k + 1)
            memo.update(h=h, e=phi[0], predictor=exp_weights(-np.arange(k), phi),
                        corrector=exp_weights(np.r_[1, -np.arange(k)], phi))
        history = memo.setdefault("history", [])
        if not history:
            history.append(P.N(y))
        if len(history) < k:  # start-up: exprk4 steps
            y1 = exprk4(P, y, h, memo.setdefault("start", {}))
            history.insert(0, P.N(y1))
            return y1
        y1 = memo["e"] * y + h * sum(w * Nj for w, Nj in zip(memo["predictor"], history))
        if corrector:
            N1 = P.N(y1)
            y1 = memo["e"] * y + h * (memo["corrector"][0] * N1 +
                                     sum(w * Nj for w, Nj in zip(memo["corrector"][1:], history)))
            if not evaluate_corrected:
                history.insert(0, N1)
                del history[k:]
                return y1
        history.insert(0, P.N(y1))
        del history[k:]
        return y1
    return step


def krylov(m):
    """exp(h L) y by m Arnoldi steps (the Krylov exponential of expokit, without its error control)."""
    from scipy.linalg import expm

    def step(P, y, h, memo):
        beta = np.linalg.norm(y)
        V = np.zeros((m + 1, y.size), complex)
        H = np.zeros((m + 1, m), complex)
        V[0] = y / beta
        k = m
        for j in range(m):
            w = P.f(V[j])
            for i in range(j + 1):
                H[i, j] = np.vdot(V[i], w)
                w = w - H[i, j] * V[i]
            H[j + 1, j] = np.linalg.norm(w)
            if H[j + 1, j] < 1e-14 * beta:  # invariant subspace: exact
                k = j + 1
                break
            V[j + 1] = w / H[j + 1, j]
        return beta * (expm(h * H[:k, :k])[:, 0] @ V[:k])
    return step


def methods():
    from scipy.integrate._ivp import dop853_coefficients as dop853
    from scipy.integrate._ivp.rk import RK45
    rk4 = ([[0] * 4, [0.5, 0, 0, 0], [0, 0.5, 0, 0], [0, 0, 1, 0]], [1 / 6, 1 / 3, 1 / 3, 1 / 6])
    table = {
        "rk4": explicit_rk(*rk4),
        "dopri5": explicit_rk(RK45.A, RK45.B),
        "dop853": explicit_rk(dop853.A[:12, :12], dop853.B),
        "lawson-dopri5": lawson(RK45.A, RK45.B, RK45.C),
        "exprk4": exprk4,
    }
    for k in (3, 4, 5, 6):
        table[f"exp-adams{k}"] = exp_adams(k)
    for k in (4, 5):
        table[f"exp-pece{k}"] = exp_adams(k, corrector=True)
        table[f"exp-pec{k}"] = exp_adams(k, corrector=True, evaluate_corrected=False)
    for m in (10, 20, 40):
        table[f"krylov{m}"] = krylov(m)
    return table


def run(step, L, D, y0, times, n2, per_output):
    stride = max(1, int(round(1 / per_output)))
    substeps = max(1, int(per_output))
    times = times[::stride]
    P, y, memo = Problem(L, D), y0.copy(), {}
    h = (times[1] - times[0]) / substeps
    out = [y[:n2].copy()]
    for _ in range(1, len(times)):
        for _ in range(substeps):
            y = step(P, y, h, memo)
            if not np.all(np.isfinite(y[:n2])) or np.abs(y[:n2]).max() > 1e3:
                return P.evaluations, None
        out.append(y[:n2].copy())
    return P.evaluations, np.array(out)


def main():
    table = methods()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("--steps-per-output", type=float, nargs="+", default=[1, 2, 4, 8])
    p.add_argument("--methods", nargs="+", default=list(table), choices=list(table))
    p.add_argument("--eigenbasis", action="store_true",
                   help="work in H's eigenbasis, with H's part of L in D (exact for the exponential methods)")
    p.add_argument("--system-diagonal", action="store_true",
                   help="H's diagonal part in D, in the input's basis (exact for the exponential methods)")
    p.add_argument("--json")
    a = p.parse_args()
    if a.eigenbasis and a.system_diagonal:
        p.error("--eigenbasis puts the whole of H's part in D: --system-diagonal goes with the input's basis")
    L, D, y0, times, n2, back, exact = build(a.input, a.eigenbasis, a.system_diagonal)
    rows = []
    for name in a.methods:
        for per_output in a.steps_per_output:
            evaluations, rho = run(table[name], L, D, y0, times, n2, per_output)
            stride = max(1, int(round(1 / per_output)))
            error = None if rho is None else float(np.abs(rho @ back.T - exact[::stride]).max())
            rows.append({"method": name, "steps_per_output": per_output, "evaluations": evaluations, "error": error})
            shown = "unstable" if error is None else f"{error:.2e}"
            print(f"  {name:14s} {per_output:6g} steps/output  {evaluations:7d} evaluations  error {shown}", flush=True)
    if a.json:
        json.dump({"input": a.input, "eigenbasis": a.eigenbasis, "rows": rows}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
