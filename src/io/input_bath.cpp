// The input's [[bath]] tables: a Drude-Lorentz, underdamped or explicit-exponent bath, any spectral
// density fitted with exponents, or a fermionic lead (Lorentzian or explicit exponents), in solver
// units.
#include <complex>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/model/correlation.hpp"
#include "heom/model/spectral_density.hpp"
#include "io/input_sections.hpp"

namespace heom::io::impl {
namespace {

const std::vector<std::string>& density_keys(const std::string& form) {
  static const std::vector<std::string> ohmic = {"alpha", "cutoff", "exponent"}, drude = {"lambda", "gamma"},
                                        underdamped = {"lambda", "gamma", "w0"}, table = {"w", "values"},
                                        sum = {"component"}, none = {};
  return form == "ohmic"           ? ohmic
         : form == "drude-lorentz" ? drude
         : form == "underdamped"   ? underdamped
         : form == "table"         ? table
         : form == "sum"           ? sum
                                   : none;
}

/// J(w) of a spectral-density bath or of one of its components (`in_sum`: a component, not "sum").
SpectralDensity read_density(TableReader& t, const UnitScale& scale, bool in_sum) {
  const std::string form = *t.string("j");
  if (form == "ohmic")
    return SpectralDensity::ohmic(t.non_negative("alpha"), t.positive("cutoff") * scale.energy,
                                  t.has("exponent") ? t.positive("exponent") : 1.0);
  if (form == "drude-lorentz")
    return SpectralDensity::drude_lorentz(t.non_negative("lambda") * scale.energy, t.positive("gamma") * scale.energy);
  if (form == "underdamped")
    return SpectralDensity::underdamped(t.non_negative("lambda") * scale.energy, t.positive("gamma") * scale.energy,
                                        t.positive("w0") * scale.energy);
  if (form == "table") {
    std::vector<double> w = *t.numbers("w"), j = *t.numbers("values");
    if (j.size() != w.size())
      t.fail("values",
             "has " + std::to_string(j.size()) + " entries but " + t.name("w") + " has " + std::to_string(w.size()),
             t.table().get("values"));
    if (w.size() < 2) t.fail("w", "needs at least 2 samples", t.table().get("w"));
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (w[i] < 0.0)
        t.fail("w", "w[" + std::to_string(i) + "] = " + format(w[i]) + " is negative", t.table().get("w"));
      if (i > 0 && w[i] <= w[i - 1])
        t.fail("w",
               "must increase, but w[" + std::to_string(i) + "] = " + format(w[i]) + " follows " + format(w[i - 1]),
               t.table().get("w"));
    }
    if (w.front() == 0.0 && j.front() != 0.0)
      t.fail("values", "J(0) must be 0 (a bath with J(0) > 0 would be white noise), got " + format(j.front()),
             t.table().get("values"));
    for (double& x : w) x *= scale.energy;
    for (double& x : j) x *= scale.energy;
    return SpectralDensity::table(std::move(w), std::move(j));
  }
  if (form == "sum" && !in_sum) {
    const toml::node* node = t.node("component", true);
    const toml::array* list = node->as_array();
    if (!list || !list->is_array_of_tables() || list->empty())
      t.fail("component", "expected one or more [[bath.component]] tables", node);
    SpectralDensity sum;
    for (std::size_t i = 0; i < list->size(); ++i) {
      TableReader c(*list->get(i)->as_table(), t.name("component") + "[" + std::to_string(i + 1) + "]", t.file());
      const std::string part = *c.string("j");
      if (part == "sum" || density_keys(part).empty())
        c.fail(
            "j",
            "unknown component \"" + part + "\" (expected \"ohmic\", \"drude-lorentz\", \"underdamped\" or \"table\")",
            c.table().get("j"));
      std::vector<std::string> allowed = density_keys(part);
      allowed.push_back("j");
      c.allow_only(allowed, "a j = \"" + part + "\" component");
      sum += read_density(c, scale, true);
    }
    return sum;
  }
  t.fail("j",
         "unknown spectral density \"" + form + "\" (expected \"ohmic\", \"drude-lorentz\", \"underdamped\", " +
             "\"table\" or \"sum\")",
         t.table().get("j"));
}

/// The keys a bath of `kind` may hold (an unknown kind refused).
std::vector<std::string> bath_keys(TableReader& b, const std::string& kind, const UnitScale& scale) {
  std::vector<std::string> allowed = {"kind", "coupling", "coupling_imag"};
  if (kind == "drude-lorentz") {
    allowed.insert(allowed.end(), {"lambda", "gamma", "temperature", "terms", "expansion", "terminator"});
  } else if (kind == "underdamped") {
    allowed.insert(allowed.end(), {"lambda", "gamma", "w0", "temperature", "terms"});
  } else if (kind == "exponents") {
    for (const char* list : {"ck_real", "vk_real", "ck_imag", "vk_imag"})
      allowed.insert(allowed.end(), {list, std::string(list) + "_imag"});
  } else if (kind == "lorentzian") {
    allowed.insert(allowed.end(), {"gamma", "width", "mu", "temperature", "terms", "expansion"});
  } else if (kind == "fermionic-exponents") {
    for (const char* list : {"ck_plus", "vk_plus", "ck_minus", "vk_minus"})
      allowed.insert(allowed.end(), {list, std::string(list) + "_imag"});
  } else if (kind == "spectral-density") {
    allowed.insert(allowed.end(), {"j", "temperature", "fit_tolerance", "fit_time", "fit_method", "fit_max_exponents"});
    const std::vector<std::string>& form = density_keys(b.string("j").value_or(""));
    if (form.empty()) read_density(b, scale, false);  // reports the unknown form
    allowed.insert(allowed.end(), form.begin(), form.end());
  } else {
    b.fail("kind",
           "unknown bath kind \"" + kind +
               "\" (expected \"drude-lorentz\", \"underdamped\", \"exponents\", \"spectral-density\", " +
               "\"lorentzian\" or \"fermionic-exponents\")",
           b.table().get("kind"));
  }
  return allowed;
}

/// The coupling operator: n x n, Hermitian for a bosonic bath, an annihilation-type d for a fermionic one.
Matrix read_coupling(TableReader& b, const std::string& kind, int dimension) {
  const std::optional<Matrix> q = b.complex_matrix("coupling", "coupling_imag");
  if (q->rows() != dimension)
    b.fail("coupling",
           "is " + q->shape_string() + " but system.hamiltonian is " + std::to_string(dimension) + "x" +
               std::to_string(dimension),
           b.table().get("coupling"));
  const bool fermionic = kind == "lorentzian" || kind == "fermionic-exponents";
  if (!fermionic) require_hermitian(b, "coupling", *q);
  if (fermionic && q->is_hermitian())
    b.fail("coupling",
           "must be an annihilation-type operator (a level's d, e.g. [[0, 1], [0, 0]]), not Hermitian, for a " + kind +
               " bath",
           b.table().get("coupling"));
  return *q;
}

int read_terms(TableReader& b) {
  const std::int64_t nk = *b.integer("terms");
  if (nk < 0 || nk > 1000)
    b.fail("terms", "must be between 0 and 1000, got " + std::to_string(nk), b.table().get("terms"));
  return static_cast<int>(nk);
}

/// Whether `expansion` (default `fallback`) is "pade" rather than "matsubara".
bool pade_expansion(TableReader& b, const std::string& fallback) {
  const std::string expansion = b.string("expansion", false).value_or(fallback);
  if (expansion != "pade" && expansion != "matsubara")
    b.fail("expansion", "unknown expansion \"" + expansion + "\" (expected \"matsubara\" or \"pade\")",
           b.table().get("expansion"));
  return expansion == "pade";
}

/// A list of complex numbers from `key` and `key`_imag, times factor, appended to `out`.
void read_complex_list(TableReader& b, const std::string& key, double factor, std::vector<complex>& out) {
  const std::vector<double> re = b.numbers(key, false).value_or(std::vector<double>{});
  const std::optional<std::vector<double>> im = b.numbers(key + "_imag", false);
  if (im && im->size() != re.size())
    b.fail(key + "_imag",
           "has " + std::to_string(im->size()) + " entries but " + b.name(key) + " has " + std::to_string(re.size()),
           b.table().get(key + "_imag"));
  for (std::size_t i = 0; i < re.size(); ++i) out.push_back(factor * complex(re[i], im ? (*im)[i] : 0.0));
}

/// `rates` has as many entries as `coefficients`.
void require_same_length(TableReader& b, const char* rates, const std::vector<complex>& v, const char* coefficients,
                         const std::vector<complex>& c) {
  if (v.size() != c.size())
    b.fail(rates, "has " + std::to_string(v.size()) + " entries but " + b.name(coefficients) + " has " +
                      std::to_string(c.size()));
}

Bath read_drude_lorentz(TableReader& b, const UnitScale& scale, const Matrix& q) {
  DrudeLorentz p;
  p.lambda = b.non_negative("lambda") * scale.energy;
  p.gamma = b.positive("gamma") * scale.energy;
  p.temperature = b.positive("temperature") * scale.temperature;
  p.terms = read_terms(b);
  p.expansion = pade_expansion(b, "matsubara") ? DrudeLorentzExpansion::Pade : DrudeLorentzExpansion::Matsubara;
  p.terminator = b.boolean("terminator", false).value_or(false);
  return Bath::drude_lorentz(q, p);
}

Bath read_underdamped(TableReader& b, const UnitScale& scale, const Matrix& q) {
  Underdamped p;
  p.lambda = b.non_negative("lambda") * scale.energy;
  p.gamma = b.positive("gamma") * scale.energy;
  p.w0 = b.positive("w0") * scale.energy;
  p.temperature = b.positive("temperature") * scale.temperature;
  p.terms = read_terms(b);
  if (p.w0 <= p.gamma / 2) b.fail("w0", "must be > gamma / 2 for an underdamped bath", b.table().get("w0"));
  return Bath::underdamped(q, p);
}

/// C(t) is an energy squared: coefficients scale as energy^2, rates as energy (spectroscopy units: ck
/// in cm^-2, vk in cm^-1).
Bath read_exponents(TableReader& b, const UnitScale& scale, const Matrix& q) {
  CorrelationExpansion e;
  const double c_factor = scale.energy * scale.energy;
  read_complex_list(b, "ck_real", c_factor, e.ck_real);
  read_complex_list(b, "vk_real", scale.energy, e.vk_real);
  read_complex_list(b, "ck_imag", c_factor, e.ck_imag);
  read_complex_list(b, "vk_imag", scale.energy, e.vk_imag);
  require_same_length(b, "vk_real", e.vk_real, "ck_real", e.ck_real);
  require_same_length(b, "vk_imag", e.vk_imag, "ck_imag", e.ck_imag);
  if (e.ck_real.empty() && e.ck_imag.empty())
    b.fail("ck_real", "an exponents bath needs ck_real/vk_real or ck_imag/vk_imag");
  return Bath::from_expansion(q, e);
}

/// J(w) fitted with exponents (FitOptions from the fit_ keys; fit_time defaults to the run's length).
Bath read_fitted(TableReader& b, const UnitScale& scale, const Matrix& q, const std::function<double()>& run_length) {
  const SpectralDensity j = read_density(b, scale, false);
  const double temperature = b.non_negative("temperature") * scale.temperature;
  FitOptions fit;
  if (b.has("fit_tolerance")) fit.tolerance = b.positive("fit_tolerance");
  fit.time = b.has("fit_time") ? b.positive("fit_time") * scale.time : run_length();
  const std::string method = b.string("fit_method", false).value_or("esprit");
  if (method == "prony")
    fit.method = FitMethod::prony;
  else if (method != "esprit")
    b.fail("fit_method", "unknown method \"" + method + "\" (expected \"esprit\" or \"prony\")",
           b.table().get("fit_method"));
  fit.max_exponents = b.int_value("fit_max_exponents").value_or(fit.max_exponents);
  if (const auto problem = fit.validate()) {
    const std::string key = "fit_" + problem->field;  // (the keys are fit_ and the fields' names)
    b.fail(key, problem->problem, b.table().get(key));
  }
  try {
    return Bath::fitted(q, j, temperature, fit);
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {  // the fit did not reach its tolerance, or its window is too long for J
    const std::string key = std::string(e.what()).find("J is cut") != std::string::npos ? "fit_time" : "fit_tolerance";
    b.fail(key, e.what(), b.table().get(key));
  }
}

Bath read_lorentzian(TableReader& b, const UnitScale& scale, const Matrix& q) {
  Lorentzian p;
  p.gamma = b.non_negative("gamma") * scale.energy;
  p.width = b.positive("width") * scale.energy;
  p.mu = *b.number("mu") * scale.energy;
  p.temperature = b.positive("temperature") * scale.temperature;
  p.terms = read_terms(b);
  p.expansion = pade_expansion(b, "pade") ? LorentzianExpansion::Pade : LorentzianExpansion::Matsubara;
  return Bath::lorentzian(q, p);
}

Bath read_fermionic_exponents(TableReader& b, const UnitScale& scale, const Matrix& q) {
  FermionicExpansion e;
  const double c_factor = scale.energy * scale.energy;  // (as for a bosonic C(t))
  read_complex_list(b, "ck_plus", c_factor, e.ck_plus);
  read_complex_list(b, "vk_plus", scale.energy, e.vk_plus);
  read_complex_list(b, "ck_minus", c_factor, e.ck_minus);
  read_complex_list(b, "vk_minus", scale.energy, e.vk_minus);
  require_same_length(b, "vk_plus", e.vk_plus, "ck_plus", e.ck_plus);
  require_same_length(b, "vk_minus", e.vk_minus, "ck_minus", e.ck_minus);
  if (e.ck_plus.size() != e.ck_minus.size())
    b.fail("ck_minus", "has " + std::to_string(e.ck_minus.size()) + " entries but " + b.name("ck_plus") + " has " +
                           std::to_string(e.ck_plus.size()) + " (each + exponent pairs with a - exponent)");
  if (e.ck_plus.empty()) b.fail("ck_plus", "a fermionic-exponents bath needs at least one pair of exponents");
  return Bath::fermionic(q, e);
}

}  // namespace

Bath read_bath(TableReader& b, const UnitScale& scale, int dimension, const std::function<double()>& run_length) {
  const std::string kind = *b.string("kind");
  b.allow_only(bath_keys(b, kind, scale), "a " + kind + " bath");
  const Matrix q = read_coupling(b, kind, dimension);
  try {
    if (kind == "drude-lorentz") return read_drude_lorentz(b, scale, q);
    if (kind == "underdamped") return read_underdamped(b, scale, q);
    if (kind == "exponents") return read_exponents(b, scale, q);
    if (kind == "spectral-density") return read_fitted(b, scale, q, run_length);
    if (kind == "lorentzian") return read_lorentzian(b, scale, q);
    return read_fermionic_exponents(b, scale, q);  // (bath_keys refused any other kind)
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {  // the library's own checks (e.g. a singular expansion)
    b.fail("", e.what());
  }
}

}  // namespace heom::io::impl
