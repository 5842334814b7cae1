// ADO enumeration and neighbour tables.
#include "heom/hierarchy/hierarchy.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

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

namespace {

/// The largest value of an entry with this cap: the cap, or the depth where there is none (0) or the
/// cap is deeper.
int entry_cap(int max_excitation, int depth) {
  return max_excitation > 0 && max_excitation < depth ? max_excitation : depth;
}

/// Row k of the result ([K + 1][L + 1]) counts the labels of exponents k..K-1 with sum <= b for each
/// budget b, entries capped (0: by the depth alone); saturating.
std::vector<std::uint64_t> labels_within(const std::vector<int>& max_excitations, int depth) {
  const int K = static_cast<int>(max_excitations.size()), width = depth + 1;
  std::vector<std::uint64_t> within(static_cast<std::size_t>(K + 1) * width, 0);
  for (int b = 0; b <= depth; ++b) within[static_cast<std::size_t>(K) * width + b] = 1;
  for (int k = K - 1; k >= 0; --k) {
    const int cap = entry_cap(max_excitations[k], depth);
    for (int b = 0; b <= depth; ++b) {
      std::uint64_t sum = 0;
      for (int m = 0; m <= cap && m <= b; ++m)
        sum = saturating_add(sum, within[static_cast<std::size_t>(k + 1) * width + b - m]);
      within[static_cast<std::size_t>(k) * width + b] = sum;
    }
  }
  return within;
}

/// Calls visit(label) for every label of K = caps.size() entries with entry k at most caps[k] and sum
/// at most depth, `total` of them, in lexicographic order (n_1 the most significant entry): raise the
/// last entry that may rise once every entry after it is zeroed, and zero those after it.
template <class Visit>
void for_each_label(const std::vector<int>& caps, int depth, std::uint64_t total, Visit&& visit) {
  const int K = static_cast<int>(caps.size());
  std::vector<int> n(K, 0);
  int level = 0;
  if (total > 0) visit(n.data());
  for (std::uint64_t a = 1; a < total; ++a) {
    int p = K - 1, suffix = 0;
    while (n[p] >= caps[p] || level - suffix + 1 > depth) suffix += n[p--];
    for (int j = p + 1; j < K; ++j) n[j] = 0;
    ++n[p];
    level += 1 - suffix;
    visit(n.data());
  }
}

/// Each entry's largest value (entry_cap).
std::vector<int> effective_caps(const std::vector<int>& max_excitations, int depth) {
  std::vector<int> caps(max_excitations.size());
  for (std::size_t k = 0; k < caps.size(); ++k) caps[k] = entry_cap(max_excitations[k], depth);
  return caps;
}

/// The most labels a truncation visits: it enumerates the whole triangle (about 2^32 labels take
/// minutes), so that deeper ones are refused at once rather than walked for hours.
constexpr std::uint64_t most_labels_visited = std::uint64_t(1) << 32;

void check_truncation(const ImportanceTruncation& truncation, std::size_t num_exponents, std::uint64_t labels,
                      int depth) {
  if (!(truncation.threshold >= 0.0) || !std::isfinite(truncation.threshold))
    throw Error("hierarchy: the truncation threshold must be finite and >= 0, got " +
                std::to_string(truncation.threshold));
  if (truncation.active() && truncation.weights.size() != num_exponents)
    throw Error("hierarchy: a truncation needs one weight per exponent: " + std::to_string(num_exponents) +
                " exponents, " + std::to_string(truncation.weights.size()) + " weights");
  if (truncation.active() && labels > most_labels_visited)
    throw Error("hierarchy: an importance threshold visits every label up to the depth, and " +
                std::to_string(num_exponents) + " exponents at depth " + std::to_string(depth) + " have " +
                (labels == UINT64_MAX ? std::string("more than 2^64") : std::to_string(labels)) +
                " (at most 2^32); lower the depth");
}

}  // namespace

double ImportanceTruncation::importance(const int* label) const {
  // [0]: bosonic excitations, [1]: fermionic ones.
  double value[2] = {1.0, 1.0}, rate_sum[2] = {0.0, 0.0};
  for (std::size_t k = 0; k < weights.size(); ++k) {
    const ExponentWeight& w = weights[k];
    const int f = w.fermionic ? 1 : 0;
    for (int e = 0; e < label[k]; ++e) {
      if (!(w.rate > 0.0)) return std::numeric_limits<double>::infinity();
      rate_sum[f] += w.rate;
      value[f] *= w.magnitude / (w.rate * rate_sum[f]);
    }
  }
  return value[0] * value[1];
}

bool ImportanceTruncation::keeps(const int* label) const {
  if (!active()) return true;
  int excitations[2] = {0, 0};
  for (std::size_t k = 0; k < weights.size(); ++k) excitations[weights[k].fermionic ? 1 : 0] += label[k];
  if (excitations[0] < 2 && excitations[1] < 2) return true;
  return importance(label) >= threshold;
}

std::uint64_t Hierarchy::count(const std::vector<int>& max_excitations, int depth) {
  if (depth < 0) return 0;
  return labels_within(max_excitations, depth)[0 * (depth + 1) + depth];
}

std::uint64_t Hierarchy::count(const std::vector<int>& max_excitations, int depth,
                               const ImportanceTruncation& truncation) {
  const std::uint64_t whole = count(max_excitations, depth);
  if (!truncation.active() || whole == 0) return whole;
  check_truncation(truncation, max_excitations.size(), whole, depth);
  std::uint64_t kept = 0;
  for_each_label(effective_caps(max_excitations, depth), depth, whole,
                 [&](const int* n) { kept += truncation.keeps(n) ? 1 : 0; });
  return kept;
}

Hierarchy::Hierarchy(int num_exponents, int depth)
    : Hierarchy(std::vector<int>(num_exponents > 0 ? num_exponents : 0, 0), depth) {
  if (num_exponents < 0)
    throw Error("hierarchy: number of exponents must be >= 0, got " + std::to_string(num_exponents));
}

Hierarchy::Hierarchy(std::vector<int> max_excitations, int depth, ImportanceTruncation truncation)
    : m_num_exponents(static_cast<int>(max_excitations.size())),
      m_depth(depth),
      m_max_excitations(std::move(max_excitations)),
      m_truncation(std::move(truncation)) {
  if (depth < 0) throw Error("hierarchy: depth must be >= 0, got " + std::to_string(depth));
  for (std::size_t k = 0; k < m_max_excitations.size(); ++k)
    if (m_max_excitations[k] < 0)
      throw Error("hierarchy: exponent " + std::to_string(k) + "'s cap must be >= 0, got " +
                  std::to_string(m_max_excitations[k]));
  const int K = m_num_exponents;
  const std::vector<std::uint64_t> within = labels_within(m_max_excitations, depth);
  m_untruncated_size = within[depth];
  check_truncation(m_truncation, m_max_excitations.size(), m_untruncated_size, depth);
  if (!m_truncation.active() && m_untruncated_size > static_cast<std::uint64_t>(INT_MAX))
    throw Error("hierarchy: " + std::to_string(K) + " exponents at depth " + std::to_string(depth) +
                " give more than 2^31 - 1 ADOs");
  // (Below 2^32 labels no partial sum saturates: each is at most (L + 1) times the count.)
  const int width = depth + 2;
  m_within.assign(static_cast<std::size_t>(K + 1) * width, 0);
  for (int k = 0; k <= K; ++k)
    for (int b = 0; b <= depth; ++b)
      m_within[static_cast<std::size_t>(k) * width + b + 1] =
          m_within[static_cast<std::size_t>(k) * width + b] + within[static_cast<std::size_t>(k) * (depth + 1) + b];

  // The labels in lexicographic order; a truncation keeps some, and records their ranks.
  if (!m_truncation.active()) m_labels.reserve(static_cast<std::size_t>(m_untruncated_size) * K);
  std::int64_t whole_rank = 0;
  for_each_label(effective_caps(m_max_excitations, depth), depth, m_untruncated_size, [&](const int* n) {
    if (m_truncation.keeps(n)) {
      if (m_labels.size() / (K > 0 ? K : 1) >= static_cast<std::size_t>(INT_MAX))
        throw Error("hierarchy: the truncation keeps more than 2^31 - 1 ADOs");
      m_labels.insert(m_labels.end(), n, n + K);
      if (m_truncation.active()) m_kept_ranks.push_back(whole_rank);
    }
    ++whole_rank;
  });
  m_size = m_truncation.active() ? static_cast<int>(m_kept_ranks.size()) : static_cast<int>(m_untruncated_size);
  if (m_truncation.active() && m_kept_ranks.size() == m_untruncated_size) m_kept_ranks.clear();  // kept all

  m_next.assign(m_labels.size(), -1);
  m_prev.assign(m_labels.size(), -1);
  std::vector<int> neighbour(K);
  for (int a = 0; a < m_size; ++a) {
    const int* label = m_labels.data() + index(a, 0);  // (K may be 0: no element to index)
    neighbour.assign(label, label + K);
    const std::int64_t own = rank(label);
    if (index_of_rank(own) != a)
      throw Error("hierarchy: internal error, rank of ADO " + std::to_string(a) + " is " + std::to_string(own));
    const bool at_depth = this->level(a) == depth;
    for (int k = 0; k < K; ++k) {
      if (!at_depth && label[k] < cap(k)) {
        ++neighbour[k];
        m_next[index(a, k)] = index_of_rank(rank(neighbour.data()));
        --neighbour[k];
      }
      if (label[k] > 0) {
        --neighbour[k];
        m_prev[index(a, k)] = index_of_rank(rank(neighbour.data()));
        ++neighbour[k];
      }
    }
  }
}

int Hierarchy::index_of_rank(std::int64_t rank) const {
  if (!truncated()) return static_cast<int>(rank);
  const auto found = std::lower_bound(m_kept_ranks.begin(), m_kept_ranks.end(), rank);
  return found != m_kept_ranks.end() && *found == rank ? static_cast<int>(found - m_kept_ranks.begin()) : -1;
}

int Hierarchy::cap(int k) const { return entry_cap(m_max_excitations[k], m_depth); }

std::int64_t Hierarchy::rank(const int* label) const {
  // Labels before n: for each position k, those that agree before k and have a smaller entry m < n_k
  // there; the entries after k then sum to at most budget - m. Summed over m, a difference of the
  // partial sums of row k + 1.
  const int width = m_depth + 2;
  std::int64_t r = 0;
  int budget = m_depth;
  for (int k = 0; k < m_num_exponents; ++k) {
    const int nk = label[k];
    if (nk > 0) {
      const std::uint64_t* row = m_within.data() + static_cast<std::size_t>(k + 1) * width;
      r += static_cast<std::int64_t>(row[budget + 1] - row[budget - nk + 1]);
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
  for (int k = 0; k < m_num_exponents; ++k) {
    if (label[k] < 0 || label[k] > cap(k)) return -1;
    s += label[k];
  }
  if (s > m_depth) return -1;
  return index_of_rank(rank(label.data()));
}

}  // namespace heom
