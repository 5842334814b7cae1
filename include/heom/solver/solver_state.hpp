// heom::SolverState: a Solver between two steps, on the host, for checkpoints (Solver::save_state,
// Solver::load_state), and the fingerprint that says what it may be loaded into.
#ifndef HEOM_SOLVER_SOLVER_STATE_HPP
#define HEOM_SOLVER_SOLVER_STATE_HPP

#include <string>
#include <utility>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/generator/generator.hpp"
#include "heom/integrator/options.hpp"
#include "heom/integrator/state.hpp"
#include "heom/model/model.hpp"

namespace heom {

/// What a saved state was computed with, as (name, value) pairs in a fixed order: "build" (heom's
/// version, the backend, Kokkos's version, the compiler and whether the AVX-512 kernels are in: what
/// can change the bits of a step), "hamiltonian", "baths", "depth", "method", "rtol", "atol", "step",
/// "max_step", "min_step", "kernel", "shape". Long values (H, the baths) are hashes of every bit of their
/// numbers.
using Fingerprint = std::vector<std::pair<std::string, std::string>>;

/// The fingerprint of a Solver of `model` at `depth` with these options on the backend `backend`
/// (ExecSpace::name()).
Fingerprint fingerprint(const Model& model, int depth, const IntegratorOptions& integrator,
                        const GeneratorOptions& generator, const std::string& backend);

/// 16 hex digits that name `text` (FNV-1a): a fingerprint entry for a long value.
std::string fingerprint_hash(const std::string& text);

/// Throws heom::StateMismatchError naming the first entry of `expected` that `found` lacks or gives
/// another value, as "`what` was written for a different hamiltonian" or "... for depth 4, not 5".
void require_same_fingerprint(const Fingerprint& expected, const Fingerprint& found, const std::string& what);

/// One device's share of a Solver between two steps. Loaded into a Solver made with the same model,
/// depth, options and build, for the same ADOs, it continues bit for bit as the saved one would have.
struct SolverState {
  Fingerprint fingerprint;
  /// The ADOs held: global indices first_ado .. first_ado + num_ados - 1 of total_ados (a split
  /// hierarchy's share, or all of them).
  long long first_ado = 0, num_ados = 0, total_ados = 0;
  /// Every ADO is Hermitian, and stays so (Generator::hermitian_input): the generator may use its
  /// Hermitian form.
  bool hermitian = false;
  IntegratorState integrator;
};

}  // namespace heom

#endif
