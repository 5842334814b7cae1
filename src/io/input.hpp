// The heom program's input file (TOML): parsing, validation and conversion to solver units.
#ifndef HEOM_IO_INPUT_HPP
#define HEOM_IO_INPUT_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/integrator/options.hpp"
#include "heom/solver/solver_options.hpp"
#include "heom/model/model.hpp"
#include "heom/solver/response_options.hpp"
#include "heom/solver/steady_state_options.hpp"
#include "io/spectrum.hpp"
#include "io/units.hpp"

namespace heom::io {

/// Bad input: the message is "FILE:LINE: key: problem" (LINE where the parser knows it).
class InputError : public Error {
 public:
  using Error::Error;
};

/// One member of an [ensemble]: its model and initial state (solver units), the Hamiltonian as used
/// in the input's energy units, and its value of each swept parameter.
struct EnsembleMemberConfig {
  Model model;
  Matrix rho0;
  Matrix hamiltonian;  ///< in the input's energy units
  /// One per sweep (EnsembleConfig::parameter_names): the value in the input's units, or for
  /// initial_state.rho the index into the sweep's list.
  std::vector<double> parameters;
};

/// An [ensemble]'s members, made when asked for (10^6-10^7 members are not held): each sweep point's
/// parsed run is kept, and member i = point * realizations + realization is that point's run with
/// realization's disorder on H (heom::with_diagonal_disorder: from (seed, realization) alone).
class EnsembleMembers {
 public:
  /// A point of the sweeps (the whole input without sweeps): its model and initial state (solver
  /// units), H in the input's energy units, and its value of each swept parameter.
  struct Point {
    Model model;
    Matrix rho0;
    Matrix hamiltonian;
    std::vector<double> parameters;
  };
  EnsembleMembers() = default;
  EnsembleMembers(std::vector<Point> points, std::int64_t realizations, std::uint64_t seed,
                  std::vector<double> site_energy_sigma, double energy_scale);

  std::size_t size() const { return m_points.size() * static_cast<std::size_t>(m_realizations); }
  /// Member i, made now.
  EnsembleMemberConfig operator[](std::size_t i) const;
  /// Member i's H in the input's energy units, and its sweep parameters, without making its model.
  Matrix hamiltonian(std::size_t i) const;
  const std::vector<double>& parameters(std::size_t i) const { return point(i).parameters; }
  const std::vector<Point>& points() const { return m_points; }

  /// Members one at a time, each made as it is reached.
  class iterator {
   public:
    iterator(const EnsembleMembers* members, std::size_t i) : m_members(members), m_i(i) {}
    EnsembleMemberConfig operator*() const { return (*m_members)[m_i]; }
    iterator& operator++() {
      ++m_i;
      return *this;
    }
    bool operator!=(const iterator& other) const { return m_i != other.m_i; }

   private:
    const EnsembleMembers* m_members;
    std::size_t m_i;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size()}; }

 private:
  const Point& point(std::size_t i) const { return m_points.at(i / static_cast<std::size_t>(m_realizations)); }
  std::vector<Point> m_points;
  std::int64_t m_realizations = 1;
  std::uint64_t m_seed = 0;
  std::vector<double> m_sigma;
  double m_energy = 1.0;
};

/// [ensemble]: disorder realizations at every point of the Cartesian product of the sweeps.
struct EnsembleConfig {
  std::int64_t realizations = 1;  ///< [ensemble] members
  std::uint64_t seed = 0;
  std::vector<double> site_energy_sigma;  ///< one per diagonal element, input units; empty: no disorder
  bool store_members = false;
  int batch = 1;                             ///< members of one shape run together (heom::EnsembleOptions::batch)
  std::vector<std::string> parameter_names;  ///< the swept parameters, in the order of the sweeps
  std::int64_t sweep_points = 1;             ///< points of the Cartesian product of the sweeps
  /// Member i = point * realizations + realization, the first sweep varying slowest; realization r has
  /// the same disorder at every point. Made on demand.
  EnsembleMembers members;
};

/// [spectrum]: what the correlation function is and how it is transformed. Its samples are the
/// [dynamics] output times.
struct SpectrumConfig {
  enum class Kind {
    /// Linear absorption of an exciton model: level 0 is the ground state, which neither H nor a bath
    /// couples to anything; C(t) = sum_p weight <mu_p(t) mu_p(0)> from |0><0| (every other ADO zero).
    absorption,
    /// The power spectrum of an operator Q in the steady state: C(t) = <Q^dagger(t) Q(0)>.
    power,
    /// The spectral function (density of states) of a fermionic level d in the steady state:
    /// C(t) = <{d(t), d^dagger(0)}> from the odd-parity hierarchy (heom::anticommutator_correlation).
    density_of_states,
  };
  Kind kind = Kind::absorption;
  /// absorption: the dipole operator of each polarization (one, or x, y, z for dipole vectors), and
  /// the weight of each (1, or 1/3: the orientation average).
  std::vector<Matrix> dipoles;
  double dipole_weight = 1.0;
  /// power: Q, and whether to subtract the coherent part <Q^dagger><Q> from C(t) (its line at w = 0).
  /// density_of_states: d.
  Matrix op;
  bool incoherent = false;
  SpectrumWindow window = SpectrumWindow::none;
  int padding = 4;
  /// Output only [low, high] (in the input's energy unit); empty: every FFT frequency.
  std::vector<double> frequency_range;
  /// density_of_states: from C(t) propagated to t_end and its FFT (time), or by linear solves at each of
  /// `frequency_points` frequencies spread evenly over frequency_range, ends included (frequency:
  /// heom::density_of_states_in_frequency, with the [steady] table's GMRES settings).
  enum class Method { time, frequency };
  Method method = Method::time;
  int frequency_points = 0;
  /// The frequency method's bound on each solve's relative residual (0: the [steady] tolerance).
  double solve_tolerance = 0.0;
  /// The frequencies of the frequency method, in the input's energy unit.
  std::vector<double> solved_frequencies() const;
};

/// [response]: the third-order response of the exciton model (level 0 its ground state, levels 1..N its
/// sites) and its 2D spectra.
struct ResponseConfig {
  /// The manifolds built from the run's one-exciton model (levels 1..N of H and of each bath's
  /// coupling), in solver units, with the two-exciton states when excited-state absorption is asked for.
  ExcitonManifolds manifolds;
  /// The grids (solver units), pathways, signals and polarization.
  ResponseOptions options;
  /// What the manifolds were built from beside the model: each site's dipole, and the settings (an
  /// [ensemble]'s members build theirs from their own H: member_manifolds).
  std::vector<Dipole> dipoles;
  ResponseSettings settings;
  double biexciton_shift = 0.0;  ///< in the input's energy unit
  /// The 2D transforms: window (on both time axes), padding (each axis), and the frequencies kept
  /// ([low, high] in the input's energy unit, both axes; empty: all).
  SpectrumWindow window = SpectrumWindow::hann;
  int padding = 2;
  std::vector<double> frequency_range;
};

/// The manifolds of `model` (an [ensemble] member's: the run's with its own H) as `response` builds
/// the run's: levels 1..N of H relative to level 0, and of each bath's coupling.
ExcitonManifolds member_manifolds(const ResponseConfig& response, const Model& model);

/// [output] checkpoint_every: a checkpoint after this much wall-clock time and/or this many steps,
/// whichever comes first (0: not by that measure).
struct CheckpointEvery {
  double seconds = 0.0;
  long long steps = 0;
  bool any() const { return seconds > 0.0 || steps > 0; }
};

/// Adds one interval, "30 min", "2 h", "90 s" or "1000 steps", to `every` (of two of a kind, the
/// shorter counts); throws InputError naming `key` when `text` is none of these.
void parse_checkpoint_every(const std::string& text, const std::string& key, CheckpointEvery& every);

/// A validated run, in solver units (see UnitScale; times keep the input's unit).
struct RunConfig {
  std::string input_text;  ///< the file, verbatim (stored in the output)
  std::string input_name;  ///< its path, for messages
  Units units = Units::natural;
  Model model{Matrix(1, 1)};  ///< (a placeholder until the parser has read the input's)
  Matrix rho0;
  int depth = 0;
  double t_end = 0.0;
  double output_every = 0.0;
  /// The solver options every run of it starts from: the integrator ([dynamics]) and the truncation
  /// ([hierarchy] threshold), checked (heom::make_solver_options).
  SolverOptions solver;
  std::string output_file;                 ///< [output] file; empty when the input names none
  bool write_ados = false;                 ///< [output] ados: store the final ADOs and their labels
  Matrix input_hamiltonian;                ///< H in the input's energy units
  std::optional<EnsembleConfig> ensemble;  ///< [ensemble], when the input has one
  /// [steady]: how `heom steady` and power spectra solve for the steady state (defaults without it).
  SteadyStateOptions steady;
  std::optional<SpectrumConfig> spectrum;  ///< [spectrum], when the input has one
  std::optional<ResponseConfig> response;  ///< [response], when the input has one
  /// Whether the input has [initial_state]: propagating rho(t) needs it; a [spectrum] and `heom
  /// steady` do not (rho0 is then |0><0|).
  bool has_initial_state = true;
  CheckpointEvery checkpoint_every;  ///< [output] checkpoint_every (heom run of one hierarchy)
  std::string checkpoint_file;       ///< [output] checkpoint_file; empty: beside the output file
  /// The hierarchy's truncation (threshold 0: none), with the model's exponent weights.
  ImportanceTruncation truncation() const { return {solver.importance_threshold, model.exponent_weights()}; }

  /// 0, dt, 2 dt, ..., and t_end (also when t_end is not a multiple of dt).
  std::vector<double> output_times() const;
};

/// Parses and validates `text` (named `name` in messages). Throws InputError naming the key on
/// anything wrong: syntax, unknown keys or kinds, missing keys, wrong types, shapes, non-Hermitian
/// H or rho, a rho that is not a density matrix, and out-of-range parameters.
RunConfig parse_run_config(const std::string& text, const std::string& name);

/// Reads a file and parses it; a file that cannot be read is an InputError too.
RunConfig read_run_config(const std::string& path);

}  // namespace heom::io

#endif
