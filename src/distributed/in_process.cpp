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

namespace heom {

struct InProcessGroup::State {
  explicit State(int devices) : size(devices), outbox(devices), contributions(devices), values(devices) {}

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
    if (!failure.empty()) throw Error(failure);
  }

  const int size;
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
  std::shared_ptr<WorkCounter> counter;  // the one make_work_counter() hands every part
};

namespace {

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
      const auto& from = s.outbox[r.peer];
      const auto sent = std::find_if(from.begin(), from.end(), [&](const Message& m) { return m.peer == m_rank; });
      if (sent == from.end() || sent->bytes != r.bytes) {
        mismatch = "in-process exchange: device " + std::to_string(r.peer) + " sent device " + std::to_string(m_rank) +
                   " no message of the " + std::to_string(r.bytes) + " bytes it expects";
        continue;
      }
      std::memcpy(r.data, sent->data, r.bytes);
    }
    s.barrier();  // the senders' buffers stay untouched until everyone has copied
    if (!mismatch.empty()) throw Error(mismatch);
  }

  /// (Nothing moves in the background: start_exchange() did it all.)
  void finish_exchange() const override {}

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
  std::shared_ptr<State> m_state;
  int m_rank;
};

}  // namespace

InProcessGroup::InProcessGroup(int devices) : m_state(std::make_shared<State>(devices)) {
  if (devices < 1) throw Error("in-process group: devices must be >= 1, got " + std::to_string(devices));
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
