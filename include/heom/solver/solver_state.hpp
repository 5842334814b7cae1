// heom::SolverState: a Solver between two steps, on the host, for checkpoints (Solver::save_state,
// Solver::load_state), and the fingerprint that says what it may be loaded into.
#ifndef HEOM_SOLVER_SOLVER_STATE_HPP
#define HEOM_SOLVER_SOLVER_STATE_HPP

#include <string>
#include <utility>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/fingerprint.hpp"
#include "heom/generator/options.hpp"
#include "heom/integrator/options.hpp"
#include "heom/integrator/state.hpp"
#include "heom/model/model.hpp"

namespace heom {

/// What a saved state was computed with (a heom::Fingerprint), in a fixed order: "build" (heom's
/// version, the backend, Kokkos's version, the compiler and whether the AVX-512 kernels are in: what
/// can change the bits of a step), "hamiltonian", "baths", "depth", "method", "rtol", "atol", "step",
/// "max_step", "min_step", "kernel", "shape", then "parity" for odd parity and "importance_threshold"
/// for a truncated hierarchy. H and the baths are hashes of every bit of their numbers.
/// The fingerprint of a Solver of `model` at `depth` (truncated at `importance_threshold`:
/// SolverOptions) with these options on the backend `backend` (ExecSpace::name()); `avx512`: whether
/// its AVX-512 kernels may run (BackendTraits::two_level_kernel).
Fingerprint fingerprint(const Model& model, int depth, double importance_threshold, const IntegratorOptions& integrator,
                        const GeneratorOptions& generator, const std::string& backend, bool avx512);

/// One device's share of a Solver between two steps. Loaded into a Solver made with the same model,
/// depth, options and build, for the same ADOs, it continues bit for bit as the saved one would have.
struct SolverState {
  Fingerprint fingerprint;
  /// The ADOs held: global indices first_ado .. first_ado + num_ados - 1 of total_ados (a split
  /// hierarchy's share, or all of them).
  long long first_ado = 0, num_ados = 0, total_ados = 0;
  /// Every ADO is Hermitian, and stays so (Generator::hermitian_input_promised): the generator may use its
  /// Hermitian form.
  bool hermitian = false;
  IntegratorState integrator;
};

}  // namespace heom

#endif
