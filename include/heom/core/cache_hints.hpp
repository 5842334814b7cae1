// Hints to the cache for host kernels: heom::impl::prefetch_line, prefetch_read_once, stream_copy
// and store_fence.
#ifndef HEOM_CORE_CACHE_HINTS_HPP
#define HEOM_CORE_CACHE_HINTS_HPP

#if defined(__x86_64__) && !defined(__CUDA_ARCH__)
#include <immintrin.h>
#define HEOM_HAS_STREAMING_STORES 1
#else
#define HEOM_HAS_STREAMING_STORES 0
#endif

#include <cstdint>

namespace heom::impl {

/// Asks for the cache line holding p, to be read. On x86 an asm statement, which the compiler keeps:
/// GCC 12 deleted the kernels' __builtin_prefetch calls from the library's build (perf_tests/history.md).
/// Host code only.
inline void prefetch_line(const void* p) {
#if defined(__x86_64__) && defined(__GNUC__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

/// Asks for the cache lines of [p, p + bytes) to be read once: with the non-temporal hint, which on
/// x86 brings them close to the core while keeping them from displacing data the caches hold for
/// reuse. For large data that a pass reads once. Host code only.
inline void prefetch_read_once(const void* p, int bytes) {
  const char* first = static_cast<const char*>(p);
  auto fetch = [](const char* q) {
#if defined(__x86_64__) && defined(__GNUC__)
    asm volatile("prefetchnta %0" : : "m"(*q));
#else
    __builtin_prefetch(q, 0, 0);
#endif
  };
  // Points at most a line apart, and the last byte: every line the range spans.
  for (int x = 0; x < bytes; x += 64) fetch(first + x);
  if (bytes > 0) fetch(first + bytes - 1);
}

/// Data larger than this are taken not to stay in the last-level cache from one pass over them to
/// the next: one Zen 4 or Zen 5 CCD's L3. A pass over such data writes what nothing reads again soon
/// with streaming stores (stream_copy) and fetches what it reads once as such (prefetch_read_once).
/// Where that pays is measured in perf_tests/history.md.
inline constexpr double stream_above_bytes = 32.0 * 1024 * 1024;

/// to[0 .. count) = from[0 .. count), the cache lines wholly inside `to` written with streaming
/// stores (x86): a line is written without being read first, and leaves the cache. For data that is
/// not read again soon. The partial lines at either end get ordinary stores, so that neighbouring
/// data (another thread's) is untouched. `to` is aligned as a double is. Another thread may read `to`
/// only after store_fence() on this one. Host code only. Always inlined: it runs once per ADO in the
/// fused exp-adams update, and whether GCC inlined it otherwise moved with unrelated code in the unit.
[[gnu::always_inline]] inline void stream_copy(double* to, const double* from, int count) {
  int x = 0;
#if HEOM_HAS_STREAMING_STORES
  constexpr int line = 8;  // doubles
  const int head = static_cast<int>((line - reinterpret_cast<std::uintptr_t>(to) / sizeof(double) % line) % line);
  for (; x < head && x < count; ++x) to[x] = from[x];
  for (; x + line <= count; x += line) {
#if defined(__AVX512F__)
    _mm512_stream_pd(to + x, _mm512_loadu_pd(from + x));
#elif defined(__AVX__)
    _mm256_stream_pd(to + x, _mm256_loadu_pd(from + x));
    _mm256_stream_pd(to + x + 4, _mm256_loadu_pd(from + x + 4));
#else
    for (int q = 0; q < line; q += 2) _mm_stream_pd(to + x + q, _mm_loadu_pd(from + x + q));
#endif
  }
#endif
  for (; x < count; ++x) to[x] = from[x];
}

/// Orders this thread's streaming stores (stream_copy) before its later stores: after it, a thread
/// that synchronizes with this one sees them.
inline void store_fence() {
#if HEOM_HAS_STREAMING_STORES
  _mm_sfence();
#endif
}

}  // namespace heom::impl

#endif
