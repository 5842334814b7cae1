"""Baths and models: heom's own constructors, and QuTiP 4.7's bath objects read through their exponents."""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from . import _heom


def as_array(x, name: str) -> np.ndarray:
    """A matrix as a complex128 array: a QuTiP Qobj (its .full()), or anything numpy reads."""
    if hasattr(x, "full") and callable(x.full):
        x = x.full()
    a = np.asarray(x, dtype=np.complex128)
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a matrix, got an array of shape {a.shape}")
    return a


def DrudeLorentz(Q, lam: float, gamma: float, T: float, Nk: int = 2, *, expansion: str = "matsubara",
                 terminator: bool = False) -> _heom.Bath:
    """QuTiP's DrudeLorentzBath (expansion="matsubara") or DrudeLorentzPadeBath ("pade"):
    J(w) = 2 lam gamma w / (w^2 + gamma^2), Nk terms beyond the first; with `terminator`, the
    Ishizaki-Tanimura terminator for the terms left out joins the system's Liouvillian."""
    return _heom.Bath.drude_lorentz(as_array(Q, "Q"), lam, gamma, T, Nk, expansion, terminator)


def Underdamped(Q, lam: float, gamma: float, w0: float, T: float, Nk: int = 2) -> _heom.Bath:
    """QuTiP's UnderDampedBath: J(w) = lam^2 gamma w / ((w0^2 - w^2)^2 + gamma^2 w^2), Matsubara."""
    return _heom.Bath.underdamped(as_array(Q, "Q"), lam, gamma, w0, T, Nk)


def Exponents(Q, ck_real: Sequence[complex], vk_real: Sequence[complex], ck_imag: Sequence[complex],
              vk_imag: Sequence[complex], *, combine: bool = True) -> _heom.Bath:
    """QuTiP's BosonicBath: C(t) = sum ck_real exp(-vk_real t) + i sum ck_imag exp(-vk_imag t),
    exponents with equal rates merged when `combine`."""
    return _heom.Bath.from_expansion(as_array(Q, "Q"), ck_real, vk_real, ck_imag, vk_imag, combine)


def Lorentzian(Q, gamma: float, W: float = None, mu: float = None, T: float = None, Nk: int = 2, *,
               expansion: str = "pade", w: float = None) -> _heom.Bath:
    """A fermionic lead: QuTiP's LorentzianPadeBath (expansion="pade") or LorentzianBath
    ("matsubara"), Gamma(w) = gamma W^2 / ((w - mu)^2 + W^2). Q is the system's annihilation-type
    operator (such as a level's d), not Hermitian. The width is W, or w as QuTiP names it."""
    if (W is None) == (w is None):
        raise ValueError("Lorentzian: give the width once, as W or as QuTiP's w")
    for name, value in (("mu", mu), ("T", T)):
        if value is None:
            raise ValueError(f"Lorentzian: {name} is needed")
    return _heom.Bath.lorentzian(as_array(Q, "Q"), gamma, W if w is None else w, mu, T, Nk, expansion)


def Fermionic(Q, ck_plus: Sequence[complex], vk_plus: Sequence[complex], ck_minus: Sequence[complex],
              vk_minus: Sequence[complex]) -> _heom.Bath:
    """QuTiP's FermionicBath: C+(t) = sum ck_plus exp(-vk_plus t), C-(t) = sum ck_minus exp(-vk_minus t),
    entry k of the + lists paired with entry k of the - lists."""
    return _heom.Bath.fermionic(as_array(Q, "Q"), ck_plus, vk_plus, ck_minus, vk_minus)


def from_qutip(bath) -> _heom.Bath:
    """A QuTiP 4.7 bath object (BosonicBath, DrudeLorentzBath, DrudeLorentzPadeBath, UnderDampedBath,
    FermionicBath, LorentzianBath, LorentzianPadeBath) as a heom Bath with the same exponents, in the
    same order. QuTiP keeps a terminator apart from the bath (bath.terminator()): ask heom's
    DrudeLorentz(..., terminator=True) for one."""
    exponents = list(bath.exponents)
    if not exponents:
        raise ValueError(f"{type(bath).__name__}: a bath without exponents")
    Q = exponents[0].Q
    for k, e in enumerate(exponents):
        if e.Q is not Q and not np.array_equal(as_array(e.Q, "Q"), as_array(Q, "Q")):
            raise ValueError(f"{type(bath).__name__}: exponent {k} has another coupling operator than exponent 0; "
                             "give each coupling operator its own bath")
    listed = []
    for k, e in enumerate(exponents):
        kind = e.type.name
        if kind not in ("+", "-") and getattr(e, "dim", None) is not None:
            raise ValueError(f"{type(bath).__name__}: exponent {k} has dim = {e.dim} (a cap on its excitations); "
                             "heom's bosonic exponents take every tier up to the hierarchy's depth")
        partner = 0.0
        if kind in ("+", "-"):
            partner = exponents[k + e.sigma_bar_k_offset].ck
        listed.append((kind, complex(e.ck), complex(e.vk), complex(e.ck2 or 0.0), complex(partner)))
    return _heom.Bath.from_exponents(as_array(Q, "Q"), listed, 0.0, f"qutip {type(bath).__name__}")


def as_bath(bath) -> _heom.Bath:
    """A heom Bath as it is; a QuTiP bath object through from_qutip."""
    if isinstance(bath, _heom.Bath):
        return bath
    if hasattr(bath, "exponents"):
        return from_qutip(bath)
    raise TypeError(f"expected a heom Bath or a QuTiP bath object, got {type(bath).__name__}")


def Model(H, baths=(), *, lindblad: Iterable[tuple] = (), drives: Iterable[tuple] = ()) -> _heom.Model:
    """The open system: a Hermitian H (array or Qobj), its baths (heom Baths or QuTiP bath objects; one
    or a list), Lindblad terms beside them, as (L, rate) pairs: rate (L rho L^+ - {L^+ L, rho} / 2),
    and drives, as (op, f) pairs: H(t) = H + sum f(t) op, op Hermitian and f a heom.DriveShape or a
    Python function of t with real values (called from the run, with the GIL)."""
    if isinstance(baths, _heom.Bath) or hasattr(baths, "exponents"):
        baths = [baths]
    model = _heom.Model(as_array(H, "H"), [as_bath(b) for b in baths])
    for i, term in enumerate(lindblad):
        try:
            L, rate = term
        except (TypeError, ValueError):
            raise ValueError(f"lindblad[{i}]: expected an (L, rate) pair") from None
        model.add_lindblad(as_array(L, f"lindblad[{i}] L"), float(rate))
    for i, term in enumerate(drives):
        try:
            op, f = term
        except (TypeError, ValueError):
            raise ValueError(f"drives[{i}]: expected an (op, f) pair") from None
        if not isinstance(f, _heom.DriveShape):
            if not callable(f):
                raise TypeError(f"drives[{i}]: f is a heom.DriveShape or a function of t, got {type(f).__name__}")
            f = _heom.DriveShape.function(f, f"drives[{i}]")
        model.add_drive(as_array(op, f"drives[{i}] op"), f)
    return model


def as_model(model) -> _heom.Model:
    if isinstance(model, _heom.Model):
        return model
    raise TypeError(f"expected a heom Model (heom.Model(H, baths)), got {type(model).__name__}")
