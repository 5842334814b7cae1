// MPI back end of heom::Communicator.
#include "heom/distributed/mpi_communicator.hpp"

#include <climits>
#include <cstdint>
#include <exception>
#include <cmath>
#include <memory>
#include <string>

#include "heom/core/error.hpp"

namespace heom {
namespace {

int message_count(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw Error("MPI exchange: a message of " + std::to_string(bytes) + " bytes exceeds MPI's int count");
  return static_cast<int>(bytes);
}

/// The halo messages' tag, and that of results streamed to rank 0 (send_to_root).
constexpr int halo_tag = 7101;
constexpr int result_tag = 7102;

/// Two 64-bit counters (taken, finished) in a window on rank 0.
class MpiWorkCounter final : public WorkCounter {
 public:
  explicit MpiWorkCounter(MPI_Comm comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    std::int64_t* base = nullptr;
    MPI_Win_allocate(rank == 0 ? 2 * sizeof(std::int64_t) : 0, sizeof(std::int64_t), MPI_INFO_NULL, comm, &base,
                     &m_window);
    if (rank == 0) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, m_window);
      base[0] = base[1] = 0;
      MPI_Win_unlock(0, m_window);
    }
    MPI_Barrier(comm);
  }
  ~MpiWorkCounter() override {
    // Freeing is collective: a rank unwinding from a failure would wait here for ranks that wait for
    // it, and never reach the MPI_Abort its caller owes the job. The window is left to the abort.
    if (std::uncaught_exceptions() > 0) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Win_free(&m_window);
  }
  MpiWorkCounter(const MpiWorkCounter&) = delete;
  MpiWorkCounter& operator=(const MpiWorkCounter&) = delete;

  std::int64_t take() override { return fetch_and_add(0, 1, MPI_SUM); }
  void finish_one() override { fetch_and_add(1, 1, MPI_SUM); }
  std::int64_t finished() override { return fetch_and_add(1, 0, MPI_NO_OP); }

 private:
  std::int64_t fetch_and_add(MPI_Aint slot, std::int64_t value, MPI_Op op) {
    std::int64_t before = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, m_window);
    MPI_Fetch_and_op(&value, &before, MPI_INT64_T, 0, slot, op, m_window);
    MPI_Win_unlock(0, m_window);
    return before;
  }

  MPI_Win m_window = MPI_WIN_NULL;
};

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw Error("MpiCommunicator: MPI is not initialized (call MPI_Init first)");
  MPI_Comm_dup(comm, &m_comm);
  MPI_Comm_rank(m_comm, &m_rank);
  MPI_Comm_size(m_comm, &m_size);
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&m_comm);
}

std::string MpiCommunicator::describe() const {
  return "MPI, " + std::to_string(m_size) + (m_size == 1 ? " rank" : " ranks");
}

void MpiCommunicator::start_exchange(const std::vector<Message>& sends, const std::vector<Message>& receives) const {
  if (!m_requests.empty()) throw Error("MPI exchange: the previous exchange has not finished");
  // Every size is checked before anything is posted: a throw must leave no request behind.
  for (const auto* messages : {&sends, &receives})
    for (const Message& m : *messages) message_count(m.bytes);
  m_requests.reserve(sends.size() + receives.size());
  for (const Message& m : receives) {
    m_requests.emplace_back();
    MPI_Irecv(m.data, message_count(m.bytes), MPI_BYTE, m.peer, halo_tag, m_comm, &m_requests.back());
  }
  for (const Message& m : sends) {
    m_requests.emplace_back();
    MPI_Isend(m.data, message_count(m.bytes), MPI_BYTE, m.peer, halo_tag, m_comm, &m_requests.back());
  }
}

void MpiCommunicator::finish_exchange() const {
  MPI_Waitall(static_cast<int>(m_requests.size()), m_requests.data(), MPI_STATUSES_IGNORE);
  m_requests.clear();
}

std::vector<double> MpiCommunicator::gather_all(const std::vector<double>& mine) const {
  // Every rank learns every count first, so that all refuse together what MPI's int counts cannot hold.
  const long long mine_count = static_cast<long long>(mine.size());
  std::vector<long long> sizes(m_size);
  MPI_Allgather(&mine_count, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, m_comm);
  long long total = 0;
  for (long long size : sizes) total += size;
  if (total > INT_MAX)
    throw Error("MPI gather: " + std::to_string(total) + " values in all exceed MPI's int count (" +
                std::to_string(INT_MAX) + "); gather less at once");
  const int count = static_cast<int>(mine_count);
  std::vector<int> counts(sizes.begin(), sizes.end()), offsets(m_size, 0);
  for (int r = 1; r < m_size; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  std::vector<double> all(offsets.back() + counts.back());
  MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, m_comm);
  return all;
}

double MpiCommunicator::max(double value) const {
  // MPI_MAX drops NaNs on some implementations: carry "any NaN" separately.
  double pair[2] = {std::isnan(value) ? -INFINITY : value, std::isnan(value) ? 1.0 : 0.0}, result[2];
  MPI_Allreduce(pair, result, 2, MPI_DOUBLE, MPI_MAX, m_comm);
  return result[1] > 0.0 ? NAN : result[0];
}

void MpiCommunicator::broadcast(double* values, int count, int root) const {
  MPI_Bcast(values, count, MPI_DOUBLE, root, m_comm);
}

void MpiCommunicator::send_to_root(std::vector<double> data) const {
  // Synchronous sends complete only once part 0 has received them (it does between its own steps), so
  // at most sends_in_flight results wait per part, here rather than in part 0's queue of unexpected
  // messages: memory does not grow with how long part 0 spends on a member of its own. Drop the
  // sends that have completed, wait while too many have not, then start this one (its buffer kept
  // until it completes).
  constexpr std::size_t sends_in_flight = 8;
  while (!m_sends.empty()) {
    if (m_sends.size() >= sends_in_flight) {
      MPI_Wait(&m_sends.front().request, MPI_STATUS_IGNORE);
    } else {
      int done = 0;
      MPI_Test(&m_sends.front().request, &done, MPI_STATUS_IGNORE);
      if (!done) break;
    }
    m_sends.pop_front();
  }
  const int count = message_count(data.size() * sizeof(double)) / static_cast<int>(sizeof(double));
  m_sends.push_back({std::move(data), MPI_REQUEST_NULL});
  PendingSend& send = m_sends.back();
  MPI_Issend(send.data.data(), count, MPI_DOUBLE, 0, result_tag, m_comm, &send.request);
}

bool MpiCommunicator::receive_at_root(std::vector<double>& data, bool wait) const {
  MPI_Status status;
  int arrived = 1;
  if (wait)
    MPI_Probe(MPI_ANY_SOURCE, result_tag, m_comm, &status);
  else
    MPI_Iprobe(MPI_ANY_SOURCE, result_tag, m_comm, &arrived, &status);
  if (!arrived) return false;
  int count = 0;
  MPI_Get_count(&status, MPI_DOUBLE, &count);
  data.resize(static_cast<std::size_t>(count));
  MPI_Recv(data.data(), count, MPI_DOUBLE, status.MPI_SOURCE, result_tag, m_comm, MPI_STATUS_IGNORE);
  return true;
}

void MpiCommunicator::finish_sends_to_root() const {
  for (PendingSend& send : m_sends) MPI_Wait(&send.request, MPI_STATUS_IGNORE);
  m_sends.clear();
}

std::shared_ptr<WorkCounter> MpiCommunicator::make_work_counter() const {
  return std::make_shared<MpiWorkCounter>(m_comm);
}

void MpiCommunicator::abort(int exit_code) const {
  MPI_Abort(m_comm, exit_code);
  std::abort();  // (MPI_Abort does not return)
}

}  // namespace heom
