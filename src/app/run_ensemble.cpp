// Running an ensemble's members in the heom program and writing their mean and /ensemble.
#include "commands.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "app.hpp"
#include "heom/core/backend_traits.hpp"
#include "heom/core/matrix.hpp"
#include "heom/ensemble/ensemble.hpp"
#include "heom/generator/options.hpp"
#include "heom/hierarchy/memory_plan.hpp"
#include "io/hdf5_output.hpp"
#include "io/units.hpp"
#include "plans.hpp"
#include "progress.hpp"
#include "stop_signals.hpp"
#include "test_hooks.hpp"

namespace heom::app {
namespace {

/// The units of work with batches of several members and sweeps: the batches run_ensemble's
/// ensemble_batches forms (each shape's members in member order, `batch` at a time; a point's
/// realizations differ in H alone, so a shape is a set of points), handed out in order of their first
/// member so that results reach rank 0 nearly in member order. Empty: stream_ensemble's own units
/// (member order, `batch` at a time: the same batches when every point has one shape).
std::vector<std::vector<std::int64_t>> ensemble_units(const io::EnsembleConfig& e) {
  const auto& points = e.members.points();
  if (e.batch == 1 || points.size() < 2) return {};
  std::vector<std::size_t> shape(points.size());  // each point's shape: the first point of it
  for (std::size_t p = 0; p < points.size(); ++p) {
    shape[p] = p;
    for (std::size_t q = 0; q < p; ++q)
      if (shape[q] == q && same_shape(points[q].model, points[p].model) &&
          hermitian_start(points[q].rho0) == hermitian_start(points[p].rho0)) {
        shape[p] = q;
        break;
      }
  }
  std::vector<std::vector<std::int64_t>> units;
  std::vector<std::size_t> open(points.size(), SIZE_MAX);  // per shape, the unit still taking members
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(e.members.size()); ++i) {
    std::size_t& unit = open[shape[static_cast<std::size_t>(i / e.realizations)]];
    if (unit == SIZE_MAX || static_cast<int>(units[unit].size()) == e.batch) {
      unit = units.size();
      units.emplace_back();
    }
    units[unit].push_back(i);
  }
  return units;  // (already in order of their first members)
}

/// The members as a stream: each made from the input when a worker takes it, in the units of work
/// ensemble_units forms.
EnsembleStream member_stream(const io::EnsembleConfig& e) {
  EnsembleStream stream;
  stream.members = static_cast<std::int64_t>(e.members.size());
  stream.make = [&e](std::int64_t i) {
    io::EnsembleMemberConfig m = e.members[static_cast<std::size_t>(i)];
    return EnsembleMember{std::move(m.model), std::move(m.rho0)};
  };
  std::vector<std::vector<std::int64_t>> units = ensemble_units(e);
  if (!units.empty()) {
    stream.units = static_cast<std::int64_t>(units.size());
    stream.unit = [units = std::move(units)](std::int64_t u) { return units[u]; };
  }
  return stream;
}

/// Rank 0's side of the stream: writes each member as it arrives (in member order) to the output
/// file and keeps the running sums (the currents, each sweep point's mean over its realizations).
class MemberSink {
 public:
  MemberSink(const io::RunConfig& config, const std::string& output_path, bool observes_currents)
      : config_(config),
        e_(*config.ensemble),
        n_(static_cast<std::size_t>(config.model.dimension())),
        nt_(config.output_times().size()),
        baths_(observes_currents ? config.model.baths().size() : 0),
        per_time_(io::unit_scale(config.units).time),
        sweeps_(!e_.parameter_names.empty()),
        record_(describe_run(config)),
        out_(record_.ensemble.emplace()) {
    install_removal_signals();
    file_ = std::make_unique<io::EnsembleFile>(
        output_path, io::EnsembleFile::Shape{static_cast<std::int64_t>(e_.members.size()), nt_, static_cast<int>(n_),
                                             e_.parameter_names.size(), baths_, e_.store_members});
    if (baths_ > 0) {
      record_.current.assign(nt_ * baths_, 0.0);
      if (sweeps_) out_.sweep_current.assign(static_cast<std::size_t>(e_.sweep_points) * nt_ * baths_, 0.0);
    }
  }
  MemberSink(const MemberSink&) = delete;
  MemberSink& operator=(const MemberSink&) = delete;

  void take(std::int64_t i, MemberResult&& r) {
    if (i == 0) record_.generator_kernel = to_string(r.kernel);
    record_.statistics.steps += r.statistics.steps;
    record_.statistics.rejected += r.statistics.rejected;
    record_.statistics.rhs_evaluations += r.statistics.rhs_evaluations;
    current_.clear();
    for (const auto& at_time : r.lead_currents)
      for (const complex& c : at_time) current_.push_back(c * per_time_);
    const std::size_t point = static_cast<std::size_t>(i / e_.realizations);
    for (std::size_t k = 0; k < current_.size(); ++k) {
      record_.current.at(k) += current_[k];
      if (sweeps_) out_.sweep_current.at(point * current_.size() + k) += current_[k];
    }
    file_->add(r.statistics.steps, r.worker, e_.members.parameters(i), e_.members.hamiltonian(i), r.rho, current_);
    if (sweeps_) add_to_sweep_point(i, r.rho);
  }

  /// The record's mean and means into the file, which is then complete.
  const io::RunRecord& finish(std::vector<Matrix> mean, double wall_time_s, const std::string& workers) {
    const double count = static_cast<double>(e_.members.size());
    record_.rho = std::move(mean);
    record_.wall_time_s = wall_time_s;
    record_.threads = Exec().concurrency();
    record_.devices = workers;
    describe_ensemble(config_, out_);
    for (complex& c : record_.current) c /= count;
    for (complex& c : out_.sweep_current) c /= static_cast<double>(e_.realizations);
    file_->finish(record_);
    return record_;
  }

 private:
  /// Each sweep point's mean over its realizations (members point * R .. point * R + R - 1), summed
  /// in member order as ensemble_mean sums.
  void add_to_sweep_point(std::int64_t i, const std::vector<Matrix>& rho) {
    if (i % e_.realizations == 0) point_sum_.assign(nt_, Matrix(static_cast<int>(n_), static_cast<int>(n_)));
    for (std::size_t t = 0; t < nt_; ++t) point_sum_[t] += rho[t];
    if ((i + 1) % e_.realizations == 0)
      for (Matrix& m : point_sum_) {
        for (std::size_t k = 0; k < n_ * n_; ++k) m.data()[k] /= static_cast<double>(e_.realizations);
        out_.sweep_mean.insert(out_.sweep_mean.end(), m.data(), m.data() + n_ * n_);
      }
  }

  const io::RunConfig& config_;
  const io::EnsembleConfig& e_;
  const std::size_t n_, nt_, baths_;
  const double per_time_;  // a member's currents per unit of the output's time
  const bool sweeps_;
  io::RunRecord record_;
  io::EnsembleRecord& out_;  // record_'s
  std::unique_ptr<io::EnsembleFile> file_;
  std::vector<Matrix> point_sum_;  // the current sweep point's sum over its realizations
  std::vector<complex> current_;   // the member's currents at hand
};

}  // namespace

int run_ensemble_members(const io::RunConfig& config, const std::string& output_path, const MpiJob& job,
                         const Devices& devices) {
  const io::EnsembleConfig& e = *config.ensemble;
  const std::shared_ptr<const Communicator> ranks = job.mpi_communicator();
  const std::string workers =
      ranks ? ranks->describe()
            : std::to_string(std::max(devices.count, 1)) + (devices.count > 1 ? " devices in one process" : " device");
  const bool reporter = job.rank() == 0;
  if (reporter) {
    print_plan(config, memory_plan(config), BackendTraits<Exec>::available_memory(Exec()), output_path);
    print_ensemble_plan(config, workers);
  }

  EnsembleOptions options;
  options.depth = config.depth;
  options.solver = config.solver;
  options.solver.observe_lead_currents = config.model.has_fermionic_bath();
  options.devices = std::max(devices.count, 1);
  options.gpu_ids = devices.gpu_ids;
  options.ranks = ranks;
  options.batch = e.batch;
  const InjectedFailure failure = InjectedFailure::from_environment();
  std::vector<long long> steps(options.devices, 0);  // per device of this process (each its own thread)
  options.on_step = [&](int worker, double) { failure.check(worker, ++steps[worker % options.devices]); };

  EnsembleStream stream = member_stream(e);
  std::unique_ptr<MemberSink> sink;
  if (reporter) {
    sink = std::make_unique<MemberSink>(config, output_path, options.solver.observe_lead_currents);
    stream.sink = [&](std::int64_t i, MemberResult&& r) { sink->take(i, std::move(r)); };
  }
  const auto start = std::chrono::steady_clock::now();
  EnsembleSummary summary;
  {
    Progress progress(0.0, static_cast<double>(e.members.size()), "", reporter ? stderr : nullptr, "members");
    options.progress = [&](std::int64_t finished, std::int64_t) { progress.update(static_cast<double>(finished)); };
    summary = stream_ensemble(Exec(), stream, config.output_times(), options);
  }
  if (!reporter) return 0;
  const io::RunRecord& record =
      sink->finish(std::move(summary.mean),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), workers);
  std::printf("done: %lld members, %lld steps (%lld rejected), %lld generator evaluations, %s; wrote %s\n",
              static_cast<long long>(e.members.size()), static_cast<long long>(record.statistics.steps),
              static_cast<long long>(record.statistics.rejected),
              static_cast<long long>(record.statistics.rhs_evaluations), format_duration(record.wall_time_s).c_str(),
              output_path.c_str());
  return 0;
}

}  // namespace heom::app
