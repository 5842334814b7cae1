// heom::NcclCommunicator: the parts of a hierarchy on GPUs linked by NCCL (NVLink, PCIe, InfiniBand).
#ifndef HEOM_DISTRIBUTED_NCCL_COMMUNICATOR_HPP
#define HEOM_DISTRIBUTED_NCCL_COMMUNICATOR_HPP

#include "heom/config.hpp"

#if !HEOM_ENABLE_NCCL
#error "heom was built without NCCL (Heom_ENABLE_NCCL=OFF): heom/distributed/nccl_communicator.hpp is not available"
#endif

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>
#include <vector>

#if HEOM_ENABLE_MPI
#include <mpi.h>
#endif

#include "heom/distributed/communicator.hpp"

namespace heom {

/// Halo messages are grouped ncclSend/ncclRecv on the communicator's own stream, straight between
/// device buffers, ordered after the caller's stream's work and before its later work by CUDA events
/// (orders_on_stream): no host waits, and the caller's interior kernels run while the halo moves.
/// The step-size reductions are NCCL collectives. Each part uses the GPU that was
/// current when it was made, and calls it from one host thread. A part that fails leaves the others
/// waiting in NCCL: with MPI ranks, end the job (MPI_Abort), as the heom program does.
class NcclCommunicator final : public Communicator {
 public:
#if HEOM_ENABLE_MPI
  /// Part p is rank p of `comm`, on the GPU current on that rank (cudaSetDevice it first): rank 0
  /// draws the NCCL id and broadcasts it over MPI. Throws heom::Error, before NCCL would fail less
  /// clearly, when two ranks of one node share a GPU.
  explicit NcclCommunicator(MPI_Comm comm);
#endif
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return m_rank; }
  int size() const override { return m_size; }
  std::string describe() const override;
  bool device_buffers() const override { return true; }
  bool progresses_in_background() const override { return true; }
  void start_exchange(const std::vector<Message>& sends, const std::vector<Message>& receives) const override;
  void finish_exchange() const override;
  bool orders_on_stream() const override { return true; }
  void start_exchange_after(void* stream, const std::vector<Message>& sends,
                            const std::vector<Message>& receives) const override;
  void finish_exchange_before(void* stream) const override;
  std::vector<double> gather_all(const std::vector<double>& mine) const override;
  double max(double value) const override;
  void broadcast(double* values, int count, int root) const override;

 private:
  /// Device scratch of at least `bytes` for the collectives' host data.
  void* scratch(std::size_t bytes) const;

  /// The grouped sends and receives on m_stream.
  void enqueue_exchange(const std::vector<Message>& sends, const std::vector<Message>& receives) const;

  ncclComm_t m_comm = nullptr;
  cudaStream_t m_stream = nullptr;
  cudaEvent_t m_sends_ready = nullptr, m_exchanged = nullptr;  // (stream-ordered exchanges)
  int m_device = 0, m_rank = 0, m_size = 1;
  mutable void* m_scratch = nullptr;
  mutable std::size_t m_scratch_bytes = 0;
};

}  // namespace heom

#endif
