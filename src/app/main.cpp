// The heom program: `heom run INPUT.toml`, `heom plan INPUT.toml`, and `heom` alone for the bundled
// FMO example. Bad input exits with 2 and one line naming the key; a failed run exits with 1.
#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "heom/config.hpp"
#include "heom/core/kokkos_compat.hpp"
#include "heom/heom.hpp"
#include "io/hdf5_output.hpp"
#include "io/input.hpp"
#include "progress.hpp"

namespace heom::app {

extern const char* const embedded_fmo_input;  // example/fmo_77k.toml, compiled in

namespace {

using Exec = Kokkos::DefaultExecutionSpace;

constexpr int exit_bad_input = 2;
constexpr int exit_run_failed = 1;

std::string default_output_path(const std::string& input_path) {
  std::string name = input_path;
  const auto slash = name.find_last_of('/');
  if (slash != std::string::npos) name = name.substr(slash + 1);
  const auto dot = name.rfind(".toml");
  if (dot != std::string::npos && dot + 5 == name.size()) name = name.substr(0, dot);
  return name + ".h5";
}

void print_plan(const io::RunConfig& c, const MemoryPlan& plan, std::uint64_t available, const std::string& output) {
  const io::UnitScale scale = io::unit_scale(c.units);
  std::printf("heom %s: %s\n", HEOM_VERSION_STRING, c.input_name.c_str());
  std::printf("  system      dimension %d, units %s%s\n", c.model.dimension(), io::to_string(c.units),
              c.units == io::Units::spectroscopy ? " (solver works in rad/fs and fs)" : "");
  std::printf("  baths       %zu\n", c.model.baths().size());
  for (std::size_t b = 0; b < c.model.baths().size(); ++b) {
    const Bath& bath = c.model.baths()[b];
    std::printf("    bath %-3zu  %s, %d exponents, %s coupling%s\n", b + 1, bath.description().c_str(),
                bath.num_exponents(), bath.coupling().is_diagonal() ? "diagonal" : "dense",
                bath.has_terminator()
                    ? (", terminator Delta = " + std::to_string(bath.terminator_delta().real())).c_str()
                    : "");
    for (const Exponent& e : bath.exponents()) {
      std::printf("                %-2s c = (%.6g, %.6g)", to_string(e.kind), e.c.real(), e.c.imag());
      if (e.kind == ExponentKind::RI) std::printf("  c2 = (%.6g, %.6g)", e.c2.real(), e.c2.imag());
      std::printf("  v = (%.6g, %.6g)\n", e.v.real(), e.v.imag());
    }
  }
  std::printf("  hierarchy   K = %d exponents, depth %d, %llu ADOs\n", c.model.num_exponents(), c.depth,
              static_cast<unsigned long long>(plan.num_ados));
  std::printf("  memory      %s per state vector x %d + tables %s = %s (%s available)\n",
              format_bytes(plan.bytes_per_vector).c_str(), plan.state_vectors, format_bytes(plan.bytes_tables).c_str(),
              format_bytes(plan.bytes_total).c_str(), available > 0 ? format_bytes(available).c_str() : "unknown");
  std::printf("  backend     %s\n", BackendTraits<Exec>::describe(Exec()).c_str());
  if (is_adaptive(c.integrator.method))
    std::printf("  integrator  %s, rtol %g, atol %g\n", to_string(c.integrator.method), c.integrator.rtol,
                c.integrator.atol);
  else
    std::printf("  integrator  %s, step %g %s\n", to_string(c.integrator.method), c.integrator.step / scale.time,
                scale.time_unit);
  const auto times = c.output_times();
  std::printf("  output      t = 0 .. %g %s every %g (%zu times) -> %s\n", c.t_end / scale.time, scale.time_unit,
              c.output_every / scale.time, times.size(), output.c_str());
  std::fflush(stdout);
}

int run(const io::RunConfig& config, const std::string& output_path) {
  const io::UnitScale scale = io::unit_scale(config.units);
  const MemoryPlan plan = MemoryPlan::make(config.model.dimension(), config.model.num_exponents(), config.depth,
                                           state_vectors(config.integrator.method));
  const std::uint64_t available = BackendTraits<Exec>::available_memory(Exec());
  print_plan(config, plan, available, output_path);

  SolverOptions options;
  options.integrator = config.integrator;
  const auto start = std::chrono::steady_clock::now();
  Solver<Exec> solver(Exec(), config.model, config.depth, options);
  solver.set_initial_state(config.rho0);
  std::printf("  generator   %s kernel\n", to_string(solver.generator().kernel()));
  std::fflush(stdout);

  io::RunRecord record;
  record.times = config.output_times();
  {
    Progress progress(0.0, config.t_end, scale.time_unit);  // clears its line however the run ends
    solver.run(
        record.times, [&](const Snapshot<Exec>& s) { record.rho.push_back(s.rho()); },
        [&](double t) { progress.update(t); });
  }
  record.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  record.input_text = config.input_text;
  record.units = io::to_string(config.units);
  record.time_unit = scale.time_unit;
  record.dimension = config.model.dimension();
  record.num_exponents = config.model.num_exponents();
  record.depth = config.depth;
  record.num_ados = solver.hierarchy().size();
  record.backend = Exec::name();
  record.generator_kernel = to_string(solver.generator().kernel());
  record.threads = Exec().concurrency();
  record.method = to_string(config.integrator.method);
  record.rtol = is_adaptive(config.integrator.method) ? config.integrator.rtol : 0.0;
  record.atol = is_adaptive(config.integrator.method) ? config.integrator.atol : 0.0;
  record.step = config.integrator.step / scale.time;
  record.statistics = solver.statistics();
  if (config.write_ados) {
    record.has_ados = true;
    const auto ados = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), solver.ados());
    record.ados_final.resize(ados.size());
    for (std::size_t i = 0; i < ados.size(); ++i)
      record.ados_final[i] = complex(ados.data()[i].real(), ados.data()[i].imag());
    record.ado_labels = solver.hierarchy().labels_table();
  }
  io::write_run_record(output_path, record);
  std::printf("done: %lld steps (%lld rejected), %lld generator evaluations, %s; wrote %s\n",
              static_cast<long long>(record.statistics.steps), static_cast<long long>(record.statistics.rejected),
              static_cast<long long>(record.statistics.rhs_evaluations), format_duration(record.wall_time_s).c_str(),
              output_path.c_str());
  return 0;
}

/// Pins OpenMP threads unless the user chose otherwise (Kokkos advises it, and warns without it).
void default_thread_affinity() {
  setenv("OMP_PROC_BIND", "spread", 0);
  setenv("OMP_PLACES", "threads", 0);
}

}  // namespace
}  // namespace heom::app

int main(int argc, char* argv[]) {
  using namespace heom;
  CLI::App app{
      "heom: hierarchical equations of motion on Kokkos (CPUs and GPUs).\n"
      "Without a subcommand, runs the bundled FMO example and writes fmo.h5.",
      "heom"};
  app.set_version_flag("--version", std::string("heom ") + HEOM_VERSION_STRING + " (Kokkos " +
                                        std::to_string(KOKKOS_VERSION / 10000) + "." +
                                        std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
                                        std::to_string(KOKKOS_VERSION % 100) + ")");
  app.require_subcommand(0, 1);
  std::string input, output;
  int threads = 0;
  CLI::App* run_cmd = app.add_subcommand("run", "Validate INPUT, print the plan, run it and write the HDF5 output");
  run_cmd->add_option("input", input, "TOML input file")->required();
  run_cmd->add_option("-o,--output", output, "HDF5 output file (default: [output] file, else INPUT with .h5)");
  run_cmd->add_option("--threads", threads, "host threads (default: OpenMP's choice)")->check(CLI::PositiveNumber);
  CLI::App* plan_cmd =
      app.add_subcommand("plan", "Validate INPUT and print the plan, without allocating the hierarchy");
  plan_cmd->add_option("input", input, "TOML input file")->required();
  plan_cmd->add_option("--threads", threads, "host threads (default: OpenMP's choice)")->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : app::exit_bad_input;
  }

  app::default_thread_affinity();
  std::vector<std::string> kokkos_args = {argv[0]};
  if (threads > 0) kokkos_args.push_back(impl::kokkos_threads_argument(threads));
  std::vector<char*> kokkos_argv;
  for (auto& a : kokkos_args) kokkos_argv.push_back(a.data());
  int kokkos_argc = static_cast<int>(kokkos_argv.size());
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv.data());

  try {
    const bool bundled = !run_cmd->parsed() && !plan_cmd->parsed();
    const io::RunConfig config =
        bundled ? io::parse_run_config(app::embedded_fmo_input, "<bundled fmo_77k.toml>") : io::read_run_config(input);
    std::string path = output;
    if (path.empty())
      path = bundled ? "fmo.h5" : (config.output_file.empty() ? app::default_output_path(input) : config.output_file);
    if (plan_cmd->parsed()) {
      const MemoryPlan plan = MemoryPlan::make(config.model.dimension(), config.model.num_exponents(), config.depth,
                                               state_vectors(config.integrator.method));
      const auto available = BackendTraits<app::Exec>::available_memory(app::Exec());
      app::print_plan(config, plan, available, path);
      if (available > 0) plan.require_fits(available, std::string(app::Exec::name()) + " memory");
      return 0;
    }
    return app::run(config, path);
  } catch (const io::InputError& e) {
    std::fprintf(stderr, "heom: %s\n", e.what());
    return app::exit_bad_input;
  } catch (const OutOfMemoryError& e) {
    std::fprintf(stderr, "heom: hierarchy.depth: %s\n", e.what());
    return app::exit_bad_input;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heom: run failed: %s\n", e.what());
    return app::exit_run_failed;
  }
}
