"""Baths: heom's constructors give QuTiP 4.7's exponents, QuTiP's bath objects convert to the same, and
bad parameters raise ValueError naming them."""
import numpy as np
import pytest
from qutip.nonmarkov import bofin_baths as qb

import qutip

import heom
from conftest import SX, SZ

D = np.array([[0, 1], [0, 0]], dtype=complex)
QSZ, QSX, QD = qutip.Qobj(SZ), qutip.Qobj(SX), qutip.Qobj(D)


def exponents(bath):
    """(kinds, c, v, c2, partner) of a heom Bath."""
    e = bath.exponents
    return [x[0] for x in e], *(np.array([x[i] for x in e]) for i in range(1, 5))


def qutip_exponents(bath):
    e = bath.exponents
    partners = [e[k + x.sigma_bar_k_offset].ck if x.type.name in "+-" else 0 for k, x in enumerate(e)]
    return ([x.type.name for x in e], np.array([x.ck for x in e]), np.array([x.vk for x in e]),
            np.array([x.ck2 or 0 for x in e]), np.array(partners))


def assert_same(ours, theirs):
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("expansion,qutip_class", [("matsubara", qb.DrudeLorentzBath),
                                                   ("pade", qb.DrudeLorentzPadeBath)])
def test_drude_lorentz_is_qutips(expansion, qutip_class):
    ours = heom.DrudeLorentz(SZ, lam=0.1, gamma=0.5, T=0.5, Nk=3, expansion=expansion)
    theirs = qutip_class(QSZ, lam=0.1, gamma=0.5, T=0.5, Nk=3)
    assert_same(exponents(ours), qutip_exponents(theirs))
    assert_same(exponents(heom.from_qutip(theirs)), qutip_exponents(theirs))
    assert len(ours.exponents) == 4


def test_underdamped_is_qutips():
    ours = heom.Underdamped(SX, lam=0.2, gamma=0.1, w0=1.0, T=0.3, Nk=2)
    theirs = qb.UnderDampedBath(QSX, lam=0.2, gamma=0.1, w0=1.0, T=0.3, Nk=2)
    assert_same(exponents(ours), qutip_exponents(theirs))
    assert_same(exponents(heom.from_qutip(theirs)), qutip_exponents(theirs))


def test_exponent_lists_are_qutips_bosonic_bath():
    ck_r, vk_r, ck_i, vk_i = [0.3, 0.1], [0.5, 2.0], [-0.05], [0.5]
    ours = heom.Exponents(SZ, ck_r, vk_r, ck_i, vk_i)
    theirs = qb.BosonicBath(QSZ, ck_r, vk_r, ck_i, vk_i, combine=True)
    assert_same(exponents(ours), qutip_exponents(theirs))
    assert exponents(ours)[0] == ["RI", "R"]  # (the equal rates merged)


@pytest.mark.parametrize("expansion,qutip_class", [("matsubara", qb.LorentzianBath),
                                                   ("pade", qb.LorentzianPadeBath)])
def test_lorentzian_leads_are_qutips(expansion, qutip_class):
    ours = heom.Lorentzian(D, gamma=0.2, W=1.0, mu=0.5, T=0.5, Nk=2, expansion=expansion)
    theirs = qutip_class(QD, gamma=0.2, w=1.0, mu=0.5, T=0.5, Nk=2)
    assert_same(exponents(ours), qutip_exponents(theirs))
    assert_same(exponents(heom.from_qutip(theirs)), qutip_exponents(theirs))
    assert ours.is_fermionic and exponents(ours)[0][:2] == ["+", "-"]


def test_fermionic_lists_are_qutips():
    ck_p, vk_p, ck_m, vk_m = [0.1 + 0.2j, 0.05j], [1 - 0.5j, 2.0], [0.1 - 0.2j, 0.02], [1 + 0.5j, 2.0]
    ours = heom.Fermionic(D, ck_p, vk_p, ck_m, vk_m)
    theirs = qb.FermionicBath(QD, ck_p, vk_p, ck_m, vk_m)
    assert_same(exponents(ours), qutip_exponents(theirs))


def test_qobjs_are_taken_as_matrices():
    ours = heom.DrudeLorentz(qutip.sigmaz(), lam=0.1, gamma=0.5, T=0.5, Nk=1)
    np.testing.assert_array_equal(ours.Q, SZ)


@pytest.mark.parametrize("make,message", [
    (lambda: heom.Lorentzian(D, gamma=0.2, W=-1.0, mu=0.0, T=0.5), "width"),
    (lambda: heom.Lorentzian(SZ, gamma=0.2, W=1.0, mu=0.0, T=0.5), "Hermitian"),
    (lambda: heom.DrudeLorentz(SZ, lam=0.1, gamma=-0.5, T=0.5), "gamma"),
    (lambda: heom.DrudeLorentz(SZ, lam=0.1, gamma=0.5, T=0.5, expansion="fourier"), "expansion"),
    (lambda: heom.DrudeLorentz([1.0, 2.0], lam=0.1, gamma=0.5, T=0.5), "Q"),
    (lambda: heom.Model(np.array([[0, 1j], [0, 0]])), "Hermitian"),
    (lambda: heom.Model(SZ, heom.DrudeLorentz(np.eye(3), 0.1, 0.5, 0.5)), "Q is 3x3"),
    (lambda: heom.Model(SZ, lindblad=[(SX, -1.0)]), "rate"),
    (lambda: heom.Model(np.array([[np.nan, 0], [0, 1]])), "not finite"),
])
def test_bad_parameters_raise_value_error_naming_them(make, message):
    with pytest.raises(ValueError, match=message):
        make()
