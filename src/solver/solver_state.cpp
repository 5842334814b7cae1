// The fingerprint of a Solver: what its saved states, and the parts of a split hierarchy, must agree on.
#include "heom/solver/solver_state.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "heom/config.hpp"

namespace heom {

namespace {

void write_matrix(std::ostream& out, const Matrix& m) {
  out << m.rows() << 'x' << m.cols();
  for (int i = 0; i < m.rows(); ++i)
    for (int j = 0; j < m.cols(); ++j) out << ' ' << m(i, j).real() << ' ' << m(i, j).imag();
}

/// The shortest text of a number that reads back to the same bits.
std::string exact(double value) {
  char digits[32];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(digits, sizeof(digits), "%.*g", precision, value);
    if (std::strtod(digits, nullptr) == value) break;
  }
  return digits;
}

/// The compiler that built this library ("GCC 12.2.0"); its code generation can change a step's bits.
std::string compiler() {
#if defined(__clang__)
  return std::string("Clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("GCC ") + __VERSION__;
#else
  return "an unknown compiler";
#endif
}

}  // namespace

Fingerprint fingerprint(const Model& model, int depth, const SolverOptions& options, const std::string& backend,
                        bool avx512) {
  const IntegratorOptions& integrator = options.integrator;
  const GeneratorOptions& generator = options.generator;
  const double importance_threshold = options.importance_threshold;
  std::ostringstream hamiltonian, baths;
  hamiltonian << std::hexfloat;
  baths << std::hexfloat;
  write_matrix(hamiltonian, model.hamiltonian());
  for (const Drive& drive : model.drives()) {  // (a drive is part of H(t))
    hamiltonian << " drive ";
    write_matrix(hamiltonian, drive.op);
    hamiltonian << ' ' << drive.shape.exact_description();
  }
  for (const Bath& bath : model.baths()) {
    baths << "bath ";
    write_matrix(baths, bath.coupling());
    for (const Exponent& e : bath.exponents())
      baths << ' ' << to_string(e.kind) << ' ' << e.c.real() << ' ' << e.c.imag() << ' ' << e.c2.real() << ' '
            << e.c2.imag() << ' ' << e.v.real() << ' ' << e.v.imag();
    for (const Exponent& e : bath.exponents())  // (fermionic ones only: bosonic fingerprints stay as they were)
      if (e.fermionic()) baths << " partner " << e.partner_c.real() << ' ' << e.partner_c.imag();
    baths << " terminator " << bath.has_terminator() << ' ' << bath.terminator_delta().real() << ' '
          << bath.terminator_delta().imag() << '\n';
  }
  // (Lindblad terms count as part of the environment: "baths".)
  for (const Lindblad& term : model.lindblad()) {
    baths << "lindblad " << term.rate << ' ';
    write_matrix(baths, term.op);
    baths << '\n';
  }
  const std::string build = std::string("heom ") + HEOM_VERSION_STRING + ", " + backend + ", Kokkos " +
                            std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) +
                            "." + std::to_string(KOKKOS_VERSION % 100) + ", " + compiler() +
                            (avx512 ? ", AVX-512" : "");
  Fingerprint result{{"build", build},
                     {"hamiltonian", fingerprint_hash(hamiltonian.str())},
                     {"baths", fingerprint_hash(baths.str())},
                     {"depth", std::to_string(depth)},
                     {"method", to_string(integrator.method)},
                     {"rtol", exact(integrator.rtol)},
                     {"atol", exact(integrator.atol)},
                     {"step", exact(integrator.step)},
                     {"max_step", exact(integrator.max_step)},
                     {"min_step", exact(integrator.min_step)},
                     {"kernel", to_string(generator.kernel)},
                     {"shape", to_string(generator.shape)}};
  // (Odd parity alone: the fingerprints of even runs, every checkpoint so far, stay as they were.)
  if (generator.parity == Parity::odd) result.push_back({"parity", to_string(generator.parity)});
  // (Likewise a truncated hierarchy alone.)
  if (importance_threshold > 0.0) result.push_back({"importance_threshold", exact(importance_threshold)});
  // (And a lower exp-adams order alone.)
  if (integrator.max_order != IntegratorOptions{}.max_order)
    result.push_back({"max_order", std::to_string(integrator.max_order)});
  return result;
}

}  // namespace heom
