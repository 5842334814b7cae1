// heom::impl::prefetch_line: a software prefetch for host kernels, in a form the compiler keeps.
#ifndef HEOM_CORE_DETAIL_PREFETCH_HPP
#define HEOM_CORE_DETAIL_PREFETCH_HPP

namespace heom::impl {

/// Asks for the cache line holding p, to be read. On x86 an asm statement: GCC 12 deleted the
/// __builtin_prefetch calls of the Hermitian kernel's neighbour rows from the library's build
/// (though not from a file that instantiated the kernel alone), and the kernel ran without them
/// (perf_tests/README.md); a volatile asm is never deleted. Host code only.
inline void prefetch_line(const void* p) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace heom::impl

#endif
