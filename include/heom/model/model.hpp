// heom::Model: the open system as the solver sees it: a Hamiltonian (with its time-dependent drive
// terms), the baths it couples to, and Lindblad terms beside the baths.
#ifndef HEOM_MODEL_MODEL_HPP
#define HEOM_MODEL_MODEL_HPP

#include <string>
#include <vector>

#include "heom/core/matrix.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/model/bath.hpp"
#include "heom/model/drive.hpp"

namespace heom {

/// A Markovian term beside the baths, on every ADO: rate (L rho L^dagger - {L^dagger L, rho} / 2)
/// (radiative decay, pumping, dephasing that the structured baths do not describe).
struct Lindblad {
  Matrix op;          // L, any n x n matrix
  double rate = 0.0;  // >= 0
};

class Model {
 public:
  /// H must be square and Hermitian; every bath's coupling operator must have H's dimension.
  explicit Model(Matrix hamiltonian, std::vector<Bath> baths = {});
  Model& add_bath(Bath bath);
  /// L must have H's dimension and finite elements, the rate be finite and >= 0.
  Model& add_lindblad(Matrix op, double rate);
  /// Adds the drive term f(t) op to H: H(t) = H + sum of the drives. op must have H's dimension and
  /// finite elements; H(t) stays Hermitian when op is Hermitian and f real.
  Model& add_drive(Matrix op, DriveShape shape);
  /// This model with another H (of the same dimension, Hermitian), its drives, baths and Lindblad
  /// terms kept.
  Model with_hamiltonian(Matrix hamiltonian) const;

  const Matrix& hamiltonian() const { return m_hamiltonian; }
  const std::vector<Bath>& baths() const { return m_baths; }
  const std::vector<Lindblad>& lindblad() const { return m_lindblad; }
  const std::vector<Drive>& drives() const { return m_drives; }
  bool is_driven() const { return !m_drives.empty(); }
  /// H(t): the static H plus every drive at t (on the given side of a drive's breakpoint).
  Matrix hamiltonian_at(double t, TimeSide side = TimeSide::after) const;
  /// The model at one time: H(t) as its static H, no drives, the rest kept.
  Model frozen_at(double t, TimeSide side = TimeSide::after) const;
  /// Whether H(t) is real at every t: a real H, real drive operators and real f.
  bool hamiltonian_always_real() const;
  /// Every drive's breakpoints, ascending, each once.
  std::vector<double> drive_breakpoints() const;
  /// System dimension n (each ADO is an n x n matrix).
  int dimension() const { return m_hamiltonian.rows(); }
  /// K: the exponents of all baths together, the length of an ADO label.
  int num_exponents() const;
  /// Each exponent's cap on its entry of an ADO label (heom::Hierarchy): 1 for a fermionic exponent,
  /// 0 (the depth alone) for a bosonic one.
  std::vector<int> max_excitations() const;
  /// Each exponent's weight in an importance truncation of the hierarchy (ImportanceTruncation).
  std::vector<ExponentWeight> exponent_weights() const;
  /// Whether any bath is fermionic.
  bool has_fermionic_bath() const;

 private:
  void check_bath(const Bath& bath, std::size_t index) const;
  /// Throws naming `name` unless op has H's dimension and finite elements.
  void check_operator(const std::string& name, const Matrix& op) const;

  Matrix m_hamiltonian;
  std::vector<Bath> m_baths;
  std::vector<Lindblad> m_lindblad;
  std::vector<Drive> m_drives;
};

/// Whether a and b have the same dimension, the same baths (couplings, exponents and terminators
/// equal bit for bit) and Lindblad terms, drives on the same operators (their f real in both or in
/// neither; the rest of f may differ), and an H that is real in both or in neither (the generator's
/// form depends on it): models that differ in H and in their drives' f alone, which one batch runs
/// together.
bool same_shape(const Model& a, const Model& b);

}  // namespace heom

#endif
