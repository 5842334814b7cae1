// heom::GeneratorOptions: which of the generator's kernels runs, the shape of an ADO vector, and
// whether a split hierarchy overlaps its exchange (host types alone, for checkpoints' fingerprints).
#ifndef HEOM_GENERATOR_OPTIONS_HPP
#define HEOM_GENERATOR_OPTIONS_HPP

#include <optional>
#include <string>

#include "heom/core/error.hpp"

namespace heom {

/// The kernels that compute the same generator, each fastest somewhere. All give L(in) equal to
/// rounding (they sum the same terms, grouped differently); `automatic` picks the fastest that can
/// run.
enum class GeneratorKernel {
  automatic,
  /// Any backend and dimension: a team of threads per ADO (what GPUs run; on CPUs, n > 32).
  portable,
  /// Host backends, n = 2..32 (host_block_max_n): one thread per ADO, the block in local arrays.
  host_block,
  /// As host_block for Hermitian ADOs (GeneratorTables::preserves_hermiticity): half of each block
  /// computed and mirrored. Its result is L(in) only for Hermitian input.
  hermitian,
  /// AVX-512 host backends, n = 2: each ADO's block in one vector register.
  two_level,
  /// Any backend: the generator on ground columns (AdoShape::ground_column), one thread per ADO. The
  /// one kernel of that shape, and of no other.
  ground_column,
  /// Any backend and dimension, Hermitian ADOs: the Hermitian form of the portable kernel (what GPUs
  /// run for them). Its result is L(in) only for Hermitian input.
  portable_hermitian,
};

/// Whether `kernel` computes the Hermitian form (half of each block, mirrored): hermitian or
/// portable_hermitian.
constexpr bool is_hermitian_form(GeneratorKernel kernel) {
  return kernel == GeneratorKernel::hermitian || kernel == GeneratorKernel::portable_hermitian;
}

/// What a caller of Generator::apply says of its input. Hermitian: every ADO block is Hermitian, as
/// every ADO stays when the model preserves Hermiticity (Generator::preserves_hermiticity) and rho(0)
/// is Hermitian; then the Hermitian forms may run (half of each block computed and mirrored), whose
/// result is L(in) only for such input. A hierarchy state knows which it holds (HierarchyState).
enum class InputForm { general, hermitian };

/// "portable", "host-block", ...
const char* to_string(GeneratorKernel kernel);
/// The kernel a user may ask for by that name (to_string's; not ground-column, which the AdoShape
/// chooses), if any.
std::optional<GeneratorKernel> kernel_named(const std::string& name);
/// The names kernel_named accepts, for messages.
const char* kernel_names();

/// What an ADO vector holds of each ADO.
enum class AdoShape {
  /// The whole n x n block.
  square,
  /// Column 0 alone (n elements): the ADOs of rho = X |0><0|, e.g. mu |0><0| for a linear absorption
  /// spectrum. They keep that form, every other column zero, when level 0 is an eigenstate of H that
  /// no bath couples to (H and every Q have no element in row or column 0 but H_00) and no Lindblad
  /// term takes elsewhere (L |0> = 0; decay into level 0 is fine), and the
  /// generator then acts on column 0 alone: 1/n of the memory and under 1/n of the arithmetic.
  /// Never Hermitian, and on one device.
  ground_column,
};

/// "square", "ground-column".
const char* to_string(AdoShape shape);

/// On a split hierarchy, whether the generator computes the ADOs that read no halo block while the
/// halo is in flight. automatic: when the communicator moves data in the background
/// (Communicator::progresses_in_background); always, never: regardless (an MPI with a progress thread
/// gains from always; tests check both paths).
enum class ExchangeOverlap { automatic, always, never };

/// The fermionic parity of the operator the hierarchy propagates. Even: a density matrix and its ADOs
/// (every run and steady state). Odd: d^dagger rho or d rho for a fermionic d, the start of an
/// impurity's Green's function (heom::anticommutator_correlation); there the terms that multiply a
/// fermionic bath's coupling from the left change sign (HierarchicalEOM.jl's ODD parity). Bosonic
/// baths and the system's own terms are the same for both.
enum class Parity { even, odd };

/// "even", "odd".
const char* to_string(Parity parity);

struct GeneratorOptions {
  GeneratorKernel kernel = GeneratorKernel::automatic;
  /// The portable kernels' threads per team and consecutive ADOs per team; 0: BackendTraits' choice
  /// for the backend. (Tests give a host backend the GPU's shape with these.)
  int team_size = 0;
  int ados_per_team = 0;
  ExchangeOverlap overlap = ExchangeOverlap::automatic;
  /// ground_column: one model or a batch on one device (not a split hierarchy).
  AdoShape shape = AdoShape::square;
  /// odd: square blocks, no Lindblad terms (whether each jump is even or odd is not known).
  Parity parity = Parity::even;

  /// The first field at fault, and why: what can be told without the model and the backend (which
  /// the Generator checks: whether the kernel can run for the model's dimension, say).
  std::optional<OptionProblem> validate() const;
};

}  // namespace heom

#endif
