// The generator's coefficients and the hierarchy's tables, prepared on the host in the layout the
// kernels read (src/generator/generator_tables.cpp).
#ifndef HEOM_GENERATOR_GENERATOR_TABLES_HPP
#define HEOM_GENERATOR_GENERATOR_TABLES_HPP

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "heom/core/matrix.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/model/drive.hpp"
#include "heom/model/model.hpp"

namespace heom::impl {

/// Everything the kernel needs, flattened. For an ADO a with label n:
///   d rho_a = A rho_a + rho_a B + (S o rho_a) - damping_a rho_a
///           + sum over diagonal baths b, exponents k of b, active elements t of b:
///               out(e_t) += cf(b,t) rho_{n+e_k}(e_t) + n_k alpha(k,t) rho_{n-e_k}(e_t)
///           + sum over dense baths b: Q_b X_b + Y_b Q_b   (X_b, Y_b from M_b and R_b: add_dense_bath)
///           + sum over fermionic baths b: Exponent's terms   (add_fermionic_group)
/// where A = -iH - sum Delta Q^2 - sum rate L^dagger L / 2, B = iH - (the same) (terminated baths, Lindblad
/// terms), S(e) = sum over terminated diagonal baths of 2 Delta q_i q_j + sum over real diagonal Lindblad
/// operators of rate l_i l_j, cf(b, e) = i (q_j - q_i), alpha(k, e) = cf c_k + (q_i + q_j) c2_k.
///
/// A Lindblad term whose sqrt(rate) L = u w^T has rank one (sigma_-, a transfer |i><j|) adds
/// (w^T rho conj(w)) u u^dagger: 2 n^2 work (jump_u, jump_w). A term with any other L is a dense "bath"
/// of no exponents after the model's baths (the last num_jumps): Q = sqrt(rate) L, its right factor
/// R = Q^dagger and 2 Delta = 1, so that the dense baths' terminator term 2 Delta Q rho R is its jump
/// rate L rho L^dagger.
/// The active elements of a diagonal bath are those with cf or q_i + q_j non-zero: all n^2 for sz,
/// only row and column j (2n - 1 of them) for a site projector |j><j|. They are listed as runs of
/// consecutive elements within a row, so that the kernel's loops stay contiguous.
///
/// Element-wise coefficients are also given in "lane" form for the kernel, which works on the
/// doubles of a block (lane 2e is Re, 2e + 1 is Im of element e) so that loops vectorize: a complex
/// c times x is, per lane m, P[m] x[m] + Q[m] x[m ^ 1] with P = (Re c, Re c) and Q = (-Im c, Im c).
struct GeneratorTables {
  int n = 0;
  int num_ados = 0;
  int num_exponents = 0;
  int num_baths = 0;

  std::vector<complex> a_sys, b_sys;  // [n][n]
  bool a_sys_imaginary = false;       // A and B purely imaginary (real H(t), no terminator): half the work
  /// A driven model's drives: A(t) = a_static - i sum_d f_d(t) H_d, B(t) = b_static + i sum_d f_d(t) H_d
  /// (set_drive_values); a_sys and b_sys hold them at the last time set.
  std::vector<DriveShape> drive_shapes;     // [drives]
  std::vector<complex> drive_ops;           // [drives][n][n]: H_d
  std::vector<complex> a_static, b_static;  // [n][n]: A and B of the static H
  std::vector<complex> sandwich;            // [n2]
  bool has_sandwich = false;

  std::vector<int> bath_begin;      // [baths + 1] exponent ranges (exponents are ordered by bath)
  std::vector<int> bath_diagonal;   // [baths] 1 when Q_b is diagonal (never for a fermionic bath)
  std::vector<int> bath_fermionic;  // [baths] 1 for a fermionic bath (a lead)
  bool has_fermionic_bath = false;
  /// Per exponent: +1 for a fermionic plus exponent, -1 for a minus one, 0 for a bosonic one; and for
  /// the fermionic ones c and conj(partner_c) (Exponent), zero for the others.
  std::vector<int> fermion_kind;                         // [K]
  std::vector<complex> fermion_c, fermion_partner_conj;  // [K]
  /// Per fermionic bath: the first fermionic bath with the same Q (baths of a group sum their
  /// neighbours into one X and Y and take one product with Q: two leads of one dot), and the rows and
  /// columns of Q that hold a nonzero (the products run over those alone); -1 and 0 for other baths.
  std::vector<int> fermion_group;                            // [baths]
  std::vector<int> fermion_row_count, fermion_column_count;  // [baths]
  std::vector<int> fermion_rows, fermion_columns;            // [baths][n]
  std::vector<int> active_count;                             // [baths] active elements of a diagonal bath
  std::vector<int> run_count;                                // [baths] runs of consecutive active elements within a row
  std::vector<int> run_start;                                // [baths][n2] first element of each run
  std::vector<int> run_length;     // [baths][n2] its length (a projector |j><j|: row j, then single
                                   // elements of column j)
  std::vector<complex> cf;         // [baths][n2] i (q_j - q_i) (zero off the active elements)
  std::vector<complex> alpha;      // [K][n2] cf c_k + (q_i + q_j) c2_k (zero off the active elements)
  std::vector<complex> q;          // [baths][n][n] (all baths; the dense path reads it)
  std::vector<complex> right;      // [baths][n][n] R_b of 2 Delta_b Q_b rho R_b: Q_b, or a jump's Q^dagger
  std::vector<complex> two_delta;  // [baths] 2 Delta (dense baths' terminators; 1 for a jump)
  int num_jumps = 0;               // Lindblad terms among the dense baths (the last ones, no exponents)
  std::vector<complex> lindblad;   // [terms][n][n] every Lindblad term's sqrt(rate) L
  int num_rank_one_jumps = 0;
  std::vector<complex> jump_u, jump_w;                  // [rank-one jumps][n]: sqrt(rate) L = u w^T
  std::vector<complex> c_commutator, c_anticommutator;  // [K]

  std::vector<complex> rates;  // [K] v_k
  /// [held ADOs] sum_k n_k v_k (damping_of) of the ADOs the hierarchy held (a share's alone), from
  /// ADO damping_first on.
  std::vector<complex> damping;
  int damping_first = 0;

  /// The generator maps Hermitian ADOs to Hermitian derivatives: real rates and coefficients, B = A^dagger,
  /// a real sandwich. Then L(rho) = G + G^dagger with
  ///   G = A rho + (S o rho) / 2 - damping rho / 2 + sum_b Q_b (X_b + Delta_b rho R_b) (+ half of each rank-one jump),
  ///   X_b = sum_k -i rho_{n+e_k} + n_k (c2_k - i c_k) rho_{n-e_k},
  /// which for a diagonal Q_b touches only the rows i with q_i != 0 (a site projector: one row).
  bool preserves_hermiticity = false;
  std::vector<int> coupled_row_count;  // [baths] rows i with q_ii != 0 (diagonal baths; 0 for dense ones)
  std::vector<int> coupled_rows;       // [baths][n] those rows
  /// Per exponent k: the one row of a diagonal bath coupled through a single row (a site projector),
  /// and its q_ii; -1 and 0 otherwise. The Hermitian form runs over such exponents in one flat loop.
  std::vector<int> single_row;       // [K]
  std::vector<double> single_row_q;  // [K]
  /// A dense Q_b of rank one (a projector in another basis, e.g. a site in the exciton basis) is
  /// s_b c_b c_b^dagger: then Q_b X = s_b c_b (c_b^dagger X), 2 n^2 work instead of n^3.
  std::vector<int> rank_one;        // [baths] 1 when Q_b is dense and of rank one
  std::vector<complex> rank_one_c;  // [baths][n] c_b
  std::vector<double> rank_one_s;   // [baths] s_b

  // Lane forms (see above) of sandwich [2 n2], cf [baths][2 n2] and alpha [K][2 n2].
  std::vector<double> sandwich_p, sandwich_q, cf_p, cf_q, alpha_p, alpha_q;

  /// For n = 2 only (the two-level kernel; empty otherwise): linear maps of a 2x2 block in shifted
  /// form. Any such map is sum_s c_s o shift_s(X), s = 0..3, with shift_s(X) the block whose element e
  /// is X's element e xor s (the identity, the columns swapped, the rows swapped, both) and c_s
  /// element-wise coefficients: stored as [2][4][8], the lane forms P of c_0..c_3, then their Q.
  ///   shifted_system:              rho -> A rho + rho B + (S o rho) + sum over dense b of 2 Delta_b Q_b rho R_b
  ///                                (and the rank-one jumps)
  ///   shifted_commutator[b]:       X -> -i (Q_b X - X Q_b)    (dense baths; zero for diagonal ones)
  ///   shifted_anticommutator[b]:   X -> Q_b X + X Q_b
  /// so that a dense bath adds shifted_commutator M_b + shifted_anticommutator R_b (= Q_b X_b + Y_b Q_b
  /// without its terminator, which shifted_system holds).
  std::vector<double> shifted_system, shifted_commutator, shifted_anticommutator;
};

/// Appends the lane form (P, Q) of `values` to p and q.
void append_lanes(const std::vector<complex>& values, std::vector<double>& p, std::vector<double>& q);

/// A and B above: rho -> A rho + rho B is the system's part of every ADO's own term (its Hamiltonian
/// and the terminators' Q^2 parts).
std::pair<Matrix, Matrix> system_terms(const Model& model);

/// The tables of the model; a driven model's system part (a_sys, b_sys, shifted_system) is that of its
/// static H until set_drive_values.
GeneratorTables make_generator_tables(const Model& model, const Hierarchy& hierarchy);

/// sum_k n_k v_k of a label, the damping of its ADO: its one formula.
complex damping_of(const int* label, const std::vector<complex>& rates);

/// Every distinct damping_of value over all the hierarchy's ADOs (held or not), sorted by (real,
/// imaginary) part: each ADO's damping is exactly one of them. Visits every label (O(K) each) and
/// holds the distinct values alone.
std::vector<complex> damping_values(const std::vector<complex>& rates, const Hierarchy& hierarchy);

/// A driven model's system part at drive values f (one per drive, f_d(t)): a_sys and b_sys, and for
/// n = 2 shifted_system.
void set_drive_values(GeneratorTables& tables, const std::vector<complex>& values);

/// Per exponent k, the rows (bit i: row i) of a neighbour reached through k that the Hermitian form
/// reads: its bath's coupled rows when Q is diagonal (a site projector: one), all n otherwise.
std::vector<std::uint64_t> hermitian_rows_read(const GeneratorTables& tables);

/// Why the ground-column shape (AdoShape::ground_column) cannot hold this model's ADOs, e.g.
/// "H has element (0, 2)", "the operator of drive 0 has element (1, 0)" or "the coupling of bath 1
/// has element (0, 0)"; empty when it can: no element of H or of a drive's operator but the (0, 0)
/// one, and none of any bath's coupling, in row or column 0.
std::string ground_column_obstacle(const GeneratorTables& tables);

}  // namespace heom::impl

#endif
