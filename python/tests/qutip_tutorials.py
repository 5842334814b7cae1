"""Code from QuTiP's HEOM tutorials as their users run it (the same in QuTiP 4.7's and QuTiP 5's),
shared by the tests of both interfaces."""


def state_current(ado_state, bath_tag):
    """The fermionic single-impurity tutorial's current into a lead, from the first tier's ADOs."""
    level_1 = [(ado_state.extract(label), ado_state.exps(label)[0])
               for label in ado_state.filter(level=1, tags=[bath_tag])]

    def sign(exp):
        return 1 if exp.type == exp.types["+"] else -1

    def op(exp):
        return exp.Q if exp.type == exp.types["+"] else exp.Q.dag()

    return -1.0j * sum(sign(exp) * (op(exp) * aux).tr() for aux, exp in level_1)
