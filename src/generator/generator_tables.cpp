// Host-side preparation of the generator's coefficient tables.
#include "heom/generator/generator_tables.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "heom/core/complex_order.hpp"
#include "heom/core/error.hpp"

namespace heom::impl {

void append_lanes(const std::vector<complex>& values, std::vector<double>& p, std::vector<double>& q) {
  for (const complex& c : values) {
    p.insert(p.end(), {c.real(), c.real()});
    q.insert(q.end(), {-c.imag(), c.imag()});
  }
}

namespace {

/// Whether the tables' map keeps Hermitian ADOs Hermitian (GeneratorTables::preserves_hermiticity).
/// B must be A^dagger to rounding: both are built from the same H and Q^2, so only the last bits differ.
bool preserves_hermiticity(const GeneratorTables& t, const std::vector<complex>& rates) {
  auto real = [](const complex& z) { return z.imag() == 0.0; };
  const int n = t.n;
  double scale = 0.0;
  for (const complex& z : t.a_sys) scale = std::max(scale, std::abs(z));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (std::abs(t.b_sys[i * n + j] - std::conj(t.a_sys[j * n + i])) > 1e-14 * scale) return false;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (!real(t.sandwich[i * n + j]) || t.sandwich[i * n + j] != t.sandwich[j * n + i]) return false;
  for (std::size_t d = 0; d < t.drive_shapes.size(); ++d) {
    if (!t.drive_shapes[d].is_real()) return false;
    const complex* h = t.drive_ops.data() + d * n * n;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (h[i * n + j] != std::conj(h[j * n + i])) return false;
  }
  return std::all_of(rates.begin(), rates.end(), real) &&
         std::all_of(t.c_commutator.begin(), t.c_commutator.end(), real) &&
         std::all_of(t.c_anticommutator.begin(), t.c_anticommutator.end(), real) &&
         std::all_of(t.two_delta.begin(), t.two_delta.end(), real);
}

/// Q = s c c^dagger with c = column j of Q and s = 1 / Q_jj, for j the largest diagonal element,
/// when Q_ik = Q_ij Q_jk / Q_jj everywhere (to 1e-12 of Q's largest element): rank one.
void find_rank_one(const Matrix& q, int bath, GeneratorTables& t) {
  const int n = q.rows();
  int j = 0;
  for (int i = 1; i < n; ++i)
    if (std::abs(q(i, i)) > std::abs(q(j, j))) j = i;
  const double pivot = q(j, j).real();
  if (pivot == 0.0) return;
  const double tolerance = 1e-12 * q.max_abs();
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      if (std::abs(q(i, k) - q(i, j) * q(j, k) / pivot) > tolerance) return;
  t.rank_one[bath] = 1;
  t.rank_one_s[bath] = 1.0 / pivot;
  for (int i = 0; i < n; ++i) t.rank_one_c[static_cast<std::size_t>(bath) * n + i] = q(i, j);
}

/// A linear map f of 2x2 blocks in GeneratorTables' shifted form: c_s(e) = f(E_{e xor s})(e), with
/// E_f the block whose element f is 1.
template <class Map>
std::vector<double> shifted_form(const Map& f) {
  complex c[4][4];  // [s][e]
  for (int source = 0; source < 4; ++source) {
    Matrix unit(2, 2);
    unit.data()[source] = 1.0;
    const Matrix image = f(unit);
    for (int e = 0; e < 4; ++e) c[e ^ source][e] = image.data()[e];
  }
  std::vector<complex> flat(&c[0][0], &c[0][0] + 16);
  std::vector<double> p, q;
  append_lanes(flat, p, q);
  p.insert(p.end(), q.begin(), q.end());
  return p;
}

/// A Lindblad operator whose jump term is element-wise with real coefficients (the sandwich S).
bool real_diagonal(const Matrix& op) {
  if (!op.is_diagonal()) return false;
  for (int i = 0; i < op.rows(); ++i)
    if (op(i, i).imag() != 0.0) return false;
  return true;
}

/// u and w with m = u w^T, when m has rank one (to 1e-12 of its largest element): u the column of the
/// largest element, w that element's row divided by it.
bool split_rank_one(const Matrix& m, std::vector<complex>& u, std::vector<complex>& w) {
  const int n = m.rows();
  int pi = 0, pk = 0;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      if (std::abs(m(i, k)) > std::abs(m(pi, pk))) pi = i, pk = k;
  if (m(pi, pk) == complex(0.0)) return false;
  std::vector<complex> column(n), row(n);
  for (int i = 0; i < n; ++i) column[i] = m(i, pk);
  for (int k = 0; k < n; ++k) row[k] = m(pi, k) / m(pi, pk);
  const double tolerance = 1e-12 * std::abs(m(pi, pk));
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      if (std::abs(m(i, k) - column[i] * row[k]) > tolerance) return false;
  u.insert(u.end(), column.begin(), column.end());
  w.insert(w.end(), row.begin(), row.end());
  return true;
}

/// Bath b's n x n table (q or right) as a Matrix.
Matrix bath_matrix(const std::vector<complex>& table, int b, int n) {
  Matrix m(n, n);
  std::copy(table.begin() + static_cast<std::size_t>(b) * n * n,
            table.begin() + static_cast<std::size_t>(b + 1) * n * n, m.data());
  return m;
}

/// GeneratorTables' shifted_system for the two-level kernel, from A, B and the tables already filled.
void fill_shifted_system(const Matrix& a, const Matrix& b, GeneratorTables& t) {
  t.shifted_system = shifted_form([&](const Matrix& rho) {
    Matrix out = a * rho + rho * b;
    for (int e = 0; e < 4; ++e) out.data()[e] += t.sandwich[e] * rho.data()[e];
    for (int bi = 0; bi < t.num_baths; ++bi)
      if (!t.bath_diagonal[bi]) out += t.two_delta[bi] * (bath_matrix(t.q, bi, 2) * rho * bath_matrix(t.right, bi, 2));
    for (int r = 0; r < t.num_rank_one_jumps; ++r) {
      Matrix jump(2, 2);
      for (int e = 0; e < 4; ++e) jump.data()[e] = t.jump_u[2 * r + e / 2] * t.jump_w[2 * r + e % 2];
      out += jump * rho * jump.adjoint();
    }
    return out;
  });
}

/// GeneratorTables' shifted maps of the baths for the two-level kernel.
void fill_shifted_bath_maps(GeneratorTables& t) {
  const complex minus_i(0.0, -1.0);
  for (int bi = 0; bi < t.num_baths; ++bi) {
    const Matrix q = bath_matrix(t.q, bi, 2);
    const Matrix zero(2, 2);
    // (A jump has no exponents, so nothing multiplies its maps.)
    const bool dense = !t.bath_diagonal[bi] && t.bath_begin[bi + 1] > t.bath_begin[bi];
    const std::vector<double> commutator =
        shifted_form([&](const Matrix& x) { return dense ? minus_i * (q * x - x * q) : zero; });
    const std::vector<double> anticommutator =
        shifted_form([&](const Matrix& x) { return dense ? q * x + x * q : zero; });
    t.shifted_commutator.insert(t.shifted_commutator.end(), commutator.begin(), commutator.end());
    t.shifted_anticommutator.insert(t.shifted_anticommutator.end(), anticommutator.begin(), anticommutator.end());
  }
}

/// The model's Lindblad terms: each sqrt(rate) L into t.lindblad; a rank-one L not real and diagonal
/// into the rank-one jumps. Returns the other jumps, which are dense baths (a real diagonal L goes into
/// the sandwich: sandwich_of_lindblad).
std::vector<Matrix> take_lindblad(const Model& model, GeneratorTables& t) {
  const int n2 = model.dimension() * model.dimension();
  std::vector<Matrix> jumps;
  for (const Lindblad& term : model.lindblad()) {
    if (term.rate == 0.0) continue;  // (adds nothing; the fingerprint and same_shape still see it)
    const Matrix scaled = std::sqrt(term.rate) * term.op;
    t.lindblad.insert(t.lindblad.end(), scaled.data(), scaled.data() + n2);
    if (real_diagonal(term.op)) continue;
    if (split_rank_one(scaled, t.jump_u, t.jump_w))
      ++t.num_rank_one_jumps;
    else
      jumps.push_back(scaled);
  }
  return jumps;
}

/// The system part A, B (system_terms) and the drives.
void take_system(const Model& model, const Matrix& a, const Matrix& b, GeneratorTables& t) {
  const int n2 = t.n * t.n;
  const bool any_terminator =
      std::any_of(model.baths().begin(), model.baths().end(), [](const Bath& bath) { return bath.has_terminator(); });
  t.a_sys.assign(a.data(), a.data() + n2);
  t.b_sys.assign(b.data(), b.data() + n2);
  t.a_sys_imaginary = !any_terminator && model.lindblad().empty() && model.hamiltonian_always_real();
  for (const Drive& drive : model.drives()) {
    t.drive_shapes.push_back(drive.shape);
    t.drive_ops.insert(t.drive_ops.end(), drive.op.data(), drive.op.data() + n2);
  }
  if (model.is_driven()) {
    t.a_static = t.a_sys;
    t.b_static = t.b_sys;
  }
}

/// The per-bath and per-exponent tables at their sizes, zero.
void size_bath_tables(GeneratorTables& t) {
  const std::size_t baths = t.num_baths, n2 = static_cast<std::size_t>(t.n) * t.n;
  t.sandwich.assign(n2, 0.0);
  t.bath_begin.assign(baths + 1, 0);
  t.bath_diagonal.assign(baths, 0);
  t.bath_fermionic.assign(baths, 0);
  t.active_count.assign(baths, 0);
  t.run_count.assign(baths, 0);
  t.run_start.assign(baths * n2, 0);
  t.run_length.assign(baths * n2, 0);
  t.cf.assign(baths * n2, 0.0);
  t.alpha.assign(static_cast<std::size_t>(t.num_exponents) * n2, 0.0);
  t.q.assign(baths * n2, 0.0);
  t.right.assign(baths * n2, 0.0);
  t.two_delta.assign(baths, 0.0);
}

/// Diagonal bath bi's elements: cf and af of each (returned: af, for the exponents' alpha), the
/// terminator's part of the sandwich, and the runs of active elements.
std::vector<complex> take_diagonal_bath(const Bath& bath, int bi, GeneratorTables& t) {
  const complex i_unit(0.0, 1.0);
  const Matrix& q = bath.coupling();
  const int n = t.n, n2 = n * n;
  std::vector<int> active;
  std::vector<complex> af_full(n2, 0.0);
  for (int e = 0; e < n2; ++e) {
    const complex qi = q(e / n, e / n), qj = q(e % n, e % n);
    const complex cf = i_unit * (qj - qi), af = qi + qj;
    if (bath.has_terminator()) {
      t.sandwich[e] += 2.0 * bath.terminator_delta() * qi * qj;
      t.has_sandwich = true;
    }
    t.cf[static_cast<std::size_t>(bi) * n2 + e] = cf;
    af_full[e] = af;
    if (cf != complex(0.0) || af != complex(0.0)) active.push_back(e);
  }
  t.active_count[bi] = static_cast<int>(active.size());
  const std::size_t runs = static_cast<std::size_t>(bi) * n2;
  for (const int e : active) {
    const int r = t.run_count[bi];
    const bool continues = r > 0 && t.run_start[runs + r - 1] + t.run_length[runs + r - 1] == e && e % n != 0;
    if (continues) {
      ++t.run_length[runs + r - 1];
    } else {
      t.run_start[runs + r] = e;
      t.run_length[runs + r] = 1;
      ++t.run_count[bi];
    }
  }
  return af_full;
}

/// Model bath bi, its exponents from k on; their rates appended to `rates`. Returns the next exponent.
int take_bath(const Bath& bath, int bi, int k, GeneratorTables& t, std::vector<complex>& rates) {
  const Matrix& q = bath.coupling();
  const int n2 = t.n * t.n;
  const bool fermionic = bath.is_fermionic();
  const bool diagonal = !fermionic && q.is_diagonal();
  t.bath_fermionic[bi] = fermionic ? 1 : 0;
  t.has_fermionic_bath = t.has_fermionic_bath || fermionic;
  std::copy(q.data(), q.data() + n2, t.q.begin() + static_cast<std::size_t>(bi) * n2);
  std::copy(q.data(), q.data() + n2, t.right.begin() + static_cast<std::size_t>(bi) * n2);
  t.bath_diagonal[bi] = diagonal ? 1 : 0;
  t.bath_begin[bi] = k;
  std::vector<complex> af_full;
  if (diagonal)
    af_full = take_diagonal_bath(bath, bi, t);
  else
    t.two_delta[bi] = 2.0 * bath.terminator_delta();
  for (const Exponent& e : bath.exponents()) {
    t.fermion_kind.push_back(e.kind == ExponentKind::plus ? 1 : (e.kind == ExponentKind::minus ? -1 : 0));
    t.fermion_c.push_back(e.fermionic() ? e.c : complex(0.0));
    t.fermion_partner_conj.push_back(std::conj(e.partner_c));
    t.c_commutator.push_back(e.commutator_coefficient());
    t.c_anticommutator.push_back(e.anticommutator_coefficient());
    if (diagonal)
      for (int el = 0; el < n2; ++el)
        t.alpha[static_cast<std::size_t>(k) * n2 + el] =
            t.cf[static_cast<std::size_t>(bi) * n2 + el] * e.commutator_coefficient() +
            af_full[el] * e.anticommutator_coefficient();
    rates.push_back(e.v);
    ++k;
  }
  return k;
}

/// The dense Lindblad jumps as baths after the model's, from bath `first` on, with no exponents (k
/// the first exponent after the model's).
void take_jumps(const std::vector<Matrix>& jumps, int first, int k, GeneratorTables& t) {
  const int n2 = t.n * t.n;
  for (std::size_t j = 0; j < jumps.size(); ++j) {
    const int bi = first + static_cast<int>(j);
    const Matrix right = jumps[j].adjoint();
    std::copy(jumps[j].data(), jumps[j].data() + n2, t.q.begin() + static_cast<std::size_t>(bi) * n2);
    std::copy(right.data(), right.data() + n2, t.right.begin() + static_cast<std::size_t>(bi) * n2);
    t.bath_begin[bi] = k;
    t.two_delta[bi] = 1.0;
  }
  t.bath_begin[t.num_baths] = k;
}

/// Lindblad terms with a real diagonal L, into the sandwich S (after the terminators').
void sandwich_of_lindblad(const Model& model, GeneratorTables& t) {
  const int n = t.n;
  for (const Lindblad& term : model.lindblad()) {
    if (term.rate == 0.0 || !real_diagonal(term.op)) continue;
    for (int e = 0; e < n * n; ++e) t.sandwich[e] += term.rate * term.op(e / n, e / n) * term.op(e % n, e % n);
    t.has_sandwich = true;
  }
}

/// The rows each diagonal bath couples through, and the exponents of a bath coupled through one row.
void find_coupled_rows(const Model& model, GeneratorTables& t) {
  const int n = t.n;
  t.coupled_row_count.assign(t.num_baths, 0);
  t.coupled_rows.assign(static_cast<std::size_t>(t.num_baths) * n, 0);
  t.single_row.assign(t.num_exponents, -1);
  t.single_row_q.assign(t.num_exponents, 0.0);
  for (int bi = 0; bi < static_cast<int>(model.baths().size()); ++bi) {
    if (!t.bath_diagonal[bi]) continue;
    const Matrix& q = model.baths()[bi].coupling();
    for (int i = 0; i < n; ++i)
      if (q(i, i) != complex(0.0)) t.coupled_rows[static_cast<std::size_t>(bi) * n + t.coupled_row_count[bi]++] = i;
    if (t.coupled_row_count[bi] != 1) continue;
    const int row = t.coupled_rows[static_cast<std::size_t>(bi) * n];
    for (int e = t.bath_begin[bi]; e < t.bath_begin[bi + 1]; ++e) {
      t.single_row[e] = row;
      t.single_row_q[e] = q(row, row).real();
    }
  }
}

/// Each fermionic bath's group (the first bath with its coupling) and the rows and columns it couples.
void find_fermion_rows(const Model& model, GeneratorTables& t) {
  const int n = t.n, baths = t.num_baths;
  t.fermion_group.assign(baths, -1);
  t.fermion_row_count.assign(baths, 0);
  t.fermion_column_count.assign(baths, 0);
  t.fermion_rows.assign(static_cast<std::size_t>(baths) * n, 0);
  t.fermion_columns.assign(static_cast<std::size_t>(baths) * n, 0);
  for (int bi = 0; bi < static_cast<int>(model.baths().size()); ++bi) {
    if (!t.bath_fermionic[bi]) continue;
    const Matrix& q = model.baths()[bi].coupling();
    for (int g = 0; g <= bi && t.fermion_group[bi] < 0; ++g)
      if (t.bath_fermionic[g] && std::equal(q.data(), q.data() + n * n, model.baths()[g].coupling().data()))
        t.fermion_group[bi] = g;
    const std::size_t base = static_cast<std::size_t>(bi) * n;
    for (int i = 0; i < n; ++i) {
      bool row = false, column = false;
      for (int j = 0; j < n; ++j) {
        row = row || q(i, j) != complex(0.0);
        column = column || q(j, i) != complex(0.0);
      }
      if (row) t.fermion_rows[base + t.fermion_row_count[bi]++] = i;
      if (column) t.fermion_columns[base + t.fermion_column_count[bi]++] = i;
    }
  }
}

}  // namespace

std::pair<Matrix, Matrix> system_terms(const Model& model) {
  const complex i_unit(0.0, 1.0);
  Matrix a = -i_unit * model.hamiltonian();
  Matrix b = i_unit * model.hamiltonian();
  for (const Bath& bath : model.baths()) {
    if (!bath.has_terminator()) continue;
    const Matrix q2 = bath.coupling() * bath.coupling();
    a -= bath.terminator_delta() * q2;
    b -= bath.terminator_delta() * q2;
  }
  for (const Lindblad& term : model.lindblad()) {
    const Matrix decay = (0.5 * term.rate) * (term.op.adjoint() * term.op);
    a -= decay;
    b -= decay;
  }
  return {a, b};
}

GeneratorTables make_generator_tables(const Model& model, const Hierarchy& hierarchy) {
  if (hierarchy.num_exponents() != model.num_exponents())
    throw Error("Generator: the hierarchy has " + std::to_string(hierarchy.num_exponents()) +
                " exponents but the model has " + std::to_string(model.num_exponents()));
  GeneratorTables t;
  const std::vector<Matrix> jumps = take_lindblad(model, t);
  const int model_baths = static_cast<int>(model.baths().size());
  const int K = model.num_exponents();
  t.n = model.dimension();
  t.num_ados = hierarchy.size();
  t.num_exponents = K;
  t.num_baths = model_baths + static_cast<int>(jumps.size());
  t.num_jumps = static_cast<int>(jumps.size());
  const auto [a, b] = system_terms(model);
  take_system(model, a, b, t);

  size_bath_tables(t);
  std::vector<complex> rates;
  int k = 0;
  for (int bi = 0; bi < model_baths; ++bi) k = take_bath(model.baths()[bi], bi, k, t, rates);
  take_jumps(jumps, model_baths, k, t);
  sandwich_of_lindblad(model, t);
  append_lanes(t.sandwich, t.sandwich_p, t.sandwich_q);
  append_lanes(t.cf, t.cf_p, t.cf_q);
  append_lanes(t.alpha, t.alpha_p, t.alpha_q);
  find_coupled_rows(model, t);
  find_fermion_rows(model, t);

  // (A fermionic bath's ADOs are not Hermitian: rho_n^dagger is another ADO, up to a sign.)
  t.preserves_hermiticity = !t.has_fermionic_bath && preserves_hermiticity(t, rates);
  t.rank_one.assign(t.num_baths, 0);
  t.rank_one_c.assign(static_cast<std::size_t>(t.num_baths) * t.n, 0.0);
  t.rank_one_s.assign(t.num_baths, 0.0);
  for (int bi = 0; bi < model_baths; ++bi)  // (a jump's L need not be Hermitian: s c c^dagger does not hold)
    if (!t.bath_diagonal[bi] && !t.bath_fermionic[bi]) find_rank_one(model.baths()[bi].coupling(), bi, t);
  if (t.n == 2) {
    fill_shifted_system(a, b, t);
    fill_shifted_bath_maps(t);
  }

  t.rates = rates;
  t.damping_first = hierarchy.held_first();
  const std::size_t held = hierarchy.held_last() - hierarchy.held_first();
  t.damping.reserve(held);
  for (std::size_t row = 0; row < held; ++row)
    t.damping.push_back(damping_of(hierarchy.labels_table().data() + row * K, rates));
  return t;
}

complex damping_of(const int* label, const std::vector<complex>& rates) {
  complex damping = 0.0;
  for (std::size_t e = 0; e < rates.size(); ++e) damping += static_cast<double>(label[e]) * rates[e];
  return damping;
}

std::vector<complex> damping_values(const std::vector<complex>& rates, const Hierarchy& hierarchy) {
  // Made distinct whenever the values collected reach twice the distinct ones (memory: about 32
  // bytes per distinct value at most, a handful of classes for most baths).
  std::vector<complex> values;
  std::size_t distinct = 0;
  hierarchy.for_each_label([&](const int* label) {
    values.push_back(damping_of(label, rates));
    if (values.size() >= 2 * distinct + 4096) {
      sort_distinct(values);
      distinct = values.size();
    }
  });
  sort_distinct(values);
  return values;
}

void set_drive_values(GeneratorTables& t, const std::vector<complex>& values) {
  const std::size_t n2 = static_cast<std::size_t>(t.n) * t.n;
  if (values.size() != t.drive_shapes.size())
    throw Error("Generator: " + std::to_string(values.size()) + " drive values for " +
                std::to_string(t.drive_shapes.size()) + " drives");
  t.a_sys = t.a_static;
  t.b_sys = t.b_static;
  const complex i_unit(0.0, 1.0);
  for (std::size_t d = 0; d < values.size(); ++d) {
    const complex scale = i_unit * values[d];
    for (std::size_t e = 0; e < n2; ++e) {
      t.a_sys[e] -= scale * t.drive_ops[d * n2 + e];
      t.b_sys[e] += scale * t.drive_ops[d * n2 + e];
    }
  }
  if (t.n == 2) {
    Matrix a(2, 2), b(2, 2);
    std::copy(t.a_sys.begin(), t.a_sys.end(), a.data());
    std::copy(t.b_sys.begin(), t.b_sys.end(), b.data());
    fill_shifted_system(a, b, t);
  }
}

std::vector<std::uint64_t> hermitian_rows_read(const GeneratorTables& t) {
  std::vector<std::uint64_t> rows(t.num_exponents, 0);
  for (int b = 0; b < t.num_baths; ++b) {
    std::uint64_t read = 0;
    if (t.bath_diagonal[b])
      for (int r = 0; r < t.coupled_row_count[b]; ++r) read |= std::uint64_t(1) << t.coupled_rows[b * t.n + r];
    else
      read = t.n >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << t.n) - 1;
    for (int k = t.bath_begin[b]; k < t.bath_begin[b + 1]; ++k) rows[k] = read;
  }
  return rows;
}

std::string ground_column_obstacle(const GeneratorTables& t) {
  const int n = t.n;
  for (int b = 0; b < t.num_baths; ++b)
    if (t.bath_fermionic[b]) return "bath " + std::to_string(b) + " is fermionic (its ADOs are no ground columns)";
  auto element = [](int i, int j) { return "element (" + std::to_string(i) + ", " + std::to_string(j) + ")"; };
  const std::size_t terms = t.lindblad.size() / (static_cast<std::size_t>(n) * n);
  // A Lindblad term keeps column 0 closed when L |0> = 0 (decay into level 0 is fine): then L v<0| L^+,
  // v<0| L^+ L and row 0 of L^+ L vanish.
  for (std::size_t l = 0; l < terms; ++l)
    for (int j = 0; j < n; ++j)
      if (t.lindblad[(l * n + j) * n] != complex(0.0))
        return "the operator of lindblad term " + std::to_string(l) + " has " + element(j, 0) +
               " (it takes level 0 elsewhere)";
  for (int b = 0; b < t.num_baths - t.num_jumps; ++b)
    for (int j = 0; j < n; ++j)
      for (const auto& [row, column] : {std::pair{0, j}, std::pair{j, 0}})
        if (t.q[(static_cast<std::size_t>(b) * n + row) * n + column] != complex(0.0))
          return "the coupling of bath " + std::to_string(b) + " has " + element(row, column);
  for (std::size_t d = 0; d < t.drive_shapes.size(); ++d)
    for (int j = 1; j < n; ++j)
      for (const auto& [row, column] : {std::pair{0, j}, std::pair{j, 0}})
        if (t.drive_ops[(d * n + row) * n + column] != complex(0.0))
          return "the operator of drive " + std::to_string(d) + " has " + element(row, column);
  // (With Q's row and column 0 zero, A and B there are -iH and iH.)
  for (int j = 1; j < n; ++j)
    for (const auto& [row, column] : {std::pair{0, j}, std::pair{j, 0}})
      if (t.a_sys[static_cast<std::size_t>(row) * n + column] != complex(0.0)) return "H has " + element(row, column);
  return {};
}

}  // namespace heom::impl
