// heom::SolverState: a Solver between two steps, on the host, for checkpoints (Solver::save_state,
// Solver::load_state), and the fingerprint that says what it may be loaded into.
#ifndef HEOM_SOLVER_SOLVER_STATE_HPP
#define HEOM_SOLVER_SOLVER_STATE_HPP

#include <string>
#include <utility>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/fingerprint.hpp"
#include "heom/integrator/state.hpp"
#include "heom/model/model.hpp"
#include "heom/solver/solver_options.hpp"

namespace heom {

/// What a saved state was computed with (a heom::Fingerprint), in a fixed order: "build" (heom's
/// version, the backend, Kokkos's version, the compiler and whether the AVX-512 kernels are in: what
/// can change the bits of a step), "hamiltonian", "baths", "depth", "method", "rtol", "atol", "step",
/// "max_step", "min_step", "kernel", "shape", then "parity" for odd parity, "importance_threshold" for
/// a truncated hierarchy and "max_order" for a lower exp-adams order. H and the baths are hashes of
/// every bit of their numbers. The fingerprint of a run of `model` at `depth` with `options` on the
/// backend `backend` (ExecSpace::name()); `avx512`: whether its AVX-512 kernels may run
/// (BackendTraits::two_level_kernel). heom::run_fingerprint fills in the backend.
Fingerprint fingerprint(const Model& model, int depth, const SolverOptions& options, const std::string& backend,
                        bool avx512);

/// One device's share of a Solver between two steps. Loaded into a Solver made with the same model,
/// depth, options and build, for the same ADOs, it continues bit for bit as the saved one would have.
struct SolverState {
  Fingerprint fingerprint;
  /// The ADOs held: global indices first_ado .. first_ado + num_ados - 1 of total_ados (a split
  /// hierarchy's share, or all of them).
  long long first_ado = 0, num_ados = 0, total_ados = 0;
  /// Every ADO is Hermitian, and stays so (HierarchyState::hermitian): the generator may use its
  /// Hermitian form.
  bool hermitian = false;
  IntegratorState integrator;
};

}  // namespace heom

#endif
