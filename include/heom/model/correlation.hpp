// Exponential expansions of bath correlation functions: Drude-Lorentz (Matsubara, Pade),
// underdamped Brownian oscillator, user lists, the Ishizaki-Tanimura terminator, and fermionic
// leads (Lorentzian, Matsubara or Pade; user lists).
// Formulas and conventions are QuTiP 4.7's (qutip/nonmarkov/bofin_baths.py), hbar = kB = 1.
#ifndef HEOM_MODEL_CORRELATION_HPP
#define HEOM_MODEL_CORRELATION_HPP

#include <vector>

#include "heom/core/matrix.hpp"
#include "heom/model/exponent.hpp"

namespace heom {

/// C(t) = sum ck_real exp(-vk_real t) + i sum ck_imag exp(-vk_imag t), t > 0.
struct CorrelationExpansion {
  std::vector<complex> ck_real, vk_real, ck_imag, vk_imag;

  /// R exponents then I exponents, merged with combine_exponents() when `combine`.
  std::vector<Exponent> exponents(bool combine = true) const;
  /// Throws heom::Error when a coefficient list and its rate list differ in length or hold NaN/Inf.
  void validate() const;
};

enum class DrudeLorentzExpansion { Matsubara, Pade };

/// Drude-Lorentz spectral density J(w) = 2 lambda gamma w / (w^2 + gamma^2) at temperature T.
struct DrudeLorentz {
  double lambda = 0.0;       ///< reorganisation energy (coupling strength), >= 0
  double gamma = 0.0;        ///< cutoff frequency, > 0
  double temperature = 0.0;  ///< > 0
  int terms = 0;             ///< Nk: Matsubara or Pade terms beyond the first, >= 0
  DrudeLorentzExpansion expansion = DrudeLorentzExpansion::Matsubara;
  bool terminator = false;  ///< add the Ishizaki-Tanimura terminator for the truncated terms

  void validate() const;
  CorrelationExpansion expand() const;
  /// Delta of the terminator L X = Delta (2 Q X Q^+ - Q^+Q X - X Q^+Q), given the exponents kept.
  complex terminator_delta(const std::vector<Exponent>& kept) const;
};

/// Underdamped Brownian oscillator J(w) = lambda^2 gamma w / ((w0^2 - w^2)^2 + gamma^2 w^2),
/// Matsubara expansion (QuTiP's UnderDampedBath).
struct Underdamped {
  double lambda = 0.0;       ///< coupling strength, >= 0
  double gamma = 0.0;        ///< damping, > 0
  double w0 = 0.0;           ///< resonance frequency, > gamma / 2
  double temperature = 0.0;  ///< > 0
  int terms = 0;             ///< Nk Matsubara terms, >= 0

  void validate() const;
  CorrelationExpansion expand() const;
};

/// A fermionic bath's correlation functions C+(t) = sum ck_plus exp(-vk_plus t) and C-(t) = sum
/// ck_minus exp(-vk_minus t) (QuTiP's FermionicBath): entry k of the + lists pairs with entry k of
/// the - lists.
struct FermionicExpansion {
  std::vector<complex> ck_plus, vk_plus, ck_minus, vk_minus;

  /// For each pair in turn its plus exponent then its minus one, each with the other's c as partner_c
  /// (QuTiP's order).
  std::vector<Exponent> exponents() const;
  /// Throws heom::Error when lists differ in length or hold NaN/Inf.
  void validate() const;
};

enum class LorentzianExpansion { Matsubara, Pade };

/// A Lorentzian lead (QuTiP's LorentzianBath, LorentzianPadeBath): spectral function
/// Gamma(w) = gamma W^2 / ((w - mu)^2 + W^2), occupied by the Fermi function at mu and T.
struct Lorentzian {
  double gamma = 0.0;        ///< coupling strength, >= 0
  double width = 0.0;        ///< W, > 0
  double mu = 0.0;           ///< chemical potential
  double temperature = 0.0;  ///< > 0
  int terms = 0;             ///< Nk: Matsubara or Pade terms beyond the first, >= 0
  LorentzianExpansion expansion = LorentzianExpansion::Pade;

  void validate() const;
  FermionicExpansion expand() const;
};

}  // namespace heom

#endif
