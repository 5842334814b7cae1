# Compile options of heom's own targets, kept in INTERFACE targets that consumers of heom::heom never inherit.
add_library(heom_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  # nvcc_wrapper forwards these to the host compiler.
  target_compile_options(heom_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic>)
endif()

# Host instruction set for heom's own compiled code (the kernels are instantiated in libheom). Kokkos
# normally supplies -march through Kokkos_ARCH_*; a Kokkos built for generic x86-64 (as
# scripts/bootstrap must build 3.4.01: GCC 12 crashes on Kokkos Kernels 3.4 with Kokkos_ARCH_SKX)
# supplies none, and the kernels would run on SSE2 alone. Heom_HOST_ARCH=native (the presets' choice)
# builds heom for the machine it is built on; leave it empty when Kokkos_ARCH already says.
set(Heom_HOST_ARCH "" CACHE STRING "-march for heom's compiled code (e.g. native); empty: what Kokkos says")
add_library(heom_arch INTERFACE)
if(Heom_HOST_ARCH)
  target_compile_options(heom_arch INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-march=${Heom_HOST_ARCH}>)
endif()
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  # heom never reads errno; without this a sqrt in a loop (the integrators' error norms) keeps its
  # error branch and the loop is not vectorized.
  target_compile_options(heom_arch INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fno-math-errno>)
endif()
