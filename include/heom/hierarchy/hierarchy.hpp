// heom::Hierarchy: the ADO multi-indices n = (n_1..n_K), |n| <= L, their order and neighbours.
#ifndef HEOM_HIERARCHY_HIERARCHY_HPP
#define HEOM_HIERARCHY_HIERARCHY_HPP

#include <cstdint>
#include <vector>

namespace heom {

/// All labels n with n_k >= 0 and |n| = sum n_k <= depth, in lexicographic order with n_1 the
/// most significant entry: (0,..,0) first (ADO 0 is the reduced density matrix), then
/// (0,..,0,1), (0,..,0,2), ... This order keeps n +- e_k close for the last exponents, and a
/// contiguous range of ADOs is a good partition of the hierarchy between devices.
///
/// An exponent may also cap its own entry: n_k <= max_excitations[k] (a fermionic exponent's 0/1
/// rule; 0 there means no cap but the depth).
///
/// Besides the labels it holds, for every ADO a and exponent k, the index of n + e_k (-1 when
/// |n| = depth or n_k is at its cap) and of n - e_k (-1 when n_k = 0).
class Hierarchy {
 public:
  Hierarchy(int num_exponents, int depth);
  /// K = max_excitations.size() exponents, entry k capped at max_excitations[k] when that is > 0.
  Hierarchy(std::vector<int> max_excitations, int depth);

  /// C(K + L, L), the number of ADOs; saturates at UINT64_MAX instead of overflowing.
  static std::uint64_t count(int num_exponents, int depth);
  /// The number of ADOs with capped entries (as the constructor); saturates at UINT64_MAX.
  static std::uint64_t count(const std::vector<int>& max_excitations, int depth);

  int num_exponents() const { return m_num_exponents; }
  int depth() const { return m_depth; }
  int size() const { return m_size; }
  /// Each exponent's cap (0: none but the depth).
  const std::vector<int>& max_excitations() const { return m_max_excitations; }

  /// n_k of ADO a.
  int label(int ado, int k) const { return m_labels[index(ado, k)]; }
  std::vector<int> label(int ado) const;
  /// |n| of ADO a.
  int level(int ado) const;
  /// The ADO index of a label, or -1 when it is not in the hierarchy (wrong length, negative
  /// entry, or deeper than depth()).
  int index_of(const std::vector<int>& label) const;
  /// Index of n + e_k, or -1 when ADO a is at the full depth.
  int next(int ado, int k) const { return m_next[index(ado, k)]; }
  /// Index of n - e_k, or -1 when n_k = 0.
  int prev(int ado, int k) const { return m_prev[index(ado, k)]; }

  /// Flat row-major [size x K] tables, for copying to a device.
  const std::vector<int>& labels_table() const { return m_labels; }
  const std::vector<int>& next_table() const { return m_next; }
  const std::vector<int>& prev_table() const { return m_prev; }

 private:
  std::size_t index(int ado, int k) const { return static_cast<std::size_t>(ado) * m_num_exponents + k; }
  /// Position of a (valid) label in the lexicographic order, O(K).
  std::int64_t rank(const int* label) const;
  /// The largest n_k allowed.
  int cap(int k) const;

  int m_num_exponents;
  int m_depth;
  int m_size;
  std::vector<int> m_max_excitations;
  /// [K + 1][L + 2]: entry (k, b + 1) counts the labels of exponents k..K-1 with sum <= b, summed
  /// over the budgets 0..b (entry (k, 0) is 0): the ranks' partial sums.
  std::vector<std::uint64_t> m_within;
  std::vector<int> m_labels, m_next, m_prev;
};

}  // namespace heom

#endif
