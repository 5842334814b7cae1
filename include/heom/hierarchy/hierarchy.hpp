// heom::Hierarchy: the ADO multi-indices n = (n_1..n_K), |n| <= L, their order and neighbours.
#ifndef HEOM_HIERARCHY_HIERARCHY_HPP
#define HEOM_HIERARCHY_HIERARCHY_HPP

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace heom {

/// One exponent as importance truncation weighs it.
struct ExponentWeight {
  double magnitude = 0.0;  ///< |c_k| (|c + i c2| for a combined R and I exponent, as HierarchicalEOM.jl's eta)
  double rate = 0.0;       ///< Re v_k
  bool fermionic = false;
};

/// Importance truncation of a hierarchy (HierarchicalEOM.jl's `threshold`; Shi et al., J. Chem. Phys.
/// 130, 084105 (2009)): an ADO estimated to stay smaller than `threshold` is left out, as if it were
/// zero. The estimate of label n is HierarchicalEOM.jl's importance value: over its excitations in
/// exponent order (n_k times exponent k), with S the running sum of their rates,
///   importance(n) = prod |c_k| / (Re v_k * S),
/// taken over the bosonic and the fermionic excitations separately (each with its own S) and
/// multiplied. ADOs with fewer than two bosonic and fewer than two fermionic excitations are always
/// kept (rho and the first tier, which observables read); so is every ADO with an excitation of a rate
/// whose real part is not positive (no estimate).
struct ImportanceTruncation {
  double threshold = 0.0;               ///< 0: every label (no truncation)
  std::vector<ExponentWeight> weights;  ///< one per exponent (Model::exponent_weights)

  bool active() const { return threshold > 0.0; }
  /// The importance value of a label of weights.size() entries (+infinity where there is no estimate).
  double importance(const int* label) const;
  /// Whether a label is kept.
  bool keeps(const int* label) const;
};

/// All labels n with n_k >= 0 and |n| = sum n_k <= depth, in lexicographic order with n_1 the
/// most significant entry: (0,..,0) first (ADO 0 is the reduced density matrix), then
/// (0,..,0,1), (0,..,0,2), ... This order keeps n +- e_k close for the last exponents, and a
/// contiguous range of ADOs is a good partition of the hierarchy between devices.
///
/// An exponent may also cap its own entry: n_k <= max_excitations[k] (a fermionic exponent's 0/1
/// rule; 0 there means no cap but the depth).
///
/// Importance truncation (ImportanceTruncation) keeps a subset of these labels, in the same order.
///
/// Besides the labels, it holds for every ADO a and exponent k the index of n + e_k (-1 when |n| =
/// depth, n_k is at its cap, or a truncation left n + e_k out) and of n - e_k (-1 when n_k = 0 or a
/// truncation left n - e_k out).
///
/// Those tables may cover a range of ADOs alone (holding()): a device's share of a split hierarchy,
/// so that a rank's host memory grows with its share, not with the hierarchy. Every accessor still
/// answers for every ADO: outside the held range from the label's position in the lexicographic
/// order (the combinatorial number system: O(K L) per ADO), which is what ranks use for their halo.
class Hierarchy {
 public:
  Hierarchy(int num_exponents, int depth);
  /// K = max_excitations.size() exponents, entry k capped at max_excitations[k] when that is > 0;
  /// with a truncation (threshold > 0, one weight per exponent), its kept labels alone.
  Hierarchy(std::vector<int> max_excitations, int depth, ImportanceTruncation truncation = {});

  /// The same hierarchy holding the tables of ADOs [first, last) alone (a device's share); O(last -
  /// first) memory and time, besides a truncation's kept ranks (8 bytes per kept ADO).
  Hierarchy holding(int first, int last) const;
  /// The hierarchy with no tables: its counts, orders and partitions (Partition::balanced), as a
  /// split hierarchy plans its shares before any is built.
  static Hierarchy without_tables(std::vector<int> max_excitations, int depth, ImportanceTruncation truncation = {});

  /// C(K + L, L), the number of ADOs; saturates at UINT64_MAX instead of overflowing.
  static std::uint64_t count(int num_exponents, int depth);
  /// The number of ADOs with capped entries (as the constructor); saturates at UINT64_MAX.
  static std::uint64_t count(const std::vector<int>& max_excitations, int depth);
  /// The number of ADOs a truncation keeps of those (a walk over the labels that skips those its
  /// importance bound drops: about the kept ones' time, no memory per label); the plain count without a
  /// threshold. Throws heom::Error where the walk would take more than 2^32 steps.
  static std::uint64_t count(const std::vector<int>& max_excitations, int depth,
                             const ImportanceTruncation& truncation);
  /// The same within `steps` steps of the walk; nothing where it takes more (for answers bounded in time).
  static std::optional<std::uint64_t> count_within(const std::vector<int>& max_excitations, int depth,
                                                   const ImportanceTruncation& truncation, std::uint64_t steps);

  int num_exponents() const { return m_num_exponents; }
  int depth() const { return m_depth; }
  int size() const { return m_size; }
  /// Each exponent's cap (0: none but the depth).
  const std::vector<int>& max_excitations() const { return m_max_excitations; }
  /// The truncation it was built with (threshold 0: none).
  const ImportanceTruncation& truncation() const { return m_truncation; }
  /// Whether a truncation left labels out.
  bool truncated() const { return !m_kept_ranks.empty(); }
  /// The number of labels before truncation (the whole triangle's count).
  std::uint64_t untruncated_size() const { return m_untruncated_size; }

  /// The ADOs whose tables this hierarchy holds: [held_first(), held_last()).
  int held_first() const { return m_held_first; }
  int held_last() const { return m_held_last; }
  bool holds(int ado) const { return ado >= m_held_first && ado < m_held_last; }

  /// n_k of ADO a (a held ADO's from its table, another's computed).
  int label(int ado, int k) const { return holds(ado) ? m_labels[index(ado, k)] : label(ado)[k]; }
  std::vector<int> label(int ado) const;
  /// |n| of ADO a.
  int level(int ado) const;
  /// The ADO index of a label, or -1 when it is not in the hierarchy (wrong length, negative
  /// entry, deeper than depth(), or left out by the truncation).
  int index_of(const std::vector<int>& label) const;
  /// (For an ADO that is not held, label(a, k), next() and prev() compute its label at every call:
  /// loops over k call label(a) or neighbours() once.)
  /// Index of n + e_k, or -1 when ADO a is at the full depth (or n + e_k was truncated).
  int next(int ado, int k) const { return holds(ado) ? m_next[index(ado, k)] : neighbour(ado, k, +1); }
  /// Index of n - e_k, or -1 when n_k = 0 (or n - e_k was truncated).
  int prev(int ado, int k) const { return holds(ado) ? m_prev[index(ado, k)] : neighbour(ado, k, -1); }
  /// The number of neighbour links (next and prev entries that are not -1) of the ADOs before ADO a
  /// (a = size(): of all). Counted without visiting them (O(K L^2)) when untruncated; a truncated
  /// hierarchy visits them.
  std::uint64_t links_before(int ado) const;
  /// next(ado, k) and prev(ado, k) for every k at once into next[K] and prev[K]: for an ADO that is
  /// not held, one label's work instead of one per neighbour.
  void neighbours(int ado, int* next, int* prev) const;

  /// Calls visit(label) (K ints) for every ADO in order, held or not: O(K) per ADO, no memory per
  /// ADO (a truncated hierarchy's labels are computed from their ranks: O(K L) each).
  void for_each_label(const std::function<void(const int*)>& visit) const;

  /// Flat row-major [held ADOs x K] tables of the held ADOs (row a - held_first()), for copying to a
  /// device.
  const std::vector<int>& labels_table() const { return m_labels; }
  const std::vector<int>& next_table() const { return m_next; }
  const std::vector<int>& prev_table() const { return m_prev; }

 private:
  /// The whole hierarchy's counts and ranks, holding ADOs [first, last) (last < 0: all).
  Hierarchy(std::vector<int> max_excitations, int depth, ImportanceTruncation truncation, int first, int last);
  /// Builds the tables of ADOs [first, last).
  void hold(int first, int last);
  std::size_t index(int ado, int k) const { return static_cast<std::size_t>(ado - m_held_first) * m_num_exponents + k; }
  /// The label of whole-triangle rank `rank` into label[K], O(K L).
  void unrank(std::int64_t rank, int* label) const;
  /// The whole-triangle rank of ADO a.
  std::int64_t rank_of(int ado) const { return truncated() ? m_kept_ranks[ado] : ado; }
  /// next (+1) or prev (-1) of an ADO that is not held.
  int neighbour(int ado, int k, int step) const;
  /// next[K] and prev[K] of a label (changed while it works, and restored: no allocation).
  void neighbours_of_label(int* label, int* next, int* prev) const;
  /// A copy of `counts`' counts, ranks and truncation without its tables (holding()).
  Hierarchy(const Hierarchy& counts, int first, int last);
  /// The number of labels of exponents k..K-1 whose entries sum to at most `budget`.
  std::uint64_t labels_after(int k, int budget) const;
  /// Position of a (valid) label in the lexicographic order of the whole triangle, O(K).
  std::int64_t rank(const int* label) const;
  /// The ADO index of the label of whole-triangle rank `rank`, or -1 when truncated away.
  int index_of_rank(std::int64_t rank) const;
  /// The largest n_k allowed.
  int cap(int k) const { return m_caps[k]; }

  int m_num_exponents;
  int m_depth;
  int m_size;
  int m_held_first = 0, m_held_last = 0;
  std::vector<int> m_max_excitations, m_caps;
  /// [K + 1][L + 2]: entry (k, b + 1) counts the labels of exponents k..K-1 with sum <= b, summed
  /// over the budgets 0..b (entry (k, 0) is 0): the ranks' partial sums.
  std::vector<std::uint64_t> m_within;
  std::vector<int> m_labels, m_next, m_prev;
  ImportanceTruncation m_truncation;
  std::uint64_t m_untruncated_size = 0;
  /// Truncated: the whole-triangle rank of each kept ADO, ascending; empty otherwise.
  std::vector<std::int64_t> m_kept_ranks;
};

}  // namespace heom

#endif
