// Exponential expansions of Drude-Lorentz and underdamped correlation functions (QuTiP 4.7).
#include "heom/model/correlation.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "heom/core/error.hpp"

extern "C" {
// LAPACK: eigenvalues of a real symmetric tridiagonal matrix (ascending).
void dstev_(const char* jobz, const int* n, double* d, double* e, double* z, const int* ldz, double* work, int* info);
}

namespace heom {
namespace {

constexpr double pi = 3.14159265358979323846;

void check_common(const char* bath, double lambda, double gamma, double temperature, int terms) {
  const std::string b = std::string(bath) + " bath: ";
  require(std::isfinite(lambda) && lambda >= 0.0,
          b + "lambda must be finite and >= 0, got " + format_number(lambda, 17));
  require(std::isfinite(gamma) && gamma > 0.0, b + "gamma must be finite and > 0, got " + format_number(gamma, 17));
  require(std::isfinite(temperature) && temperature > 0.0,
          b + "temperature must be finite and > 0, got " + format_number(temperature, 17));
  require(terms >= 0, b + "terms (Nk) must be >= 0, got " + std::to_string(terms));
}

/// Eigenvalues (ascending) of the symmetric tridiagonal matrix with zero diagonal and the given
/// off-diagonal.
std::vector<double> tridiagonal_eigenvalues(std::vector<double> off_diagonal) {
  const int n = static_cast<int>(off_diagonal.size()) + 1;
  std::vector<double> d(n, 0.0);
  off_diagonal.push_back(0.0);  // dstev wants length max(1, n-1); keep a spare slot
  const char jobz = 'N';
  const int ldz = 1;
  int info = 0;
  double z = 0.0, work = 0.0;
  dstev_(&jobz, &n, d.data(), off_diagonal.data(), &z, &ldz, &work, &info);
  if (info != 0) throw Error("Pade expansion: LAPACK dstev failed with info = " + std::to_string(info));
  return d;
}

/// QuTiP's DrudeLorentzPadeBath._kappa_epsilon (bosonic) and LorentzianPadeBath._kappa_epsilon
/// (fermionic), from Hu, Xu, Yan, JCP 134, 244106 (2011): kappa[0] = epsilon[0] = 0, then Nk values
/// each. The two differ in the tridiagonal matrices' entries and the prefactor.
void pade_kappa_epsilon(int nk, bool fermionic, std::vector<double>& kappa, std::vector<double>& epsilon) {
  const double s = fermionic ? 0.0 : 2.0;  // the bosonic entries are the fermionic ones shifted by 2
  std::vector<double> eps, chi;
  {
    std::vector<double> off(2 * nk - 1);
    for (int k = 0; k < 2 * nk - 1; ++k) off[k] = 1.0 / std::sqrt((2.0 * k + 3 + s) * (2.0 * k + 1 + s));
    const auto ev = tridiagonal_eigenvalues(off);
    for (int k = 0; k < nk; ++k) eps.push_back(-2.0 / ev[k]);
  }
  if (nk >= 2) {
    std::vector<double> off(2 * nk - 2);
    for (int k = 0; k < 2 * nk - 2; ++k) off[k] = 1.0 / std::sqrt((2.0 * k + 5 + s) * (2.0 * k + 3 + s));
    const auto ev = tridiagonal_eigenvalues(off);
    for (int k = 0; k < nk - 1; ++k) chi.push_back(-2.0 / ev[k]);
  }
  kappa.assign(1, 0.0);
  const double prefactor = 0.5 * nk * (2.0 * (nk + 1) + (fermionic ? -1.0 : 1.0));
  for (int j = 0; j < nk; ++j) {
    double term = prefactor;
    for (int k = 0; k < nk - 1; ++k)
      term *= (chi[k] * chi[k] - eps[j] * eps[j]) / (eps[k] * eps[k] - eps[j] * eps[j] + (j == k ? 1.0 : 0.0));
    term /= eps[nk - 1] * eps[nk - 1] - eps[j] * eps[j] + (j == nk - 1 ? 1.0 : 0.0);
    kappa.push_back(term);
  }
  epsilon.assign(1, 0.0);
  epsilon.insert(epsilon.end(), eps.begin(), eps.end());
}

void check_finite(const std::vector<complex>& values, const char* name) {
  for (std::size_t i = 0; i < values.size(); ++i)
    require(std::isfinite(values[i].real()) && std::isfinite(values[i].imag()),
            std::string("exponents: ") + name + "[" + std::to_string(i) + "] is not finite");
}

}  // namespace

std::vector<Exponent> CorrelationExpansion::exponents(bool combine) const {
  validate();
  std::vector<Exponent> out;
  for (std::size_t k = 0; k < ck_real.size(); ++k) out.push_back({ExponentKind::R, ck_real[k], vk_real[k], 0.0});
  for (std::size_t k = 0; k < ck_imag.size(); ++k) out.push_back({ExponentKind::I, ck_imag[k], vk_imag[k], 0.0});
  return combine ? combine_exponents(out) : out;
}

void CorrelationExpansion::validate() const {
  require(ck_real.size() == vk_real.size(), "exponents: ck_real has " + std::to_string(ck_real.size()) +
                                                " entries but vk_real has " + std::to_string(vk_real.size()));
  require(ck_imag.size() == vk_imag.size(), "exponents: ck_imag has " + std::to_string(ck_imag.size()) +
                                                " entries but vk_imag has " + std::to_string(vk_imag.size()));
  check_finite(ck_real, "ck_real");
  check_finite(vk_real, "vk_real");
  check_finite(ck_imag, "ck_imag");
  check_finite(vk_imag, "vk_imag");
}

void DrudeLorentz::validate() const {
  check_common("drude-lorentz", lambda, gamma, temperature, terms);
  // cot(gamma / 2T) and the Matsubara / Pade denominators blow up when gamma meets a pole.
  const double ratio = gamma / (2.0 * pi * temperature);
  require(std::abs(ratio - std::round(ratio)) > 1e-10,
          "drude-lorentz bath: gamma = 2 pi k temperature (k = " + format_number(std::round(ratio), 17) +
              ") makes the expansion singular; change gamma or temperature slightly");
}

CorrelationExpansion DrudeLorentz::expand() const {
  validate();
  const double lg = lambda * gamma;
  const double t = temperature;
  CorrelationExpansion e;
  if (expansion == DrudeLorentzExpansion::Matsubara) {
    e.ck_real.push_back(lg / std::tan(gamma / (2.0 * t)));
    e.vk_real.push_back(gamma);
    for (int k = 1; k <= terms; ++k) {
      const double vk = 2.0 * pi * k * t;
      e.ck_real.push_back(8.0 * lg * t * pi * k * t / (vk * vk - gamma * gamma));
      e.vk_real.push_back(vk);
    }
    e.ck_imag.push_back(-lg);
    e.vk_imag.push_back(gamma);
  } else {
    const double beta = 1.0 / t;
    std::vector<double> kappa, epsilon;
    if (terms > 0) pade_kappa_epsilon(terms, false, kappa, epsilon);
    e.ck_real.push_back(lg / std::tan(gamma * beta / 2.0));
    e.vk_real.push_back(gamma);
    for (int l = 1; l <= terms; ++l) {
      const double vl = epsilon[l] / beta;
      require(std::abs(vl - gamma) > 1e-12 * gamma,
              "drude-lorentz bath: gamma meets a Pade pole; change gamma or temperature slightly");
      e.ck_real.push_back((kappa[l] / beta) * 4.0 * lg * vl / (vl * vl - gamma * gamma));
      e.vk_real.push_back(vl);
    }
    e.ck_imag.push_back(-lg);
    e.vk_imag.push_back(gamma);
  }
  return e;
}

complex DrudeLorentz::terminator_delta(const std::vector<Exponent>& kept) const {
  validate();
  complex delta = complex(2.0 * lambda * temperature / gamma, -lambda);
  for (const Exponent& e : kept) {
    switch (e.kind) {
      case ExponentKind::R:
        delta -= e.c / e.v;
        break;
      case ExponentKind::RI:
        delta -= (e.c + complex(0.0, 1.0) * e.c2) / e.v;
        break;
      case ExponentKind::I:
        delta -= complex(0.0, 1.0) * e.c / e.v;
        break;
      case ExponentKind::plus:
      case ExponentKind::minus:
        throw Error("drude-lorentz terminator: exponent of fermionic kind " + std::string(to_string(e.kind)));
    }
  }
  return delta;
}

void Underdamped::validate() const {
  check_common("underdamped", lambda, gamma, temperature, terms);
  require(std::isfinite(w0) && w0 > gamma / 2.0, "underdamped bath: w0 must be > gamma / 2 = " +
                                                     format_number(gamma / 2.0, 17) + ", got " + format_number(w0, 17));
}

CorrelationExpansion Underdamped::expand() const {
  validate();
  const double beta = 1.0 / temperature;
  const double om = std::sqrt(w0 * w0 - gamma * gamma / 4.0);
  const double big_gamma = gamma / 2.0;
  const complex i(0.0, 1.0);
  const complex plus = om + i * big_gamma, minus = om - i * big_gamma;
  const double l2 = lambda * lambda;

  CorrelationExpansion e;
  e.ck_real = {(l2 / (4.0 * om)) / std::tanh(beta * plus / 2.0), (l2 / (4.0 * om)) / std::tanh(beta * minus / 2.0)};
  e.vk_real = {-i * om + big_gamma, i * om + big_gamma};
  for (int k = 1; k <= terms; ++k) {
    const double nu = 2.0 * pi * k / beta;
    e.ck_real.push_back((-2.0 * l2 * gamma / beta) * nu / ((plus * plus + nu * nu) * (minus * minus + nu * nu)));
    e.vk_real.push_back(2.0 * pi * k * temperature);
  }
  e.ck_imag = {i * l2 / (4.0 * om), -i * l2 / (4.0 * om)};
  e.vk_imag = {-i * om + big_gamma, i * om + big_gamma};
  return e;
}

std::vector<Exponent> FermionicExpansion::exponents() const {
  validate();
  std::vector<Exponent> out;
  for (std::size_t k = 0; k < ck_plus.size(); ++k) {
    out.push_back({ExponentKind::plus, ck_plus[k], vk_plus[k], 0.0, ck_minus[k]});
    out.push_back({ExponentKind::minus, ck_minus[k], vk_minus[k], 0.0, ck_plus[k]});
  }
  return out;
}

void FermionicExpansion::validate() const {
  require(ck_plus.size() == vk_plus.size(), "fermionic exponents: ck_plus has " + std::to_string(ck_plus.size()) +
                                                " entries but vk_plus has " + std::to_string(vk_plus.size()));
  require(ck_minus.size() == vk_minus.size(), "fermionic exponents: ck_minus has " + std::to_string(ck_minus.size()) +
                                                  " entries but vk_minus has " + std::to_string(vk_minus.size()));
  require(ck_plus.size() == ck_minus.size(), "fermionic exponents: ck_plus has " + std::to_string(ck_plus.size()) +
                                                 " entries but ck_minus has " + std::to_string(ck_minus.size()) +
                                                 " (each + exponent pairs with the - exponent at its position)");
  check_finite(ck_plus, "ck_plus");
  check_finite(vk_plus, "vk_plus");
  check_finite(ck_minus, "ck_minus");
  check_finite(vk_minus, "vk_minus");
}

void Lorentzian::validate() const {
  const std::string b = "lorentzian bath: ";
  require(std::isfinite(gamma) && gamma >= 0.0, b + "gamma must be finite and >= 0, got " + format_number(gamma, 17));
  require(std::isfinite(width) && width > 0.0, b + "width must be finite and > 0, got " + format_number(width, 17));
  require(std::isfinite(mu), b + "mu must be finite, got " + format_number(mu, 17));
  require(std::isfinite(temperature) && temperature > 0.0,
          b + "temperature must be finite and > 0, got " + format_number(temperature, 17));
  require(terms >= 0, b + "terms (Nk) must be >= 0, got " + std::to_string(terms));
}

FermionicExpansion Lorentzian::expand() const {
  validate();
  const double beta = 1.0 / temperature;
  const complex i(0.0, 1.0);
  const bool pade = expansion == LorentzianExpansion::Pade;
  std::vector<double> kappa(terms + 1, 1.0), epsilon(terms + 1, 0.0);
  kappa[0] = 0.0;
  if (pade) {
    if (terms > 0) pade_kappa_epsilon(terms, true, kappa, epsilon);
  } else {
    for (int l = 1; l <= terms; ++l) epsilon[l] = (2.0 * l - 1) * pi;
  }
  // The Fermi function at i beta W, exact (Matsubara) or as its Pade sum over poles.
  complex fermi = 0.5;
  const complex x = i * beta * width;
  if (pade) {
    for (int l = 1; l <= terms; ++l) fermi -= 2.0 * kappa[l] * x / (x * x + epsilon[l] * epsilon[l]);
  } else {
    fermi = 1.0 / (std::exp(x) + 1.0);
  }
  FermionicExpansion e;
  for (const double sigma : {1.0, -1.0}) {
    std::vector<complex>& ck = sigma > 0 ? e.ck_plus : e.ck_minus;
    std::vector<complex>& vk = sigma > 0 ? e.vk_plus : e.vk_minus;
    ck.push_back(0.5 * gamma * width * fermi);
    vk.push_back(width - sigma * i * mu);
    for (int l = 1; l <= terms; ++l) {
      const double pole = epsilon[l] / beta;
      require(std::abs(pole - width) > 1e-12 * width,
              "lorentzian bath: the width meets a pole of the Fermi function's expansion; change width or "
              "temperature slightly");
      ck.push_back(-i * (kappa[l] / beta) * gamma * width * width / (width * width - pole * pole));
      vk.push_back(pole - sigma * i * mu);
    }
  }
  return e;
}

}  // namespace heom
