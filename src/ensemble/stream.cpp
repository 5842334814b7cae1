// The host-side parts of heom::stream_ensemble: rank 0's reorder buffer and running mean, results
// packed for sending between ranks, and the units of a stream.
#include "heom/ensemble/stream.hpp"

namespace heom::impl {

void check_ensemble(std::int64_t members, const std::vector<double>& times, const EnsembleOptions& options) {
  if (members < 1) throw Error("run_ensemble: the ensemble has no members");
  if (times.empty() || !std::is_sorted(times.begin(), times.end()))
    throw Error("run_ensemble: the output times must be non-empty and ascending");
  if (options.devices < 1) throw Error("run_ensemble: devices must be >= 1, got " + std::to_string(options.devices));
  if (options.solver.communicator || !options.solver.partition.empty())
    throw Error("run_ensemble: a member runs whole on one device (SolverOptions::communicator must be empty)");
  if (options.ranks && options.devices > 1)
    throw Error("run_ensemble: several devices per rank are not supported; run one rank per device");
  if (options.batch < 1) throw Error("run_ensemble: batch must be >= 1, got " + std::to_string(options.batch));
}

void pack_member_result(std::int64_t member, const MemberResult& result, std::vector<double>& out) {
  const std::size_t n = result.rho.empty() ? 0 : static_cast<std::size_t>(result.rho.front().rows());
  const std::size_t baths = result.lead_currents.empty() ? 0 : result.lead_currents.front().size();
  for (const Matrix& m : result.rho)
    if (static_cast<std::size_t>(m.rows()) != n || static_cast<std::size_t>(m.cols()) != n)
      throw Error("run_ensemble: member " + std::to_string(member) + "'s rho changes shape");
  out.insert(out.end(), {static_cast<double>(member), static_cast<double>(result.worker),
                         static_cast<double>(static_cast<int>(result.kernel)),
                         static_cast<double>(result.statistics.steps), static_cast<double>(result.statistics.rejected),
                         static_cast<double>(result.statistics.rhs_evaluations), result.wall_time_s,
                         static_cast<double>(result.rho.size()), static_cast<double>(n), static_cast<double>(baths)});
  for (const Matrix& m : result.rho)
    for (std::size_t e = 0; e < n * n; ++e) out.insert(out.end(), {m.data()[e].real(), m.data()[e].imag()});
  for (const auto& at_time : result.lead_currents) {
    if (at_time.size() != baths)
      throw Error("run_ensemble: member " + std::to_string(member) + "'s lead currents change shape");
    for (const complex& c : at_time) out.insert(out.end(), {c.real(), c.imag()});
  }
}

void unpack_member_results(const std::vector<double>& packed,
                           const std::function<void(std::int64_t, MemberResult&&)>& take) {
  constexpr std::size_t header = 10;
  std::size_t at = 0;
  while (at < packed.size()) {
    if (packed.size() - at < header) throw Error("run_ensemble: a member result from another rank is cut short");
    const auto member = static_cast<std::int64_t>(packed[at]);
    const auto times = static_cast<std::size_t>(packed[at + 7]), n = static_cast<std::size_t>(packed[at + 8]),
               baths = static_cast<std::size_t>(packed[at + 9]);
    const std::size_t values = times * n * n + (baths > 0 ? times * baths : 0);
    if (packed.size() - at - header < 2 * values)
      throw Error("run_ensemble: the result of member " + std::to_string(member) + " from another rank is cut short");
    MemberResult r;
    r.worker = static_cast<int>(packed[at + 1]);
    r.kernel = static_cast<GeneratorKernel>(static_cast<int>(packed[at + 2]));
    r.statistics.steps = static_cast<std::int64_t>(packed[at + 3]);
    r.statistics.rejected = static_cast<std::int64_t>(packed[at + 4]);
    r.statistics.rhs_evaluations = static_cast<std::int64_t>(packed[at + 5]);
    r.wall_time_s = packed[at + 6];
    const double* v = packed.data() + at + header;
    for (std::size_t t = 0; t < times; ++t) {
      Matrix m(static_cast<int>(n), static_cast<int>(n));
      for (std::size_t e = 0; e < n * n; ++e, v += 2) m.data()[e] = complex(v[0], v[1]);
      r.rho.push_back(std::move(m));
    }
    for (std::size_t t = 0; t < (baths > 0 ? times : 0); ++t) {
      std::vector<complex> at_time;
      for (std::size_t b = 0; b < baths; ++b, v += 2) at_time.emplace_back(v[0], v[1]);
      r.lead_currents.push_back(std::move(at_time));
    }
    take(member, std::move(r));
    at += header + 2 * values;
  }
}

OrderedResults::OrderedResults(std::int64_t members, std::function<void(std::int64_t, MemberResult&&)> sink)
    : m_members(members), m_sink(std::move(sink)) {}

void OrderedResults::add(std::int64_t member, MemberResult&& result) {
  const std::lock_guard<std::mutex> lock(m_lock);
  if (member < m_next || member >= m_members || m_waiting.count(member))
    throw Error("run_ensemble: a second or unknown result for member " + std::to_string(member));
  ++m_added;
  if (member != m_next) {
    m_waiting.emplace(member, std::move(result));
    m_most_held = std::max(m_most_held, m_waiting.size());
    return;
  }
  hand_on(member, std::move(result));
  for (auto next = m_waiting.begin(); next != m_waiting.end() && next->first == m_next; next = m_waiting.begin()) {
    MemberResult waiting = std::move(next->second);
    m_waiting.erase(next);
    hand_on(m_next, std::move(waiting));
  }
}

void OrderedResults::hand_on(std::int64_t member, MemberResult&& result) {
  // The running sum, as ensemble_mean sums: zeros, then each member in member order.
  if (member == 0 && !result.rho.empty()) {
    const int n = result.rho.front().rows();
    m_sum.assign(result.rho.size(), Matrix(n, n));
  }
  const bool alike =
      result.rho.size() == m_sum.size() && (m_sum.empty() || (result.rho.front().rows() == m_sum.front().rows()));
  m_alike = m_alike && alike;
  if (m_alike)
    for (std::size_t t = 0; t < m_sum.size(); ++t) m_sum[t] += result.rho[t];
  ++m_next;
  if (m_sink) m_sink(member, std::move(result));
}

std::int64_t OrderedResults::added() const {
  const std::lock_guard<std::mutex> lock(m_lock);
  return m_added;
}

std::vector<Matrix> OrderedResults::mean() const {
  const std::lock_guard<std::mutex> lock(m_lock);
  if (m_next != m_members) throw Error("run_ensemble: " + std::to_string(m_members - m_next) + " results missing");
  if (!m_alike) return {};
  std::vector<Matrix> mean = m_sum;
  const double members = static_cast<double>(m_members);
  for (Matrix& m : mean)
    for (int e = 0; e < m.rows() * m.cols(); ++e) m.data()[e] /= members;
  return mean;
}

std::size_t OrderedResults::most_held() const {
  const std::lock_guard<std::mutex> lock(m_lock);
  return m_most_held;
}

RankResults::RankResults(const Communicator& ranks, OrderedResults* results) : m_ranks(ranks), m_results(results) {
  if ((ranks.rank() == 0) != (results != nullptr))
    throw Error("run_ensemble: rank 0, and it alone, collects the results");
}

void RankResults::deliver(std::int64_t member, MemberResult&& result) {
  if (m_results) {
    m_results->add(member, std::move(result));
    poll();
    return;
  }
  std::vector<double> packed;
  pack_member_result(member, result, packed);
  m_ranks.send_to_root(std::move(packed));
}

void RankResults::poll() {
  while (m_results && m_ranks.receive_at_root(m_buffer, false))
    unpack_member_results(m_buffer, [&](std::int64_t i, MemberResult&& r) { m_results->add(i, std::move(r)); });
}

void RankResults::finish(std::int64_t members) {
  if (!m_results) {
    m_ranks.finish_sends_to_root();
    return;
  }
  while (m_results->added() < members) {
    m_ranks.receive_at_root(m_buffer, true);
    unpack_member_results(m_buffer, [&](std::int64_t i, MemberResult&& r) { m_results->add(i, std::move(r)); });
  }
}

UnitPlan::UnitPlan(const EnsembleStream& stream, int batch) : m_stream(stream), m_batch(batch) {
  count = stream.units > 0 ? stream.units : (stream.members + m_batch - 1) / m_batch;
  if (stream.units > 0 && !stream.unit)
    throw Error("stream_ensemble: the stream has units but no EnsembleStream::unit");
}

std::vector<std::int64_t> UnitPlan::members_of(std::int64_t unit) const {
  if (m_stream.units > 0) {
    std::vector<std::int64_t> members = m_stream.unit(unit);
    if (members.empty() || static_cast<std::int64_t>(members.size()) > m_batch)
      throw Error("stream_ensemble: unit " + std::to_string(unit) + " has " + std::to_string(members.size()) +
                  " members (expected 1 to batch)");
    return members;
  }
  std::vector<std::int64_t> members;
  for (std::int64_t i = unit * m_batch; i < std::min(m_stream.members, (unit + 1) * m_batch); ++i) members.push_back(i);
  return members;
}

}  // namespace heom::impl
