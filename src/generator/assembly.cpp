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

}  // namespace

HostCsr assemble_generator(const Model& model, const Hierarchy& hierarchy, Parity parity) {
  if (model.is_driven())
    throw Error("assemble_generator: the model is driven; assemble model.frozen_at(t), its generator at one time");
  for (const Lindblad& term : model.lindblad())
    if (parity == Parity::odd && term.rate != 0.0)
      throw Error("assemble_generator: odd parity with Lindblad terms is not supported (as in Generator)");
  const int n = model.dimension(), n2 = n * n;
  const Matrix id = Matrix::identity(n);
  const complex i_unit(0.0, 1.0);

  // L_sys X = -i [H, X] + sum over terminated baths Delta (2 Q X Q - Q^2 X - X Q^2)
  std::vector<complex> sys(static_cast<std::size_t>(n2) * n2, 0.0);
  add_sandwich(sys, model.hamiltonian(), id, -i_unit);
  add_sandwich(sys, id, model.hamiltonian(), i_unit);
  // ... + sum over Lindblad terms rate (L X L^dagger - (L^dagger L X + X L^dagger L) / 2).
  for (const Lindblad& term : model.lindblad()) {
    const Matrix decay = term.op.adjoint() * term.op;
    add_sandwich(sys, term.op, term.op.adjoint(), term.rate);
    add_sandwich(sys, decay, id, -0.5 * term.rate);
    add_sandwich(sys, id, decay, -0.5 * term.rate);
  }
  std::vector<SuperOperator> commutator, anticommutator;  // per bath: [Q, .] and {Q, .}
  // Per fermionic bath (empty for the others): Q X, X Q, Q^dagger X and X Q^dagger.
  std::vector<SuperOperator> left_q, right_q, left_qd, right_qd;
  std::vector<int> bath_of;
  std::vector<const Exponent*> exponent;
  std::vector<complex> c_comm, c_anti, rates;
  for (std::size_t b = 0; b < model.baths().size(); ++b) {
    const Bath& bath = model.baths()[b];
    const Matrix& q = bath.coupling();
    if (bath.has_terminator()) {
      const complex delta = bath.terminator_delta();
      const Matrix q2 = q * q;
      add_sandwich(sys, q, q, 2.0 * delta);
      add_sandwich(sys, q2, id, -delta);
      add_sandwich(sys, id, q2, -delta);
    }
    std::vector<complex> comm(static_cast<std::size_t>(n2) * n2, 0.0), anti(comm.size(), 0.0);
    add_sandwich(comm, q, id, 1.0);
    add_sandwich(comm, id, q, -1.0);
    add_sandwich(anti, q, id, 1.0);
    add_sandwich(anti, id, q, 1.0);
    commutator.push_back(sparsify(comm, n2));
    anticommutator.push_back(sparsify(anti, n2));
    std::vector<complex> lq(comm.size(), 0.0), rq(comm.size(), 0.0), lqd(comm.size(), 0.0), rqd(comm.size(), 0.0);
    if (bath.is_fermionic()) {
      add_sandwich(lq, q, id, 1.0);
      add_sandwich(rq, id, q, 1.0);
      add_sandwich(lqd, q.adjoint(), id, 1.0);
      add_sandwich(rqd, id, q.adjoint(), 1.0);
    }
    left_q.push_back(sparsify(lq, n2));
    right_q.push_back(sparsify(rq, n2));
    left_qd.push_back(sparsify(lqd, n2));
    right_qd.push_back(sparsify(rqd, n2));
    for (const Exponent& e : bath.exponents()) {
      exponent.push_back(&e);
      bath_of.push_back(static_cast<int>(b));
      c_comm.push_back(e.commutator_coefficient());
      c_anti.push_back(e.anticommutator_coefficient());
      rates.push_back(e.v);
    }
  }
  const SuperOperator system = sparsify(sys, n2);
  for (std::size_t k = 0; k < exponent.size(); ++k)
    if (exponent[k]->fermionic() && (k >= hierarchy.max_excitations().size() || hierarchy.max_excitations()[k] != 1))
      throw Error("assemble_generator: fermionic exponent " + std::to_string(k) +
                  " needs the hierarchy's 0/1 rule (heom::Hierarchy(model.max_excitations(), depth))");

  HostCsr csr;
  csr.num_rows = static_cast<std::int64_t>(hierarchy.size()) * n2;
  csr.row_map.assign(1, 0);
  std::vector<std::pair<std::int64_t, complex>> row;
  const int K = hierarchy.num_exponents();
  for (int a = 0; a < hierarchy.size(); ++a) {
    const complex damping = damping_of(hierarchy.label(a).data(), rates);
    for (int r = 0; r < n2; ++r) {
      row.clear();
      auto add_block = [&](int ado, const SuperOperator& s, complex scale) {
        for (const auto& [c, v] : s.rows[r]) row.emplace_back(static_cast<std::int64_t>(ado) * n2 + c, scale * v);
      };
      add_block(a, system, 1.0);
      row.emplace_back(static_cast<std::int64_t>(a) * n2 + r, -damping);
      // QuTiP 4.7's _grad_next_fermionic and _grad_prev_fermionic, with only the fermionic
      // excitations counted (QuTiP 5); odd parity turns the left products' sign (HierarchicalEOM.jl).
      const double left_sign = parity == Parity::odd ? -1.0 : 1.0;
      int fermionic_excitations = 0;
      for (int k = 0; k < K; ++k)
        if (exponent[k]->fermionic()) fermionic_excitations += hierarchy.label(a, k);
      const double sign1 = fermionic_excitations % 2 == 0 ? -1.0 : 1.0;
      int excitations_before = 0;
      for (int k = 0; k < K; ++k) {
        const int b = bath_of[k];
        if (exponent[k]->fermionic()) {
          const double sign2 = excitations_before % 2 == 0 ? 1.0 : -1.0;
          excitations_before += hierarchy.label(a, k);
          const bool plus = exponent[k]->kind == ExponentKind::plus;
          if (hierarchy.next(a, k) >= 0) {
            add_block(hierarchy.next(a, k), plus ? left_q[b] : left_qd[b], -i_unit * sign2 * left_sign);
            add_block(hierarchy.next(a, k), plus ? right_q[b] : right_qd[b], -i_unit * sign2 * sign1);
          }
          if (hierarchy.prev(a, k) >= 0) {
            add_block(hierarchy.prev(a, k), plus ? left_qd[b] : left_q[b],
                      -i_unit * sign2 * left_sign * exponent[k]->c);
            add_block(hierarchy.prev(a, k), plus ? right_qd[b] : right_q[b],
                      i_unit * sign2 * sign1 * std::conj(exponent[k]->partner_c));
          }
          continue;
        }
        if (hierarchy.next(a, k) >= 0) add_block(hierarchy.next(a, k), commutator[b], -i_unit);
        const int nk = hierarchy.label(a, k);
        if (hierarchy.prev(a, k) >= 0) {
          add_block(hierarchy.prev(a, k), commutator[b], -i_unit * c_comm[k] * static_cast<double>(nk));
          add_block(hierarchy.prev(a, k), anticommutator[b], c_anti[k] * static_cast<double>(nk));
        }
      }
      std::sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      for (std::size_t e = 0; e < row.size();) {
        std::int64_t column = row[e].first;
        complex sum = 0.0;
        for (; e < row.size() && row[e].first == column; ++e) sum += row[e].second;
        if (sum != complex(0.0)) {
          csr.columns.push_back(column);
          csr.values.push_back(sum);
        }
      }
      csr.row_map.push_back(static_cast<std::int64_t>(csr.columns.size()));
    }
  }
  return csr;
}

}  // namespace heom::impl
