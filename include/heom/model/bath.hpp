// heom::Bath: one bath, i.e. a coupling operator Q and the exponents of its correlation functions:
// bosonic (optionally with a terminator for the exponents left out) or fermionic (a lead).
#ifndef HEOM_MODEL_BATH_HPP
#define HEOM_MODEL_BATH_HPP

#include <optional>
#include <string>
#include <vector>

#include "heom/core/matrix.hpp"
#include "heom/model/correlation.hpp"
#include "heom/model/correlation_fit.hpp"
#include "heom/model/exponent.hpp"

namespace heom {

class Bath {
 public:
  /// Exponents exactly as given (no merging), all bosonic or all fermionic. Q must be square; Hermitian
  /// for a bosonic bath, and not Hermitian for a fermionic one (an annihilation-type operator, such as
  /// a level's d, whose Q^dagger the "-" exponents and the hierarchy's sign rules need apart from Q).
  Bath(Matrix coupling, std::vector<Exponent> exponents, std::string description = "exponents");

  /// QuTiP's BosonicBath: exponents from a correlation expansion, merged when `combine`.
  static Bath from_expansion(Matrix coupling, const CorrelationExpansion& expansion, bool combine = true);
  /// QuTiP's DrudeLorentzBath / DrudeLorentzPadeBath (merged), with the terminator when asked.
  static Bath drude_lorentz(Matrix coupling, const DrudeLorentz& parameters);
  /// QuTiP's UnderDampedBath (merged).
  static Bath underdamped(Matrix coupling, const Underdamped& parameters);
  /// QuTiP's FermionicBath: the + and - exponents of C+ and C-, pair by pair.
  static Bath fermionic(Matrix coupling, const FermionicExpansion& expansion);
  /// QuTiP's LorentzianBath (Matsubara) and LorentzianPadeBath (Pade): a lead.
  static Bath lorentzian(Matrix coupling, const Lorentzian& parameters);
  /// Any spectral density at `temperature` (0 allowed), its C(t) fitted with exponents
  /// (fit_correlation); fit() tells how well.
  static Bath fitted(Matrix coupling, const SpectralDensity& j, double temperature, const FitOptions& options);

  /// This bath on another system: the same exponents, terminator and fit with `coupling` as Q (checked
  /// as the constructor checks it).
  Bath with_coupling(Matrix coupling) const;

  const Matrix& coupling() const { return m_coupling; }
  const std::vector<Exponent>& exponents() const { return m_exponents; }
  int num_exponents() const { return static_cast<int>(m_exponents.size()); }
  /// Whether its exponents are fermionic (a lead); a bath of no exponents is bosonic.
  bool is_fermionic() const { return !m_exponents.empty() && m_exponents.front().fermionic(); }
  /// e.g. "drude-lorentz (pade, Nk = 2, terminator)"; for plans and logs.
  const std::string& description() const { return m_description; }
  /// The fit behind a fitted() bath's exponents; empty for the others.
  const std::optional<CorrelationFit>& fit() const { return m_fit; }

  bool has_terminator() const { return m_has_terminator; }
  /// Delta of the terminator Delta (2 Q X Q - Q^2 X - X Q^2); zero when there is none.
  complex terminator_delta() const { return m_terminator_delta; }
  /// Adds the terminator Delta (2 Q X Q - Q^2 X - X Q^2) to the system Liouvillian.
  void set_terminator(complex delta);

 private:
  Matrix m_coupling;
  std::vector<Exponent> m_exponents;
  std::string m_description;
  bool m_has_terminator = false;
  complex m_terminator_delta = 0.0;
  std::optional<CorrelationFit> m_fit;
};

}  // namespace heom

#endif
