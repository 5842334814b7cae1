// The first-tier terms a lead's current sums (heom::lead_currents), for the Solver to compute on the
// devices that hold them and sum in one order.
#ifndef HEOM_SOLVER_DETAIL_LEAD_CURRENT_TERMS_HPP
#define HEOM_SOLVER_DETAIL_LEAD_CURRENT_TERMS_HPP

#include <vector>

#include "heom/core/matrix.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/model/model.hpp"

namespace heom::impl {

/// Exponent k's term of its bath's current: tr(O_k rho_{e_k}), O_k = Q for a + exponent, Q^dagger for
/// a - exponent.
struct LeadCurrentTerm {
  int exponent;  ///< k: the terms are summed in this order
  int bath;
  int ado;    ///< the index of e_k
  bool plus;  ///< a + exponent (counted +1), else - (counted -1)
};

/// The terms of every fermionic exponent whose first-tier ADO lies in [first_ado, first_ado + count)
/// (count < 0: to the end), in exponent order. None at depth 0.
std::vector<LeadCurrentTerm> lead_current_terms(const Model& model, const Hierarchy& hierarchy, int first_ado = 0,
                                                int count = -1);

/// tr(O_k x) for ADO e_k's block x.
complex lead_current_term_value(const Model& model, const LeadCurrentTerm& term, const Matrix& ado);

/// The currents, per bath, from the terms' values (value[i] belongs to the term of exponent
/// exponents[i], in any order): -i sum_k s_k value_k, summed in exponent order, so the same bits
/// however the terms were split between devices.
std::vector<complex> sum_lead_current_terms(const Model& model, const std::vector<int>& exponents,
                                            const std::vector<complex>& values);

}  // namespace heom::impl

#endif
