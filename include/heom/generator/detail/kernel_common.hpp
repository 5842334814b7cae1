// What the generator kernels share: how a kernel finds an ADO's block and its neighbours' blocks in
// a flat ADO vector, the terms that more than one kernel computes (the diagonal baths' lanes, the
// dense baths' X and Y), which units a launch computes, and the per-range hook.
#ifndef HEOM_GENERATOR_DETAIL_KERNEL_COMMON_HPP
#define HEOM_GENERATOR_DETAIL_KERNEL_COMMON_HPP

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "heom/core/backend_traits.hpp"
#include "heom/core/kokkos_compat.hpp"
#include "heom/distributed/split_apply.hpp"
#include "heom/generator/detail/generator_data.hpp"

namespace heom::impl {

KOKKOS_INLINE_FUNCTION device_complex times_i(const device_complex& z) { return device_complex(-z.imag(), z.real()); }

/// The doubles of ADO a's block (lane 2e + s: the real (s = 0) or imaginary (s = 1) part of element e).
template <class Complex>
KOKKOS_FORCEINLINE_FUNCTION auto block_lanes(Complex* all, std::int64_t a, int n2) {
  using Double = typename std::conditional<std::is_const<Complex>::value, const double, double>::type;
  return reinterpret_cast<Double*>(all + a * n2);
}

/// The block of a neighbour that may be absent (index < 0): ADO 0's block, always valid, which the
/// caller multiplies by a zero factor. Keeps the loops free of a branch per element.
template <class Complex>
KOKKOS_FORCEINLINE_FUNCTION auto neighbour_lanes(Complex* all, int index, int n2) {
  return block_lanes(all, index >= 0 ? index : 0, n2);
}

/// ADO a's neighbours along exponent k: up = n + e_k, down = n - e_k (-1 where absent, and down
/// always when n_k = 0), and nk, the weight of the down term: n_k where n - e_k is there, else 0 (an
/// importance-truncated hierarchy may lack it).
struct Links {
  int up, down, nk;
  /// Whether exponent k adds nothing to ADO a.
  KOKKOS_INLINE_FUNCTION bool none() const { return up < 0 && nk == 0; }
};

template <class ExecSpace>
KOKKOS_FORCEINLINE_FUNCTION Links links(const GeneratorData<ExecSpace>& d, int a, int k) {
  const int nk = d.labels(a, k);
  const int down = nk > 0 ? d.prev(a, k) : -1;
  return {d.next(a, k), down, down >= 0 ? nk : 0};
}

/// One exponent's terms of a diagonal bath in lane form (GeneratorTables), lane by lane:
/// cf_b rho_{n+e_k} + n_k alpha_k rho_{n-e_k}. An absent neighbour reads ADO 0's block times 0.
struct DiagonalLinkLanes {
  const double* cp;
  const double* cq;
  const double* up;
  const double* ap;
  const double* aq;
  const double* down;
  double up_on, scale;

  template <class ExecSpace>
  KOKKOS_FORCEINLINE_FUNCTION DiagonalLinkLanes(const GeneratorData<ExecSpace>& d, const device_complex* in, int b,
                                                int k, const Links& l)
      : cp(&d.cf_p(b, 0)),
        cq(&d.cf_q(b, 0)),
        up(neighbour_lanes(in, l.up, d.n2)),
        ap(&d.alpha_p(k, 0)),
        aq(&d.alpha_q(k, 0)),
        down(neighbour_lanes(in, l.down, d.n2)),
        up_on(l.up >= 0 ? 1.0 : 0.0),
        scale(static_cast<double>(l.nk)) {}

  KOKKOS_FORCEINLINE_FUNCTION double operator()(int x) const {
    return up_on * (cp[x] * up[x] + cq[x] * up[x ^ 1]) + scale * (ap[x] * down[x] + aq[x] * down[x ^ 1]);
  }
};

/// A dense Q_b's terms of the general form, added to the block `o` (lanes) of ADO a of dimension n:
///   M_b = sum_k rho_{n+e_k} + n_k c_k rho_{n-e_k},  R_b = sum_k n_k c2_k rho_{n-e_k},
///   X_b = R_b - i M_b + 2 Delta_b rho Q_b,  Y_b = R_b + i M_b,  (a Lindblad jump's rho Q_b^dagger:
///   GeneratorTables::right)  and the bath adds Q_b X_b + Y_b Q_b:
/// one commutator and one anticommutator per bath, whatever its number of exponents. M_b and R_b
/// are summed in sum_m and sum_r (n^2 elements each), X_b and Y_b take their place. `loop(count, f)`
/// calls f(e) for e in [0, count), split over a team's threads or in one thread; loop.sync() orders
/// the phases whose elements different threads compute.
template <class ExecSpace, class Loop>
KOKKOS_FORCEINLINE_FUNCTION void add_dense_bath(const GeneratorData<ExecSpace>& d, const device_complex* in, int a,
                                                int b, int n, device_complex* sum_m, device_complex* sum_r, double* o,
                                                const Loop& loop) {
  const int n2 = n * n;
  const device_complex* rho = in + static_cast<std::int64_t>(a) * n2;
  loop(n2, [&](const int e) {
    sum_m[e] = device_complex(0.0);
    sum_r[e] = device_complex(0.0);
  });
  for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
    const Links l = links(d, a, k);
    if (l.up >= 0) {
      const device_complex* x = in + static_cast<std::int64_t>(l.up) * n2;
      loop(n2, [&](const int e) { sum_m[e] += x[e]; });
    }
    if (l.nk > 0) {
      const device_complex* x = in + static_cast<std::int64_t>(l.down) * n2;
      const device_complex cm = static_cast<double>(l.nk) * d.c_commutator(k);
      const device_complex ca = static_cast<double>(l.nk) * d.c_anticommutator(k);
      loop(n2, [&](const int e) {
        sum_m[e] += cm * x[e];
        sum_r[e] += ca * x[e];
      });
    }
  }
  const device_complex td = d.two_delta(b);
  loop(n2, [&](const int e) {
    device_complex xe = sum_r[e] - times_i(sum_m[e]);
    if (td != device_complex(0.0)) {
      const int l = e / n, j = e % n;
      device_complex rho_q(0.0);
      for (int s = 0; s < n; ++s) rho_q += rho[l * n + s] * d.right(b, s, j);
      xe += td * rho_q;
    }
    const device_complex ye = sum_r[e] + times_i(sum_m[e]);
    sum_m[e] = xe;
    sum_r[e] = ye;
  });
  loop.sync();
  loop(n2, [&](const int e) {
    const int i = e / n, j = e % n;
    device_complex acc(0.0);
    for (int l = 0; l < n; ++l) acc += d.coupling(b, i, l) * sum_m[l * n + j] + sum_r[i * n + l] * d.coupling(b, l, j);
    o[2 * e] += acc.real();
    o[2 * e + 1] += acc.imag();
  });
}

/// ADO a's fermionic signs (QuTiP 4.7's _grad_next_fermionic and _grad_prev_fermionic): its occupied
/// fermionic exponents are entries 1..excitations of GeneratorData::fermion_occupied.
struct FermionSigns {
  int excitations = 0;
  double up_sign = 0.0;    ///< (-1)^(F + 1): Y's factor of an n + e_k term, minus that of an n - e_k one
  double left_sign = 0.0;  ///< -1 for odd parity, where the X terms (O X) change sign
  bool below_top = false;  ///< a has n + e_k neighbours
};

template <class ExecSpace>
KOKKOS_FORCEINLINE_FUNCTION FermionSigns fermion_signs(const GeneratorData<ExecSpace>& d, int a) {
  FermionSigns s;
  for (int j = 1; j <= d.occupied_slots() && d.occupied_exponent(a, j) >= 0; ++j) ++s.excitations;
  s.up_sign = s.excitations % 2 == 0 ? -1.0 : 1.0;
  s.left_sign = d.odd_parity ? -1.0 : 1.0;
  s.below_top = d.fermion_occupied(a, 0) != 0;
  return s;
}

/// f(k, neighbour, positive) for each n + e_k neighbour of ADO a along fermionic bath b, k ascending;
/// positive: s_k = +1, where s_k = (-1)^(a's occupied exponents before k). Its factors are -i s_k
/// left_sign (X) and -i s_k up_sign (Y).
template <class ExecSpace, class F>
KOKKOS_FORCEINLINE_FUNCTION void for_each_fermion_up(const GeneratorData<ExecSpace>& d, int a, int b,
                                                     const FermionSigns& s, const F& f) {
  if (!s.below_top) return;
  int next_occupied = 1;  // (the table entry of the first occupied exponent >= k)
  for (int k = d.bath_begin(b); k < d.bath_begin(b + 1); ++k) {
    while (next_occupied <= s.excitations && d.occupied_exponent(a, next_occupied) < k) ++next_occupied;
    const int up = d.next(a, k);  // (>= 0 only where n_k = 0)
    if (up >= 0) f(k, up, (next_occupied - 1) % 2 == 0);
  }
}

/// f(k, neighbour, cx, cy) for each n - e_k neighbour of ADO a along fermionic bath b, k ascending,
/// with its factors in X (cx) and Y (cy).
template <class ExecSpace, class F>
KOKKOS_FORCEINLINE_FUNCTION void for_each_fermion_down(const GeneratorData<ExecSpace>& d, int a, int b,
                                                       const FermionSigns& s, const F& f) {
  const int first = d.bath_begin(b), end = d.bath_begin(b + 1);
  for (int j = 1; j <= s.excitations; ++j) {
    const int k = d.occupied_exponent(a, j), down = d.occupied_neighbour(a, j);
    if (k >= end) break;
    if (k < first || down < 0) continue;
    const device_complex factor = ((j - 1) % 2 == 0 ? 1.0 : -1.0) * device_complex(0.0, -1.0);  // -i s_k
    f(k, down, s.left_sign * factor * d.fermion_c(k), -s.up_sign * factor * d.fermion_partner_conj(k));
  }
}

/// Whether exponent k's neighbour in the given direction couples through Q (else Q^dagger): a plus
/// exponent's n + e_k and a minus one's n - e_k.
template <class ExecSpace>
KOKKOS_FORCEINLINE_FUNCTION bool couples_through_q(const GeneratorData<ExecSpace>& d, int k, bool up) {
  return (d.fermion_kind(k) > 0) == up;
}

/// o += O X + Y O for O = Q_g (dagger 0) or Q_g^dagger, over the rows and columns of Q_g that hold a
/// nonzero alone (an annihilation operator's few). `loop` as in add_dense_bath.
template <class ExecSpace, class Loop>
KOKKOS_FORCEINLINE_FUNCTION void add_fermion_product(const GeneratorData<ExecSpace>& d, int g, int dagger, int n,
                                                     const device_complex* x, const device_complex* y, double* o,
                                                     const Loop& loop) {
  const int rows = d.fermion_row_count(g), columns = d.fermion_column_count(g);
  loop(n * n, [&](const int e) {
    const int i = e / n, j = e % n;
    device_complex acc(0.0);
    if (dagger == 0) {  // (Q X)_ij over Q's columns l, (Y Q)_ij over its rows
      for (int r = 0; r < columns; ++r) {
        const int l = d.fermion_columns(g, r);
        acc += d.coupling(g, i, l) * x[l * n + j];
      }
      for (int r = 0; r < rows; ++r) {
        const int l = d.fermion_rows(g, r);
        acc += y[i * n + l] * d.coupling(g, l, j);
      }
    } else {  // Q^dagger_il = conj(Q_li): (Q^dagger X)_ij over Q's rows l, (Y Q^dagger)_ij over its columns
      for (int r = 0; r < rows; ++r) {
        const int l = d.fermion_rows(g, r);
        acc += Kokkos::conj(d.coupling(g, l, i)) * x[l * n + j];
      }
      for (int r = 0; r < columns; ++r) {
        const int l = d.fermion_columns(g, r);
        acc += y[i * n + l] * Kokkos::conj(d.coupling(g, j, l));
      }
    }
    o[2 * e] += acc.real();
    o[2 * e + 1] += acc.imag();
  });
}

/// The terms (Exponent) of the fermionic baths of group g (GeneratorTables::fermion_group: the baths
/// with Q = Q_g) added to the block `o` (lanes) of ADO a of dimension n. For O = Q, then O =
/// Q^dagger, the exponents that couple through O sum their neighbours into X (the factors of O X) and
/// Y (those of X O), in sum_x and sum_y, and the group adds O X + Y O once: first the n + e_k
/// neighbours' signed sum (their factors differ by a sign alone), then the n - e_k ones with theirs.
/// `loop` as in add_dense_bath.
///
/// Each fermionic entry is 0 or 1, so ADO a's neighbours n - e_k are its few occupied exponents
/// (GeneratorData::fermion_occupied), and it has n + e_k ones only below the top tier: the work
/// follows the links there are, not K (most ADOs of a deep hierarchy sit in its top tier).
template <class ExecSpace, class Loop>
KOKKOS_FORCEINLINE_FUNCTION void add_fermionic_group(const GeneratorData<ExecSpace>& d, const device_complex* in, int a,
                                                     int g, int n, device_complex* sum_x, device_complex* sum_y,
                                                     double* o, const Loop& loop) {
  const int n2 = n * n;
  const FermionSigns s = fermion_signs(d, a);
  for (int dagger = 0; dagger < 2; ++dagger) {
    bool started = false;  // (the same on every thread of a team: the sums are zeroed and used together)
    auto start = [&]() {
      if (started) return;
      loop.sync();  // (the previous pass's product may still read the sums)
      loop(n2, [&](const int e) {
        sum_x[e] = device_complex(0.0);
        sum_y[e] = device_complex(0.0);
      });
      started = true;
    };
    for (int b = g; b < d.num_baths; ++b) {
      if (d.fermion_group(b) != g) continue;
      for_each_fermion_up(d, a, b, s, [&](int k, int up, bool positive) {
        if (couples_through_q(d, k, true) != (dagger == 0)) return;
        start();
        const device_complex* x = in + static_cast<std::int64_t>(up) * n2;
        if (positive)
          loop(n2, [&](const int e) { sum_x[e] += x[e]; });
        else
          loop(n2, [&](const int e) { sum_x[e] -= x[e]; });
      });
    }
    if (started)
      loop(n2, [&](const int e) {
        const device_complex minus_i_sum(sum_x[e].imag(), -sum_x[e].real());
        sum_x[e] = s.left_sign * minus_i_sum;
        sum_y[e] = s.up_sign * minus_i_sum;
      });
    for (int b = g; b < d.num_baths; ++b) {
      if (d.fermion_group(b) != g) continue;
      for_each_fermion_down(d, a, b, s, [&](int k, int down, device_complex cx, device_complex cy) {
        if (couples_through_q(d, k, false) != (dagger == 0)) return;
        start();
        const device_complex* x = in + static_cast<std::int64_t>(down) * n2;
        loop(n2, [&](const int e) {
          sum_x[e] += cx * x[e];
          sum_y[e] += cy * x[e];
        });
      });
    }
    if (!started) continue;
    loop.sync();
    add_fermion_product(d, g, dagger, n, sum_x, sum_y, o, loop);
  }
}

/// Rank-one Lindblad jump r (GeneratorTables::jump_u, jump_w) on the block rho of dimension n: the
/// weight w^T rho conj(w) of its u u^dagger, row k of rho summed where w_k != 0 (a transfer |i><j|:
/// one element), and that term's element (i, j) times `scale`.
template <class ExecSpace>
KOKKOS_FORCEINLINE_FUNCTION device_complex jump_weight_row(const GeneratorData<ExecSpace>& d, const device_complex* rho,
                                                           int r, int n, int k) {
  const device_complex wk = d.jump_w(r, k);
  device_complex row(0.0);
  if (wk != device_complex(0.0))
    for (int m = 0; m < n; ++m) row += rho[k * n + m] * Kokkos::conj(d.jump_w(r, m));
  return wk * row;
}
template <class ExecSpace>
KOKKOS_FORCEINLINE_FUNCTION device_complex jump_element(const GeneratorData<ExecSpace>& d, int r, int i, int j,
                                                        const device_complex& scaled_weight) {
  return scaled_weight * d.jump_u(r, i) * Kokkos::conj(d.jump_u(r, j));
}

/// scale times every rank-one Lindblad jump of the block rho added to the lanes o, in one thread (the
/// host kernels).
template <class ExecSpace>
KOKKOS_FORCEINLINE_FUNCTION void add_rank_one_jumps(const GeneratorData<ExecSpace>& d, const device_complex* rho, int n,
                                                    double scale, double* o) {
  for (int r = 0; r < d.num_rank_one_jumps; ++r) {
    device_complex weight(0.0);
    for (int k = 0; k < n; ++k) weight += jump_weight_row(d, rho, r, n, k);
    weight *= scale;
    for (int i = 0; i < n; ++i) {
      if (d.jump_u(r, i) == device_complex(0.0)) continue;
      for (int j = 0; j < n; ++j) {
        const device_complex x = jump_element(d, r, i, j, weight);
        o[2 * (i * n + j)] += x.real();
        o[2 * (i * n + j) + 1] += x.imag();
      }
    }
  }
}

/// add_dense_bath's loop in one thread (the host kernels).
struct ThreadLoop {
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(int count, const F& f) const {
    for (int e = 0; e < count; ++e) f(e);
  }
  KOKKOS_FORCEINLINE_FUNCTION void sync() const {}
};

/// add_dense_bath's loop over a team's threads (PortableKernel).
template <class Member>
struct TeamLoop {
  const Member& team;
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION void operator()(int count, const F& f) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), f);
  }
  KOKKOS_FORCEINLINE_FUNCTION void sync() const { team.team_barrier(); }
};

/// The portable kernels' launch: a team per run of `ados_per_team` consecutive ADOs, of the units
/// `teams` lists, each with `scratch_bytes` of team scratch at `scratch_level`.
template <class ExecSpace>
typename BackendTraits<ExecSpace>::team_policy team_launch(const ExecSpace& exec, int num_ados, int ados_per_team,
                                                           const UnitList<ExecSpace>& teams, int team_size,
                                                           std::size_t scratch_bytes, int scratch_level) {
  const int league = teams.count((num_ados + ados_per_team - 1) / ados_per_team);
  typename BackendTraits<ExecSpace>::team_policy p(exec, league, team_size);
  if (scratch_bytes > 0) p.set_scratch_size(scratch_level, Kokkos::PerTeam(scratch_bytes));
  return p;
}

/// The ADOs [first, last) that a portable kernel's team computes.
template <class ExecSpace, class Member>
KOKKOS_INLINE_FUNCTION void team_ados(const Member& team, const UnitList<ExecSpace>& teams, int num_ados,
                                      int ados_per_team, int& first, int& last) {
  first = teams.unit(team.league_rank()) * ados_per_team;
  last = first + ados_per_team < num_ados ? first + ados_per_team : num_ados;
}

/// f(i) for i in [0, count), split over a team's threads.
template <class Member, class F>
KOKKOS_FORCEINLINE_FUNCTION void team_for(const Member& team, int count, const F& f) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), f);
}

/// add_rank_one_jumps over a team's threads (the portable kernels): the weight a team reduction, then
/// the lanes split over the threads. Each thread writes the lanes team_for gives it (the caller orders
/// that with the team's other phases).
template <class ExecSpace, class Member>
KOKKOS_FORCEINLINE_FUNCTION void add_rank_one_jumps(const Member& team, const GeneratorData<ExecSpace>& d,
                                                    const device_complex* rho, int n, double scale, double* o) {
  for (int r = 0; r < d.num_rank_one_jumps; ++r) {
    double weight_re = 0.0, weight_im = 0.0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, n),
        [&](const int k, double& sum) { sum += jump_weight_row(d, rho, r, n, k).real(); }, weight_re);
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, n),
        [&](const int k, double& sum) { sum += jump_weight_row(d, rho, r, n, k).imag(); }, weight_im);
    const device_complex weight = scale * device_complex(weight_re, weight_im);
    team_for(team, 2 * n * n, [&](const int lane) {
      const int e = lane / 2;
      const device_complex x = jump_element(d, r, e / n, e % n, weight);
      o[lane] += (lane & 1) ? x.imag() : x.real();
    });
  }
}

/// A host kernel (operator()(chunk)) run on the chunks a UnitList names.
template <class ExecSpace, class Kernel>
struct ListedChunks {
  Kernel kernel;
  UnitList<ExecSpace> units;
  void operator()(const int i) const { kernel(units.unit(i)); }
};

/// Generator::apply_then's default: nothing after each range of ADOs.
struct NoAfter {
  void operator()(int /*first*/, int /*last*/) const {}
};

/// Whether an apply_then hook takes the blocks themselves: a member take_block(a, lanes) that the
/// host-block kernels call with ADO a's new block (2 n^2 doubles, in their registers or cache)
/// instead of storing it into `out` and calling after(a, a + 1). What the hook keeps of the block is
/// then all there is of it (Generator::apply_then).
template <class After, class = void>
struct TakesBlocks : std::false_type {};
template <class After>
struct TakesBlocks<After, std::void_t<decltype(std::declval<const After&>().take_block(0, (const double*)nullptr))>>
    : std::true_type {};

/// Whether a hook that takes blocks also takes a Hermitian block as its upper triangle: a member
/// take_upper(a, packed) that the Hermitian host kernel calls instead of take_block, with the
/// elements (i, j >= i) of ADO a's new block row by row (n (n + 1) / 2 complex numbers, two doubles
/// each: the layout of the integrators' HermitianPacking). The kernel then never forms the lower
/// triangle, the upper one's conjugate, and the hook does not gather the upper one.
template <class After, class = void>
struct TakesUpperTriangles : std::false_type {};
template <class After>
struct TakesUpperTriangles<After,
                           std::void_t<decltype(std::declval<const After&>().take_upper(0, (const double*)nullptr))>>
    : std::true_type {};

/// Generator::apply_then's `after`, whatever its type, as a function and the object it calls: the
/// kernels are compiled once for every hook (an integrator's update comes in one type per order and
/// kind of weights), for one indirect call per range of ADOs. `after` must outlive the launch.
struct RangeHook {
  void (*call)(const void* after, int first, int last) = nullptr;
  void (*take)(const void* after, int a, const double* lanes) = nullptr;         // TakesBlocks hooks only
  void (*take_upper)(const void* after, int a, const double* packed) = nullptr;  // TakesUpperTriangles
  const void* after = nullptr;

  template <class After>
  static RangeHook of(const After& after) {
    static_assert(!TakesUpperTriangles<After>::value || TakesBlocks<After>::value,
                  "a hook that takes upper triangles takes the general kernels' whole blocks too");
    RangeHook hook;
    hook.after = &after;
    if constexpr (TakesUpperTriangles<After>::value)
      hook.take_upper = [](const void* f, int a, const double* packed) {
        static_cast<const After*>(f)->take_upper(a, packed);
      };
    if constexpr (TakesBlocks<After>::value)
      hook.take = [](const void* f, int a, const double* lanes) { static_cast<const After*>(f)->take_block(a, lanes); };
    else
      hook.call = [](const void* f, int first, int last) { (*static_cast<const After*>(f))(first, last); };
    return hook;
  }
  void operator()(int first, int last) const { call(after, first, last); }
};

/// Whether `after` is a hook that takes the blocks (RangeHook::of a TakesBlocks hook).
template <class After>
inline bool takes_blocks([[maybe_unused]] const After& after) {
  if constexpr (std::is_same<After, RangeHook>::value)
    return after.take != nullptr;
  else
    return TakesBlocks<After>::value;
}

/// Whether `after` takes Hermitian blocks as their upper triangles (TakesUpperTriangles).
template <class After>
inline bool takes_upper_triangles([[maybe_unused]] const After& after) {
  if constexpr (std::is_same<After, RangeHook>::value)
    return after.take_upper != nullptr;
  else
    return TakesUpperTriangles<After>::value;
}

/// The Hermitian host kernel's new block of ADO a as its upper triangle, to a hook that takes it.
template <class After>
inline void finish_upper_triangle(const After& after, const double* packed, int a) {
  if constexpr (std::is_same<After, RangeHook>::value)
    after.take_upper(after.after, a, packed);
  else if constexpr (TakesUpperTriangles<After>::value)
    after.take_upper(a, packed);
}

/// A host-block kernel's new block of ADO a: handed to a hook that takes blocks, or stored into
/// `out` with after(a, a + 1) called.
template <class After>
inline void finish_block(const After& after, double* out_block, const double* lanes, int count, int a) {
  if constexpr (std::is_same<After, RangeHook>::value) {
    if (after.take) {
      after.take(after.after, a, lanes);
      return;
    }
  }
  for (int lane = 0; lane < count; ++lane) out_block[lane] = lanes[lane];
  after(a, a + 1);
}

/// after(a, a + 1) from a kernel that may run on a GPU: `after` is a host function (apply_then runs
/// on host backends alone), so the call is kept out of nvcc's device pass.
template <class After>
KOKKOS_INLINE_FUNCTION void call_after([[maybe_unused]] const After& after, [[maybe_unused]] int a) {
  HEOM_IF_ON_HOST((after(a, a + 1);))
}

}  // namespace heom::impl

#endif
