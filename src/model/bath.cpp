// heom::Bath construction and validation.
#include "heom/model/bath.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "heom/core/error.hpp"

namespace heom {
namespace {

void check_coupling(const Matrix& q, bool fermionic) {
  if (!q.is_square() || q.rows() == 0)
    throw Error("bath coupling operator Q must be a non-empty square matrix, got " + q.shape_string());
  if (const auto at = q.first_non_finite())
    throw Error("bath coupling operator Q has a non-finite element at (" + std::to_string(at->first) + ", " +
                std::to_string(at->second) + ")");
  if (fermionic && q.is_hermitian())
    throw Error(
        "fermionic bath coupling operator must be annihilation-type (a level's d, not Hermitian), got a "
        "Hermitian one");
  if (!fermionic && !q.is_hermitian()) throw Error("bath coupling operator Q must be Hermitian");
}

void check_exponents(const std::vector<Exponent>& exponents) {
  const bool fermionic = !exponents.empty() && exponents.front().fermionic();
  for (std::size_t k = 0; k < exponents.size(); ++k) {
    const Exponent& e = exponents[k];
    for (complex z : {e.c, e.v, e.c2, e.partner_c})
      if (!std::isfinite(z.real()) || !std::isfinite(z.imag()))
        throw Error("bath exponent " + std::to_string(k) + " has a non-finite coefficient or rate");
    if (e.kind != ExponentKind::RI && e.c2 != complex(0.0))
      throw Error("bath exponent " + std::to_string(k) + " of kind " + to_string(e.kind) +
                  " has c2 set; only RI exponents have a second coefficient");
    if (e.fermionic() != fermionic)
      throw Error("bath exponent " + std::to_string(k) + " is " + (e.fermionic() ? "fermionic" : "bosonic") +
                  " but exponent 0 is not: a bath's exponents are all bosonic or all fermionic");
    if (!e.fermionic() && e.partner_c != complex(0.0))
      throw Error("bath exponent " + std::to_string(k) + " of kind " + to_string(e.kind) +
                  " has partner_c set; only fermionic exponents have a partner");
  }
}

}  // namespace

Bath::Bath(Matrix coupling, std::vector<Exponent> exponents, std::string description)
    : m_coupling(std::move(coupling)), m_exponents(std::move(exponents)), m_description(std::move(description)) {
  check_exponents(m_exponents);
  check_coupling(m_coupling, is_fermionic());
}

Bath Bath::with_coupling(Matrix coupling) const {
  Bath b(std::move(coupling), m_exponents, m_description);
  if (m_has_terminator) b.set_terminator(m_terminator_delta);
  b.m_fit = m_fit;
  return b;
}

void Bath::set_terminator(complex delta) {
  if (is_fermionic()) throw Error("bath terminator: a fermionic bath has none");
  if (!std::isfinite(delta.real()) || !std::isfinite(delta.imag())) throw Error("bath terminator Delta is not finite");
  m_has_terminator = true;
  m_terminator_delta = delta;
}

Bath Bath::from_expansion(Matrix coupling, const CorrelationExpansion& expansion, bool combine) {
  return Bath(std::move(coupling), expansion.exponents(combine),
              "exponents (" + std::to_string(expansion.ck_real.size()) + " real, " +
                  std::to_string(expansion.ck_imag.size()) + " imaginary)");
}

Bath Bath::drude_lorentz(Matrix coupling, const DrudeLorentz& p) {
  const bool pade = p.expansion == DrudeLorentzExpansion::Pade;
  std::string description = std::string("drude-lorentz (") + (pade ? "pade" : "matsubara") +
                            ", Nk = " + std::to_string(p.terms) + (p.terminator ? ", terminator)" : ")");
  Bath bath(std::move(coupling), p.expand().exponents(true), std::move(description));
  if (p.terminator) bath.set_terminator(p.terminator_delta(bath.exponents()));
  return bath;
}

Bath Bath::fermionic(Matrix coupling, const FermionicExpansion& expansion) {
  return Bath(std::move(coupling), expansion.exponents(),
              "fermionic exponents (" + std::to_string(expansion.ck_plus.size()) + " pairs)");
}

Bath Bath::lorentzian(Matrix coupling, const Lorentzian& p) {
  const bool pade = p.expansion == LorentzianExpansion::Pade;
  std::ostringstream mu;
  mu << p.mu;
  return Bath(std::move(coupling), p.expand().exponents(),
              std::string("lorentzian lead (") + (pade ? "pade" : "matsubara") + ", Nk = " + std::to_string(p.terms) +
                  ", mu = " + mu.str() + ")");
}

Bath Bath::underdamped(Matrix coupling, const Underdamped& p) {
  return Bath(std::move(coupling), p.expand().exponents(true),
              "underdamped (matsubara, Nk = " + std::to_string(p.terms) + ")");
}

Bath Bath::fitted(Matrix coupling, const SpectralDensity& j, double temperature, const FitOptions& options) {
  CorrelationFit fit = fit_correlation(j, temperature, options);
  std::ostringstream t;
  t << temperature;
  Bath bath(std::move(coupling), fit.exponents,
            "spectral density " + j.description() + " at T = " + t.str() + ", " + fit.summary());
  bath.m_fit = std::move(fit);
  return bath;
}

}  // namespace heom
