// heom::make_integrator: the integrator a method names (IntegratorOptions::method).
#ifndef HEOM_INTEGRATOR_MAKE_INTEGRATOR_HPP
#define HEOM_INTEGRATOR_MAKE_INTEGRATOR_HPP

#include <memory>

#include "heom/generator/generator.hpp"
#include "heom/integrator/dormand_prince.hpp"
#include "heom/integrator/exponential_adams.hpp"
#include "heom/integrator/faber_propagator.hpp"
#include "heom/integrator/integrator.hpp"
#include "heom/integrator/low_storage_rk4.hpp"
#include "heom/integrator/options.hpp"
#include "heom/integrator/rk4.hpp"

namespace heom {

/// The integrator `options.method` names, for `generator`'s vectors; its state is zero at t = 0. Throws
/// heom::OptionError for options that IntegratorOptions::validate refuses.
template <class ExecSpace>
std::unique_ptr<Integrator<ExecSpace>> make_integrator(const ExecSpace& exec, const Generator<ExecSpace>& generator,
                                                       const IntegratorOptions& options) {
  require_valid(options.validate());
  switch (options.method) {
    case Method::exp_adams:
    case Method::automatic:  // (it starts with exp-adams: HierarchyState may hand over to chebyshev)
      return std::make_unique<ExponentialAdams<ExecSpace>>(exec, generator, options);
    case Method::dopri5:
      return std::make_unique<DormandPrince54<ExecSpace>>(exec, generator, options);
    case Method::lsrk4:
      return std::make_unique<LowStorageRk4<ExecSpace>>(exec, generator, options);
    case Method::chebyshev:
      return std::make_unique<FaberPropagator<ExecSpace>>(exec, generator, options);
    case Method::rk4:
      break;
  }
  return std::make_unique<Rk4<ExecSpace>>(exec, generator, options);
}

}  // namespace heom

#endif
