// heom::Generator's member definitions and the kernels they launch (generator.hpp declares the class):
// what instantiates it, once per backend in the library, and what code that calls apply_then with a
// hook of its own (an integrator's fused update) includes.
#ifndef HEOM_GENERATOR_GENERATOR_DEFINITIONS_HPP
#define HEOM_GENERATOR_GENERATOR_DEFINITIONS_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "heom/core/kokkos_compat.hpp"
#include "heom/core/static_dispatch.hpp"
#include "heom/generator/detail/ground_column_kernel.hpp"
#include "heom/generator/detail/host_block_kernel.hpp"
#include "heom/generator/detail/host_hermitian_kernel.hpp"
#include "heom/generator/detail/kernel_common.hpp"
#include "heom/generator/detail/portable_hermitian_kernel.hpp"
#include "heom/generator/detail/portable_kernel.hpp"
#include "heom/generator/detail/two_level_kernel.hpp"
#include "heom/generator/generator.hpp"

namespace heom {
template <class ExecSpace>
Generator<ExecSpace>::Generator(const ExecSpace& exec, const Model& model, const Hierarchy& hierarchy,
                                const GeneratorOptions& options, std::shared_ptr<const Distribution> distribution)
    : m_exec(exec), m_distribution(std::move(distribution)), m_requested(options.kernel), m_shape(options.shape) {
  const impl::ScopedRegion region("heom::Generator::setup");
  setup(exec, {impl::make_generator_tables(model, hierarchy)}, hierarchy, options);
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
  const impl::ScopedRegion region("heom::Generator::setup");
  setup(exec, {impl::make_generator_tables(model, *m_shared_hierarchy)}, *m_shared_hierarchy, options);
}

template <class ExecSpace>
Generator<ExecSpace>::Generator(const ExecSpace& exec, const std::vector<Model>& members, const Hierarchy& hierarchy,
                                const GeneratorOptions& options)
    : m_exec(exec), m_requested(options.kernel), m_shape(options.shape) {
  const impl::ScopedRegion region("heom::Generator::setup");
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
  if (columns) check_ground_columns(all);
  require_valid(options.validate(), "Generator");
  // (Columns are not Hermitian: the Hermitian form has nothing to run on.)
  m_preserves_hermiticity = tables.preserves_hermiticity && !columns;
  take_host_tables(all, hierarchy, columns);
  const KernelContext context{traits::host_shape, traits::two_level_kernel, tables.n, m_preserves_hermiticity,
                              tables.has_fermionic_bath};
  check_model(tables, hierarchy, options, context);
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
  if (slice && m_distribution->parts() > 1) split(exec, tables, hierarchy, options, context);
  fit_team(exec, options);
  exec.fence();
}

template <class ExecSpace>
void Generator<ExecSpace>::check_ground_columns(const std::vector<impl::GeneratorTables>& all) const {
  if (m_distribution) throw Error("Generator: the ground-column shape runs on one device (not a split hierarchy)");
  for (std::size_t m = 0; m < all.size(); ++m)
    if (const std::string why = impl::ground_column_obstacle(all[m]); !why.empty())
      throw Error(
          "Generator: the ground-column shape needs level 0 to be an eigenstate of H that no bath couples to, "
          "but " +
          (all.size() > 1 ? "member " + std::to_string(m) + "'s " : std::string()) + why);
}

template <class ExecSpace>
void Generator<ExecSpace>::take_host_tables(const std::vector<impl::GeneratorTables>& all, const Hierarchy& hierarchy,
                                            bool columns) {
  const HaloPlan* slice = m_distribution ? &m_distribution->plan : nullptr;
  m_total_ados = static_cast<int>(all.size()) * hierarchy.size();
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
}

template <class ExecSpace>
void Generator<ExecSpace>::check_model(const impl::GeneratorTables& tables, const Hierarchy& hierarchy,
                                       const GeneratorOptions& options, const KernelContext& context) const {
  const std::string obstacle = impl::kernel_obstacle(options.kernel, context);
  if (m_shape != AdoShape::ground_column && !obstacle.empty())
    throw Error(std::string("Generator: the ") + to_string(options.kernel) + " kernel cannot run for n = " +
                std::to_string(tables.n) + " on " + ExecSpace::name() + ": " + obstacle);
  for (std::size_t k = 0; k < tables.fermion_kind.size(); ++k)
    if (tables.fermion_kind[k] != 0 && (k >= hierarchy.max_excitations().size() || hierarchy.max_excitations()[k] != 1))
      throw Error("Generator: fermionic exponent " + std::to_string(k) +
                  " needs the hierarchy's 0/1 rule (heom::Hierarchy(model.max_excitations(), depth))");
  if (options.parity == Parity::odd && !tables.lindblad.empty())
    throw Error(
        "Generator: odd parity (GeneratorOptions::parity) with Lindblad terms is not supported (whether a jump is "
        "even or odd is not known)");
}

template <class ExecSpace>
void Generator<ExecSpace>::split(const ExecSpace& exec, const impl::GeneratorTables& tables, const Hierarchy& hierarchy,
                                 const GeneratorOptions& options, const KernelContext& context) {
  // A chunk or team must never straddle two devices: the integrators' sums over them (apply_then's
  // ranges) would group differently than on one device.
  static_assert(Partition::ados_per_unit % impl::HostChunks::ados_per_chunk == 0,
                "partition boundaries must fall on host kernel chunks");
  if (Partition::ados_per_unit % m_ados_per_team != 0)
    throw Error("Generator: ados_per_team " + std::to_string(m_ados_per_team) + " must divide " +
                std::to_string(Partition::ados_per_unit) + " on a hierarchy split between devices");
  // The Hermitian forms read only some rows of their neighbours when a bath is diagonal: where one may
  // run for Hermitian input (the host kernel's for n = 3..8, the portable one's on GPUs or when asked
  // for), exchange those alone. (Decided from the whole model, the same on every device; rows are
  // listed for n <= 64, in one bit mask per block.)
  std::unique_ptr<HaloRows> rows;
  const bool hermitian_may_run = m_preserves_hermiticity && tables.n <= 64 &&
                                 is_hermitian_form(impl::chosen_kernel(options.kernel, context, InputForm::hermitian));
  if (hermitian_may_run) {
    const std::vector<std::uint64_t> rows_read = impl::hermitian_rows_read(tables);
    const std::uint64_t all_rows = tables.n >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << tables.n) - 1;
    if (std::any_of(rows_read.begin(), rows_read.end(), [&](std::uint64_t r) { return r != all_rows; }))
      rows = std::make_unique<HaloRows>(
          HaloRows::make(hierarchy, m_distribution->partition, m_distribution->plan, tables.n, rows_read));
  }
  m_split = std::make_unique<const impl::SplitApply<ExecSpace>>(
      exec, *m_distribution, tables.n, rows.get(), options.overlap, impl::HostChunks::ados_per_chunk, m_ados_per_team);
}

template <class ExecSpace>
void Generator<ExecSpace>::fit_team(const ExecSpace& exec, const GeneratorOptions& options) {
  m_scratch_level = traits::scratch_level(m_data.scratch_bytes());
  // The run-time-dimension instances: their loops have no fixed length, so they need the most
  // registers. The team size must suit both portable forms (a state's form may change).
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
  return impl::kernel_obstacle(kernel, {traits::host_shape, traits::two_level_kernel, n, preserves_hermiticity, false})
      .empty();
}

template <class ExecSpace>
GeneratorKernel Generator<ExecSpace>::kernel(InputForm form) const {
  if (form == InputForm::hermitian && m_shape == AdoShape::ground_column)
    throw Error("Generator: ground columns are not Hermitian blocks");
  if (form == InputForm::hermitian && !m_preserves_hermiticity)
    throw Error("Generator: this model does not keep ADOs Hermitian (complex rates or coefficients)");
  if (form == InputForm::general && is_hermitian_form(m_requested))
    throw Error(std::string("Generator: the ") + to_string(m_requested) +
                " kernel was asked for, and it needs Hermitian input");
  if (m_shape == AdoShape::ground_column) return GeneratorKernel::ground_column;
  return impl::chosen_kernel(m_requested, kernel_context(), form);
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
                                 Damping damping, InputForm form) const {
  check_vectors(in, out);
  dispatch(exec, in, out, damping, form, impl::NoAfter{});
}

template <class ExecSpace>
void Generator<ExecSpace>::apply_tier(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                      int tier, InputForm form) const {
  check_vectors(in, out);
  if (tier < 0) throw Error("Generator::apply_tier: tier must be >= 0, got " + std::to_string(tier));
  dispatch(exec, in, out, Damping::included, form, impl::NoAfter{}, tier);
}

template <class ExecSpace>
template <class After>
void Generator<ExecSpace>::apply_then(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                      Damping damping, InputForm form, const After& after) const {
  static_assert(traits::host_shape, "Generator::apply_then runs `after` on host threads");
  check_vectors(in, out);
  if (impl::TakesBlocks<After>::value && !hands_over_blocks(form))
    throw Error(std::string("Generator::apply_then: the ") + to_string(kernel(form)) +
                " kernel does not hand its blocks to a hook");
  dispatch(exec, in, out, damping, form, impl::RangeHook::of(after));
  exec.fence();  // `after` may go out of scope when this returns
}

template <class ExecSpace>
template <class After>
void Generator<ExecSpace>::dispatch(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                    Damping damping, InputForm form, const After& after, int tier) const {
  const bool with_damping = damping == Damping::included;
  const GeneratorKernel chosen = kernel(form);
  if (!m_split) {
    launch(exec, in, out, with_damping, chosen, after, {}, {}, tier);
    return;
  }
  // (The halo is scratch that the generator fills: writing it through the const view is by design.)
  device_complex* local = const_cast<device_complex*>(in.data());
  m_split->apply(exec, local, exchanges_rows(form), [&](const auto& chunks, const auto& teams) {
    launch(exec, in, out, with_damping, chosen, after, chunks, teams, tier);
  });
}

template <class ExecSpace>
template <class After>
void Generator<ExecSpace>::launch(const ExecSpace& exec, const const_vector_type& in, const vector_type& out,
                                  bool with_damping, GeneratorKernel chosen, const After& after,
                                  const impl::UnitList<ExecSpace>& chunks, const impl::UnitList<ExecSpace>& teams,
                                  int tier) const {
  if (m_data.num_ados == 0) return;  // a device that owns no ADO (it still takes part in exchanges)
  impl::GeneratorData<ExecSpace> one_tier;
  if (tier >= 0) {
    one_tier = m_data;
    one_tier.only_tier = tier;
  }
  const impl::GeneratorData<ExecSpace>& data = tier >= 0 ? one_tier : m_data;
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
      // Chunks go to whichever thread is free (work stealing): a chunk's cost varies with its ADOs'
      // neighbours, and a virtual CPU may stall. (The results do not depend on which thread computes
      // a chunk. The two-level kernel's chunks are too cheap for it to pay: perf_tests/history.md.)
      using dynamic = Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
      auto run = [&](auto instance) {
        Kokkos::parallel_for(hermitian ? "heom::generator::hermitian" : "heom::generator::host_block",
                             dynamic(exec, 0, chunks.count(data.host_chunks().count()), Kokkos::ChunkSize(1)),
                             impl::ListedChunks<ExecSpace, decltype(instance)>{instance, chunks});
      };
      if (hermitian) {
        // n is 2..8 here (kernel_rules), so 8 stands for "otherwise".
        impl::static_dispatch<8, 2, 3, 4, 5, 6, 7>(data.n, [&](auto n) {
          run(impl::HostHermitianKernel<ExecSpace, decltype(n)::value, After>{data, in, out, with_damping, after});
        });
      } else {
        // n is 2..host_block_max_n here: up to 8 at compile time, above it at run time (N = 0).
        impl::static_dispatch<0, 2, 3, 4, 5, 6, 7, 8>(data.n, [&](auto n) {
          run(impl::HostBlockKernel<ExecSpace, decltype(n)::value, After>{data, in, out, with_damping, after});
        });
      }
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
    // With a hook, one instantiation serves every n (it is the host's kernel for n > 32 only).
    run_portable(impl::PortableKernel<ExecSpace, 0, After>{data, in, out, m_ados_per_team, m_scratch_level,
                                                           with_damping, after});
  }
}

}  // namespace heom

#endif
