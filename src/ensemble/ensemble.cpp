// The host-side parts of heom::run_ensemble: its schedule, and its results packed for gathering.
#include "heom/ensemble/ensemble.hpp"

#include <cmath>

namespace heom {

namespace {

/// The generator's work per step for a member: ADOs x n^2 x (n + K).
double member_cost(const EnsembleMember& member, int depth) {
  const double n = member.model.dimension(), k = member.model.num_exponents();
  return static_cast<double>(Hierarchy::count(member.model.max_excitations(), depth)) * n * n * (n + k);
}

}  // namespace

std::vector<int> ensemble_schedule(const std::vector<EnsembleMember>& members, int depth) {
  std::vector<double> cost(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) cost[i] = member_cost(members[i], depth);
  std::vector<int> order(members.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cost[a] > cost[b]; });
  return order;
}

std::vector<std::vector<int>> ensemble_batches(const std::vector<EnsembleMember>& members, int depth, int batch) {
  std::vector<std::vector<int>> batches;
  std::vector<std::size_t> open;  // per shape seen so far, the batch still taking members
  std::vector<int> shape_of;      // a member of each shape
  for (int i : ensemble_schedule(members, depth)) {
    std::size_t shape = 0;
    while (shape < shape_of.size() &&
           !(same_shape(members[i].model, members[shape_of[shape]].model) &&
             hermitian_start(members[i].rho0) == hermitian_start(members[shape_of[shape]].rho0)))
      ++shape;
    if (shape == shape_of.size()) {
      shape_of.push_back(i);
      open.push_back(batches.size());
      batches.emplace_back();
    } else if (static_cast<int>(batches[open[shape]].size()) == batch) {
      open[shape] = batches.size();
      batches.emplace_back();
    }
    batches[open[shape]].push_back(i);
  }
  std::vector<double> cost(batches.size(), 0.0);
  for (std::size_t b = 0; b < batches.size(); ++b)
    for (int i : batches[b]) cost[b] += member_cost(members[i], depth);
  std::vector<std::size_t> order(batches.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  std::vector<std::vector<int>> sorted;
  for (std::size_t b : order) sorted.push_back(std::move(batches[b]));
  return sorted;
}

namespace impl {

void share_member_results(const Communicator& ranks, std::vector<MemberResult>& results) {
  std::vector<double> packed;
  if (ranks.rank() == 0)
    for (std::size_t i = 0; i < results.size(); ++i)
      pack_member_result(static_cast<std::int64_t>(i), results[i], packed);
  double size = static_cast<double>(packed.size());
  ranks.broadcast(&size, 1, 0);
  if (size > 2147483647.0) throw Error("run_ensemble: the members' results exceed one broadcast; use stream_ensemble");
  packed.resize(static_cast<std::size_t>(size));
  ranks.broadcast(packed.data(), static_cast<int>(packed.size()), 0);
  if (ranks.rank() == 0) return;
  unpack_member_results(packed, [&](std::int64_t member, MemberResult&& r) {
    if (member < 0 || member >= static_cast<std::int64_t>(results.size()))
      throw Error("run_ensemble: a shared result names member " + std::to_string(member));
    results[member] = std::move(r);
  });
}

}  // namespace impl

std::vector<Matrix> ensemble_mean(const MemberResult* first, std::size_t count) {
  if (count == 0) return {};
  const MemberResult* const last = first + count;
  const std::size_t times = first->rho.size();
  const int n = times > 0 ? first->rho.front().rows() : 0;
  for (const MemberResult* r = first; r != last; ++r)
    if (r->rho.size() != times || (times > 0 && r->rho.front().rows() != n)) return {};
  std::vector<Matrix> mean(times, Matrix(n, n));
  for (const MemberResult* r = first; r != last; ++r)
    for (std::size_t t = 0; t < times; ++t) mean[t] += r->rho[t];
  const double members = static_cast<double>(count);
  for (Matrix& m : mean)
    for (int e = 0; e < n * n; ++e) m.data()[e] /= members;
  return mean;
}

}  // namespace heom
