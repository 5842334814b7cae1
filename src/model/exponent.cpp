// Merging of bath exponents, exactly as QuTiP 4.7's BosonicBath.combine.
#include "heom/model/exponent.hpp"

#include <cmath>

namespace heom {

const char* to_string(ExponentKind kind) {
  switch (kind) {
    case ExponentKind::R:
      return "R";
    case ExponentKind::I:
      return "I";
    case ExponentKind::RI:
      return "RI";
    case ExponentKind::plus:
      return "+";
    case ExponentKind::minus:
      return "-";
  }
  return "?";
}

std::vector<Exponent> combine_exponents(const std::vector<Exponent>& exponents, double rtol, double atol) {
  // numpy.isclose(a, b): |a - b| <= atol + rtol |b|, with b the later exponent.
  auto close = [&](complex a, complex b) { return std::abs(a - b) <= atol + rtol * std::abs(b); };

  std::vector<Exponent> merged;
  std::vector<bool> taken(exponents.size(), false);
  for (std::size_t first = 0; first < exponents.size(); ++first) {
    if (taken[first]) continue;
    std::vector<const Exponent*> group;
    for (std::size_t other = first; other < exponents.size(); ++other) {
      if (!taken[other] && close(exponents[first].v, exponents[other].v)) {
        taken[other] = true;
        group.push_back(&exponents[other]);
      }
    }
    const Exponent& lead = *group.front();
    bool uniform = lead.kind != ExponentKind::RI;
    for (const Exponent* e : group) uniform = uniform && e->kind == lead.kind;

    Exponent out;
    out.v = lead.v;
    if (uniform) {
      out.kind = lead.kind;
      for (const Exponent* e : group) out.c += e->c;
    } else {
      out.kind = ExponentKind::RI;
      for (const Exponent* e : group) {
        if (e->kind == ExponentKind::R) out.c += e->c;
        if (e->kind == ExponentKind::RI) {
          out.c += e->c;
          out.c2 += e->c2;
        }
        if (e->kind == ExponentKind::I) out.c2 += e->c;
      }
    }
    merged.push_back(out);
  }
  return merged;
}

}  // namespace heom
