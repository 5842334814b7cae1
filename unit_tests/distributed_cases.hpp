// The models, options and checks of the multi-device suite (multi_device_suite.hpp) and the tests
// beside it: every share of a split run must hold the very bits of one device's.
#ifndef HEOM_UNIT_TESTS_DISTRIBUTED_CASES_HPP
#define HEOM_UNIT_TESTS_DISTRIBUTED_CASES_HPP

#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "heom/solver/solver.hpp"

namespace heom::testing {

using heom::Bath;
using heom::complex;
using heom::GeneratorKernel;
using heom::Matrix;
using heom::Method;
using heom::Model;

// Spin-boson: n = 2 (the two-level kernel), K = Nk + 1; with Nk = 2 at depth 10: 286 ADOs, 5 units of
// 64. With Nk = 4 the Matsubara rates 2 pi k T make sums of different exponents equal to rounding
// (nu_1 + nu_3 = 2 nu_2), which exp-adams merges into one damping class.
inline Model spin_boson(int nk = 2) {
  const Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  return Model(0.25 * sz + 0.5 * sx, {Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, nk})});
}
inline const Matrix spin_boson_start{{1.0, 0.0}, {0.0, 0.0}};

// An FMO-like exciton model: n = 7, a site projector bath per site (the Hermitian form), K = 7,
// depth 4: 330 ADOs.
inline Model excitons() {
  Matrix h(7, 7);
  for (int i = 0; i < 7; ++i) {
    h(i, i) = 0.2 * i;
    if (i + 1 < 7) h(i, i + 1) = h(i + 1, i) = 0.1 + 0.01 * i;
  }
  std::vector<Bath> baths;
  for (int i = 0; i < 7; ++i)
    baths.push_back(Bath::drude_lorentz(heom::operators::projector(7, i, i), {0.05, 0.5, 1.0, 0}));
  return Model(h, baths);
}
inline Matrix excitons_start() {
  Matrix rho(7, 7);
  rho(0, 0) = 1.0;
  return rho;
}

// A complex three-level model with two baths: a diagonal Drude-Lorentz one and a dense (sigma_x-like)
// underdamped one, whose rates are complex (complex damping, complex exp-adams weights), and a Lindblad
// jump: K = 6, depth 5, 462 ADOs; started from a non-Hermitian rho (the general form).
inline Model three_level() {
  const Matrix h{{0.5, complex(0.3, 0.1), 0.0}, {complex(0.3, -0.1), 0.0, 0.2}, {0.0, 0.2, -0.4}};
  const Matrix q_diagonal{{1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, -1.0}};
  const Matrix q_dense{{0.0, 1.0, 0.0}, {1.0, 0.0, 1.0}, {0.0, 1.0, 0.0}};
  Model m(h,
          {Bath::drude_lorentz(q_diagonal, {0.1, 0.5, 0.5, 2}), Bath::underdamped(q_dense, {0.05, 0.5, 1.0, 0.5, 1})});
  m.add_lindblad(Matrix{{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {complex(0.3, 0.4), 0.0, 0.0}}, 0.05);  // a jump 0 -> 2
  return m;
}
inline const Matrix three_level_start{{0.5, 0.5, 0.0}, {0.0, 0.5, 0.0}, {0.0, 0.0, 0.0}};

// The Hermitian form's other bath paths: a diagonal bath coupling two rows and a dense bath (real
// coefficients throughout), and Lindblad terms (a jump, and a real diagonal L), from a Hermitian
// start: K = 4, depth 6, 210 ADOs.
inline Model three_level_hermitian() {
  const Matrix h{{0.5, 0.3, 0.0}, {0.3, 0.0, 0.2}, {0.0, 0.2, -0.4}};
  const Matrix two_rows{{1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, -1.0}};
  const Matrix dense{{0.0, 1.0, 0.0}, {1.0, 0.0, 1.0}, {0.0, 1.0, 0.0}};
  Model m(h, {Bath::drude_lorentz(two_rows, {0.1, 0.5, 0.5, 1}), Bath::drude_lorentz(dense, {0.05, 0.8, 0.5, 1})});
  m.add_lindblad(Matrix{{0.0, 0.0, 0.0}, {1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}}, 0.04).add_lindblad(two_rows, 0.02);
  return m;
}
inline const Matrix three_level_hermitian_start{{0.6, 0.1, 0.0}, {0.1, 0.3, 0.05}, {0.0, 0.05, 0.1}};

// Driven: the excitons under a Gaussian pulse on a dipole-like operator (the Hermitian form still
// runs), and the spin-boson under a cosine plus a constant drive that switches on within the run (a
// breakpoint: the integrator restarts there).
inline Model driven_excitons() {
  Model m = excitons();
  Matrix dipole(7, 7);
  for (int i = 0; i < 7; ++i) dipole(i, (i + 3) % 7) = dipole((i + 3) % 7, i) = 0.1 * (i + 1);
  m.add_drive(dipole, heom::DriveShape::gaussian(0.8, 1.0, 0.4, 3.0, 0.2));
  return m;
}
inline Model driven_spin_boson() {
  Model m = spin_boson();
  m.add_drive(heom::operators::sigma_x(), heom::DriveShape::cosine(0.3, 1.1, 0.5));
  m.add_drive(heom::operators::sigma_z(), heom::DriveShape::constant(0.2, 0.7, 1.5));
  return m;
}

/// A level between two Pade leads at bias, with a phonon bath on its occupation: a mixed hierarchy.
inline Model leads_and_phonons() {
  const Matrix d{{0.0, 1.0}, {0.0, 0.0}}, number{{0.0, 0.0}, {0.0, 1.0}};
  return Model(0.5 * number + 0.1 * heom::operators::sigma_x(),
               {Bath::lorentzian(d, {0.2, 1.0, 0.5, 0.5, 1, heom::LorentzianExpansion::Pade}),
                Bath::drude_lorentz(number, {0.1, 0.5, 0.5, 1}),
                Bath::lorentzian(d, {0.2, 1.0, -0.5, 0.5, 1, heom::LorentzianExpansion::Pade})});
}

struct Case {
  const char* name;
  Model model;
  int depth;
  Matrix rho0;
};

inline std::vector<Case> cases() {
  const Matrix h2 = 0.25 * heom::operators::sigma_z() + 0.5 * heom::operators::sigma_x();
  return {{"spin-boson", spin_boson(), 10, spin_boson_start},
          {"excitons", excitons(), 4, excitons_start()},
          {"three-level", three_level(), 5, three_level_start},
          {"spin-boson, Nk = 4", spin_boson(4), 6, spin_boson_start},
          // Fewer ADOs than a unit of 64 (every device but the first owns none), and no bath at all.
          {"spin-boson, depth 2", spin_boson(), 2, spin_boson_start},
          {"no bath", Model(h2), 3, spin_boson_start},
          {"three-level, Hermitian", three_level_hermitian(), 6, three_level_hermitian_start},
          {"leads and phonons", leads_and_phonons(), 4, spin_boson_start},
          {"excitons, driven", driven_excitons(), 3, excitons_start()},
          {"spin-boson, driven", driven_spin_boson(), 6, spin_boson_start}};
}

inline heom::SolverOptions options(Method method, GeneratorKernel kernel) {
  heom::SolverOptions o;
  o.integrator.method = method;
  if (heom::is_adaptive(method)) {
    o.integrator.rtol = 1e-7;
    o.integrator.atol = 1e-9;
    if (method == Method::chebyshev) o.integrator.step = 0.25;  // (several steps, each of many terms)
  } else {
    o.integrator.step = 0.02;
  }
  o.generator.kernel = kernel;
  return o;
}

template <class AdoView>
std::vector<complex> host_copy(const AdoView& ados) {
  std::vector<complex> out(ados.size());
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ados);
  if (!out.empty()) std::memcpy(static_cast<void*>(out.data()), host.data(), sizeof(complex) * out.size());
  return out;
}

/// One device's run of a case, the reference for every share of the same run split between devices.
struct Reference {
  std::vector<complex> ados;
  Matrix rho;
  heom::IntegratorStatistics statistics;
  GeneratorKernel kernel;
};

/// The end time of every comparison run.
constexpr double t_end = 2.0;

template <class Exec>
Reference run_on_one_device(const Exec& exec, const Case& c, Method method, GeneratorKernel kernel) {
  heom::Solver<Exec> one(exec, c.model, c.depth, options(method, kernel));
  one.set_initial_state(c.rho0);
  one.run_until(t_end);
  return {host_copy(one.ados()), one.rho(), one.statistics(), one.kernel()};
}

/// Runs this device's share of `c` (split by `communicator`, with `partition`: empty for balanced)
/// and checks it against `reference`: the same kernel, steps and bits.
template <class Exec>
void expect_share_identical(const Exec& exec, const Case& c, Method method, GeneratorKernel kernel,
                            std::shared_ptr<const heom::Communicator> communicator, const std::vector<int>& partition,
                            const Reference& reference,
                            heom::ExchangeOverlap overlap = heom::ExchangeOverlap::automatic) {
  heom::SolverOptions split_options = options(method, kernel);
  split_options.communicator = std::move(communicator);
  split_options.partition = partition;
  split_options.generator.overlap = overlap;
  heom::Solver<Exec> split(exec, c.model, c.depth, split_options);
  split.set_initial_state(c.rho0);
  EXPECT_EQ(split.kernel(), reference.kernel);
  split.run_until(t_end);
  EXPECT_EQ(split.statistics().steps, reference.statistics.steps);
  EXPECT_EQ(split.statistics().rejected, reference.statistics.rejected);
  EXPECT_GT(reference.statistics.steps, 5) << "too short a run to compare";

  const std::vector<complex> mine = host_copy(split.ados());
  const int n2 = c.model.dimension() * c.model.dimension();
  ASSERT_EQ(static_cast<int>(mine.size()), split.generator().num_ados() * n2);
  const std::size_t offset = static_cast<std::size_t>(split.first_ado()) * n2;
  EXPECT_TRUE(mine.empty() ||
              std::memcmp(mine.data(), reference.ados.data() + offset, sizeof(complex) * mine.size()) == 0)
      << "ADOs " << split.first_ado() << ".." << split.first_ado() + split.generator().num_ados()
      << " differ from one device's";
  if (split.owns_rho())
    EXPECT_EQ(heom::max_abs_diff(split.rho(), reference.rho), 0.0);
  else
    EXPECT_THROW(split.rho(), heom::Error);
}

/// The kernels that can run for `c` on Exec, besides automatic.
template <class Exec>
std::vector<GeneratorKernel> kernels_for(const Case& c) {
  const int n = c.model.dimension();
  std::vector<GeneratorKernel> kernels = {GeneratorKernel::portable};
  if (heom::Generator<Exec>::can_run(GeneratorKernel::host_block, n, false))
    kernels.push_back(GeneratorKernel::host_block);
  if (n == 7 && heom::Generator<Exec>::can_run(GeneratorKernel::hermitian, n, true))
    kernels.push_back(GeneratorKernel::hermitian);
  if (n == 7) kernels.push_back(GeneratorKernel::portable_hermitian);  // (excitons: a Hermitian start)
  if (heom::Generator<Exec>::can_run(GeneratorKernel::two_level, n, false) && !c.model.has_fermionic_bath())
    kernels.push_back(GeneratorKernel::two_level);
  return kernels;
}

/// Part 0 owns one unit of ADOs, the last part owns nothing (from 3 parts on), the others split the
/// rest: an uneven partition with an empty device.
inline std::vector<int> uneven_partition(const Case& c, int parts) {
  const int size = static_cast<int>(heom::Hierarchy::count(c.model.max_excitations(), c.depth));
  const int unit = heom::Partition::ados_per_unit;
  std::vector<int> boundaries{0};
  if (parts == 1) return {0, size};
  boundaries.push_back(std::min(unit, size));
  const int owning = parts > 2 ? parts - 2 : 1;  // parts after the first that own ADOs
  const int rest_units = std::max(0, (size - unit + unit - 1) / unit);
  for (int p = 1; p <= owning; ++p) boundaries.push_back(std::min(size, unit + rest_units * p / owning * unit));
  if (parts > 2) boundaries.push_back(size);
  return boundaries;
}

}  // namespace heom::testing

#endif
