// heom::Generator: the HEOM right-hand side d(rho_n)/dt, matrix-free on a Kokkos device. Its kernels
// and member definitions are in generator_definitions.hpp (the library instantiates them per backend;
// code that runs apply_then with a hook of its own includes it), which kernel runs in
// kernel_choice.hpp, and what a split hierarchy adds to each application in
// distributed/split_apply.hpp.
#ifndef HEOM_GENERATOR_GENERATOR_HPP
#define HEOM_GENERATOR_GENERATOR_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <type_traits>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/backends.hpp"
#include "heom/core/complex_order.hpp"
#include "heom/core/error.hpp"
#include "heom/distributed/distribution.hpp"
#include "heom/distributed/split_apply.hpp"
#include "heom/generator/detail/generator_data.hpp"
#include "heom/generator/generator_tables.hpp"
#include "heom/generator/kernel_choice.hpp"
#include "heom/generator/options.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/model/model.hpp"

namespace heom {

/// The HEOM generator (its terms: GeneratorTables) for a model truncated at a hierarchy depth,
/// applied matrix-free. ADO vectors are flat Views of num_ados() * block_size() complex numbers,
/// ADO-major, each ADO's n x n block row-major (or its column 0 alone: AdoShape), ADOs in
/// heom::Hierarchy's order.
///
/// On a hierarchy split between devices (a heom::Distribution) it is this device's share: its vectors
/// are local (HaloPlan's numbering: the owned ADOs, then the halo), apply() fills the halo of its input
/// from the other devices and writes the owned blocks of its output, and every device calls it
/// together. Each owned block is computed from the same values by the same code as on one device.
template <class ExecSpace>
class Generator {
 public:
  using execution_space = ExecSpace;
  using traits = BackendTraits<ExecSpace>;
  using vector_type = typename traits::template view<device_complex*>;
  using const_vector_type = typename traits::template view<const device_complex*>;

  /// Copies the model's operators and the hierarchy's tables to the device of `exec`. Throws
  /// heom::Error when options.kernel cannot run for this model on this backend.
  Generator(const ExecSpace& exec, const Model& model, const Hierarchy& hierarchy, const GeneratorOptions& options = {},
            std::shared_ptr<const Distribution> distribution = nullptr);
  /// The same, sharing the hierarchy: where the device is the host (Serial, OpenMP), the generator
  /// reads its neighbour tables in place instead of copying them, and keeps it alive.
  Generator(const ExecSpace& exec, const Model& model, std::shared_ptr<const Hierarchy> hierarchy,
            const GeneratorOptions& options = {}, std::shared_ptr<const Distribution> distribution = nullptr);
  /// A batch: the generators of several models of one shape (same_shape: the same dimension and
  /// baths; H may differ) applied together, one launch for all. Its vectors hold the members one after
  /// the other, each a vector of `hierarchy` as one model's generator has it, and member m's blocks of
  /// L(in) are computed by the same code from the same values as by member m's own generator.
  Generator(const ExecSpace& exec, const std::vector<Model>& members, const Hierarchy& hierarchy,
            const GeneratorOptions& options = {});

  /// Whether apply() includes each ADO's damping term -damping_a rho_a (Damping::excluded: the rest
  /// of the generator, for integrators that treat that diagonal part exactly).
  enum class Damping { included, excluded };

  /// out = L(in), by the kernel kernel(form) names. `in` and `out` must not alias. On a split
  /// hierarchy, `in` holds vector_size() elements, and its halo blocks are overwritten with their
  /// owners' values first (they are the generator's to fill); `out` holds at least owned_size(), and
  /// only its owned blocks are written. Every device of a split hierarchy passes the same form (what
  /// the exchange moves depends on it).
  void apply(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
             Damping damping = Damping::included, InputForm form = InputForm::general) const;

  /// apply() for the ADOs of one tier |n| = `tier` alone: their blocks of `out` are L(in)'s, and the
  /// other blocks are left as they are (the steady state's sweeps over the tiers).
  void apply_tier(const ExecSpace& exec, const const_vector_type& in, const vector_type& out, int tier,
                  InputForm form = InputForm::general) const;

  /// apply(), calling after(first, last) on the host thread that computed ADOs [first, last) as soon
  /// as their blocks of `out` are written, for work on those ADOs while they are in its cache (an
  /// integrator's update). The ranges split [0, num_ados()) in a way that depends on the model and
  /// the kernel alone, not on the number of threads: chunks of 64 ADOs for the two-level kernel, one
  /// ADO for the others. Host backends only (BackendTraits::host_shape); the portable kernel runs
  /// it in its run-time-dimension form, whatever n. An `after` with a member take_block(a, lanes)
  /// gets each ADO's new block (2 n^2 doubles) instead, and `out` is left as it was: only where
  /// hands_over_blocks(form) (otherwise apply_then throws). One that also has take_upper(a, packed)
  /// gets the Hermitian kernel's blocks as their upper triangles (impl::TakesUpperTriangles).
  template <class After>
  void apply_then(const ExecSpace& exec, const const_vector_type& in, const vector_type& out, Damping damping,
                  InputForm form, const After& after) const;

  /// Whether the model is driven (Model::drives): then L depends on t, and apply() computes L(t) at
  /// the time last set by at_time() (0 at first).
  bool is_driven() const { return m_drive != nullptr; }
  /// Makes apply() compute L(t): H(t) read on the given side of the drives' breakpoints. Costs one
  /// evaluation of each drive and an n x n update per member, copied to the device in one piece on
  /// exec's stream after the work already enqueued; nothing for an undriven model or an unchanged
  /// (t, side). (Not for concurrent use: one integrator drives a generator and its copies.) Every
  /// device of a split hierarchy sets the same times, and computes the same bits; a
  /// DriveShape::function is then called from each device's thread, so it must be thread-safe.
  void at_time(const ExecSpace& exec, double t, TimeSide side = TimeSide::after) const;

  /// The kernel apply() runs for input of that form: the one GeneratorOptions::kernel names, or
  /// automatic's choice (impl::kernel_rules). Throws for Hermitian input where the model does not
  /// keep ADOs Hermitian (or on ground columns), and for general input where a Hermitian-form kernel
  /// was asked for.
  GeneratorKernel kernel(InputForm form = InputForm::general) const;
  /// Whether apply_then hands each new block to a hook that takes blocks (the host-block kernels).
  bool hands_over_blocks(InputForm form) const {
    const GeneratorKernel k = kernel(form);
    return traits::host_shape && (k == GeneratorKernel::host_block || k == GeneratorKernel::hermitian);
  }
  /// Whether `kernel` can run for a model of dimension n on this backend (hermitian: and the model
  /// preserves Hermiticity) on square blocks. (ground_column runs on ground columns alone.)
  static bool can_run(GeneratorKernel kernel, int n, bool preserves_hermiticity);

  /// Whether L maps Hermitian ADOs to Hermitian ADOs (real rates and bath coefficients, Hermitian H
  /// and Q): then a Hermitian rho keeps every ADO Hermitian for all time, and apply() may be told so
  /// (InputForm::hermitian).
  bool preserves_hermiticity() const { return m_preserves_hermiticity; }

  int dimension() const { return m_data.n; }
  AdoShape shape() const { return m_shape; }
  /// Elements of one ADO in a vector: n^2, or n in the ground-column shape.
  int block_size() const { return m_shape == AdoShape::ground_column ? m_data.n : m_data.n2; }
  /// Models in the batch: 1 for one model's generator.
  int members() const { return m_data.members; }
  /// Elements of one member's part of a vector (of a batch; the whole vector otherwise).
  std::int64_t member_size() const { return static_cast<std::int64_t>(m_data.ados_per_member) * block_size(); }
  /// The ADOs this device computes: all of them, or its owned ones on a split hierarchy.
  int num_ados() const { return m_data.num_ados; }
  /// Elements of the vectors apply() takes: num_ados() blocks, plus the halo on a split hierarchy.
  std::int64_t vector_size() const { return static_cast<std::int64_t>(m_local_ados) * block_size(); }
  /// Elements of the owned blocks, the leading part of a vector: what integrators update and measure.
  std::int64_t owned_size() const { return static_cast<std::int64_t>(m_data.num_ados) * block_size(); }
  /// Elements of a vector of the whole hierarchy (on every device).
  std::int64_t global_vector_size() const { return static_cast<std::int64_t>(m_total_ados) * block_size(); }
  /// sum_k n_k v_k of each ADO this device computes (host): L(rho)_a contains -damping()[a] rho_a.
  const std::vector<complex>& damping() const { return m_damping; }
  /// Every distinct damping value over the whole hierarchy (every member's), on every device, sorted
  /// by (real, imaginary) part: decisions that must not depend on the split are taken on them.
  /// Computed at each call (impl::damping_values: a visit of every label, held or not).
  std::vector<complex> damping_values() const;
  /// ADOs of the whole hierarchy, times the members.
  int total_ados() const { return m_total_ados; }
  /// [members][block_size()]: the system term's part that maps each element of a block onto itself,
  /// A_ii + B_jj of L rho = A rho + rho B (-i (H_ii - H_jj) for H alone; for a driven model, of H
  /// without its drives). The same in every ADO of a member.
  const std::vector<complex>& system_diagonal() const { return m_system_diagonal; }
  /// The global index of this device's first ADO (0 on one device).
  int first_ado() const { return m_distribution ? m_distribution->plan.first : 0; }

  /// Bytes this device receives from the others per apply() of input of that form (0 on one device):
  /// its halo blocks, or with the Hermitian form only the rows of them that it reads.
  std::uint64_t halo_bytes_received(InputForm form = InputForm::general) const {
    return m_split ? m_split->bytes_received(exchanges_rows(form)) : 0;
  }
  /// The split this generator is a share of; nullptr on one device.
  const Distribution* distribution() const { return m_distribution.get(); }
  /// Its communicator; nullptr on one device (a split into one part included: there is no one to talk to).
  const Communicator* communicator() const {
    return m_distribution && m_distribution->parts() > 1 ? m_distribution->communicator.get() : nullptr;
  }
  /// Whether this device holds ADO 0 (rho) as its local ADO 0: always on one device.
  bool owns_rho() const { return !m_distribution || m_distribution->owns_rho(); }
  /// The execution-space instance it was made on: its tables are on that instance's device, and so
  /// must be every vector it reads or writes (impl::allocate).
  const ExecSpace& exec() const { return m_exec; }

 private:
  /// The constructors' common part, from each member's tables.
  void setup(const ExecSpace& exec, const std::vector<impl::GeneratorTables>& tables, const Hierarchy& hierarchy,
             const GeneratorOptions& options);
  /// Throws unless every member's ADOs keep the ground-column form, on one device.
  void check_ground_columns(const std::vector<impl::GeneratorTables>& all) const;
  /// The host's share of the tables: the damping of this device's ADOs, each member's rates and
  /// system diagonal, the hierarchy's counts.
  void take_host_tables(const std::vector<impl::GeneratorTables>& all, const Hierarchy& hierarchy, bool columns);
  /// Throws where the kernel asked for cannot run for the model, or the hierarchy or parity do not suit
  /// its baths.
  void check_model(const impl::GeneratorTables& tables, const Hierarchy& hierarchy, const GeneratorOptions& options,
                   const KernelContext& context) const;
  /// On a hierarchy split into parts: the halo exchange and the units around it (impl::SplitApply).
  void split(const ExecSpace& exec, const impl::GeneratorTables& tables, const Hierarchy& hierarchy,
             const GeneratorOptions& options, const KernelContext& context);
  /// The portable kernels' scratch level, and their team size within what the backend runs.
  void fit_team(const ExecSpace& exec, const GeneratorOptions& options);
  /// What decides which kernels may run here (impl::kernel_rules).
  KernelContext kernel_context() const {
    return {traits::host_shape, traits::two_level_kernel, m_data.n, m_preserves_hermiticity, m_data.has_fermionic_bath};
  }
  /// Whether an exchange moves only the rows the Hermitian form reads (it runs, and they were listed).
  bool exchanges_rows(InputForm form) const {
    return m_split && m_split->has_rows() && is_hermitian_form(kernel(form));
  }
  /// Throws unless in and out are distinct vectors of vector_size() elements.
  void check_vectors(const const_vector_type& in, const vector_type& out) const;
  /// The kernel on every ADO, or with tier >= 0, on that tier's.
  template <class After>
  void dispatch(const ExecSpace& exec, const const_vector_type& in, const vector_type& out, Damping damping,
                InputForm form, const After& after, int tier = -1) const;
  /// The chosen kernel on the listed units: `chunks` for the host kernels, `teams` for the portable one.
  template <class After>
  void launch(const ExecSpace& exec, const const_vector_type& in, const vector_type& out, bool with_damping,
              GeneratorKernel chosen, const After& after, const impl::UnitList<ExecSpace>& chunks,
              const impl::UnitList<ExecSpace>& teams, int tier) const;

  ExecSpace m_exec;
  impl::GeneratorData<ExecSpace> m_data;
  /// A driven model's (a batch's) host tables, their system part rewritten at each time, and the
  /// time it was last set to. Copies of the generator share it, as they share the device tables.
  struct DriveState {
    std::vector<impl::GeneratorTables> members;
    impl::SystemTables<ExecSpace> device;
    double time = 0.0;
    TimeSide side = TimeSide::after;
  };
  std::shared_ptr<DriveState> m_drive;  // nullptr: not driven
  std::shared_ptr<const Distribution> m_distribution;
  std::shared_ptr<const Hierarchy> m_shared_hierarchy;         // whose tables the device reads in place (or nullptr)
  std::unique_ptr<const impl::SplitApply<ExecSpace>> m_split;  // a hierarchy split into parts: the halo
  int m_local_ados = 0, m_total_ados = 0;
  GeneratorKernel m_requested = GeneratorKernel::automatic;
  AdoShape m_shape = AdoShape::square;
  bool m_preserves_hermiticity = false;
  std::vector<complex> m_damping;
  /// What damping_values() needs: each member's rates, and the hierarchy's counts (no tables).
  std::vector<std::vector<complex>> m_member_rates;
  std::shared_ptr<const Hierarchy> m_counts;
  std::vector<complex> m_system_diagonal;
  int m_team_size = 1, m_ados_per_team = 1, m_scratch_level = 0;  // the portable kernel's launch
};

#define HEOM_EXTERN_GENERATOR(E) extern template class Generator<E>;
HEOM_FOR_EACH_BACKEND(HEOM_EXTERN_GENERATOR)
#undef HEOM_EXTERN_GENERATOR

}  // namespace heom

#endif
