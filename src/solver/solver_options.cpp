// SolverOptions' checks, and the one builder of SolverOptions from a run's settings.
#include "heom/solver/solver_options.hpp"

#include <cmath>
#include <string>

namespace heom {

std::optional<OptionProblem> SolverOptions::validate() const {
  if (auto problem = integrator.validate()) return problem->within("integrator");
  if (auto problem = generator.validate()) return problem->within("generator");
  if (!(importance_threshold >= 0.0) || !std::isfinite(importance_threshold))
    return OptionProblem{"importance_threshold", "must be finite and >= 0, got " + format_number(importance_threshold)};
  if (!communicator && !partition.empty())
    return OptionProblem{"partition", "was given without a communicator: it splits a hierarchy between devices"};
  const bool columns = generator.shape == AdoShape::ground_column;
  if (communicator && columns)
    return OptionProblem{"generator.shape", "the ground-column shape runs on one device, not a split hierarchy"};
  if (communicator && observe_all_ados)
    return OptionProblem{"observe_all_ados",
                         "on a split hierarchy each device holds only its own ADOs (Solver::ados())"};
  if (observe_lead_currents && columns)
    return OptionProblem{"observe_lead_currents",
                         "the currents read whole first-tier blocks, which ground columns leave out"};
  return std::nullopt;
}

SolverOptions make_solver_options(const RunSettings& settings) {
  SolverOptions options;
  const std::optional<Method> method = method_named(settings.method);
  if (!method)
    throw OptionError({"method", "unknown method \"" + settings.method + "\" (expected " + method_names() + ")"});
  const std::optional<GeneratorKernel> kernel = kernel_named(settings.kernel);
  if (!kernel)
    throw OptionError({"kernel", "unknown kernel \"" + settings.kernel + "\" (expected " + kernel_names() + ")"});
  options.integrator.method = *method;
  options.integrator.rtol = settings.rtol;
  options.integrator.atol = settings.atol;
  options.integrator.step = settings.step;
  options.integrator.max_step = settings.max_step;
  options.integrator.max_order = settings.max_order;
  options.generator.kernel = *kernel;
  options.importance_threshold = settings.threshold;
  options.memory_limit = settings.memory_limit;
  options.observe_lead_currents = settings.observe_lead_currents;
  if (std::optional<OptionProblem> problem = options.validate()) {
    // The settings' names for the fields they set.
    const std::pair<const char*, const char*> names[] = {
        {"integrator.", ""}, {"generator.kernel", "kernel"}, {"importance_threshold", "threshold"}};
    for (const auto& [field, name] : names)
      if (problem->field.rfind(field, 0) == 0) problem->field = name + problem->field.substr(std::string(field).size());
    throw OptionError(*problem);
  }
  return options;
}

}  // namespace heom
