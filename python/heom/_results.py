"""What runs return: states as numpy arrays (QuTiP Qobjs on request), expectation values, ADOs by label."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ._baths import as_array


def _qobj(rho: np.ndarray, dims):
    import qutip  # (only when asked for Qobjs)

    return qutip.Qobj(rho, dims=dims) if dims is not None else qutip.Qobj(rho)


def expect(op, states: np.ndarray) -> np.ndarray:
    """tr(op rho) for each rho of `states` [nt, n, n]: real when op is Hermitian, else complex."""
    a = as_array(op, "op")
    values = np.einsum("ij,tji->t", a, states)
    return values.real if np.allclose(a, a.conj().T, rtol=0, atol=1e-14 * max(1.0, np.abs(a).max())) else values


class AdoState:
    """Every ADO of a hierarchy at one time, with the labels that name them (QuTiP's HierarchyADOsState)."""

    def __init__(self, ados: np.ndarray, labels: np.ndarray, dims=None):
        self.ados = ados  #: [num_ados, n, n]; ADO 0 is rho
        self.labels = labels  #: [num_ados, num_exponents]: each ADO's excitation of each exponent
        self.dims = dims
        self._index = {tuple(int(x) for x in row): i for i, row in enumerate(labels)}

    @property
    def rho(self) -> np.ndarray:
        return self.ados[0]

    def extract(self, label) -> np.ndarray:
        """The ADO with this label (a sequence of excitations, one per exponent) or index."""
        if isinstance(label, (int, np.integer)):
            return self.ados[int(label)]
        key = tuple(int(x) for x in label)
        if key not in self._index:
            raise KeyError(f"no ADO with label {key} in this hierarchy")
        return self.ados[self._index[key]]

    def __len__(self) -> int:
        return len(self.ados)


class Result:
    """One model's run: times, states [nt, n, n], and what the run observed."""

    def __init__(self, times: np.ndarray, states: np.ndarray, currents: Optional[np.ndarray] = None,
                 e_ops: Sequence = (), statistics: Optional[dict] = None, ados: Optional[AdoState] = None,
                 dims=None, ado_states: Optional[list] = None):
        self.times = times
        self.states = states
        #: [nt, n_baths] complex: the particle current from the system into each lead (0 for bosonic baths)
        self.currents = currents
        self.statistics = statistics or {}
        #: every ADO at the last time, when run(..., ado_return=True)
        self.ados = ados
        #: every ADO at every time (an AdoState per time), when the solver was made with ado_states=True
        self.ado_states = ado_states
        self.dims = dims
        #: tr(op rho(t)) for each op of run(..., e_ops=...), in order
        self.e_data = [expect(op, states) for op in e_ops]

    def expect(self, op) -> np.ndarray:
        """tr(op rho(t)) at every time (real for a Hermitian op)."""
        return expect(op, self.states)

    @property
    def qobj_states(self) -> list:
        """The states as QuTiP Qobjs (needs qutip), with the dims of the Hamiltonian when it was a Qobj."""
        return [_qobj(rho, self.dims) for rho in self.states]

    def __repr__(self) -> str:
        return (f"<heom.Result {len(self.times)} times, {self.states.shape[1]}x{self.states.shape[2]} states, "
                f"{self.statistics.get('steps', '?')} steps>")


class EnsembleResult:
    """An ensemble's run: the mean rho(t) over members, and each member's (unless not stored)."""

    def __init__(self, times, mean, states, currents, statistics):
        self.times = times
        self.mean = mean  #: [nt, n, n], summed in member order
        self.states = states  #: [members][nt, n, n], or None with store_members=False
        self.currents = currents  #: [members][nt, n_baths] when the leads' currents were observed
        self.statistics = statistics

    def expect(self, op) -> np.ndarray:
        """tr(op <rho>(t)) of the mean state."""
        return expect(op, self.mean)
