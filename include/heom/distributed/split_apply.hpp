// heom::impl::SplitApply: what an operator on one device's share of a split hierarchy adds to each
// application: the halo exchange (impl::HaloExchange), and the units of ADOs computed while the halo is
// in flight and after it has arrived. The generator launches its kernels through it; it knows nothing
// of them.
#ifndef HEOM_DISTRIBUTED_SPLIT_APPLY_HPP
#define HEOM_DISTRIBUTED_SPLIT_APPLY_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/to_device.hpp"
#include "heom/distributed/detail/halo_exchange.hpp"
#include "heom/distributed/distribution.hpp"
#include "heom/distributed/halo.hpp"
#include "heom/generator/options.hpp"

namespace heom::impl {

/// The units of work (a host kernel's chunks, or the portable kernel's teams) one launch computes:
/// all of them in order, or the listed ones (a split hierarchy computes the units that read no halo
/// block while the halo is in flight, then the rest).
template <class ExecSpace>
struct UnitList {
  typename BackendTraits<ExecSpace>::template view<const int*> ids;
  bool all = true;

  /// Units in the launch, out of `total`.
  KOKKOS_INLINE_FUNCTION int count(int total) const { return all ? total : static_cast<int>(ids.extent(0)); }
  /// The unit the launch's i-th iteration computes.
  KOKKOS_INLINE_FUNCTION int unit(int i) const { return all ? i : ids(i); }
};

template <class ExecSpace>
class SplitApply {
 public:
  using units = UnitList<ExecSpace>;

  /// For this device's share of `distribution` (of blocks of n x n), its halo's rows `rows` alone where
  /// given (the Hermitian forms'), its units `ados_per_chunk` (host kernels) and `ados_per_team`
  /// (portable kernel) ADOs long; overlapping the exchange with the interior's units as `overlap` says.
  SplitApply(const ExecSpace& exec, const Distribution& distribution, int n, const HaloRows* rows,
             ExchangeOverlap overlap, int ados_per_chunk, int ados_per_team)
      : m_exchange(exec, distribution.plan, n, distribution.communicator, rows),
        m_overlap(overlap == ExchangeOverlap::always ||
                  (overlap == ExchangeOverlap::automatic && distribution.communicator->progresses_in_background())) {
    std::tie(m_interior_chunks, m_boundary_chunks) = split_units(exec, distribution.plan, ados_per_chunk);
    std::tie(m_interior_teams, m_boundary_teams) = split_units(exec, distribution.plan, ados_per_team);
  }

  /// Fills the halo of the local vector at `local` (its rows alone with `rows_only`) and calls
  /// launch(chunks, teams) for the units to compute: while the halo is in flight, the units that read
  /// none of it, then the rest; or, without overlap, all of them once it has arrived. Every device
  /// calls it together.
  template <class Launch>
  void apply(const ExecSpace& exec, device_complex* local, bool rows_only, const Launch& launch) const {
    m_exchange.start(exec, local, rows_only);
    if (!m_overlap) {
      m_exchange.finish(exec, local, rows_only);
      launch(units{}, units{});
      return;
    }
    launch(m_interior_chunks, m_interior_teams);
    m_exchange.finish(exec, local, rows_only);
    launch(m_boundary_chunks, m_boundary_teams);
  }

  /// Whether the halo's rows were listed (an exchange may move them alone).
  bool has_rows() const { return m_exchange.has_rows(); }
  /// Bytes received per application.
  std::uint64_t bytes_received(bool rows_only) const { return m_exchange.bytes_received(rows_only); }

 private:
  /// The units of `ados_per_unit` ADOs that read no halo block (interior) and the rest.
  static std::pair<units, units> split_units(const ExecSpace& exec, const HaloPlan& plan, int ados_per_unit) {
    std::vector<int> interior, boundary;
    for (int unit = 0; unit * ados_per_unit < plan.owned; ++unit) {
      bool reads_halo = false;
      for (int a = unit * ados_per_unit; a < std::min(plan.owned, (unit + 1) * ados_per_unit) && !reads_halo; ++a)
        reads_halo = plan.reads_halo(a);
      (reads_halo ? boundary : interior).push_back(unit);
    }
    using ids = typename BackendTraits<ExecSpace>::template view<const int*>;
    return {{to_device<ids>(exec, "heom::generator::interior_units", interior, interior.size()), false},
            {to_device<ids>(exec, "heom::generator::boundary_units", boundary, boundary.size()), false}};
  }

  HaloExchange<ExecSpace> m_exchange;
  bool m_overlap = false;
  units m_interior_chunks, m_boundary_chunks, m_interior_teams, m_boundary_teams;
};

}  // namespace heom::impl

#endif
