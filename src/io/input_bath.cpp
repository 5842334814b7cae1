// The input's [[bath]] tables: a Drude-Lorentz, underdamped or explicit-exponent bath, in solver units.
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/model/correlation.hpp"
#include "io/input_sections.hpp"

namespace heom::io::impl {

Bath read_bath(TableReader& b, const UnitScale& scale, int dimension) {
  const std::string kind = *b.string("kind");
  std::vector<std::string> allowed = {"kind", "coupling", "coupling_imag"};
  if (kind == "drude-lorentz") {
    allowed.insert(allowed.end(), {"lambda", "gamma", "temperature", "terms", "expansion", "terminator"});
  } else if (kind == "underdamped") {
    allowed.insert(allowed.end(), {"lambda", "gamma", "w0", "temperature", "terms"});
  } else if (kind == "exponents") {
    for (const char* list : {"ck_real", "vk_real", "ck_imag", "vk_imag"})
      allowed.insert(allowed.end(), {list, std::string(list) + "_imag"});
  } else {
    b.fail("kind", "unknown bath kind \"" + kind + "\" (expected \"drude-lorentz\", \"underdamped\" or \"exponents\")",
           b.table().get("kind"));
  }
  b.allow_only(allowed, "a " + kind + " bath");
  const std::optional<Matrix> q = b.complex_matrix("coupling", "coupling_imag");
  if (q->rows() != dimension)
    b.fail("coupling",
           "is " + q->shape_string() + " but system.hamiltonian is " + std::to_string(dimension) + "x" +
               std::to_string(dimension),
           b.table().get("coupling"));
  require_hermitian(b, "coupling", *q);

  auto energy = [&](const char* key) { return b.positive(key) * scale.energy; };
  auto terms = [&]() {
    const std::int64_t nk = *b.integer("terms");
    if (nk < 0 || nk > 1000)
      b.fail("terms", "must be between 0 and 1000, got " + std::to_string(nk), b.table().get("terms"));
    return static_cast<int>(nk);
  };
  try {
    if (kind == "drude-lorentz") {
      DrudeLorentz p;
      p.lambda = b.non_negative("lambda") * scale.energy;
      p.gamma = energy("gamma");
      p.temperature = b.positive("temperature") * scale.temperature;
      p.terms = terms();
      const std::string expansion = b.string("expansion", false).value_or("matsubara");
      if (expansion == "pade")
        p.expansion = DrudeLorentzExpansion::Pade;
      else if (expansion != "matsubara")
        b.fail("expansion", "unknown expansion \"" + expansion + "\" (expected \"matsubara\" or \"pade\")",
               b.table().get("expansion"));
      p.terminator = b.boolean("terminator", false).value_or(false);
      return Bath::drude_lorentz(*q, p);
    }
    if (kind == "underdamped") {
      Underdamped p;
      p.lambda = b.non_negative("lambda") * scale.energy;
      p.gamma = energy("gamma");
      p.w0 = energy("w0");
      p.temperature = b.positive("temperature") * scale.temperature;
      p.terms = terms();
      if (p.w0 <= p.gamma / 2) b.fail("w0", "must be > gamma / 2 for an underdamped bath", b.table().get("w0"));
      return Bath::underdamped(*q, p);
    }
    if (kind == "exponents") {
      CorrelationExpansion e;
      // C(t) is an energy squared: coefficients scale as energy^2, rates as energy (spectroscopy
      // units: ck in cm^-2, vk in cm^-1).
      auto list = [&](const std::string& key, double factor, std::vector<complex>& out) {
        const std::vector<double> re = b.numbers(key, false).value_or(std::vector<double>{});
        const std::optional<std::vector<double>> im = b.numbers(key + "_imag", false);
        if (im && im->size() != re.size())
          b.fail(
              key + "_imag",
              "has " + std::to_string(im->size()) + " entries but " + b.name(key) + " has " + std::to_string(re.size()),
              b.table().get(key + "_imag"));
        for (std::size_t i = 0; i < re.size(); ++i) out.push_back(factor * complex(re[i], im ? (*im)[i] : 0.0));
      };
      const double c_factor = scale.energy * scale.energy;
      list("ck_real", c_factor, e.ck_real);
      list("vk_real", scale.energy, e.vk_real);
      list("ck_imag", c_factor, e.ck_imag);
      list("vk_imag", scale.energy, e.vk_imag);
      if (e.ck_real.size() != e.vk_real.size())
        b.fail("vk_real", "has " + std::to_string(e.vk_real.size()) + " entries but " + b.name("ck_real") + " has " +
                              std::to_string(e.ck_real.size()));
      if (e.ck_imag.size() != e.vk_imag.size())
        b.fail("vk_imag", "has " + std::to_string(e.vk_imag.size()) + " entries but " + b.name("ck_imag") + " has " +
                              std::to_string(e.ck_imag.size()));
      if (e.ck_real.empty() && e.ck_imag.empty())
        b.fail("ck_real", "an exponents bath needs ck_real/vk_real or ck_imag/vk_imag");
      return Bath::from_expansion(*q, e);
    }
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {  // the library's own checks (e.g. a singular expansion)
    b.fail("", e.what());
  }
  throw Error("read_bath: unreachable");
}

}  // namespace heom::io::impl
