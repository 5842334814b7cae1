// heom::impl::double8: eight doubles as one vector value, for host kernels whose unit of work is 8
// doubles (a 2x2 complex block: one AVX-512 register). GCC's vectorizer splits a local double[8]
// into scalars in such kernels; a vector type keeps it in a register. double4 (below): the same
// for two complex numbers and AVX.
#ifndef HEOM_CORE_DOUBLE8_HPP
#define HEOM_CORE_DOUBLE8_HPP

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

// heom::impl::double4: four doubles (two complex numbers), one AVX register, for the loops over a
// few elements with a weight each that the vectorizer leaves scalar (ExponentialAdamsUpdate).
#if defined(__GNUC__) && defined(__AVX__)
#define HEOM_HAS_DOUBLE4 1

namespace heom::impl {

typedef double double4 __attribute__((vector_size(32)));

#define HEOM_DOUBLE4_INLINE __attribute__((always_inline)) inline

HEOM_DOUBLE4_INLINE double4 load4(const double* p) {
  double4 x;
  __builtin_memcpy(&x, p, sizeof x);
  return x;
}

HEOM_DOUBLE4_INLINE void store4(double* p, const double4& x) { __builtin_memcpy(p, &x, sizeof x); }

HEOM_DOUBLE4_INLINE double4 splat4(double s) { return double4{s, s, s, s}; }

/// The lanes of x in the order I0..I3.
template <int I0, int I1, int I2, int I3>
HEOM_DOUBLE4_INLINE double4 shuffle4(const double4& x) {
#if defined(__clang__) || __GNUC__ >= 12
  return __builtin_shufflevector(x, x, I0, I1, I2, I3);
#else
  typedef long long long4 __attribute__((vector_size(32)));
  return __builtin_shuffle(x, long4{I0, I1, I2, I3});
#endif
}

/// w x for two complex numbers w and x (real and imaginary parts interleaved).
HEOM_DOUBLE4_INLINE double4 complex_times4(const double4& w, const double4& x) {
  return shuffle4<0, 0, 2, 2>(w) * x + shuffle4<1, 1, 3, 3>(w) * (double4{-1, 1, -1, 1} * shuffle4<1, 0, 3, 2>(x));
}

/// |x|^2 of each complex number of x, in both of its lanes.
HEOM_DOUBLE4_INLINE double4 magnitude2_4(const double4& x) {
  const double4 x2 = x * x;
  return x2 + shuffle4<1, 0, 3, 2>(x2);
}

#undef HEOM_DOUBLE4_INLINE

}  // namespace heom::impl

#else
#define HEOM_HAS_DOUBLE4 0
#endif

#endif
