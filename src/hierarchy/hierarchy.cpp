// ADO enumeration and neighbour tables.
#include "heom/hierarchy/hierarchy.hpp"

#include <climits>
#include <limits>
#include <string>

#include "heom/core/error.hpp"

namespace heom {
namespace {

constexpr std::uint64_t saturated = std::numeric_limits<std::uint64_t>::max();

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return a > saturated - b ? saturated : a + b; }

}  // namespace

std::uint64_t Hierarchy::count(int num_exponents, int depth) {
  if (num_exponents < 0 || depth < 0) return 0;
  // C(K + L, k) with k = min(K, L), row by row of Pascal's triangle so that nothing overflows
  // before the result does (the result saturates).
  const int k = num_exponents < depth ? num_exponents : depth;
  std::vector<std::uint64_t> row(k + 1, 0);
  row[0] = 1;
  for (int r = 1; r <= num_exponents + depth; ++r)
    for (int j = (r < k ? r : k); j >= 1; --j) row[j] = saturating_add(row[j], row[j - 1]);
  return row[k];
}

Hierarchy::Hierarchy(int num_exponents, int depth) : m_num_exponents(num_exponents), m_depth(depth) {
  if (num_exponents < 0)
    throw Error("hierarchy: number of exponents must be >= 0, got " + std::to_string(num_exponents));
  if (depth < 0) throw Error("hierarchy: depth must be >= 0, got " + std::to_string(depth));
  const std::uint64_t n_ados = count(num_exponents, depth);
  if (n_ados > static_cast<std::uint64_t>(INT_MAX))
    throw Error("hierarchy: " + std::to_string(num_exponents) + " exponents at depth " + std::to_string(depth) +
                " give more than 2^31 - 1 ADOs");
  m_size = static_cast<int>(n_ados);
  const int K = num_exponents;

  const int rows = K + depth + 2;
  m_binomial.assign(static_cast<std::size_t>(rows) * rows, 0);
  for (int r = 0; r < rows; ++r) {
    m_binomial[static_cast<std::size_t>(r) * rows] = 1;
    for (int c = 1; c <= r; ++c)
      m_binomial[static_cast<std::size_t>(r) * rows + c] =
          saturating_add(m_binomial[static_cast<std::size_t>(r - 1) * rows + c - 1],
                         m_binomial[static_cast<std::size_t>(r - 1) * rows + c]);
  }

  // Enumerate in lexicographic order: raise the last entry while the level allows; otherwise zero
  // the last non-zero entry and raise the one before it.
  m_labels.assign(static_cast<std::size_t>(m_size) * K, 0);
  std::vector<int> n(K, 0);
  int level = 0;
  for (int a = 1; a < m_size; ++a) {
    if (level < depth) {
      ++n[K - 1];
      ++level;
    } else {
      int p = K - 1;
      while (n[p] == 0) --p;
      level -= n[p] - 1;
      n[p] = 0;
      ++n[p - 1];
    }
    for (int k = 0; k < K; ++k) m_labels[index(a, k)] = n[k];
  }

  m_next.assign(m_labels.size(), -1);
  m_prev.assign(m_labels.size(), -1);
  std::vector<int> neighbour(K);
  for (int a = 0; a < m_size; ++a) {
    const int* label = m_labels.data() + index(a, 0);  // (K may be 0: no element to index)
    neighbour.assign(label, label + K);
    const std::int64_t own = rank(label);
    if (own != a)
      throw Error("hierarchy: internal error, rank of ADO " + std::to_string(a) + " is " + std::to_string(own));
    const bool at_depth = this->level(a) == depth;
    for (int k = 0; k < K; ++k) {
      if (!at_depth) {
        ++neighbour[k];
        m_next[index(a, k)] = static_cast<int>(rank(neighbour.data()));
        --neighbour[k];
      }
      if (label[k] > 0) {
        --neighbour[k];
        m_prev[index(a, k)] = static_cast<int>(rank(neighbour.data()));
        ++neighbour[k];
      }
    }
  }
}

std::uint64_t Hierarchy::labels_within(int entries, int budget) const {
  const int rows = m_num_exponents + m_depth + 2;
  return m_binomial[static_cast<std::size_t>(entries + budget) * rows + entries];
}

std::int64_t Hierarchy::rank(const int* label) const {
  // Labels before n: for each position k, those that agree before k and have a smaller entry m < n_k
  // there; the remaining K-1-k entries then sum to at most L - s_k - m. Summing C(r + b, r) over m
  // telescopes (hockey stick) to C(r + B + 1, r + 1) - C(r + B - n_k + 1, r + 1).
  std::int64_t r = 0;
  int budget = m_depth;
  for (int k = 0; k < m_num_exponents; ++k) {
    const int nk = label[k];
    if (nk > 0) {
      const int rest = m_num_exponents - 1 - k;
      r += static_cast<std::int64_t>(labels_within(rest + 1, budget) - labels_within(rest + 1, budget - nk));
    }
    budget -= nk;
  }
  return r;
}

std::vector<int> Hierarchy::label(int ado) const {
  return std::vector<int>(m_labels.begin() + index(ado, 0), m_labels.begin() + index(ado, 0) + m_num_exponents);
}

int Hierarchy::level(int ado) const {
  int s = 0;
  for (int k = 0; k < m_num_exponents; ++k) s += m_labels[index(ado, k)];
  return s;
}

int Hierarchy::index_of(const std::vector<int>& label) const {
  if (static_cast<int>(label.size()) != m_num_exponents) return -1;
  int s = 0;
  for (int x : label) {
    if (x < 0) return -1;
    s += x;
  }
  if (s > m_depth) return -1;
  return static_cast<int>(rank(label.data()));
}

}  // namespace heom
