// The MPI job the heom program is a rank of, when mpirun started it with several ranks.
#ifndef HEOM_APP_MPI_JOB_HPP
#define HEOM_APP_MPI_JOB_HPP

#include <memory>
#include <string>

#include "heom/config.hpp"
#include "heom/distributed/communicator.hpp"
#if HEOM_ENABLE_MPI
#include "heom/distributed/mpi_communicator.hpp"
#endif

namespace heom::app {

/// The MPI job this process is a rank of, when mpirun started it with more than one rank.
class MpiJob {
 public:
  MpiJob(int& argc, char**& argv);
  ~MpiJob();
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  /// Where the build has NCCL and runs on GPUs, links the ranks' GPUs with it instead of host-staged
  /// MPI (after Kokkos has given each rank its GPU). Collective.
  void link_gpus_with_nccl();

  /// nullptr when there is one rank.
  std::shared_ptr<const Communicator> communicator() const { return m_communicator; }
  /// The ranks over MPI even where the GPUs are linked with NCCL (an ensemble's members need only a
  /// work counter and a final gather, which NCCL does not offer); nullptr when there is one rank.
  std::shared_ptr<const Communicator> mpi_communicator() const {
#if HEOM_ENABLE_MPI
    return m_mpi;
#else
    return nullptr;
#endif
  }
  int rank() const { return m_communicator ? m_communicator->rank() : 0; }
  /// "rank 3: " when there are several.
  std::string prefix() const { return m_communicator ? "rank " + std::to_string(rank()) + ": " : ""; }
  /// The exit code of a failed run, returned from main; with several ranks, ends every rank with it
  /// at once (the others may be waiting in an exchange with this one).
  int fail(int code) const;

 private:
  bool m_initialized = false;
  std::shared_ptr<const Communicator> m_communicator;
#if HEOM_ENABLE_MPI
  std::shared_ptr<const MpiCommunicator> m_mpi;  // the job's ranks (aborting ends them all)
#endif
};

}  // namespace heom::app

#endif
