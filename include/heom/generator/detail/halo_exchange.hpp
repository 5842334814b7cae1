// heom::impl::HaloExchange: fills the halo of a local ADO vector from the parts that own those ADOs.
#ifndef HEOM_GENERATOR_DETAIL_HALO_EXCHANGE_HPP
#define HEOM_GENERATOR_DETAIL_HALO_EXCHANGE_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/detail/to_device.hpp"
#include "heom/distributed/communicator.hpp"
#include "heom/hierarchy/partition.hpp"

namespace heom::impl {

/// A local vector holds the part's owned blocks, then its halo blocks (HaloPlan). An exchange packs
/// the owned blocks each peer needs into one buffer per peer, sends them, and receives each peer's
/// blocks straight into that peer's run of the halo (host memory, or device memory when the
/// communicator takes device buffers), or into a host buffer copied to the device run. It is split in
/// start() and finish(), so that the generator computes the ADOs that read no halo in between.
template <class ExecSpace>
class HaloExchange {
 public:
  using traits = BackendTraits<ExecSpace>;
  using buffer_type = typename traits::template view<device_complex*>;

  HaloExchange() = default;
  HaloExchange(const HaloPlan& plan, int n2, std::shared_ptr<const Communicator> communicator)
      : m_communicator(std::move(communicator)),
        m_n2(n2),
        m_owned(plan.owned),
        m_halo(static_cast<int>(plan.halo.size())),
        m_send_to(plan.send_to),
        m_send_offset(plan.send_offset),
        m_receive_from(plan.receive_from),
        m_receive_offset(plan.receive_offset) {
    const std::size_t sent = plan.send_ados.size();
    m_send_ados = to_device<typename traits::template view<const int*>>("heom::halo::send_ados", plan.send_ados, sent);
    m_send = buffer_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("heom::halo::send")), sent * n2);
    m_staged = !traits::is_host && !m_communicator->device_buffers();
    if (m_staged) {  // host copies of what crosses, for a communicator that takes host buffers only
      m_send_host = Kokkos::create_mirror_view(m_send);
      m_receive_host = typename buffer_type::HostMirror(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("heom::halo::receive_host")),
          static_cast<std::size_t>(m_halo) * n2);
    }
  }

  /// Starts filling blocks [owned, owned + halo) of `local` (owned + halo blocks) from their owners;
  /// finish() completes it. The owned blocks may be read meanwhile, the halo not.
  void start(const ExecSpace& exec, device_complex* local) const {
    const std::int64_t n2 = m_n2;
    const auto send = m_send;
    const auto ados = m_send_ados;
    if constexpr (traits::host_kernels) {
      // A block per iteration: contiguous copies, no division per element.
      Kokkos::parallel_for(
          "heom::halo::pack", typename traits::range_policy(exec, 0, static_cast<std::int64_t>(ados.extent(0))),
          KOKKOS_LAMBDA(const std::int64_t j) {
            const device_complex* from = local + ados(j) * n2;
            device_complex* to = send.data() + j * n2;
            for (std::int64_t e = 0; e < n2; ++e) to[e] = from[e];
          });
    } else {
      // An element per thread: neighbouring threads touch neighbouring addresses.
      Kokkos::parallel_for(
          "heom::halo::pack", typename traits::range_policy(exec, 0, static_cast<std::int64_t>(m_send.extent(0))),
          KOKKOS_LAMBDA(const std::int64_t i) { send(i) = local[ados(i / n2) * n2 + i % n2]; });
    }
    if (m_staged) Kokkos::deep_copy(exec, m_send_host, m_send);
    exec.fence();

    device_complex* send_base = m_staged ? m_send_host.data() : m_send.data();
    device_complex* receive_base = m_staged ? m_receive_host.data() : local + static_cast<std::int64_t>(m_owned) * n2;
    std::vector<Communicator::Message> sends, receives;
    const std::size_t block_bytes = sizeof(device_complex) * n2;
    for (std::size_t i = 0; i < m_send_to.size(); ++i)
      sends.push_back({m_send_to[i], send_base + static_cast<std::int64_t>(m_send_offset[i]) * n2,
                       block_bytes * (m_send_offset[i + 1] - m_send_offset[i])});
    for (std::size_t i = 0; i < m_receive_from.size(); ++i)
      receives.push_back({m_receive_from[i], receive_base + static_cast<std::int64_t>(m_receive_offset[i]) * n2,
                          block_bytes * (m_receive_offset[i + 1] - m_receive_offset[i])});
    m_communicator->start_exchange(sends, receives);
  }

  void finish(const ExecSpace& exec, device_complex* local) const {
    m_communicator->finish_exchange();
    if (m_staged) {
      const std::int64_t n2 = m_n2;
      Kokkos::View<device_complex*, typename traits::device_type, Kokkos::MemoryTraits<Kokkos::Unmanaged>> halo(
          local + static_cast<std::int64_t>(m_owned) * n2, static_cast<std::size_t>(m_halo) * n2);
      Kokkos::deep_copy(exec, halo, m_receive_host);
    }
  }

 private:
  std::shared_ptr<const Communicator> m_communicator;
  int m_n2 = 0, m_owned = 0, m_halo = 0;
  bool m_staged = false;
  std::vector<int> m_send_to, m_send_offset, m_receive_from, m_receive_offset;
  typename traits::template view<const int*> m_send_ados;
  buffer_type m_send;
  typename buffer_type::HostMirror m_send_host, m_receive_host;
};

}  // namespace heom::impl

#endif
