// What the parts of the heom Python module share: numpy <-> heom::Matrix, the execution space, and
// the Kokkos lifetime the module owns.
#ifndef HEOM_PYTHON_BINDINGS_HPP
#define HEOM_PYTHON_BINDINGS_HPP

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <Kokkos_Core.hpp>

#include <memory>
#include <string>
#include <vector>

#include "heom/heom.hpp"

namespace heom::python {

namespace py = pybind11;

/// The space every Solver of the module runs on: the GPU in a CUDA build, else OpenMP.
using Exec = Kokkos::DefaultExecutionSpace;
using ComplexArray = py::array_t<complex, py::array::c_style | py::array::forcecast>;

/// A square or rectangular 2-d array as a heom::Matrix; `name` names it in the error.
Matrix to_matrix(const py::handle& array, const std::string& name);
/// A heom::Matrix as a new complex128 numpy array.
ComplexArray to_numpy(const Matrix& m);
/// Matrices of one shape as a [count, rows, cols] array.
ComplexArray to_numpy(const std::vector<Matrix>& ms, int rows, int cols);
/// Numbers as a new float64 numpy array.
py::array_t<double> to_numpy(const std::vector<double>& values);
std::vector<complex> to_complex_vector(const py::handle& values, const std::string& name);

/// Starts Kokkos when it is not running (threads 0: Kokkos' default, OMP_NUM_THREADS).
void ensure_kokkos(int threads = 0);

/// Everything that holds Kokkos memory registers here, so that finalize() can release it before
/// Kokkos::finalize even while Python still refers to it.
class KokkosHolder {
 public:
  KokkosHolder();
  virtual ~KokkosHolder();
  KokkosHolder(const KokkosHolder&) = delete;
  KokkosHolder& operator=(const KokkosHolder&) = delete;
  /// Frees what it holds in Kokkos memory; later uses throw.
  virtual void release() = 0;
};

/// The ranks of an mpi4py communicator (every rank of it calls this: it duplicates the communicator);
/// nullptr for None.
std::shared_ptr<const Communicator> ranks_of(const py::object& comm);

void bind_model(py::module_& m);
void bind_solver(py::module_& m);

}  // namespace heom::python

#endif
