// What the heom program prints as a run's plan, and the plan's numbers: memory, ADO shape, output size.
#ifndef HEOM_APP_PLANS_HPP
#define HEOM_APP_PLANS_HPP

#include <cstdint>
#include <string>

#include "heom/generator/options.hpp"
#include "heom/hierarchy/memory_plan.hpp"
#include "heom/solver/steady_state_options.hpp"
#include "io/hdf5_output.hpp"
#include "io/input.hpp"

namespace heom::app {

/// How a run holds each ADO: an absorption spectrum's propagations start from mu |0><0| and keep
/// column 0 alone, every other run the whole block.
AdoShape ado_shape(const io::RunConfig& c);

/// The model whose hierarchy a run propagates: a [response]'s manifolds, else the input's.
const Model& hierarchy_model(const io::RunConfig& c);

/// What a run observes beside rho, for its memory plan.
enum class Observes { rho, rho_and_lead_currents };

/// A run's memory on one device (a split hierarchy's devices: MemoryPlan::share), its ADOs held in
/// `shape`. `heom run` observes its leads' currents (a fermionic bath's; a full output vector more).
MemoryPlan memory_plan(const io::RunConfig& c, AdoShape shape = AdoShape::square,
                       Observes observes = Observes::rho_and_lead_currents);

/// A [response]'s memory beside memory_plan's three states of the whole model: the bleach and
/// emission's ground-column state and, where they run on the model without the two-exciton states,
/// that model's two states through t1 and the waiting times.
std::uint64_t response_side_bytes(const io::RunConfig& c);

void print_plan(const io::RunConfig& c, const MemoryPlan& plan, std::uint64_t available, const std::string& output);

/// The [response] part of the plan: the manifolds, the propagations and the time they span (run_response.cpp).
void print_response_plan(const io::RunConfig& c);

/// `heom fit`: every fitted spectral-density bath of `c` as a [[bath]] of kind "exponents" in the
/// input's units, each after a comment with its fit; empty when `c` has none.
std::string fitted_baths_toml(const io::RunConfig& c);

/// What describes a run of `config` in its output, whoever runs it.
io::RunRecord describe_run(const io::RunConfig& config);
/// What describes its [ensemble] in /ensemble's attributes: member counts, seed, units, disorder and
/// swept parameters' names (the per-member datasets are the runner's).
void describe_ensemble(const io::RunConfig& config, io::EnsembleRecord& out);

/// The steady-state solve's lines of the plan.
void print_steady_plan(const SteadyStateOptions& o, const io::RunConfig& c, const MemoryPlan& plan);

/// The [ensemble] part of the plan: its members, disorder and sweeps, and where they run.
void print_ensemble_plan(const io::RunConfig& c, const std::string& workers);

/// `heom plan --devices N`: each device's share of the hierarchy split N ways, and a refusal (naming
/// the smallest N that fits) when a device's share does not fit in `device_bytes`.
void print_device_plan(const io::RunConfig& c, const MemoryPlan& plan, int devices, std::uint64_t device_bytes);

/// About how many bytes the output of `config` takes (rho(t), stored ADOs, an ensemble's members, a
/// spectrum), with 1 MiB for the input and attributes.
std::uint64_t output_bytes(const io::RunConfig& c, bool steady);

}  // namespace heom::app

#endif
