// Importance truncation: the kept labels (HierarchicalEOM.jl's importance value), their neighbour
// tables, and every generator kernel on a truncated hierarchy against the whole hierarchy's assembled
// operator restricted to the kept ADOs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "heom/generator/assembled_operator.hpp"
#include "test_support.hpp"

namespace {

using heom::Bath;
using heom::complex;
using heom::ExponentWeight;
using heom::Hierarchy;
using heom::ImportanceTruncation;
using heom::Matrix;
using heom::Model;
namespace ht = heom::testing;

/// The importance value as HierarchicalEOM.jl's _Importance computes it, written out independently:
/// every excitation in exponent order, the rates summed as they come, bosonic and fermionic apart.
double importance_by_hand(const std::vector<ExponentWeight>& w, const std::vector<int>& label) {
  double product[2] = {1.0, 1.0}, sum[2] = {0.0, 0.0};
  for (std::size_t k = 0; k < w.size(); ++k)
    for (int e = 0; e < label[k]; ++e) {
      const int f = w[k].fermionic;
      sum[f] += w[k].rate;
      product[f] *= w[k].magnitude / (w[k].rate * sum[f]);
    }
  return product[0] * product[1];
}

TEST(ImportanceTruncation, ImportanceValueByHand) {
  // Two bosonic exponents (|c| 2, rate 1; |c| 3, rate 0.5): label (1, 1) is 2/(1*1) * 3/(0.5*1.5) = 8,
  // (2, 0) is 2/(1*1) * 2/(1*2) = 2, (0, 2) is 3/(0.5*0.5) * 3/(0.5*1) = 72.
  const ImportanceTruncation t{1.0, {{2.0, 1.0, false}, {3.0, 0.5, false}}};
  const int a[] = {1, 1}, b[] = {2, 0}, c[] = {0, 2};
  EXPECT_DOUBLE_EQ(t.importance(a), 8.0);
  EXPECT_DOUBLE_EQ(t.importance(b), 2.0);
  EXPECT_DOUBLE_EQ(t.importance(c), 72.0);
  // A fermionic excitation starts its own running sum: (1 bosonic) x (1 fermionic) = 2/1 * 5/(4*4).
  const ImportanceTruncation mixed{1.0, {{2.0, 1.0, false}, {5.0, 4.0, true}}};
  const int d[] = {1, 1};
  EXPECT_DOUBLE_EQ(mixed.importance(d), 2.0 * 5.0 / 16.0);
  // No estimate for a rate whose real part is not positive: kept.
  const ImportanceTruncation undamped{1e300, {{1.0, 0.0, false}}};
  const int e[] = {3};
  EXPECT_TRUE(std::isinf(undamped.importance(e)));
  EXPECT_TRUE(undamped.keeps(e));
}

struct TruncationCase {
  std::string name;
  std::vector<int> caps;
  std::vector<ExponentWeight> weights;
  int depth;
};

std::vector<TruncationCase> truncation_cases() {
  std::vector<TruncationCase> out;
  out.push_back({"bosonic, K = 5",
                 {0, 0, 0, 0, 0},
                 {{0.8, 0.5, false}, {0.05, 2.0, false}, {0.3, 0.7, false}, {1.5, 0.2, false}, {0.01, 6.0, false}},
                 5});
  out.push_back({"mixed, 3 bosonic + 4 fermionic",
                 {0, 1, 0, 1, 1, 0, 1},
                 {{0.4, 0.3, false},
                  {0.2, 1.0, true},
                  {0.9, 0.8, false},
                  {0.05, 3.0, true},
                  {0.6, 0.4, true},
                  {0.1, 2.0, false},
                  {1.2, 0.9, true}},
                 4});
  // Ratios |c| / Re v above 1 (a completion's factors may exceed 1 for a while) and an exponent
  // without an estimate (rate 0: every label it excites is kept).
  out.push_back({"bosonic, large ratios and an undamped exponent",
                 {0, 0, 0, 0},
                 {{3.0, 0.2, false}, {0.5, 0.0, false}, {2.0, 1.5, false}, {0.02, 4.0, false}},
                 6});
  return out;
}

TEST(ImportanceTruncation, KeepsTheLabelsAboveTheThresholdInOrderWithTheirNeighbours) {
  int missing_down = 0;  // kept ADOs whose n - e_k was left out (the importance value is not monotonic)
  for (const TruncationCase& c : truncation_cases()) {
    const Hierarchy whole(c.caps, c.depth);
    // Thresholds between the importance values of the tiers that may be dropped.
    std::vector<double> values;
    for (int a = 0; a < whole.size(); ++a) {
      const std::vector<int> label = whole.label(a);
      int excitations[2] = {0, 0};
      for (std::size_t k = 0; k < label.size(); ++k) excitations[c.weights[k].fermionic] += label[k];
      const double value = importance_by_hand(c.weights, label);
      if ((excitations[0] >= 2 || excitations[1] >= 2) && std::isfinite(value)) values.push_back(value);
    }
    std::sort(values.begin(), values.end());
    ASSERT_GT(values.size(), 20u) << c.name;
    for (const double quantile : {0.1, 0.5, 0.9}) {
      const double threshold = values[static_cast<std::size_t>(quantile * values.size())];
      const ImportanceTruncation truncation{threshold, c.weights};
      const Hierarchy kept(c.caps, c.depth, truncation);
      const std::string what = c.name + ", threshold " + std::to_string(threshold);
      ASSERT_TRUE(kept.truncated()) << what;
      EXPECT_EQ(kept.untruncated_size(), static_cast<std::uint64_t>(whole.size())) << what;
      EXPECT_EQ(Hierarchy::count(c.caps, c.depth, truncation), static_cast<std::uint64_t>(kept.size())) << what;

      // The kept labels: those of the whole hierarchy (in its order) below tier 2 or at least as
      // important as the threshold.
      std::vector<std::vector<int>> expected;
      for (int a = 0; a < whole.size(); ++a) {
        const std::vector<int> label = whole.label(a);
        int excitations[2] = {0, 0};
        for (std::size_t k = 0; k < label.size(); ++k) excitations[c.weights[k].fermionic] += label[k];
        if ((excitations[0] < 2 && excitations[1] < 2) || importance_by_hand(c.weights, label) >= threshold)
          expected.push_back(label);
        else
          EXPECT_EQ(kept.index_of(label), -1) << what;
      }
      ASSERT_EQ(static_cast<std::size_t>(kept.size()), expected.size()) << what;
      EXPECT_LT(expected.size(), static_cast<std::size_t>(whole.size())) << what;
      int missing_up = 0;
      for (int a = 0; a < kept.size(); ++a) {
        ASSERT_EQ(kept.label(a), expected[a]) << what << ", ADO " << a;
        EXPECT_EQ(kept.index_of(expected[a]), a) << what;
        for (int k = 0; k < kept.num_exponents(); ++k) {
          std::vector<int> up = expected[a], down = expected[a];
          ++up[k];
          --down[k];
          const bool up_allowed = whole.index_of(up) >= 0, down_allowed = expected[a][k] > 0;
          EXPECT_EQ(kept.next(a, k), up_allowed ? kept.index_of(up) : -1) << what << ", ADO " << a << ", k " << k;
          EXPECT_EQ(kept.prev(a, k), down_allowed ? kept.index_of(down) : -1) << what << ", ADO " << a << ", k " << k;
          missing_up += up_allowed && kept.next(a, k) < 0;
          missing_down += down_allowed && kept.prev(a, k) < 0;
        }
      }
      EXPECT_GT(missing_up, 0) << what;  // (ADOs below the top tier that lack some n + e_k)
    }
    // Threshold 0 and a threshold below every value keep the whole hierarchy.
    for (const double threshold : {0.0, values.front() * 0.5}) {
      const Hierarchy all(c.caps, c.depth, {threshold, c.weights});
      EXPECT_FALSE(all.truncated()) << c.name;
      EXPECT_EQ(all.size(), whole.size()) << c.name;
      EXPECT_EQ(all.next_table(), whole.next_table()) << c.name;
      EXPECT_EQ(all.prev_table(), whole.prev_table()) << c.name;
    }
  }
  EXPECT_GT(missing_down, 0);
}

TEST(ImportanceTruncation, RefusesBadThresholdsAndWeights) {
  EXPECT_THROW(Hierarchy({0, 0}, 3, {-1.0, {{1, 1, false}, {1, 1, false}}}), heom::Error);
  EXPECT_THROW(Hierarchy({0, 0}, 3, {std::numeric_limits<double>::quiet_NaN(), {{1, 1, false}, {1, 1, false}}}),
               heom::Error);
  EXPECT_THROW(Hierarchy({0, 0}, 3, {1e-3, {{1, 1, false}}}), heom::Error);  // one weight for two exponents
  // A triangle too large to visit (C(70, 30) labels; and one whose count saturates) is refused at once.
  const ImportanceTruncation wide{1e-6, std::vector<ExponentWeight>(40, {1.0, 1.0, false})};
  EXPECT_THROW(Hierarchy::count(std::vector<int>(40, 0), 30, wide), heom::Error);
  EXPECT_THROW(Hierarchy(std::vector<int>(40, 0), 30, wide), heom::Error);
  EXPECT_THROW(Hierarchy::count(std::vector<int>(40, 0), 1000, wide), heom::Error);
}

TEST(ImportanceTruncation, CountsInTheTimeItsKeptAdosTake) {
  // A spin-boson bath's six exponents at depth 1000: about 1.4e15 labels, of which a threshold keeps a
  // few dozen; the walk skips the rest a prefix at a time, counting and building in few steps.
  const Model model(0.25 * heom::operators::sigma_z() + 0.5 * heom::operators::sigma_x(),
                    {Bath::drude_lorentz(heom::operators::sigma_z(), {0.1, 0.5, 0.5, 5})});
  const ImportanceTruncation truncation{1e-8, model.exponent_weights()};
  ASSERT_EQ(model.num_exponents(), 6);
  EXPECT_GT(Hierarchy::count(model.max_excitations(), 1000), std::uint64_t(1) << 50);
  const std::optional<std::uint64_t> kept = Hierarchy::count_within(model.max_excitations(), 1000, truncation, 100000);
  ASSERT_TRUE(kept.has_value());
  EXPECT_GT(*kept, 7u);  // (rho and the first tier, and more)
  EXPECT_LT(*kept, 1000u);
  const Hierarchy built(model.max_excitations(), 1000, truncation);
  EXPECT_EQ(static_cast<std::uint64_t>(built.size()), *kept);
  // Where the steps run out, the count says so rather than answering late.
  EXPECT_FALSE(Hierarchy::count_within(model.max_excitations(), 1000, truncation, 10).has_value());
  // The same labels as a visit of every one, at a depth where that is possible.
  const Hierarchy whole(model.num_exponents(), 9);
  std::uint64_t by_hand = 0;
  for (int a = 0; a < whole.size(); ++a) by_hand += truncation.keeps(whole.label(a).data()) ? 1 : 0;
  EXPECT_EQ(Hierarchy::count(model.max_excitations(), 9, truncation), by_hand);
}

TEST(ImportanceTruncation, TheMemoryPlanCountsTheKeptAdos) {
  const TruncationCase c = truncation_cases().front();
  const ImportanceTruncation truncation{0.5, c.weights};
  const Hierarchy kept(c.caps, c.depth, truncation);
  const heom::MemoryPlan whole = heom::MemoryPlan::make(3, c.caps, c.depth, 7);
  const heom::MemoryPlan plan = heom::MemoryPlan::make(3, c.caps, c.depth, 7, 0, truncation);
  EXPECT_EQ(plan.num_ados, static_cast<std::uint64_t>(kept.size()));
  EXPECT_LT(plan.num_ados, whole.num_ados);
  EXPECT_EQ(plan.bytes_per_vector, plan.num_ados * 9 * 16);
}

// ---------------------------------------------------------------------------------------------

/// Models that cover every kernel: two levels (the AVX-512 kernel), a Hermitian FMO-like chain of
/// site baths (the Hermitian forms), a dense bath with complex rates, and a level between two leads
/// beside a phonon bath (the fermionic terms, with 0/1 entries).
struct KernelCase {
  std::string name;
  Model model;
  int depth;
  bool preserves_hermiticity;
};

std::vector<KernelCase> kernel_cases() {
  using heom::operators::projector;
  std::vector<KernelCase> out;
  // (A strong slow bath: its first exponent's |c| / Re v^2 is large, so that kept ADOs may lack n - e_k.)
  out.push_back({"spin-boson, strong slow bath",
                 Model(0.5 * heom::operators::sigma_z() + 0.3 * heom::operators::sigma_x(),
                       {Bath::drude_lorentz(heom::operators::sigma_z(), {0.4, 0.1, 1.0, 3})}),
                 6, true});
  {
    Model chain(ht::random_hermitian(4, 0.5, 7u));
    for (int i = 0; i < 4; ++i) chain.add_bath(Bath::drude_lorentz(projector(4, i, i), {0.05 + 0.02 * i, 0.6, 0.5, 1}));
    out.push_back({"four sites, site baths", chain, 4, true});
  }
  out.push_back({"three levels, dense baths with complex rates",
                 Model(ht::random_hermitian(3, 0.5, 3u),
                       {Bath::underdamped(ht::random_hermitian(3, 0.3, 5u), {0.15, 0.3, 1.2, 0.6, 1}),
                        Bath::drude_lorentz(ht::random_hermitian(3, 0.3, 6u), {0.05, 0.7, 0.4, 1})}),
                 4, false});
  {
    const Matrix d = projector(2, 0, 1), number = d.adjoint() * d;
    auto lead = [](double mu) { return heom::Lorentzian{0.2, 1.0, mu, 0.5, 2, heom::LorentzianExpansion::Pade}; };
    out.push_back({"level between two leads and a phonon bath",
                   Model(0.5 * number + 0.1 * heom::operators::sigma_x(),
                         {Bath::lorentzian(d, lead(0.5)), Bath::drude_lorentz(number, {0.1, 0.5, 0.5, 1}),
                          Bath::lorentzian(d, lead(-0.5))}),
                   4, false});
  }
  return out;
}

/// y = A x for host CSR arrays.
std::vector<complex> multiply(const heom::impl::HostCsr& a, const std::vector<complex>& x) {
  std::vector<complex> y(static_cast<std::size_t>(a.num_rows), 0.0);
  for (std::int64_t r = 0; r < a.num_rows; ++r)
    for (std::int64_t e = a.row_map[r]; e < a.row_map[r + 1]; ++e) y[r] += a.values[e] * x[a.columns[e]];
  return y;
}

template <class ExecSpace>
class TruncatedGeneratorTest : public ::testing::Test {};
TYPED_TEST_SUITE(TruncatedGeneratorTest, ht::Backends);

TYPED_TEST(TruncatedGeneratorTest, EveryKernelIsTheWholeOperatorRestrictedToTheKeptAdos) {
  // On the kept ADOs, L_kept x = P L P^T x: the whole hierarchy's assembled operator with the
  // left-out ADOs zero, its rows of the kept ADOs. Every kernel this backend runs, both parities for
  // the leads.
  using E = TypeParam;
  using K = heom::GeneratorKernel;
  const E exec;
  int runs = 0, missing_down = 0;
  for (const KernelCase& c : kernel_cases()) {
    const Hierarchy whole(c.model.max_excitations(), c.depth);
    // The median importance of the ADOs that may be dropped: about half of them go.
    const ImportanceTruncation probe{1.0, c.model.exponent_weights()};
    std::vector<double> values;
    for (int a = 0; a < whole.size(); ++a)
      if (whole.level(a) >= 2)
        values.push_back(probe.importance(whole.labels_table().data() + a * whole.num_exponents()));
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    const Hierarchy kept(c.model.max_excitations(), c.depth, {values[values.size() / 2], c.model.exponent_weights()});
    ASSERT_TRUE(kept.truncated()) << c.name;
    for (int a = 0; a < kept.size(); ++a)
      for (int k = 0; k < kept.num_exponents(); ++k) missing_down += kept.label(a, k) > 0 && kept.prev(a, k) < 0;
    const int n = c.model.dimension(), n2 = n * n;
    const bool leads = c.model.has_fermionic_bath();
    for (const heom::Parity parity : {heom::Parity::even, heom::Parity::odd}) {
      if (parity == heom::Parity::odd && !leads) continue;
      const std::vector<complex> reference_x = [&] {
        std::vector<complex> x(static_cast<std::size_t>(kept.size()) * n2);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = complex(std::sin(0.7 * i + 0.3), std::cos(1.3 * i));
        if (c.preserves_hermiticity)  // (each block Hermitian, for the Hermitian forms)
          for (int a = 0; a < kept.size(); ++a)
            for (int i = 0; i < n; ++i)
              for (int j = 0; j <= i; ++j) {
                complex& lower = x[static_cast<std::size_t>(a) * n2 + i * n + j];
                complex& upper = x[static_cast<std::size_t>(a) * n2 + j * n + i];
                if (i == j)
                  lower = lower.real();
                else
                  upper = std::conj(lower);
              }
        return x;
      }();
      // P L P^T x.
      std::vector<complex> embedded(static_cast<std::size_t>(whole.size()) * n2, 0.0);
      for (int a = 0; a < kept.size(); ++a)
        std::copy_n(reference_x.begin() + static_cast<std::ptrdiff_t>(a) * n2, n2,
                    embedded.begin() + static_cast<std::ptrdiff_t>(whole.index_of(kept.label(a))) * n2);
      const std::vector<complex> whole_y = multiply(heom::impl::assemble_generator(c.model, whole, parity), embedded);
      std::vector<complex> expected(reference_x.size());
      double scale = 0.0;
      for (int a = 0; a < kept.size(); ++a)
        for (int e = 0; e < n2; ++e) {
          expected[static_cast<std::size_t>(a) * n2 + e] =
              whole_y[static_cast<std::size_t>(whole.index_of(kept.label(a))) * n2 + e];
          scale = std::max(scale, std::abs(expected[static_cast<std::size_t>(a) * n2 + e]));
        }
      ASSERT_GT(scale, 0.1) << c.name;

      for (const K kernel : {K::portable, K::host_block, K::hermitian, K::two_level, K::portable_hermitian}) {
        if (!heom::Generator<E>::can_run(kernel, n, c.preserves_hermiticity) || (kernel == K::two_level && leads))
          continue;  // (the two-level kernel computes bosonic baths alone)
        heom::GeneratorOptions options;
        options.kernel = kernel;
        options.parity = parity;
        const heom::Generator<E> generator(exec, c.model, kept, options);
        const heom::InputForm form =
            heom::is_hermitian_form(kernel) ? heom::InputForm::hermitian : heom::InputForm::general;
        ASSERT_EQ(generator.kernel(form), kernel);
        typename heom::Generator<E>::vector_type in("in", reference_x.size()), out("out", reference_x.size());
        auto host_in = Kokkos::create_mirror_view(in);
        for (std::size_t i = 0; i < reference_x.size(); ++i)
          host_in(i) = heom::device_complex(reference_x[i].real(), reference_x[i].imag());
        Kokkos::deep_copy(in, host_in);
        generator.apply(exec, in, out, heom::Generator<E>::Damping::included, form);
        exec.fence();
        const auto host_out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
        double worst = 0.0;
        for (std::size_t i = 0; i < expected.size(); ++i)
          worst = std::max(worst, std::abs(complex(host_out(i).real(), host_out(i).imag()) - expected[i]));
        EXPECT_LE(worst, 1e-13 * scale) << c.name << ", " << heom::to_string(kernel) << ", " << heom::to_string(parity)
                                        << " parity";
        ++runs;
      }
    }
  }
  // The portable kernel on all five (model, parity) pairs at least; kept ADOs that lack n - e_k.
  EXPECT_GE(runs, 5);
  EXPECT_GT(missing_down, 0);
}

}  // namespace
