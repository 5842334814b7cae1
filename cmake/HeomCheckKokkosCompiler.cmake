# Refuses, at configure time, a Kokkos + GCC combination known to miscompile Kokkos' allocation tracker.
#
# GCC 12.2-12.5 drop the constexpr default constructor of Kokkos::Impl::SharedAllocationTracker when
# it is reached through the mdspan-based View (Kokkos issues 7464 and 8187): a default-constructed
# View then holds a null record instead of the "do not dereference" flag, and the first assignment
# to it crashes in SharedAllocationRecord::decrement. Everything builds and every test crashes, so
# heom stops at configure time instead, with what to use. (Seen here: Kokkos develop of 2025-06-20,
# 4.6.99, Serial, Release, Debian 12's GCC 12.2: View<double*> a; a = View<double*>("a", 10);
# segfaults; the same Kokkos with Kokkos_ENABLE_IMPL_VIEW_LEGACY=ON, and 4.6.01, run it.)
#
# Which versions, and why:
# - Kokkos 4.5 and 4.6 releases have the mdspan-based BasicView only in their own tests (which crash:
#   #7464, and #8187 on 4.5.01 and 4.6.01); user Views are the legacy implementation there and work.
#   The mdspan-based View became the default on develop on 2025-04-10 (kokkos/kokkos#7427, version
#   4.6.99), with Kokkos_ENABLE_IMPL_VIEW_LEGACY to opt out. kokkos/kokkos#8223 (July 2025, Kokkos
#   4.7.00) keeps the constructor non-constexpr for GCC 12.2-12.4. So: GCC 12.2-12.4 with Kokkos 4.6.99
#   is refused.
# - GCC 12.5 (released after #8223) still miscompiles it: kokkos/kokkos#9262 (June 2026) fixed a crash
#   of the same kind seen with Kokkos 5.1.1. Kokkos 4.6.99 has no workaround for any GCC, so GCC 12.5
#   with it is refused; with Kokkos 4.7.00-5.1.x heom warns (the release that first has #9262 is not
#   known here).
# - GCC 12.1 and older, GCC 13 and newer, and Clang are not affected (#8223's measurements).
#
# Under nvcc_wrapper the host compiler compiles the host code that crashes. CMake 3.25 identifies
# nvcc_wrapper by the host compiler's macros (GNU 12.2.0 here), which is what is wanted; should the id
# be NVIDIA instead (as Kokkos_CXX_COMPILER_ID is: Kokkos exports no host compiler), heom uses
# Kokkos_CXX_HOST_COMPILER_ID/_VERSION if set, else compiles a one-line probe with the real compiler
# and reads the host compiler's __GNUC__ / __clang__ macros out of the object.
#
# -DHeom_SKIP_KOKKOS_COMPILER_CHECK=ON skips the check (for a develop snapshot of Kokkos 4.6.99 older
# than 2025-04-10, which has only the legacy View and is refused although it works).

# The decision alone, testable with `cmake -P` (unit_tests/cmake/test_kokkos_compiler_check.cmake).
# Sets <out_var> to "ok", "refuse" (a known crash) or "warn" (a reported crash whose fixed release is
# not known). <compiler_id> is the host compiler's CMake id (GNU, Clang, ...), <legacy_view> a
# boolean: whether Kokkos was built with Kokkos_ENABLE_IMPL_VIEW_LEGACY.
function(heom_kokkos_compiler_verdict out_var compiler_id compiler_version kokkos_version legacy_view)
  set(verdict "ok")
  if(compiler_id STREQUAL "GNU" AND NOT compiler_version STREQUAL "" AND NOT kokkos_version STREQUAL ""
     AND NOT legacy_view)
    # Both ranges start at 4.6.99: earlier Kokkos releases give users the legacy View only.
    if(kokkos_version VERSION_GREATER_EQUAL 4.6.99)
      if(compiler_version VERSION_GREATER_EQUAL 12.2 AND compiler_version VERSION_LESS 12.5)
        if(kokkos_version VERSION_LESS 4.7.0)
          set(verdict "refuse")
        endif()
      elseif(compiler_version VERSION_GREATER_EQUAL 12.5 AND compiler_version VERSION_LESS 13)
        if(kokkos_version VERSION_LESS 4.7.0)
          set(verdict "refuse")
        elseif(kokkos_version VERSION_LESS 5.2.0)
          set(verdict "warn")
        endif()
      endif()
    endif()
  endif()
  set(${out_var} "${verdict}" PARENT_SCOPE)
endfunction()

# The compiler that compiles heom's host code: CMake's own id and version, except under nvcc (id
# NVIDIA), where it is nvcc's host compiler. Sets <id_var> and <version_var> (empty if unknown).
function(_heom_host_compiler id_var version_var)
  set(id "${CMAKE_CXX_COMPILER_ID}")
  set(version "${CMAKE_CXX_COMPILER_VERSION}")
  if(id STREQUAL "NVIDIA")
    if(DEFINED Kokkos_CXX_HOST_COMPILER_ID AND DEFINED Kokkos_CXX_HOST_COMPILER_VERSION)
      set(id "${Kokkos_CXX_HOST_COMPILER_ID}")
      set(version "${Kokkos_CXX_HOST_COMPILER_VERSION}")
    elseif(DEFINED HEOM_HOST_COMPILER_PROBED)
      # Probed in an earlier configure of this build tree: the compiler cannot have changed since.
      list(GET HEOM_HOST_COMPILER_PROBED 0 id)
      list(GET HEOM_HOST_COMPILER_PROBED 1 version)
    else()
      set(dir "${CMAKE_BINARY_DIR}${CMAKE_FILES_DIRECTORY}/HeomHostCompilerProbe")
      # extern: a const array at namespace scope would have internal linkage and be dropped.
      file(WRITE "${dir}/probe.cpp" [=[
#define HEOM_STR2(x) #x
#define HEOM_STR(x) HEOM_STR2(x)
#if defined(__clang__)
#define HEOM_HOST "Clang " HEOM_STR(__clang_major__) "." HEOM_STR(__clang_minor__) "." HEOM_STR(__clang_patchlevel__)
#elif defined(__GNUC__) && !defined(__INTEL_COMPILER) && !defined(__INTEL_LLVM_COMPILER) && !defined(__NVCOMPILER)
#define HEOM_HOST "GNU " HEOM_STR(__GNUC__) "." HEOM_STR(__GNUC_MINOR__) "." HEOM_STR(__GNUC_PATCHLEVEL__)
#else
#define HEOM_HOST "Other 0"
#endif
extern const char heom_host_compiler[];
const char heom_host_compiler[] = "HEOM_HOST_COMPILER[" HEOM_HOST "]";
]=])
      # A static library: no link step, whose flags (sanitizers, CUDA runtime) are beside the point.
      set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
      try_compile(probe_ok "${dir}/build" SOURCES "${dir}/probe.cpp" COPY_FILE "${dir}/probe.a"
                  OUTPUT_VARIABLE probe_log)
      set(id "")
      set(version "")
      if(probe_ok)
        file(STRINGS "${dir}/probe.a" probe_line REGEX "HEOM_HOST_COMPILER\\[[A-Za-z]+ [0-9.]+\\]" LIMIT_COUNT 1)
        if(probe_line MATCHES "HEOM_HOST_COMPILER\\[([A-Za-z]+) ([0-9.]+)\\]")
          set(id "${CMAKE_MATCH_1}")
          set(version "${CMAKE_MATCH_2}")
        endif()
      endif()
      if(id STREQUAL "")
        message(WARNING "heom: could not tell nvcc's host compiler (probe in ${dir}); the check for GCC 12 with "
                        "Kokkos 4.6.99 is skipped")
      else()
        message(STATUS "heom: nvcc's host compiler is ${id} ${version}")
        set(HEOM_HOST_COMPILER_PROBED "${id};${version}" CACHE INTERNAL "nvcc's host compiler, as probed")
      endif()
    endif()
  endif()
  set(${id_var} "${id}" PARENT_SCOPE)
  set(${version_var} "${version}" PARENT_SCOPE)
endfunction()

# Call right after find_package(Kokkos): stops the configure on a known-bad combination.
function(heom_check_kokkos_compiler)
  if(Heom_SKIP_KOKKOS_COMPILER_CHECK)
    return()
  endif()
  # KokkosConfigCommon.cmake sets Kokkos_ENABLE_<OPTION> for each entry of Kokkos_OPTIONS.
  set(legacy_view OFF)
  if(Kokkos_ENABLE_IMPL_VIEW_LEGACY OR "IMPL_VIEW_LEGACY" IN_LIST Kokkos_OPTIONS)
    set(legacy_view ON)
  endif()
  _heom_host_compiler(host_id host_version)
  # Kokkos' own sources (libkokkoscore) are compiled by the compiler Kokkos was built with, which is
  # normally heom's; when it was plain GCC and differs, it is checked as well.
  set(compilers "${host_id}|${host_version}")
  if(Kokkos_CXX_COMPILER_ID STREQUAL "GNU" AND NOT Kokkos_CXX_COMPILER_VERSION STREQUAL host_version)
    list(APPEND compilers "GNU|${Kokkos_CXX_COMPILER_VERSION}")
  endif()
  foreach(compiler IN LISTS compilers)
    string(REPLACE "|" ";" compiler "${compiler}")
    list(GET compiler 0 id)
    list(GET compiler 1 version)
    heom_kokkos_compiler_verdict(verdict "${id}" "${version}" "${Kokkos_VERSION}" ${legacy_view})
    if(verdict STREQUAL "refuse")
      message(FATAL_ERROR
        "heom: Kokkos ${Kokkos_VERSION} (mdspan-based View) compiled with GCC ${version} crashes: GCC 12.2-12.5 "
        "miscompile the constexpr constructor of Kokkos' SharedAllocationTracker, and the first assignment to a "
        "default-constructed View segfaults in SharedAllocationRecord::decrement (Kokkos issues #7464 and #8187).\n"
        "Use instead one of: Kokkos 4.7.00 or newer (fixed for GCC 12.2-12.4 by kokkos/kokkos#8223); GCC 13 or "
        "newer, or Clang; or this Kokkos rebuilt with -DKokkos_ENABLE_IMPL_VIEW_LEGACY=ON.\n"
        "(-DHeom_SKIP_KOKKOS_COMPILER_CHECK=ON skips this check.)")
    elseif(verdict STREQUAL "warn")
      message(WARNING
        "heom: GCC ${version} with Kokkos ${Kokkos_VERSION}: GCC 12.5 miscompiles Kokkos' SharedAllocationTracker "
        "(Kokkos issues #7464, #8187), and a crash in SharedAllocationRecord was reported with Kokkos 5.1.1 and "
        "fixed by kokkos/kokkos#9262. If heom's tests crash there, use GCC 13 or newer, or Kokkos built with "
        "-DKokkos_ENABLE_IMPL_VIEW_LEGACY=ON.")
    endif()
  endforeach()
endfunction()
