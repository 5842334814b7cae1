// Bath exponents, the merge rule and the terminator against QuTiP 4.7, and parameter validation.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "test_support.hpp"

namespace {

using heom::Bath;
using heom::complex;
using heom::DrudeLorentz;
using heom::DrudeLorentzExpansion;
using heom::Exponent;
using heom::ExponentKind;
using heom::Matrix;
using heom::Underdamped;
namespace ht = heom::testing;

ExponentKind kind_from(const std::string& s) {
  if (s == "R") return ExponentKind::R;
  if (s == "I") return ExponentKind::I;
  return ExponentKind::RI;
}

/// |a - b| <= 1e-12 |b| (+ a floor for values that are zero in QuTiP's arithmetic).
void expect_close(complex a, complex b, const std::string& what) {
  EXPECT_LE(std::abs(a - b), 1e-12 * std::abs(b) + 1e-300) << what << ": heom " << a << " vs QuTiP " << b;
}

void expect_same_exponents(const std::vector<Exponent>& ours, const nlohmann::json& theirs, const std::string& label) {
  ASSERT_EQ(ours.size(), theirs.size()) << label;
  for (std::size_t k = 0; k < ours.size(); ++k) {
    const std::string where = label + " exponent " + std::to_string(k);
    EXPECT_EQ(ours[k].kind, kind_from(theirs[k].at("kind"))) << where;
    expect_close(ours[k].c, ht::to_complex(theirs[k].at("c")), where + " c");
    expect_close(ours[k].c2, ht::to_complex(theirs[k].at("c2")), where + " c2");
    expect_close(ours[k].v, ht::to_complex(theirs[k].at("v")), where + " v");
  }
}

TEST(BathExponents, MatchQutip) {
  const auto ref = ht::load_reference("bath_exponents");
  int checked = 0;
  for (const auto& c : ref.at("cases")) {
    const std::string kind = c.at("kind");
    std::string label = kind;
    if (kind == "drude-lorentz") {
      DrudeLorentz p = ht::drude_lorentz_from_json(c);
      p.terminator = true;
      std::ostringstream name;  // (GCC 12 warns falsely, -Wrestrict, on a chain of string +)
      name << kind << " " << c.at("expansion").get<std::string>() << " Nk=" << p.terms << " lambda=" << p.lambda;
      label = name.str();
      const Bath bath = Bath::drude_lorentz(heom::operators::sigma_z(), p);
      expect_same_exponents(bath.exponents(), c.at("exponents"), label);
      ASSERT_TRUE(bath.has_terminator());
      const complex delta = ht::to_complex(c.at("terminator_delta"));
      // Delta is a difference of O(lambda T / gamma) terms: compare relative to those.
      EXPECT_LE(std::abs(bath.terminator_delta() - delta), 1e-12 * (2 * p.lambda * p.temperature / p.gamma + p.lambda))
          << label << ": terminator " << bath.terminator_delta() << " vs " << delta;
      EXPECT_NEAR(bath.terminator_delta().imag(), 0.0, 1e-12 * p.lambda) << label << ": Drude-Lorentz Delta is real";
    } else if (kind == "underdamped") {
      const Underdamped p = ht::underdamped_from_json(c);
      label += " Nk=" + std::to_string(p.terms);
      expect_same_exponents(Bath::underdamped(heom::operators::sigma_z(), p).exponents(), c.at("exponents"), label);
    } else {
      expect_same_exponents(Bath::from_expansion(heom::operators::sigma_z(), ht::expansion_from_json(c)).exponents(),
                            c.at("exponents"), "merge case " + std::to_string(checked));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 47);  // 32 Drude-Lorentz, 9 underdamped, 6 merge cases
}

TEST(BathExponents, MergeRuleGroupsByRate) {
  // R(1) + I(1) -> RI; R(2) + R(2 + 1e-7 relative) -> one R; I(3) alone stays I.
  const std::vector<Exponent> raw = {{ExponentKind::R, 1.0, 1.0},
                                     {ExponentKind::R, 0.5, 2.0},
                                     {ExponentKind::I, -0.25, 1.0},
                                     {ExponentKind::R, 0.125, 2.0 + 2e-7},
                                     {ExponentKind::I, 0.75, 3.0}};
  const auto merged = heom::combine_exponents(raw);
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].kind, ExponentKind::RI);
  EXPECT_EQ(merged[0].c, complex(1.0));
  EXPECT_EQ(merged[0].c2, complex(-0.25));
  EXPECT_EQ(merged[1].kind, ExponentKind::R);
  EXPECT_EQ(merged[1].c, complex(0.625));
  EXPECT_EQ(merged[2].kind, ExponentKind::I);
  EXPECT_EQ(merged[2].c, complex(0.75));
  // Rates 1e-4 apart (relative) stay separate.
  EXPECT_EQ(heom::combine_exponents({{ExponentKind::R, 1.0, 1.0}, {ExponentKind::R, 1.0, 1.0001}}).size(), 2u);
}

TEST(BathExponents, DrudeLorentzMatsubaraClosedForm) {
  // First Matsubara term c = lambda gamma cot(gamma / 2T), c2 = -lambda gamma, v = gamma.
  DrudeLorentz p{0.1, 0.5, 0.5, 1};
  const auto e = Bath::drude_lorentz(heom::operators::sigma_z(), p).exponents();
  ASSERT_EQ(e.size(), 2u);
  EXPECT_NEAR(e[0].c.real(), 0.1 * 0.5 / std::tan(0.5), 1e-15);
  EXPECT_NEAR(e[0].c2.real(), -0.05, 1e-15);
  const double v1 = 2 * M_PI * 0.5;
  EXPECT_NEAR(e[1].v.real(), v1, 1e-15);
  EXPECT_NEAR(e[1].c.real(), 4 * 0.1 * 0.5 * 0.5 * v1 / (v1 * v1 - 0.25), 1e-15);
}

void expect_error_naming(const std::function<void()>& f, const std::string& key) {
  try {
    f();
    ADD_FAILURE() << "no heom::Error for " << key;
  } catch (const heom::Error& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos)
        << "message \"" << e.what() << "\" does not name " << key;
  }
}

TEST(BathValidation, RejectsBadParametersNamingThem) {
  const Matrix sz = heom::operators::sigma_z();
  expect_error_naming([&] { Bath::drude_lorentz(sz, {0.1, 0.5, 0.0, 2}); }, "temperature");
  expect_error_naming([&] { Bath::drude_lorentz(sz, {0.1, 0.5, -1.0, 2}); }, "temperature");
  expect_error_naming([&] { Bath::drude_lorentz(sz, {0.1, 0.0, 0.5, 2}); }, "gamma");
  expect_error_naming([&] { Bath::drude_lorentz(sz, {0.1, -0.5, 0.5, 2}); }, "gamma");
  expect_error_naming([&] { Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, -1}); }, "terms");
  expect_error_naming([&] { Bath::drude_lorentz(sz, {-0.1, 0.5, 0.5, 1}); }, "lambda");
  expect_error_naming([&] { Bath::drude_lorentz(sz, {0.1, 2 * M_PI * 0.5, 0.5, 1}); }, "gamma");
  expect_error_naming([&] { Bath::underdamped(sz, {0.1, 0.5, 0.25, 0.5, 1}); }, "w0");
  expect_error_naming([&] { Bath::underdamped(sz, {0.1, 0.5, 0.2, 0.5, 1}); }, "w0");
  expect_error_naming([&] { Bath::underdamped(sz, {0.1, 0.5, 1.0, 0.0, 1}); }, "temperature");
  expect_error_naming([&] { Bath::underdamped(sz, {0.1, 0.5, 1.0, 0.5, -2}); }, "terms");
  expect_error_naming([&] { Bath::drude_lorentz(Matrix{{1.0, 1.0}, {0.0, 1.0}}, {0.1, 0.5, 0.5, 1}); }, "Hermitian");
  expect_error_naming([&] { Bath::drude_lorentz(Matrix(2, 3), {0.1, 0.5, 0.5, 1}); }, "square");
  heom::CorrelationExpansion uneven;
  uneven.ck_real = {1.0, 2.0};
  uneven.vk_real = {1.0};
  expect_error_naming([&] { Bath::from_expansion(sz, uneven); }, "vk_real");
  // A coupling operator of the wrong dimension for the model.
  expect_error_naming(
      [&] {
        heom::Model(Matrix::identity(3), {Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, 1})});
      },
      "coupling operator");
  expect_error_naming([&] { heom::Model(Matrix{{0.0, 1.0}, {2.0, 0.0}}); }, "hamiltonian");
  // Lindblad terms: the operator's dimension and elements, the rate's sign and finiteness.
  const Matrix lowering{{0.0, 0.0}, {1.0, 0.0}};
  expect_error_naming([&] { heom::Model(sz).add_lindblad(Matrix::identity(3), 0.1); }, "lindblad 0: operator");
  expect_error_naming([&] { heom::Model(sz).add_lindblad(lowering, -0.1); }, "lindblad 0: rate");
  expect_error_naming([&] { heom::Model(sz).add_lindblad(lowering, 0.1).add_lindblad(lowering, NAN); },
                      "lindblad 1: rate");
  expect_error_naming([&] { heom::Model(sz).add_lindblad(Matrix{{0.0, INFINITY}, {0.0, 0.0}}, 0.1); }, "non-finite");
}

}  // namespace
