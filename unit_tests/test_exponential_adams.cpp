// Exponential Adams' building blocks: its update on the host and the device shapes, the phi
// functions and step weights against closed forms, exactness for damped polynomial forcing, and the
// damping and element classes; its history kept packed for Hermitian ADOs against the whole one; the
// system's diagonal taken exactly where the damping rates are complex.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "distributed_cases.hpp"
#include "test_support.hpp"

namespace {

using heom::complex;
namespace ht = heom::testing;
using ht::max_diff;

/// Exponential Adams' update of y by order-5 history and two damping classes, with its error sum,
/// through OrderedSum<Exec, Shape>: the host's block loops, or the device's per-element reduction.
/// per_element: weights per element of a block (the system's diagonal exact), all complex.
template <heom::KernelShape Shape>
std::pair<std::vector<complex>, double> exp_adams_update(int n, bool real_weights, bool per_element = false) {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  using traits = heom::BackendTraits<Exec>;
  using weights = heom::impl::ExponentialAdamsWeights;
  const int ados = 300, n2 = n * n;  // more than one chunk of 256 ADOs
  const std::int64_t size = static_cast<std::int64_t>(ados) * n2;
  const Exec exec;
  typename traits::template view<heom::device_complex*> y_new("y_new", size);
  Kokkos::Array<typename traits::template view<const heom::device_complex*>, weights::max_order> past;
  for (int j = 0; j < weights::max_order; ++j) past[j] = ht::random_vector<Exec>(size, 10u + j);
  std::vector<int> classes(ados);
  for (int a = 0; a < ados; ++a) classes[a] = a % 3 == 0 ? 1 : 0;
  const int columns = weights::stride * (per_element ? n2 : 1);
  std::vector<complex> w(2 * columns);
  for (std::size_t k = 0; k < w.size(); ++k)
    w[k] = complex(0.1 + 0.01 * static_cast<double>(k % 23), real_weights ? 0.0 : 0.02 * static_cast<double>(k % 5));
  const auto y = ht::random_vector<Exec>(size, 3);
  const auto ado_class =
      heom::impl::to_device<typename traits::template view<const int*>>(exec, "class", classes, ados);
  const auto table =
      heom::impl::to_device<typename traits::template view<const heom::device_complex**>>(exec, "w", w, 2, columns);
  const int stride = per_element ? n2 : 1;
  const Kokkos::Array<double, weights::max_order> difference = {0.7, -1.3, 0.9, -0.4, 0.1};
  const heom::impl::OrderedSum<Exec, Shape> sum(exec, size, 256 * n2);
  double total = 0.0;
  if (real_weights)
    total = sum.blocked(exec, n2,
                        heom::impl::ExponentialAdamsUpdate<Exec, 5, true>{y_new, y, past, ado_class, table, 1e-6, 1e-4,
                                                                          n2, stride, difference});
  else
    total = sum.blocked(exec, n2,
                        heom::impl::ExponentialAdamsUpdate<Exec, 5, false>{y_new, y, past, ado_class, table, 1e-6, 1e-4,
                                                                           n2, stride, difference});
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y_new);
  std::vector<complex> out;
  for (std::int64_t i = 0; i < size; ++i) out.emplace_back(h(i).real(), h(i).imag());
  return {out, total};
}

TEST(ExponentialAdams, DeviceUpdatePathEqualsTheHostPath) {
  // The per-element update and reduction a GPU runs, on the host: the same y_new and error sum as
  // the host's block loops (n = 2: its AVX-512 form where built; n = 3: the general loops).
  // With weights per element (the system's diagonal exact) too: n = 2's AVX-512 lanes, the loops
  // by four elements (AVX) with a remainder (n = 3), and a block of more than one 256-element piece
  // (n = 17).
  for (const int n : {2, 3, 17})
    for (const int weights : {0, 1, 2}) {
      const bool real_weights = weights == 0, per_element = weights == 2;
      if (n == 17 && !per_element) continue;
      SCOPED_TRACE("n = " + std::to_string(n) +
                   (real_weights  ? ", real weights"
                    : per_element ? ", weights per element"
                                  : ", complex weights"));
      const auto [host_y, host_sum] = exp_adams_update<heom::KernelShape::host>(n, real_weights, per_element);
      const auto [device_y, device_sum] = exp_adams_update<heom::KernelShape::device>(n, real_weights, per_element);
      double largest = 0.0;
      for (const complex& z : host_y) largest = std::max(largest, std::abs(z));
      EXPECT_GT(largest, 0.1);
      EXPECT_LE(max_diff(host_y, device_y), 1e-14 * largest);
      EXPECT_GT(host_sum, 1.0);
      EXPECT_NEAR(device_sum, host_sum, 1e-12 * host_sum);
    }
}

TEST(ExponentialAdams, PhiFunctionsMatchClosedForms) {
  // phi_1 = (e^z - 1) / z, phi_2 = (e^z - 1 - z) / z^2, phi_3 = (e^z - 1 - z - z^2/2) / z^3; at z
  // where the closed forms lose no accuracy, on both sides of the switch from series to recurrence.
  for (const complex z : {complex(-0.7, 0.0), complex(1.9, 0.3), complex(-2.1, 0.0), complex(-5.0, 3.0),
                          complex(0.0, 7.0), complex(-40.0, 0.0)}) {
    complex phi[3];
    heom::impl::phi_functions(z, 3, phi);
    const complex e = std::exp(z);
    EXPECT_LE(std::abs(phi[0] - (e - 1.0) / z), 1e-14 * std::abs(phi[0])) << z;
    EXPECT_LE(std::abs(phi[1] - (e - 1.0 - z) / (z * z)), 1e-13 * std::abs(phi[1])) << z;
    EXPECT_LE(std::abs(phi[2] - (e - 1.0 - z - 0.5 * z * z) / (z * z * z)), 1e-12 * std::abs(phi[2])) << z;
  }
  complex phi[5];
  heom::impl::phi_functions(0.0, 5, phi);
  for (int k = 1; k <= 5; ++k) EXPECT_NEAR(std::abs(phi[k - 1] * std::tgamma(k + 1.0) - 1.0), 0.0, 1e-15);
}

TEST(ExponentialAdams, WeightsReduceToAdamsBashforthWithoutDamping) {
  // D = 0, equal steps: the classical five-step Adams-Bashforth coefficients times h.
  const double nodes[5] = {0.0, -1.0, -2.0, -3.0, -4.0};
  const double h = 0.3;
  std::vector<complex> table(heom::impl::ExponentialAdamsWeights::stride);
  const complex zero(0.0);
  heom::impl::ExponentialAdamsWeights::compute(&zero, 1, h, 1.0, nodes, 5, table.data());
  const double ab5[5] = {1901.0 / 720, -2774.0 / 720, 2616.0 / 720, -1274.0 / 720, 251.0 / 720};
  EXPECT_NEAR(std::abs(table[0] - 1.0), 0.0, 1e-15);
  for (int j = 0; j < 5; ++j) EXPECT_NEAR(std::abs(table[1 + j] - h * ab5[j]), 0.0, 1e-13) << "weight " << j;
  // The error: AB5 minus AB4 (55, -59, 37, -9) / 24, as the error weight times the divided difference.
  const double ab4[5] = {55.0 / 24, -59.0 / 24, 37.0 / 24, -9.0 / 24, 0.0};
  const auto delta = heom::impl::ExponentialAdamsWeights::differences(nodes, 5);
  for (int j = 0; j < 5; ++j) EXPECT_NEAR(std::abs(table[6] * delta[j] - h * (ab5[j] - ab4[j])), 0.0, 1e-13) << j;
  // Order 1 has no estimate.
  heom::impl::ExponentialAdamsWeights::compute(&zero, 1, h, 1.0, nodes, 1, table.data());
  EXPECT_EQ(table[6], complex(0.0));
  for (int j = 0; j < 5; ++j) EXPECT_EQ(heom::impl::ExponentialAdamsWeights::differences(nodes, 1)[j], 0.0);
}

TEST(ExponentialAdams, ExactForDampedPolynomialForcing) {
  // y' = D y + N(t) with N a cubic is integrated exactly by an order-4 step, for any damping and
  // uneven history: y(t_n + s) = e^{sD} y_n + int_0^s e^{(s-u)D} N(t_n + u) du.
  const complex D(-37.0, 5.0);
  auto N = [](double t) { return complex(1.0 - 2.0 * t + 0.5 * t * t * t, 0.3 * t * t); };
  const double h = 0.4, sigma = 0.7;  // an interpolated point inside the step
  const double nodes[4] = {0.0, -0.8, -1.9, -2.5};
  std::vector<complex> table(heom::impl::ExponentialAdamsWeights::stride);
  heom::impl::ExponentialAdamsWeights::compute(&D, 1, h, sigma, nodes, 4, table.data());
  const complex y0(0.2, -0.1);
  complex y = table[0] * y0;
  for (int j = 0; j < 4; ++j) y += table[1 + j] * N(nodes[j] * h);
  // The exact value by composite Gauss-Legendre quadrature (exact to rounding for this integrand).
  const double s = sigma * h;
  const double x[5] = {-0.9061798459386640, -0.5384693101056831, 0.0, 0.5384693101056831, 0.9061798459386640};
  const double wq[5] = {0.2369268850561891, 0.4786286704993665, 0.5688888888888889, 0.4786286704993665,
                        0.2369268850561891};
  complex integral = 0.0;
  const int panels = 200;
  for (int p = 0; p < panels; ++p) {
    const double a = s * p / panels, b = s * (p + 1) / panels;
    for (int q = 0; q < 5; ++q) {
      const double u = 0.5 * (a + b) + 0.5 * (b - a) * x[q];
      integral += 0.5 * (b - a) * wq[q] * std::exp((s - u) * D) * N(u);
    }
  }
  const complex exact = std::exp(s * D) * y0 + integral;
  EXPECT_LE(std::abs(y - exact), 1e-13);
}

TEST(ExponentialAdams, ElementsWithEqualSystemTermsShareAClass) {
  const complex i(0.0, 1.0);
  // A 2 x 2 block: (0,0) and (1,1) alike, (0,1) and (1,0) each their own.
  const std::vector<complex> block = {0.0, -2.0 * i, 2.0 * i, 0.0};
  const auto classes = heom::impl::element_classes(block, 4);
  ASSERT_EQ(classes.rate.size(), 3u);
  EXPECT_EQ(classes.of_element, (std::vector<int>{0, 1, 2, 0}));
  for (int e = 0; e < 4; ++e) EXPECT_EQ(classes.rate[classes.of_element[e]], block[e]);
  // Two members alike: the same classes; different members, or no system term at all: none.
  std::vector<complex> two = block;
  two.insert(two.end(), block.begin(), block.end());
  EXPECT_EQ(heom::impl::element_classes(two, 4).of_element, classes.of_element);
  two[5] = -3.0 * i;
  EXPECT_TRUE(heom::impl::element_classes(two, 4).rate.empty());
  EXPECT_TRUE(heom::impl::element_classes(std::vector<complex>(9, 0.0), 9).rate.empty());
}

TEST(ExponentialAdams, EqualDampingSharesAClass) {
  const std::vector<complex> damping = {0.0, 2.0, complex(1.0, 1.0), 2.0 + 1e-16, 0.0, complex(1.0, 1.0)};
  const auto classes = heom::impl::damping_classes(damping);
  EXPECT_EQ(classes.rate.size(), 3u);
  EXPECT_EQ(classes.of_ado[0], classes.of_ado[4]);
  EXPECT_EQ(classes.of_ado[1], classes.of_ado[3]);
  EXPECT_EQ(classes.of_ado[2], classes.of_ado[5]);
  EXPECT_NE(classes.of_ado[0], classes.of_ado[1]);
  for (std::size_t a = 0; a < damping.size(); ++a)
    EXPECT_LE(std::abs(classes.rate[classes.of_ado[a]] + damping[a]), 1e-15) << "D = -damping, ADO " << a;
  // A device of a split hierarchy: the classes of the whole hierarchy's distinct values, its own
  // ADOs' classes among them, the same as one device gives those ADOs.
  const std::vector<complex> values = {complex(1.0, 1.0), 2.0 + 1e-16, 0.0, 2.0};
  const std::vector<complex> owned(damping.begin() + 3, damping.end());
  const auto share = heom::impl::damping_classes(values, owned);
  EXPECT_EQ(share.rate, classes.rate);
  EXPECT_EQ(share.of_ado, std::vector<int>(classes.of_ado.begin() + 3, classes.of_ado.end()));
  EXPECT_THROW(heom::impl::damping_classes(values, {complex(3.0, 0.0)}), heom::Error);
}

/// Hermitian n x n blocks: each block of v made B + B^dagger (on the host).
template <class View>
void make_blocks_hermitian(const View& v, int n) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  for (std::size_t first = 0; first < h.extent(0); first += static_cast<std::size_t>(n) * n)
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j) {
        const heom::device_complex z = h(first + i * n + j) + Kokkos::conj(h(first + j * n + i));
        h(first + i * n + j) = z;
        h(first + j * n + i) = Kokkos::conj(z);
      }
  Kokkos::deep_copy(v, h);
}

TEST(ExponentialAdams, PackedUpdateIsTheGeneralOneOnHermitianBlocks) {
  // On Hermitian blocks and real weights, the update from packed derivatives writes the general
  // update's y_new to the bit, its error sum to rounding, and its packing of a new derivative
  // handed over by the kernel is that of the whole block; the dense output to rounding.
  using Exec = Kokkos::DefaultHostExecutionSpace;
  using traits = heom::BackendTraits<Exec>;
  using weights = heom::impl::ExponentialAdamsWeights;
  using vector = typename traits::template view<heom::device_complex*>;
  const Exec exec;
  for (const int n : {3, 7, 8}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const int ados = 40, n2 = n * n;
    const std::int64_t size = static_cast<std::int64_t>(ados) * n2;
    const heom::impl::HermitianPacking packing{n};
    Kokkos::Array<typename traits::template view<const heom::device_complex*>, weights::max_order> whole, packed;
    std::vector<vector> packed_storage;
    for (int j = 0; j < weights::max_order; ++j) {
      const vector v = ht::random_vector<Exec>(size, 20u + j);
      make_blocks_hermitian(v, n);
      whole[j] = v;
      packed_storage.emplace_back("packed", size);
      for (int a = 0; a < ados; ++a)
        packing.pack(reinterpret_cast<const double*>(v.data() + a * n2),
                     reinterpret_cast<double*>(packed_storage[j].data() + a * packing.size()));
      packed[j] = packed_storage[j];
    }
    const vector y = ht::random_vector<Exec>(size, 3);
    make_blocks_hermitian(y, n);
    std::vector<int> classes(ados);
    for (int a = 0; a < ados; ++a) classes[a] = a % 3 == 0 ? 1 : 0;
    std::vector<complex> w(2 * weights::stride);
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = complex(0.1 + 0.01 * static_cast<double>(k), 0.0);
    const auto ado_class =
        heom::impl::to_device<typename traits::template view<const int*>>(exec, "class", classes, ados);
    const auto table = heom::impl::to_device<typename traits::template view<const heom::device_complex**>>(
        exec, "w", w, 2, weights::stride);
    const vector general_y("general", size), packed_y("packed_y", size);
    const Kokkos::Array<double, weights::max_order> difference = {0.7, -1.3, 0.9, -0.4, 0.1};
    const heom::impl::ExponentialAdamsUpdate<Exec, 5, true> general{general_y, y,    whole, ado_class, table,
                                                                    1e-6,      1e-4, n2,    1,         difference};
    const double general_sum = general.blocks(0, ados);
    // The derivative (past 0) handed over into an empty slot, whole (ADOs 0, 3, ...) or as its packed
    // upper triangle (1, 4, ...); the others read it from the history.
    using Update = heom::impl::PackedHistoryUpdate<Exec, 5>;
    const auto given = [](int a) {
      return a % 3 == 0 ? Update::Given::block : a % 3 == 1 ? Update::Given::upper : Update::Given::none;
    };
    const vector newest("newest", size);
    Kokkos::deep_copy(newest, Kokkos::subview(packed_storage[0], std::make_pair(std::int64_t(0), size)));
    for (int a = 0; a < ados; ++a)
      if (given(a) != Update::Given::none)
        for (int e = 0; e < 2 * packing.size(); ++e)
          reinterpret_cast<double*>(newest.data() + a * packing.size())[e] = 0.0;
    packed[0] = newest;
    // (At n = 7 it streams the new slot and fetches the older derivatives ahead, as a large hierarchy's
    // update does.)
    const Update update{
        {packed_y, y, packed, ado_class, table, 1e-6, 1e-4, n2, 1, difference}, newest.data(), packing, n == 7};
    double packed_sum = 0.0;
    for (int a = 0; a < ados; ++a) {
      const heom::device_complex* derivative = given(a) == Update::Given::block ? whole[0].data() + a * n2
                                               : given(a) == Update::Given::upper
                                                   ? packed_storage[0].data() + a * packing.size()
                                                   : nullptr;
      packed_sum += update.ado(a, reinterpret_cast<const double*>(derivative), given(a));
    }
    heom::impl::store_fence();
    EXPECT_EQ(ht::max_diff(ht::host_copy(packed_y), ht::host_copy(general_y)), 0.0);
    EXPECT_EQ(ht::max_diff(ht::host_copy(newest), ht::host_copy(packed_storage[0])), 0.0);
    EXPECT_GT(general_sum, 1.0);
    EXPECT_NEAR(packed_sum, general_sum, 1e-13 * general_sum);
    // Dense output.
    const vector general_out("general_out", size), packed_out("packed_out", size);
    heom::impl::ExponentialAdamsInterpolate<Exec, 5> interpolate{general_out, y, whole, ado_class, table, n2};
    for (std::int64_t i = 0; i < size; ++i) interpolate(i);
    interpolate.out = packed_out;
    interpolate.past = packed;
    const heom::impl::PackedHistoryInterpolate<Exec, 5> packed_interpolate{interpolate, packing};
    for (int a = 0; a < ados; ++a) packed_interpolate(a);
    const std::vector<complex> general_dense = ht::host_copy(general_out);
    double largest = 0.0;
    for (const complex& z : general_dense) largest = std::max(largest, std::abs(z));
    // (Complex products in the general form: rounding, not bits.)
    EXPECT_LE(ht::max_diff(ht::host_copy(packed_out), general_dense), 1e-15 * largest);
    EXPECT_GT(ht::max_diff(ht::host_copy(packed_out), std::vector<complex>(size)), 0.1);
  }
}

/// Whether every ADO block of `ados` (flattened, n x n each) is Hermitian to the bit.
bool blocks_hermitian(const std::vector<complex>& ados, int n) {
  for (std::size_t first = 0; first < ados.size(); first += static_cast<std::size_t>(n) * n)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (ados[first + i * n + j] != std::conj(ados[first + j * n + i])) return false;
  return true;
}

// stream_copy (the packed update's stores) writes its range exactly, whatever the target's alignment
// to a cache line and however short the range: its edges with ordinary stores, its whole lines streamed.
TEST(ExponentialAdams, StreamCopyWritesExactlyItsRange) {
  constexpr int guard = 16, longest = 40;
  alignas(64) double target[guard + 8 + longest + guard];
  std::vector<double> from(longest);
  for (int x = 0; x < longest; ++x) from[x] = 1.0 + x;
  for (int offset = 0; offset < 8; ++offset)
    for (int count = 0; count <= longest; ++count) {
      std::fill(std::begin(target), std::end(target), -1.0);
      heom::impl::stream_copy(target + guard + offset, from.data(), count);
      heom::impl::store_fence();
      for (int x = 0; x < static_cast<int>(std::size(target)); ++x) {
        const int k = x - guard - offset;
        ASSERT_EQ(target[x], k >= 0 && k < count ? from[k] : -1.0) << "offset " << offset << ", count " << count;
      }
    }
}

TEST(ExponentialAdams, PackedHistoryFollowsTheWholeOne) {
  // With the Hermitian kernel (and real rates) the derivatives are kept packed, their upper triangles
  // alone; with the general host-block kernel whole. (The two kernels round differently, so their
  // step sequences part: the update itself is compared to the bit above.) A saved state holds the
  // derivatives whole, and a solver that loads it continues bit for bit.
  using Exec = Kokkos::DefaultHostExecutionSpace;
  using heom::GeneratorKernel;
  for (const ht::Case& c : {ht::cases()[1], ht::cases()[6]}) {
    SCOPED_TRACE(c.name);
    const int n = c.model.dimension();
    heom::SolverOptions options = ht::options(heom::Method::exp_adams, GeneratorKernel::hermitian);
    heom::Solver<Exec> packed(Exec(), c.model, c.depth, options);
    heom::Solver<Exec> continued(Exec(), c.model, c.depth, options);
    options.generator.kernel = GeneratorKernel::host_block;
    heom::Solver<Exec> whole(Exec(), c.model, c.depth, options);
    packed.set_initial_state(c.rho0);
    whole.set_initial_state(c.rho0);
    packed.run_until(0.7);
    const heom::SolverState saved = packed.save_state();
    for (const char* name : {"past_0", "past_4"}) {
      SCOPED_TRACE(name);
      const std::vector<complex>& derivative = saved.integrator.vectors.at(name);
      EXPECT_TRUE(blocks_hermitian(derivative, n));
      EXPECT_GT(std::abs(derivative.back()), 0.0);
    }
    continued.load_state(saved);
    for (heom::Solver<Exec>* s : {&packed, &whole, &continued}) s->run_until(2.0);
    const std::vector<complex> p = ht::host_copy(packed.ados()), w = ht::host_copy(whole.ados()),
                               k = ht::host_copy(continued.ados());
    double largest = 0.0;
    for (const complex& z : w) largest = std::max(largest, std::abs(z));
    EXPECT_GT(largest, 0.1);
    EXPECT_LE(max_diff(p, w), 1e-8 * largest);  // (rtol 1e-7; observed 1e-10)
    EXPECT_EQ(max_diff(k, p), 0.0);
    EXPECT_NEAR(packed.statistics().steps, whole.statistics().steps, 0.1 * whole.statistics().steps);
    EXPECT_EQ(continued.statistics().steps, packed.statistics().steps);
    EXPECT_GT(whole.statistics().steps, 20);
    EXPECT_TRUE(blocks_hermitian(p, n));
    // Dense output interpolates the packed history as the whole one.
    const std::vector<double> times{2.13, 2.31};
    std::vector<heom::Matrix> rho_packed, rho_whole;
    packed.run(times, [&](const heom::Snapshot<Exec>& s) { rho_packed.push_back(s.rho()); });
    whole.run(times, [&](const heom::Snapshot<Exec>& s) { rho_whole.push_back(s.rho()); });
    ASSERT_EQ(rho_packed.size(), times.size());
    ASSERT_EQ(rho_whole.size(), times.size());
    for (std::size_t i = 0; i < times.size(); ++i) {
      EXPECT_LE(heom::max_abs_diff(rho_packed[i], rho_whole[i]), 1e-8);
      EXPECT_GT(heom::max_abs_diff(rho_packed[i], c.rho0), 1e-3);
    }
  }
}

/// QuTiP's single-impurity tutorial, smaller: a level at e = 1 between two Pade leads at bias 2 (two
/// terms each), weakly coupled. The leads' complex rates make exp-adams take the system's diagonal
/// (here all of H) exactly.
heom::Model level_between_leads() {
  const heom::Matrix d{{0.0, 1.0}, {0.0, 0.0}}, h{{0.0, 0.0}, {0.0, 1.0}};
  std::vector<heom::Bath> leads;
  for (const double mu : {1.0, -1.0})
    leads.push_back(heom::Bath::lorentzian(d, {0.01, 1.0, mu, 0.025851991, 2, heom::LorentzianExpansion::Pade}));
  return heom::Model(h, leads);
}

/// `method`'s options at rtol and atol, with the automatic kernel.
heom::SolverOptions at_tolerances(heom::Method method, double rtol, double atol) {
  heom::SolverOptions o = ht::options(method, heom::GeneratorKernel::automatic);
  o.integrator.rtol = rtol;
  o.integrator.atol = atol;
  return o;
}

TEST(ExponentialAdams, TheSystemDiagonalIsExactWhereRatesAreComplex) {
  // Explicit in H, the step is held by stability to where e h lies in order 5's narrow region along
  // the imaginary axis: 524 steps to t = 100 at rtol 1e-5 (before the diagonal was exact; 232 since,
  // on this machine kind). The result against dopri5 at a tight tolerance.
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const heom::Matrix rho0{{1.0, 0.0}, {0.0, 0.0}};
  const heom::SolverOptions tight = at_tolerances(heom::Method::dopri5, 1e-11, 1e-13);
  const heom::SolverOptions loose = at_tolerances(heom::Method::exp_adams, 1e-5, 1e-8);
  heom::Solver<Exec> reference(Exec(), level_between_leads(), 2, tight);
  heom::Solver<Exec> exp_adams(Exec(), level_between_leads(), 2, loose);
  for (heom::Solver<Exec>* s : {&reference, &exp_adams}) {
    s->set_initial_state(rho0);
    s->run_until(100.0);
  }
  const heom::Matrix expected = reference.rho(), got = exp_adams.rho();
  EXPECT_GT(std::abs(expected(1, 1)), 0.3);  // (the level filled)
  EXPECT_LE(heom::max_abs_diff(got, expected), 2e-5);
  EXPECT_LT(exp_adams.statistics().steps, 350);
  // rho's error estimate here is that of one population: it passes near zero as the population
  // oscillates, and growing the step on one such estimate was rejected at once (45 rejections of
  // 232 steps, before growth followed the largest of the last three estimates; 8 of 251 since, and
  // 13 of 238 once the order was chosen).
  EXPECT_LT(exp_adams.statistics().rejected, 16);
  const std::int64_t exp_adams_steps_to_100 = exp_adams.statistics().steps;

  // Its history holds N(y) without the diagonal. A state saved by a heom from before (no record of
  // it: its history holds N(y) whole) continues from y alone, as from a restart.
  heom::SolverState saved = exp_adams.save_state();
  EXPECT_EQ(saved.integrator.scalars.at("exact_system_diagonal"), 1.0);
  heom::Solver<Exec> continued(Exec(), level_between_leads(), 2, loose),
      restarted(Exec(), level_between_leads(), 2, loose);
  continued.load_state(saved);
  // A state saved before the step control kept its recent errors continues the history.
  // So does one saved before the order was chosen (it goes on from the highest order), and one
  // saved before the steps between the history's times were kept (they come from the times).
  heom::SolverState without_errors = saved;
  EXPECT_GT(without_errors.integrator.scalars.at("recent_error_0"), 0.0);
  for (const char* name : {"recent_error_0", "recent_error_1", "order", "steps_at_order", "steps_between_choices",
                           "past_step_0", "past_step_1", "past_step_2", "past_step_3"})
    EXPECT_EQ(without_errors.integrator.scalars.erase(name), 1u) << name;
  heom::SolverState bad_step = saved;
  bad_step.integrator.scalars.at("past_step_1") = -0.5;
  heom::Solver<Exec> refusing(Exec(), level_between_leads(), 2, loose);
  EXPECT_THROW(
      {
        try {
          refusing.load_state(bad_step);
        } catch (const heom::Error& e) {
          EXPECT_NE(std::string(e.what()).find("past_step_1"), std::string::npos) << e.what();
          throw;
        }
      },
      heom::Error);
  heom::Solver<Exec> older(Exec(), level_between_leads(), 2, loose);
  older.load_state(without_errors);
  saved.integrator.scalars.erase("exact_system_diagonal");
  restarted.load_state(saved);
  for (heom::Solver<Exec>* s : {&exp_adams, &continued, &restarted, &older}) s->run_until(150.0);
  reference.run_until(150.0);
  EXPECT_EQ(heom::max_abs_diff(continued.rho(), exp_adams.rho()), 0.0);
  EXPECT_LE(heom::max_abs_diff(older.rho(), reference.rho()), 2e-5);
  EXPECT_LE(heom::max_abs_diff(restarted.rho(), reference.rho()), 2e-5);
  EXPECT_NE(restarted.statistics().steps, continued.statistics().steps);  // (it started afresh)

  // Capped at order 4 (IntegratorOptions::max_order) the history holds four derivatives and the
  // run is as accurate; it takes other steps (whether fewer depends on what holds the step).
  heom::SolverOptions fourth = loose;
  fourth.integrator.max_order = 4;
  heom::Solver<Exec> order_four(Exec(), level_between_leads(), 2, fourth);
  order_four.set_initial_state(rho0);
  order_four.run_until(100.0);
  EXPECT_EQ(order_four.save_state().integrator.scalars.at("history"), 4.0);
  EXPECT_LE(heom::max_abs_diff(order_four.rho(), expected), 2e-5);
  EXPECT_NE(order_four.statistics().steps, exp_adams_steps_to_100);
}

TEST(ExponentialAdams, ChoosesALowerOrderWhereStabilityHoldsTheStep) {
  // At loose tolerances the level between leads takes about as many steps whatever rtol: order 5's
  // stability region holds them. The order chosen from the neighbouring orders' estimates falls
  // below 5 there, and the run is as accurate in fewer steps than order 5 alone takes (251 at rtol
  // 1e-5, measured with the choice switched off; 238 with it, 76 of them at orders 3 and 4). At a
  // tight tolerance accuracy holds the step, and nearly every step is of order 5. The choice is part
  // of the saved state: a run continued from a state saved at a lower order has the same bits.
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const heom::Matrix rho0{{1.0, 0.0}, {0.0, 0.0}};
  heom::Solver<Exec> reference(Exec(), level_between_leads(), 2, at_tolerances(heom::Method::dopri5, 1e-11, 1e-13));
  reference.set_initial_state(rho0);
  reference.run_until(100.0);
  for (const double rtol : {1e-5, 1e-9}) {
    const heom::SolverOptions o = at_tolerances(heom::Method::exp_adams, rtol, rtol / 1000);
    heom::Solver<Exec> solver(Exec(), level_between_leads(), 2, o);
    solver.set_initial_state(rho0);
    std::map<int, int> steps_at;  // order chosen -> accepted steps
    std::optional<heom::SolverState> lowered;
    solver.run(
        {100.0}, [](const heom::Snapshot<Exec>&) {},
        [&](double) {
          heom::SolverState state = solver.save_state();
          const int order = static_cast<int>(state.integrator.scalars.at("order"));
          ++steps_at[order];
          if (order < 5 && !lowered) lowered = std::move(state);
        });
    const std::int64_t steps = solver.statistics().steps;
    EXPECT_LE(heom::max_abs_diff(solver.rho(), reference.rho()), 2.0 * rtol) << "rtol " << rtol;
    if (rtol == 1e-5) {
      EXPECT_GT(steps_at[3] + steps_at[4], 20);
      EXPECT_LT(steps, 251);
      ASSERT_TRUE(lowered);
      heom::Solver<Exec> continued(Exec(), level_between_leads(), 2, o);
      continued.load_state(*lowered);
      continued.run_until(100.0);
      EXPECT_EQ(heom::max_abs_diff(continued.rho(), solver.rho()), 0.0);
    } else {
      EXPECT_GT(steps_at[5], 0.9 * static_cast<double>(steps));
    }
  }
}

TEST(ExponentialAdams, DenseOutputOfListedAdosIsTheWholeOnes) {
  // The lead currents read rho and the first tier: the output interpolates those blocks alone, each
  // as the whole interpolation gives it, and leaves the rest of the vector as it was. For the leads
  // (weights per element) and a Drude-Lorentz bath on three levels (its history kept packed).
  using Exec = Kokkos::DefaultHostExecutionSpace;
  using vector_type = heom::Generator<Exec>::vector_type;
  const Exec exec;
  const heom::Matrix q3{{1.0, 0.0, 0.0}, {0.0, -1.0, 0.0}, {0.0, 0.0, 0.5}};
  const heom::Matrix h3{{0.0, 0.3, 0.0}, {0.3, 0.5, 0.2}, {0.0, 0.2, 1.0}};
  const heom::Model drude(h3, {heom::Bath::drude_lorentz(q3, {0.1, 0.5, 0.5, 2})});
  for (const heom::Model& model : {level_between_leads(), drude}) {
    SCOPED_TRACE(model.dimension() == 2 ? "leads" : "Drude-Lorentz");
    const heom::Hierarchy hierarchy(model.max_excitations(), 2);
    const heom::Generator<Exec> generator(exec, model, hierarchy);
    // (rho0 below is Hermitian: the three-level model's steps may run the Hermitian form.)
    const heom::InputForm form = model.dimension() == 3 ? heom::InputForm::hermitian : heom::InputForm::general;
    heom::IntegratorOptions options;
    options.method = heom::Method::exp_adams;
    options.rtol = 1e-6;
    options.atol = 1e-9;
    heom::ExponentialAdams<Exec> integrator(exec, generator, options);
    vector_type y = integrator.state();
    Kokkos::deep_copy(y, heom::device_complex(0.0));
    Kokkos::deep_copy(Kokkos::subview(y, 0), heom::device_complex(1.0));  // rho = |0><0|
    integrator.restart(0.0, form);
    for (int s = 0; s < 8; ++s) integrator.step(exec, 50.0);
    const double t = integrator.time() - 1e-3;  // inside the last step
    const std::int64_t size = generator.owned_size(), block = generator.block_size();
    const vector_type whole = heom::impl::allocate<vector_type>(exec, "whole", size);
    const vector_type listed = heom::impl::allocate<vector_type>(exec, "listed", size);
    Kokkos::deep_copy(listed, heom::device_complex(7.0));
    const std::vector<int> ados = {0, 3, 5};
    const auto list = heom::impl::to_device<heom::Integrator<Exec>::ado_list>(exec, "ados", ados, ados.size());
    EXPECT_EQ(generator.kernel(form) == heom::GeneratorKernel::hermitian, model.dimension() == 3);
    // (The listed first: its weights are those of the listed ADOs' classes alone, which the whole
    // interpolation after it must not take for the whole table.)
    ASSERT_TRUE(integrator.interpolate_ados(exec, t, listed, list));
    ASSERT_TRUE(integrator.interpolate(exec, t, whole));
    exec.fence();
    auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), whole);
    auto l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), listed);
    auto state = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), integrator.state());
    EXPECT_NE(w(0), state(0));  // (an interpolated value, not the state's)
    EXPECT_NE(w(3 * block), heom::device_complex(0.0));
    for (std::int64_t i = 0; i < size; ++i) {
      const bool in_list = std::find(ados.begin(), ados.end(), int(i / block)) != ados.end();
      EXPECT_EQ(l(i), in_list ? w(i) : heom::device_complex(7.0)) << "element " << i;
    }
  }
}

}  // namespace

namespace {

TEST(ExponentialAdams, OneResetKeepsTheRecentErrorEstimates) {
  // A restart (a state set anew, an operator applied, a drive's breakpoint) and a saved state whose
  // history cannot continue both go through the one reset: the history, the step size and the order
  // go; the recent error estimates, the only measure of the error level the next steps have, stay.
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const heom::SolverOptions loose = at_tolerances(heom::Method::exp_adams, 1e-6, 1e-9);
  heom::Solver<Exec> solver(Exec(), level_between_leads(), 2, loose);
  solver.set_initial_state(heom::Matrix{{1.0, 0.0}, {0.0, 0.0}});
  solver.run_until(20.0);
  const auto scalars = [&] { return solver.save_state().integrator.scalars; };
  const auto before = scalars();
  ASSERT_GT(before.at("recent_error_0"), 0.0);
  ASSERT_GT(before.at("history"), 1.0);
  solver.apply_operator(heom::Matrix::identity(2));
  const auto restarted = scalars();
  EXPECT_EQ(restarted.at("history"), 0.0);
  EXPECT_EQ(restarted.at("h"), 0.0);
  EXPECT_EQ(restarted.at("order"), 5.0);
  EXPECT_EQ(restarted.at("recent_error_0"), before.at("recent_error_0"));
  EXPECT_EQ(restarted.at("recent_error_1"), before.at("recent_error_1"));
  // A saved state of the other history format (no record of the exact diagonal) resets the same way.
  solver.run_until(25.0);
  const auto stepped = scalars();
  heom::SolverState older = solver.save_state();
  older.integrator.scalars.erase("exact_system_diagonal");
  solver.load_state(older);
  const auto reset = scalars();
  EXPECT_EQ(reset.at("history"), 0.0);
  EXPECT_EQ(reset.at("h"), 0.0);
  EXPECT_EQ(reset.at("recent_error_0"), stepped.at("recent_error_0"));
}

}  // namespace
