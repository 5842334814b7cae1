// heom::impl::prefetch_line: a software prefetch for host kernels that the compiler keeps on x86.
#ifndef HEOM_CORE_DETAIL_PREFETCH_HPP
#define HEOM_CORE_DETAIL_PREFETCH_HPP

namespace heom::impl {

/// Asks for the cache line holding p, to be read. On x86 an asm statement, which the compiler keeps:
/// GCC 12 deleted the kernels' __builtin_prefetch calls from the library's build (perf_tests/README.md).
/// Host code only.
inline void prefetch_line(const void* p) {
#if defined(__x86_64__) && defined(__GNUC__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace heom::impl

#endif
