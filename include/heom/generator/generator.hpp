// heom::Generator: the HEOM right-hand side d(rho_n)/dt, matrix-free on a Kokkos device, and the
// choice among its kernels.
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
#include "heom/core/detail/static_dispatch.hpp"
#include "heom/core/error.hpp"
#include "heom/distributed/detail/halo_exchange.hpp"
#include "heom/distributed/distribution.hpp"
#include "heom/generator/detail/generator_data.hpp"
#include "heom/generator/detail/ground_column_kernel.hpp"
#include "heom/generator/detail/host_block_kernel.hpp"
#include "heom/generator/detail/kernel_common.hpp"
#include "heom/generator/detail/portable_hermitian_kernel.hpp"
#include "heom/generator/detail/portable_kernel.hpp"
#include "heom/generator/detail/two_level_kernel.hpp"
#include "heom/generator/detail/generator_tables.hpp"
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

  /// out = L(in). `in` and `out` must not alias. On a split hierarchy, `in` holds vector_size()
  /// elements, and its halo blocks are overwritten with their owners' values first (they are the
  /// generator's to fill); `out` holds at least owned_size(), and only its owned blocks are written.
  void apply(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
             Damping damping = Damping::included) const;

  /// apply() for the ADOs of one tier |n| = `tier` alone: their blocks of `out` are L(in)'s, and the
  /// other blocks are left as they are (the steady state's sweeps over the tiers).
  void apply_tier(const ExecSpace& exec, const const_vector_type& in, const vector_type& out, int tier) const;

  /// apply(), calling after(first, last) on the host thread that computed ADOs [first, last) as soon
  /// as their blocks of `out` are written, for work on those ADOs while they are in its cache (an
  /// integrator's update). The ranges split [0, num_ados()) in a way that depends on the model and
  /// the kernel alone, not on the number of threads: chunks of 64 ADOs for the two-level kernel, one
  /// ADO for the others. Host backends only (BackendTraits::host_shape); the portable kernel runs
  /// it in its run-time-dimension form, whatever n. An `after` with a member take_block(a, lanes)
  /// gets each ADO's new block (2 n^2 doubles) instead, and `out` is left as it was: only where
  /// hands_over_blocks() (otherwise apply_then throws). One that also has take_upper(a, packed) gets
  /// the Hermitian kernel's blocks as their upper triangles (impl::TakesUpperTriangles).
  template <class After>
  void apply_then(const ExecSpace& exec, const const_vector_type& in, const vector_type& out, Damping damping,
                  const After& after) const;

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

  /// The kernel apply() runs.
  GeneratorKernel kernel() const;
  /// Whether apply_then hands each new block to a hook that takes blocks (the host-block kernels).
  bool hands_over_blocks() const {
    return traits::host_shape && (kernel() == GeneratorKernel::host_block || kernel() == GeneratorKernel::hermitian);
  }
  /// Whether `kernel` can run for a model of dimension n on this backend (hermitian: and the model
  /// preserves Hermiticity) on square blocks. (ground_column runs on ground columns alone.)
  static bool can_run(GeneratorKernel kernel, int n, bool preserves_hermiticity);

  /// Whether L maps Hermitian ADOs to Hermitian ADOs (real rates and bath coefficients, Hermitian H
  /// and Q): then a Hermitian rho keeps every ADO Hermitian for all time.
  bool preserves_hermiticity() const { return m_preserves_hermiticity; }
  /// Promise (true) that every ADO block of apply()'s input is Hermitian, as it stays when the model
  /// preserves Hermiticity and rho(0) is Hermitian. With the automatic kernel, host backends then
  /// run the Hermitian form for n = 3..8 (at n = 2 mirroring a block costs more than the half it
  /// saves, measured against the two-level kernel). Throws if the model does not preserve
  /// Hermiticity, or if the Hermitian kernel was asked for and the promise is withdrawn. On a split
  /// hierarchy every device makes the same call (what the exchange moves depends on it).
  void promise_hermitian_input(bool hermitian);
  /// Whether the promise of promise_hermitian_input() is in force.
  bool hermitian_input_promised() const { return m_hermitian_input; }
  /// Whether apply() runs the Hermitian form (its result is then L(in) only for Hermitian input).
  bool runs_hermitian_form() const { return is_hermitian_form(kernel()); }

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

  /// Bytes this device receives from the others per apply() (0 on one device): its halo blocks, or
  /// with the Hermitian form only the rows of them that it reads.
  std::uint64_t halo_bytes_received() const { return communicator() ? m_exchange.bytes_received(exchanges_rows()) : 0; }
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
  /// Whether an exchange moves only the rows the Hermitian form reads (it runs, and they were listed).
  bool exchanges_rows() const { return m_exchange.has_rows() && runs_hermitian_form(); }
  /// Throws unless in and out are distinct vectors of vector_size() elements.
  void check_vectors(const const_vector_type& in, const vector_type& out) const;
  /// The kernel on every ADO, or with tier >= 0, on that tier's.
  template <class After>
  void dispatch(const ExecSpace& exec, const const_vector_type& in, const vector_type& out, Damping damping,
                const After& after, int tier = -1) const;
  /// The chosen kernel on the listed units: `chunks` for the host kernels, `teams` for the portable one.
  template <class After>
  void launch(const ExecSpace& exec, const const_vector_type& in, const vector_type& out, bool with_damping,
              const After& after, const impl::UnitList<ExecSpace>& chunks, const impl::UnitList<ExecSpace>& teams,
              int tier) const;
  /// A split hierarchy's units of `ados_per_unit` ADOs that read no halo block (interior) and the rest.
  static std::pair<impl::UnitList<ExecSpace>, impl::UnitList<ExecSpace>> split_units(const ExecSpace& exec,
                                                                                     const HaloPlan& plan,
                                                                                     int ados_per_unit);

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
  std::shared_ptr<const Hierarchy> m_shared_hierarchy;  // whose tables the device reads in place (or nullptr)
  impl::HaloExchange<ExecSpace> m_exchange;             // (split hierarchies only)
  // Split hierarchies: the units computed while the halo is in flight, and after it has arrived.
  impl::UnitList<ExecSpace> m_interior_chunks, m_boundary_chunks, m_interior_teams, m_boundary_teams;
  int m_local_ados = 0, m_total_ados = 0;
  GeneratorKernel m_requested = GeneratorKernel::automatic;
  AdoShape m_shape = AdoShape::square;
  bool m_overlap = false;  // split hierarchies: compute the interior while the halo is in flight
  bool m_hermitian_input = false;
  bool m_preserves_hermiticity = false;
  std::vector<complex> m_damping;
  /// What damping_values() needs: each member's rates, and the hierarchy's counts (no tables).
  std::vector<std::vector<complex>> m_member_rates;
  std::shared_ptr<const Hierarchy> m_counts;
  std::vector<complex> m_system_diagonal;
  int m_team_size = 1, m_ados_per_team = 1, m_scratch_level = 0;  // the portable kernel's launch
};

// ---------------------------------------------------------------------------------------------

template <class ExecSpace>
Generator<ExecSpace>::Generator(const ExecSpace& exec, const Model& model, const Hierarchy& hierarchy,
                                const GeneratorOptions& options, std::shared_ptr<const Distribution> distribution)
    : m_exec(exec), m_distribution(std::move(distribution)), m_requested(options.kernel), m_shape(options.shape) {
  Kokkos::Profiling::pushRegion("heom::Generator::setup");
  setup(exec, {impl::make_generator_tables(model, hierarchy)}, hierarchy, options);
  Kokkos::Profiling::popRegion();
}

template <class ExecSpace>
Generator<ExecSpace>::Generator(const ExecSpace& exec, const Model& model, std::shared_ptr<const Hierarchy> hierarchy,
                                const GeneratorOptions& options, std::shared_ptr<const Distribution> distribution)
    : m_exec(exec),
      m_distribution(std::move(distribution)),
      m_shared_hierarchy(std::move(hierarchy)),
      m_requested(options.kernel),
      m_shape(options.shape) {
  if (!m_shared_hierarchy) throw Error("Generator: no hierarchy (a null pointer)");
  Kokkos::Profiling::pushRegion("heom::Generator::setup");
  setup(exec, {impl::make_generator_tables(model, *m_shared_hierarchy)}, *m_shared_hierarchy, options);
  Kokkos::Profiling::popRegion();
}

template <class ExecSpace>
Generator<ExecSpace>::Generator(const ExecSpace& exec, const std::vector<Model>& members, const Hierarchy& hierarchy,
                                const GeneratorOptions& options)
    : m_exec(exec), m_requested(options.kernel), m_shape(options.shape) {
  Kokkos::Profiling::pushRegion("heom::Generator::setup");
  if (members.empty()) throw Error("Generator: a batch needs at least one model");
  std::vector<impl::GeneratorTables> tables;
  for (std::size_t m = 0; m < members.size(); ++m) {
    if (!same_shape(members[m], members.front()))
      throw Error("Generator: batch member " + std::to_string(m) +
                  " differs from member 0 in its dimension, its baths, its Lindblad terms or whether H is real "
                  "(same_shape: a batch "
                  "shares them; H may differ)");
    tables.push_back(impl::make_generator_tables(members[m], hierarchy));
  }
  setup(exec, tables, hierarchy, options);
  Kokkos::Profiling::popRegion();
}

template <class ExecSpace>
std::vector<complex> Generator<ExecSpace>::damping_values() const {
  std::vector<complex> values;
  for (const std::vector<complex>& rates : m_member_rates) {
    const std::vector<complex> member = impl::damping_values(rates, *m_counts);
    values.insert(values.end(), member.begin(), member.end());
  }
  if (m_member_rates.size() > 1) impl::sort_distinct(values);
  return values;
}

template <class ExecSpace>
void Generator<ExecSpace>::setup(const ExecSpace& exec, const std::vector<impl::GeneratorTables>& all,
                                 const Hierarchy& hierarchy, const GeneratorOptions& options) {
  const impl::GeneratorTables& tables = all.front();
  const HaloPlan* slice = m_distribution ? &m_distribution->plan : nullptr;
  const bool columns = m_shape == AdoShape::ground_column;
  if (columns) {
    if (m_distribution) throw Error("Generator: the ground-column shape runs on one device (not a split hierarchy)");
    for (std::size_t m = 0; m < all.size(); ++m)
      if (const std::string why = impl::ground_column_obstacle(all[m]); !why.empty())
        throw Error(
            "Generator: the ground-column shape needs level 0 to be an eigenstate of H that no bath couples to, "
            "but " +
            (all.size() > 1 ? "member " + std::to_string(m) + "'s " : std::string()) + why);
  }
  if (options.kernel != GeneratorKernel::automatic && (options.kernel == GeneratorKernel::ground_column) != columns)
    throw Error(std::string("Generator: the ") + to_string(options.kernel) + " kernel computes " +
                (columns ? "square blocks, not ground columns" : "ground columns, not square blocks") +
                " (GeneratorOptions::shape)");
  // (Columns are not Hermitian: the Hermitian form has nothing to run on.)
  m_preserves_hermiticity = tables.preserves_hermiticity && !columns;
  const int members = static_cast<int>(all.size());
  m_total_ados = members * hierarchy.size();
  m_local_ados = slice ? slice->local_size() : m_total_ados;
  const int first = slice ? slice->first : 0, owned = slice ? slice->owned : hierarchy.size();
  if (first < hierarchy.held_first() || first + owned > hierarchy.held_last())
    throw Error("Generator: the hierarchy holds ADOs " + std::to_string(hierarchy.held_first()) + ".." +
                std::to_string(hierarchy.held_last()) + " but this device computes " + std::to_string(first) + ".." +
                std::to_string(first + owned) + " (Hierarchy::holding)");
  for (const impl::GeneratorTables& t : all) {
    m_damping.insert(m_damping.end(), t.damping.begin() + (first - t.damping_first),
                     t.damping.begin() + (first - t.damping_first) + owned);
    m_member_rates.push_back(t.rates);
    const std::vector<complex>& a = t.drive_shapes.empty() ? t.a_sys : t.a_static;
    const std::vector<complex>& b = t.drive_shapes.empty() ? t.b_sys : t.b_static;
    for (int e = 0; e < (columns ? t.n : t.n * t.n); ++e) {
      const int i = columns ? e : e / t.n, j = columns ? 0 : e % t.n;
      m_system_diagonal.push_back(a[i * t.n + i] + b[j * t.n + j]);
    }
  }
  // (A shared hierarchy serves as it is; otherwise a copy of its counts alone, without the tables.)
  m_counts = m_shared_hierarchy ? m_shared_hierarchy : std::make_shared<const Hierarchy>(hierarchy.holding(0, 0));
  if (!columns && !can_run(options.kernel, tables.n, m_preserves_hermiticity))
    throw Error(std::string("Generator: the ") + to_string(options.kernel) +
                " kernel cannot run for n = " + std::to_string(tables.n) + " on " + ExecSpace::name() +
                (is_hermitian_form(options.kernel) && !m_preserves_hermiticity
                     ? " (the model does not keep ADOs Hermitian)"
                     : ""));
  if (tables.has_fermionic_bath && options.kernel == GeneratorKernel::two_level)
    throw Error("Generator: the two-level kernel computes bosonic baths alone, and this model has a fermionic one");
  if (options.team_size < 0 || options.ados_per_team < 0)
    throw Error("Generator: team_size and ados_per_team must be >= 0 (0: the backend's choice)");
  if ((options.team_size > 0 || options.ados_per_team > 0) &&
      (columns ||
       (options.kernel != GeneratorKernel::portable && options.kernel != GeneratorKernel::portable_hermitian &&
        options.kernel != GeneratorKernel::automatic)))
    throw Error(std::string("Generator: team_size and ados_per_team shape the portable kernel, not the ") +
                to_string(columns ? GeneratorKernel::ground_column : options.kernel) + " kernel");
  for (std::size_t k = 0; k < tables.fermion_kind.size(); ++k)
    if (tables.fermion_kind[k] != 0 && (k >= hierarchy.max_excitations().size() || hierarchy.max_excitations()[k] != 1))
      throw Error("Generator: fermionic exponent " + std::to_string(k) +
                  " needs the hierarchy's 0/1 rule (heom::Hierarchy(model.max_excitations(), depth))");
  if (options.parity == Parity::odd && columns)
    throw Error("Generator: odd parity (GeneratorOptions::parity) needs square blocks, not ground columns");
  if (options.parity == Parity::odd && !tables.lindblad.empty())
    throw Error(
        "Generator: odd parity (GeneratorOptions::parity) with Lindblad terms is not supported (whether a jump is "
        "even or odd is not known)");
  m_hermitian_input = is_hermitian_form(options.kernel);
  impl::SystemTables<ExecSpace> system;
  // A slice's tables live in m_distribution's plan, a shared hierarchy's in m_shared_hierarchy.
  m_data = impl::make_generator_data<ExecSpace>(exec, all, hierarchy, slice, &system,
                                                slice != nullptr || m_shared_hierarchy != nullptr);
  m_data.odd_parity = options.parity == Parity::odd;
  if (std::any_of(all.begin(), all.end(), [](const impl::GeneratorTables& t) { return !t.drive_shapes.empty(); })) {
    m_drive = std::make_shared<DriveState>();
    m_drive->members = all;
    m_drive->device = system;
    m_drive->time = std::numeric_limits<double>::quiet_NaN();  // (so that the next call uploads)
    at_time(exec, 0.0);
  }
  m_team_size = options.team_size > 0 ? options.team_size : traits::team_size(m_data.n2);
  m_ados_per_team = options.ados_per_team > 0 ? options.ados_per_team : traits::ados_per_team(m_data.n2);
  // On a split hierarchy a chunk or team must never straddle two devices: the integrators' sums over
  // them (Generator::apply_then's ranges) would group differently than on one device.
  static_assert(Partition::ados_per_unit % impl::HostChunks::ados_per_chunk == 0,
                "partition boundaries must fall on host kernel chunks");
  if (slice && m_distribution->parts() > 1 && Partition::ados_per_unit % m_ados_per_team != 0)
    throw Error("Generator: ados_per_team " + std::to_string(m_ados_per_team) + " must divide " +
                std::to_string(Partition::ados_per_unit) + " on a hierarchy split between devices");
  if (slice && m_distribution->parts() > 1) {
    // The Hermitian forms read only some rows of their neighbours when a bath is diagonal: where one
    // may run (the host kernel's for n = 3..8, the portable one's on GPUs or when asked for), exchange
    // those alone. (Decided from the whole model, the same on every device; rows are listed for
    // n <= 64, in one bit mask per block.)
    std::unique_ptr<HaloRows> rows;
    const bool automatic = options.kernel == GeneratorKernel::automatic;
    const bool hermitian_may_run = m_preserves_hermiticity && tables.n <= 64 &&
                                   (options.kernel == GeneratorKernel::portable_hermitian ||
                                    ((automatic || options.kernel == GeneratorKernel::hermitian) &&
                                     (can_run(GeneratorKernel::hermitian, tables.n, true) || !traits::host_shape)));
    if (hermitian_may_run) {
      const std::vector<std::uint64_t> rows_read = impl::hermitian_rows_read(tables);
      const std::uint64_t all_rows = tables.n >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << tables.n) - 1;
      if (std::any_of(rows_read.begin(), rows_read.end(), [&](std::uint64_t r) { return r != all_rows; }))
        rows = std::make_unique<HaloRows>(
            HaloRows::make(hierarchy, m_distribution->partition, *slice, tables.n, rows_read));
    }
    m_exchange = impl::HaloExchange<ExecSpace>(exec, *slice, tables.n, m_distribution->communicator, rows.get());
    m_overlap =
        options.overlap == ExchangeOverlap::always ||
        (options.overlap == ExchangeOverlap::automatic && m_distribution->communicator->progresses_in_background());
    std::tie(m_interior_chunks, m_boundary_chunks) = split_units(exec, *slice, impl::HostChunks::ados_per_chunk);
    std::tie(m_interior_teams, m_boundary_teams) = split_units(exec, *slice, m_ados_per_team);
  }

  m_scratch_level = traits::scratch_level(m_data.scratch_bytes());
  // The run-time-dimension instances: their loops have no fixed length, so they need the most
  // registers. The team size must suit both portable forms (the solver may switch between them).
  const impl::PortableKernel<ExecSpace, 0> probe{m_data, {}, {}, m_ados_per_team, m_scratch_level};
  impl::PortableHermitianKernel<ExecSpace, 0> hermitian_probe{m_data, {}, {}, m_ados_per_team};
  hermitian_probe.level = traits::scratch_level(hermitian_probe.scratch_bytes());
  const int largest_team =
      std::min(probe.policy(exec, 1).team_size_max(probe, Kokkos::ParallelForTag()),
               hermitian_probe.policy(exec, 1).team_size_max(hermitian_probe, Kokkos::ParallelForTag()));
  if (m_team_size > largest_team) {
    if (options.team_size > 0)
      throw Error("Generator: team_size " + std::to_string(options.team_size) + " is above " +
                  std::to_string(largest_team) + ", the largest team " + ExecSpace::name() + " runs");
    m_team_size = largest_team;
  }
  exec.fence();
}

template <class ExecSpace>
void Generator<ExecSpace>::at_time(const ExecSpace& exec, double t, TimeSide side) const {
  if (!m_drive || (t == m_drive->time && side == m_drive->side)) return;
  for (impl::GeneratorTables& member : m_drive->members) {
    std::vector<complex> values;
    for (const DriveShape& shape : member.drive_shapes) values.push_back(shape(t, side));
    impl::set_drive_values(member, values);
  }
  m_drive->device.upload(exec, impl::packed_system(m_drive->members));
  m_drive->time = t;
  m_drive->side = side;
}

template <class ExecSpace>
bool Generator<ExecSpace>::can_run(GeneratorKernel kernel, int n, bool preserves_hermiticity) {
  switch (kernel) {
    case GeneratorKernel::automatic:
    case GeneratorKernel::portable:
      return true;
    case GeneratorKernel::host_block:
      return traits::host_shape && n >= 2 && n <= 8;
    case GeneratorKernel::hermitian:
      return traits::host_shape && n >= 2 && n <= 8 && preserves_hermiticity;
    case GeneratorKernel::two_level:
      return traits::two_level_kernel && n == 2;
    case GeneratorKernel::ground_column:
      return false;  // (a shape's kernel: GeneratorOptions::shape chooses it)
    case GeneratorKernel::portable_hermitian:
      return preserves_hermiticity;
  }
  return false;
}

template <class ExecSpace>
GeneratorKernel Generator<ExecSpace>::kernel() const {
  if (m_shape == AdoShape::ground_column) return GeneratorKernel::ground_column;
  if (m_requested != GeneratorKernel::automatic) return m_requested;
  const int n = m_data.n;
  if (traits::two_level_kernel && n == 2 && !m_data.has_fermionic_bath) return GeneratorKernel::two_level;
  if (traits::host_shape && n >= 2 && n <= 8)
    return m_hermitian_input && n >= 3 ? GeneratorKernel::hermitian : GeneratorKernel::host_block;
  // GPUs: the Hermitian form where it may run. (Host backends keep the general form for n > 8.)
  if (!traits::host_shape && m_hermitian_input) return GeneratorKernel::portable_hermitian;
  return GeneratorKernel::portable;
}

template <class ExecSpace>
void Generator<ExecSpace>::promise_hermitian_input(bool hermitian) {
  if (hermitian && m_shape == AdoShape::ground_column)
    throw Error("Generator: ground columns are not Hermitian blocks");
  if (hermitian && !m_preserves_hermiticity)
    throw Error("Generator: this model does not keep ADOs Hermitian (complex rates or coefficients)");
  if (!hermitian && is_hermitian_form(m_requested))
    throw Error(std::string("Generator: the ") + to_string(m_requested) +
                " kernel was asked for, and it needs Hermitian input");
  m_hermitian_input = hermitian;
}

template <class ExecSpace>
void Generator<ExecSpace>::check_vectors(const const_vector_type& in, const vector_type& out) const {
  if (in.extent(0) != static_cast<std::size_t>(vector_size()) ||
      out.extent(0) < static_cast<std::size_t>(owned_size()) || out.extent(0) > static_cast<std::size_t>(vector_size()))
    throw Error("Generator::apply: vectors have " + std::to_string(in.extent(0)) + " and " +
                std::to_string(out.extent(0)) + " elements, expected " + std::to_string(vector_size()) +
                (owned_size() < vector_size() ? " and " + std::to_string(owned_size()) : std::string()));
  if (vector_size() > 0 && in.data() == out.data())
    throw Error("Generator::apply: in and out must be different vectors");
}

template <class ExecSpace>
void Generator<ExecSpace>::apply(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                 Damping damping) const {
  check_vectors(in, out);
  dispatch(exec, in, out, damping, impl::NoAfter{});
}

template <class ExecSpace>
void Generator<ExecSpace>::apply_tier(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                      int tier) const {
  check_vectors(in, out);
  if (tier < 0) throw Error("Generator::apply_tier: tier must be >= 0, got " + std::to_string(tier));
  dispatch(exec, in, out, Damping::included, impl::NoAfter{}, tier);
}

template <class ExecSpace>
template <class After>
void Generator<ExecSpace>::apply_then(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                      Damping damping, const After& after) const {
  static_assert(traits::host_shape, "Generator::apply_then runs `after` on host threads");
  check_vectors(in, out);
  if (impl::TakesBlocks<After>::value && !hands_over_blocks())
    throw Error(std::string("Generator::apply_then: the ") + to_string(kernel()) +
                " kernel does not hand its blocks to a hook");
  dispatch(exec, in, out, damping, impl::RangeHook::of(after));
  exec.fence();  // `after` may go out of scope when this returns
}

template <class ExecSpace>
template <class After>
void Generator<ExecSpace>::dispatch(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                    Damping damping, const After& after, int tier) const {
  const bool with_damping = damping == Damping::included;
  if (!m_distribution || m_distribution->parts() == 1) {
    launch(exec, in, out, with_damping, after, {}, {}, tier);
    return;
  }
  // While the halo is in flight, the units that read none of it; then the rest. (The halo is scratch
  // that the generator fills: writing it through the const view is by design.)
  device_complex* local = const_cast<device_complex*>(in.data());
  const bool rows_only = exchanges_rows();
  m_exchange.start(exec, local, rows_only);
  if (!m_overlap) {
    m_exchange.finish(exec, local, rows_only);
    launch(exec, in, out, with_damping, after, {}, {}, tier);
    return;
  }
  launch(exec, in, out, with_damping, after, m_interior_chunks, m_interior_teams, tier);
  m_exchange.finish(exec, local, rows_only);
  launch(exec, in, out, with_damping, after, m_boundary_chunks, m_boundary_teams, tier);
}

template <class ExecSpace>
std::pair<impl::UnitList<ExecSpace>, impl::UnitList<ExecSpace>> Generator<ExecSpace>::split_units(const ExecSpace& exec,
                                                                                                  const HaloPlan& plan,
                                                                                                  int ados_per_unit) {
  std::vector<int> interior, boundary;
  for (int unit = 0; unit * ados_per_unit < plan.owned; ++unit) {
    bool reads_halo = false;
    for (int a = unit * ados_per_unit; a < std::min(plan.owned, (unit + 1) * ados_per_unit) && !reads_halo; ++a)
      reads_halo = plan.reads_halo(a);
    (reads_halo ? boundary : interior).push_back(unit);
  }
  using ids = typename traits::template view<const int*>;
  return {{impl::to_device<ids>(exec, "heom::generator::interior_units", interior, interior.size()), false},
          {impl::to_device<ids>(exec, "heom::generator::boundary_units", boundary, boundary.size()), false}};
}

template <class ExecSpace>
template <class After>
void Generator<ExecSpace>::launch(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                  bool with_damping, const After& after, const impl::UnitList<ExecSpace>& chunks,
                                  const impl::UnitList<ExecSpace>& teams, int tier) const {
  if (m_data.num_ados == 0) return;  // a device that owns no ADO (it still takes part in exchanges)
  impl::GeneratorData<ExecSpace> one_tier;
  if (tier >= 0) {
    one_tier = m_data;
    one_tier.only_tier = tier;
  }
  const impl::GeneratorData<ExecSpace>& data = tier >= 0 ? one_tier : m_data;
  const GeneratorKernel chosen = kernel();
  if (chosen == GeneratorKernel::ground_column) {
    Kokkos::parallel_for("heom::generator::ground_column", typename traits::range_policy(exec, 0, data.num_ados),
                         impl::GroundColumnKernel<ExecSpace, After>{data, in, out, with_damping, after});
    return;
  }
  // Small systems get their dimension at compile time: loops of fixed length the compiler unrolls.
  if constexpr (traits::two_level_kernel) {
    if (chosen == GeneratorKernel::two_level) {
      impl::launch_two_level(exec, data, reinterpret_cast<const double*>(in.data()),
                             reinterpret_cast<double*>(out.data()), with_damping, after, chunks);
      return;
    }
  }
  if constexpr (traits::host_shape) {
    if (chosen == GeneratorKernel::host_block || chosen == GeneratorKernel::hermitian) {
      const bool hermitian = chosen == GeneratorKernel::hermitian;
      // n is 2..8 here (can_run), so 8 stands for "otherwise".
      impl::static_dispatch<8, 2, 3, 4, 5, 6, 7>(data.n, [&](auto n) {
        // Chunks go to whichever thread is free (work stealing): a chunk's cost varies with its ADOs'
        // neighbours, and a virtual CPU may stall. (The results do not depend on which thread computes
        // a chunk. The two-level kernel's chunks are too cheap for it to pay: perf_tests/README.md.)
        using dynamic = Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
        auto run = [&](auto instance) {
          Kokkos::parallel_for(hermitian ? "heom::generator::hermitian" : "heom::generator::host_block",
                               dynamic(exec, 0, chunks.count(data.host_chunks().count()), Kokkos::ChunkSize(1)),
                               impl::ListedChunks<ExecSpace, decltype(instance)>{instance, chunks});
        };
        constexpr int N = decltype(n)::value;
        if (hermitian)
          run(impl::HostBlockKernel<ExecSpace, N, true, After>{data, in, out, with_damping, after});
        else
          run(impl::HostBlockKernel<ExecSpace, N, false, After>{data, in, out, with_damping, after});
      });
      return;
    }
  }
  auto run_portable = [&](auto instance) {
    instance.teams = teams;
    Kokkos::parallel_for("heom::generator::portable", instance.policy(exec, m_team_size), instance);
  };
  if (chosen == GeneratorKernel::portable_hermitian) {
    auto run = [&](auto instance) {
      instance.teams = teams;
      instance.level = traits::scratch_level(instance.scratch_bytes());
      Kokkos::parallel_for("heom::generator::portable_hermitian", instance.policy(exec, m_team_size), instance);
    };
    if constexpr (std::is_same<After, impl::NoAfter>::value) {
      impl::static_dispatch<0, 2, 3, 4, 5, 6, 7, 8>(data.n, [&](auto n) {
        run(impl::PortableHermitianKernel<ExecSpace, decltype(n)::value>{data, in, out, m_ados_per_team, with_damping});
      });
    } else {
      run(impl::PortableHermitianKernel<ExecSpace, 0, After>{data, in, out, m_ados_per_team, with_damping, after});
    }
    return;
  }
  if constexpr (std::is_same<After, impl::NoAfter>::value) {
    impl::static_dispatch<0, 2, 3, 4, 5, 6, 7, 8>(data.n, [&](auto n) {
      run_portable(impl::PortableKernel<ExecSpace, decltype(n)::value>{data, in, out, m_ados_per_team, m_scratch_level,
                                                                       with_damping});
    });
  } else {
    // With a hook, one instantiation serves every n (it is the host's kernel for n > 8 only).
    run_portable(impl::PortableKernel<ExecSpace, 0, After>{data, in, out, m_ados_per_team, m_scratch_level,
                                                           with_damping, after});
  }
}

#define HEOM_EXTERN_GENERATOR(E) extern template class Generator<E>;
HEOM_FOR_EACH_BACKEND(HEOM_EXTERN_GENERATOR)
#undef HEOM_EXTERN_GENERATOR

}  // namespace heom

#endif
