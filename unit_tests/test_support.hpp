// Shared helpers of the unit tests: the backends typed tests run on, QuTiP reference files, and
// models rebuilt from their JSON description.
#ifndef HEOM_UNIT_TESTS_TEST_SUPPORT_HPP
#define HEOM_UNIT_TESTS_TEST_SUPPORT_HPP

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heom/heom.hpp"

namespace heom::testing {

template <class Placeholder, class... Spaces>
struct DropPlaceholder {
  using type = ::testing::Types<Spaces...>;
};
#define HEOM_TEST_TYPE(E) , E
/// Typed tests run on every backend the build has.
using Backends = DropPlaceholder<void HEOM_FOR_EACH_BACKEND(HEOM_TEST_TYPE)>::type;
#undef HEOM_TEST_TYPE

inline nlohmann::json load_reference(const std::string& name) {
  const std::string path = std::string(HEOM_REFERENCE_DIR) + "/" + name + ".json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open reference file " + path);
  return nlohmann::json::parse(in);
}

/// The largest |a[i] - b[i]| of two flat vectors of the same length.
inline double max_diff(const std::vector<complex>& a, const std::vector<complex>& b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

/// Solver options with the integrator's tolerances.
inline SolverOptions tolerances(double rtol, double atol) {
  SolverOptions o;
  o.integrator.rtol = rtol;
  o.integrator.atol = atol;
  return o;
}

inline complex to_complex(const nlohmann::json& pair) { return {pair.at(0).get<double>(), pair.at(1).get<double>()}; }

inline Matrix to_matrix(const nlohmann::json& rows) {
  Matrix m(static_cast<int>(rows.size()), static_cast<int>(rows.at(0).size()));
  for (int i = 0; i < m.rows(); ++i)
    for (int j = 0; j < m.cols(); ++j) m(i, j) = to_complex(rows.at(i).at(j));
  return m;
}

inline std::vector<complex> to_complex_list(const nlohmann::json& list) {
  std::vector<complex> out;
  for (const auto& z : list) out.push_back(to_complex(z));
  return out;
}

/// Drude-Lorentz parameters as make_reference.py writes them.
inline DrudeLorentz drude_lorentz_from_json(const nlohmann::json& b) {
  DrudeLorentz p;
  p.lambda = b.at("lambda");
  p.gamma = b.at("gamma");
  p.temperature = b.at("temperature");
  p.terms = b.at("terms");
  p.expansion =
      b.value("expansion", "matsubara") == "pade" ? DrudeLorentzExpansion::Pade : DrudeLorentzExpansion::Matsubara;
  p.terminator = b.value("terminator", false);
  return p;
}

inline Underdamped underdamped_from_json(const nlohmann::json& b) {
  Underdamped p;
  p.lambda = b.at("lambda");
  p.gamma = b.at("gamma");
  p.w0 = b.at("w0");
  p.temperature = b.at("temperature");
  p.terms = b.at("terms");
  return p;
}

inline CorrelationExpansion expansion_from_json(const nlohmann::json& b) {
  CorrelationExpansion e;
  e.ck_real = to_complex_list(b.at("ck_real"));
  e.vk_real = to_complex_list(b.at("vk_real"));
  e.ck_imag = to_complex_list(b.at("ck_imag"));
  e.vk_imag = to_complex_list(b.at("vk_imag"));
  return e;
}

inline Lorentzian lorentzian_from_json(const nlohmann::json& b) {
  Lorentzian p;
  p.gamma = b.at("gamma");
  p.width = b.at("width");
  p.mu = b.at("mu");
  p.temperature = b.at("temperature");
  p.terms = b.at("terms");
  p.expansion = b.value("expansion", "pade") == "pade" ? LorentzianExpansion::Pade : LorentzianExpansion::Matsubara;
  return p;
}

inline FermionicExpansion fermionic_expansion_from_json(const nlohmann::json& b) {
  FermionicExpansion e;
  e.ck_plus = to_complex_list(b.at("ck_plus"));
  e.vk_plus = to_complex_list(b.at("vk_plus"));
  e.ck_minus = to_complex_list(b.at("ck_minus"));
  e.vk_minus = to_complex_list(b.at("vk_minus"));
  return e;
}

/// A heom::Bath from the bath description make_reference.py writes.
inline Bath bath_from_json(const nlohmann::json& b) {
  const Matrix q = to_matrix(b.at("coupling"));
  const std::string kind = b.at("kind");
  if (kind == "drude-lorentz") return Bath::drude_lorentz(q, drude_lorentz_from_json(b));
  if (kind == "underdamped") return Bath::underdamped(q, underdamped_from_json(b));
  if (kind == "lorentzian") return Bath::lorentzian(q, lorentzian_from_json(b));
  if (kind == "fermionic-exponents") return Bath::fermionic(q, fermionic_expansion_from_json(b));
  return Bath::from_expansion(q, expansion_from_json(b));
}

/// A drive of the reference data: heom's [[system.drive]] keys (make_reference.py, drive_coefficient).
inline DriveShape drive_shape_from_json(const nlohmann::json& d) {
  const std::string shape = d.at("shape");
  auto get = [&](const char* key, double fallback) { return d.contains(key) ? d.at(key).get<double>() : fallback; };
  if (shape == "cosine") return DriveShape::cosine(d.at("amplitude"), d.at("frequency"), get("phase", 0.0));
  if (shape == "gaussian")
    return DriveShape::gaussian(d.at("amplitude"), d.at("center"), d.at("width"), get("frequency", 0.0),
                                get("phase", 0.0));
  if (shape != "table") throw Error("drive_shape_from_json: unknown shape " + shape);
  const auto re = d.at("values").get<std::vector<double>>();
  const auto im =
      d.contains("values_imag") ? d.at("values_imag").get<std::vector<double>>() : std::vector<double>(re.size(), 0.0);
  std::vector<complex> values;
  for (std::size_t i = 0; i < re.size(); ++i) values.emplace_back(re[i], im[i]);
  return DriveShape::table(d.at("times").get<std::vector<double>>(), values);
}

inline Model model_from_json(const nlohmann::json& ref) {
  Model model(to_matrix(ref.at("hamiltonian")));
  for (const auto& b : ref.at("baths")) model.add_bath(bath_from_json(b));
  if (ref.contains("lindblad"))
    for (const auto& term : ref.at("lindblad")) model.add_lindblad(to_matrix(term.at("operator")), term.at("rate"));
  if (ref.contains("drives"))
    for (const auto& d : ref.at("drives")) model.add_drive(to_matrix(d.at("operator")), drive_shape_from_json(d));
  return model;
}

/// A random Hermitian n x n matrix with entries of size about `scale`, the same for the same seed.
inline Matrix random_hermitian(int n, double scale, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  Matrix m(n, n);
  for (int i = 0; i < n; ++i) {
    m(i, i) = u(rng);
    for (int j = i + 1; j < n; ++j) {
      m(i, j) = complex(u(rng), u(rng));
      m(j, i) = std::conj(m(i, j));
    }
  }
  return m;
}

/// A random vector of `size` complex numbers in [-1, 1] + i [-1, 1], on the device.
template <class ExecSpace>
typename BackendTraits<ExecSpace>::template view<device_complex*> random_vector(std::int64_t size, unsigned seed) {
  typename BackendTraits<ExecSpace>::template view<device_complex*> v("heom::test::random", size);
  auto h = Kokkos::create_mirror_view(v);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (std::int64_t i = 0; i < size; ++i) h(i) = device_complex(u(rng), u(rng));
  Kokkos::deep_copy(v, h);
  return v;
}

/// max_i |a_i - b_i| and max_i |b_i| of two device vectors.
template <class View>
std::pair<double, double> max_difference(const View& a, const View& b) {
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < ha.extent(0); ++i) {
    diff = std::max(diff, Kokkos::abs(ha(i) - hb(i)));
    scale = std::max(scale, Kokkos::abs(hb(i)));
  }
  return {diff, scale};
}

}  // namespace heom::testing

#endif
