// The one place where heom bridges API differences between Kokkos / Kokkos Kernels 3.4 and 4.x.
#ifndef HEOM_CORE_KOKKOS_COMPAT_HPP
#define HEOM_CORE_KOKKOS_COMPAT_HPP

#include <Kokkos_Core.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>

#include <string>

#if !defined(KOKKOS_VERSION) || KOKKOS_VERSION < 30401
#error "heom needs Kokkos 3.4.01 or newer"
#endif

namespace heom::impl {

/// Finite check usable inside kernels (Kokkos 3.4 has it in Kokkos::Experimental).
KOKKOS_INLINE_FUNCTION bool is_finite(double x) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::isfinite(x);
#else
  return Kokkos::Experimental::isfinite(x);
#endif
}

/// Square root usable inside kernels (Kokkos 3.4 has it in Kokkos::Experimental).
KOKKOS_INLINE_FUNCTION double sqrt(double x) {
#if KOKKOS_VERSION >= 40000
  return Kokkos::sqrt(x);
#else
  return Kokkos::Experimental::sqrt(x);
#endif
}

/// The command-line argument that sets Kokkos' host thread count (renamed in Kokkos 4.0).
inline std::string kokkos_threads_argument(int threads) {
#if KOKKOS_VERSION >= 40000
  return "--kokkos-num-threads=" + std::to_string(threads);
#else
  return "--kokkos-threads=" + std::to_string(threads);
#endif
}

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
