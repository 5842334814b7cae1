// Assembly of the HEOM generator as a sparse matrix from Kronecker-product superoperators, written
// independently of the matrix-free kernel so that each checks the other.
#include <algorithm>
#include <utility>

#include "heom/generator/assembled_operator.hpp"
#include "heom/generator/generator_tables.hpp"

#include "heom/core/error.hpp"

namespace heom::impl {
namespace {

/// A superoperator on row-major vec(X) (index i n + j), as sparse rows.
struct SuperOperator {
  int n2 = 0;
  std::vector<std::vector<std::pair<int, complex>>> rows;
};

/// Dense n^2 x n^2 superoperator -> sparse rows (exact zeros dropped).
SuperOperator sparsify(const std::vector<complex>& dense, int n2) {
  SuperOperator s;
  s.n2 = n2;
  s.rows.resize(n2);
  for (int r = 0; r < n2; ++r)
    for (int c = 0; c < n2; ++c)
      if (dense[static_cast<std::size_t>(r) * n2 + c] != complex(0.0))
        s.rows[r].emplace_back(c, dense[static_cast<std::size_t>(r) * n2 + c]);
  return s;
}

/// vec(A X B) = (A kron B^T) vec(X) for row-major vec: row (i, j), column (l, m) holds A_il B_mj.
void add_sandwich(std::vector<complex>& dense, const Matrix& a, const Matrix& b, complex scale) {
  const int n = a.rows(), n2 = n * n;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int l = 0; l < n; ++l)
        for (int m = 0; m < n; ++m)
          dense[static_cast<std::size_t>(i * n + j) * n2 + l * n + m] += scale * a(i, l) * b(m, j);
}

/// L_sys as a superoperator: -i [H, X], the Lindblad terms rate (L X L^dagger - (L^dagger L X + X
/// L^dagger L) / 2), and each terminated bath's Delta (2 Q X Q - Q^2 X - X Q^2).
SuperOperator system_superoperator(const Model& model) {
  const int n = model.dimension(), n2 = n * n;
  const Matrix id = Matrix::identity(n);
  const complex i_unit(0.0, 1.0);
  std::vector<complex> sys(static_cast<std::size_t>(n2) * n2, 0.0);
  add_sandwich(sys, model.hamiltonian(), id, -i_unit);
  add_sandwich(sys, id, model.hamiltonian(), i_unit);
  for (const Lindblad& term : model.lindblad()) {
    const Matrix decay = term.op.adjoint() * term.op;
    add_sandwich(sys, term.op, term.op.adjoint(), term.rate);
    add_sandwich(sys, decay, id, -0.5 * term.rate);
    add_sandwich(sys, id, decay, -0.5 * term.rate);
  }
  for (const Bath& bath : model.baths()) {
    if (!bath.has_terminator()) continue;
    const Matrix& q = bath.coupling();
    const complex delta = bath.terminator_delta();
    const Matrix q2 = q * q;
    add_sandwich(sys, q, q, 2.0 * delta);
    add_sandwich(sys, q2, id, -delta);
    add_sandwich(sys, id, q2, -delta);
  }
  return sparsify(sys, n2);
}

/// One bath's superoperators: [Q, .] and {Q, .}; for a fermionic bath also Q X, X Q, Q^dagger X and
/// X Q^dagger (empty for the others).
struct BathOperators {
  SuperOperator commutator, anticommutator, left_q, right_q, left_qd, right_qd;

  explicit BathOperators(const Bath& bath) {
    const Matrix& q = bath.coupling();
    const int n = q.rows(), n2 = n * n;
    const Matrix id = Matrix::identity(n);
    std::vector<complex> comm(static_cast<std::size_t>(n2) * n2, 0.0), anti(comm.size(), 0.0);
    add_sandwich(comm, q, id, 1.0);
    add_sandwich(comm, id, q, -1.0);
    add_sandwich(anti, q, id, 1.0);
    add_sandwich(anti, id, q, 1.0);
    commutator = sparsify(comm, n2);
    anticommutator = sparsify(anti, n2);
    std::vector<complex> lq(comm.size(), 0.0), rq(comm.size(), 0.0), lqd(comm.size(), 0.0), rqd(comm.size(), 0.0);
    if (bath.is_fermionic()) {
      add_sandwich(lq, q, id, 1.0);
      add_sandwich(rq, id, q, 1.0);
      add_sandwich(lqd, q.adjoint(), id, 1.0);
      add_sandwich(rqd, id, q.adjoint(), 1.0);
    }
    left_q = sparsify(lq, n2);
    right_q = sparsify(rq, n2);
    left_qd = sparsify(lqd, n2);
    right_qd = sparsify(rqd, n2);
  }
};

/// The generator's rows, ADO by ADO: the system part and the damping on the diagonal block, each
/// exponent's links to the ADO's neighbours off it.
class Assembly {
 public:
  Assembly(const Model& model, const Hierarchy& hierarchy, Parity parity)
      : hierarchy_(hierarchy),
        n2_(model.dimension() * model.dimension()),
        parity_(parity),
        system_(system_superoperator(model)) {
    for (std::size_t b = 0; b < model.baths().size(); ++b) {
      baths_.emplace_back(model.baths()[b]);
      for (const Exponent& e : model.baths()[b].exponents()) {
        exponent_.push_back(&e);
        bath_of_.push_back(static_cast<int>(b));
        rates_.push_back(e.v);
      }
    }
    for (std::size_t k = 0; k < exponent_.size(); ++k)
      if (exponent_[k]->fermionic() && (k >= hierarchy.max_excitations().size() || hierarchy.max_excitations()[k] != 1))
        throw Error("assemble_generator: fermionic exponent " + std::to_string(k) +
                    " needs the hierarchy's 0/1 rule (heom::Hierarchy(model.max_excitations(), depth))");
  }

  HostCsr csr() {
    HostCsr csr;
    csr.num_rows = static_cast<std::int64_t>(hierarchy_.size()) * n2_;
    csr.row_map.assign(1, 0);
    for (int a = 0; a < hierarchy_.size(); ++a) {
      const complex damping = damping_of(hierarchy_.label(a).data(), rates_);
      for (int r = 0; r < n2_; ++r) {
        row_.clear();
        add_block(a, system_, r, 1.0);
        row_.emplace_back(static_cast<std::int64_t>(a) * n2_ + r, -damping);
        add_links(a, r);
        append_row(csr);
      }
    }
    return csr;
  }

 private:
  void add_block(int ado, const SuperOperator& s, int r, complex scale) {
    for (const auto& [c, v] : s.rows[r]) row_.emplace_back(static_cast<std::int64_t>(ado) * n2_ + c, scale * v);
  }

  /// Row r of ADO a's links to its neighbours. The fermionic ones as QuTiP 4.7's _grad_next_fermionic
  /// and _grad_prev_fermionic, with only the fermionic excitations counted (QuTiP 5); odd parity turns
  /// the left products' sign (HierarchicalEOM.jl).
  void add_links(int a, int r) {
    const complex i_unit(0.0, 1.0);
    const int K = hierarchy_.num_exponents();
    const double left_sign = parity_ == Parity::odd ? -1.0 : 1.0;
    int fermionic_excitations = 0;
    for (int k = 0; k < K; ++k)
      if (exponent_[k]->fermionic()) fermionic_excitations += hierarchy_.label(a, k);
    const double sign1 = fermionic_excitations % 2 == 0 ? -1.0 : 1.0;
    int excitations_before = 0;
    for (int k = 0; k < K; ++k) {
      const BathOperators& b = baths_[bath_of_[k]];
      const Exponent& e = *exponent_[k];
      const int next = hierarchy_.next(a, k), prev = hierarchy_.prev(a, k);
      if (e.fermionic()) {
        const double sign2 = excitations_before % 2 == 0 ? 1.0 : -1.0;
        excitations_before += hierarchy_.label(a, k);
        const bool plus = e.kind == ExponentKind::plus;
        if (next >= 0) {
          add_block(next, plus ? b.left_q : b.left_qd, r, -i_unit * sign2 * left_sign);
          add_block(next, plus ? b.right_q : b.right_qd, r, -i_unit * sign2 * sign1);
        }
        if (prev >= 0) {
          add_block(prev, plus ? b.left_qd : b.left_q, r, -i_unit * sign2 * left_sign * e.c);
          add_block(prev, plus ? b.right_qd : b.right_q, r, i_unit * sign2 * sign1 * std::conj(e.partner_c));
        }
        continue;
      }
      if (next >= 0) add_block(next, b.commutator, r, -i_unit);
      const int nk = hierarchy_.label(a, k);
      if (prev >= 0) {
        add_block(prev, b.commutator, r, -i_unit * e.commutator_coefficient() * static_cast<double>(nk));
        add_block(prev, b.anticommutator, r, e.anticommutator_coefficient() * static_cast<double>(nk));
      }
    }
  }

  /// The row's terms summed by column, in column order, exact zeros dropped.
  void append_row(HostCsr& csr) {
    std::sort(row_.begin(), row_.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (std::size_t e = 0; e < row_.size();) {
      std::int64_t column = row_[e].first;
      complex sum = 0.0;
      for (; e < row_.size() && row_[e].first == column; ++e) sum += row_[e].second;
      if (sum != complex(0.0)) {
        csr.columns.push_back(column);
        csr.values.push_back(sum);
      }
    }
    csr.row_map.push_back(static_cast<std::int64_t>(csr.columns.size()));
  }

  const Hierarchy& hierarchy_;
  const int n2_;
  const Parity parity_;
  const SuperOperator system_;
  std::vector<BathOperators> baths_;
  std::vector<const Exponent*> exponent_;
  std::vector<int> bath_of_;
  std::vector<complex> rates_;
  std::vector<std::pair<std::int64_t, complex>> row_;  // (column, value) terms of the row at hand
};

}  // namespace

HostCsr assemble_generator(const Model& model, const Hierarchy& hierarchy, Parity parity) {
  if (model.is_driven())
    throw Error("assemble_generator: the model is driven; assemble model.frozen_at(t), its generator at one time");
  for (const Lindblad& term : model.lindblad())
    if (parity == Parity::odd && term.rate != 0.0)
      throw Error("assemble_generator: odd parity with Lindblad terms is not supported (as in Generator)");
  return Assembly(model, hierarchy, parity).csr();
}

}  // namespace heom::impl
