// Solving for steady states in the heom program.
#include "run_steady.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "heom/core/backend_traits.hpp"
#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/generator/options.hpp"
#include "heom/hierarchy/memory_plan.hpp"
#include "heom/solver/lead_currents.hpp"
#include "commands.hpp"
#include "plans.hpp"
#include "progress.hpp"

namespace heom::app {

SteadyStateReport solve_steady(Solver<Exec>& solver, const io::RunConfig& config, bool reporter) {
  if (config.has_initial_state) solver.set_initial_state(config.rho0);
  SteadyStateOptions options = config.steady;
  Progress progress(0.0, -std::log10(options.tolerance), "", reporter ? stderr : nullptr, "-log10(residual)");
  options.progress = [&](int, double residual) { progress.update(-std::log10(residual)); };
  try {
    return solver.solve_steady_state(options);
  } catch (const OutOfMemoryError& e) {  // (what the input can change is the cycle's length)
    throw io::InputError(config.input_name + ": steady.restart: " + e.what());
  }
}

io::SteadyRecord steady_record(const Solver<Exec>& solver, const SteadyStateReport& report,
                               const SteadyStateOptions& options, bool with_ados, io::Units units) {
  io::SteadyRecord s;
  s.rho = solver.rho();
  s.residual = report.residual;
  s.rate = report.rate;
  s.tolerance = options.tolerance;
  s.iterations = report.iterations;
  s.cycles = report.cycles;
  s.preconditioner = to_string(options.preconditioner);
  s.fell_back = report.fell_back;
  if (solver.model().has_fermionic_bath()) {
    // Per unit of the output's time (the solver's is scale.time of them).
    const double per_time = io::unit_scale(units).time;
    for (const complex& c : lead_currents(Exec(), solver.model(), solver.hierarchy(), solver.ados()))
      s.current.push_back(c * per_time);
  }
  if (with_ados) {
    const auto ados = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), solver.ados());
    s.ados.resize(ados.size());
    for (std::size_t i = 0; i < ados.size(); ++i) s.ados[i] = complex(ados.data()[i].real(), ados.data()[i].imag());
    s.ado_labels = solver.hierarchy().labels_table();
  }
  return s;
}

void require_one_device(const MpiJob& job, const Devices& devices, const char* what) {
  if (job.communicator() || devices.count > 1)
    throw io::InputError(std::string("--devices: ") + what +
                         " runs on one device (it is not split between devices or ranks)");
}

int run_steady(const io::RunConfig& config, const std::string& output_path, const MpiJob& job, const Devices& devices) {
  if (config.ensemble) throw io::InputError("ensemble: heom steady solves one model; remove [ensemble]");
  require_one_device(job, devices, "heom steady");
  const MemoryPlan plan = memory_plan(config, AdoShape::square, Observes::rho);
  print_plan(config, plan, BackendTraits<Exec>::available_memory(Exec()), output_path);
  print_steady_plan(config.steady, config, plan);
  const auto start = std::chrono::steady_clock::now();
  SolverOptions options = config.solver;
  Solver<Exec> solver(Exec(), config.model, config.depth, options);
  const SteadyStateReport report = solve_steady(solver, config, true);
  io::RunRecord record = describe_run(config);
  record.times.clear();
  record.steady = steady_record(solver, report, config.steady, config.write_ados, config.units);
  record.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.generator_kernel = to_string(solver.kernel());
  record.threads = Exec().concurrency();
  record.statistics = solver.statistics();
  io::write_run_record(output_path, record);
  std::printf("done: residual %.3g after %d GMRES iterations (%d cycles%s), %s; wrote %s\n", report.residual,
              report.iterations, report.cycles, report.fell_back ? ", after propagating" : "",
              format_duration(record.wall_time_s).c_str(), output_path.c_str());
  return 0;
}

}  // namespace heom::app
