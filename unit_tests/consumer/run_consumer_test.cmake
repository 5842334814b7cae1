# ctest driver: install the heom build tree into a scratch prefix, then configure, build and run the
# consumer project against it. Variables: HEOM_BUILD_DIR, CONSUMER_SOURCE, WORK_DIR, KOKKOS_PREFIX,
# KOKKOS_KERNELS_PREFIX, and the compiler and flags of the build under test (CXX_COMPILER, CXX_FLAGS,
# LINKER_FLAGS: a sanitized libheom needs a sanitized consumer).
file(REMOVE_RECURSE "${WORK_DIR}")
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}")
  endif()
endfunction()
run("${CMAKE_COMMAND}" --install "${HEOM_BUILD_DIR}" --prefix "${WORK_DIR}/install")
run("${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE}" -B "${WORK_DIR}/build" -DCMAKE_BUILD_TYPE=Release
    "-Dheom_ROOT=${WORK_DIR}/install" "-DKokkos_ROOT=${KOKKOS_PREFIX}" "-DKokkosKernels_ROOT=${KOKKOS_KERNELS_PREFIX}"
    "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/heom_consumer")
