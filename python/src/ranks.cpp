// mpi4py communicators in heom._heom. Where the C++ takes an MPI communicator, Python passes an
// mpi4py Comm; heom reaches it through its Fortran handle (Comm.py2f, MPI_Comm_f2c), so the module
// needs no mpi4py headers to build, only the MPI library that mpi4py itself runs on.
#include "bindings.hpp"

#if HEOM_ENABLE_MPI
#include <mpi.h>

#include "heom/distributed/mpi_communicator.hpp"
#endif

namespace heom::python {

#if HEOM_ENABLE_MPI
namespace {

/// The first line of an MPI library's version string ("Open MPI v4.1.4, ...").
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace
#endif

std::shared_ptr<const Communicator> ranks_of(const py::object& comm) {
  if (comm.is_none()) return nullptr;
#if HEOM_ENABLE_MPI
  if (!py::hasattr(comm, "py2f") || !py::hasattr(comm, "Get_size"))
    throw Error("comm: expected an mpi4py communicator (mpi4py.MPI.Comm), got " +
                std::string(py::str(comm.get_type().attr("__name__"))));
  // A handle means something only to the MPI library that made it.
  char ours[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(ours, &length);
  const std::string theirs =
      py::str(py::module_::import("mpi4py.MPI").attr("Get_library_version")()).cast<std::string>();
  if (first_line(theirs) != first_line(std::string(ours, static_cast<std::size_t>(length))))
    throw Error("comm: mpi4py runs on " + first_line(theirs) + " but heom was built with " +
                first_line(std::string(ours, static_cast<std::size_t>(length))) + "; build both with one MPI");
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
