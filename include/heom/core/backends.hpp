// The execution spaces heom instantiates its templates for, as an X-macro over what Kokkos enables.
#ifndef HEOM_CORE_BACKENDS_HPP
#define HEOM_CORE_BACKENDS_HPP

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_SERIAL)
#define HEOM_IF_SERIAL(X) X(Kokkos::Serial)
#else
#define HEOM_IF_SERIAL(X)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
#define HEOM_IF_OPENMP(X) X(Kokkos::OpenMP)
#else
#define HEOM_IF_OPENMP(X)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
#define HEOM_IF_CUDA(X) X(Kokkos::Cuda)
#else
#define HEOM_IF_CUDA(X)
#endif

/// X(ExecSpace) once per backend heom is built for.
#define HEOM_FOR_EACH_BACKEND(X) HEOM_IF_SERIAL(X) HEOM_IF_OPENMP(X) HEOM_IF_CUDA(X)

#endif
