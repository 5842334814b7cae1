// heom::impl::ExpAdamsWeights: exp-adams' weight tables (a step's, the order estimates', the dense
// output's), the rates they are computed for, and what each table holds now, so that steps of one
// size reuse them.
#ifndef HEOM_INTEGRATOR_DETAIL_EXP_ADAMS_WEIGHTS_HPP
#define HEOM_INTEGRATOR_DETAIL_EXP_ADAMS_WEIGHTS_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/matrix.hpp"
#include "heom/core/to_device.hpp"
#include "heom/generator/generator.hpp"
#include "heom/integrator/detail/exponential_adams_kernels.hpp"
#include "heom/integrator/options.hpp"

namespace heom::impl {

template <class ExecSpace>
class ExpAdamsWeights {
 public:
  using weights = ExponentialAdamsWeights;
  static constexpr int max_order = weights::max_order;
  using weight_table = typename BackendTraits<ExecSpace>::template view<device_complex**>;
  using ado_list = typename BackendTraits<ExecSpace>::template view<const int*>;
  using Nodes = std::array<double, max_order>;

  /// What a weight table was last computed for.
  struct Key {
    double h = 0.0, sigma = 0.0;
    int order = 0;
    Nodes nodes{};
    std::vector<int> classes;  // empty: all
    bool holds(const Key& o) const {
      return h == o.h && sigma == o.sigma && order == o.order && nodes == o.nodes &&
             (classes.empty() || classes == o.classes);
    }
  };
  /// A weight table on the device, its host copy, and what it holds.
  struct Table {
    weight_table device;
    typename weight_table::HostMirror host;
    Key key;
  };

  /// The damping classes of the generator's hierarchy (of the whole of it, so that a split one uses
  /// the very rates one device does: which rate stands for a class of rates equal to rounding depends
  /// on all of them), and where the rates are complex, the system's diagonal taken exactly too.
  ExpAdamsWeights(const ExecSpace& exec, const Generator<ExecSpace>& generator, const IntegratorOptions& options);

  /// Each ADO's damping class, on the device.
  const ado_list& ado_class() const { return m_ado_class; }
  /// Each element's omega (the system's diagonal), where it is taken exactly.
  const typename BackendTraits<ExecSpace>::template view<const device_complex*>& omega() const { return m_omega; }
  /// Whether the system's diagonal is taken exactly (ExcludeSystemDiagonal): then the weights are per
  /// (damping class, element class), laid out per element.
  bool exact_system_diagonal() const { return !m_elements_of_class.empty(); }
  /// The weight tables' element stride: 1, or a block's elements where the diagonal is exact.
  int element_stride() const { return exact_system_diagonal() ? m_block_size : 1; }
  /// Whether every rate is real: real weights.
  bool real_rates() const { return m_real_rates; }

  Table& step_table() { return m_step; }
  /// The order estimates' own table, where it fits (else the step's: the same weights, so the same
  /// results).
  Table& estimate_table() { return m_estimates_apart ? m_estimates : m_step; }
  Table& dense_table() const { return m_dense; }

  /// Computes `table`'s weights for a step of h, or a dense output at sigma of it, of `order` with
  /// history nodes `nodes` (theta_j, as the history gives them), for the damping classes listed in
  /// `classes` (ascending, each once) or, where it is empty, all; nothing where the table holds them.
  void upload(const ExecSpace& exec, Table& table, double h, double sigma, int order, const Nodes& nodes,
              const std::vector<int>& classes = {}) const;
  /// Every table is computed afresh at its next use.
  void forget();
  /// The damping classes (ascending, each once) of the ADOs listed, or where `ados` is null of the
  /// first `leading` ADOs: worked out once per list or count (the solver asks for the same ones at
  /// every output time; a list it holds, whose address is not reused for another).
  const std::vector<int>& classes_of(const ado_list* ados, int leading) const;

 private:
  std::vector<complex> m_rates;  // D of each damping class (+ omega of each element class)
  std::size_t m_damping_classes = 0;
  bool m_real_rates = true;
  int m_block_size = 0;
  std::vector<std::vector<int>> m_elements_of_class;  // the elements of each element class, where exact
  typename BackendTraits<ExecSpace>::template view<const device_complex*> m_omega;
  ado_list m_ado_class;
  Table m_step, m_estimates;
  bool m_estimates_apart = false;
  mutable Table m_dense;
  mutable std::vector<complex> m_scratch;  // host rows of the weights
  // The list (or leading count) classes_of() last saw, and its classes.
  mutable ado_list m_listed_ados;
  mutable int m_listed_leading = -1;
  mutable std::vector<int> m_listed_classes;
};

template <class ExecSpace>
ExpAdamsWeights<ExecSpace>::ExpAdamsWeights(const ExecSpace& exec, const Generator<ExecSpace>& generator,
                                            const IntegratorOptions& options)
    : m_block_size(generator.block_size()) {
  const DampingClasses classes = damping_classes(generator.damping_values(), generator.damping());
  m_rates = classes.rate;
  m_damping_classes = m_rates.size();
  const ElementClasses elements = element_classes(generator.system_diagonal(), generator.block_size());
  // Where the damping rates are complex (fermionic leads, underdamped and fitted baths) the weights
  // are complex anyway, and taking the system's diagonal exactly too costs a step little more: it
  // lifts the stability limit that H's energy differences set on the explicit part. Where they are
  // real (Drude-Lorentz), complex weights would double the update's arithmetic and give up the
  // packed history for fewer steps than that costs (perf_tests/history.md).
  // Its weight tables (step, dense output, and the order estimates' where it fits) then each hold
  // stride weights per element of a block for each damping class. Memory plans count the state
  // vectors, not them: the step's and the dense output's together may take at most as much as the
  // state vectors do, which hierarchies with nearly as many classes as ADOs exceed.
  const bool complex_damping =
      std::any_of(m_rates.begin(), m_rates.end(), [](const complex& rate) { return rate.imag() != 0.0; });
  const bool tables_fit = 2 * weights::stride * m_rates.size() <=
                          static_cast<std::size_t>(state_vectors(Method::exp_adams, false)) * generator.total_ados();
  if (complex_damping && tables_fit && !elements.rate.empty()) {
    m_elements_of_class.resize(elements.rate.size());
    std::vector<complex> omega;
    for (int e = 0; e < m_block_size; ++e) {
      m_elements_of_class[elements.of_element[e]].push_back(e);
      omega.push_back(elements.rate[elements.of_element[e]]);
    }
    std::vector<complex> rates;
    for (const complex& rate : m_rates)
      for (const complex& o : elements.rate) rates.push_back(rate + o);
    m_rates = std::move(rates);
    m_omega = to_device<typename BackendTraits<ExecSpace>::template view<const device_complex*>>(
        exec, "heom::exp_adams::system_diagonal", omega, omega.size());
  }
  for (const complex& rate : m_rates) m_real_rates = m_real_rates && rate.imag() == 0.0;
  m_ado_class = to_device<ado_list>(exec, "heom::exp_adams::ado_class", classes.of_ado, classes.of_ado.size());
  const std::size_t columns = weights::stride * static_cast<std::size_t>(element_stride());
  const auto allocated = [&](const char* label) {
    Table t;
    t.device = allocate<weight_table>(exec, label, m_damping_classes, columns);
    t.host = Kokkos::create_mirror_view(t.device);
    return t;
  };
  m_step = allocated("heom::exp_adams::step_weights");
  m_dense = allocated("heom::exp_adams::dense_weights");
  // The order estimates' own table, where there are estimates (orders 3 and up) and the three tables
  // stay within this device's state vectors' size.
  const std::size_t state_elements =
      static_cast<std::size_t>(state_vectors(Method::exp_adams, false)) * generator.num_ados() * generator.block_size();
  m_estimates_apart = options.max_order >= 3 && 3 * m_damping_classes * columns <= state_elements;
  if (m_estimates_apart) m_estimates = allocated("heom::exp_adams::estimate_weights");
  m_scratch.resize(m_rates.size() * weights::stride);
}

template <class ExecSpace>
void ExpAdamsWeights<ExecSpace>::upload(const ExecSpace& exec, Table& table, double h, double sigma, int order,
                                        const Nodes& nodes, const std::vector<int>& classes) const {
  Key wanted{h, sigma, order, nodes, classes};
  if (table.key.holds(wanted)) return;
  table.key = std::move(wanted);
  const auto& host = table.host;
  const double* theta = table.key.nodes.data();
  const bool exact = exact_system_diagonal();
  const std::size_t Q = exact ? m_elements_of_class.size() : 1;
  // Rows [first, last) of the table, each on its own (the same bits however they are shared out).
  const auto rows = [&, rates = m_rates.data(), scratch = m_scratch.data()](std::size_t first, std::size_t last) {
    weights::compute(rates + first, last - first, h, sigma, theta, order, scratch + first * weights::stride);
    // Row r holds damping class r / Q's weights for element class r % Q: its elements' columns.
    // (Locals: the stores must not make the compiler reload the element lists.)
    const int stride = element_stride();
    for (std::size_t r = first; r < last; ++r) {
      const complex* from = scratch + r * weights::stride;
      device_complex* to = &host(r / Q, 0);
      if (!exact) {
        for (int k = 0; k < weights::stride; ++k) to[k] = device_complex(from[k].real(), from[k].imag());
        continue;
      }
      const int* elements = m_elements_of_class[r % Q].data();
      const int count = static_cast<int>(m_elements_of_class[r % Q].size());
      for (int k = 0; k < weights::stride; ++k) {
        const device_complex value(from[k].real(), from[k].imag());
        for (int i = 0; i < count; ++i) to[k * stride + elements[i]] = value;
      }
    }
  };
  // The rows wanted, as ranges [first, last): all, or the listed classes' (Q rows each).
  std::vector<std::pair<std::size_t, std::size_t>> wanted_rows;
  if (classes.empty()) wanted_rows.emplace_back(0, m_rates.size());
  for (const int c : classes) {
    const std::size_t first = c * Q;
    if (!wanted_rows.empty() && wanted_rows.back().second == first)
      wanted_rows.back().second += Q;
    else
      wanted_rows.emplace_back(first, first + Q);
  }
  // A row costs about as much as a fork and join of the host's threads: thousands of them (a row per
  // damping class and element class) are worth sharing out, in chunks of rows.
  constexpr std::size_t rows_per_chunk = 64;
  std::vector<std::pair<std::size_t, std::size_t>> chunks;
  for (const auto& [first, last] : wanted_rows)
    for (std::size_t r = first; r < last; r += rows_per_chunk)
      chunks.emplace_back(r, std::min(last, r + rows_per_chunk));
  if constexpr (BackendTraits<ExecSpace>::host_shape) {
    if (chunks.size() > 1 && exec.concurrency() > 1) {
      Kokkos::parallel_for("heom::exp_adams::weights", Kokkos::RangePolicy<ExecSpace>(exec, 0, chunks.size()),
                           [&](const std::size_t chunk) { rows(chunks[chunk].first, chunks[chunk].second); });
      exec.fence();
      Kokkos::deep_copy(exec, table.device, host);
      return;
    }
  }
  for (const auto& [first, last] : chunks) rows(first, last);
  // (Ordered after the kernels that read the old weights. The host table is rewritten only at its next
  // upload, after the step's error norm, or the solver's copy of the output to the host, has fenced
  // exec: no copy from it is still pending then.)
  Kokkos::deep_copy(exec, table.device, host);
}

template <class ExecSpace>
void ExpAdamsWeights<ExecSpace>::forget() {
  m_step.key = Key{};
  m_estimates.key = Key{};
  m_dense.key = Key{};
}

template <class ExecSpace>
const std::vector<int>& ExpAdamsWeights<ExecSpace>::classes_of(const ado_list* ados, int leading) const {
  const bool same =
      ados ? m_listed_leading < 0 && ados->data() == m_listed_ados.data() && ados->extent(0) == m_listed_ados.extent(0)
           : m_listed_leading == leading;
  if (same) return m_listed_classes;
  const auto classes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_ado_class);
  m_listed_classes.clear();
  if (ados) {
    const auto listed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), *ados);
    for (std::size_t k = 0; k < listed.extent(0); ++k) m_listed_classes.push_back(classes(listed(k)));
  } else {
    for (int a = 0; a < leading; ++a) m_listed_classes.push_back(classes(a));
  }
  std::sort(m_listed_classes.begin(), m_listed_classes.end());
  m_listed_classes.erase(std::unique(m_listed_classes.begin(), m_listed_classes.end()), m_listed_classes.end());
  m_listed_ados = ados ? *ados : ado_list();
  m_listed_leading = ados ? -1 : leading;
  return m_listed_classes;
}

}  // namespace heom::impl

#endif
