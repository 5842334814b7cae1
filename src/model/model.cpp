// heom::Model validation.
#include "heom/model/model.hpp"

#include <string>

#include "heom/core/error.hpp"

namespace heom {

Model::Model(Matrix hamiltonian, std::vector<Bath> baths) : m_hamiltonian(std::move(hamiltonian)) {
  const Matrix& h = m_hamiltonian;
  if (!h.is_square() || h.rows() == 0)
    throw Error("hamiltonian must be a non-empty square matrix, got " + h.shape_string());
  if (const auto at = h.first_non_finite())
    throw Error("hamiltonian has a non-finite element at (" + std::to_string(at->first) + ", " +
                std::to_string(at->second) + ")");
  if (!h.is_hermitian()) throw Error("hamiltonian must be Hermitian");
  for (auto& b : baths) add_bath(std::move(b));
}

Model& Model::add_bath(Bath bath) {
  check_bath(bath, m_baths.size());
  m_baths.push_back(std::move(bath));
  return *this;
}

int Model::num_exponents() const {
  int k = 0;
  for (const auto& b : m_baths) k += b.num_exponents();
  return k;
}

void Model::check_bath(const Bath& bath, std::size_t index) const {
  if (bath.coupling().rows() != dimension())
    throw Error("bath " + std::to_string(index) + ": coupling operator Q is " + bath.coupling().shape_string() +
                " but the hamiltonian is " + m_hamiltonian.shape_string());
}

}  // namespace heom
