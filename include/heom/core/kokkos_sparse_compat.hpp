// Where heom bridges API differences between Kokkos Kernels 3.4 and 4.x in KokkosSparse: apart from
// kokkos_compat.hpp, so that only code using the assembled operator includes KokkosSparse.
#ifndef HEOM_CORE_KOKKOS_SPARSE_COMPAT_HPP
#define HEOM_CORE_KOKKOS_SPARSE_COMPAT_HPP

#include <Kokkos_Core.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>

namespace heom::impl {

/// y = beta y + alpha op(A) x on the execution-space instance `exec` (3.4 spmv has no instance
/// argument and runs on the default instance of A's space; we fence `exec` first so order holds).
template <class ExecSpace, class Matrix, class XView, class YView>
void spmv(const ExecSpace& exec, typename Matrix::value_type alpha, const Matrix& a, const XView& x,
          typename Matrix::value_type beta, const YView& y) {
#if KOKKOS_VERSION >= 40000
  KokkosSparse::spmv(exec, "N", alpha, a, x, beta, y);
#else
  exec.fence();
  KokkosSparse::spmv("N", alpha, a, x, beta, y);
  ExecSpace().fence();
#endif
}

}  // namespace heom::impl

#endif
