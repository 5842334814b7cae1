// Bath correlation exponents (the terms c exp(-v t) of C(t)) and QuTiP's rule for merging them.
#ifndef HEOM_MODEL_EXPONENT_HPP
#define HEOM_MODEL_EXPONENT_HPP

#include <vector>

#include "heom/core/matrix.hpp"

namespace heom {

/// Which part of C(t) = C_R(t) + i C_I(t) an exponent belongs to (QuTiP 4.7 BathExponent types).
enum class ExponentKind {
  R,   ///< c exp(-v t) in C_R
  I,   ///< c exp(-v t) in C_I
  RI,  ///< the same v in both: c in C_R, c2 in C_I
};

const char* to_string(ExponentKind kind);

/// One exponent. In the hierarchy it couples ADO n to n - e_k through
///   R: -i c [Q, .]    I: c {Q, .}    RI: -i c [Q, .] + c2 {Q, .}
struct Exponent {
  ExponentKind kind = ExponentKind::R;
  complex c = 0.0;   ///< coefficient (the C_R one for RI)
  complex v = 0.0;   ///< rate: the exponent decays as exp(-v t)
  complex c2 = 0.0;  ///< RI only: the C_I coefficient; zero for R and I

  /// Coefficient of -i[Q, .] in the coupling to n - e_k.
  complex commutator_coefficient() const { return kind == ExponentKind::I ? complex(0.0) : c; }
  /// Coefficient of {Q, .} in the coupling to n - e_k.
  complex anticommutator_coefficient() const {
    return kind == ExponentKind::R ? complex(0.0) : (kind == ExponentKind::I ? c : c2);
  }
};

/// QuTiP's BosonicBath.combine for the exponents of one bath (one coupling operator): exponents
/// whose v agree (|v1 - v2| <= atol + rtol |v2|) merge; an all-R (all-I) group becomes one R (I)
/// with the summed c, a mixed group one RI with c = sum of R and RI c, c2 = sum of I c and RI c2.
/// The order is that of each group's first member.
std::vector<Exponent> combine_exponents(const std::vector<Exponent>& exponents, double rtol = 1e-5, double atol = 1e-7);

}  // namespace heom

#endif
