// heom::impl::double8: eight doubles as one vector value, for host kernels whose unit of work is 8
// doubles (a 2x2 complex block: one AVX-512 register). GCC's vectorizer splits a local double[8]
// into scalars in such kernels; a vector type keeps it in a register.
#ifndef HEOM_CORE_DETAIL_DOUBLE8_HPP
#define HEOM_CORE_DETAIL_DOUBLE8_HPP

// GCC and Clang vector extensions (also the host compiler under nvcc), where AVX-512 is on: without
// it the compilers take a 64-byte vector's shuffles apart into scalar moves through memory, slower
// than the plain kernels; BackendTraits::two_level_kernel is then false.
#if defined(__GNUC__) && defined(__AVX512F__)
#define HEOM_HAS_DOUBLE8 1

namespace heom::impl {

typedef double double8 __attribute__((vector_size(64)));

#define HEOM_DOUBLE8_INLINE __attribute__((always_inline)) inline

HEOM_DOUBLE8_INLINE double8 load8(const double* p) {
  double8 x;
  __builtin_memcpy(&x, p, sizeof x);
  return x;
}

HEOM_DOUBLE8_INLINE void store8(double* p, const double8& x) { __builtin_memcpy(p, &x, sizeof x); }

HEOM_DOUBLE8_INLINE double8 splat8(double s) { return double8{s, s, s, s, s, s, s, s}; }

/// The lanes of x in the order I0..I7 (lane m of the result is lane Im of x). Eight named
/// parameters, not a pack: nvcc's front end mangles a pack expanded inside the builtin.
template <int I0, int I1, int I2, int I3, int I4, int I5, int I6, int I7>
HEOM_DOUBLE8_INLINE double8 shuffle8(const double8& x) {
#if defined(__clang__) || __GNUC__ >= 12
  return __builtin_shufflevector(x, x, I0, I1, I2, I3, I4, I5, I6, I7);
#else
  typedef long long long8 __attribute__((vector_size(64)));
  return __builtin_shuffle(x, long8{I0, I1, I2, I3, I4, I5, I6, I7});
#endif
}

/// (x1, x0, x3, x2, ...): each pair's two lanes exchanged (the real and imaginary parts of a complex).
HEOM_DOUBLE8_INLINE double8 swap_pairs(const double8& x) { return shuffle8<1, 0, 3, 2, 5, 4, 7, 6>(x); }

/// i x for four complex numbers (-Im, Re per pair).
HEOM_DOUBLE8_INLINE double8 times_i8(const double8& x) { return double8{-1, 1, -1, 1, -1, 1, -1, 1} * swap_pairs(x); }

#undef HEOM_DOUBLE8_INLINE

}  // namespace heom::impl

#else
#define HEOM_HAS_DOUBLE8 0
#endif

#endif
