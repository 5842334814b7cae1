// heom::DriveShape and the drives of a Model: each shape's f(t), its breakpoints, its refusals.
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"

namespace {

using heom::complex;
using heom::DriveShape;
using heom::Matrix;
using heom::Model;
using heom::TimeSide;

TEST(DriveShape, AnalyticShapes) {
  const DriveShape c = DriveShape::cosine(0.3, 2.0, 0.5);
  EXPECT_DOUBLE_EQ(c(1.5).real(), 0.3 * std::cos(3.5));
  EXPECT_TRUE(c.is_real());
  EXPECT_TRUE(c.breakpoints().empty());
  const DriveShape g = DriveShape::gaussian(2.0, 4.0, 0.5, 3.0, 0.1);
  EXPECT_DOUBLE_EQ(g(4.0).real(), 2.0 * std::cos(0.1));
  EXPECT_DOUBLE_EQ(g(4.5).real(), 2.0 * std::exp(-0.5) * std::cos(1.6));
  EXPECT_DOUBLE_EQ(DriveShape::gaussian(1.0, 0.0, 2.0)(2.0).real(), std::exp(-0.5));  // the bare envelope
  const DriveShape k = DriveShape::constant(0.7, 1.0, 2.0);
  EXPECT_EQ(k(0.999), complex(0.0));
  EXPECT_EQ(k(1.0), complex(0.7));                    // after the jump on
  EXPECT_EQ(k(1.0, TimeSide::before), complex(0.0));  // before it
  EXPECT_EQ(k(2.0), complex(0.0));
  EXPECT_EQ(k(2.0, TimeSide::before), complex(0.7));
  EXPECT_EQ(k.breakpoints(), (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(DriveShape::constant(1.0, 0.0, INFINITY).breakpoints(), std::vector<double>{0.0});
  EXPECT_EQ(c.description(), "cosine (amplitude 0.3, frequency 2, phase 0.5)");
}

TEST(DriveShape, TableIsANaturalCubicSpline) {
  // A spline reproduces a straight line exactly, has zero curvature at its ends, holds its end
  // values outside, and passes through every sample; complex values spline their two parts.
  const DriveShape line = DriveShape::table({0.0, 1.0, 3.0, 4.0}, {1.0, 3.0, 7.0, 9.0});
  for (double t : {0.0, 0.3, 1.7, 3.9}) EXPECT_NEAR(line(t).real(), 1.0 + 2.0 * t, 1e-14) << t;
  EXPECT_EQ(line(-1.0), complex(1.0));
  EXPECT_EQ(line(5.0), complex(9.0));
  EXPECT_EQ(line.breakpoints(), (std::vector<double>{0.0, 4.0}));
  const std::vector<double> t = {0.0, 0.5, 1.2, 2.0, 3.1};
  std::vector<complex> v;
  for (double x : t) v.emplace_back(std::sin(x), x * x);
  const DriveShape s = DriveShape::table(t, v);
  EXPECT_FALSE(s.is_real());
  for (std::size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(std::abs(s(t[i]) - v[i]), 0.0, 1e-14);
  const double h = 1e-4;  // natural: f'' = 0 at the ends
  EXPECT_NEAR((s(2 * h) - 2.0 * s(h) + s(0.0)).real() / (h * h), 0.0, 1e-3);
  EXPECT_NEAR(std::sin(1.6), s(1.6).real(), 2e-2);  // and close to the function between samples
}

TEST(DriveShape, Refusals) {
  EXPECT_THROW(DriveShape::gaussian(1.0, 0.0, 0.0), heom::Error);
  EXPECT_THROW(DriveShape::constant(1.0, 2.0, 1.0), heom::Error);
  EXPECT_THROW(DriveShape::cosine(NAN, 1.0), heom::Error);
  EXPECT_THROW(DriveShape::table({0.0, 2.0, 1.0}, {0.0, 1.0, 2.0}), heom::Error);
  EXPECT_THROW(DriveShape::table({0.0}, {0.0}), heom::Error);
  EXPECT_THROW(DriveShape::function({}, "f"), heom::Error);
  // A function declared real that is not, or one that is not finite, stops the run saying so.
  const DriveShape lying = DriveShape::function([](double t) { return complex(t, t); }, "ramp");
  try {
    lying(0.5);
    ADD_FAILURE() << "a complex value of a real drive was accepted";
  } catch (const heom::Error& e) {
    EXPECT_NE(std::string(e.what()).find("drive \"ramp\" was declared real"), std::string::npos) << e.what();
  }
  EXPECT_EQ(DriveShape::function([](double t) { return complex(t, t); }, "ramp", false)(0.5), complex(0.5, 0.5));
  Model m(heom::operators::sigma_z());
  EXPECT_THROW(m.add_drive(Matrix(3, 3), DriveShape::cosine(1.0, 1.0)), heom::Error);
}

TEST(Model, DrivenHamiltonianAndItsFrozenModel) {
  Model m(0.5 * heom::operators::sigma_z(),
          {heom::Bath::drude_lorentz(heom::operators::sigma_z(), {0.05, 0.5, 0.5, 1})});
  m.add_drive(heom::operators::sigma_x(), DriveShape::cosine(0.2, 1.0));
  m.add_drive(heom::operators::sigma_z(), DriveShape::constant(0.1, 1.0, 3.0));
  EXPECT_TRUE(m.is_driven());
  EXPECT_TRUE(m.hamiltonian_always_real());
  const Matrix expected = 0.5 * heom::operators::sigma_z() + (0.2 * std::cos(2.0)) * heom::operators::sigma_x() +
                          0.1 * heom::operators::sigma_z();
  EXPECT_LE(heom::max_abs_diff(m.hamiltonian_at(2.0), expected), 1e-16);
  const Model frozen = m.frozen_at(2.0);
  EXPECT_FALSE(frozen.is_driven());
  EXPECT_EQ(frozen.baths().size(), 1u);
  EXPECT_LE(heom::max_abs_diff(frozen.hamiltonian(), expected), 1e-16);
  EXPECT_EQ(m.drive_breakpoints(), (std::vector<double>{1.0, 3.0}));
  EXPECT_TRUE(m.with_hamiltonian(heom::operators::sigma_x()).is_driven());
  // Batches: the same operators, any f (real in both).
  Model other = Model(0.4 * heom::operators::sigma_z(), m.baths());
  other.add_drive(heom::operators::sigma_x(), DriveShape::cosine(0.5, 2.0));
  other.add_drive(heom::operators::sigma_z(), DriveShape::gaussian(0.1, 1.0, 1.0));
  EXPECT_TRUE(heom::same_shape(m, other));
  Model moved = Model(0.4 * heom::operators::sigma_z(), m.baths());
  moved.add_drive(heom::operators::sigma_z(), DriveShape::cosine(0.5, 2.0));
  moved.add_drive(heom::operators::sigma_z(), DriveShape::gaussian(0.1, 1.0, 1.0));
  EXPECT_FALSE(heom::same_shape(m, moved));
}

}  // namespace
