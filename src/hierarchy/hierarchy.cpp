// ADO enumeration and neighbour tables.
#include "heom/hierarchy/hierarchy.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <optional>
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

/// The label after n (K = caps.size() entries, entry k at most caps[k], sum `level` at most depth) in
/// lexicographic order (n_1 the most significant entry), and its level: raise the last entry that
/// may rise once every entry after it is zeroed, and zero those after it.
void advance_label(const std::vector<int>& caps, int depth, int* n, int& level) {
  int p = static_cast<int>(caps.size()) - 1, suffix = 0;
  while (n[p] >= caps[p] || level - suffix + 1 > depth) suffix += n[p--];
  for (int j = p + 1; j < static_cast<int>(caps.size()); ++j) n[j] = 0;
  ++n[p];
  level += 1 - suffix;
}

/// Calls visit(label) for the first `total` labels of those (all of them: the count), in order.
template <class Visit>
void for_each_label(const std::vector<int>& caps, int depth, std::uint64_t total, Visit&& visit) {
  std::vector<int> n(caps.size(), 0);
  int level = 0;
  for (std::uint64_t a = 0; a < total; ++a) {
    if (a > 0) advance_label(caps, depth, n.data(), level);
    visit(static_cast<const int*>(n.data()));
  }
}

/// Each entry's largest value (entry_cap).
std::vector<int> effective_caps(const std::vector<int>& max_excitations, int depth) {
  std::vector<int> caps(max_excitations.size());
  for (std::size_t k = 0; k < caps.size(); ++k) caps[k] = entry_cap(max_excitations[k], depth);
  return caps;
}

/// The most label prefixes a truncation's walk visits (KeptLabels): about 2^32 take minutes, so that
/// hierarchies whose truncation cannot be bounded are refused at once rather than walked for hours.
constexpr std::uint64_t most_prefixes_visited = std::uint64_t(1) << 32;

void check_truncation(const ImportanceTruncation& truncation, std::size_t num_exponents, std::uint64_t labels,
                      int depth) {
  if (!(truncation.threshold >= 0.0) || !std::isfinite(truncation.threshold))
    throw Error("hierarchy: the truncation threshold must be finite and >= 0, got " +
                std::to_string(truncation.threshold));
  if (truncation.active() && truncation.weights.size() != num_exponents)
    throw Error("hierarchy: a truncation needs one weight per exponent: " + std::to_string(num_exponents) +
                " exponents, " + std::to_string(truncation.weights.size()) + " weights");
  // (Ranks, and the partial sums of the label counts that give them, fit 64 bits.)
  if (truncation.active() && (labels == saturated || labels > saturated / static_cast<std::uint64_t>(depth + 2)))
    throw Error("hierarchy: " + std::to_string(num_exponents) + " exponents at depth " + std::to_string(depth) +
                " have more labels than an importance threshold can rank (2^64 / (depth + 2)); lower the depth");
}

/// The labels an importance truncation keeps, in order, each with its rank among all the labels up to
/// the depth. A walk over the labels' prefixes (entries 0 .. k - 1 fixed) that skips a prefix whose
/// completions the truncation keeps none of: where the prefix has two excitations of one kind, every
/// completion's importance is its own times the factors of the excitations added, each at most
/// max |c_j| / Re v_j over the exponents left divided by the rate sum reached, so the product has a
/// bound; where the bound is below the threshold the whole subtree goes. The labels kept are decided
/// by ImportanceTruncation::keeps itself; the walk's cost is about the labels kept, not all of them.
class KeptLabels {
 public:
  KeptLabels(const std::vector<int>& caps, int depth, const std::vector<std::uint64_t>& within,
             const ImportanceTruncation& truncation)
      : m_caps(caps), m_depth(depth), m_within(within), m_truncation(truncation), m_label(caps.size(), 0) {
    // Per exponent k, what the exponents k.. that may still be excited allow a completion's factors.
    const int K = static_cast<int>(caps.size());
    m_suffix.assign(static_cast<std::size_t>(K + 1), Suffix{});
    for (int k = K - 1; k >= 0; --k) {
      Suffix s = m_suffix[k + 1];
      const ExponentWeight& w = truncation.weights[k];
      const int f = w.fermionic ? 1 : 0;
      if (caps[k] > 0) {
        if (!(w.rate > 0.0)) s.unbounded = true;
        s.ratio[f] = std::max(s.ratio[f], w.rate > 0.0 ? w.magnitude / w.rate : 0.0);
        s.least_rate[f] = std::min(s.least_rate[f], w.rate);
      }
      m_suffix[k] = s;
    }
  }

  /// Calls kept(label, rank) for each kept label, in order; false, having stopped, once it has visited
  /// `most_prefixes` prefixes.
  template <class Kept>
  bool walk(std::uint64_t most_prefixes, Kept&& kept) {
    m_visited = 0;
    m_most = most_prefixes;
    return descend(0, m_depth, 0, Partial{}, kept);
  }

 private:
  /// A prefix's importance so far, as ImportanceTruncation::importance computes it ([0] bosonic, [1]
  /// fermionic).
  struct Partial {
    double value[2] = {1.0, 1.0}, rate_sum[2] = {0.0, 0.0};
    int excitations[2] = {0, 0};
    bool unbounded = false;  // an excitation of a rate without an estimate: kept, whatever follows
  };
  struct Suffix {
    double ratio[2] = {0.0, 0.0};  // the largest |c| / Re v
    double least_rate[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    bool unbounded = false;
  };

  template <class Kept>
  bool descend(int k, int budget, std::uint64_t rank, const Partial& p, Kept& kept) {
    if (++m_visited > m_most) return false;
    const int K = static_cast<int>(m_caps.size());
    if (k == K) {
      if (m_truncation.keeps(m_label.data())) kept(static_cast<const int*>(m_label.data()), rank);
      return true;
    }
    const ExponentWeight& w = m_truncation.weights[k];
    const int f = w.fermionic ? 1 : 0;
    Partial child = p;
    for (int m = 0; m <= std::min(m_caps[k], budget); ++m) {
      if (m > 0) {  // (one more excitation of exponent k, as importance() adds it)
        if (!(w.rate > 0.0)) child.unbounded = true;
        child.rate_sum[f] += w.rate;
        child.value[f] *= w.magnitude / (w.rate * child.rate_sum[f]);
        ++child.excitations[f];
      }
      m_label[k] = m;
      if (!none_kept(k + 1, budget - m, child) && !descend(k + 1, budget - m, rank, child, kept)) return false;
      rank += m_within[static_cast<std::size_t>(k + 1) * (m_depth + 1) + (budget - m)];
    }
    m_label[k] = 0;
    return true;
  }

  /// Whether no completion, by exponents k.. with at most `budget` excitations, of a prefix so far
  /// `p` is kept.
  bool none_kept(int k, int budget, const Partial& p) const {
    if (p.unbounded || (p.excitations[0] < 2 && p.excitations[1] < 2)) return false;
    const Suffix& s = m_suffix[k];
    if (s.unbounded && budget > 0) return false;
    double bound = p.value[0] * p.value[1];
    for (int f = 0; f < 2; ++f)
      for (int i = 1; i <= budget; ++i) {
        const double factor = s.ratio[f] / (p.rate_sum[f] + i * s.least_rate[f]);
        if (!(factor > 1.0)) break;  // (the rate sum only grows: no later factor exceeds 1 either)
        bound *= factor;
      }
    // (A margin for rounding: the bound's products and the completions' are not rounded alike.)
    return bound < m_truncation.threshold * (1.0 - 1e-9);
  }

  const std::vector<int>& m_caps;
  int m_depth;
  const std::vector<std::uint64_t>& m_within;
  const ImportanceTruncation& m_truncation;
  std::vector<int> m_label;
  std::vector<Suffix> m_suffix;
  std::uint64_t m_visited = 0, m_most = 0;
};

/// "an importance threshold of X keeps too many labels ...": a walk that did not finish.
[[noreturn]] void refuse_walk(const ImportanceTruncation& truncation, std::size_t num_exponents, int depth,
                              std::uint64_t most) {
  throw Error("hierarchy: the importance threshold " + format_number(truncation.threshold, 6) + " bounds too few of " +
              std::to_string(num_exponents) + " exponents' labels at depth " + std::to_string(depth) +
              " to count those it keeps within " + std::to_string(most) + " steps; raise it or lower the depth");
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
  const std::optional<std::uint64_t> kept = count_within(max_excitations, depth, truncation, most_prefixes_visited);
  if (!kept) refuse_walk(truncation, max_excitations.size(), depth, most_prefixes_visited);
  return *kept;
}

std::optional<std::uint64_t> Hierarchy::count_within(const std::vector<int>& max_excitations, int depth,
                                                     const ImportanceTruncation& truncation, std::uint64_t steps) {
  const std::uint64_t whole = count(max_excitations, depth);
  if (!truncation.active() || whole == 0) return whole;
  check_truncation(truncation, max_excitations.size(), whole, depth);
  std::uint64_t kept = 0;
  const std::vector<int> caps = effective_caps(max_excitations, depth);
  const std::vector<std::uint64_t> within = labels_within(max_excitations, depth);
  KeptLabels labels(caps, depth, within, truncation);
  if (!labels.walk(steps, [&](const int*, std::uint64_t) { ++kept; })) return std::nullopt;
  return kept;
}

Hierarchy::Hierarchy(int num_exponents, int depth)
    : Hierarchy(std::vector<int>(num_exponents > 0 ? num_exponents : 0, 0), depth) {
  if (num_exponents < 0)
    throw Error("hierarchy: number of exponents must be >= 0, got " + std::to_string(num_exponents));
}

Hierarchy::Hierarchy(std::vector<int> max_excitations, int depth, ImportanceTruncation truncation)
    : Hierarchy(std::move(max_excitations), depth, std::move(truncation), 0, -1) {}

Hierarchy Hierarchy::without_tables(std::vector<int> max_excitations, int depth, ImportanceTruncation truncation) {
  return Hierarchy(std::move(max_excitations), depth, std::move(truncation), 0, 0);
}

Hierarchy Hierarchy::holding(int first, int last) const { return Hierarchy(*this, first, last); }

Hierarchy::Hierarchy(const Hierarchy& counts, int first, int last)
    : m_num_exponents(counts.m_num_exponents),
      m_depth(counts.m_depth),
      m_size(counts.m_size),
      m_max_excitations(counts.m_max_excitations),
      m_caps(counts.m_caps),
      m_within(counts.m_within),
      m_truncation(counts.m_truncation),
      m_untruncated_size(counts.m_untruncated_size),
      m_kept_ranks(counts.m_kept_ranks) {
  hold(first, last);
}

Hierarchy::Hierarchy(std::vector<int> max_excitations, int depth, ImportanceTruncation truncation, int first, int last)
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
  m_caps = effective_caps(m_max_excitations, depth);
  const std::vector<std::uint64_t> within = labels_within(m_max_excitations, depth);
  m_untruncated_size = within[depth];
  check_truncation(m_truncation, m_max_excitations.size(), m_untruncated_size, depth);
  if (!m_truncation.active() && m_untruncated_size > static_cast<std::uint64_t>(INT_MAX))
    throw Error("hierarchy: " + std::to_string(K) + " exponents at depth " + std::to_string(depth) +
                " give more than 2^31 - 1 ADOs");
  // (No partial sum saturates: each is at most (L + 1) times the count, which check_truncation bounds
  // for a truncation and INT_MAX bounds otherwise.)
  const int width = depth + 2;
  m_within.assign(static_cast<std::size_t>(K + 1) * width, 0);
  for (int k = 0; k <= K; ++k)
    for (int b = 0; b <= depth; ++b)
      m_within[static_cast<std::size_t>(k) * width + b + 1] =
          m_within[static_cast<std::size_t>(k) * width + b] + within[static_cast<std::size_t>(k) * (depth + 1) + b];

  // A truncation keeps some labels, and records their ranks.
  m_size = static_cast<int>(std::min<std::uint64_t>(m_untruncated_size, INT_MAX));
  if (m_truncation.active()) {
    KeptLabels labels(m_caps, depth, within, m_truncation);
    const bool walked = labels.walk(most_prefixes_visited, [&](const int*, std::uint64_t rank) {
      if (m_kept_ranks.size() >= static_cast<std::size_t>(INT_MAX))
        throw Error("hierarchy: the truncation keeps more than 2^31 - 1 ADOs");
      m_kept_ranks.push_back(static_cast<std::int64_t>(rank));
    });
    if (!walked) refuse_walk(m_truncation, m_max_excitations.size(), depth, most_prefixes_visited);
    m_size = static_cast<int>(m_kept_ranks.size());
    if (m_kept_ranks.size() == m_untruncated_size) m_kept_ranks.clear();  // kept all
  }
  hold(first, last < 0 ? m_size : last);
}

void Hierarchy::hold(int first, int last) {
  if (first < 0 || last < first || last > m_size)
    throw Error("hierarchy: ADOs " + std::to_string(first) + ".." + std::to_string(last) + " are not a range of its " +
                std::to_string(m_size));
  const int K = m_num_exponents;
  m_held_first = first;
  m_held_last = last;
  const std::size_t rows = static_cast<std::size_t>(last - first) * K;
  m_labels.assign(rows, 0);
  m_next.assign(rows, -1);
  m_prev.assign(rows, -1);
  if (first == last || K == 0) return;
  // The first label from its rank, then (untruncated) each next one by the lexicographic successor;
  // a truncation's from their ranks.
  std::vector<int> n(K, 0);
  unrank(rank_of(first), n.data());
  int level = 0;
  for (int k = 0; k < K; ++k) level += n[k];
  for (int a = first; a < last; ++a) {
    if (a > first && truncated()) {
      unrank(m_kept_ranks[a], n.data());
    } else if (a > first) {
      advance_label(m_caps, m_depth, n.data(), level);
    }
    std::copy(n.begin(), n.end(), m_labels.begin() + index(a, 0));
    neighbours_of_label(n.data(), m_next.data() + index(a, 0), m_prev.data() + index(a, 0));
  }
  if (rank(n.data()) != rank_of(last - 1))
    throw Error("hierarchy: internal error, the label of ADO " + std::to_string(last - 1) + " is not at its rank");
}

std::uint64_t Hierarchy::labels_after(int k, int budget) const {
  const std::uint64_t* row = m_within.data() + static_cast<std::size_t>(k) * (m_depth + 2);
  return row[budget + 1] - row[budget];
}

void Hierarchy::unrank(std::int64_t rank, int* label) const {
  // Entry k is the smallest m for which the labels that agree before k and have an entry below m
  // there, or m there and any completion, reach past `rank`.
  std::uint64_t r = static_cast<std::uint64_t>(rank);
  int budget = m_depth;
  for (int k = 0; k < m_num_exponents; ++k) {
    int m = 0;
    for (std::uint64_t c; r >= (c = labels_after(k + 1, budget - m)); ++m) r -= c;
    label[k] = m;
    budget -= m;
  }
}

void Hierarchy::neighbours_of_label(int* label, int* next, int* prev) const {
  const int K = m_num_exponents;
  int level = 0;
  for (int k = 0; k < K; ++k) level += label[k];
  for (int k = 0; k < K; ++k) {
    next[k] = prev[k] = -1;
    if (level < m_depth && label[k] < cap(k)) {
      ++label[k];
      next[k] = index_of_rank(rank(label));
      --label[k];
    }
    if (label[k] > 0) {
      --label[k];
      prev[k] = index_of_rank(rank(label));
      ++label[k];
    }
  }
}

void Hierarchy::neighbours(int ado, int* next, int* prev) const {
  if (holds(ado)) {
    std::copy(m_next.begin() + index(ado, 0), m_next.begin() + index(ado, 0) + m_num_exponents, next);
    std::copy(m_prev.begin() + index(ado, 0), m_prev.begin() + index(ado, 0) + m_num_exponents, prev);
    return;
  }
  std::vector<int> n = label(ado);
  neighbours_of_label(n.data(), next, prev);
}

std::uint64_t Hierarchy::links_before(int ado) const {
  if (ado < 0 || ado > m_size) throw Error("hierarchy: ADO " + std::to_string(ado) + " of " + std::to_string(m_size));
  const int K = m_num_exponents, L = m_depth;
  if (truncated()) {
    std::uint64_t links = 0;
    std::vector<int> next(K), prev(K);
    for (int a = 0; a < ado; ++a) {
      neighbours(a, next.data(), prev.data());
      for (int k = 0; k < K; ++k) links += (next[k] >= 0) + (prev[k] >= 0);
    }
    return links;
  }
  // A label n has a prev link per nonzero entry, and, below the depth, a next link per entry below
  // its cap. Over the completions of a fixed prefix by exponents j..K-1 summing to exactly s, count
  // them (count), their nonzero entries (nonzero) and their entries at the cap (full):
  const std::size_t width = L + 1;
  std::vector<std::uint64_t> count((K + 1) * width, 0), nonzero((K + 1) * width, 0), full((K + 1) * width, 0);
  auto at = [width](int j, int s) { return static_cast<std::size_t>(j) * width + s; };
  count[at(K, 0)] = 1;
  for (int j = K - 1; j >= 0; --j)
    for (int s = 0; s <= L; ++s)
      for (int m = 0; m <= cap(j) && m <= s; ++m) {
        const std::size_t rest = at(j + 1, s - m);
        count[at(j, s)] += count[rest];
        nonzero[at(j, s)] += nonzero[rest] + (m > 0 ? count[rest] : 0);
        full[at(j, s)] += full[rest] + (m == cap(j) ? count[rest] : 0);
      }
  if (ado == m_size) {
    std::uint64_t links = 0;
    for (int s = 0; s <= L; ++s) links += nonzero[at(0, s)] + (s < L ? K * count[at(0, s)] - full[at(0, s)] : 0);
    return links;
  }
  // The labels before n: for each position k, those that agree with n before k and have m < n_k there.
  std::vector<int> n(K);
  unrank(ado, n.data());
  std::uint64_t links = 0;
  int level = 0, nonzero_before = 0, full_before = 0;  // of n_0 .. n_{k-1}
  for (int k = 0; k < K; ++k) {
    for (int m = 0; m < n[k]; ++m) {
      const int prefix_level = level + m, budget = L - prefix_level;
      const std::uint64_t prefix_nonzero = nonzero_before + (m > 0), prefix_full = full_before + (m == cap(k));
      for (int s = 0; s <= budget; ++s) {
        const std::size_t rest = at(k + 1, s);
        links += count[rest] * prefix_nonzero + nonzero[rest];
        if (s < budget) links += count[rest] * (K - prefix_full) - full[rest];
      }
    }
    level += n[k];
    nonzero_before += n[k] > 0;
    full_before += n[k] == cap(k);
  }
  return links;
}

int Hierarchy::neighbour(int ado, int k, int step) const {
  std::vector<int> next(m_num_exponents), prev(m_num_exponents);
  neighbours(ado, next.data(), prev.data());
  return step > 0 ? next[k] : prev[k];
}

int Hierarchy::index_of_rank(std::int64_t rank) const {
  if (!truncated()) return static_cast<int>(rank);
  const auto found = std::lower_bound(m_kept_ranks.begin(), m_kept_ranks.end(), rank);
  return found != m_kept_ranks.end() && *found == rank ? static_cast<int>(found - m_kept_ranks.begin()) : -1;
}

void Hierarchy::for_each_label(const std::function<void(const int*)>& visit) const {
  if (!truncated()) return ::heom::for_each_label(m_caps, m_depth, static_cast<std::uint64_t>(m_size), visit);
  std::vector<int> n(m_num_exponents, 0);
  for (std::int64_t rank : m_kept_ranks) {
    unrank(rank, n.data());
    visit(n.data());
  }
}

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
  if (holds(ado))
    return std::vector<int>(m_labels.begin() + index(ado, 0), m_labels.begin() + index(ado, 0) + m_num_exponents);
  if (ado < 0 || ado >= m_size) throw Error("hierarchy: ADO " + std::to_string(ado) + " of " + std::to_string(m_size));
  std::vector<int> n(m_num_exponents);
  unrank(rank_of(ado), n.data());
  return n;
}

int Hierarchy::level(int ado) const {
  int s = 0;
  if (holds(ado))
    for (int k = 0; k < m_num_exponents; ++k) s += m_labels[index(ado, k)];
  else
    for (int nk : label(ado)) s += nk;
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
