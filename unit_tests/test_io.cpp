// The program's input parsing (units, defaults, output times) and the HDF5 round trip from C++.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "io/hdf5_output.hpp"
#include "io/input.hpp"
#include "test_support.hpp"

namespace {

using heom::complex;
using heom::Matrix;
namespace io = heom::io;

const char* const spin_boson = R"(
[system]
hamiltonian = [[0.25, 0.5], [0.5, -0.25]]
hamiltonian_imag = [[0.0, 0.1], [-0.1, 0.0]]
[[bath]]
kind = "drude-lorentz"
coupling = [[1, 0], [0, -1]]
lambda = 0.1
gamma = 0.5
temperature = 0.5
terms = 2
[hierarchy]
depth = 5
[initial_state]
rho = [[1, 0], [0, 0]]
[dynamics]
t_end = 1.0
output_every = 0.3
)";

TEST(Input, ReadsTheModelAndDefaults) {
  const io::RunConfig c = io::parse_run_config(spin_boson, "test.toml");
  EXPECT_EQ(c.units, io::Units::natural);
  EXPECT_EQ(c.model.dimension(), 2);
  EXPECT_EQ(c.model.hamiltonian()(0, 1), complex(0.5, 0.1));
  EXPECT_EQ(c.model.num_exponents(), 3);
  EXPECT_EQ(c.depth, 5);
  EXPECT_EQ(c.integrator.method, heom::Method::exp_adams);
  EXPECT_EQ(c.integrator.rtol, 1e-8);
  EXPECT_EQ(c.integrator.atol, 1e-10);
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

TEST(Input, ExampleFilesParse) {
  for (const char* name : {"spin_boson.toml", "fmo_77k.toml"}) {
    const io::RunConfig c = io::read_run_config(std::string(HEOM_EXAMPLE_DIR) + "/" + name);
    EXPECT_GT(c.model.num_exponents(), 0) << name;
  }
  const io::RunConfig fmo = io::read_run_config(std::string(HEOM_EXAMPLE_DIR) + "/fmo_77k.toml");
  EXPECT_EQ(fmo.model.dimension(), 7);
  EXPECT_EQ(fmo.model.num_exponents(), 14);
  EXPECT_NEAR(fmo.model.baths()[0].exponents()[0].v.real(), 0.02, 1e-12);  // 1/gamma = 50 fs
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

}  // namespace
