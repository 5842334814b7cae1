// heom::run_ensemble: many independent hierarchies (static disorder, parameter sweeps, several
// initial states) spread over this process's devices or over the ranks of an MPI job.
//
//   std::vector<heom::EnsembleMember> members;
//   for (int r = 0; r < 64; ++r)
//     members.push_back({heom::Model(heom::with_diagonal_disorder(H, sigma, seed, r), baths), rho0});
//   heom::EnsembleOptions options;
//   options.depth = 4;
//   const heom::EnsembleResult result = heom::run_ensemble(exec, members, times, options);
//   // result.mean[t]: rho(t) averaged over the members; result.members[i].rho[t]: member i's.
#ifndef HEOM_ENSEMBLE_ENSEMBLE_HPP
#define HEOM_ENSEMBLE_ENSEMBLE_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/ensemble/stream.hpp"
#include "heom/hierarchy/hierarchy.hpp"

namespace heom {

struct EnsembleResult {
  std::vector<double> times;
  /// rho(t) averaged over every member, summed in member order (so the same bits however the members
  /// were scheduled). Empty when the members' dimensions differ.
  std::vector<Matrix> mean;
  /// In member order, on every rank.
  std::vector<MemberResult> members;
  int workers = 1;  ///< devices on all ranks
};

/// The order in which the members are handed out: the most expensive first (ADOs x n^2 x (n + K), the
/// generator's work per step), ties in member order, so that the last members to start are short
/// ones and the devices finish together.
std::vector<int> ensemble_schedule(const std::vector<EnsembleMember>& members, int depth);

/// The units of work handed out, in order: batches of up to `batch` members of one shape (same_shape,
/// and rho0 Hermitian or not alike: the same generator kernel for all), formed along
/// ensemble_schedule's order, the most expensive batch first.
std::vector<std::vector<int>> ensemble_batches(const std::vector<EnsembleMember>& members, int depth, int batch);

/// Runs every member to times.back() from rho0 at times.front(), observing rho at each of the
/// ascending `times`: stream_ensemble over `members`, its units ensemble_batches' (the most expensive
/// first: these members are all known up front), every result kept. A member's result is the same
/// bits on any device and in any order, and with batch 1 the bits of the member alone. With
/// options.ranks, collective: rank 0 receives each result as it finishes, then hands them all to
/// every rank, which returns the whole result (what small ensembles and the Python module want; a
/// large one streams: stream_ensemble). Throws the first failure (with several devices, after every
/// device has stopped; on ranks, a rank that throws leaves the others waiting: call
/// MpiCommunicator::abort, as the heom program does).
template <class ExecSpace>
EnsembleResult run_ensemble(const ExecSpace& exec, const std::vector<EnsembleMember>& members,
                            const std::vector<double>& times, const EnsembleOptions& options);

// ---------------------------------------------------------------------------------------------

/// The mean of rho(t) over `count` member results from `first`, summed in member order (the same bits
/// however the members were scheduled); empty if their dimensions differ.
std::vector<Matrix> ensemble_mean(const MemberResult* first, std::size_t count);

namespace impl {

/// On ranks: rank 0's `results` (every member's), on every rank.
void share_member_results(const Communicator& ranks, std::vector<MemberResult>& results);

}  // namespace impl

template <class ExecSpace>
EnsembleResult run_ensemble(const ExecSpace& exec, const std::vector<EnsembleMember>& members,
                            const std::vector<double>& times, const EnsembleOptions& options) {
  impl::check_ensemble(static_cast<std::int64_t>(members.size()), times, options);
  const std::vector<std::vector<int>> work = ensemble_batches(members, options.depth, options.batch);
  EnsembleResult out;
  out.members.resize(members.size());
  EnsembleStream stream;
  stream.members = static_cast<std::int64_t>(members.size());
  stream.make = [&](std::int64_t i) { return members[i]; };
  stream.units = static_cast<std::int64_t>(work.size());
  stream.unit = [&](std::int64_t u) { return std::vector<std::int64_t>(work[u].begin(), work[u].end()); };
  stream.sink = [&](std::int64_t i, MemberResult&& r) { out.members[i] = std::move(r); };
  EnsembleSummary summary = stream_ensemble(exec, stream, times, options);
  out.times = std::move(summary.times);
  out.workers = summary.workers;
  out.mean = std::move(summary.mean);
  if (options.ranks) {
    impl::share_member_results(*options.ranks, out.members);
    if (options.ranks->rank() != 0) out.mean = ensemble_mean(out.members.data(), out.members.size());
  }
  return out;
}

}  // namespace heom

#endif
