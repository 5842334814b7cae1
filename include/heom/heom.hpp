// Everything a program needs to build a model and run heom on a Kokkos device.
#ifndef HEOM_HEOM_HPP
#define HEOM_HEOM_HPP

#include "heom/config.hpp"
#include "heom/core/backend_traits.hpp"
#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/ensemble/disorder.hpp"
#include "heom/ensemble/ensemble.hpp"
#include "heom/generator/generator.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/hierarchy/memory_plan.hpp"
#include "heom/integrator/options.hpp"
#include "heom/model/bath.hpp"
#include "heom/model/correlation.hpp"
#include "heom/model/correlation_fit.hpp"
#include "heom/model/exponent.hpp"
#include "heom/model/aggregate.hpp"
#include "heom/model/model.hpp"
#include "heom/model/spectral_density.hpp"
#include "heom/solver/correlation_function.hpp"
#include "heom/solver/lead_currents.hpp"
#include "heom/solver/response.hpp"
#include "heom/solver/solver.hpp"
#include "heom/solver/solver_state.hpp"
#include "heom/solver/spectral_function.hpp"

#endif
