// The currents into fermionic leads from the first-tier ADOs.
#include "heom/solver/lead_currents.hpp"

#include <algorithm>
#include <numeric>

namespace heom {
namespace impl {

std::vector<LeadCurrentTerm> lead_current_terms(const Model& model, const Hierarchy& hierarchy, int first_ado,
                                                int count) {
  if (hierarchy.num_exponents() != model.num_exponents())
    throw Error("lead_currents: the hierarchy has " + std::to_string(hierarchy.num_exponents()) +
                " exponents but the model has " + std::to_string(model.num_exponents()));
  const int end = count < 0 ? hierarchy.size() : first_ado + count;
  std::vector<LeadCurrentTerm> terms;
  std::vector<int> label(model.num_exponents(), 0);
  int k = 0;
  for (std::size_t b = 0; b < model.baths().size(); ++b)
    for (const Exponent& e : model.baths()[b].exponents()) {
      label[k] = 1;
      const int first_tier = hierarchy.index_of(label);
      label[k] = 0;
      if (e.fermionic() && first_tier >= first_ado && first_tier < end)
        terms.push_back({k, static_cast<int>(b), first_tier, e.kind == ExponentKind::plus});
      ++k;
    }
  return terms;
}

complex lead_current_term_value(const Model& model, const LeadCurrentTerm& term, const Matrix& ado) {
  const Matrix& q = model.baths()[term.bath].coupling();
  const Matrix product = (term.plus ? q : q.adjoint()) * ado;
  complex trace = 0.0;
  for (int i = 0; i < product.rows(); ++i) trace += product(i, i);
  return trace;
}

std::vector<complex> sum_lead_current_terms(const Model& model, const std::vector<int>& exponents,
                                            const std::vector<complex>& values) {
  // Each exponent's bath and sign, by k.
  std::vector<int> bath_of;
  std::vector<bool> plus;
  for (std::size_t b = 0; b < model.baths().size(); ++b)
    for (const Exponent& e : model.baths()[b].exponents()) {
      bath_of.push_back(static_cast<int>(b));
      plus.push_back(e.kind == ExponentKind::plus);
    }
  std::vector<std::size_t> order(exponents.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return exponents[a] < exponents[b]; });
  std::vector<complex> currents(model.baths().size(), 0.0);
  for (std::size_t i : order) {
    const int k = exponents[i];
    if (k < 0 || k >= static_cast<int>(bath_of.size()))
      throw Error("lead_currents: a term names exponent " + std::to_string(k) + " of " +
                  std::to_string(bath_of.size()));
    currents[bath_of[k]] += (plus[k] ? 1.0 : -1.0) * values[i];
  }
  for (complex& c : currents) c *= complex(0.0, -1.0);
  return currents;
}

}  // namespace impl

std::vector<complex> lead_currents(const Model& model, const Hierarchy& hierarchy,
                                   const std::function<Matrix(int ado)>& ado) {
  const std::vector<impl::LeadCurrentTerm> terms = impl::lead_current_terms(model, hierarchy);
  std::vector<int> exponents;
  std::vector<complex> values;
  for (const impl::LeadCurrentTerm& term : terms) {
    exponents.push_back(term.exponent);
    values.push_back(impl::lead_current_term_value(model, term, ado(term.ado)));
  }
  return impl::sum_lead_current_terms(model, exponents, values);
}

}  // namespace heom
