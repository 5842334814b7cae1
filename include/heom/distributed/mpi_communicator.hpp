// heom::MpiCommunicator: the parts of a hierarchy on the ranks of an MPI communicator, one per rank.
#ifndef HEOM_DISTRIBUTED_MPI_COMMUNICATOR_HPP
#define HEOM_DISTRIBUTED_MPI_COMMUNICATOR_HPP

#include "heom/config.hpp"

#if !HEOM_ENABLE_MPI
#error "heom was built without MPI (Heom_ENABLE_MPI=OFF): heom/distributed/mpi_communicator.hpp is not available"
#endif

#include <mpi.h>

#include <deque>
#include <vector>

#include "heom/distributed/communicator.hpp"

namespace heom {

/// Part p is rank p of `comm`; heom talks on a duplicate of it, so its messages never meet the
/// caller's. Host buffers: device data is staged through the host (a CUDA-aware MPI is not assumed).
/// Errors from MPI abort the job (MPI's default handler): a failed exchange cannot be recovered by
/// one rank alone. Likewise a rank that throws leaves the others waiting in their next exchange: a
/// program catches, reports and calls abort() (MPI_Abort), as the heom program does.
class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return m_rank; }
  int size() const override { return m_size; }
  std::string describe() const override;
  void start_exchange(const std::vector<Message>& sends, const std::vector<Message>& receives) const override;
  void finish_exchange() const override;
  std::vector<double> gather_all(const std::vector<double>& mine) const override;
  double max(double value) const override;
  void broadcast(double* values, int count, int root) const override;
  /// Counters in an MPI window on rank 0, taken with MPI_Fetch_and_op (passive target: on one node,
  /// shared memory; across nodes, how promptly rank 0 answers while it computes depends on the MPI's
  /// one-sided progress). Freeing it is collective too: every rank drops its handle in the same order.
  std::shared_ptr<WorkCounter> make_work_counter() const override;

  /// Non-blocking sends (MPI_Isend) kept until complete, and MPI_Iprobe / MPI_Recv on rank 0, on a tag
  /// of their own. One thread per rank calls them (an ensemble's ranks run one device each).
  void send_to_root(std::vector<double> data) const override;
  bool receive_at_root(std::vector<double>& data, bool wait) const override;
  void finish_sends_to_root() const override;

  /// heom's duplicate of the communicator it was given.
  MPI_Comm comm() const { return m_comm; }
  /// Ends every rank of the communicator with `exit_code` (MPI_Abort): what a rank that failed does
  /// so that the others do not wait for it forever.
  [[noreturn]] void abort(int exit_code) const;

 private:
  MPI_Comm m_comm;
  int m_rank = 0, m_size = 1;
  mutable std::vector<MPI_Request> m_requests;  // the exchange in flight
  struct PendingSend {
    std::vector<double> data;
    MPI_Request request;
  };
  mutable std::deque<PendingSend> m_sends;  // send_to_root's, until delivered
};

}  // namespace heom

#endif
