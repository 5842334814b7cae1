// The in-process back end of heom::Communicator: parts on host threads, meeting at barriers.
#include "heom/distributed/in_process.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "heom/core/backend/device_runtime.hpp"

namespace heom {

/// A GPU part's means of ordering exchanges on the GPU (backend::ExchangeStreams), and the last
/// exchange whose copies it has enqueued (or given up enqueuing): until every part has, a failing part
/// must not let its buffers go.
struct GpuExchange {
  backend::ExchangeStreams streams;
  std::atomic<long long> enqueued{0};
};

struct InProcessGroup::State {
  State(int devices, bool gpu)
      : size(devices), gpu_buffers(gpu), outbox(devices), contributions(devices), values(devices) {
    if (gpu) gpu_exchange = std::make_unique<GpuExchange[]>(devices);
  }

  /// Waits until every part has arrived; throws the group's failure instead, at once, if there is one.
  /// Spins (yielding) for a while before it sleeps: parts usually arrive within microseconds of each
  /// other, far sooner than a sleeping thread wakes.
  void barrier() {
    std::unique_lock<std::mutex> lock(mutex);
    if (!failure.empty()) throw Error(failure);
    const long long arrival_generation = generation.load(std::memory_order_relaxed);
    if (++arrived == size) {
      arrived = 0;
      generation.store(arrival_generation + 1, std::memory_order_release);
      wake.notify_all();
      return;
    }
    lock.unlock();
    for (int spin = 0; spin < 2000; ++spin) {
      if (generation.load(std::memory_order_acquire) != arrival_generation) return;
      if (failed.load(std::memory_order_acquire)) break;
      std::this_thread::yield();
    }
    lock.lock();
    wake.wait(lock, [&]() { return generation.load() != arrival_generation || !failure.empty(); });
    // A barrier every part reached has completed for all, whatever failed since: the GPU exchange
    // relies on it (after its first barrier, every part copies from the others' buffers).
    if (generation.load() == arrival_generation) throw Error(failure);
  }

  const int size;
  const bool gpu_buffers;
  std::mutex mutex;
  std::condition_variable wake;
  int arrived = 0;
  std::atomic<long long> generation{0};
  std::atomic<bool> failed{false};
  std::string failure;
  std::exception_ptr first_exception;  // the first failure's, to rethrow as what it was
  int failed_device = 0;
  // What each part posts for the others during one collective call.
  std::vector<std::vector<Communicator::Message>> outbox;
  std::vector<std::vector<double>> contributions;
  std::vector<double> values;
  std::vector<double> broadcast;
  std::shared_ptr<WorkCounter> counter;         // the one make_work_counter() hands every part
  std::unique_ptr<GpuExchange[]> gpu_exchange;  // per part (GPU parts)
};

namespace {

/// Copies `bytes` from one part's buffer to another's: GPU buffers between (or within) GPUs, host
/// buffers with memcpy. Returns what went wrong, empty if nothing did.
std::string copy_between_parts(void* to, const void* from, std::size_t bytes, bool gpu_buffers) {
  if (gpu_buffers) {
    const std::string failed = backend::copy_between_gpus(to, from, bytes);
    return failed.empty() ? failed : "in-process exchange: " + failed;
  }
  std::memcpy(to, from, bytes);
  return {};
}

/// Atomics, and once a part has failed, a throw: the others stop taking work.
class InProcessWorkCounter final : public WorkCounter {
 public:
  explicit InProcessWorkCounter(std::shared_ptr<InProcessGroup::State> state) : m_state(std::move(state)) {}
  std::int64_t take() override {
    if (m_state->failed.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> lock(m_state->mutex);
      throw Error(m_state->failure);
    }
    return m_counter.take();
  }
  void finish_one() override { m_counter.finish_one(); }
  std::int64_t finished() override { return m_counter.finished(); }

 private:
  std::shared_ptr<InProcessGroup::State> m_state;
  LocalWorkCounter m_counter;
};

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(std::shared_ptr<InProcessGroup::State> state, int rank)
      : m_state(std::move(state)), m_rank(rank) {}

  int rank() const override { return m_rank; }
  int size() const override { return m_state->size; }
  std::string describe() const override { return std::to_string(m_state->size) + " devices in one process"; }

  /// The whole exchange happens here, between two barriers in which a part does nothing but copy:
  /// no part can unwind (and free the buffers the others copy from) while the copies run.
  void start_exchange(const std::vector<Message>& sends, const std::vector<Message>& receives) const override {
    State& s = *m_state;
    s.outbox[m_rank] = sends;
    s.barrier();  // every part's messages are posted
    std::string mismatch;
    for (const Message& r : receives) {
      const Message* sent = posted_for(r, mismatch);
      if (!sent) continue;
      if (const std::string failed = copy_between_parts(r.data, sent->data, r.bytes, s.gpu_buffers); !failed.empty())
        mismatch = failed;
    }
    s.barrier();  // the senders' buffers stay untouched until everyone has copied
    if (!mismatch.empty()) throw Error(mismatch);
  }

  /// (Nothing moves in the background: start_exchange() did it all.)
  void finish_exchange() const override {}
  /// GPU parts hand over their GPU buffers, host parts their host buffers.
  bool device_buffers() const override { return m_state->gpu_buffers; }

  /// GPU parts: each receiver copies its halo GPU to GPU on its own copy stream (peer to peer where
  /// the GPUs allow it; the runtime stages through the host where they do not) once the senders'
  /// packs and its own are done, while its kernels go on; nobody's host waits for the GPUs.
  bool orders_on_stream() const override { return m_state->gpu_buffers; }
  bool progresses_in_background() const override { return m_state->gpu_buffers; }

  void start_exchange_after(void* compute, const std::vector<Message>& sends,
                            const std::vector<Message>& receives) const override {
    State& s = *m_state;
    GpuExchange& mine = s.gpu_exchange[m_rank];
    if (!mine.streams.made()) in_exchange([&] { mine.streams.make(compute); });
    const long long exchange = ++m_exchanges;
    try {
      in_exchange([&] {
        mine.streams.use_gpu();
        mine.streams.record_sends_ready(compute);
      });
      s.outbox[m_rank] = sends;
      s.barrier();  // every part's messages and events are posted (and from here every part copies)
    } catch (...) {
      // (No part copies in this exchange; the last one's copies may still run, awaited by the
      // streams but not by the host: wait for them before this part's buffers go.)
      drain(exchange - 1);
      throw;
    }
    std::string problem;
    try {
      std::vector<const Message*> sent(receives.size());
      for (std::size_t i = 0; i < receives.size() && problem.empty(); ++i) sent[i] = posted_for(receives[i], problem);
      if (problem.empty()) {
        // The halo is overwritten only after this part's earlier kernels (which read it) are done.
        in_exchange([&] {
          mine.streams.wait_for_sends(mine.streams);
          for (std::size_t i = 0; i < receives.size(); ++i) {
            const Message& r = receives[i];
            mine.streams.wait_for_sends(s.gpu_exchange[r.peer].streams);
            mine.streams.copy(r.data, sent[i]->data, r.bytes);
          }
          mine.streams.record_received();
        });
      }
    } catch (const std::exception& e) {
      problem = e.what();
    }
    mine.enqueued.store(exchange, std::memory_order_release);
    if (!problem.empty()) {  // (the others fail at their next barrier)
      drain(exchange);
      throw Error(problem);
    }
  }

  void finish_exchange_before(void* compute) const override {
    State& s = *m_state;
    try {
      s.barrier();  // every part's copies are enqueued, and its `received` event recorded
    } catch (...) {
      drain(m_exchanges);  // (this part's buffers go as it unwinds)
      throw;
    }
    // What arrived here, and the copies out of this part's send buffer, before its next kernels.
    const backend::ExchangeStreams& mine = s.gpu_exchange[m_rank].streams;
    in_exchange([&] {
      mine.use_gpu();
      mine.make_wait_for_received(compute, mine);
      for (const Message& m : s.outbox[m_rank]) mine.make_wait_for_received(compute, s.gpu_exchange[m.peer].streams);
    });
    // (Each part reads the others' outboxes and events before the next exchange's first barrier,
    // and rewrites its own only after it: no second barrier is needed.)
  }

  /// After a failure in or after exchange `exchange` (past its first barrier): waits until every
  /// part has enqueued its copies or given up (none blocks on the way), then for every copy stream,
  /// so that no copy still reads or writes a buffer that this part is about to free.
  void drain(long long exchange) const {
    State& s = *m_state;
    for (int p = 0; p < s.size; ++p)
      while (s.gpu_exchange[p].enqueued.load(std::memory_order_acquire) < exchange) std::this_thread::yield();
    for (int p = 0; p < s.size; ++p) s.gpu_exchange[p].streams.synchronize();
  }

  std::vector<double> gather_all(const std::vector<double>& mine) const override {
    State& s = *m_state;
    s.contributions[m_rank] = mine;
    s.barrier();
    std::vector<double> all;
    for (const auto& c : s.contributions) all.insert(all.end(), c.begin(), c.end());
    s.barrier();
    return all;
  }

  double max(double value) const override {
    State& s = *m_state;
    s.values[m_rank] = value;
    s.barrier();
    double largest = -INFINITY;
    for (double v : s.values) largest = (std::isnan(v) || std::isnan(largest)) ? NAN : std::max(largest, v);
    s.barrier();
    return largest;
  }

  void broadcast(double* values, int count, int root) const override {
    State& s = *m_state;
    if (m_rank == root) s.broadcast.assign(values, values + count);
    s.barrier();
    if (m_rank != root) std::copy(s.broadcast.begin(), s.broadcast.begin() + count, values);
    s.barrier();
  }

  std::shared_ptr<WorkCounter> make_work_counter() const override {
    State& s = *m_state;
    if (m_rank == 0) s.counter = std::make_shared<InProcessWorkCounter>(m_state);
    s.barrier();
    std::shared_ptr<WorkCounter> counter = s.counter;
    s.barrier();
    // The counter holds the group's state: the state must not hold it back (a cycle never freed).
    if (m_rank == 0) s.counter.reset();
    return counter;
  }

 private:
  using State = InProcessGroup::State;

  /// Runs what enqueues the exchange on the GPUs, its failures named as the exchange's.
  template <class F>
  static void in_exchange(const F& f) {
    try {
      f();
    } catch (const std::exception& e) {
      throw Error(std::string("in-process exchange: ") + e.what());
    }
  }

  /// The message that r's peer posted for this part, or nullptr (and `mismatch` says why).
  const Message* posted_for(const Message& r, std::string& mismatch) const {
    const auto& from = m_state->outbox[r.peer];
    const auto sent = std::find_if(from.begin(), from.end(), [&](const Message& m) { return m.peer == m_rank; });
    if (sent != from.end() && sent->bytes == r.bytes) return &*sent;
    mismatch = "in-process exchange: device " + std::to_string(r.peer) + " sent device " + std::to_string(m_rank) +
               " no message of the " + std::to_string(r.bytes) + " bytes it expects";
    return nullptr;
  }

  std::shared_ptr<State> m_state;
  int m_rank;
  mutable long long m_exchanges = 0;  // GPU exchanges started (the same count on every part)
};

}  // namespace

InProcessGroup::InProcessGroup(int devices, bool gpu_buffers) : m_state(std::make_shared<State>(devices, gpu_buffers)) {
  if (devices < 1) throw Error("in-process group: devices must be >= 1, got " + std::to_string(devices));
  if (gpu_buffers && backend::visible_gpus() == 0)
    throw Error("in-process group: GPU buffers need a GPU build of Kokkos and a GPU");
}

InProcessGroup::~InProcessGroup() = default;

int InProcessGroup::size() const { return m_state->size; }

std::shared_ptr<const Communicator> InProcessGroup::communicator(int device) const {
  return std::make_shared<InProcessCommunicator>(m_state, device);
}

void InProcessGroup::fail(int device, const std::string& message, std::exception_ptr exception) {
  std::lock_guard<std::mutex> lock(m_state->mutex);
  if (m_state->failure.empty()) {
    m_state->failure = "device " + std::to_string(device) + ": " + message;
    m_state->first_exception = exception;
    m_state->failed_device = device;
  }
  m_state->failed = true;
  m_state->wake.notify_all();
}

std::string InProcessGroup::failure() const {
  std::lock_guard<std::mutex> lock(m_state->mutex);
  return m_state->failure;
}

void InProcessGroup::rethrow_failure() const {
  std::exception_ptr first;
  std::string failure;
  int device = 0;
  {
    std::lock_guard<std::mutex> lock(m_state->mutex);
    first = m_state->first_exception;
    failure = m_state->failure;
    device = m_state->failed_device;
  }
  if (failure.empty()) return;
  if (!first) throw Error(failure);
  const std::string prefix = "device " + std::to_string(device) + ": ";
  try {
    std::rethrow_exception(first);
  } catch (const OutOfMemoryError& e) {
    throw OutOfMemoryError(prefix + e.what());
  } catch (const IntegrationError& e) {
    throw IntegrationError(prefix + e.what(), e.time());
  } catch (const StateMismatchError& e) {
    throw StateMismatchError(prefix + e.what());
  } catch (const std::exception& e) {
    throw Error(prefix + e.what());
  }
}

}  // namespace heom
