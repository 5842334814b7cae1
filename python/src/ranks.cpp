// mpi4py communicators in heom._heom. Where the C++ takes an MPI communicator, Python passes an
// mpi4py Comm; heom reaches it through its Fortran handle (Comm.py2f, MPI_Comm_f2c), so the module
// needs no mpi4py headers to build, only an mpi4py built on the same MPI as heom.
#include "bindings.hpp"

#if HEOM_ENABLE_MPI
#include <mpi.h>

#include "heom/distributed/mpi_communicator.hpp"
#endif

namespace heom::python {

#if HEOM_ENABLE_MPI
namespace {

/// The MPI heom was compiled against, as mpi4py.MPI.get_vendor() names it ("" where unknown).
std::string compiled_vendor() {
#if defined(OPEN_MPI)
  return "Open MPI";
#elif defined(MPICH)
  return "MPICH";
#else
  return "";
#endif
}

}  // namespace
#endif

std::shared_ptr<const Communicator> ranks_of(const py::object& comm) {
  if (comm.is_none()) return nullptr;
#if HEOM_ENABLE_MPI
  if (!py::hasattr(comm, "py2f") || !py::hasattr(comm, "Get_size"))
    throw Error("comm: expected an mpi4py communicator (mpi4py.MPI.Comm), got " +
                std::string(py::str(comm.get_type().attr("__name__"))));
  // A handle means something only to the MPI library that made it: the one heom was compiled
  // against (its headers' vendor; the library loaded at run time could be mpi4py's either way).
  const py::tuple vendor = py::module_::import("mpi4py.MPI").attr("get_vendor")();
  const std::string theirs = vendor[0].cast<std::string>(), ours = compiled_vendor();
  if (!ours.empty() && theirs != ours)
    throw Error("comm: mpi4py runs on " + theirs + " but heom was built with " + ours + "; build both with one MPI");
  const MPI_Comm handle = MPI_Comm_f2c(comm.attr("py2f")().cast<MPI_Fint>());
  if (handle == MPI_COMM_NULL) throw Error("comm: the communicator is MPI.COMM_NULL");
  int inter = 0;
  MPI_Comm_test_inter(handle, &inter);
  if (inter) throw Error("comm: an intercommunicator; heom needs the ranks of one group (an intracommunicator)");
  return std::make_shared<MpiCommunicator>(handle);
#else
  throw Error("comm: this heom was built without MPI (Heom_ENABLE_MPI=OFF), so it takes no communicator");
#endif
}

}  // namespace heom::python
