// Starting, linking and ending the MPI job of the heom program.
#include "mpi_job.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include "app.hpp"
#include "heom/core/backend_traits.hpp"
#if HEOM_ENABLE_NCCL
#include "heom/distributed/nccl_communicator.hpp"
#endif

namespace heom::app {

MpiJob::MpiJob(int& argc, char**& argv) {
#if HEOM_ENABLE_MPI
  // Only under a launcher: a plain `heom run` must not depend on MPI starting.
  if (!std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMI_SIZE") && !std::getenv("PMIX_RANK")) return;
  MPI_Init(&argc, &argv);
  m_initialized = true;
  auto world = std::make_shared<MpiCommunicator>(MPI_COMM_WORLD);
  if (world->size() > 1) m_communicator = m_mpi = world;
#else
  (void)argc;
  (void)argv;
#endif
}

MpiJob::~MpiJob() {
#if HEOM_ENABLE_MPI
  if (m_initialized) MPI_Finalize();
#endif
}

void MpiJob::link_gpus_with_nccl() {
#if HEOM_ENABLE_MPI && HEOM_ENABLE_NCCL
  if constexpr (BackendTraits<Exec>::nccl_exchange)
    if (m_communicator) m_communicator = std::make_shared<NcclCommunicator>(m_mpi->comm());
#endif
}

int MpiJob::fail(int code) const {
#if HEOM_ENABLE_MPI
  if (m_mpi) {
    std::fflush(stdout);
    std::fflush(stderr);
    m_mpi->abort(code);
  }
#endif
  return code;
}

}  // namespace heom::app
