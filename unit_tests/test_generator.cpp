// The matrix-free generator against the assembled sparse (KokkosSparse CRS) operator.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "heom/generator/assembled_operator.hpp"
#include "test_support.hpp"

namespace {

using heom::Bath;
using heom::complex;
using heom::Matrix;
using heom::Model;
namespace ht = heom::testing;

Matrix complex_hamiltonian_3() {
  return Matrix{
      {1.0, complex(0.3, -0.2), complex(0.0, 0.1)}, {complex(0.3, 0.2), 0.2, 0.25}, {complex(0.0, -0.1), 0.25, -0.8}};
}

Matrix complex_coupling_3() {
  return Matrix{{0.0, 1.0, 0.0}, {1.0, 0.0, complex(0.0, -1.0)}, {0.0, complex(0.0, 1.0), 0.0}};
}

using heom::testing::random_hermitian;

/// A random H of n levels (seed `seed`) with a terminated Drude-Lorentz bath on a random dense Q, a
/// Pade bath on a diagonal Q of several rows, and `third`.
Model large_model(int n, unsigned seed, const Bath& third) {
  Matrix diagonal(n, n);
  for (int i = 0; i < n; ++i) diagonal(i, i) = (i % 3) - 1.0;
  heom::DrudeLorentz terminated{0.03, 0.6, 0.8, 1, heom::DrudeLorentzExpansion::Matsubara, true};
  return Model(random_hermitian(n, 0.5, seed + n),
               {Bath::drude_lorentz(random_hermitian(n, 0.3, seed + 10u + n), terminated),
                Bath::drude_lorentz(diagonal, {0.05, 0.7, 0.4, 1, heom::DrudeLorentzExpansion::Pade}), third});
}

/// large_model with an underdamped bath (complex rates) on another dense Q: K = 7.
Model large_model(int n) {
  return large_model(n, 10u, Bath::underdamped(random_hermitian(n, 0.3, 30u + n), {0.15, 0.3, 1.2, 0.6, 1}));
}

/// large_model with real rates and coefficients throughout, so that ADOs stay Hermitian (the Hermitian
/// form for any n), the third bath a site projector's: K = 6.
Model large_hermitian_model(int n) {
  return large_model(n, 40u, Bath::drude_lorentz(heom::operators::projector(n, 1, 1), {0.04, 0.5, 0.6, 1}));
}

struct Case {
  std::string name;
  Model model;
  int depth;
  bool preserves_hermiticity;  // real rates and coefficients: Hermitian ADOs stay Hermitian
};

std::vector<Case> cases() {
  std::vector<Case> out;
  const Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  {
    // Diagonal coupling, RI + R exponents.
    Model m(0.25 * sz + 0.5 * sx, {Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, 2})});
    out.push_back({"spin-boson diagonal Q", m, 4, true});
  }
  {
    // One bath on a non-diagonal coupling, with a terminator (the two-level kernel's one-bath form).
    heom::DrudeLorentz terminated{0.1, 0.5, 0.5, 3, heom::DrudeLorentzExpansion::Matsubara, true};
    Model m(0.25 * sz + 0.5 * sx, {Bath::drude_lorentz(sx, terminated)});
    out.push_back({"spin-boson dense Q, terminated", m, 4, true});
  }
  {
    // Non-diagonal coupling with complex rates, plus a terminated Pade bath on the diagonal one.
    heom::DrudeLorentz pade{0.05, 0.7, 0.4, 2, heom::DrudeLorentzExpansion::Pade, true};
    Model m(0.25 * sz + 0.5 * sx, {Bath::underdamped(sx, {0.2, 0.4, 1.0, 0.5, 1}), Bath::drude_lorentz(sz, pade)});
    out.push_back({"spin-boson two baths, complex v", m, 4, false});
  }
  {
    // Complex H, three baths on non-commuting Q; I-only, RI and complex-c exponents; a terminator on
    // a dense Q.
    const Matrix q1 = Matrix{{1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, -1.0}};
    const Matrix q3 = Matrix{{0.5, complex(0.0, 0.2), 0.1}, {complex(0.0, -0.2), -0.3, 0.0}, {0.1, 0.0, 0.2}};
    heom::CorrelationExpansion e;
    e.ck_real = {complex(0.05, 0.01), 0.02};
    e.vk_real = {complex(0.7, -0.4), 2.5};
    e.ck_imag = {-0.03, complex(0.01, 0.02)};
    e.vk_imag = {complex(0.7, -0.4), 1.9};
    heom::DrudeLorentz terminated{0.03, 0.6, 0.8, 1, heom::DrudeLorentzExpansion::Matsubara, true};
    Model m(complex_hamiltonian_3(),
            {Bath::drude_lorentz(q1, {0.05, 0.8, 0.6, 1}),
             Bath::underdamped(complex_coupling_3(), {0.15, 0.3, 1.2, 0.6, 1}),
             Bath::from_expansion(complex_coupling_3(), e), Bath::drude_lorentz(q3, terminated)});
    out.push_back({"three levels, four baths", m, 3, false});
  }
  {
    // Site-local (diagonal) baths with terminators, as in FMO.
    Model m(
        Matrix{{0.2, -0.08, 0.005, 0.0}, {-0.08, 0.3, 0.03, 0.01}, {0.005, 0.03, 0.0, -0.05}, {0.0, 0.01, -0.05, 0.1}});
    for (int j = 0; j < 4; ++j)
      m.add_bath(Bath::drude_lorentz(heom::operators::projector(4, j, j),
                                     {0.035, 0.1, 0.05, 1, heom::DrudeLorentzExpansion::Matsubara, true}));
    out.push_back({"four sites, site-local baths", m, 3, true});
  }
  {
    // A site-local bath with more exponents than the host kernel sweeps together (9 > 8): the
    // exponent-by-exponent path, beside a fused one.
    Model m(Matrix{{0.2, -0.08, 0.005}, {-0.08, 0.3, 0.03}, {0.005, 0.03, 0.0}});
    m.add_bath(Bath::drude_lorentz(heom::operators::projector(3, 0, 0), {0.035, 0.1, 0.05, 8}));
    m.add_bath(Bath::drude_lorentz(heom::operators::projector(3, 2, 2), {0.02, 0.2, 0.05, 2}));
    out.push_back({"three sites, a bath with nine exponents", m, 2, true});
  }
  {
    // Real rates and coefficients on a dense Q with a terminator and a complex Hermitian H: ADOs stay
    // Hermitian, through the Hermitian form's dense-bath branch.
    heom::DrudeLorentz terminated{0.03, 0.6, 0.8, 1, heom::DrudeLorentzExpansion::Matsubara, true};
    Model m(complex_hamiltonian_3(), {Bath::drude_lorentz(complex_coupling_3(), terminated),
                                      Bath::drude_lorentz(heom::operators::projector(3, 1, 1), {0.05, 0.8, 0.6, 1})});
    out.push_back({"three levels, dense terminated bath, real rates", m, 3, true});
  }
  {
    // A site projector in a rotated (e.g. exciton) basis: a dense Q of rank one, with a terminator,
    // beside a full-rank dense one.
    const Matrix v{{0.6}, {complex(0.0, 0.48)}, {0.64}};  // a unit vector
    heom::DrudeLorentz terminated{0.04, 0.5, 0.7, 1, heom::DrudeLorentzExpansion::Matsubara, true};
    Model m(complex_hamiltonian_3(), {Bath::drude_lorentz(v * v.adjoint(), terminated),
                                      Bath::drude_lorentz(complex_coupling_3(), {0.03, 0.6, 0.8, 1})});
    out.push_back({"three levels, rank-one dense Q", m, 3, true});
  }
  {
    // Lindblad terms beside a bath: a jump of a non-diagonal L (decay) and a real diagonal L
    // (dephasing: the sandwich), on two levels.
    Model m(0.25 * sz + 0.5 * sx, {Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, 2})});
    m.add_lindblad(Matrix{{0.0, 0.0}, {1.0, 0.0}}, 0.3).add_lindblad(sz, 0.2);
    out.push_back({"spin-boson with Lindblad decay and dephasing", m, 4, true});
  }
  {
    // Three levels: a complex lowering L, pumping and a complex diagonal L (a jump, not the sandwich)
    // beside a dense and a diagonal bath.
    Model m(complex_hamiltonian_3(), {Bath::drude_lorentz(complex_coupling_3(), {0.03, 0.6, 0.8, 1}),
                                      Bath::drude_lorentz(heom::operators::projector(3, 1, 1), {0.05, 0.8, 0.6, 1})});
    m.add_lindblad(Matrix{{0.0, complex(0.6, 0.8), 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.3, 0.0}}, 0.4)
        .add_lindblad(Matrix{{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {1.0, 0.0, 0.0}}, 0.2)
        .add_lindblad(Matrix{{1.0, 0.0, 0.0}, {0.0, complex(0.0, 1.0), 0.0}, {0.0, 0.0, -0.5}}, 0.3);
    out.push_back({"three levels, two baths, three Lindblad terms", m, 3, true});
  }
  {
    // The run-time dimension path with Lindblad jumps.
    Model m = large_hermitian_model(9);
    Matrix lowering(9, 9);
    for (int i = 0; i + 1 < 9; ++i) lowering(i, i + 1) = 1.0;
    m.add_lindblad(lowering, 0.2).add_lindblad(heom::operators::projector(9, 4, 4), 0.1);
    out.push_back({"9 levels, real baths, Lindblad decay and dephasing", m, 2, true});
  }
  // Dimensions above 8 take the kernels' run-time dimension path.
  for (int n : {9, 12})
    out.push_back({std::to_string(n) + " levels, dense, diagonal and underdamped baths", large_model(n), 2, false});
  for (int n : {7, 9, 12})
    out.push_back(
        {std::to_string(n) + " levels, real dense, diagonal and site baths", large_hermitian_model(n), 2, true});
  return out;
}

/// Every ADO block of `v` replaced by its Hermitian part (v + v^dagger) / 2.
template <class View>
void make_blocks_hermitian(const View& v, int n) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  for (std::size_t base = 0; base < h.extent(0); base += static_cast<std::size_t>(n) * n)
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j) {
        const auto x = 0.5 * (h(base + i * n + j) + Kokkos::conj(h(base + j * n + i)));
        h(base + i * n + j) = x;
        h(base + j * n + i) = Kokkos::conj(x);
      }
  Kokkos::deep_copy(v, h);
}

template <class ExecSpace>
class GeneratorTest : public ::testing::Test {};
TYPED_TEST_SUITE(GeneratorTest, ht::Backends);

/// A kernel variant and the options that ask for it.
struct Variant {
  std::string name;
  heom::GeneratorOptions options;
  /// The input its kernel takes: Hermitian for the Hermitian forms (the tests give them such input).
  heom::InputForm form() const {
    return heom::is_hermitian_form(options.kernel) ? heom::InputForm::hermitian : heom::InputForm::general;
  }
};

/// Every variant of the generator, whether or not this backend runs it: the portable kernel also
/// with a GPU's shape (several threads sharing each ADO, one ADO per team: as many threads as the
/// GPU would give the largest block, as far as the backend has them), and with such teams each
/// working through several ADOs (their scratch reused).
template <class E>
std::vector<Variant> variants(const E& exec) {
  using K = heom::GeneratorKernel;
  const int threads = std::min(heom::BackendTraits<E, heom::KernelShape::device>::team_size(144), exec.concurrency());
  return {{"portable", {K::portable}},
          {"portable, device shape", {K::portable, threads, 1}},
          {"portable, teams over three ADOs", {K::portable, threads, 3}},
          {"host-block", {K::host_block}},
          {"hermitian", {K::hermitian}},
          {"two-level", {K::two_level}},
          {"portable-hermitian", {K::portable_hermitian}},
          {"portable-hermitian, device shape", {K::portable_hermitian, threads, 1}},
          {"portable-hermitian, teams over three ADOs", {K::portable_hermitian, threads, 3}}};
}

TYPED_TEST(GeneratorTest, EveryKernelEqualsAssembledCrs) {
  // Each variant that can run on this backend, on every model it accepts: L(x) equal to the
  // assembled CRS operator's, and L(x) with the damping left out differs by exactly -damping_a x_a.
  using E = TypeParam;
  using traits = heom::BackendTraits<E>;
  const E exec;
  std::map<std::string, int> runs;
  for (const Case& c : cases()) {
    const heom::Hierarchy h(c.model.num_exponents(), c.depth);
    const heom::AssembledOperator<E> assembled(exec, c.model, h);
    const int n = c.model.dimension(), n2 = n * n;
    for (const Variant& v : variants(exec)) {
      if (!heom::Generator<E>::can_run(v.options.kernel, n, c.preserves_hermiticity)) {
        EXPECT_THROW(heom::Generator<E>(exec, c.model, h, v.options), heom::Error) << c.name << ", " << v.name;
        continue;
      }
      const heom::Generator<E> generator(exec, c.model, h, v.options);
      // The variant asked for is the one that runs.
      ASSERT_EQ(generator.kernel(v.form()), v.options.kernel) << c.name << ", " << v.name;
      ASSERT_EQ(assembled.num_rows(), generator.vector_size()) << c.name;
      ++runs[v.name];
      const auto in = ht::random_vector<E>(generator.vector_size(), 1);
      if (heom::is_hermitian_form(v.options.kernel)) make_blocks_hermitian(in, n);
      typename heom::Generator<E>::vector_type matrix_free("matrix_free", generator.vector_size());
      typename heom::Generator<E>::vector_type excluded("excluded", generator.vector_size());
      typename heom::Generator<E>::vector_type crs("crs", generator.vector_size());
      generator.apply(exec, in, matrix_free, heom::Generator<E>::Damping::included, v.form());
      generator.apply(exec, in, excluded, heom::Generator<E>::Damping::excluded, v.form());
      assembled.apply(exec, in, crs);
      exec.fence();
      const auto [diff, scale] = ht::max_difference(matrix_free, crs);
      EXPECT_GT(scale, 0.1) << c.name;
      EXPECT_LE(diff, 1e-13 * scale) << c.name << ", " << v.name << ": " << diff << " relative to " << scale;

      auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in);
      auto with = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), matrix_free);
      auto without = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), excluded);
      double worst = 0.0, largest_term = 0.0;
      for (int a = 0; a < generator.num_ados(); ++a) {
        const auto rate = generator.damping()[a];
        const heom::device_complex g(rate.real(), rate.imag());
        for (int e = 0; e < n2; ++e) {
          const std::size_t i = static_cast<std::size_t>(a) * n2 + e;
          const heom::device_complex term = -g * x(i);
          worst = std::max(worst, Kokkos::abs((with(i) - without(i)) - term));
          largest_term = std::max(largest_term, Kokkos::abs(term));
        }
      }
      EXPECT_GT(largest_term, 0.1) << c.name;
      EXPECT_LE(worst, 1e-13 * largest_term) << c.name << ", " << v.name << " without damping";
    }
  }
  // Which variants ran, and on how many of the models: the portable kernel everywhere, the host-block
  // kernel on host backends for n <= 32 (above 8 with the dimension at run time), the Hermitian host
  // form for n <= 8 where the model keeps ADOs Hermitian, the two-level kernel on AVX-512 hosts for
  // the three two-level models, the portable Hermitian form on every backend wherever the model keeps
  // ADOs Hermitian.
  int all = 0, small = 0, blocks = 0, hermitian = 0, preserving = 0, two_level = 0;
  for (const Case& c : cases()) {
    const int n = c.model.dimension();
    ++all;
    small += n <= 8;
    blocks += n <= heom::impl::host_block_max_n;
    hermitian += n <= 8 && c.preserves_hermiticity;
    preserving += c.preserves_hermiticity;
    two_level += n == 2;
  }
  EXPECT_EQ(runs["portable"], all);
  EXPECT_EQ(runs["portable, device shape"], all);
  EXPECT_EQ(runs["portable, teams over three ADOs"], all);
  EXPECT_EQ(runs["host-block"], traits::host_shape ? blocks : 0);
  EXPECT_EQ(runs["hermitian"], traits::host_shape ? hermitian : 0);
  EXPECT_EQ(runs["two-level"], traits::two_level_kernel ? two_level : 0);
  for (const char* name :
       {"portable-hermitian", "portable-hermitian, device shape", "portable-hermitian, teams over three ADOs"})
    EXPECT_EQ(runs[name], preserving) << name;
  // The cases cover n > 8, Hermitian ADOs (for n = 2, 3, 4, 7, 9 and 12) and two levels.
  EXPECT_EQ(small, all - 5);
  EXPECT_EQ(blocks, all);  // (the five above n = 8: the host-block kernel with its dimension at run time)
  EXPECT_EQ(hermitian, 9);
  EXPECT_EQ(preserving, 12);
  EXPECT_EQ(two_level, 4);
}

Matrix kron(const Matrix& a, const Matrix& b) {
  Matrix out(a.rows() * b.rows(), a.cols() * b.cols());
  for (int i = 0; i < a.rows(); ++i)
    for (int j = 0; j < a.cols(); ++j)
      for (int k = 0; k < b.rows(); ++k)
        for (int l = 0; l < b.cols(); ++l) out(i * b.rows() + k, j * b.cols() + l) = a(i, j) * b(k, l);
  return out;
}

/// Models with fermionic baths (leads), alone and beside bosonic ones: one level between two Pade
/// leads, a spinful level (Jordan-Wigner operators, four leads), a level with a lead and two phonon
/// baths (diagonal and dense), explicit complex exponents on a complex annihilation-type Q of three
/// levels, and 9 levels (the run-time dimension path).
std::vector<Case> fermionic_cases() {
  std::vector<Case> out;
  const Matrix d = heom::operators::projector(2, 0, 1), sz = heom::operators::sigma_z();
  const Matrix number = d.adjoint() * d;
  auto lead = [](double mu, int terms, heom::LorentzianExpansion expansion) {
    return heom::Lorentzian{0.2, 1.0, mu, 0.5, terms, expansion};
  };
  out.push_back({"level between two Pade leads",
                 Model(0.5 * number, {Bath::lorentzian(d, lead(0.5, 2, heom::LorentzianExpansion::Pade)),
                                      Bath::lorentzian(d, lead(-0.5, 2, heom::LorentzianExpansion::Pade))}),
                 3, false});
  {
    const Matrix one = Matrix::identity(2);
    const Matrix d_up = kron(d, one), d_down = kron(sz, d);
    Model m(0.3 * (d_up.adjoint() * d_up + d_down.adjoint() * d_down) +
            (d_up.adjoint() * d_up) * (d_down.adjoint() * d_down) + complex(0.1, 0.05) * (d_up.adjoint() * d_down) +
            complex(0.1, -0.05) * (d_down.adjoint() * d_up));
    for (const Matrix& op : {d_up, d_down})
      for (double mu : {0.5, -0.5}) m.add_bath(Bath::lorentzian(op, lead(mu, 1, heom::LorentzianExpansion::Matsubara)));
    out.push_back({"spinful level, four leads", m, 2, false});
    // The same leads in turn, a phonon bath among them: the leads of one operator are summed
    // together (GeneratorTables::fermion_group) wherever they stand.
    Model in_turn(m.hamiltonian());
    for (double mu : {0.5, -0.5})
      for (const Matrix& op : {d_up, d_down}) {
        in_turn.add_bath(Bath::lorentzian(op, lead(mu, 1, heom::LorentzianExpansion::Matsubara)));
        if (in_turn.baths().size() == 1)
          in_turn.add_bath(Bath::drude_lorentz(d_up.adjoint() * d_up, {0.1, 0.5, 0.5, 1}));
      }
    out.push_back({"spinful level, leads in turn and a phonon bath", in_turn, 2, false});
  }
  out.push_back({"level with a lead and two phonon baths",
                 Model(0.5 * number + 0.1 * heom::operators::sigma_x(),
                       {Bath::drude_lorentz(number, {0.1, 0.5, 0.5, 1}),
                        Bath::lorentzian(d, lead(0.3, 1, heom::LorentzianExpansion::Pade)),
                        Bath::underdamped(heom::operators::sigma_x(), {0.2, 0.4, 1.0, 0.5, 1})}),
                 4, false});
  {
    const Matrix q{{0.0, complex(0.6, 0.2), 0.1}, {0.0, 0.0, complex(0.0, -0.4)}, {0.0, 0.0, 0.0}};
    heom::FermionicExpansion e;
    e.ck_plus = {complex(0.05, 0.02), complex(0.0, -0.01)};
    e.vk_plus = {complex(1.0, -0.3), complex(2.0, -0.3)};
    e.ck_minus = {complex(0.05, -0.03), complex(0.0, 0.015)};
    e.vk_minus = {complex(1.0, 0.3), complex(2.0, 0.3)};
    out.push_back({"three levels, explicit fermionic exponents",
                   Model(complex_hamiltonian_3(), {Bath::fermionic(q, e)}), 3, false});
  }
  {
    Matrix q(9, 9);
    for (int i = 0; i + 1 < 9; ++i) q(i, i + 1) = 1.0 / (1.0 + i);
    out.push_back({"9 levels, a lead and a phonon bath",
                   Model(random_hermitian(9, 0.5, 90u),
                         {Bath::lorentzian(q, lead(0.2, 1, heom::LorentzianExpansion::Pade)),
                          Bath::drude_lorentz(heom::operators::projector(9, 4, 4), {0.05, 0.7, 0.4, 1})}),
                   2, false});
  }
  return out;
}

TYPED_TEST(GeneratorTest, EveryKernelComputesFermionicBathsAsAssembled) {
  // The kernels that take fermionic baths (the portable one, in every shape, and the host-block one)
  // give the assembled operator's L(x), QuTiP's formulas written out independently; the others refuse.
  using E = TypeParam;
  using traits = heom::BackendTraits<E>;
  const E exec;
  int runs = 0, refusals = 0;
  for (const Case& c : fermionic_cases()) {
    const heom::Hierarchy h(c.model.max_excitations(), c.depth);
    const int n = c.model.dimension();
    for (const heom::Parity parity : {heom::Parity::even, heom::Parity::odd}) {
      const heom::AssembledOperator<E> assembled(exec, c.model, h, parity);
      for (Variant v : variants(exec)) {
        v.options.parity = parity;
        const bool takes_fermions = v.options.kernel == heom::GeneratorKernel::portable ||
                                    v.options.kernel == heom::GeneratorKernel::host_block;
        if (!takes_fermions || !heom::Generator<E>::can_run(v.options.kernel, n, false)) {
          EXPECT_THROW(heom::Generator<E>(exec, c.model, h, v.options), heom::Error) << c.name << ", " << v.name;
          ++refusals;
          continue;
        }
        const heom::Generator<E> generator(exec, c.model, h, v.options);
        ASSERT_EQ(generator.kernel(), v.options.kernel) << c.name << ", " << v.name;
        EXPECT_FALSE(generator.preserves_hermiticity()) << c.name;
        ++runs;
        const auto in = ht::random_vector<E>(generator.vector_size(), 3);
        typename heom::Generator<E>::vector_type matrix_free("matrix_free", generator.vector_size());
        typename heom::Generator<E>::vector_type crs("crs", generator.vector_size());
        generator.apply(exec, in, matrix_free);
        assembled.apply(exec, in, crs);
        exec.fence();
        const auto [diff, scale] = ht::max_difference(matrix_free, crs);
        EXPECT_GT(scale, 0.1) << c.name;
        EXPECT_LE(diff, 1e-13 * scale) << c.name << ", " << v.name << ", " << heom::to_string(parity)
                                       << " parity: " << diff << " relative to " << scale;
      }
    }
    // The automatic choice is a kernel that takes them.
    const heom::Generator<E> automatic(exec, c.model, h);
    EXPECT_TRUE(automatic.kernel() == heom::GeneratorKernel::portable ||
                automatic.kernel() == heom::GeneratorKernel::host_block)
        << c.name << ": " << heom::to_string(automatic.kernel());
  }
  // (6 models by the three portable shapes, and the host-block kernel on host backends, both parities)
  EXPECT_EQ(runs, 2 * (6 * 3 + (traits::host_shape ? 6 : 0)));
  EXPECT_GT(refusals, 0);
}

TYPED_TEST(GeneratorTest, ASharedHierarchyGivesTheSameOperatorAndOutlivesItsOwner) {
  // A generator made from a shared hierarchy (which it reads in place where the device is the host)
  // gives L(x) to the bit of one that copied the tables, for a bosonic and a fermionic model and every
  // kernel that runs them, after its maker has dropped the hierarchy.
  using E = TypeParam;
  const E exec;
  int runs = 0;
  for (const Case& c : {cases().front(), fermionic_cases().front()}) {
    const heom::Hierarchy copied(c.model.max_excitations(), c.depth);
    for (const Variant& v : variants(exec)) {
      if (!heom::Generator<E>::can_run(v.options.kernel, c.model.dimension(), c.preserves_hermiticity) ||
          (c.model.has_fermionic_bath() && v.options.kernel != heom::GeneratorKernel::portable &&
           v.options.kernel != heom::GeneratorKernel::host_block))
        continue;
      auto shared = std::make_shared<const heom::Hierarchy>(c.model.max_excitations(), c.depth);
      const heom::Generator<E> reading(exec, c.model, shared, v.options), copying(exec, c.model, copied, v.options);
      EXPECT_GT(shared.use_count(), 1) << c.name << ", " << v.name;  // (the generator holds it)
      const std::weak_ptr<const heom::Hierarchy> watch = shared;
      shared.reset();
      EXPECT_FALSE(watch.expired()) << c.name << ", " << v.name;
      ++runs;
      auto in = ht::random_vector<E>(copying.vector_size(), 11);
      if (heom::is_hermitian_form(v.options.kernel)) make_blocks_hermitian(in, c.model.dimension());
      typename heom::Generator<E>::vector_type a("a", copying.vector_size()), b("b", copying.vector_size());
      reading.apply(exec, in, a, heom::Generator<E>::Damping::included, v.form());
      copying.apply(exec, in, b, heom::Generator<E>::Damping::included, v.form());
      exec.fence();
      const auto [diff, scale] = ht::max_difference(a, b);
      EXPECT_GT(scale, 0.1) << c.name;
      EXPECT_EQ(diff, 0.0) << c.name << ", " << v.name;
    }
  }
  EXPECT_GE(runs, 4);
  EXPECT_THROW(heom::Generator<E>(exec, cases().front().model, std::shared_ptr<const heom::Hierarchy>()), heom::Error);
}

TYPED_TEST(GeneratorTest, OddParityChangesFermionicBathsAlone) {
  // Odd parity turns the sign of a fermionic bath's left products (Q X, Q^dagger X): without a lead
  // the two parities are one operator to the bit; with one (beside the phonon bath) they differ.
  using E = TypeParam;
  const E exec;
  const Case mixed = fermionic_cases().back();
  const heom::Model phonons(mixed.model.hamiltonian(), {mixed.model.baths()[1]});
  auto difference = [&](const heom::Model& model, int depth) {
    const heom::Hierarchy h(model.max_excitations(), depth);
    heom::GeneratorOptions odd;
    odd.parity = heom::Parity::odd;
    const heom::Generator<E> even_generator(exec, model, h), odd_generator(exec, model, h, odd);
    const auto in = ht::random_vector<E>(even_generator.vector_size(), 5);
    typename heom::Generator<E>::vector_type a("even", even_generator.vector_size()), b("odd", a.extent(0));
    even_generator.apply(exec, in, a);
    odd_generator.apply(exec, in, b);
    exec.fence();
    return ht::max_difference(a, b);
  };
  ASSERT_TRUE(mixed.model.baths()[0].is_fermionic() && !mixed.model.baths()[1].is_fermionic());
  EXPECT_EQ(difference(phonons, 3).first, 0.0);
  const auto [differs, scale] = difference(mixed.model, mixed.depth);
  EXPECT_GT(differs, 0.01 * scale);
}

TYPED_TEST(GeneratorTest, AFermionicBatchIsItsMembersAlone) {
  // Two members of one shape (H differs), each member's block of the batch's L(x) equal to its own
  // generator's, for both parities (each ADO's occupied-exponent table, once per member).
  using E = TypeParam;
  const E exec;
  const Case c = fermionic_cases().front();
  const Model a = c.model, b(1.7 * c.model.hamiltonian(), c.model.baths());
  const heom::Hierarchy h(c.model.max_excitations(), c.depth);
  for (const heom::Parity parity : {heom::Parity::even, heom::Parity::odd}) {
    heom::GeneratorOptions options;
    options.parity = parity;
    const heom::Generator<E> batch(exec, std::vector<Model>{a, b}, h, options);
    const heom::Generator<E> alone_a(exec, a, h, options), alone_b(exec, b, h, options);
    const std::int64_t size = alone_a.vector_size();
    const auto in = ht::random_vector<E>(batch.vector_size(), 7);
    using V = typename heom::Generator<E>::vector_type;
    V out("out", batch.vector_size()), expected("expected", batch.vector_size());
    batch.apply(exec, in, out);
    alone_a.apply(exec, Kokkos::subview(in, std::make_pair(std::int64_t(0), size)),
                  Kokkos::subview(expected, std::make_pair(std::int64_t(0), size)));
    alone_b.apply(exec, Kokkos::subview(in, std::make_pair(size, 2 * size)),
                  Kokkos::subview(expected, std::make_pair(size, 2 * size)));
    exec.fence();
    const auto [diff, scale] = ht::max_difference(out, expected);
    EXPECT_GT(scale, 0.1);
    EXPECT_LE(diff, 1e-14 * scale) << heom::to_string(parity) << " parity";
  }
}

TEST(FermionicHierarchy, TheGeneratorRefusesOneWithoutTheZeroOneRule) {
  using H = Kokkos::DefaultHostExecutionSpace;
  const Case c = fermionic_cases().front();
  const heom::Hierarchy uncapped(c.model.num_exponents(), 2);
  EXPECT_THROW(heom::Generator<H>(H(), c.model, uncapped), heom::Error);
  EXPECT_THROW(heom::impl::assemble_generator(c.model, uncapped), heom::Error);
}

TEST(OddParity, IsRefusedWithLindbladTerms) {
  using H = Kokkos::DefaultHostExecutionSpace;
  heom::Model model(heom::operators::sigma_z(),
                    {heom::Bath::lorentzian(heom::Matrix{{0, 1}, {0, 0}}, {0.1, 1.0, 0.0, 1.0, 1})});
  model.add_lindblad(heom::Matrix{{0, 1}, {0, 0}}, 0.1);
  const heom::Hierarchy h(model.max_excitations(), 2);
  heom::GeneratorOptions odd;
  odd.parity = heom::Parity::odd;
  EXPECT_NO_THROW(heom::Generator<H>(H(), model, h));
  EXPECT_THROW(heom::Generator<H>(H(), model, h, odd), heom::Error);
  EXPECT_THROW(heom::impl::assemble_generator(model, h, heom::Parity::odd), heom::Error);
}

TEST(FermionicHierarchy, EachFermionicEntryIsZeroOrOneAndTheDepthCountsBoth) {
  // One bosonic exponent between two fermionic ones at depth 3: labels (f, b, f) with f in {0, 1}
  // and f + b + f <= 3: b = 0..3 with f = (0, 0), 0..2 with one f, 0..1 with both.
  const heom::Hierarchy h({1, 0, 1}, 3);
  EXPECT_EQ(h.size(), 4 + 2 * 3 + 2);
  EXPECT_EQ(heom::Hierarchy::count({1, 0, 1}, 3), 12u);
  for (int a = 0; a < h.size(); ++a) {
    EXPECT_LE(h.label(a, 0), 1);
    EXPECT_LE(h.label(a, 2), 1);
    EXPECT_LE(h.level(a), 3);
    EXPECT_EQ(h.index_of(h.label(a)), a);
    for (int k = 0; k < 3; ++k) {
      // n + e_k exists exactly when it obeys both rules, and leads back.
      const bool room = h.level(a) < 3 && (k == 1 || h.label(a, k) == 0);
      ASSERT_EQ(h.next(a, k) >= 0, room) << a << ", " << k;
      if (room) {
        EXPECT_EQ(h.prev(h.next(a, k), k), a);
      }
    }
  }
  EXPECT_EQ(h.index_of({2, 0, 0}), -1);
  // Twelve fermionic exponents at depth 2, as QuTiP counts them: 1 + 12 + 66.
  EXPECT_EQ(heom::Hierarchy::count(std::vector<int>(12, 1), 2), 79u);
  EXPECT_EQ(heom::Hierarchy(std::vector<int>(12, 1), 12).size(), 4096);
}

/// The case's model with drives: a cosine on a Hermitian operator (H(t) Hermitian, f real: the
/// Hermitian forms still run), and with `complex_pair` also f(t) U + conj(f(t)) U^dagger for a
/// tabulated complex f and an upper-triangular U (H(t) Hermitian, but ADOs no longer stay so).
Model with_drives(const Model& base, bool complex_pair) {
  const int n = base.dimension();
  Model m = base;
  m.add_drive(random_hermitian(n, 0.4, 70u + n), heom::DriveShape::cosine(0.8, 1.3, 0.2));
  if (!complex_pair) return m;
  Matrix u(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) u(i, j) = complex(0.1 * (i + 1), -0.05 * j);
  const std::vector<double> times = {0.0, 0.5, 1.0, 2.0, 3.0};
  std::vector<complex> f, f_conj;
  for (double t : times) {
    f.emplace_back(std::sin(t), 0.5 * std::cos(2.0 * t));
    f_conj.push_back(std::conj(f.back()));
  }
  m.add_drive(u, heom::DriveShape::table(times, f));
  m.add_drive(u.adjoint(), heom::DriveShape::table(times, f_conj));
  return m;
}

TYPED_TEST(GeneratorTest, DrivenGeneratorEqualsTheFrozenModelAtEachTime) {
  // Every kernel that runs a driven model: L(t) after at_time(t) equals the generator of the model
  // frozen at t (H(t) as its static H), at two times and back again, and in a batch of two members
  // whose drives differ.
  using E = TypeParam;
  const E exec;
  int runs = 0, hermitian_runs = 0;
  for (const Case& c : cases()) {
    if (c.model.dimension() > 7) continue;  // (the large models add nothing here but time)
    const heom::Hierarchy h(c.model.num_exponents(), c.depth);
    const int n = c.model.dimension();
    for (const bool complex_pair : {false, true}) {
      const Model driven = with_drives(c.model, complex_pair);
      const bool preserving = c.preserves_hermiticity && !complex_pair;
      for (const Variant& v : variants(exec)) {
        if (!heom::Generator<E>::can_run(v.options.kernel, n, preserving)) continue;
        const std::string what = c.name + ", " + v.name + (complex_pair ? ", complex drives" : "");
        const heom::Generator<E> generator(exec, driven, h, v.options);
        ASSERT_TRUE(generator.is_driven());
        EXPECT_EQ(generator.preserves_hermiticity(), preserving) << what;
        ++runs;
        hermitian_runs += heom::is_hermitian_form(v.options.kernel);
        const auto in = ht::random_vector<E>(generator.vector_size(), 3);
        if (heom::is_hermitian_form(v.options.kernel)) make_blocks_hermitian(in, n);
        typename heom::Generator<E>::vector_type out("out", generator.vector_size()),
            frozen_out("frozen", generator.vector_size()), later("later", generator.vector_size());
        for (const double t : {0.4, 2.3, 0.4}) {
          generator.at_time(exec, t);
          generator.apply(exec, in, out, heom::Generator<E>::Damping::included, v.form());
          const heom::Generator<E> frozen(exec, driven.frozen_at(t), h, v.options);
          frozen.apply(exec, in, frozen_out, heom::Generator<E>::Damping::included, v.form());
          exec.fence();
          const auto [diff, scale] = ht::max_difference(out, frozen_out);
          EXPECT_LE(diff, 1e-13 * scale) << what << " at t = " << t;
          if (t == 2.3) Kokkos::deep_copy(later, out);
        }
        const auto [change, scale] = ht::max_difference(later, out);
        EXPECT_GT(change, 1e-3 * scale) << what << ": L(0.4) and L(2.3) hardly differ";
      }
    }
  }
  EXPECT_GE(runs, 20);
  EXPECT_GT(hermitian_runs, 0);

  // A batch: members with different drive amplitudes, each as its frozen model.
  const Case c = cases().front();
  const heom::Hierarchy h(c.model.num_exponents(), c.depth);
  Model a = c.model, b = c.model;
  const Matrix op = random_hermitian(c.model.dimension(), 0.4, 90u);
  a.add_drive(op, heom::DriveShape::gaussian(0.5, 1.0, 0.7, 2.0, 0.1));
  b.add_drive(op, heom::DriveShape::gaussian(-0.9, 1.0, 0.7, 2.0, 0.1));
  const heom::Generator<E> batch(exec, std::vector<Model>{a, b}, h);
  const heom::Generator<E> frozen(exec, std::vector<Model>{a.frozen_at(1.2), b.frozen_at(1.2)}, h);
  const auto in = ht::random_vector<E>(batch.vector_size(), 5);
  typename heom::Generator<E>::vector_type out("out", batch.vector_size()), expected("expected", batch.vector_size());
  batch.at_time(exec, 1.2);
  batch.apply(exec, in, out);
  frozen.apply(exec, in, expected);
  exec.fence();
  const auto [diff, scale] = ht::max_difference(out, expected);
  EXPECT_LE(diff, 1e-13 * scale);
}

TEST(GeneratorTables, DrivesOnLevelZeroEndTheGroundColumnShape) {
  Model m(Matrix{{0.0, 0.0, 0.0}, {0.0, 1.0, 0.2}, {0.0, 0.2, 1.1}});
  m.add_bath(Bath::drude_lorentz(heom::operators::projector(3, 1, 1), {0.05, 0.5, 0.5, 1}));
  m.add_drive(Matrix{{0.3, 0.0, 0.0}, {0.0, 0.0, 1.0}, {0.0, 1.0, 0.0}}, heom::DriveShape::cosine(0.1, 1.0));
  const heom::Hierarchy h(m.num_exponents(), 2);
  EXPECT_EQ(heom::impl::ground_column_obstacle(heom::impl::make_generator_tables(m, h)), "");
  m.add_drive(Matrix{{0.0, 1.0, 0.0}, {1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}}, heom::DriveShape::cosine(0.1, 1.0));
  EXPECT_EQ(heom::impl::ground_column_obstacle(heom::impl::make_generator_tables(m, h)),
            "the operator of drive 1 has element (0, 1)");
}

/// Generator::apply_then's hook for the test below: counts the calls per ADO, and checks that the
/// ADO's block is complete (apply()'s, to rounding: the two are separate instantiations, which the
/// compiler may contract into fused multiply-adds differently) when the hook sees it.
struct CheckFinishedBlocks {
  const heom::device_complex* out = nullptr;
  const heom::device_complex* expected = nullptr;
  int n2 = 0;
  int* calls = nullptr;       // per ADO
  int* unfinished = nullptr;  // per ADO
  void operator()(int first, int last) const {
    for (int a = first; a < last; ++a) {
      ++calls[a];
      for (int e = 0; e < n2; ++e)
        if (Kokkos::abs(out[a * n2 + e] - expected[a * n2 + e]) > 1e-13 * (1.0 + Kokkos::abs(expected[a * n2 + e])))
          ++unfinished[a];
    }
  }
};

/// visit(what, generator, form, in, expected) for every case and every kernel that runs it: `in`
/// random (its blocks Hermitian for the Hermitian form: `form`), `expected` apply()'s output, for
/// apply_then's hooks to be compared with.
template <class E, class Visit>
void for_each_applied_kernel(const E& exec, const Visit& visit) {
  for (const Case& c : cases()) {
    const heom::Hierarchy h(c.model.num_exponents(), c.depth);
    const int n = c.model.dimension();
    for (const Variant& v : variants(exec)) {
      if (!heom::Generator<E>::can_run(v.options.kernel, n, c.preserves_hermiticity)) continue;
      const heom::Generator<E> generator(exec, c.model, h, v.options);
      const auto in = ht::random_vector<E>(generator.vector_size(), 7);
      if (heom::is_hermitian_form(v.options.kernel)) make_blocks_hermitian(in, n);
      typename heom::Generator<E>::vector_type expected("expected", generator.vector_size());
      generator.apply(exec, in, expected, heom::Generator<E>::Damping::included, v.form());
      exec.fence();
      visit(c.name + ", " + v.name, generator, v.form(), in, expected);
    }
  }
}

TYPED_TEST(GeneratorTest, EveryKernelsHookSeesEachFinishedAdoOnce) {
  // apply_then (the integrators' fused update): each ADO is handed to the hook exactly once, after
  // its whole block is written, by every kernel (the portable one also with several threads a team).
  using E = TypeParam;
  if constexpr (heom::BackendTraits<E>::host_shape) {
    const E exec;
    int checked = 0;
    for_each_applied_kernel(exec, [&](const std::string& what, const heom::Generator<E>& generator,
                                      heom::InputForm form, const auto& in, const auto& expected) {
      const int n = generator.dimension();
      typename heom::Generator<E>::vector_type out("out", generator.vector_size());
      std::vector<int> calls(generator.num_ados(), 0), unfinished(generator.num_ados(), 0);
      const CheckFinishedBlocks hook{out.data(), expected.data(), n * n, calls.data(), unfinished.data()};
      generator.apply_then(exec, in, out, heom::Generator<E>::Damping::included, form, hook);
      exec.fence();
      EXPECT_EQ(std::count(calls.begin(), calls.end(), 1), generator.num_ados()) << what;
      EXPECT_EQ(std::count(unfinished.begin(), unfinished.end(), 0), generator.num_ados()) << what;
      ++checked;
    });
    EXPECT_GT(checked, 30);
  } else {
    GTEST_SKIP() << "apply_then runs on host backends only";
  }
}

/// A hook that takes blocks, and Hermitian blocks as their upper triangles: counts each form's calls
/// per ADO and the elements that differ from apply()'s (to rounding, as above).
struct CheckTakenBlocks {
  const heom::device_complex* expected = nullptr;
  int n = 0;
  int* blocks = nullptr;     // per ADO
  int* triangles = nullptr;  // per ADO
  int* different = nullptr;  // per ADO
  static bool close(heom::device_complex x, heom::device_complex y) {
    return Kokkos::abs(x - y) <= 1e-13 * (1.0 + Kokkos::abs(y));
  }
  void take_block(int a, const double* lanes) const {
    ++blocks[a];
    for (int e = 0; e < n * n; ++e)
      if (!close({lanes[2 * e], lanes[2 * e + 1]}, expected[a * n * n + e])) ++different[a];
  }
  void take_upper(int a, const double* packed) const {
    ++triangles[a];
    int k = 0;
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j, k += 2)
        if (!close({packed[k], packed[k + 1]}, expected[a * n * n + i * n + j])) ++different[a];
  }
};

TYPED_TEST(GeneratorTest, HermitianKernelHandsOverUpperTriangles) {
  // A hook that takes upper triangles gets them from the Hermitian kernel (the packed history of
  // exp-adams), each ADO's once and no whole block; from the general kernels, whole blocks.
  using E = TypeParam;
  if constexpr (heom::BackendTraits<E>::host_shape) {
    const E exec;
    int hermitian = 0, general = 0;
    for_each_applied_kernel(exec, [&](const std::string& what, const heom::Generator<E>& generator,
                                      heom::InputForm form, const auto& in, const auto& expected) {
      if (!generator.hands_over_blocks(form)) return;
      const bool is_hermitian = heom::is_hermitian_form(generator.kernel(form));
      const int ados = generator.num_ados();
      typename heom::Generator<E>::vector_type out("out", generator.vector_size());
      std::vector<int> blocks(ados, 0), triangles(ados, 0), different(ados, 0);
      const CheckTakenBlocks hook{expected.data(), generator.dimension(), blocks.data(), triangles.data(),
                                  different.data()};
      generator.apply_then(exec, in, out, heom::Generator<E>::Damping::included, form, hook);
      exec.fence();
      EXPECT_EQ(std::count(triangles.begin(), triangles.end(), is_hermitian ? 1 : 0), ados) << what;
      EXPECT_EQ(std::count(blocks.begin(), blocks.end(), is_hermitian ? 0 : 1), ados) << what;
      EXPECT_EQ(std::count(different.begin(), different.end(), 0), ados) << what;
      ++(is_hermitian ? hermitian : general);
    });
    EXPECT_GT(hermitian, 3);
    EXPECT_GT(general, 3);
  } else {
    GTEST_SKIP() << "apply_then runs on host backends only";
  }
}

TYPED_TEST(GeneratorTest, EveryKernelAppliedToOneTierWritesThatTierAlone) {
  // apply_tier (the steady state's sweeps): the ADOs of the tier get apply()'s blocks to the bit, and
  // every other block of `out` keeps what it held, for every kernel and tier.
  using E = TypeParam;
  const E exec;
  int checked = 0;
  for (const Case& c : cases()) {
    const heom::Hierarchy h(c.model.num_exponents(), c.depth);
    const int n2 = c.model.dimension() * c.model.dimension();
    for (const Variant& v : variants(exec)) {
      if (!heom::Generator<E>::can_run(v.options.kernel, c.model.dimension(), c.preserves_hermiticity)) continue;
      const heom::Generator<E> generator(exec, c.model, h, v.options);
      const auto in = ht::random_vector<E>(generator.vector_size(), 11);
      if (heom::is_hermitian_form(v.options.kernel)) make_blocks_hermitian(in, c.model.dimension());
      const auto before = ht::random_vector<E>(generator.vector_size(), 12);
      typename heom::Generator<E>::vector_type full("full", generator.vector_size());
      typename heom::Generator<E>::vector_type out("out", generator.vector_size());
      generator.apply(exec, in, full, heom::Generator<E>::Damping::included, v.form());
      exec.fence();
      const auto expected = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), full);
      const auto untouched = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), before);
      for (int tier = 0; tier <= c.depth; ++tier) {
        Kokkos::deep_copy(out, before);
        generator.apply_tier(exec, in, out, tier, v.form());
        exec.fence();
        const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
        int wrong = 0, in_tier = 0;
        for (int a = 0; a < generator.num_ados(); ++a) {
          const bool computed = h.level(a) == tier;
          in_tier += computed;
          for (int e = 0; e < n2; ++e) {
            const std::size_t i = static_cast<std::size_t>(a) * n2 + e;
            wrong += !(got(i) == (computed ? expected(i) : untouched(i)));
          }
        }
        EXPECT_GT(in_tier, 0) << c.name << ", tier " << tier;
        EXPECT_EQ(wrong, 0) << c.name << ", " << v.name << ", tier " << tier;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
  const Case c = cases().front();
  const heom::Hierarchy h(c.model.num_exponents(), c.depth);
  const heom::Generator<E> generator(exec, c.model, h);
  typename heom::Generator<E>::vector_type x("x", generator.vector_size()), y("y", generator.vector_size());
  EXPECT_THROW(generator.apply_tier(exec, x, y, -1), heom::Error);
}

TEST(GeneratorKernels, TheTwoLevelKernelIsBuiltWhereTheMachineHasAvx512) {
  // The presets build for the machine they run on: where it has AVX-512, the two-level kernel must be
  // in the build, so that the sanitizer (debug) build runs it too.
#if defined(HEOM_TESTS_BUILT_FOR_THIS_MACHINE) && defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f"))
    EXPECT_TRUE(heom::BackendTraits<Kokkos::DefaultHostExecutionSpace>::two_level_kernel);
  else
    GTEST_SKIP() << "this machine has no AVX-512";
#else
  GTEST_SKIP() << "not built with -march=native";
#endif
}

TYPED_TEST(GeneratorTest, AutomaticChoiceAndRefusals) {
  // The automatic kernel is the fastest that runs; kernels that cannot run are refused by name.
  using E = TypeParam;
  using K = heom::GeneratorKernel;
  using traits = heom::BackendTraits<E>;
  const E exec;
  for (const Case& c : cases()) {
    const heom::Hierarchy h(c.model.num_exponents(), c.depth);
    heom::Generator<E> generator(exec, c.model, h);
    const int n = c.model.dimension();
    const K expected = traits::two_level_kernel && n == 2                                  ? K::two_level
                       : traits::host_shape && n >= 2 && n <= heom::impl::host_block_max_n ? K::host_block
                                                                                           : K::portable;
    EXPECT_EQ(generator.kernel(), expected) << c.name;
  }
  const Model sb(0.5 * heom::operators::sigma_x(),
                 {Bath::drude_lorentz(heom::operators::sigma_z(), {0.1, 0.5, 0.5, 1})});
  const heom::Hierarchy h(sb.num_exponents(), 2);
  try {
    heom::Generator<E> g(exec, sb, h, {K::portable, 100000});
    FAIL() << "a team of 100000 threads was accepted";
  } catch (const heom::Error& e) {
    EXPECT_NE(std::string(e.what()).find("team_size 100000"), std::string::npos) << e.what();
  }
  EXPECT_THROW(heom::Generator<E>(exec, sb, h, {K::host_block, 2}), heom::Error);  // a shape for another kernel
  heom::Generator<E> hermitian_asked(exec, sb, h, {traits::host_shape ? K::hermitian : K::portable});
  if (traits::host_shape) {
    EXPECT_EQ(hermitian_asked.kernel(heom::InputForm::hermitian), K::hermitian);
    EXPECT_THROW(hermitian_asked.kernel(heom::InputForm::general), heom::Error);  // (it needs Hermitian input)
    EXPECT_THROW(hermitian_asked.apply(exec, typename heom::Generator<E>::vector_type("in", 4 * h.size()),
                                       typename heom::Generator<E>::vector_type("out", 4 * h.size())),
                 heom::Error);
  }
}

TYPED_TEST(GeneratorTest, TerminatorChangesOnlyTheSystemPart) {
  // With and without a terminator the generators differ by Delta (2 Q X Q - Q^2 X - X Q^2) on every
  // ADO: check on a vector that is zero except ADO 0, where the neighbour terms of ADO 0 vanish.
  using E = TypeParam;
  const E exec;
  const Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  heom::DrudeLorentz p{0.1, 0.5, 0.5, 1, heom::DrudeLorentzExpansion::Matsubara, false};
  const Model plain(0.5 * sx, {Bath::drude_lorentz(sx, p)});
  p.terminator = true;
  const Bath terminated = Bath::drude_lorentz(sx, p);
  const Model with(0.5 * sx, {terminated});
  const heom::Hierarchy h(2, 0);
  const heom::Generator<E> g_plain(exec, plain, h), g_with(exec, with, h);
  typename heom::Generator<E>::vector_type x("x", 4), y_plain("y", 4), y_with("y", 4);
  auto hx = Kokkos::create_mirror_view(x);
  hx(0) = 0.7;
  hx(1) = heom::device_complex(0.1, 0.2);
  hx(2) = heom::device_complex(0.1, -0.2);
  hx(3) = 0.3;
  Kokkos::deep_copy(x, hx);
  g_plain.apply(exec, x, y_plain);
  g_with.apply(exec, x, y_with);
  exec.fence();
  auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_plain);
  auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_with);
  // sx X sx swaps both indices; sx^2 = 1: D(X) = Delta (2 sx X sx - 2 X).
  const Matrix X{{0.7, complex(0.1, 0.2)}, {complex(0.1, -0.2), 0.3}};
  const Matrix d = terminated.terminator_delta() * (2.0 * (sx * X * sx) - 2.0 * X);
  for (int e = 0; e < 4; ++e) {
    const complex diff(b(e).real() - a(e).real(), b(e).imag() - a(e).imag());
    EXPECT_NEAR(std::abs(diff - d(e / 2, e % 2)), 0.0, 1e-14) << "element " << e;
  }
  EXPECT_GT(std::abs(terminated.terminator_delta()), 1e-3);
}

TYPED_TEST(GeneratorTest, HermitianFormEqualsGeneralForm) {
  // On Hermitian ADOs, the kernel's Hermitian form (G + G^dagger) must give the general result, with
  // and without the damping term; the models with complex rates or coefficients must refuse it.
  using E = TypeParam;
  const E exec;
  int hermitian_cases = 0;
  for (const Case& c : cases()) {
    const heom::Hierarchy h(c.model.num_exponents(), c.depth);
    heom::Generator<E> generator(exec, c.model, h);
    ASSERT_EQ(generator.preserves_hermiticity(), c.preserves_hermiticity) << c.name;
    if (!c.preserves_hermiticity) {
      EXPECT_THROW(generator.kernel(heom::InputForm::hermitian), heom::Error) << c.name;
      continue;
    }
    ++hermitian_cases;
    const auto in = ht::random_vector<E>(generator.vector_size(), 3);
    make_blocks_hermitian(in, c.model.dimension());
    for (auto damping : {heom::Generator<E>::Damping::included, heom::Generator<E>::Damping::excluded}) {
      typename heom::Generator<E>::vector_type general("general", generator.vector_size());
      typename heom::Generator<E>::vector_type half("half", generator.vector_size());
      generator.apply(exec, in, general, damping);
      // The automatic choice takes the Hermitian form where it is the fastest kernel: on host backends
      // the host kernel's, for n = 3..8; on GPUs the portable one's, for any n.
      const int n = c.model.dimension();
      EXPECT_EQ(heom::is_hermitian_form(generator.kernel(heom::InputForm::hermitian)),
                heom::BackendTraits<E>::host_shape ? n >= 3 && n <= 8 : true)
          << c.name;
      EXPECT_FALSE(heom::is_hermitian_form(generator.kernel())) << c.name;
      generator.apply(exec, in, half, damping, heom::InputForm::hermitian);
      exec.fence();
      const auto [diff, scale] = ht::max_difference(half, general);
      EXPECT_GT(scale, 0.1) << c.name;
      EXPECT_LE(diff, 1e-13 * scale) << c.name << ": " << diff << " relative to " << scale;
    }
    if (heom::is_hermitian_form(generator.kernel(heom::InputForm::hermitian))) {
      // The fast path is really taken: on a non-Hermitian input it computes something else.
      const auto skew = ht::random_vector<E>(generator.vector_size(), 4);
      typename heom::Generator<E>::vector_type general("general", generator.vector_size());
      typename heom::Generator<E>::vector_type half("half", generator.vector_size());
      generator.apply(exec, skew, general);
      generator.apply(exec, skew, half, heom::Generator<E>::Damping::included, heom::InputForm::hermitian);
      exec.fence();
      EXPECT_GT(ht::max_difference(half, general).first, 0.1) << c.name;
    }
  }
  EXPECT_EQ(hermitian_cases, 12);
}

TEST(GeneratorTables, FindsRankOneCouplings) {
  // s c c^dagger with c a column of Q: exact for a projector on any vector, refused for rank two.
  const Matrix v{{0.6}, {complex(0.0, 0.48)}, {0.64}};
  const Matrix sz3{{1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, -1.0}};
  const Model m(complex_hamiltonian_3(), {Bath::drude_lorentz(2.0 * v * v.adjoint(), {0.04, 0.5, 0.7, 1}),
                                          Bath::drude_lorentz(complex_coupling_3(), {0.03, 0.6, 0.8, 1}),
                                          Bath::drude_lorentz(sz3, {0.03, 0.6, 0.8, 1})});
  const heom::Hierarchy h(m.num_exponents(), 1);
  const auto t = heom::impl::make_generator_tables(m, h);
  ASSERT_EQ(t.rank_one, (std::vector<int>{1, 0, 0}));  // the diagonal sz3 takes the diagonal path
  Matrix rebuilt(3, 3);
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) rebuilt(i, k) = t.rank_one_s[0] * t.rank_one_c[i] * std::conj(t.rank_one_c[k]);
  EXPECT_LE(heom::max_abs_diff(rebuilt, 2.0 * v * v.adjoint()), 1e-15);
}

TEST(GeneratorTables, SortsLindbladTermsByTheirForm) {
  // A real diagonal L joins the sandwich, a rank-one L (sqrt(rate) L = u w^T) is a rank-one jump,
  // any other L a dense jump (a bath of no exponents).
  Model m(complex_hamiltonian_3(), {Bath::drude_lorentz(complex_coupling_3(), {0.03, 0.6, 0.8, 1})});
  const Matrix transfer{{0.0, complex(0.6, 0.8), 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.3, 0.0}};  // column 1 only
  const Matrix lowering{{0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}, {0.0, 0.0, 0.0}};                // rank two
  m.add_lindblad(Matrix{{1.0, 0.0, 0.0}, {0.0, -2.0, 0.0}, {0.0, 0.0, 0.0}}, 0.5)
      .add_lindblad(transfer, 0.25)
      .add_lindblad(lowering, 0.1);
  const heom::Hierarchy h(m.num_exponents(), 1);
  const auto t = heom::impl::make_generator_tables(m, h);
  EXPECT_EQ(t.num_rank_one_jumps, 1);
  EXPECT_EQ(t.num_jumps, 1);
  EXPECT_EQ(t.num_baths, 2);
  EXPECT_EQ(t.sandwich[1 * 3 + 0], complex(0.5 * -2.0 * 1.0));  // rate l_1 l_0
  Matrix rebuilt(3, 3);
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) rebuilt(i, k) = t.jump_u[i] * t.jump_w[k];
  EXPECT_LE(heom::max_abs_diff(rebuilt, 0.5 * transfer), 1e-15);  // sqrt(0.25) L
}

TEST(GeneratorTables, FindsSingleRowCouplings) {
  // Each exponent of a diagonal bath coupled through one row (a scaled site projector) gets that row
  // and q_ii; a diagonal bath with two rows, and a dense one, get none.
  Matrix projector(3, 3), sz3{{1.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, -1.0}};
  projector(1, 1) = -0.5;
  const Model m(complex_hamiltonian_3(),
                {Bath::drude_lorentz(sz3, {0.03, 0.6, 0.8, 1}), Bath::drude_lorentz(projector, {0.04, 0.5, 0.7, 2}),
                 Bath::drude_lorentz(complex_coupling_3(), {0.03, 0.6, 0.8, 1})});
  const heom::Hierarchy h(m.num_exponents(), 1);
  const auto t = heom::impl::make_generator_tables(m, h);
  for (int b = 0; b < 3; ++b)
    for (int k = t.bath_begin[b]; k < t.bath_begin[b + 1]; ++k) {
      EXPECT_EQ(t.single_row[k], b == 1 ? 1 : -1) << "exponent " << k;
      EXPECT_EQ(t.single_row_q[k], b == 1 ? -0.5 : 0.0) << "exponent " << k;
    }
  EXPECT_EQ(t.bath_begin[2] - t.bath_begin[1], 3);  // the projector's bath has three exponents
}

}  // namespace
