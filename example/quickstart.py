#!/usr/bin/python3
"""QuTiP's spin-boson HEOM tutorial (a qubit under a Drude-Lorentz bath, QuTiP 4.7's guide), run once
with QuTiP and once with heom: the same objects, the import and the solver line changed. Prints both
times and the largest difference of <sigma_z>(t).

    PYTHONPATH=build/openmp/python python3 example/quickstart.py
"""
import time

import numpy as np
import qutip
from qutip.nonmarkov.bofin_baths import DrudeLorentzBath
from qutip.nonmarkov.heom import HEOMSolver as QutipHEOMSolver  # QuTiP's solver ...

import heom
from heom import HEOMSolver  # ... and heom's: the same arguments, the same results

# The tutorial's system and bath: H = eps/2 sz + Delta/2 sx, Q = sz, lambda = 0.1, gamma = 0.5, T = 0.5.
H_sys = 0.25 * qutip.sigmaz() + 0.5 * qutip.sigmax()
bath = DrudeLorentzBath(qutip.sigmaz(), lam=0.1, gamma=0.5, T=0.5, Nk=2)
rho0 = qutip.basis(2, 0) * qutip.basis(2, 0).dag()
tlist = np.linspace(0, 50, 1000)
options = qutip.Options(nsteps=15000, store_states=True, rtol=1e-8, atol=1e-10)
depth = 5

start = time.perf_counter()
qutip_result = QutipHEOMSolver(H_sys, bath, depth, options=options).run(rho0, tlist, e_ops=[qutip.sigmaz()])
qutip_seconds = time.perf_counter() - start

start = time.perf_counter()
heom_result = HEOMSolver(H_sys, bath, depth, options=options).run(rho0, tlist, e_ops=[qutip.sigmaz()])
heom_seconds = time.perf_counter() - start

difference = np.abs(np.asarray(qutip_result.expect[0]) - heom_result.expect[0]).max()
print(f"QuTiP {qutip.__version__}: {qutip_seconds:.3f} s")
print(f"heom {heom.__version__}: {heom_seconds:.3f} s ({qutip_seconds / heom_seconds:.0f}x)")
print(f"largest difference of <sigma_z>(t): {difference:.2e}")
if difference > 1e-6:
    raise SystemExit("heom and QuTiP disagree")
