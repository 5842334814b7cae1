// The program's input parsing (units, defaults, output times) and the HDF5 round trip from C++.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "io/hdf5_output.hpp"
#include "io/input.hpp"
#include "io/spectrum.hpp"
#include "test_support.hpp"

namespace {

using heom::complex;
using heom::Matrix;
namespace io = heom::io;

/// A fixture's text (unit_tests/fixtures/: what the C++, program and Python suites share).
std::string fixture(const std::string& name) {
  std::ifstream in(std::string(HEOM_FIXTURE_DIR) + "/" + name);
  if (!in) throw std::runtime_error("cannot open fixture " + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string spin_boson = fixture("spin_boson.toml");

TEST(Input, RefusesTheSettingsEveryFrontEndRefuses) {
  // The fixture's settings, as [dynamics] or [hierarchy] keys: the same words as Python's refusal,
  // after the key's table and line.
  const nlohmann::json refused = nlohmann::json::parse(fixture("refused_settings.json"));
  int checked = 0;
  for (const nlohmann::json& r : refused.at("settings")) {
    const std::string setting = r.at("setting"), table = r.at("table");
    const std::string value =
        r.at("value").is_string() ? "\"" + r.at("value").get<std::string>() + "\"" : r.at("value").dump();
    ASSERT_EQ(table, "dynamics");  // (the fixture's dynamics table comes last: the key goes at the end)
    try {
      (void)io::parse_run_config(spin_boson + setting + " = " + value + "\n", "bad.toml");
      ADD_FAILURE() << setting << " = " << value << " was accepted";
    } catch (const io::InputError& e) {
      EXPECT_EQ(std::string(e.what()), "bad.toml:19: " + table + "." + r.at("message").get<std::string>());
    }
    ++checked;
  }
  EXPECT_GE(checked, 4);
}

TEST(Input, ReadsTheModelAndDefaults) {
  const io::RunConfig c = io::parse_run_config(spin_boson, "test.toml");
  EXPECT_EQ(c.units, io::Units::natural);
  EXPECT_EQ(c.model.dimension(), 2);
  EXPECT_EQ(c.model.hamiltonian()(0, 1), complex(0.5, 0.1));
  EXPECT_EQ(c.model.num_exponents(), 3);
  EXPECT_EQ(c.depth, 5);
  EXPECT_EQ(c.solver.integrator.method, heom::Method::automatic);
  EXPECT_EQ(c.solver.integrator.rtol, 1e-8);
  EXPECT_EQ(c.solver.integrator.atol, 1e-10);
  EXPECT_TRUE(c.output_file.empty());
  EXPECT_FALSE(c.write_ados);
  // 0, 0.3, 0.6, 0.9 and then t_end itself.
  const std::vector<double> times = c.output_times();
  ASSERT_EQ(times.size(), 5u);
  EXPECT_DOUBLE_EQ(times[3], 0.9);
  EXPECT_EQ(times.back(), 1.0);
}

TEST(Input, SpectroscopyUnitsConvertToRadiansPerFemtosecond) {
  std::string text = spin_boson;
  text = "units = \"spectroscopy\"\n" + text;
  const io::RunConfig c = io::parse_run_config(text, "test.toml");
  const double cm = 2 * M_PI * 2.99792458e-5;  // 1 cm^-1 in rad/fs
  EXPECT_NEAR(c.model.hamiltonian()(0, 0).real(), 0.25 * cm, 1e-15);
  // The same bath in natural units with lambda, gamma, T scaled: identical exponents.
  heom::DrudeLorentz p{0.1 * cm, 0.5 * cm, 0.5 * 0.6950348 * cm, 2};
  const auto expected = heom::Bath::drude_lorentz(heom::operators::sigma_z(), p).exponents();
  const auto& got = c.model.baths()[0].exponents();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    EXPECT_NEAR(std::abs(got[k].v - expected[k].v), 0.0, 1e-15);
    EXPECT_NEAR(std::abs(got[k].c - expected[k].c), 0.0, 1e-15 * std::abs(expected[k].c));
  }
  EXPECT_EQ(c.t_end, 1.0);  // fs stay fs
}

TEST(Input, ResponseExampleBuildsTheManifolds) {
  const io::RunConfig c = io::read_run_config(std::string(HEOM_EXAMPLE_DIR) + "/fmo_2d.toml");
  ASSERT_TRUE(c.response);
  const heom::ExcitonManifolds& m = c.response->manifolds;
  EXPECT_EQ(m.dimension(), 1 + 7 + 21);
  EXPECT_EQ(m.model.baths().size(), 7u);
  // |12> (sites 1 and 2, level 8): e_1 + e_2 in the solver's units.
  EXPECT_DOUBLE_EQ(m.model.hamiltonian()(8, 8).real(),
                   c.model.hamiltonian()(1, 1).real() + c.model.hamiltonian()(2, 2).real());
  EXPECT_EQ(c.response->options.t1_points, 64);
  EXPECT_DOUBLE_EQ(c.response->options.t1_step, 10.0);  // fs stay fs
  EXPECT_EQ(c.response->options.waiting_times.size(), 3u);
  EXPECT_TRUE(c.output_times().empty());
}

TEST(Input, ExampleFilesParse) {
  for (const char* name : {"spin_boson.toml", "fmo_77k.toml", "ohmic_spin_boson.toml"}) {
    const io::RunConfig c = io::read_run_config(std::string(HEOM_EXAMPLE_DIR) + "/" + name);
    EXPECT_GT(c.model.num_exponents(), 0) << name;
  }
  const io::RunConfig fmo = io::read_run_config(std::string(HEOM_EXAMPLE_DIR) + "/fmo_77k.toml");
  EXPECT_EQ(fmo.model.dimension(), 7);
  EXPECT_EQ(fmo.model.num_exponents(), 14);
  EXPECT_NEAR(fmo.model.baths()[0].exponents()[0].v.real(), 0.02, 1e-12);  // 1/gamma = 50 fs
}

// TOML allows characters outside ASCII in strings and comments only; elsewhere they are refused before
// toml++ (whose check for Unicode whitespace is undefined behaviour for some of them) sees them.
// TOML allows characters outside ASCII in strings and comments only. In comments heom hands toml++
// spaces instead (they mean nothing); in strings it refuses those that toml++ 3.3 cannot classify
// without undefined behaviour (U+00A1-U+0499 among them); elsewhere every one, naming the line.
TEST(Input, NonAsciiInStringsAndComments) {
  const std::string base = std::string(spin_boson);
  try {
    io::parse_run_config(base + "\u03bb = 1\n", "x.toml");
    FAIL() << "a non-ASCII key outside quotes was accepted";
  } catch (const io::InputError& e) {
    const auto line = std::count(base.begin(), base.end(), '\n') + 1;
    EXPECT_NE(std::string(e.what()).find("x.toml:" + std::to_string(line) + ": the character U+03BB is outside"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(io::parse_run_config("units = \"natural\" \u00a1\n" + base, "y.toml"), io::InputError);
  // A quote where no string can start does not open one (toml++ reads on as code).
  try {
    io::parse_run_config("un = 2\"nm\uFEF8?\n" + base, "q.toml");
    FAIL() << "a stray quote hid a character toml++ cannot classify";
  } catch (const io::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("q.toml:1: the character U+FEF8"), std::string::npos) << e.what();
  }
  try {
    io::parse_run_config(base + "[output]\nfile = \"\u03c1.h5\"\n", "g.toml");
    FAIL() << "U+03C1 in a string reached toml++";
  } catch (const io::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("U+03C1 is accepted in comments only"), std::string::npos) << e.what();
  }
  // Any of them in comments; in basic, literal and multi-line strings (with quotes and escapes) the others.
  const std::string fine =
      "# \u03c1(t) of a spin \u2014 comment\n" + base + "[output]\nfile = \"\u2014 \\\" x.h5\" # \u00e9\n";
  EXPECT_EQ(io::parse_run_config(fine, "z.toml").output_file, "\u2014 \" x.h5");
  EXPECT_EQ(io::parse_run_config(fine, "z.toml").input_text, fine);  // (the input is kept as written)
  const std::string multiline = base + "[output]\nfile = '''\u4e2d'''\n";
  EXPECT_EQ(io::parse_run_config(multiline, "w.toml").output_file, "\u4e2d");
}

TEST(Input, ReadsFittedSpectralDensities) {
  // A sum of an Ohmic and an underdamped term in spectroscopy units (cm^-1, K, fs), its window the
  // run's t_end: the exponents of the same fit made from the C++ API with the scaled parameters.
  const std::string text = R"(units = "spectroscopy"
[system]
hamiltonian = [[50, 20], [20, -50]]
[[bath]]
kind = "spectral-density"
coupling = [[1, 0], [0, -1]]
j = "sum"
temperature = 77
fit_tolerance = 1e-4
[[bath.component]]
j = "ohmic"
alpha = 0.05
cutoff = 100
exponent = 0.8
[[bath.component]]
j = "underdamped"
lambda = 30
gamma = 20
w0 = 150
[hierarchy]
depth = 2
[initial_state]
rho = [[1, 0], [0, 0]]
[dynamics]
t_end = 200.0
output_every = 10
)";
  const io::RunConfig c = io::parse_run_config(text, "test.toml");
  const double cm = 2 * M_PI * 2.99792458e-5, kelvin = 0.6950348 * cm;
  heom::SpectralDensity j = heom::SpectralDensity::ohmic(0.05, 100 * cm, 0.8);
  j += heom::SpectralDensity::underdamped(30 * cm, 20 * cm, 150 * cm);
  heom::FitOptions options;
  options.tolerance = 1e-4;
  options.time = 200.0;
  const auto expected = heom::Bath::fitted(heom::operators::sigma_z(), j, 77 * kelvin, options);
  const auto& got = c.model.baths()[0];
  ASSERT_TRUE(got.fit());
  ASSERT_EQ(got.exponents().size(), expected.exponents().size());
  for (std::size_t k = 0; k < got.exponents().size(); ++k) {
    EXPECT_LE(std::abs(got.exponents()[k].v - expected.exponents()[k].v), 1e-9 * std::abs(expected.exponents()[k].v));
    EXPECT_LE(std::abs(got.exponents()[k].c - expected.exponents()[k].c), 1e-9 * std::abs(expected.exponents()[k].c));
  }
  EXPECT_NE(got.description().find("ohmic (alpha 0.05"), std::string::npos) << got.description();
  EXPECT_NE(got.description().find("over t <= 200"), std::string::npos) << got.description();

  // A table, with fit_time, fit_method and fit_max_exponents.
  std::string table = spin_boson;
  const std::string bath = table.substr(table.find("[[bath]]"), table.find("[hierarchy]") - table.find("[[bath]]"));
  table.replace(table.find(bath), bath.size(), R"([[bath]]
kind = "spectral-density"
coupling = [[1, 0], [0, -1]]
j = "table"
w = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0]
values = [0.02, 0.035, 0.04, 0.035, 0.025, 0.015, 0.0]
temperature = 0.5
fit_time = 4.0
fit_tolerance = 1e-3
fit_method = "prony"
fit_max_exponents = 30
)");
  const io::RunConfig t = io::parse_run_config(table, "table.toml");

  // An ensemble sweeping alpha refits each point's bath.
  std::string sweep = text;
  sweep = sweep.substr(0, sweep.find("[[bath.component]]")) + R"(j = "ohmic"
alpha = 0.05
cutoff = 100
[hierarchy]
depth = 2
[initial_state]
rho = [[1, 0], [0, 0]]
[dynamics]
t_end = 200.0
output_every = 10
[ensemble]
[[ensemble.sweep]]
parameter = "bath[1].alpha"
values = [0.02, 0.08]
)";
  sweep.replace(sweep.find("j = \"sum\"\n"), std::string("j = \"sum\"\n").size(), "");
  const io::RunConfig e = io::parse_run_config(sweep, "sweep.toml");
  ASSERT_TRUE(e.ensemble);
  ASSERT_EQ(e.ensemble->members.size(), 2u);
  // (Members are made on demand: hold each while reading its baths.)
  const io::EnsembleMemberConfig weak_member = e.ensemble->members[0], strong_member = e.ensemble->members[1];
  const auto& weak = weak_member.model.baths()[0];
  const auto& strong = strong_member.model.baths()[0];
  ASSERT_TRUE(weak.fit() && strong.fit());
  // C(t) is linear in alpha: the same poles, coefficients 4x.
  ASSERT_EQ(weak.exponents().size(), strong.exponents().size());
  EXPECT_NEAR(std::abs(strong.exponents()[0].c / weak.exponents()[0].c), 4.0, 1e-6);
  ASSERT_TRUE(t.model.baths()[0].fit());
  EXPECT_EQ(t.model.baths()[0].fit()->options.method, heom::FitMethod::prony);
  EXPECT_EQ(t.model.baths()[0].fit()->options.time, 4.0);
  EXPECT_LE(t.model.baths()[0].fit()->error, 1e-3);
}

TEST(Input, ReadsLindbladTerms) {
  // Two terms, the second complex; in spectroscopy units the rate converts as an energy (cm^-1).
  std::string text = spin_boson;
  text = "units = \"spectroscopy\"\n" + text + R"(
[[lindblad]]
operator = [[0, 0], [1, 0]]
rate = 20.0
[[lindblad]]
operator = [[1, 0], [0, 0]]
operator_imag = [[0, 0], [0, 0.5]]
rate = 0.0
)";
  const io::RunConfig c = io::parse_run_config(text, "test.toml");
  ASSERT_EQ(c.model.lindblad().size(), 2u);
  const double cm = 2 * M_PI * 2.99792458e-5;
  EXPECT_NEAR(c.model.lindblad()[0].rate, 20.0 * cm, 1e-15);
  EXPECT_EQ(c.model.lindblad()[0].op(1, 0), complex(1.0));
  EXPECT_EQ(c.model.lindblad()[1].op(1, 1), complex(0.0, 0.5));
  EXPECT_EQ(c.model.lindblad()[1].rate, 0.0);
}

TEST(Input, ReadsDrives) {
  // Every shape, in spectroscopy units: amplitudes and frequencies are energies (cm^-1 -> rad/fs),
  // centers, widths and times fs; complex tables paired with their adjoints. And a sweep of a drive's
  // amplitude; an unpaired complex table is refused.
  const std::string text = R"(units = "spectroscopy"
[system]
hamiltonian = [[50, 20], [20, -50]]
[[system.drive]]
shape = "cosine"
operator = [[0, 1], [1, 0]]
amplitude = 10
frequency = 100
[[system.drive]]
shape = "gaussian"
operator = [[1, 0], [0, -1]]
amplitude = 5
center = 30
width = 8
frequency = 90
phase = 0.5
[[system.drive]]
shape = "constant"
operator = [[0, 1], [1, 0]]
operator_imag = [[0, -0.5], [0.5, 0]]
amplitude = 2
start = 10
end = 20
[[system.drive]]
shape = "table"
operator = [[0, 1], [0, 0]]
times = [0, 25, 50, 100]
values = [0, 1, 2, 1]
values_imag = [0, 0.5, 0, 0]
[[system.drive]]
shape = "table"
operator = [[0, 0], [1, 0]]
times = [0, 25, 50, 100]
values = [0, 1, 2, 1]
values_imag = [0, -0.5, 0, 0]
[hierarchy]
depth = 2
[initial_state]
rho = [[1, 0], [0, 0]]
[dynamics]
t_end = 100.0
output_every = 10
)";
  const io::RunConfig c = io::parse_run_config(text, "test.toml");
  const double cm = 2 * M_PI * 2.99792458e-5;
  const auto& d = c.model.drives();
  ASSERT_EQ(d.size(), 5u);  // (the last two: f sigma_+ + f* sigma_-, a Hermitian sum)
  EXPECT_NEAR(d[0].shape(3.0).real(), 10 * cm * std::cos(100 * cm * 3.0), 1e-15);
  EXPECT_NEAR(d[1].shape(33.0).real(), 5 * cm * std::exp(-0.5 * 9.0 / 64.0) * std::cos(90 * cm * 3.0 + 0.5), 1e-15);
  EXPECT_EQ(d[2].shape(9.9), complex(0.0));
  EXPECT_NEAR(d[2].shape(10.0).real(), 2 * cm, 1e-15);
  EXPECT_EQ(d[2].shape(20.0, heom::TimeSide::before), complex(2 * cm));
  EXPECT_EQ(d[2].shape(20.0, heom::TimeSide::after), complex(0.0));
  EXPECT_EQ(d[2].op(1, 0), complex(1.0, 0.5));
  EXPECT_NEAR(std::abs(d[3].shape(25.0) - complex(1.0, 0.5) * cm), 0.0, 1e-15);
  EXPECT_FALSE(d[3].shape.is_real());
  EXPECT_EQ(c.model.drive_breakpoints(), (std::vector<double>{0.0, 10.0, 20.0, 100.0}));

  std::string sweep = text + R"(
[ensemble]
[[ensemble.sweep]]
parameter = "system.drive[1].amplitude"
values = [10, 30]
)";
  const io::RunConfig e = io::parse_run_config(sweep, "sweep.toml");
  ASSERT_TRUE(e.ensemble);
  ASSERT_EQ(e.ensemble->members.size(), 2u);
  EXPECT_NEAR(e.ensemble->members[1].model.drives()[0].shape(3.0).real(),
              3.0 * e.ensemble->members[0].model.drives()[0].shape(3.0).real(), 1e-15);
  std::string unpaired = text;
  unpaired.replace(unpaired.rfind("values_imag = [0, -0.5, 0, 0]"), 29, "values_imag = [0, -0.4, 0, 0]");
  try {
    io::parse_run_config(unpaired, "unpaired.toml");
    ADD_FAILURE() << "a non-Hermitian H(t) was accepted";
  } catch (const io::InputError& error) {
    EXPECT_NE(std::string(error.what()).find("system.drive[4].values_imag: makes H(t) non-Hermitian"),
              std::string::npos)
        << error.what();
  }
  // A table drive has no amplitude to sweep.
  sweep.replace(sweep.find("drive[1].amplitude"), std::string("drive[1]").size(), "drive[4]");
  try {
    io::parse_run_config(sweep, "sweep.toml");
    ADD_FAILURE() << "a sweep of a table's amplitude was accepted";
  } catch (const io::InputError& error) {
    EXPECT_NE(std::string(error.what()).find("system.drive[4] (table) has no amplitude"), std::string::npos)
        << error.what();
  }
}

TEST(Input, SpectrumAndSteadyTables) {
  const io::RunConfig fmo = io::read_run_config(std::string(HEOM_EXAMPLE_DIR) + "/fmo_absorption.toml");
  ASSERT_TRUE(fmo.spectrum);
  EXPECT_EQ(fmo.spectrum->kind, io::SpectrumConfig::Kind::absorption);
  EXPECT_FALSE(fmo.has_initial_state);
  ASSERT_EQ(fmo.spectrum->dipoles.size(), 1u);
  EXPECT_EQ(fmo.spectrum->dipole_weight, 1.0);
  const Matrix& mu = fmo.spectrum->dipoles[0];
  EXPECT_EQ(mu(3, 0), complex(1.0));
  EXPECT_EQ(mu(0, 3), complex(1.0));
  EXPECT_EQ(mu(3, 3), complex(0.0));
  EXPECT_EQ(fmo.spectrum->window, io::SpectrumWindow::hann);
  EXPECT_EQ(fmo.spectrum->padding, 8);
  EXPECT_EQ(fmo.spectrum->frequency_range, (std::vector<double>{-300.0, 700.0}));
  EXPECT_EQ(fmo.rho0(0, 0), complex(1.0));  // (the ground state, unused: the dipoles start each run)

  const io::RunConfig sb = io::read_run_config(std::string(HEOM_EXAMPLE_DIR) + "/spin_boson_emission.toml");
  ASSERT_TRUE(sb.spectrum);
  EXPECT_EQ(sb.spectrum->kind, io::SpectrumConfig::Kind::power);
  EXPECT_TRUE(sb.spectrum->incoherent);
  EXPECT_EQ(sb.spectrum->op(1, 0), complex(1.0));
  EXPECT_EQ(sb.steady.tolerance, 1e-12);
  EXPECT_EQ(sb.steady.restart, heom::SteadyStateOptions{}.restart);

  // Vector dipoles: three polarizations of weight 1/3 (the orientation average).
  const io::RunConfig v = io::parse_run_config(R"(
[system]
hamiltonian = [[0, 0, 0], [0, 1, 0.1], [0, 0.1, 1.2]]
[hierarchy]
depth = 1
[dynamics]
t_end = 1.0
output_every = 0.25
[spectrum]
kind = "absorption"
dipoles = [[1.0, 2.0, 0.0], [0.0, 0.5, -1.0]]
)",
                                               "v.toml");
  ASSERT_EQ(v.spectrum->dipoles.size(), 3u);
  EXPECT_DOUBLE_EQ(v.spectrum->dipole_weight, 1.0 / 3.0);
  EXPECT_EQ(v.spectrum->dipoles[1](1, 0), complex(2.0));
  EXPECT_EQ(v.spectrum->dipoles[1](2, 0), complex(0.5));
  EXPECT_EQ(v.spectrum->dipoles[2](0, 2), complex(-1.0));
}

TEST(Input, LeadsDensityOfStatesAndBiasSweeps) {
  const io::RunConfig dos = io::read_run_config(std::string(HEOM_EXAMPLE_DIR) + "/anderson_spectral_function.toml");
  ASSERT_TRUE(dos.spectrum);
  EXPECT_EQ(dos.spectrum->kind, io::SpectrumConfig::Kind::density_of_states);
  EXPECT_EQ(dos.spectrum->op(0, 1), complex(1.0));
  EXPECT_EQ(dos.spectrum->op(1, 0), complex(0.0));
  EXPECT_EQ(dos.spectrum->method, io::SpectrumConfig::Method::time);
  EXPECT_TRUE(dos.spectrum->solved_frequencies().empty());

  // In frequency: frequency_points spread over frequency_range, ends included; the solves' tolerance.
  {
    std::ifstream in(std::string(HEOM_EXAMPLE_DIR) + "/anderson_spectral_function.toml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string padding = "padding = 4\n";
    ASSERT_NE(text.find(padding), std::string::npos);
    text.replace(text.find(padding), padding.size(),
                 "method = \"frequency\"\nfrequency_points = 5\ntolerance = 1e-7\n");
    const io::RunConfig f = io::parse_run_config(text, "dos.toml");
    EXPECT_EQ(f.spectrum->method, io::SpectrumConfig::Method::frequency);
    EXPECT_EQ(f.spectrum->solve_tolerance, 1e-7);
    EXPECT_EQ(f.spectrum->solved_frequencies(), (std::vector<double>{-3.0, -1.5, 0.0, 1.5, 3.0}));
  }

  // A sweep of one lead's mu: each member's lead has its own mu (its exponents' rates move with it,
  // v = W - i sigma mu for the first pair), the other lead keeps the file's.
  std::ifstream in(std::string(HEOM_EXAMPLE_DIR) + "/anderson_impurity.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text += R"(
[ensemble]
[[ensemble.sweep]]
parameter = "bath[1].mu"
values = [0.0, 1.5]
)";
  const io::RunConfig e = io::parse_run_config(text, "bias.toml");
  ASSERT_TRUE(e.ensemble);
  ASSERT_EQ(e.ensemble->members.size(), 2u);
  for (int m = 0; m < 2; ++m) {
    const io::EnsembleMemberConfig member = e.ensemble->members[m];
    const heom::Bath& left = member.model.baths()[0];
    const heom::Bath& right = member.model.baths()[1];
    EXPECT_NEAR(left.exponents()[0].v.imag(), -(m == 0 ? 0.0 : 1.5), 1e-14) << "member " << m;
    EXPECT_NEAR(right.exponents()[0].v.imag(), 0.5, 1e-14) << "member " << m;
  }
}

TEST(Input, ErrorsNameFileLineAndKey) {
  std::string text = spin_boson;
  text.replace(text.find("gamma = 0.5"), 11, "gamma = -2.0");
  try {
    io::parse_run_config(text, "bad.toml");
    FAIL() << "accepted a negative gamma";
  } catch (const io::InputError& e) {
    EXPECT_STREQ(e.what(), "bad.toml:9: bath[1].gamma: must be > 0, got -2");
  }
  EXPECT_THROW(io::read_run_config("/nonexistent/input.toml"), io::InputError);
  // exp-adams' order cap: 1..5 (refused_settings.json), and for exp-adams alone.
  EXPECT_EQ(io::parse_run_config(spin_boson, "test.toml").solver.integrator.max_order, 5);
  EXPECT_EQ(io::parse_run_config(spin_boson + "max_order = 4\n", "test.toml").solver.integrator.max_order, 4);
  try {
    io::parse_run_config(spin_boson + "method = \"dopri5\"\nmax_order = 4\n", "bad.toml");
    ADD_FAILURE() << "max_order accepted for dopri5";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "bad.toml:20: dynamics.max_order: applies to exp-adams only, not dopri5");
  }
}

TEST(Hdf5Output, RoundTripsEverything) {
  io::RunRecord r;
  r.input_text = "units = \"natural\"\n# some input\n";
  r.units = "natural";
  r.time_unit = "1/energy";
  r.dimension = 3;
  r.num_exponents = 2;
  r.depth = 1;
  r.num_ados = 3;
  r.backend = "OpenMP";
  r.generator_kernel = "host-block";
  r.threads = 2;
  r.devices = "MPI, 2 ranks";
  r.partition = {0, 2, 3};
  r.wall_time_s = 1.25;
  r.method = "dopri5";
  r.rtol = 1e-8;
  r.atol = 1e-10;
  r.statistics = {12, 3, 75};
  for (int t = 0; t < 4; ++t) {
    r.times.push_back(0.5 * t);
    Matrix m(3, 3);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) m(i, j) = complex(t + 0.1 * i, -0.01 * j);
    r.rho.push_back(m);
  }
  r.has_ados = true;
  for (int i = 0; i < 27; ++i) r.ados_final.emplace_back(i, -i);
  r.ado_labels = {0, 0, 0, 1, 1, 0};
  const std::string path = ::testing::TempDir() + "heom_roundtrip.h5";
  io::write_run_record(path, r);
  const io::RunRecord back = io::read_run_record(path);
  EXPECT_EQ(back.input_text, r.input_text);
  EXPECT_EQ(back.units, r.units);
  EXPECT_EQ(back.backend, r.backend);
  EXPECT_EQ(back.generator_kernel, r.generator_kernel);
  EXPECT_EQ(back.devices, r.devices);
  EXPECT_EQ(back.partition, r.partition);
  EXPECT_EQ(back.method, r.method);
  EXPECT_EQ(back.dimension, 3);
  EXPECT_EQ(back.num_ados, 3);
  EXPECT_EQ(back.statistics.steps, 12);
  EXPECT_EQ(back.statistics.rejected, 3);
  EXPECT_EQ(back.statistics.rhs_evaluations, 75);
  EXPECT_EQ(back.times, r.times);
  ASSERT_EQ(back.rho.size(), r.rho.size());
  for (std::size_t t = 0; t < r.rho.size(); ++t) EXPECT_EQ(heom::max_abs_diff(back.rho[t], r.rho[t]), 0.0);
  EXPECT_EQ(back.ados_final, r.ados_final);
  EXPECT_EQ(back.ado_labels, r.ado_labels);
  std::remove(path.c_str());
}

TEST(Hdf5Output, FailureLeavesNoFile) {
  io::RunRecord r;
  r.dimension = 1;
  r.times = {0.0};
  r.rho = {Matrix(1, 1)};
  const std::string path = "/nonexistent-folder/out.h5";
  EXPECT_THROW(io::write_run_record(path, r), heom::Error);
  std::ifstream in(path);
  EXPECT_FALSE(in.good());
}

// C(t) = exp(-i E t - g t) has the Lorentzian (1/pi) g / ((w - E)^2 + g^2) as its one-sided transform
// with exp(+i w t) (absorption), and its mirror at -E with exp(-i w t); a sampling long against 1/g and
// fine against 1/E gives it to the trapezoidal rule's O(dt^2) error, and the sum rule exactly.
TEST(Spectrum, OneSidedTransformOfADecayingLineIsItsLorentzian) {
  const double energy = 1.3, width = 0.2, dt = 0.01;
  std::vector<complex> samples;
  for (int k = 0; k <= 20000; ++k) samples.push_back(std::exp(complex(-width * k * dt, -energy * k * dt)));
  for (int sign : {1, -1}) {
    const io::SpectrumGrid s = io::one_sided_spectrum(samples, dt, sign, io::SpectrumWindow::none, 2);
    ASSERT_EQ(s.omega.size(), 2 * samples.size());
    double worst = 0.0, total = 0.0;
    for (std::size_t i = 0; i < s.omega.size(); ++i) {
      const double d = s.omega[i] - sign * energy;
      const double lorentzian = width / M_PI / (d * d + width * width);
      if (std::abs(s.omega[i]) < 5.0) worst = std::max(worst, std::abs(s.intensity[i] - lorentzian));
      total += s.intensity[i];
    }
    EXPECT_LT(worst, 1e-4 * (1.0 / (M_PI * width))) << "sign " << sign;
    EXPECT_NEAR(total * (s.omega[1] - s.omega[0]), 1.0, 1e-12) << "the sum rule: Re C(0)";
    EXPECT_TRUE(std::is_sorted(s.omega.begin(), s.omega.end()));
  }
  // A window keeps the sum rule (it is 1 at t = 0) and broadens the line.
  const io::SpectrumGrid hann = io::one_sided_spectrum(samples, dt, 1, io::SpectrumWindow::hann, 1);
  double total = 0.0;
  for (double x : hann.intensity) total += x;
  EXPECT_NEAR(total * (hann.omega[1] - hann.omega[0]), 1.0, 1e-12);
  EXPECT_THROW(io::one_sided_spectrum({complex(1.0)}, dt, 1, io::SpectrumWindow::none, 1), heom::Error);
  EXPECT_THROW(io::one_sided_spectrum(samples, dt, 1, io::SpectrumWindow::none, 0), heom::Error);
}

}  // namespace
