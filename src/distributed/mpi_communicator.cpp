// MPI back end of heom::Communicator.
#include "heom/distributed/mpi_communicator.hpp"

#include <climits>
#include <cmath>
#include <string>

#include "heom/core/error.hpp"

namespace heom {
namespace {

int message_count(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX))
    throw Error("MPI exchange: a message of " + std::to_string(bytes) + " bytes exceeds MPI's int count");
  return static_cast<int>(bytes);
}

/// The halo messages' tag (the only point-to-point traffic heom sends).
constexpr int halo_tag = 7101;

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
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(m_size), offsets(m_size, 0);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, m_comm);
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

void MpiCommunicator::abort(int exit_code) const {
  MPI_Abort(m_comm, exit_code);
  std::abort();  // (MPI_Abort does not return)
}

}  // namespace heom
