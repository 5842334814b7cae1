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

void pack_member_result(int member, const MemberResult& result, std::vector<double>& out) {
  std::size_t count = 0;
  for (const Matrix& m : result.rho) count += static_cast<std::size_t>(m.rows()) * m.cols();
  std::size_t currents = 0;
  for (const auto& c : result.lead_currents) currents += c.size();
  out.insert(out.end(),
             {static_cast<double>(member), static_cast<double>(result.worker),
              static_cast<double>(static_cast<int>(result.kernel)), static_cast<double>(result.statistics.steps),
              static_cast<double>(result.statistics.rejected), static_cast<double>(result.statistics.rhs_evaluations),
              result.wall_time_s, static_cast<double>(result.rho.size()), static_cast<double>(count),
              static_cast<double>(currents)});
  for (const Matrix& m : result.rho)
    for (int i = 0; i < m.rows(); ++i)
      for (int j = 0; j < m.cols(); ++j) out.insert(out.end(), {m(i, j).real(), m(i, j).imag()});
  for (const auto& at_time : result.lead_currents)
    for (const complex& c : at_time) out.insert(out.end(), {c.real(), c.imag()});
}

void unpack_member_results(const std::vector<double>& packed, const std::vector<EnsembleMember>& members,
                           std::vector<MemberResult>& results) {
  constexpr std::size_t header = 10;
  std::size_t at = 0;
  while (at < packed.size()) {
    if (packed.size() - at < header) throw Error("run_ensemble: a gathered member result is cut short");
    const auto member = static_cast<std::size_t>(packed[at]);
    const auto times = static_cast<std::size_t>(packed[at + 7]), count = static_cast<std::size_t>(packed[at + 8]),
               currents = static_cast<std::size_t>(packed[at + 9]);
    if (member >= members.size()) throw Error("run_ensemble: a gathered result names member " + std::to_string(member));
    const int n = members[member].model.dimension();
    if (count != times * n * n || packed.size() - at - header < 2 * (count + currents) ||
        (currents > 0 && currents != times * members[member].model.baths().size()))
      throw Error("run_ensemble: the gathered result of member " + std::to_string(member) + " has the wrong size");
    MemberResult r;
    r.worker = static_cast<int>(packed[at + 1]);
    r.kernel = static_cast<GeneratorKernel>(static_cast<int>(packed[at + 2]));
    r.statistics.steps = static_cast<std::int64_t>(packed[at + 3]);
    r.statistics.rejected = static_cast<std::int64_t>(packed[at + 4]);
    r.statistics.rhs_evaluations = static_cast<std::int64_t>(packed[at + 5]);
    r.wall_time_s = packed[at + 6];
    const double* values = packed.data() + at + header;
    for (std::size_t t = 0; t < times; ++t) {
      Matrix m(n, n);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j, values += 2) m(i, j) = complex(values[0], values[1]);
      r.rho.push_back(std::move(m));
    }
    for (std::size_t t = 0; t < (currents > 0 ? times : 0); ++t) {
      std::vector<complex> at_time;
      for (std::size_t b = 0; b < currents / times; ++b, values += 2) at_time.emplace_back(values[0], values[1]);
      r.lead_currents.push_back(std::move(at_time));
    }
    results[member] = std::move(r);
    at += header + 2 * (count + currents);
  }
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
