// NCCL back end of heom::Communicator.
#include "heom/distributed/nccl_communicator.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "heom/core/backend/cuda_status.hpp"
#include "heom/core/error.hpp"

namespace heom {
namespace {

void check(cudaError_t status, const char* what) { backend::check_cuda(status, what); }

void check(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) throw Error(std::string("NCCL: ") + what + ": " + ncclGetErrorString(status));
}

/// Makes `device` current for the scope (NCCL and CUDA calls act on the current device).
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    check(cudaGetDevice(&m_previous), "cudaGetDevice");
    check(cudaSetDevice(device), "cudaSetDevice");
  }
  ~CurrentDevice() { cudaSetDevice(m_previous); }

 private:
  int m_previous = 0;
};

}  // namespace

#if HEOM_ENABLE_MPI
NcclCommunicator::NcclCommunicator(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  check(cudaGetDevice(&m_device), "cudaGetDevice");
  // Which GPU each rank drives, as "host/PCI bus id": NCCL cannot run two ranks on one GPU.
  constexpr int name_length = 256;
  char mine[name_length] = {};
  char bus[64] = {};
  check(cudaDeviceGetPCIBusId(bus, sizeof bus, m_device), "cudaDeviceGetPCIBusId");
  gethostname(mine, 128);
  mine[127] = '\0';
  std::strncat(mine, "/", name_length - std::strlen(mine) - 1);
  std::strncat(mine, bus, name_length - std::strlen(mine) - 1);
  std::vector<char> all(static_cast<std::size_t>(name_length) * size);
  MPI_Allgather(mine, name_length, MPI_CHAR, all.data(), name_length, MPI_CHAR, comm);
  for (int r = 0; r < size; ++r)
    for (int s = r + 1; s < size; ++s)
      if (std::strncmp(&all[r * name_length], &all[s * name_length], name_length) == 0)
        throw Error("NCCL: ranks " + std::to_string(r) + " and " + std::to_string(s) + " share the GPU " +
                    std::string(&all[r * name_length]) + "; give each rank its own GPU (cudaSetDevice) or use MPI");
  ncclUniqueId id;
  if (rank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
  check(ncclCommInitRank(&m_comm, size, id, rank), "ncclCommInitRank");
  m_rank = rank;
  m_size = size;
  check(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreateWithFlags(&m_sends_ready, cudaEventDisableTiming), "cudaEventCreate");
  check(cudaEventCreateWithFlags(&m_exchanged, cudaEventDisableTiming), "cudaEventCreate");
}
#endif

NcclCommunicator::~NcclCommunicator() {
  cudaSetDevice(m_device);
  if (m_scratch) cudaFree(m_scratch);
  if (m_sends_ready) cudaEventDestroy(m_sends_ready);
  if (m_exchanged) cudaEventDestroy(m_exchanged);
  if (m_stream) cudaStreamDestroy(m_stream);
  if (m_comm) ncclCommDestroy(m_comm);
}

std::string NcclCommunicator::describe() const {
  return "NCCL, " + std::to_string(m_size) + (m_size == 1 ? " GPU" : " GPUs");
}

void NcclCommunicator::enqueue_exchange(const std::vector<Message>& sends, const std::vector<Message>& receives) const {
  check(ncclGroupStart(), "ncclGroupStart");
  for (const Message& m : sends) check(ncclSend(m.data, m.bytes, ncclChar, m.peer, m_comm, m_stream), "ncclSend");
  for (const Message& m : receives) check(ncclRecv(m.data, m.bytes, ncclChar, m.peer, m_comm, m_stream), "ncclRecv");
  check(ncclGroupEnd(), "ncclGroupEnd");
}

void NcclCommunicator::start_exchange(const std::vector<Message>& sends, const std::vector<Message>& receives) const {
  const CurrentDevice current(m_device);
  enqueue_exchange(sends, receives);
}

void NcclCommunicator::finish_exchange() const {
  const CurrentDevice current(m_device);
  check(cudaStreamSynchronize(m_stream), "waiting for the halo exchange");
}

void NcclCommunicator::start_exchange_after(void* stream, const std::vector<Message>& sends,
                                            const std::vector<Message>& receives) const {
  const CurrentDevice current(m_device);
  check(cudaEventRecord(m_sends_ready, static_cast<cudaStream_t>(stream)), "cudaEventRecord");
  check(cudaStreamWaitEvent(m_stream, m_sends_ready, 0), "cudaStreamWaitEvent");
  enqueue_exchange(sends, receives);
}

void NcclCommunicator::finish_exchange_before(void* stream) const {
  const CurrentDevice current(m_device);
  check(cudaEventRecord(m_exchanged, m_stream), "cudaEventRecord");
  check(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), m_exchanged, 0), "cudaStreamWaitEvent");
}

void* NcclCommunicator::scratch(std::size_t bytes) const {
  if (bytes > m_scratch_bytes) {
    check(cudaStreamSynchronize(m_stream), "cudaStreamSynchronize");  // nothing may still use the old one
    if (m_scratch) check(cudaFree(m_scratch), "cudaFree");
    m_scratch = nullptr;
    check(cudaMalloc(&m_scratch, bytes), "cudaMalloc");
    m_scratch_bytes = bytes;
  }
  return m_scratch;
}

std::vector<double> NcclCommunicator::gather_all(const std::vector<double>& mine) const {
  const CurrentDevice current(m_device);
  // Every part's length first, then the values, each part's padded to the longest (ncclAllGather
  // gathers equal counts).
  auto* counts = static_cast<double*>(scratch(sizeof(double) * m_size * 2));
  const double count = static_cast<double>(mine.size());
  check(cudaMemcpyAsync(counts, &count, sizeof count, cudaMemcpyHostToDevice, m_stream), "cudaMemcpy");
  check(ncclAllGather(counts, counts + m_size, 1, ncclDouble, m_comm, m_stream), "ncclAllGather");
  std::vector<double> lengths(m_size);
  check(cudaMemcpyAsync(lengths.data(), counts + m_size, sizeof(double) * m_size, cudaMemcpyDeviceToHost, m_stream),
        "cudaMemcpy");
  check(cudaStreamSynchronize(m_stream), "cudaStreamSynchronize");
  const std::size_t longest = static_cast<std::size_t>(*std::max_element(lengths.begin(), lengths.end()));
  if (longest == 0) return {};
  auto* buffer = static_cast<double*>(scratch(sizeof(double) * longest * (m_size + 1)));
  std::vector<double> padded(mine);
  padded.resize(longest, 0.0);
  check(cudaMemcpyAsync(buffer, padded.data(), sizeof(double) * longest, cudaMemcpyHostToDevice, m_stream),
        "cudaMemcpy");
  check(ncclAllGather(buffer, buffer + longest, longest, ncclDouble, m_comm, m_stream), "ncclAllGather");
  std::vector<double> gathered(longest * m_size);
  check(cudaMemcpyAsync(gathered.data(), buffer + longest, sizeof(double) * gathered.size(), cudaMemcpyDeviceToHost,
                        m_stream),
        "cudaMemcpy");
  check(cudaStreamSynchronize(m_stream), "cudaStreamSynchronize");
  std::vector<double> all;
  for (int p = 0; p < m_size; ++p)
    all.insert(all.end(), gathered.begin() + p * longest, gathered.begin() + p * longest + lengths[p]);
  return all;
}

double NcclCommunicator::max(double value) const {
  const CurrentDevice current(m_device);
  // The largest value and whether any part had a NaN (which ncclMax may drop).
  double pair[2] = {std::isnan(value) ? -INFINITY : value, std::isnan(value) ? 1.0 : 0.0};
  auto* device = static_cast<double*>(scratch(sizeof pair));
  check(cudaMemcpyAsync(device, pair, sizeof pair, cudaMemcpyHostToDevice, m_stream), "cudaMemcpy");
  check(ncclAllReduce(device, device, 2, ncclDouble, ncclMax, m_comm, m_stream), "ncclAllReduce");
  check(cudaMemcpyAsync(pair, device, sizeof pair, cudaMemcpyDeviceToHost, m_stream), "cudaMemcpy");
  check(cudaStreamSynchronize(m_stream), "cudaStreamSynchronize");
  return pair[1] > 0.0 ? NAN : pair[0];
}

void NcclCommunicator::broadcast(double* values, int count, int root) const {
  const CurrentDevice current(m_device);
  auto* device = static_cast<double*>(scratch(sizeof(double) * count));
  if (m_rank == root)
    check(cudaMemcpyAsync(device, values, sizeof(double) * count, cudaMemcpyHostToDevice, m_stream), "cudaMemcpy");
  check(ncclBroadcast(device, device, count, ncclDouble, root, m_comm, m_stream), "ncclBroadcast");
  check(cudaMemcpyAsync(values, device, sizeof(double) * count, cudaMemcpyDeviceToHost, m_stream), "cudaMemcpy");
  check(cudaStreamSynchronize(m_stream), "cudaStreamSynchronize");
}

}  // namespace heom
