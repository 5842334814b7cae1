// heom::impl::ExpAdamsHistory: exp-adams' past derivatives N(y), newest first, with their times and the
// steps between them, kept whole or, for Hermitian ADOs, packed (HermitianPacking); and their part of a
// saved state.
#ifndef HEOM_INTEGRATOR_DETAIL_EXP_ADAMS_HISTORY_HPP
#define HEOM_INTEGRATOR_DETAIL_EXP_ADAMS_HISTORY_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/to_device.hpp"
#include "heom/generator/generator.hpp"
#include "heom/integrator/detail/exponential_adams_kernels.hpp"
#include "heom/integrator/integrator.hpp"
#include "heom/integrator/state.hpp"

namespace heom::impl {

template <class ExecSpace>
class ExpAdamsHistory {
 public:
  using vector_type = typename Generator<ExecSpace>::vector_type;
  using const_vector_type = typename Generator<ExecSpace>::const_vector_type;
  static constexpr int max_order = ExponentialAdamsWeights::max_order;
  using Nodes = std::array<double, max_order>;

  /// At most `most` derivatives (IntegratorOptions::max_order) of `generator`'s owned blocks.
  ExpAdamsHistory(const Generator<ExecSpace>& generator, int most) : m_generator(generator), m_most(most) {
    for (auto& p : m_past)
      p = allocate<vector_type>(generator.exec(), "heom::exp_adams::past_derivative", generator.owned_size());
    m_packing.n = generator.dimension();
  }

  /// The derivatives held (after a restart they build up one per step).
  int count() const { return m_count; }
  /// Whether the last accepted step's N(y) is not yet held (it is the next to push).
  bool pending() const { return m_pending; }
  /// Whether a step was accepted since the last push: its start (in y_new) and these derivatives give
  /// its dense output.
  bool has_step() const { return m_has_step; }
  /// Whether the derivatives are held packed (HermitianPacking) rather than whole.
  bool packed() const { return m_packed; }
  const HermitianPacking& packing() const { return m_packing; }
  /// N(y) at the newest time (whole or packed).
  const vector_type& newest() const { return m_past[0]; }
  Kokkos::Array<const_vector_type, max_order> views() const {
    Kokkos::Array<const_vector_type, max_order> p;
    for (int j = 0; j < max_order; ++j) p[j] = m_past[j];
    return p;
  }
  /// The nodes theta_j = (t_{n-j} - t_n) / h of a step of h at `order`, from the steps as taken: steps
  /// of one size give whole-number nodes, and reuse their weights (the times' differences differ from
  /// the steps in their last bits).
  Nodes nodes(double h, int order) const {
    Nodes theta{};
    for (int j = 1; j < order; ++j) theta[j] = theta[j - 1] - m_past_step[j - 1] / h;
    return theta;
  }

  /// Makes the oldest slot the newest, newest(), for N(y) at `time`, `since` after the last one.
  void push(double time, double since) {
    std::rotate(m_past.begin(), m_past.end() - 1, m_past.end());
    std::rotate(m_past_time.begin(), m_past_time.end() - 1, m_past_time.end());
    std::rotate(m_past_step.begin(), m_past_step.end() - 1, m_past_step.end());
    m_past_step[0] = m_count > 0 ? since : 0.0;
    m_past_time[0] = time;
    m_count = std::min(m_count + 1, m_most);
    m_pending = false;
    m_has_step = false;
  }
  /// A step was accepted: its new N(y) is to be pushed, and it has a dense output.
  void accepted() {
    m_pending = true;
    m_has_step = true;
  }
  /// Forgets every derivative (a restart).
  void clear() {
    m_count = 0;
    m_pending = false;
    m_has_step = false;
  }

  /// Converts the derivatives to `packed` (or whole) form. Packing needs each block Hermitian to the
  /// bit (the Hermitian kernel's derivatives are); a refusal leaves them as they were.
  void convert(const ExecSpace& exec, bool packed) {
    if (packed == m_packed) return;
    std::vector<std::vector<complex>> converted;
    for (int j = 0; j < m_count; ++j) {
      std::vector<complex> host = to_host(exec, m_past[j], m_generator.owned_size());
      converted.push_back(packed ? packed_form(host, j) : whole_form(std::move(host)));
    }
    for (int j = 0; j < m_count; ++j) from_host(exec, converted[j], m_past[j]);
    m_packed = packed;
  }

  /// The derivatives, whole, and their times and steps, into a saved state.
  void save(const ExecSpace& exec, IntegratorState& s, VectorStore& vectors) const {
    s.scalars["history"] = m_count;
    s.scalars["pending"] = m_pending;
    s.scalars["has_step"] = m_has_step;
    for (int j = 0; j < m_count; ++j) {
      s.scalars["past_time_" + std::to_string(j)] = m_past_time[j];
      if (j + 1 < m_count) s.scalars["past_step_" + std::to_string(j)] = m_past_step[j];
      vectors.put("past_" + std::to_string(j), whole_form(to_host(exec, m_past[j], m_generator.owned_size())));
    }
  }
  /// What a saved state holds of a history: checked (heom::Error naming what is wrong), nothing taken.
  struct Saved {
    int count = 0;
    Nodes times{}, steps{};
    bool pending = false, has_step = false;
  };
  static Saved read(const IntegratorState& s, const VectorStore& vectors, int count, std::int64_t owned) {
    Saved saved;
    saved.count = count;
    for (int j = 0; j < count; ++j) {
      saved.times[j] = s.scalar("past_time_" + std::to_string(j));
      vectors.require("past_" + std::to_string(j), static_cast<std::size_t>(owned));
    }
    // (A state saved before the steps were kept has their times alone.)
    for (int j = 0; j + 1 < count; ++j) {
      const auto step = s.scalars.find("past_step_" + std::to_string(j));
      saved.steps[j] = step != s.scalars.end() ? step->second : saved.times[j] - saved.times[j + 1];
      if (!(saved.steps[j] > 0.0 && std::isfinite(saved.steps[j])))
        throw Error("integrator state: " +
                    (step != s.scalars.end()
                         ? "past_step_" + std::to_string(j) + " is " + std::to_string(saved.steps[j])
                         : "past_time_" + std::to_string(j + 1) + " is not before past_time_" + std::to_string(j)));
    }
    saved.has_step = s.scalar("has_step") != 0.0;
    saved.pending = s.scalar("pending") != 0.0;
    return saved;
  }
  /// Takes a history read() checked, its derivatives (whole) from `vectors`.
  void take(const ExecSpace& exec, const Saved& saved, const VectorStore& vectors) {
    m_packed = false;  // (saved whole: convert() packs them where that pays)
    for (int j = 0; j < saved.count; ++j) from_host(exec, vectors.get("past_" + std::to_string(j)), m_past[j]);
    m_past_time = saved.times;
    m_past_step = saved.steps;
    m_count = saved.count;
    m_pending = saved.pending;
    m_has_step = saved.has_step;
  }

 private:
  /// Whole derivative j (owned_size() elements, on the host) packed; throws unless each block is
  /// Hermitian to the bit.
  std::vector<complex> packed_form(const std::vector<complex>& whole, int j) const {
    std::vector<complex> packed(whole.size());
    const int n = m_packing.n, block = m_generator.block_size();
    for (std::int64_t a = 0; a < m_generator.num_ados(); ++a) {
      const complex* b = whole.data() + a * block;
      for (int r = 0; r < n; ++r)
        for (int c = r; c < n; ++c)
          if (b[r * n + c] != std::conj(b[c * n + r]))
            throw Error("integrator state: past derivative " + std::to_string(j) + " of ADO " + std::to_string(a) +
                        " is not Hermitian, which the Hermitian kernel needs");
      PackDerivative{reinterpret_cast<device_complex*>(packed.data()), m_packing}.take_block(
          static_cast<int>(a), reinterpret_cast<const double*>(b));
    }
    return packed;
  }
  /// A derivative (owned_size() elements, on the host) whole: unpacked where the history is packed.
  std::vector<complex> whole_form(std::vector<complex>&& history) const {
    if (!m_packed) return std::move(history);
    std::vector<complex> whole(history.size());
    const UnpackBlocks unpack{reinterpret_cast<const device_complex*>(history.data()),
                              reinterpret_cast<device_complex*>(whole.data()), m_packing};
    for (int a = 0; a < m_generator.num_ados(); ++a) unpack(a);
    return whole;
  }

  const Generator<ExecSpace>& m_generator;
  int m_most;                                 // IntegratorOptions::max_order
  std::array<vector_type, max_order> m_past;  // N(y) at m_past_time, newest first (whole or packed)
  Nodes m_past_time{};
  // The steps between them as taken, m_past_time[j] - m_past_time[j + 1] up to rounding.
  Nodes m_past_step{};
  int m_count = 0;
  bool m_pending = false;
  bool m_has_step = false;
  bool m_packed = false;
  HermitianPacking m_packing;
};

}  // namespace heom::impl

#endif
