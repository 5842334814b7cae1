// The input's section readers (internal), which parse_document calls: [dynamics], [[bath]], [[system.drive]],
// [steady], [spectrum], [response], [ensemble].
#ifndef HEOM_IO_INPUT_SECTIONS_HPP
#define HEOM_IO_INPUT_SECTIONS_HPP

#include <cstdint>
#include <functional>
#include <optional>
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

/// [dynamics]: the output times (solver units) and the integrator's settings. Where the run's times are
/// set elsewhere, `times_elsewhere` says where (t_end and output_every are then refused, saying it).
struct DynamicsSection {
  double t_end = 0.0;
  double output_every = 0.0;
  RunSettings settings;
};
DynamicsSection read_dynamics(TableReader& dynamics, const UnitScale& scale, const char* times_elsewhere = nullptr);

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

/// A transform's `window` ("none" or "hann") and `padding` (1 .. max_padding), where given.
void read_transform(TableReader& t, SpectrumWindow& window, int& padding, int max_padding);
/// `frequency_range`, where given: [low, high] with low < high.
std::optional<std::vector<double>> read_frequency_range(TableReader& t);
/// Throws InputError at `frequency_range` unless `range` (the input's energy unit) holds one of the
/// frequencies of an FFT of `points` samples `dt` apart (solver units); `axis` names the axis ("t1"),
/// or "" for a spectrum's one.
void require_frequencies_in_range(TableReader& t, const std::vector<double>& range, std::int64_t points, double dt,
                                  const UnitScale& scale, const std::string& axis);

/// The transition dipole of each of `sites` excited levels from `dipoles` (numbers: along x, or [x, y,
/// z] vectors, which sets `vectors`); all zero is refused.
std::vector<Dipole> read_site_dipoles(TableReader& t, int sites, bool& vectors);

/// Throws InputError at `key` unless level 0 of the run's model is a ground state apart from the rest:
/// no H element, bath coupling or Lindblad term takes it elsewhere (`what`: the analysis that needs it).
void require_ground_state(TableReader& t, const RunConfig& c, const std::string& key, const std::string& what);

/// [response], checked against the run (`c`: its model, which gives the one-exciton manifold, and units).
ResponseConfig read_response(TableReader& t, const RunConfig& c);

/// [ensemble] of the run `base` (read from `doc`): its sweeps, each point validated as a run of its
/// own, and every member.
EnsembleConfig read_ensemble(TableReader& root, const toml::table& doc, const RunConfig& base);

}  // namespace heom::io::impl

#endif
