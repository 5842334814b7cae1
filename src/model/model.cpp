// heom::Model validation.
#include "heom/model/model.hpp"

#include <cmath>
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

Model& Model::add_lindblad(Matrix op, double rate) {
  const std::string name = "lindblad " + std::to_string(m_lindblad.size());
  if (op.rows() != dimension() || op.cols() != dimension())
    throw Error(name + ": operator is " + op.shape_string() + " but the hamiltonian is " +
                m_hamiltonian.shape_string());
  if (const auto at = op.first_non_finite())
    throw Error(name + ": operator has a non-finite element at (" + std::to_string(at->first) + ", " +
                std::to_string(at->second) + ")");
  if (!std::isfinite(rate) || rate < 0.0)
    throw Error(name + ": rate must be finite and >= 0, got " + std::to_string(rate));
  m_lindblad.push_back({std::move(op), rate});
  return *this;
}

Model Model::with_hamiltonian(Matrix hamiltonian) const {
  Model m(std::move(hamiltonian), m_baths);
  for (const Lindblad& term : m_lindblad) m.add_lindblad(term.op, term.rate);
  return m;
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

bool same_shape(const Model& a, const Model& b) {
  auto real = [](const Matrix& h) {
    for (int e = 0; e < h.rows() * h.cols(); ++e)
      if (h.data()[e].imag() != 0.0) return false;
    return true;
  };
  if (a.dimension() != b.dimension() || a.baths().size() != b.baths().size() ||
      real(a.hamiltonian()) != real(b.hamiltonian()))
    return false;
  if (a.lindblad().size() != b.lindblad().size()) return false;
  for (std::size_t i = 0; i < a.lindblad().size(); ++i)
    if (a.lindblad()[i].rate != b.lindblad()[i].rate || max_abs_diff(a.lindblad()[i].op, b.lindblad()[i].op) != 0.0)
      return false;
  for (std::size_t i = 0; i < a.baths().size(); ++i) {
    const Bath &x = a.baths()[i], &y = b.baths()[i];
    if (x.coupling().rows() != y.coupling().rows() || max_abs_diff(x.coupling(), y.coupling()) != 0.0 ||
        x.has_terminator() != y.has_terminator() || x.terminator_delta() != y.terminator_delta() ||
        x.exponents().size() != y.exponents().size())
      return false;
    for (std::size_t k = 0; k < x.exponents().size(); ++k) {
      const Exponent &e = x.exponents()[k], &f = y.exponents()[k];
      if (e.kind != f.kind || e.c != f.c || e.v != f.v || e.c2 != f.c2) return false;
    }
  }
  return true;
}

}  // namespace heom
