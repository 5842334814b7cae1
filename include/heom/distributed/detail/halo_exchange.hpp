// heom::impl::HaloExchange: fills the halo of a local ADO vector (HaloPlan), or the rows of it that
// HaloRows lists, from the parts that own those ADOs.
#ifndef HEOM_DISTRIBUTED_DETAIL_HALO_EXCHANGE_HPP
#define HEOM_DISTRIBUTED_DETAIL_HALO_EXCHANGE_HPP

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/kokkos_compat.hpp"
#include "heom/core/to_device.hpp"
#include "heom/core/error.hpp"
#include "heom/distributed/communicator.hpp"
#include "heom/distributed/halo.hpp"

namespace heom::impl {

/// Run j of `length` elements at local + offsets(j) to buffer + j * length (pack), or back (unpack).
template <class ExecSpace, class Offsets>
void copy_runs(const ExecSpace& exec, const char* label, const Offsets& offsets, std::int64_t length,
               device_complex* local, device_complex* buffer, bool pack) {
  const std::int64_t count = static_cast<std::int64_t>(offsets.extent(0));
  if constexpr (BackendTraits<ExecSpace>::host_shape) {
    // A run per iteration: contiguous copies, no division per element.
    Kokkos::parallel_for(
        label, typename BackendTraits<ExecSpace>::range_policy(exec, 0, count), KOKKOS_LAMBDA(const std::int64_t j) {
          device_complex* at = local + offsets(j);
          device_complex* packed = buffer + j * length;
          const device_complex* from = pack ? at : packed;
          device_complex* to = pack ? packed : at;
          for (std::int64_t e = 0; e < length; ++e) to[e] = from[e];
        });
  } else {
    // An element per thread: neighbouring threads touch neighbouring addresses.
    Kokkos::parallel_for(
        label, typename BackendTraits<ExecSpace>::range_policy(exec, 0, count * length),
        KOKKOS_LAMBDA(const std::int64_t i) {
          device_complex& at = local[offsets(i / length) + i % length];
          if (pack)
            buffer[i] = at;
          else
            at = buffer[i];
        });
  }
}

/// A local vector holds the part's owned blocks, then its halo blocks (HaloPlan). An exchange packs
/// the owned blocks each peer needs into one buffer per peer, sends them, and receives each peer's
/// blocks straight into that peer's run of the halo (host memory, or device memory when the
/// communicator takes device buffers), or into a host buffer copied to the device run. It is split in
/// start() and finish(), so that the generator computes the ADOs that read no halo in between. Where
/// the communicator orders exchanges on a GPU stream (NCCL), the host waits for neither: the sends
/// wait for the pack, and the kernels after finish() for the exchange, on the GPU.
///
/// With HaloRows, an exchange may move the listed rows alone (for the Hermitian forms, host and
/// portable): packed row by row on the device, received into a buffer and copied row by row into the
/// halo blocks; the other rows of the halo are left as they were, unread.
template <class ExecSpace>
class HaloExchange {
 public:
  using traits = BackendTraits<ExecSpace>;
  using buffer_type = typename traits::template view<device_complex*>;
  using offsets_type = typename traits::template view<const std::int64_t*>;

  HaloExchange() = default;
  /// `stage_through_host`: send and receive through host copies even where the communicator takes
  /// this backend's buffers (what a GPU does without a device-aware communicator: tests run it on
  /// the CPU).
  HaloExchange(const ExecSpace& exec, const HaloPlan& plan, int n, std::shared_ptr<const Communicator> communicator,
               const HaloRows* rows = nullptr, bool stage_through_host = false)
      : m_communicator(std::move(communicator)),
        m_n(n),
        m_owned(plan.owned),
        m_halo(static_cast<int>(plan.halo.size())),
        m_send_to(plan.send_to),
        m_send_offset(plan.send_offset),
        m_receive_from(plan.receive_from),
        m_receive_offset(plan.receive_offset) {
    const std::size_t sent = plan.send_ados.size(), n2 = static_cast<std::size_t>(n) * n;
    std::vector<std::int64_t> whole(sent);  // each sent block's first element
    for (std::size_t j = 0; j < sent; ++j) whole[j] = static_cast<std::int64_t>(plan.send_ados[j]) * n2;
    m_send_blocks = to_device<offsets_type>(exec, "heom::halo::send_blocks", whole, sent);
    m_send = allocate<buffer_type>(exec, "heom::halo::send", sent * n2);
    m_staged = stage_through_host || (!traits::is_host && !m_communicator->device_buffers());
    m_on_stream = !m_staged && !traits::is_host && m_communicator->orders_on_stream();
    if (m_staged) {  // host copies of what crosses, for a communicator that takes host buffers only
      m_send_host = Kokkos::create_mirror(m_send);
      m_receive_host = allocate<typename buffer_type::HostMirror>(
          Kokkos::DefaultHostExecutionSpace(), "heom::halo::receive_host", static_cast<std::size_t>(m_halo) * n2);
    }
    if (rows) {
      m_has_rows = true;
      m_row_send_offset = rows->send_offset;
      m_row_receive_offset = rows->receive_offset;
      m_send_rows = to_device<offsets_type>(exec, "heom::halo::send_rows", rows->send_rows, rows->send_rows.size());
      m_receive_rows =
          to_device<offsets_type>(exec, "heom::halo::receive_rows", rows->receive_rows, rows->receive_rows.size());
      m_receive = allocate<buffer_type>(exec, "heom::halo::receive", rows->receive_rows.size() * n);
    }
  }

  /// Whether exchanges of listed rows alone were prepared (HaloRows given).
  bool has_rows() const { return m_has_rows; }
  /// Bytes one exchange receives: the whole halo, or its listed rows.
  std::uint64_t bytes_received(bool rows_only) const {
    const std::uint64_t elements = rows_only ? static_cast<std::uint64_t>(m_receive_rows.extent(0)) * m_n
                                             : static_cast<std::uint64_t>(m_halo) * m_n * m_n;
    return sizeof(device_complex) * elements;
  }

  /// Starts filling blocks [owned, owned + halo) of `local` (owned + halo blocks) from their owners,
  /// or only their listed rows (`rows_only`, after HaloRows were given); finish() completes it. The
  /// owned blocks may be read meanwhile, the halo not.
  void start(const ExecSpace& exec, device_complex* local, bool rows_only = false) const {
    // Whole blocks are runs of n^2 elements, rows runs of n.
    const std::int64_t run = rows_only ? m_n : static_cast<std::int64_t>(m_n) * m_n;
    const offsets_type sources = rows_only ? m_send_rows : m_send_blocks;
    copy_runs(exec, "heom::halo::pack", sources, run, local, m_send.data(), true);
    if (m_staged) Kokkos::deep_copy(exec, m_send_host, m_send);
    if (!m_on_stream) exec.fence();  // (else the exchange waits for the pack on the GPU)

    device_complex* send_base = m_staged ? m_send_host.data() : m_send.data();
    device_complex* receive_base = m_staged    ? m_receive_host.data()
                                   : rows_only ? m_receive.data()
                                               : local + static_cast<std::int64_t>(m_owned) * run;
    const std::vector<int>& send_offset = rows_only ? m_row_send_offset : m_send_offset;
    const std::vector<int>& receive_offset = rows_only ? m_row_receive_offset : m_receive_offset;
    std::vector<Communicator::Message> sends, receives;
    const std::size_t run_bytes = sizeof(device_complex) * run;
    for (std::size_t i = 0; i < m_send_to.size(); ++i)
      sends.push_back({m_send_to[i], send_base + static_cast<std::int64_t>(send_offset[i]) * run,
                       run_bytes * (send_offset[i + 1] - send_offset[i])});
    for (std::size_t i = 0; i < m_receive_from.size(); ++i)
      receives.push_back({m_receive_from[i], receive_base + static_cast<std::int64_t>(receive_offset[i]) * run,
                          run_bytes * (receive_offset[i + 1] - receive_offset[i])});
    if (m_on_stream)
      m_communicator->start_exchange_after(backend::native_stream(exec), sends, receives);
    else
      m_communicator->start_exchange(sends, receives);
  }

  void finish(const ExecSpace& exec, device_complex* local, bool rows_only = false) const {
    if (m_on_stream)
      m_communicator->finish_exchange_before(backend::native_stream(exec));  // (exec's next kernels wait for it)
    else
      m_communicator->finish_exchange();
    if (rows_only) {
      if (m_staged)
        Kokkos::deep_copy(exec, m_receive,
                          Kokkos::subview(m_receive_host, std::make_pair(std::size_t(0), m_receive.extent(0))));
      copy_runs(exec, "heom::halo::unpack", m_receive_rows, m_n, local, m_receive.data(), false);
    } else if (m_staged) {
      const std::int64_t n2 = static_cast<std::int64_t>(m_n) * m_n;
      Kokkos::View<device_complex*, typename traits::device_type, Kokkos::MemoryTraits<Kokkos::Unmanaged>> halo(
          local + static_cast<std::int64_t>(m_owned) * n2, static_cast<std::size_t>(m_halo) * n2);
      Kokkos::deep_copy(exec, halo, m_receive_host);
    }
  }

 private:
  std::shared_ptr<const Communicator> m_communicator;
  int m_n = 0, m_owned = 0, m_halo = 0;
  bool m_staged = false;
  bool m_on_stream = false;  // the exchange ordered on exec's stream (Communicator::orders_on_stream)
  std::vector<int> m_send_to, m_send_offset, m_receive_from, m_receive_offset;
  offsets_type m_send_blocks;  // each sent block's first element
  buffer_type m_send;
  typename buffer_type::HostMirror m_send_host, m_receive_host;
  // Exchanges of rows (HaloRows): each packed and each received row's first element, and the buffer
  // the rows arrive in.
  bool m_has_rows = false;
  std::vector<int> m_row_send_offset, m_row_receive_offset;  // in rows
  offsets_type m_send_rows, m_receive_rows;
  buffer_type m_receive;
};

}  // namespace heom::impl

#endif
