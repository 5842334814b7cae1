// heom::SolverOptions: what a Solver (or Propagator) is asked for besides the model and the depth, its
// checks, and heom::RunSettings: the settings the program's input and the Python module share, by the
// names both give them, and the one builder of SolverOptions from them. Host types alone (no Kokkos):
// the program's input reader includes it.
#ifndef HEOM_SOLVER_SOLVER_OPTIONS_HPP
#define HEOM_SOLVER_SOLVER_OPTIONS_HPP

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/distributed/communicator.hpp"
#include "heom/generator/options.hpp"
#include "heom/integrator/options.hpp"

namespace heom {

struct SolverOptions {
  IntegratorOptions integrator;
  /// Which generator kernel runs (automatic: the fastest that can; GeneratorKernel). The hermitian
  /// kernel needs a Hermitian initial state.
  GeneratorOptions generator;
  /// Observers of run() see every ADO (Snapshot::ados holds all of them) rather than rho alone. With
  /// the adaptive methods that costs one more full vector, for interpolating every ADO at the output
  /// times.
  bool observe_all_ados = false;
  /// Observers of run() see the particle current into each fermionic lead (Snapshot::lead_currents,
  /// as heom::lead_currents; every member's in a batch). With the adaptive methods that costs one more
  /// full vector, for interpolating the first tier. On a split hierarchy (every device must ask for
  /// them) each device computes the terms of the ADOs it owns; they are gathered and summed in one
  /// order (the same bits as on one device). Needs square ADO blocks (not ground columns).
  bool observe_lead_currents = false;
  /// Importance truncation of the hierarchy (ImportanceTruncation, with the model's exponent weights):
  /// ADOs of tier 2 and deeper whose importance value is below this are left out. 0: the whole
  /// hierarchy up to the depth.
  double importance_threshold = 0.0;
  /// Bytes the hierarchy may occupy on the device; 0: what the device reports as available.
  std::uint64_t memory_limit = 0;
  /// Several devices, one hierarchy: this device's end of the group that shares it (one part per
  /// device; see heom::Communicator). Every device constructs its Solver with the same model, depth
  /// and options and makes the same calls; the result is bit-identical to one device's. nullptr: one
  /// device.
  std::shared_ptr<const Communicator> communicator;
  /// With a communicator: the partition's boundaries (Partition::from_boundaries); empty: balanced.
  std::vector<int> partition;

  /// The first field at fault ("integrator.rtol", "observe_all_ados", ...) and why: what can be told
  /// without the model (which the Solver checks against it).
  std::optional<OptionProblem> validate() const;
};

/// A run's settings as the program's input ([dynamics] and [hierarchy] keys) and the Python module
/// (keyword arguments) name them: each front end fills these and make_solver_options turns them into
/// SolverOptions, so that both accept and refuse the same values with the same words.
struct RunSettings {
  std::string method = "automatic";  ///< IntegratorOptions::method by name (to_string's)
  double rtol = IntegratorOptions{}.rtol;
  double atol = IntegratorOptions{}.atol;
  double step = 0.0;  ///< in the model's time unit
  double max_step = 0.0;
  int max_order = IntegratorOptions{}.max_order;
  std::string kernel = "automatic";  ///< GeneratorOptions::kernel by name (to_string's)
  double threshold = 0.0;            ///< SolverOptions::importance_threshold
  std::uint64_t memory_limit = 0;
  bool observe_lead_currents = false;
};

/// The SolverOptions `settings` ask for. Throws heom::OptionError whose field is the setting's name
/// ("rtol", "threshold", "kernel", ...) when one is refused.
SolverOptions make_solver_options(const RunSettings& settings);

}  // namespace heom

#endif
