// The currents into fermionic leads from the first-tier ADOs.
#include "heom/solver/lead_currents.hpp"

namespace heom {

std::vector<complex> lead_currents(const Model& model, const Hierarchy& hierarchy,
                                   const std::function<Matrix(int ado)>& ado) {
  if (hierarchy.num_exponents() != model.num_exponents())
    throw Error("lead_currents: the hierarchy has " + std::to_string(hierarchy.num_exponents()) +
                " exponents but the model has " + std::to_string(model.num_exponents()));
  std::vector<complex> currents(model.baths().size(), 0.0);
  std::vector<int> label(model.num_exponents(), 0);
  int k = 0;
  for (std::size_t b = 0; b < model.baths().size(); ++b) {
    const Bath& bath = model.baths()[b];
    for (const Exponent& e : bath.exponents()) {
      label[k] = 1;
      const int first_tier = hierarchy.index_of(label);
      label[k] = 0;
      ++k;
      if (!e.fermionic() || first_tier < 0) continue;
      const bool plus = e.kind == ExponentKind::plus;
      const Matrix product = (plus ? bath.coupling() : bath.coupling().adjoint()) * ado(first_tier);
      complex trace = 0.0;
      for (int i = 0; i < product.rows(); ++i) trace += product(i, i);
      currents[b] += (plus ? 1.0 : -1.0) * trace;
    }
    currents[b] *= complex(0.0, -1.0);
  }
  return currents;
}

}  // namespace heom
