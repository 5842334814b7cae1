// heom::Model: the open system as the solver sees it: a Hamiltonian and the baths it couples to.
#ifndef HEOM_MODEL_MODEL_HPP
#define HEOM_MODEL_MODEL_HPP

#include <vector>

#include "heom/core/matrix.hpp"
#include "heom/model/bath.hpp"

namespace heom {

class Model {
 public:
  /// H must be square and Hermitian; every bath's coupling operator must have H's dimension.
  explicit Model(Matrix hamiltonian, std::vector<Bath> baths = {});
  Model& add_bath(Bath bath);

  const Matrix& hamiltonian() const { return m_hamiltonian; }
  const std::vector<Bath>& baths() const { return m_baths; }
  /// System dimension n (each ADO is an n x n matrix).
  int dimension() const { return m_hamiltonian.rows(); }
  /// K: the exponents of all baths together, the length of an ADO label.
  int num_exponents() const;

 private:
  void check_bath(const Bath& bath, std::size_t index) const;

  Matrix m_hamiltonian;
  std::vector<Bath> m_baths;
};

/// Whether a and b have the same dimension and the same baths (couplings, exponents and terminators
/// equal bit for bit), and an H that is real in both or in neither (the generator's form depends on
/// it): models that differ in H alone, which one batch runs together.
bool same_shape(const Model& a, const Model& b);

}  // namespace heom

#endif
