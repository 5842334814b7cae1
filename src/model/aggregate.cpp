// The manifolds of an exciton aggregate, built from its one-exciton description or checked when given.
#include "heom/model/aggregate.hpp"

#include <string>

#include "heom/core/error.hpp"

namespace heom {

namespace {

int two_exciton_levels(int sites) { return sites * (sites - 1) / 2; }

/// The pairs (m, n), m < n, in level order, and the level of each pair.
std::vector<std::pair<int, int>> site_pairs(int sites) {
  std::vector<std::pair<int, int>> pairs;
  for (int m = 0; m < sites; ++m)
    for (int n = m + 1; n < sites; ++n) pairs.emplace_back(m, n);
  return pairs;
}

/// The level of the two-exciton state of sites a != b, given the first two-exciton level.
int pair_level(int a, int b, int sites, int first) {
  if (a > b) std::swap(a, b);
  // Pairs (0, *) come first: sites - 1 of them, then (1, *): sites - 2, ...
  return first + a * sites - a * (a + 1) / 2 + (b - a - 1);
}

/// Throws unless every element of `op` outside rows [r0, r1) x columns [c0, c1) is zero.
void require_block(const Matrix& op, int r0, int r1, int c0, int c1, const std::string& name) {
  for (int i = 0; i < op.rows(); ++i)
    for (int j = 0; j < op.cols(); ++j)
      if ((i < r0 || i >= r1 || j < c0 || j >= c1) && op(i, j) != complex(0.0))
        throw Error(name + " has an element at (" + std::to_string(i) + ", " + std::to_string(j) +
                    ") outside its block: rows " + std::to_string(r0) + ".." + std::to_string(r1 - 1) + ", columns " +
                    std::to_string(c0) + ".." + std::to_string(c1 - 1));
}

/// Throws unless `op` neither takes g elsewhere nor brings anything to it (row and column 0 zero but
/// the diagonal element, when `diagonal_allowed`).
void require_ground_apart(const Matrix& op, const std::string& name, bool diagonal_allowed) {
  for (int j = 0; j < op.rows(); ++j) {
    if (j == 0 && diagonal_allowed) continue;
    if (op(0, j) != complex(0.0) || op(j, 0) != complex(0.0))
      throw Error(name + " couples the ground state (level 0) to level " + std::to_string(j) +
                  ": a response starts from g in equilibrium with the baths, which needs g apart");
  }
}

}  // namespace

Matrix extend_one_body(const Matrix& a, bool two_exciton) {
  const int sites = a.rows();
  if (!a.is_square() || sites == 0) throw Error("one-exciton operator must be square, got " + a.shape_string());
  const int first_two = 1 + sites;
  const int n = first_two + (two_exciton ? two_exciton_levels(sites) : 0);
  Matrix full(n, n);
  for (int i = 0; i < sites; ++i)
    for (int j = 0; j < sites; ++j) full(1 + i, 1 + j) = a(i, j);
  if (!two_exciton) return full;
  const auto pairs = site_pairs(sites);
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    const auto [m, n2] = pairs[p];
    const int column = first_two + static_cast<int>(p);
    // c_a^dagger c_m |mn> = |an> (a != n), c_a^dagger c_n |mn> = |am> (a != m).
    for (int x = 0; x < sites; ++x) {
      if (x != n2) full(pair_level(x, n2, sites, first_two), column) += a(x, m);
      if (x != m) full(pair_level(x, m, sites, first_two), column) += a(x, n2);
    }
  }
  return full;
}

ExcitonManifolds build_manifolds(const ExcitonAggregate& aggregate) {
  const Matrix& h1 = aggregate.hamiltonian;
  const int sites = h1.rows();
  if (!h1.is_square() || sites == 0)
    throw Error("aggregate: hamiltonian must be a non-empty square matrix, got " + h1.shape_string());
  if (!h1.is_hermitian()) throw Error("aggregate: hamiltonian must be Hermitian");
  if (static_cast<int>(aggregate.dipoles.size()) != sites)
    throw Error("aggregate: " + std::to_string(aggregate.dipoles.size()) + " dipoles for " + std::to_string(sites) +
                " sites");
  const bool f = aggregate.two_exciton && sites >= 2;
  Matrix h = extend_one_body(h1, f);
  const int first_two = 1 + sites;
  for (int p = first_two; p < h.rows(); ++p) h(p, p) += aggregate.biexciton_shift;

  std::vector<Bath> baths;
  for (std::size_t b = 0; b < aggregate.baths.size(); ++b) {
    const Bath& bath = aggregate.baths[b];
    const std::string name = "aggregate: bath " + std::to_string(b);
    if (bath.is_fermionic()) throw Error(name + " is fermionic; an exciton's baths are bosonic");
    if (bath.coupling().rows() != sites || bath.coupling().cols() != sites)
      throw Error(name + ": coupling operator is " + bath.coupling().shape_string() + " but there are " +
                  std::to_string(sites) + " sites");
    baths.push_back(bath.with_coupling(extend_one_body(bath.coupling(), f)));
  }

  ExcitonManifolds m{Model(std::move(h), std::move(baths)),
                     sites,
                     f,
                     {},
                     {},
                     f ? site_pairs(sites) : std::vector<std::pair<int, int>>{}};
  const int n = m.dimension();
  for (int c = 0; c < 3; ++c) {
    m.raise_ground[c] = Matrix(n, n);
    m.raise_one[c] = Matrix(n, n);
    for (int s = 0; s < sites; ++s) m.raise_ground[c](1 + s, 0) = aggregate.dipoles[s][c];
    if (!f) continue;
    // mu+ = sum_a d_a c_a^dagger: |m> -> |am> for a != m.
    for (int s = 0; s < sites; ++s)
      for (int a = 0; a < sites; ++a)
        if (a != s) m.raise_one[c](pair_level(a, s, sites, first_two), 1 + s) += aggregate.dipoles[a][c];
  }
  return m;
}

ExcitonManifolds explicit_manifolds(Model model, int sites, std::array<Matrix, 3> raise_ground,
                                    std::array<Matrix, 3> raise_one) {
  const int n = model.dimension();
  if (sites < 1) throw Error("manifolds: sites must be >= 1, got " + std::to_string(sites));
  const int first_two = 1 + sites;
  if (n != first_two && n != first_two + two_exciton_levels(sites))
    throw Error("manifolds: the model has " + std::to_string(n) + " levels, but " + std::to_string(sites) +
                " sites make " + std::to_string(first_two) + " (g and one exciton) or " +
                std::to_string(first_two + two_exciton_levels(sites)) + " (with two excitons)");
  const bool f = n > first_two;
  if (model.is_driven()) throw Error("manifolds: the model has drives; a response's model is static");
  require_ground_apart(model.hamiltonian(), "manifolds: the hamiltonian", true);
  for (std::size_t b = 0; b < model.baths().size(); ++b) {
    if (model.baths()[b].is_fermionic()) throw Error("manifolds: bath " + std::to_string(b) + " is fermionic");
    require_ground_apart(model.baths()[b].coupling(), "manifolds: bath " + std::to_string(b), false);
  }
  for (std::size_t l = 0; l < model.lindblad().size(); ++l)
    require_ground_apart(model.lindblad()[l].op, "manifolds: lindblad " + std::to_string(l), false);
  const char* axis = "xyz";
  for (int c = 0; c < 3; ++c) {
    const std::string suffix = std::string(" (") + axis[c] + ")";
    if (raise_ground[c].rows() == 0) raise_ground[c] = Matrix(n, n);
    if (raise_one[c].rows() == 0) raise_one[c] = Matrix(n, n);
    if (raise_ground[c].rows() != n || raise_ground[c].cols() != n || raise_one[c].rows() != n ||
        raise_one[c].cols() != n)
      throw Error("manifolds: dipole operators must be " + std::to_string(n) + "x" + std::to_string(n) + suffix);
    require_block(raise_ground[c], 1, first_two, 0, 1, "manifolds: the dipole from g" + suffix);
    require_block(raise_one[c], first_two, f ? n : first_two, 1, first_two,
                  "manifolds: the dipole from the one-exciton manifold" + suffix);
  }
  return ExcitonManifolds{std::move(model),
                          sites,
                          f,
                          std::move(raise_ground),
                          std::move(raise_one),
                          f ? site_pairs(sites) : std::vector<std::pair<int, int>>{}};
}

std::optional<ExcitonManifolds> without_two_excitons(const ExcitonManifolds& m) {
  if (!m.two_exciton) return std::nullopt;
  const int kept = m.first_two_exciton(), n = m.dimension();
  auto separable = [&](const Matrix& op) {
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if ((i < kept) != (j < kept) && op(i, j) != complex(0.0)) return false;
    return true;
  };
  auto block = [&](const Matrix& op) { return op.block(0, 0, kept, kept); };
  if (!separable(m.model.hamiltonian())) return std::nullopt;
  std::vector<Bath> baths;
  for (const Bath& bath : m.model.baths()) {
    if (!separable(bath.coupling())) return std::nullopt;
    baths.push_back(bath.with_coupling(block(bath.coupling())));
  }
  Model model(block(m.model.hamiltonian()), std::move(baths));
  for (const Lindblad& term : m.model.lindblad()) {
    if (!separable(term.op)) return std::nullopt;
    model.add_lindblad(block(term.op), term.rate);
  }
  std::array<Matrix, 3> raise_ground, raise_one;
  for (int c = 0; c < 3; ++c) {
    raise_ground[c] = block(m.raise_ground[c]);
    raise_one[c] = Matrix(kept, kept);
  }
  return ExcitonManifolds{std::move(model), m.sites, false, std::move(raise_ground), std::move(raise_one), {}};
}

}  // namespace heom
