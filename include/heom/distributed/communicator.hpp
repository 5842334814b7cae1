// heom::Communicator: how the devices that share one hierarchy exchange ADO blocks and reduce the
// integrators' step-size norms.
#ifndef HEOM_DISTRIBUTED_COMMUNICATOR_HPP
#define HEOM_DISTRIBUTED_COMMUNICATOR_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heom/core/error.hpp"

namespace heom {

/// Counters the parts of a group share, to hand out work as parts become free (an ensemble's
/// members): see Communicator::make_work_counter.
class WorkCounter {
 public:
  virtual ~WorkCounter() = default;
  /// 0, 1, 2, ...: each value once, to whichever part asks first.
  virtual std::int64_t take() = 0;
  /// Counts one piece of work as finished, and reads that count (for progress reports).
  virtual void finish_one() = 0;
  virtual std::int64_t finished() = 0;
};

/// The counters of one process's threads: atomics.
class LocalWorkCounter final : public WorkCounter {
 public:
  std::int64_t take() override { return m_taken.fetch_add(1); }
  void finish_one() override { m_finished.fetch_add(1); }
  std::int64_t finished() override { return m_finished.load(); }

 private:
  std::atomic<std::int64_t> m_taken{0}, m_finished{0};
};

/// One device's end of a group of devices ("parts") that share a hierarchy. Every call is
/// collective: each part makes it, in the same order. Back ends: heom::MpiCommunicator (one part per
/// rank), heom::NcclCommunicator (GPUs), heom::InProcessGroup (devices of one process). A run on one
/// device has no communicator.
class Communicator {
 public:
  /// A block of bytes sent to or received from one peer.
  struct Message {
    int peer;
    void* data;
    std::size_t bytes;
  };

  virtual ~Communicator() = default;

  /// This part, 0 .. size() - 1: the part of the partition it owns.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "MPI, 4 ranks" style, for the program's report.
  virtual std::string describe() const = 0;

  /// Starts sending each of `sends` to its peer and filling each of `receives` from its peer;
  /// finish_exchange() returns when all have arrived. One exchange at a time; its buffers stay
  /// untouched until it finishes (the caller computes what needs no received data meanwhile). Buffers
  /// are host memory unless device_buffers().
  virtual void start_exchange(const std::vector<Message>& sends, const std::vector<Message>& receives) const = 0;
  virtual void finish_exchange() const = 0;
  /// start_exchange(), then finish_exchange().
  void exchange(const std::vector<Message>& sends, const std::vector<Message>& receives) const {
    start_exchange(sends, receives);
    finish_exchange();
  }
  /// Whether a started exchange moves data while the caller computes (a GPU's copy engines do; a
  /// host-staged MPI without a progress thread, or in-process copies, move it in finish_exchange()).
  /// Only then does the generator compute the ADOs that read no halo between start and finish: done
  /// without it, the parts would wait for each other twice per evaluation instead of once.
  virtual bool progresses_in_background() const { return false; }
  /// Whether exchange() takes device pointers (a CUDA-aware MPI, NCCL); otherwise the caller stages
  /// device data through the host.
  virtual bool device_buffers() const { return false; }
  /// Whether an exchange can be ordered on a GPU stream (NCCL): start_exchange_after() and
  /// finish_exchange_before() then replace start_exchange() and finish_exchange(), and the host waits
  /// neither for the sends' data nor for the exchange; the GPU does.
  virtual bool orders_on_stream() const { return false; }
  /// start_exchange(), its sends read once the work enqueued on `stream` (the native stream of this
  /// part's GPU instance: backend::native_stream) so far is done, without the host waiting for it.
  virtual void start_exchange_after(void* /*stream*/, const std::vector<Message>& /*sends*/,
                                    const std::vector<Message>& /*receives*/) const {
    throw Error(describe() + ": this back end cannot order an exchange on a stream");
  }
  /// Work enqueued on `stream` from now on runs once the started exchange is complete (its receives
  /// filled, its sends' buffers free again); the host does not wait.
  virtual void finish_exchange_before(void* /*stream*/) const {
    throw Error(describe() + ": this back end cannot order an exchange on a stream");
  }

  /// Every part's `mine`, concatenated in part order (parts may give different lengths): reductions
  /// summed in one fixed order give the same bits on any number of parts.
  virtual std::vector<double> gather_all(const std::vector<double>& mine) const = 0;
  /// The largest of every part's `value` (a NaN anywhere gives NaN).
  virtual double max(double value) const = 0;
  /// Part `root`'s values, on every part.
  virtual void broadcast(double* values, int count, int root) const = 0;

  /// Results streamed to part 0 as they finish (an ensemble's members: heom::stream_ensemble), not
  /// collective. send_to_root() starts sending `data` to part 0 and returns; it keeps the data until
  /// delivered. receive_at_root(), on part 0: one message sent so, from any part, into `data` (wait:
  /// until one arrives; otherwise false when none has). finish_sends_to_root(): returns once every
  /// message this part sent has been delivered. Back ends that cannot stream throw heom::Error.
  virtual void send_to_root(std::vector<double> /*data*/) const {
    throw Error(describe() + ": this back end cannot stream results to part 0 (use MPI for an ensemble's ranks)");
  }
  virtual bool receive_at_root(std::vector<double>& /*data*/, bool /*wait*/) const {
    throw Error(describe() + ": this back end cannot stream results to part 0 (use MPI for an ensemble's ranks)");
  }
  virtual void finish_sends_to_root() const {}

  /// Counters shared by every part, starting at zero (collective: every part calls it, and gets its
  /// handle to the same counters). Back ends that cannot share one throw heom::Error.
  virtual std::shared_ptr<WorkCounter> make_work_counter() const {
    throw Error(describe() + ": this back end cannot share a work counter (use MPI for an ensemble's ranks)");
  }
};

}  // namespace heom

#endif
