// Bath correlation exponents (the terms c exp(-v t) of C(t)) and QuTiP's rule for merging them.
#ifndef HEOM_MODEL_EXPONENT_HPP
#define HEOM_MODEL_EXPONENT_HPP

#include <vector>

#include "heom/core/matrix.hpp"

namespace heom {

/// Which part of a bath's correlation functions an exponent belongs to (QuTiP 4.7 BathExponent types):
/// for a bosonic bath C(t) = C_R(t) + i C_I(t), for a fermionic one C+(t) and C-(t).
enum class ExponentKind {
  R,      ///< c exp(-v t) in C_R
  I,      ///< c exp(-v t) in C_I
  RI,     ///< the same v in both: c in C_R, c2 in C_I
  plus,   ///< fermionic: c exp(-v t) in C+ ("+")
  minus,  ///< fermionic: c exp(-v t) in C- ("-")
};

const char* to_string(ExponentKind kind);

/// One exponent. A bosonic one couples ADO n to n - e_k through
///   R: -i c [Q, .]    I: c {Q, .}    RI: -i c [Q, .] + c2 {Q, .}
/// and to n + e_k through -i [Q, .]. A fermionic one (plus, minus; n_k is 0 or 1) couples ADO n,
/// with F its fermionic excitations and s = (-1)^(those before k), through O = Q for plus and Q^dagger
/// for minus (O' the other one) to
///   n + e_k:  -i s (O X + (-1)^(F+1) X O)          n - e_k:  -i s (c O' X + (-1)^F conj(partner_c) X O')
/// (QuTiP 4.7's HEOMSolver; only fermionic excitations count in F and s, as in QuTiP 5).
struct Exponent {
  ExponentKind kind = ExponentKind::R;
  complex c = 0.0;   ///< coefficient (the C_R one for RI)
  complex v = 0.0;   ///< rate: the exponent decays as exp(-v t)
  complex c2 = 0.0;  ///< RI only: the C_I coefficient; zero for the others
  /// plus and minus only: c of the exponent of the other sign paired with this one (QuTiP's
  /// sigma_bar_k); zero for the bosonic kinds.
  complex partner_c = 0.0;

  bool fermionic() const { return kind == ExponentKind::plus || kind == ExponentKind::minus; }

  /// Bosonic kinds: the coefficient of -i[Q, .] in the coupling to n - e_k (zero for fermionic ones).
  complex commutator_coefficient() const {
    return kind == ExponentKind::R || kind == ExponentKind::RI ? c : complex(0.0);
  }
  /// Bosonic kinds: the coefficient of {Q, .} in the coupling to n - e_k (zero for fermionic ones).
  complex anticommutator_coefficient() const {
    return kind == ExponentKind::I ? c : (kind == ExponentKind::RI ? c2 : complex(0.0));
  }
};

/// QuTiP's BosonicBath.combine for the exponents of one bath (one coupling operator): exponents
/// whose v agree (|v1 - v2| <= atol + rtol |v2|) merge; an all-R (all-I) group becomes one R (I)
/// with the summed c, a mixed group one RI with c = sum of R and RI c, c2 = sum of I c and RI c2.
/// The order is that of each group's first member.
std::vector<Exponent> combine_exponents(const std::vector<Exponent>& exponents, double rtol = 1e-5, double atol = 1e-7);

}  // namespace heom

#endif
