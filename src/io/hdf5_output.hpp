// The heom program's output file (HDF5), readable by h5py without custom code:
//   /t            float64 [nt]            output times, in the input's time unit
//   /rho          {r, i} [nt, n, n]       rho(t) (h5py reads the compound as complex128)
//   /drive        {r, i} [nt, n_drive]    a driven run's f_d(t) at the output times, in the input's energy unit
//   /current      {r, i} [nt, n_bath]     with a fermionic bath: the particle current into each lead
//   /input        string                  the input file, verbatim
//   /ados_final   {r, i} [n_ado, n, n]    optional: every ADO at the last time
//   /ado_labels   int32 [n_ado, K]        optional: their multi-indices, in the same order
//   /steady/...   `heom steady` and power spectra: the steady state (rho, optionally every ADO)
//   /spectrum/... a [spectrum]: omega, intensity, and the correlation function (t, correlation)
// (/t and /rho are absent from runs that compute no rho(t): a steady state, a spectrum),
// an ensemble's (/rho is then the mean over its members; docs/program.md lists /ensemble's contents),
// and root attributes describing the run (version, units, sizes, backend, timing, statistics).
#ifndef HEOM_IO_HDF5_OUTPUT_HPP
#define HEOM_IO_HDF5_OUTPUT_HPP

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heom/core/matrix.hpp"
#include "heom/integrator/options.hpp"

namespace heom::io {

/// What an [ensemble] run adds, in /ensemble (member-major arrays, flat).
struct EnsembleRecord {
  long long members = 0, realizations = 0, sweep_points = 1;
  unsigned long long seed = 0;
  std::string energy_unit;                ///< of hamiltonians, site_energy_sigma and the swept energies
  std::vector<double> site_energy_sigma;  ///< [n]; empty without disorder
  std::vector<std::string> parameter_names;
  std::vector<double> parameters;       ///< [member][parameter]
  std::vector<complex> hamiltonians;    ///< [member][n][n]
  std::vector<long long> steps;         ///< [member] accepted steps
  std::vector<int> workers;             ///< [member] the device (rank) that ran it
  std::vector<complex> member_rho;      ///< [member][t][n][n]; empty unless store_members
  std::vector<complex> member_current;  ///< [member][t][bath]: each member's lead currents (a fermionic bath)
  std::vector<complex> sweep_current;   ///< [point][t][bath]: the mean current at each point (leads and sweeps)
  std::vector<complex> sweep_mean;      ///< [point][t][n][n]: the mean over realizations; empty without sweeps
};

/// A steady state, in /steady (attributes: residual, rate, tolerance, iterations, ...).
struct SteadyRecord {
  Matrix rho;
  std::vector<complex> ados;  ///< [n_ado][n][n]; empty unless [output] ados
  std::vector<int> ado_labels;
  /// [bath] the particle current from the system into each lead (heom::lead_currents) per unit of the
  /// output's time; empty without a fermionic bath.
  std::vector<complex> current;
  double residual = 0.0, rate = 0.0, tolerance = 0.0;
  long long iterations = 0, cycles = 0;
  std::string preconditioner;
  bool fell_back = false;
};

/// A spectrum, in /spectrum.
struct SpectrumRecord {
  std::string kind;            ///< "absorption", "power" or "density-of-states"
  std::string definition;      ///< the formula, as an attribute
  std::string frequency_unit;  ///< of omega (the input's energy unit; intensity is per that unit)
  std::string window;
  int padding = 1;
  std::vector<double> omega, intensity;
  std::vector<double> t;                 ///< the correlation function's times (the input's time unit)
  std::vector<complex> correlation;      ///< C(t) (an ensemble's: the mean over its members)
  double dipole_strength = 0.0;          ///< Re C(0): what intensity integrates to
  std::vector<double> member_intensity;  ///< [member][omega]: an ensemble's members (store_members)
  std::string method = "time";           ///< "time" (C(t) and its FFT) or "frequency" (solves at each omega)
  long long solves = 0, iterations = 0;  ///< the frequency method's linear solves and GMRES iterations
};

/// A third-order response, in /response, and its 2D spectra, in /spectrum2d.
struct ResponseRecord {
  std::vector<double> t1, waiting_times, t3;  ///< the input's time unit
  std::vector<std::string> signals, pathways;
  std::vector<complex> values;  ///< [signal][pathway][T][t1][t3]: each pathway's contribution, with its sign
  std::string polarization;     ///< e.g. "xxxx, isotropic"
  std::string definition;
  long long propagations = 0;
  std::string frequency_unit;  ///< of omega1 and omega3
  std::string window;
  int padding = 1;
  std::vector<double> omega1, omega3;   ///< the frequencies kept
  std::vector<double> absorptive;       ///< [T][w1][w3]: Re of the signals' sum
  std::vector<complex> signal_spectra;  ///< [signal][T][w1][w3]: each signal's S
};

struct RunRecord {
  std::string input_text;
  std::string units;      ///< "natural" or "spectroscopy"
  std::string time_unit;  ///< "fs" or "1/energy"
  int dimension = 0;
  int num_exponents = 0;
  int depth = 0;
  long long num_ados = 0;
  std::string backend;
  std::string generator_kernel;  ///< the kernel that ran (heom::to_string(GeneratorKernel))
  int threads = 0;
  /// The devices that shared the hierarchy ("1 device", "MPI, 4 ranks"), and the ADO ranges each owned
  /// ([devices + 1] boundaries: heom::Partition).
  std::string devices = "1 device";
  std::vector<long long> partition;
  double wall_time_s = 0.0;
  std::string method;
  double rtol = 0.0, atol = 0.0, step = 0.0;
  IntegratorStatistics statistics;
  std::vector<double> times;
  std::vector<Matrix> rho;     ///< one n x n matrix per time
  std::vector<complex> drive;  ///< [time][drive]: each drive's f(t) at `times` (empty: no drives)
  /// [time][bath]: the particle current from the system into each lead (heom::lead_currents) per unit
  /// of the output's time (an ensemble's: the mean over its members); empty without a fermionic bath.
  std::vector<complex> current;
  bool has_ados = false;
  std::vector<complex> ados_final;  ///< [n_ado][n][n], row-major
  std::vector<int> ado_labels;      ///< [n_ado][K], row-major
  std::optional<EnsembleRecord> ensemble;
  std::optional<SteadyRecord> steady;
  std::optional<SpectrumRecord> spectrum;
  std::optional<ResponseRecord> response;
};

/// Why a run could not write about `bytes` to `path` when it ends (its folder missing or not writable,
/// the path a folder, too little free space), for checking before the run; empty when it could.
std::string output_problem(const std::string& path, std::uint64_t bytes);

/// Writes the file atomically: into a temporary file in the same folder, renamed over `path` only
/// when complete, so a failed run leaves no partial file. Throws heom::Error naming the path.
void write_run_record(const std::string& path, const RunRecord& record);

/// An [ensemble] run's file, written as its members finish (rank 0; members in member order): the
/// per-member datasets of /ensemble (hamiltonian, steps, worker, parameters, rho with store_members,
/// current with leads) are created at the start with their whole extent and filled a block of members
/// at a time (hyperslabs; at most a few MiB held), the rest by finish(). The same datasets, shapes and
/// values as write_run_record of the whole record; written as it into a temporary file renamed over
/// `path` by finish() alone, so a failed run leaves no partial file. Throws heom::Error naming the path.
class EnsembleFile {
 public:
  struct Shape {
    long long members = 0;
    std::size_t times = 0;  ///< output times
    int dimension = 0;
    std::size_t parameters = 0;  ///< swept parameters
    std::size_t currents = 0;    ///< lead currents per time (0: none)
    bool store_rho = false;      ///< store_members
  };
  EnsembleFile(const std::string& path, const Shape& shape);
  ~EnsembleFile();
  /// The next member's rows: `rho` [t][n][n] (ignored unless store_rho), `current` [t][bath].
  void add(long long steps, int worker, const std::vector<double>& parameters, const Matrix& hamiltonian,
           const std::vector<Matrix>& rho, const std::vector<complex>& current);
  /// Writes everything else of `record` (its ensemble's per-member arrays are not read) and renames the
  /// file into place, once every member has been added.
  void finish(const RunRecord& record);

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

/// Reads a file written by write_run_record (for tests and tools; /ensemble is not read back). Throws
/// heom::Error.
RunRecord read_run_record(const std::string& path);

}  // namespace heom::io

#endif
