// The input's section readers (internal), which parse_document calls: [dynamics], [[bath]], [[system.drive]],
// [steady], [spectrum], [ensemble].
#ifndef HEOM_IO_INPUT_SECTIONS_HPP
#define HEOM_IO_INPUT_SECTIONS_HPP

#include <functional>
#include <string>
#include <vector>

#include "heom/model/bath.hpp"
#include "heom/model/drive.hpp"
#include "heom/solver/solver_options.hpp"
#include "heom/solver/steady_state_options.hpp"
#include "io/input.hpp"
#include "io/toml_reader.hpp"
#include "io/units.hpp"

namespace heom::io::impl {

/// The run a document describes; its [ensemble] too when `with_ensemble` (not when the document is
/// one point of the ensemble's sweeps).
RunConfig parse_document(const toml::table& doc, const std::string& text, const std::string& file,
                         bool with_ensemble = true);

/// [dynamics]: the output times (solver units) and the integrator's settings.
struct DynamicsSection {
  double t_end = 0.0;
  double output_every = 0.0;
  RunSettings settings;
};
DynamicsSection read_dynamics(TableReader& dynamics, const UnitScale& scale);

/// The solver options `settings` make (heom::make_solver_options); a refusal names its key in
/// [dynamics], or in [hierarchy] for the threshold.
SolverOptions solver_options(const RunSettings& settings, TableReader& dynamics, TableReader& hierarchy);

/// One [[bath]] table, in solver units; its coupling must be `dimension` x `dimension`. A fitted
/// spectral density without fit_time fits C(t) over `run_length()` (the run's t_end).
Bath read_bath(TableReader& b, const UnitScale& scale, int dimension, const std::function<double()>& run_length);

/// [[system.drive]] of [system], in solver units: operators `dimension` x `dimension`, tables that
/// cover the run [0, t_end] (solver units).
std::vector<Drive> read_drives(TableReader& system, const UnitScale& scale, int dimension, double t_end);

/// [steady], in solver units.
SteadyStateOptions read_steady(TableReader& t, const UnitScale& scale);

/// [spectrum], checked against the run it belongs to (`c`: its model, output times and units).
SpectrumConfig read_spectrum(TableReader& t, const RunConfig& c);

/// [ensemble] of the run `base` (read from `doc`): its sweeps, each point validated as a run of its
/// own, and every member.
EnsembleConfig read_ensemble(TableReader& root, const toml::table& doc, const RunConfig& base);

}  // namespace heom::io::impl

#endif
