# ctest script (cmake -P): the decision of cmake/HeomCheckKokkosCompiler.cmake on known combinations.
# Variable: HEOM_CMAKE_DIR, the folder that holds HeomCheckKokkosCompiler.cmake.
cmake_minimum_required(VERSION 3.16)
include("${HEOM_CMAKE_DIR}/HeomCheckKokkosCompiler.cmake")

set(failures 0)
# expect(<verdict> <compiler id> <compiler version> <Kokkos version> <legacy view>)
function(expect expected id version kokkos legacy)
  heom_kokkos_compiler_verdict(verdict "${id}" "${version}" "${kokkos}" ${legacy})
  if(verdict STREQUAL expected)
    message(STATUS "ok: ${id} ${version} + Kokkos ${kokkos} (legacy View ${legacy}): ${verdict}")
  else()
    message(STATUS "FAIL: ${id} ${version} + Kokkos ${kokkos} (legacy View ${legacy}): ${verdict}, "
                   "expected ${expected}")
    math(EXPR n "${failures} + 1")
    set(failures ${n} PARENT_SCOPE)
  endif()
endfunction()

# Debian 12's GCC with Kokkos develop of June 2025: the crash this check exists for.
expect(refuse GNU 12.2.0 4.6.99 OFF)
expect(refuse GNU 12.3.0 4.6.99 OFF)
expect(refuse GNU 12.4.0 4.6.99 OFF)
expect(refuse GNU 12.5.0 4.6.99 OFF)
# The ways out: the legacy View, a newer GCC, Kokkos 4.7 (kokkos/kokkos#8223), or Clang.
expect(ok GNU 12.2.0 4.6.99 ON)
expect(ok GNU 13.2.0 4.6.99 OFF)
expect(ok GNU 12.1.0 4.6.99 OFF)
expect(ok GNU 12.2.0 4.7.1 OFF)
expect(ok GNU 12.4.0 5.0.0 OFF)
expect(ok Clang 14.0.6 4.6.99 OFF)
expect(ok Clang 12.2.0 4.6.99 OFF)
# Releases before 4.6.99 give users the legacy View only: Debian's 3.4.01 (what CI uses), 4.6.01.
expect(ok GNU 12.2.0 3.4.1 OFF)
expect(ok GNU 12.2.0 3.4.01 OFF)
expect(ok GNU 12.2.0 4.6.1 OFF)
# GCC 12.5 after #8223: a crash reported with Kokkos 5.1.1 (kokkos/kokkos#9262), fixed release unknown.
expect(warn GNU 12.5.0 4.7.1 OFF)
expect(warn GNU 12.5.0 5.1.1 OFF)
expect(ok GNU 12.5.0 5.1.1 ON)
expect(ok GNU 12.5.0 5.2.0 OFF)
# Unknown versions decide nothing.
expect(ok GNU "" 4.6.99 OFF)
expect(ok GNU 12.2.0 "" OFF)

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} verdict(s) wrong")
endif()
message(STATUS "all verdicts as expected")
