// heom::ExcitonAggregate and heom::ExcitonManifolds: an aggregate of N sites given by its one-exciton
// manifold (site energies, couplings J, transition dipoles, a bath per site), and the model a
// third-order response propagates: the ground state g, the N one-exciton states and, for excited-state
// absorption, the N(N-1)/2 two-exciton states |mn>, with the dipole operators between them.
#ifndef HEOM_MODEL_AGGREGATE_HPP
#define HEOM_MODEL_AGGREGATE_HPP

#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "heom/core/matrix.hpp"
#include "heom/model/bath.hpp"
#include "heom/model/model.hpp"

namespace heom {

/// A transition dipole (x, y, z) in the aggregate's frame.
using Dipole = std::array<double, 3>;

/// An aggregate as its one-exciton manifold: what a user of 2D spectroscopy writes down.
struct ExcitonAggregate {
  /// N x N, Hermitian: site energies on the diagonal, couplings J off it (relative to any zero: the
  /// spectra's frequencies are in the same frame).
  Matrix hamiltonian;
  /// One per site: the transition dipole of g -> m.
  std::vector<Dipole> dipoles;
  /// Bosonic baths, each with an N x N coupling operator in the one-exciton space (a site's bath:
  /// |m><m|). In the full model each couples through that operator's number-conserving extension:
  /// |m><m| becomes the number of excitations on site m (|m><m| plus every |mn> containing m).
  std::vector<Bath> baths;
  /// Whether the two-exciton manifold is built (excited-state absorption needs it).
  bool two_exciton = true;
  /// Added to every two-exciton energy e_m + e_n (a biexciton binding shift; 0 for hard-core excitons).
  double biexciton_shift = 0.0;
};

/// The model of an aggregate's ground, one- and (optionally) two-exciton manifolds, levels in that
/// order: 0 is g, 1..N the sites, then |mn> for m < n in lexicographic order; and the dipole operator's
/// raising parts, per Cartesian component, from g to the one-exciton manifold and from there to the
/// two-exciton one (its lowering parts are their adjoints). No operator couples g to anything but the
/// dipoles, so |g><g| with every ADO zero is the state in equilibrium with its baths.
struct ExcitonManifolds {
  Model model{Matrix(1, 1)};  ///< (a placeholder until built)
  int sites = 0;
  bool two_exciton = false;
  std::array<Matrix, 3> raise_ground;      ///< sum_m d_m,c |m><g| per component c
  std::array<Matrix, 3> raise_one;         ///< sum_{m<n} (d_n,c |mn><m| + d_m,c |mn><n|); zero without f
  std::vector<std::pair<int, int>> pairs;  ///< the sites (m, n) of each two-exciton level, in order

  int dimension() const { return model.dimension(); }
  /// Whether the dipoles have a Cartesian component c (0..2): any raising element of it nonzero.
  bool has_component(int c) const { return raise_ground[c].max_abs() > 0.0 || raise_one[c].max_abs() > 0.0; }
  /// The first level of the one-exciton (1) and two-exciton (1 + N) manifolds.
  int first_one_exciton() const { return 1; }
  int first_two_exciton() const { return 1 + sites; }
};

/// Builds the manifolds of `aggregate`: H = 0 (+) H1 (+) H2 with H2 the one-body extension of H1 to
/// pairs of distinct sites (energies e_m + e_n + shift, couplings J between |mn> and |mk>), baths
/// extended the same way, dipoles raising g -> m and m -> mn. Throws heom::Error naming what is wrong
/// (a dipole count that is not N, a fermionic bath, a coupling operator that is not N x N).
ExcitonManifolds build_manifolds(const ExcitonAggregate& aggregate);

/// Manifolds for a user's own model (levels ordered g, one-exciton, two-exciton as above, of `sites`
/// and optionally N(N-1)/2 levels) with the raising dipole parts given: checked to be blocks between
/// g and the one-exciton levels (and between those and the two-exciton ones), and the ground state
/// to be uncoupled from every bath, Lindblad term and H.
ExcitonManifolds explicit_manifolds(Model model, int sites, std::array<Matrix, 3> raise_ground,
                                    std::array<Matrix, 3> raise_one = {});

/// The manifolds without the two-exciton states (g and one exciton: what the bleach and stimulated
/// emission visit), or nullopt where H, a bath's coupling or a Lindblad term connects the two-exciton
/// states to the rest (then the rest does not evolve on its own) or there are none.
std::optional<ExcitonManifolds> without_two_excitons(const ExcitonManifolds& manifolds);

/// A one-body operator A of the one-exciton space (N x N) on the manifolds: 0 on g, A on the one-exciton
/// levels, and on the two-exciton ones sum_ab A_ab c_a^dagger c_b for hard-core excitons:
/// <mk|A|mn> = A_kn for k, n != m, the diagonal <mn|A|mn> = A_mm + A_nn.
Matrix extend_one_body(const Matrix& one_exciton, bool two_exciton);

}  // namespace heom

#endif
