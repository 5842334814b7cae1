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
#include "test_hooks.hpp"

namespace heom::app {

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

  std::vector<EnsembleMember> members;
  members.reserve(e.members.size());
  for (const io::EnsembleMemberConfig& m : e.members) members.push_back({m.model, m.rho0});
  EnsembleOptions options;
  options.depth = config.depth;
  options.solver = solver_options(config);
  options.solver.observe_lead_currents = config.model.has_fermionic_bath();
  options.devices = std::max(devices.count, 1);
  options.gpu_ids = devices.gpu_ids;
  options.ranks = ranks;
  options.batch = e.batch;
  const InjectedFailure failure = InjectedFailure::from_environment();
  std::vector<long long> steps(options.devices, 0);  // per device of this process (each its own thread)
  options.on_step = [&](int worker, double) { failure.check(worker, ++steps[worker % options.devices]); };
  const auto start = std::chrono::steady_clock::now();
  EnsembleResult result;
  {
    Progress progress(0.0, static_cast<double>(members.size()), "", reporter ? stderr : nullptr, "members");
    options.progress = [&](std::int64_t finished, std::int64_t) { progress.update(static_cast<double>(finished)); };
    result = run_ensemble(Exec(), members, config.output_times(), options);
  }
  if (!reporter) return 0;

  io::RunRecord record = describe_run(config);
  record.rho = result.mean;
  record.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.generator_kernel = to_string(result.members.front().kernel);
  record.threads = Exec().concurrency();
  record.devices = workers;
  io::EnsembleRecord& out = record.ensemble.emplace();
  out.members = static_cast<long long>(members.size());
  out.realizations = e.realizations;
  out.sweep_points = e.sweep_points;
  out.seed = e.seed;
  out.energy_unit = io::unit_scale(config.units).energy_unit;
  out.site_energy_sigma = e.site_energy_sigma;
  out.parameter_names = e.parameter_names;
  const std::size_t n2 = static_cast<std::size_t>(config.model.dimension()) * config.model.dimension();
  for (std::size_t i = 0; i < members.size(); ++i) {
    const MemberResult& r = result.members[i];
    record.statistics.steps += r.statistics.steps;
    record.statistics.rejected += r.statistics.rejected;
    record.statistics.rhs_evaluations += r.statistics.rhs_evaluations;
    out.steps.push_back(r.statistics.steps);
    out.workers.push_back(r.worker);
    out.parameters.insert(out.parameters.end(), e.members[i].parameters.begin(), e.members[i].parameters.end());
    out.hamiltonians.insert(out.hamiltonians.end(), e.members[i].hamiltonian.data(),
                            e.members[i].hamiltonian.data() + n2);
    if (e.store_members)
      for (const Matrix& m : r.rho) out.member_rho.insert(out.member_rho.end(), m.data(), m.data() + n2);
  }
  if (options.solver.observe_lead_currents) {
    // Each member's currents, and their mean (summed in member order), per unit of the output's time.
    const double per_time = io::unit_scale(config.units).time;
    record.current.assign(result.times.size() * config.model.baths().size(), 0.0);
    for (const MemberResult& r : result.members) {
      std::size_t i = 0;
      for (const auto& at_time : r.lead_currents)
        for (const complex& c : at_time) {
          out.member_current.push_back(c * per_time);
          record.current.at(i++) += c * per_time;
        }
    }
    for (complex& c : record.current) c /= static_cast<double>(members.size());
    if (!e.parameter_names.empty()) {
      // Each sweep point's mean over its realizations (members point * R .. point * R + R - 1).
      const std::size_t per_member = record.current.size();
      out.sweep_current.assign(static_cast<std::size_t>(e.sweep_points) * per_member, 0.0);
      for (std::size_t m = 0; m < members.size(); ++m)
        for (std::size_t i = 0; i < per_member; ++i)
          out.sweep_current[m / e.realizations * per_member + i] += out.member_current[m * per_member + i];
      for (complex& c : out.sweep_current) c /= static_cast<double>(e.realizations);
    }
  }
  if (!e.parameter_names.empty()) {
    // Each sweep point's mean over its realizations (members point * R .. point * R + R - 1).
    for (std::int64_t point = 0; point < e.sweep_points; ++point) {
      const std::vector<Matrix> mean =
          ensemble_mean(result.members.data() + point * e.realizations, static_cast<std::size_t>(e.realizations));
      for (const Matrix& m : mean) out.sweep_mean.insert(out.sweep_mean.end(), m.data(), m.data() + n2);
    }
  }
  io::write_run_record(output_path, record);
  std::printf("done: %zu members, %lld steps (%lld rejected), %lld generator evaluations, %s; wrote %s\n",
              members.size(), static_cast<long long>(record.statistics.steps),
              static_cast<long long>(record.statistics.rejected),
              static_cast<long long>(record.statistics.rhs_evaluations), format_duration(record.wall_time_s).c_str(),
              output_path.c_str());
  return 0;
}

}  // namespace heom::app
