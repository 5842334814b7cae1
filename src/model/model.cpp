// heom::Model validation.
#include "heom/model/model.hpp"

#include <algorithm>
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

void Model::check_operator(const std::string& name, const Matrix& op) const {
  if (op.rows() != dimension() || op.cols() != dimension())
    throw Error(name + ": operator is " + op.shape_string() + " but the hamiltonian is " +
                m_hamiltonian.shape_string());
  if (const auto at = op.first_non_finite())
    throw Error(name + ": operator has a non-finite element at (" + std::to_string(at->first) + ", " +
                std::to_string(at->second) + ")");
}

Model& Model::add_lindblad(Matrix op, double rate) {
  const std::string name = "lindblad " + std::to_string(m_lindblad.size());
  check_operator(name, op);
  if (!std::isfinite(rate) || rate < 0.0)
    throw Error(name + ": rate must be finite and >= 0, got " + std::to_string(rate));
  m_lindblad.push_back({std::move(op), rate});
  return *this;
}

Model& Model::add_drive(Matrix op, DriveShape shape) {
  check_operator("drive " + std::to_string(m_drives.size()), op);
  m_drives.push_back({std::move(op), std::move(shape)});
  return *this;
}

Model Model::with_hamiltonian(Matrix hamiltonian) const {
  Model m(std::move(hamiltonian), m_baths);
  for (const Lindblad& term : m_lindblad) m.add_lindblad(term.op, term.rate);
  for (const Drive& drive : m_drives) m.add_drive(drive.op, drive.shape);
  return m;
}

Matrix Model::hamiltonian_at(double t, TimeSide side) const {
  Matrix h = m_hamiltonian;
  for (const Drive& drive : m_drives) h += drive.shape(t, side) * drive.op;
  return h;
}

Model Model::frozen_at(double t, TimeSide side) const {
  Model m(hamiltonian_at(t, side), m_baths);
  for (const Lindblad& term : m_lindblad) m.add_lindblad(term.op, term.rate);
  return m;
}

namespace {

bool is_real(const Matrix& m) {
  for (int e = 0; e < m.rows() * m.cols(); ++e)
    if (m.data()[e].imag() != 0.0) return false;
  return true;
}

}  // namespace

bool Model::hamiltonian_always_real() const {
  return is_real(m_hamiltonian) && std::all_of(m_drives.begin(), m_drives.end(),
                                               [](const Drive& d) { return d.shape.is_real() && is_real(d.op); });
}

std::vector<double> Model::drive_breakpoints() const {
  std::vector<double> times;
  for (const Drive& drive : m_drives)
    for (double t : drive.shape.breakpoints()) times.push_back(t);
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  return times;
}

std::vector<int> Model::max_excitations() const {
  std::vector<int> caps;
  for (const Bath& bath : m_baths)
    for (const Exponent& e : bath.exponents()) caps.push_back(e.fermionic() ? 1 : 0);
  return caps;
}

std::vector<ExponentWeight> Model::exponent_weights() const {
  std::vector<ExponentWeight> weights;
  for (const Bath& bath : m_baths)
    for (const Exponent& e : bath.exponents()) {
      // A combined R and I exponent weighs c + i c2, the coefficient of its exp(-v t) in C(t).
      const complex c = e.kind == ExponentKind::RI ? e.c + complex(0.0, 1.0) * e.c2 : e.c;
      weights.push_back({std::abs(c), e.v.real(), e.fermionic()});
    }
  return weights;
}

bool Model::has_fermionic_bath() const {
  return std::any_of(m_baths.begin(), m_baths.end(), [](const Bath& b) { return b.is_fermionic(); });
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
  if (a.dimension() != b.dimension() || a.baths().size() != b.baths().size() ||
      a.hamiltonian_always_real() != b.hamiltonian_always_real())
    return false;
  if (a.drives().size() != b.drives().size()) return false;
  for (std::size_t i = 0; i < a.drives().size(); ++i)
    if (max_abs_diff(a.drives()[i].op, b.drives()[i].op) != 0.0 ||
        a.drives()[i].shape.is_real() != b.drives()[i].shape.is_real())
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
      if (e.kind != f.kind || e.c != f.c || e.v != f.v || e.c2 != f.c2 || e.partner_c != f.partner_c) return false;
    }
  }
  return true;
}

}  // namespace heom
