// Options checked once: each options struct's validate() names the field at fault, the builder of
// SolverOptions from a run's settings names the setting, and a request for devices is checked against
// the backend, Kokkos and the GPUs and threads there are.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heom/distributed/devices.hpp"
#include "heom/solver/solver_options.hpp"
#include "heom/solver/steady_state_options.hpp"

namespace {

std::string field_of(const std::optional<heom::OptionProblem>& problem) { return problem ? problem->field : ""; }

TEST(SolverOptions, ValidateNamesTheFieldAtFault) {
  heom::SolverOptions o;
  EXPECT_EQ(field_of(o.validate()), "") << "the defaults are valid";
  o.integrator.rtol = -1.0;
  EXPECT_EQ(field_of(o.validate()), "integrator.rtol");
  EXPECT_EQ(o.validate()->message(), "integrator.rtol: must be > 0, got -1");
  o = {};
  o.generator.team_size = -2;
  EXPECT_EQ(field_of(o.validate()), "generator.team_size");
  o = {};
  o.importance_threshold = -1.0;
  EXPECT_EQ(field_of(o.validate()), "importance_threshold");
  o = {};
  o.partition = {0, 10};
  EXPECT_EQ(field_of(o.validate()), "partition");
  o = {};
  o.generator.shape = heom::AdoShape::ground_column;
  o.observe_lead_currents = true;
  EXPECT_EQ(field_of(o.validate()), "observe_lead_currents");
}

TEST(SolverOptions, OneBuilderNamesTheSettings) {
  // The names the program's [dynamics] and [hierarchy] keys and Python's keyword arguments share.
  heom::RunSettings settings;
  settings.method = "dopri5";
  settings.rtol = 1e-6;
  settings.threshold = 1e-5;
  settings.kernel = "host-block";
  const heom::SolverOptions o = heom::make_solver_options(settings);
  EXPECT_EQ(o.integrator.method, heom::Method::dopri5);
  EXPECT_EQ(o.integrator.rtol, 1e-6);
  EXPECT_EQ(o.importance_threshold, 1e-5);
  EXPECT_EQ(o.generator.kernel, heom::GeneratorKernel::host_block);
  const auto refused = [](heom::RunSettings s) -> std::string {
    try {
      (void)heom::make_solver_options(s);
    } catch (const heom::OptionError& e) {
      return e.what();
    }
    return "";
  };
  heom::RunSettings bad;
  bad.rtol = 1e-16;
  EXPECT_EQ(refused(bad), "rtol: must be >= 1e-14 (double precision), got 1e-16");
  bad = {};
  bad.threshold = -1.0;
  EXPECT_EQ(refused(bad).rfind("threshold: must be finite and >= 0", 0), 0u) << refused(bad);
  bad = {};
  bad.method = "euler";
  EXPECT_EQ(refused(bad).rfind("method: unknown method \"euler\"", 0), 0u) << refused(bad);
  bad = {};
  bad.kernel = "fastest";
  EXPECT_EQ(refused(bad).rfind("kernel: unknown kernel \"fastest\"", 0), 0u) << refused(bad);
  bad = {};
  bad.method = "rk4";
  EXPECT_EQ(refused(bad), "step: must be > 0 for rk4, got 0");
  bad = {};
  bad.max_order = 4;
  bad.method = "dopri5";
  EXPECT_EQ(refused(bad), "max_order: applies to exp-adams only, not dopri5");
}

TEST(SteadyStateOptions, ValidateNamesTheFieldAtFault) {
  heom::SteadyStateOptions o;
  EXPECT_EQ(field_of(o.validate()), "");
  o.tolerance = 1e-16;
  EXPECT_EQ(field_of(o.validate()), "tolerance");
  o = {};
  o.restart = 0;
  EXPECT_EQ(field_of(o.validate()), "restart");
  o = {};
  o.max_iterations = 0;
  EXPECT_EQ(field_of(o.validate()), "max_iterations");
  o = {};
  o.fallback_time = -1.0;
  EXPECT_EQ(field_of(o.validate()), "fallback_time");
  EXPECT_THROW(heom::require_valid(o.validate(), "steady state"), heom::OptionError);
}

TEST(Devices, ValidateAgainstTheBackendAndWhatThereIs) {
  const auto check = [](int count, std::vector<int> gpu_ids, const heom::DeviceContext& context, bool running) {
    return heom::Devices{count, std::move(gpu_ids)}.validate(context, running);
  };
  const heom::DeviceContext cpu{"OpenMP", false, true, 0, 2};
  EXPECT_EQ(field_of(check(1, {}, cpu, true)), "");
  EXPECT_EQ(check(0, {}, cpu, false)->message(), "count: must be >= 1, got 0");
  EXPECT_EQ(check(2, {0}, cpu, false)->message().rfind("gpu_ids: chooses GPUs", 0), 0u);  // (no GPUs here)
  EXPECT_EQ(field_of(check(2, {}, cpu, true)), "");
  // More simulated devices than threads, where they are known; not for a plan.
  EXPECT_EQ(field_of(check(3, {}, cpu, true)), "count");
  EXPECT_EQ(field_of(check(3, {}, cpu, false)), "");
  const heom::DeviceContext old_kokkos{"Serial", false, false, 0, 1};
  EXPECT_NE(check(2, {}, old_kokkos, true)->problem.find("several devices in one process"), std::string::npos);
  const heom::DeviceContext gpus{"Cuda", true, true, 2, 0};
  EXPECT_EQ(field_of(check(2, {0, 1}, gpus, true)), "");
  EXPECT_EQ(field_of(check(1, {0, 1}, gpus, true)), "gpu_ids");  // (two GPUs for one device)
  EXPECT_EQ(check(2, {0, 7}, gpus, true)->message().rfind("gpu_ids: GPU 7 is not there", 0), 0u);
  EXPECT_EQ(field_of(check(2, {0, 7}, gpus, false)), "");  // (a plan for GPUs elsewhere)
  EXPECT_EQ(field_of(check(3, {}, gpus, true)), "count");  // (3 devices, 2 GPUs, none named)
}

}  // namespace
