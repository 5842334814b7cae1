// heom::impl::GeneratorData: GeneratorTables and the hierarchy's neighbour tables on the device, the
// one set of coefficients every generator kernel reads.
#ifndef HEOM_GENERATOR_DETAIL_GENERATOR_DATA_HPP
#define HEOM_GENERATOR_DETAIL_GENERATOR_DATA_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/to_device.hpp"
#include "heom/generator/generator_tables.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/distributed/halo.hpp"
#include "heom/hierarchy/partition.hpp"

namespace heom::impl {

/// The host kernels' unit of work: one call walks through a chunk of consecutive ADOs, so that its
/// setup (the tables' pointers) is paid once per chunk and the neighbours' blocks stay in its cache.
/// In a batch of members (GeneratorData::members) chunks start again at each member's first ADO, so
/// that no chunk, and no range Generator::apply_then reports, holds two members' ADOs.
struct HostChunks {
  static constexpr int ados_per_chunk = 64;
  HostChunks(int num_ados, int ados_per_member)
      : m_num_ados(num_ados),
        m_ados_per_member(ados_per_member > 0 ? ados_per_member : 1),
        m_per_member((m_ados_per_member + ados_per_chunk - 1) / ados_per_chunk) {}
  int count() const { return m_num_ados > 0 ? m_num_ados / m_ados_per_member * m_per_member : 0; }
  int first(int chunk) const {
    return chunk / m_per_member * m_ados_per_member + chunk % m_per_member * ados_per_chunk;
  }
  int last(int chunk) const {
    const int member_end = (chunk / m_per_member + 1) * m_ados_per_member;
    return first(chunk) + ados_per_chunk < member_end ? first(chunk) + ados_per_chunk : member_end;
  }

 private:
  int m_num_ados, m_ados_per_member, m_per_member;
};

/// Field by field as in GeneratorTables (which says what each means), with the complex tables also
/// split into real and imaginary parts where a kernel reads them lane by lane.
///
/// A batch of `members` hierarchies of one shape (the same baths, H differing) is one vector of
/// members x ados_per_member ADOs, member by member: the neighbour tables point within each member,
/// and the system tables (A, B and their lane forms, shifted_system) hold one entry per member, member
/// m's at member m times their per-member size (member_of(a) gives ADO a's member).
template <class ExecSpace>
struct GeneratorData {
  template <class T>
  using view = typename BackendTraits<ExecSpace>::template view<T>;

  int n = 0, n2 = 0, num_ados = 0, num_baths = 0;
  int members = 1, ados_per_member = 0;
  /// The member ADO a belongs to.
  KOKKOS_INLINE_FUNCTION int member_of(int a) const { return members > 1 ? a / ados_per_member : 0; }
  /// The host kernels' chunks.
  HostChunks host_chunks() const { return HostChunks(num_ados, ados_per_member); }
  /// >= 0: a launch computes the ADOs of this tier |n| alone (Generator::apply_tier).
  int only_tier = -1;
  /// Whether a launch leaves ADO a out (one tier's launch, a of another tier): O(K), one tier's only.
  KOKKOS_INLINE_FUNCTION bool skips(int a) const {
    if (only_tier < 0) return false;
    int tier = 0;
    for (int k = 0; k < static_cast<int>(labels.extent(1)); ++k) tier += labels(a, k);
    return tier != only_tier;
  }
  bool has_dense_bath = false;  // (a fermionic bath counts: it uses the same scratch)
  bool has_fermionic_bath = false;
  bool odd_parity = false;  // GeneratorOptions::parity
  bool a_sys_imaginary = false;
  bool real_damping = false;  // every ADO's damping is real (real rates)
  bool has_sandwich = false;
  /// An importance-truncated hierarchy: an ADO below the top tier may lack some n + e_k.
  bool truncated = false;
  view<const double*> system_storage;                   // the buffer the next seven point into (packed_system)
  view<const double**> a_real, a_imag, b_real, b_imag;  // [members * n][n] parts of A and B
  view<const double**> b_real_lanes, b_imag_lanes;      // [members * n][2n]: each entry twice, for the lane loops
  view<const double*> sandwich_p, sandwich_q;           // [2 n2] lane form
  view<const int*> bath_begin, bath_diagonal, bath_fermionic, active_count, run_count;
  view<const int*> fermion_kind;  // [K]
  /// [ado][1 + 2 slots] (fermionic models): column 0 is 1 when |n| < depth (ADO a has n + e_k
  /// neighbours), then a pair per occupied fermionic exponent k (n_k = 1), ascending: k and its
  /// n - e_k neighbour (the kernel reads both from one row, not prev's wide one), then -1;
  /// slots = min(depth, fermionic exponents), at least 1.
  view<const int**> fermion_occupied;
  KOKKOS_INLINE_FUNCTION int occupied_slots() const { return static_cast<int>(fermion_occupied.extent(1) - 1) / 2; }
  /// ADO a's j-th (1..slots) occupied fermionic exponent, or -1, and its n - e_k neighbour.
  KOKKOS_INLINE_FUNCTION int occupied_exponent(int a, int j) const { return fermion_occupied(a, 2 * j - 1); }
  KOKKOS_INLINE_FUNCTION int occupied_neighbour(int a, int j) const { return fermion_occupied(a, 2 * j); }
  view<const device_complex*> fermion_c, fermion_partner_conj;              // [K]
  view<const int*> fermion_group, fermion_row_count, fermion_column_count;  // [bath]
  view<const int**> fermion_rows, fermion_columns;                          // [bath][n]
  view<const int**> run_start, run_length;                                  // [bath][n2]
  view<const double**> cf_p, cf_q;                                          // [bath][2 n2] lane form
  view<const double**> alpha_p, alpha_q;                                    // [K][2 n2] lane form
  view<const device_complex***> coupling;                                   // [bath][n][n]: Q_b
  view<const device_complex***> right;  // [bath][n][n]: R_b of 2 Delta_b Q_b rho R_b (GeneratorTables)
  int num_rank_one_jumps = 0;
  view<const device_complex**> jump_u, jump_w;  // [rank-one jumps][n] (GeneratorTables)
  view<const device_complex*> two_delta, c_commutator, c_anticommutator, damping;
  view<const int**> labels, next, prev;                             // [ado][K]
  view<const int*> coupled_row_count;                               // [bath]
  view<const int**> coupled_rows;                                   // [bath][n]
  view<const int*> single_row;                                      // [K]
  view<const double*> single_row_q;                                 // [K]
  view<const int*> rank_one;                                        // [bath]
  view<const device_complex**> rank_one_c;                          // [bath][n]
  view<const double*> rank_one_s;                                   // [bath]
  view<const double*> shifted_system;                               // [members * 64] n = 2 only
  view<const double**> shifted_commutator, shifted_anticommutator;  // [bath][64] n = 2 only

  /// Scratch per team of the portable kernel for a dense bath: M and R (then X and Y in place).
  std::size_t scratch_bytes() const { return has_dense_bath ? 2 * sizeof(device_complex) * n2 : 0; }
};

/// The part of GeneratorData that H determines, on the host, packed in one buffer (a driven model's
/// changes with t, copied to the device in one piece): for every member in turn, the parts of A and
/// B ([n][n] each: Re A, Im A, Re B, Im B), then B's lane forms ([n][2n]: Re, Im), after all members
/// and for n = 2 alone the shifted maps ([64] per member). SystemTables' views point into it.
inline std::vector<double> packed_system(const std::vector<GeneratorTables>& members) {
  const std::size_t n2 = static_cast<std::size_t>(members.front().n) * members.front().n;
  std::vector<double> packed;
  auto append = [&](auto part) {
    for (const GeneratorTables& m : members)
      for (std::size_t e = 0; e < n2; ++e) packed.push_back(part(m, e));
  };
  append([](const GeneratorTables& m, std::size_t e) { return m.a_sys[e].real(); });
  append([](const GeneratorTables& m, std::size_t e) { return m.a_sys[e].imag(); });
  append([](const GeneratorTables& m, std::size_t e) { return m.b_sys[e].real(); });
  append([](const GeneratorTables& m, std::size_t e) { return m.b_sys[e].imag(); });
  for (const GeneratorTables& m : members)
    for (std::size_t lane = 0; lane < 2 * n2; ++lane) packed.push_back(m.b_sys[lane / 2].real());
  for (const GeneratorTables& m : members)
    for (std::size_t lane = 0; lane < 2 * n2; ++lane) packed.push_back(m.b_sys[lane / 2].imag());
  for (const GeneratorTables& m : members)
    packed.insert(packed.end(), m.shifted_system.begin(), m.shifted_system.end());
  return packed;
}

/// The device buffer of packed_system, which GeneratorData's system views point into.
template <class ExecSpace>
struct SystemTables {
  typename BackendTraits<ExecSpace>::template view<double*> packed;

  /// Copies `packed` (packed_system's layout) in, ordered on exec's stream after the work already
  /// enqueued there (the kernels that read the old values) and before what comes next. `packed` is
  /// pageable host memory, which CUDA stages before the call returns: it may change once this returns.
  void upload(const ExecSpace& exec, const std::vector<double>& host) const {
    using unmanaged = Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    Kokkos::deep_copy(exec, packed, unmanaged(host.data(), packed.extent(0)));
  }
};

/// `values` padded with `fill` to `size` entries (the per-exponent tables stay non-empty without exponents).
template <class T>
std::vector<T> padded(std::vector<T> values, std::size_t size, const T& fill) {
  values.resize(size, fill);
  return values;
}

/// For each ADO of a hierarchy with fermionic baths: whether it has up-neighbours (slot 0), then the
/// (exponent, down-neighbour) pairs of its occupied fermionic exponents, -1 after the last.
inline std::vector<int> fermion_occupied(const GeneratorTables& t, int depth, const std::vector<int>& labels,
                                         const std::vector<int>& prev, std::size_t rows, std::size_t columns,
                                         std::size_t& width) {
  const int fermionic =
      static_cast<int>(std::count_if(t.fermion_kind.begin(), t.fermion_kind.end(), [](int kind) { return kind != 0; }));
  width = 1 + 2 * std::max(1, std::min(depth, fermionic));
  std::vector<int> occupied(rows * width, -1);
  for (std::size_t a = 0; a < rows; ++a) {
    int level = 0;
    std::size_t slot = 1;
    for (std::size_t k = 0; k < static_cast<std::size_t>(t.num_exponents); ++k) {
      const int nk = labels[a * columns + k];
      level += nk;
      if (nk > 0 && t.fermion_kind[k] != 0) {
        occupied[a * width + slot++] = static_cast<int>(k);
        occupied[a * width + slot++] = prev[a * columns + k];
      }
    }
    occupied[a * width] = level < depth ? 1 : 0;
  }
  return occupied;
}

/// How make_generator_data puts each group of tables on ExecSpace's device.
template <class ExecSpace>
struct TableUpload {
  using traits = BackendTraits<ExecSpace>;
  using doubles1 = typename traits::template view<const double*>;
  using doubles2 = typename traits::template view<const double**>;
  using ints1 = typename traits::template view<const int*>;
  using ints2 = typename traits::template view<const int**>;
  using complexes1 = typename traits::template view<const device_complex*>;
  using complexes2 = typename traits::template view<const device_complex**>;
  using complexes3 = typename traits::template view<const device_complex***>;

  /// The damping of the ADOs [first, first + ados) of each member, member after member; sets
  /// d.real_damping. (Decided on the whole hierarchy, so that every device of a split one runs the same
  /// code: every ADO's damping is real exactly when every rate is, as the first tier holds each rate alone.)
  static std::vector<complex> members_damping(const std::vector<GeneratorTables>& members, const Hierarchy& hierarchy,
                                              std::size_t first, std::size_t ados, GeneratorData<ExecSpace>& d) {
    std::vector<complex> damping;
    auto real = [](const complex& v) { return v.imag() == 0.0; };
    d.real_damping = true;
    for (const GeneratorTables& m : members) {
      damping.insert(damping.end(), m.damping.begin() + (first - m.damping_first),
                     m.damping.begin() + (first - m.damping_first) + ados);
      d.real_damping = d.real_damping && (hierarchy.depth() == 0 || std::all_of(m.rates.begin(), m.rates.end(), real));
    }
    return damping;
  }

  /// The members' system parts: A, B and their lane forms in one buffer (packed_system), each table of d
  /// a view into it.
  static SystemTables<ExecSpace> system(const ExecSpace& exec, const std::vector<GeneratorTables>& members,
                                        GeneratorData<ExecSpace>& d) {
    const std::size_t n = members.front().n, count = members.size();
    SystemTables<ExecSpace> tables;
    tables.packed = to_device<typename traits::template view<double*>>(
        exec, "heom::generator::system", packed_system(members), count * n * n * 8 + (n == 2 ? count * 64 : 0));
    double* base = tables.packed.data();
    const std::size_t part = count * n * n;
    d.system_storage = tables.packed;
    d.a_real = doubles2(base, count * n, n);
    d.a_imag = doubles2(base + part, count * n, n);
    d.b_real = doubles2(base + 2 * part, count * n, n);
    d.b_imag = doubles2(base + 3 * part, count * n, n);
    d.b_real_lanes = doubles2(base + 4 * part, count * n, 2 * n);
    d.b_imag_lanes = doubles2(base + 6 * part, count * n, 2 * n);
    if (n == 2) d.shifted_system = doubles1(base + 8 * part, count * 64);
    return tables;
  }

  /// The tables of the baths and their exponents (the same for every member of a batch).
  static void bath_tables(const ExecSpace& exec, const GeneratorTables& t, GeneratorData<ExecSpace>& d) {
    const std::size_t n = t.n, n2 = n * n, baths = t.num_baths, K = t.num_exponents;
    const std::size_t columns = K > 0 ? K : 1;  // keep the per-exponent tables non-empty
    d.sandwich_p = to_device<doubles1>(exec, "heom::generator::sandwich_p", t.sandwich_p, 2 * n2);
    d.sandwich_q = to_device<doubles1>(exec, "heom::generator::sandwich_q", t.sandwich_q, 2 * n2);
    d.bath_begin = to_device<ints1>(exec, "heom::generator::bath_begin", t.bath_begin, baths + 1);
    d.bath_diagonal = to_device<ints1>(exec, "heom::generator::bath_diagonal", t.bath_diagonal, baths);
    d.bath_fermionic = to_device<ints1>(exec, "heom::generator::bath_fermionic", t.bath_fermionic, baths);
    d.fermion_kind =
        to_device<ints1>(exec, "heom::generator::fermion_kind", padded(t.fermion_kind, columns, 0), columns);
    d.fermion_c =
        to_device<complexes1>(exec, "heom::generator::fermion_c", padded(t.fermion_c, columns, complex(0.0)), columns);
    d.fermion_partner_conj = to_device<complexes1>(exec, "heom::generator::fermion_partner_conj",
                                                   padded(t.fermion_partner_conj, columns, complex(0.0)), columns);
    d.fermion_group = to_device<ints1>(exec, "heom::generator::fermion_group", t.fermion_group, baths);
    d.fermion_row_count = to_device<ints1>(exec, "heom::generator::fermion_row_count", t.fermion_row_count, baths);
    d.fermion_column_count =
        to_device<ints1>(exec, "heom::generator::fermion_column_count", t.fermion_column_count, baths);
    d.fermion_rows = to_device<ints2>(exec, "heom::generator::fermion_rows", t.fermion_rows, baths, n);
    d.fermion_columns = to_device<ints2>(exec, "heom::generator::fermion_columns", t.fermion_columns, baths, n);
    d.active_count = to_device<ints1>(exec, "heom::generator::active_count", t.active_count, baths);
    d.run_count = to_device<ints1>(exec, "heom::generator::run_count", t.run_count, baths);
    d.run_start = to_device<ints2>(exec, "heom::generator::run_start", t.run_start, baths, n2);
    d.run_length = to_device<ints2>(exec, "heom::generator::run_length", t.run_length, baths, n2);
    d.cf_p = to_device<doubles2>(exec, "heom::generator::cf_p", t.cf_p, baths, 2 * n2);
    d.cf_q = to_device<doubles2>(exec, "heom::generator::cf_q", t.cf_q, baths, 2 * n2);
    d.alpha_p = to_device<doubles2>(exec, "heom::generator::alpha_p", padded(t.alpha_p, columns * 2 * n2, 0.0), columns,
                                    2 * n2);
    d.alpha_q = to_device<doubles2>(exec, "heom::generator::alpha_q", padded(t.alpha_q, columns * 2 * n2, 0.0), columns,
                                    2 * n2);
    d.coupling = to_device<complexes3>(exec, "heom::generator::coupling", t.q, baths, n, n);
    d.right = to_device<complexes3>(exec, "heom::generator::right", t.right, baths, n, n);
    const std::size_t jumps = t.num_rank_one_jumps > 0 ? t.num_rank_one_jumps : 1;  // (non-empty)
    d.jump_u =
        to_device<complexes2>(exec, "heom::generator::jump_u", padded(t.jump_u, jumps * n, complex(0.0)), jumps, n);
    d.jump_w =
        to_device<complexes2>(exec, "heom::generator::jump_w", padded(t.jump_w, jumps * n, complex(0.0)), jumps, n);
    d.two_delta = to_device<complexes1>(exec, "heom::generator::two_delta", t.two_delta, baths);
    d.c_commutator = to_device<complexes1>(exec, "heom::generator::c_commutator",
                                           padded(t.c_commutator, columns, complex(0.0)), columns);
    d.c_anticommutator = to_device<complexes1>(exec, "heom::generator::c_anticommutator",
                                               padded(t.c_anticommutator, columns, complex(0.0)), columns);
  }

  /// The tables that say which rows a bath couples through and which baths are rank one.
  static void row_tables(const ExecSpace& exec, const GeneratorTables& t, GeneratorData<ExecSpace>& d) {
    const std::size_t n = t.n, baths = t.num_baths, K = t.num_exponents;
    const std::size_t columns = K > 0 ? K : 1;
    d.coupled_row_count = to_device<ints1>(exec, "heom::generator::coupled_row_count", t.coupled_row_count, baths);
    d.coupled_rows = to_device<ints2>(exec, "heom::generator::coupled_rows", t.coupled_rows, baths, n);
    d.rank_one = to_device<ints1>(exec, "heom::generator::rank_one", t.rank_one, baths);
    d.rank_one_c = to_device<typename traits::template view<const device_complex**>>(
        exec, "heom::generator::rank_one_c", t.rank_one_c, baths, n);
    d.rank_one_s = to_device<doubles1>(exec, "heom::generator::rank_one_s", t.rank_one_s, baths);
    d.single_row =
        to_device<ints1>(exec, "heom::generator::single_row", K > 0 ? t.single_row : std::vector<int>(1, -1), columns);
    d.single_row_q = to_device<doubles1>(exec, "heom::generator::single_row_q",
                                         K > 0 ? t.single_row_q : std::vector<double>(1, 0.0), columns);
    if (n == 2) {
      d.shifted_commutator =
          to_device<doubles2>(exec, "heom::generator::shifted_commutator", t.shifted_commutator, baths, 64);
      d.shifted_anticommutator =
          to_device<doubles2>(exec, "heom::generator::shifted_anticommutator", t.shifted_anticommutator, baths, 64);
    }
  }

  /// The neighbour tables of the hierarchy or the slice (a column of -1 / 0 when there is no exponent),
  /// once per member, member m's neighbours m x ados further on; read in place where
  /// make_generator_data's tables_in_place allows.
  static void neighbour_tables(const ExecSpace& exec, const GeneratorTables& t, std::size_t count, std::size_t ados,
                               const Hierarchy& hierarchy, const HaloPlan* slice, bool tables_in_place,
                               GeneratorData<ExecSpace>& d) {
    const std::size_t K = t.num_exponents, columns = K > 0 ? K : 1;
    const std::vector<int> none(ados, 0), absent(ados, -1);
    const std::vector<int>& one_labels = K > 0 ? (slice ? slice->labels : hierarchy.labels_table()) : none;
    const std::vector<int>& one_next = K > 0 ? (slice ? slice->next : hierarchy.next_table()) : absent;
    const std::vector<int>& one_prev = K > 0 ? (slice ? slice->prev : hierarchy.prev_table()) : absent;
    std::vector<int> batch_labels, batch_next, batch_prev;  // (one member reads its tables in place)
    for (std::size_t m = 0; m < count && count > 1; ++m) {
      const int offset = static_cast<int>(m * ados);
      batch_labels.insert(batch_labels.end(), one_labels.begin(), one_labels.end());
      for (int x : one_next) batch_next.push_back(x >= 0 ? x + offset : x);
      for (int x : one_prev) batch_prev.push_back(x >= 0 ? x + offset : x);
    }
    const std::vector<int>& labels = count > 1 ? batch_labels : one_labels;
    const std::vector<int>& next = count > 1 ? batch_next : one_next;
    const std::vector<int>& prev = count > 1 ? batch_prev : one_prev;
    d.truncated = hierarchy.truncated();
    // (A copy would double the largest tables a hierarchy has: 12 K bytes per ADO.)
    const bool in_place = tables_in_place && count == 1 && K > 0 &&
                          Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
    const std::size_t rows = count * ados;
    const auto read_in_place = [&](const std::vector<int>& values) { return ints2(values.data(), rows, columns); };
    d.labels =
        in_place ? read_in_place(labels) : to_device<ints2>(exec, "heom::generator::labels", labels, rows, columns);
    if (t.has_fermionic_bath) {
      std::size_t width = 0;
      const std::vector<int> occupied = fermion_occupied(t, hierarchy.depth(), labels, prev, rows, columns, width);
      d.fermion_occupied = to_device<ints2>(exec, "heom::generator::fermion_occupied", occupied, rows, width);
    }
    d.next = in_place ? read_in_place(next) : to_device<ints2>(exec, "heom::generator::next", next, rows, columns);
    d.prev = in_place ? read_in_place(prev) : to_device<ints2>(exec, "heom::generator::prev", prev, rows, columns);
  }
};

/// The tables of `members` (one, or a batch of one shape: their tables differ in the system part and
/// the damping alone) and the neighbour tables of `hierarchy` copied to the device of `exec`; with a
/// `slice` (one member), those of its owned ADOs only, neighbours in its local numbering (num_ados: the
/// owned ADOs). `system`, when given, receives the buffer of the system part (for a driven model's).
/// tables_in_place: the neighbour tables (the hierarchy's, or the slice's) outlive the data, so that
/// where the device is the host, one member's are read in place rather than copied.
template <class ExecSpace>
GeneratorData<ExecSpace> make_generator_data(const ExecSpace& exec, const std::vector<GeneratorTables>& members,
                                             const Hierarchy& hierarchy, const HaloPlan* slice = nullptr,
                                             SystemTables<ExecSpace>* system = nullptr, bool tables_in_place = false) {
  using complexes1 = typename BackendTraits<ExecSpace>::template view<const device_complex*>;
  GeneratorData<ExecSpace> d;
  const GeneratorTables& t = members.front();
  const std::size_t count = members.size();
  const std::size_t ados = slice ? slice->owned : t.num_ados, first = slice ? slice->first : 0;
  d.n = t.n;
  d.n2 = t.n * t.n;
  d.members = static_cast<int>(count);
  d.ados_per_member = static_cast<int>(ados);
  d.num_ados = static_cast<int>(count * ados);
  d.num_baths = t.num_baths;
  d.a_sys_imaginary = t.a_sys_imaginary;
  d.has_sandwich = t.has_sandwich;
  d.has_dense_bath = std::any_of(t.bath_diagonal.begin(), t.bath_diagonal.end(), [](int b) { return b == 0; });
  d.has_fermionic_bath = t.has_fermionic_bath;
  d.num_rank_one_jumps = t.num_rank_one_jumps;
  using upload = TableUpload<ExecSpace>;
  const std::vector<complex> damping = upload::members_damping(members, hierarchy, first, ados, d);
  const SystemTables<ExecSpace> system_tables = upload::system(exec, members, d);
  if (system) *system = system_tables;
  upload::bath_tables(exec, t, d);
  d.damping = to_device<complexes1>(exec, "heom::generator::damping", damping, count * ados);
  upload::neighbour_tables(exec, t, count, ados, hierarchy, slice, tables_in_place, d);
  upload::row_tables(exec, t, d);
  return d;
}

}  // namespace heom::impl

#endif
