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

}  // namespace

int run_ensemble_members(const io::RunConfig& config, const std::string& output_path, const MpiJob& job,
                         const Devices& devices) {
  const io::EnsembleConfig& e = *config.ensemble;
  const std::shared_ptr<const Communicator> ranks = job.mpi_communicator();
  const std::string workers =
      ranks ? ranks->describe()
            : std::to_string(std::max(devices.count, 1)) + (devices.count > 1 ? " devices in one process" : " device");
  const MemoryPlan plan = memory_plan(config);
  const bool reporter = job.rank() == 0;
  if (reporter) {
    print_plan(config, plan, BackendTraits<Exec>::available_memory(Exec()), output_path);
    print_ensemble_plan(config, workers);
  }

  const std::int64_t count = static_cast<std::int64_t>(e.members.size());
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

  EnsembleStream stream;
  stream.members = count;
  stream.make = [&](std::int64_t i) {
    io::EnsembleMemberConfig m = e.members[static_cast<std::size_t>(i)];
    return EnsembleMember{std::move(m.model), std::move(m.rho0)};
  };
  const std::vector<std::vector<std::int64_t>> units = ensemble_units(e);
  if (!units.empty()) {
    stream.units = static_cast<std::int64_t>(units.size());
    stream.unit = [&](std::int64_t u) { return units[u]; };
  }

  // Rank 0 writes each member as it arrives (in member order) and keeps the running sums.
  const std::vector<double> times = config.output_times();
  const std::size_t n = static_cast<std::size_t>(config.model.dimension()), nt = times.size();
  const std::size_t baths = options.solver.observe_lead_currents ? config.model.baths().size() : 0;
  const double per_time = io::unit_scale(config.units).time;
  io::RunRecord record = describe_run(config);
  io::EnsembleRecord& out = record.ensemble.emplace();
  std::unique_ptr<io::EnsembleFile> file;
  if (reporter) install_removal_signals();
  if (reporter)
    file = std::make_unique<io::EnsembleFile>(
        output_path, io::EnsembleFile::Shape{count, nt, static_cast<int>(n), e.parameter_names.size(),
                                             options.solver.observe_lead_currents ? baths : 0, e.store_members});
  const bool sweeps = !e.parameter_names.empty();
  if (baths > 0) {
    record.current.assign(nt * baths, 0.0);
    if (sweeps) out.sweep_current.assign(static_cast<std::size_t>(e.sweep_points) * nt * baths, 0.0);
  }
  std::vector<Matrix> point_sum;  // the current sweep point's sum over its realizations
  std::vector<complex> current;   // a member's currents per unit of the output's time
  stream.sink = [&](std::int64_t i, MemberResult&& r) {
    if (i == 0) record.generator_kernel = to_string(r.kernel);
    record.statistics.steps += r.statistics.steps;
    record.statistics.rejected += r.statistics.rejected;
    record.statistics.rhs_evaluations += r.statistics.rhs_evaluations;
    current.clear();
    for (const auto& at_time : r.lead_currents)
      for (const complex& c : at_time) current.push_back(c * per_time);
    const std::size_t point = static_cast<std::size_t>(i / e.realizations);
    for (std::size_t k = 0; k < current.size(); ++k) {
      record.current.at(k) += current[k];
      if (sweeps) out.sweep_current.at(point * current.size() + k) += current[k];
    }
    file->add(r.statistics.steps, r.worker, e.members.parameters(i), e.members.hamiltonian(i), r.rho, current);
    if (sweeps) {
      // Each sweep point's mean over its realizations (members point * R .. point * R + R - 1), summed
      // in member order as ensemble_mean sums.
      if (i % e.realizations == 0) point_sum.assign(nt, Matrix(static_cast<int>(n), static_cast<int>(n)));
      for (std::size_t t = 0; t < nt; ++t) point_sum[t] += r.rho[t];
      if ((i + 1) % e.realizations == 0)
        for (Matrix& m : point_sum) {
          for (std::size_t k = 0; k < n * n; ++k) m.data()[k] /= static_cast<double>(e.realizations);
          out.sweep_mean.insert(out.sweep_mean.end(), m.data(), m.data() + n * n);
        }
    }
  };

  const auto start = std::chrono::steady_clock::now();
  EnsembleSummary summary;
  {
    Progress progress(0.0, static_cast<double>(count), "", reporter ? stderr : nullptr, "members");
    options.progress = [&](std::int64_t finished, std::int64_t) { progress.update(static_cast<double>(finished)); };
    summary = stream_ensemble(Exec(), stream, times, options);
  }
  if (!reporter) return 0;

  record.rho = summary.mean;
  record.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.threads = Exec().concurrency();
  record.devices = workers;
  out.members = static_cast<long long>(count);
  out.realizations = e.realizations;
  out.sweep_points = e.sweep_points;
  out.seed = e.seed;
  out.energy_unit = io::unit_scale(config.units).energy_unit;
  out.site_energy_sigma = e.site_energy_sigma;
  out.parameter_names = e.parameter_names;
  for (complex& c : record.current) c /= static_cast<double>(count);
  for (complex& c : out.sweep_current) c /= static_cast<double>(e.realizations);
  file->finish(record);
  std::printf("done: %lld members, %lld steps (%lld rejected), %lld generator evaluations, %s; wrote %s\n",
              static_cast<long long>(count), static_cast<long long>(record.statistics.steps),
              static_cast<long long>(record.statistics.rejected),
              static_cast<long long>(record.statistics.rhs_evaluations), format_duration(record.wall_time_s).c_str(),
              output_path.c_str());
  return 0;
}

}  // namespace heom::app
