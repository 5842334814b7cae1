// Linear systems of a HEOM's generator L by restarted GMRES on the generator itself (matrix-free: a few
// state vectors per Krylov vector, not a sparse LU's fill-in), preconditioned by sweeps over the
// hierarchy's tiers or by the inverse of each ADO's own term alone: the steady state, every ADO of x
// with L(x) = 0 and tr(rho) = 1 (Solver::solve_steady_state), and the shifted systems (L + s) y = b
// of spectra solved in frequency (density_of_states_in_frequency).
#ifndef HEOM_SOLVER_DETAIL_HIERARCHY_KRYLOV_HPP
#define HEOM_SOLVER_DETAIL_HIERARCHY_KRYLOV_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/backends.hpp"
#include "heom/core/to_device.hpp"
#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/generator/generator.hpp"
#include "heom/generator/generator_tables.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/linalg/vector_ops.hpp"
#include "heom/model/model.hpp"
#include "heom/solver/steady_state_options.hpp"

namespace heom {

namespace impl {

/// The eigensystem the preconditioner works in: A's, or where A is defective or its eigenvectors
/// ill-conditioned (a change of basis would cost more digits than the preconditioner gains), the
/// identity with A's diagonal (Jacobi).
inline Eigensystem preconditioner_basis(const Matrix& a) {
  constexpr double worst_condition = 1e8;
  try {
    Eigensystem e = eigensystem(a);
    if (e.condition <= worst_condition) return e;
  } catch (const Error&) {
  }
  Eigensystem jacobi;
  jacobi.vectors = jacobi.inverse = Matrix::identity(a.rows());
  for (int i = 0; i < a.rows(); ++i) jacobi.values.push_back(a(i, i));
  return jacobi;
}

/// Restarted GMRES, right-preconditioned (so that it minimizes the true residual), for L(x) = 0,
/// tr(rho) = 1 (solve) or for (L + s) y = b (solve_shifted). The steady state's trace condition borders L with a
/// rank-one term, A(x) = L(x) + rate u tr(rho_x) with u = I/n in rho's block, and A x = rate u: since tr(L(x)) = 0 for
/// every x, A is non-singular when L's steady state is unique, and its solution is the steady state with tr = 1. Inner
/// products are summed per fixed chunk and the chunks in order, so the iterates do not depend on the number of threads.
/// One device, one model.
///
/// The preconditioners (SteadyPreconditioner) split L by the hierarchy's tiers |n|: L = D + Lower + Upper,
/// D each ADO's own term, Lower the terms from tier |n| - 1 (n - e_k) and Upper from |n| + 1 (n + e_k).
/// D is inverted approximately (D~: its system part exactly, in the eigenbases of A and B, and the
/// damping); `system` is D~^-1, `tiers` the block Gauss-Seidel sweep (D~ + Lower)^-1 up the tiers, and
/// `tiers_symmetric` (D~ + Upper)^-1 D~ (D~ + Lower)^-1, up and down again; a shift s is added to D~.
/// Lower z of a vector z that holds tiers
/// below l alone is, at tier l, L(z) itself: the sweeps apply the generator as it is, whatever its
/// kernel and bath kinds.
template <class ExecSpace>
class HierarchyKrylov {
 public:
  using traits = BackendTraits<ExecSpace>;
  using vector = typename Generator<ExecSpace>::vector_type;
  using const_vector = typename Generator<ExecSpace>::const_vector_type;
  using basis_type = typename traits::template view<device_complex**>;

  /// `options` as their validate() passed them (the public entry points check them).
  HierarchyKrylov(const Generator<ExecSpace>& generator, const Model& model, const Hierarchy& hierarchy,
                  const SteadyStateOptions& options);

  /// Improves x (every ADO) towards the steady state in at most `max_iterations` iterations; x ends normalized to
  /// tr(rho) = 1. Returns the residual it reached (not checked against the tolerance: the caller decides).
  SteadyStateReport solve(const ExecSpace& exec, const vector& x, int max_iterations);
  /// Improves y towards the solution of (L + shift) y = b (y = 0 where b is) in at most `max_iterations`
  /// iterations, from y as it is (a nearby shift's solution is a good start), until the relative residual
  /// ||b - (L + shift) y||_2 / ||b||_2, the report's, is at most the options' tolerance. L + shift must
  /// be non-singular (a shift off the spectrum of -L).
  SteadyStateReport solve_shifted(const ExecSpace& exec, complex shift, const const_vector& b, const vector& y,
                                  int max_iterations);
  /// ||L(x)||_2 / (rate ||x||_2).
  double residual(const ExecSpace& exec, const const_vector& x) const;
  /// ||b - (L + shift) y||_2 for the shifted system being solved.
  double shifted_residual(const ExecSpace& exec, const const_vector& b, const const_vector& y) const;

  // Kernels (public: nvcc's lambdas may not live in private members).
  /// GMRES cycles on the system set in m_shift and m_rhs until `residual_of(x)` is at most the tolerance or
  /// `max_iterations` are spent; a cycle ends early once its own residual estimate is below `cycle_target`.
  void gmres(const ExecSpace& exec, const vector& x, int max_iterations, double cycle_target,
             const std::function<double()>& residual_of, SteadyStateReport& report);
  /// out = A(x): L(x) + rate u tr(rho_x) for the steady state, L(x) + s x for a shifted system.
  void apply_system(const ExecSpace& exec, const const_vector& x, const vector& out) const;
  /// out = M^-1 r.
  void precondition(const ExecSpace& exec, const const_vector& r, const vector& out) const;
  /// On the ADOs of tiers [from, to] (the others of `out` are left as they are):
  /// out = D~^-1 (a - b), or with `minus`, out = minus - D~^-1 (a - b); b and minus may be empty views.
  void solve_own_terms(const ExecSpace& exec, int from, int to, const const_vector& a, const const_vector& b,
                       const const_vector& minus, const vector& out) const;
  /// out = m (a - b) on the blocks of ADOs [first, last) of the tier order (b may be an empty view).
  void left_multiply(const ExecSpace& exec, int first, int last, const const_vector& m, const const_vector& a,
                     const const_vector& b, const vector& out) const;
  /// out = in on the ADOs of tier l.
  void copy_tier(const ExecSpace& exec, int l, const const_vector& in, const vector& out) const;
  /// h[l] = <basis_l, w> for l < count, summed the same way on any number of threads.
  std::vector<complex> dots(const ExecSpace& exec, int count, const const_vector& w) const;
  /// ||w||_2, the same way.
  double norm(const ExecSpace& exec, const const_vector& w) const;
  /// w -= sum_l h[l] basis_l (l < h.size()).
  void subtract_combination(const ExecSpace& exec, const std::vector<complex>& h, const vector& w) const;
  /// out = sum_l y[l] basis_l.
  void combination(const ExecSpace& exec, const std::vector<complex>& y, const vector& out) const;
  /// x *= s.
  void scale(const ExecSpace& exec, complex s, const vector& x) const;
  /// Every ADO replaced by its Hermitian part.
  void hermitize(const ExecSpace& exec, const vector& x) const;
  /// rho's trace.
  complex trace(const ExecSpace& exec, const const_vector& x) const;

 private:
  vector row(int l) const { return Kokkos::subview(m_basis, l, Kokkos::ALL); }

  const Generator<ExecSpace>* m_generator;
  SteadyStateOptions m_options;
  // The system solved: the steady state's (bordered) when m_rhs is empty, else (L + m_shift) y = m_rhs.
  device_complex m_shift{0.0};
  const_vector m_rhs;
  int m_n = 0;
  std::int64_t m_size = 0;
  double m_rate = 1.0;
  basis_type m_basis;

  vector m_work, m_z;
  // Preconditioner: A = VA diag(lambda_a) VA^-1, B likewise, and each ADO's damping; the ADOs ordered by
  // tier (m_tier_begin[l]: where tier l starts, depth + 2 entries); scratch (m_applied: the sweeps';
  // m_sweep: the symmetric sweep's upward result).
  typename traits::template view<device_complex*> m_va, m_va_inv, m_vb, m_vb_inv, m_lambda_a, m_lambda_b, m_damping;
  typename traits::template view<int*> m_tier_ados;
  std::vector<int> m_tier_begin;
  int m_depth = 0;
  vector m_tmp, m_sweep, m_applied;
  // Dots: partial sums per chunk and basis row.
  static constexpr std::int64_t dot_chunk = 16384;
  typename traits::template view<device_complex**> m_partial;
  typename traits::template view<device_complex**>::HostMirror m_partial_host;
  // The coefficients of a combination of basis vectors.
  vector m_coefficients;
  typename vector::HostMirror m_coefficients_host;
  OrderedSum<ExecSpace> m_norm;
};

template <class ExecSpace>
HierarchyKrylov<ExecSpace>::HierarchyKrylov(const Generator<ExecSpace>& generator, const Model& model,
                                            const Hierarchy& hierarchy, const SteadyStateOptions& options)
    : m_generator(&generator), m_options(options), m_n(model.dimension()), m_size(generator.vector_size()) {
  if (generator.members() > 1 || generator.distribution())
    throw Error("steady state: one model on one device (not a batch or a split hierarchy)");
  if (hierarchy.size() != generator.num_ados()) throw Error("steady state: the hierarchy is not the generator's");
  const ExecSpace& exec = generator.exec();
  m_rate = model.hamiltonian().max_abs();
  for (const Bath& bath : model.baths())
    for (const Exponent& e : bath.exponents()) m_rate = std::max(m_rate, std::abs(e.v));
  for (const Lindblad& term : model.lindblad())
    m_rate = std::max(m_rate, term.rate * term.op.max_abs() * term.op.max_abs());
  if (!(m_rate > 0.0)) m_rate = 1.0;  // (H = 0, no bath and no Lindblad term: every state is steady)

  const std::string prefix = "heom::krylov::";
  auto alloc = [&](const char* name, std::int64_t count) { return allocate<vector>(exec, prefix + name, count); };
  m_basis = allocate<basis_type>(exec, prefix + "basis", options.restart + 1, m_size);
  m_work = alloc("work", m_size);
  m_z = alloc("z", m_size);
  if (options.preconditioner != SteadyPreconditioner::none) m_tmp = alloc("tmp", m_size);
  if (options.preconditioner == SteadyPreconditioner::tiers ||
      options.preconditioner == SteadyPreconditioner::tiers_symmetric)
    m_applied = alloc("applied", m_size);
  if (options.preconditioner == SteadyPreconditioner::tiers_symmetric) m_sweep = alloc("sweep", m_size);
  const std::int64_t chunks = (m_size + dot_chunk - 1) / dot_chunk;
  m_partial = allocate_zeroed<typename traits::template view<device_complex**>>(exec, prefix + "partial", chunks,
                                                                                options.restart + 1);
  m_partial_host = Kokkos::create_mirror_view(m_partial);
  m_coefficients = allocate_zeroed<vector>(exec, prefix + "coefficients", options.restart + 1);
  m_coefficients_host = Kokkos::create_mirror_view(m_coefficients);
  m_norm = OrderedSum<ExecSpace>(exec, m_size, dot_chunk);

  // The preconditioner's tables.
  const auto [a, b] = system_terms(model);
  const Eigensystem ea = preconditioner_basis(a), eb = preconditioner_basis(b);
  const std::size_t n2 = static_cast<std::size_t>(m_n) * m_n;
  m_va = to_device<vector>(exec, prefix + "va", ea.vectors.data(), n2);
  m_va_inv = to_device<vector>(exec, prefix + "va_inv", ea.inverse.data(), n2);
  m_vb = to_device<vector>(exec, prefix + "vb", eb.vectors.data(), n2);
  m_vb_inv = to_device<vector>(exec, prefix + "vb_inv", eb.inverse.data(), n2);
  m_lambda_a = to_device<vector>(exec, prefix + "lambda_a", ea.values, ea.values.size());
  m_lambda_b = to_device<vector>(exec, prefix + "lambda_b", eb.values, eb.values.size());
  m_damping = to_device<vector>(exec, prefix + "damping", generator.damping(), generator.damping().size());
  m_depth = hierarchy.depth();
  std::vector<std::vector<int>> by_tier(m_depth + 1);
  for (int ado = 0; ado < hierarchy.size(); ++ado) by_tier[hierarchy.level(ado)].push_back(ado);
  std::vector<int> ados;
  for (const std::vector<int>& tier : by_tier) {
    m_tier_begin.push_back(static_cast<int>(ados.size()));
    ados.insert(ados.end(), tier.begin(), tier.end());
  }
  m_tier_begin.push_back(static_cast<int>(ados.size()));
  m_tier_ados = to_device<typename traits::template view<int*>>(exec, prefix + "tier_ados", ados, ados.size());
}

template <class ExecSpace>
void HierarchyKrylov<ExecSpace>::apply_system(const ExecSpace& exec, const const_vector& x, const vector& out) const {
  m_generator->apply(exec, x, out);
  if (m_rhs.extent(0) > 0) {
    const device_complex shift = m_shift;
    Kokkos::parallel_for(
        "heom::krylov::shift", typename traits::range_policy(exec, 0, m_size),
        KOKKOS_LAMBDA(const std::int64_t e) { out(e) += shift * x(e); });
    return;
  }
  const int n = m_n;
  const double weight = m_rate / n;
  Kokkos::parallel_for(
      "heom::krylov::border", Kokkos::RangePolicy<ExecSpace>(exec, 0, n), KOKKOS_LAMBDA(const int i) {
        device_complex tr(0.0);
        for (int k = 0; k < n; ++k) tr += x(k * (n + 1));
        out(i * (n + 1)) += weight * tr;
      });
}

template <class ExecSpace>
void HierarchyKrylov<ExecSpace>::precondition(const ExecSpace& exec, const const_vector& r, const vector& out) const {
  if (m_options.preconditioner == SteadyPreconditioner::none) {
    Kokkos::deep_copy(exec, out, r);
    return;
  }
  if (m_options.preconditioner == SteadyPreconditioner::system || m_depth == 0) {
    solve_own_terms(exec, 0, m_depth, r, {}, {}, out);
    return;
  }
  // Upwards: z = (D~ + Lower)^-1 r, z_l = D~^-1 (r_l - (Lower z)_l). The tiers above l must be zero
  // when L(z) is taken: z starts zero.
  const bool symmetric = m_options.preconditioner == SteadyPreconditioner::tiers_symmetric;
  const vector z = symmetric ? m_sweep : out, applied = m_applied;
  Kokkos::deep_copy(exec, z, device_complex(0.0));
  solve_own_terms(exec, 0, 0, r, {}, {}, z);
  for (int l = 1; l <= m_depth; ++l) {
    m_generator->apply_tier(exec, z, applied, l);
    solve_own_terms(exec, l, l, r, applied, {}, z);
  }
  if (!symmetric) return;
  // Downwards: out = (D~ + Upper)^-1 D~ z, y_l = z_l - D~^-1 (Upper y)_l, with out holding the tiers
  // above l alone when L(out) is taken.
  Kokkos::deep_copy(exec, out, device_complex(0.0));
  copy_tier(exec, m_depth, z, out);
  for (int l = m_depth - 1; l >= 0; --l) {
    m_generator->apply_tier(exec, out, applied, l);
    solve_own_terms(exec, l, l, applied, {}, z, out);
  }
}

template <class ExecSpace>
void HierarchyKrylov<ExecSpace>::copy_tier(const ExecSpace& exec, int l, const const_vector& in,
                                           const vector& out) const {
  // (Plain ints, not a structured binding: lambdas may not capture those before C++20.)
  const int first = m_tier_begin[l], last = m_tier_begin[l + 1];
  const int n2 = m_n * m_n;
  const auto ados = m_tier_ados;
  Kokkos::parallel_for(
      "heom::krylov::copy_tier", typename traits::range_policy(exec, 0, static_cast<std::int64_t>(last - first) * n2),
      KOKKOS_LAMBDA(const std::int64_t e) {
        const std::int64_t at = static_cast<std::int64_t>(ados(first + e / n2)) * n2 + e % n2;
        out(at) = in(at);
      });
}

template <class ExecSpace>
void HierarchyKrylov<ExecSpace>::left_multiply(const ExecSpace& exec, int first, int last, const const_vector& m,
                                               const const_vector& a, const const_vector& b, const vector& out) const {
  const int n = m_n;
  const std::int64_t n2 = static_cast<std::int64_t>(n) * n;
  const auto ados = m_tier_ados;
  const bool subtract = b.extent(0) > 0;
  Kokkos::parallel_for(
      "heom::krylov::left_multiply",
      typename traits::range_policy(exec, 0, static_cast<std::int64_t>(last - first) * n),
      KOKKOS_LAMBDA(const std::int64_t row) {
        const std::int64_t block = ados(first + row / n) * n2;
        const int i = static_cast<int>(row % n);
        const std::int64_t at = block + i * n;
        for (int j = 0; j < n; ++j) out(at + j) = device_complex(0.0);
        for (int k = 0; k < n; ++k) {
          const device_complex c = m(i * n + k);
          for (int j = 0; j < n; ++j) {
            const std::int64_t e = block + k * n + j;
            out(at + j) += c * (subtract ? a(e) - b(e) : a(e));
          }
        }
      });
}

template <class ExecSpace>
void HierarchyKrylov<ExecSpace>::solve_own_terms(const ExecSpace& exec, int from, int to, const const_vector& a,
                                                 const const_vector& b, const const_vector& minus,
                                                 const vector& out) const {
  // D~^-1 x = VA ((VA^-1 x VB) / (lambda_a_i + lambda_b_j - damping_a)) VB^-1, one pass per product
  // (the division rides on the second), over the rows of the ADOs listed.
  const int first = m_tier_begin[from], last = m_tier_begin[to + 1];
  const int n = m_n;
  const std::int64_t n2 = static_cast<std::int64_t>(n) * n;
  const auto rows = typename traits::range_policy(exec, 0, static_cast<std::int64_t>(last - first) * n);
  const auto ados = m_tier_ados;
  const auto vb = m_vb, vb_inv = m_vb_inv;
  const auto lambda_a = m_lambda_a, lambda_b = m_lambda_b, damping = m_damping;
  const device_complex shift = m_shift;
  // out's blocks of the ADOs listed hold t2 until the last pass (out aliases none of a, b and minus).
  const vector t1 = m_tmp, t2 = out;
  const bool from_minus = minus.extent(0) > 0;
  const double rate = m_rate;
  left_multiply(exec, first, last, m_va_inv, a, b, t1);  // t1 = VA^-1 (a - b)
  // t2 = (t1 VB) / (lambda_a_i + lambda_b_j - damping)
  Kokkos::parallel_for(
      "heom::krylov::own_terms_divide", rows, KOKKOS_LAMBDA(const std::int64_t row) {
        const int ado = ados(first + row / n);
        const int i = static_cast<int>(row % n);
        const std::int64_t at = ado * n2 + i * n;
        for (int j = 0; j < n; ++j) t2(at + j) = device_complex(0.0);
        for (int k = 0; k < n; ++k) {
          const device_complex t = t1(at + k);
          for (int j = 0; j < n; ++j) t2(at + j) += t * vb(k * n + j);
        }
        for (int j = 0; j < n; ++j) {
          device_complex d = lambda_a(i) + lambda_b(j) - damping(ado) + shift;
          // A zero own term: rho's conserved directions (the steady state's border acts there instead),
          // or a shift at a transition of the system. Near zero, GMRES copes (tested 1e-10 from one).
          if (impl::norm2(d) < 1e-24 * rate * rate) d = rate;
          t2(at + j) /= d;
        }
      });
  left_multiply(exec, first, last, m_va, t2, {}, t1);  // t1 = VA t2
  // out = [minus -] t1 VB^-1
  Kokkos::parallel_for(
      "heom::krylov::own_terms_right_back", rows, KOKKOS_LAMBDA(const std::int64_t row) {
        const std::int64_t at = ados(first + row / n) * n2 + (row % n) * n;
        for (int j = 0; j < n; ++j) {
          device_complex s(0.0);
          for (int k = 0; k < n; ++k) s += t1(at + k) * vb_inv(k * n + j);
          out(at + j) = from_minus ? minus(at + j) - s : s;
        }
      });
}

template <class ExecSpace>
std::vector<complex> HierarchyKrylov<ExecSpace>::dots(const ExecSpace& exec, int count, const const_vector& w) const {
  const auto basis = m_basis;
  const auto partial = m_partial;
  const std::int64_t size = m_size, chunk = dot_chunk;
  const int chunks = static_cast<int>(m_partial.extent(0));
  Kokkos::parallel_for(
      "heom::krylov::dots", typename traits::team_policy(exec, chunks, traits::reduction_team_size),
      KOKKOS_LAMBDA(const typename traits::member_type& team) {
        const std::int64_t begin = team.league_rank() * chunk;
        const std::int64_t end = begin + chunk < size ? begin + chunk : size;
        for (int l = 0; l < count; ++l) {
          device_complex sum(0.0);
          Kokkos::parallel_reduce(
              Kokkos::TeamThreadRange(team, begin, end),
              [&](const std::int64_t i, device_complex& s) { s += Kokkos::conj(basis(l, i)) * w(i); }, sum);
          Kokkos::single(Kokkos::PerTeam(team), [&]() { partial(team.league_rank(), l) = sum; });
        }
      });
  Kokkos::deep_copy(exec, m_partial_host, m_partial);
  exec.fence();
  std::vector<complex> h(count, 0.0);
  for (int c = 0; c < chunks; ++c)
    for (int l = 0; l < count; ++l) h[l] += complex(m_partial_host(c, l).real(), m_partial_host(c, l).imag());
  return h;
}

template <class ExecSpace>
double HierarchyKrylov<ExecSpace>::norm(const ExecSpace& exec, const const_vector& w) const {
  return std::sqrt(m_norm(
      exec, KOKKOS_LAMBDA(const std::int64_t i) { return impl::norm2(w(i)); }));
}

template <class ExecSpace>
void HierarchyKrylov<ExecSpace>::subtract_combination(const ExecSpace& exec, const std::vector<complex>& h,
                                                      const vector& w) const {
  const int count = static_cast<int>(h.size());
  for (int l = 0; l < count; ++l) m_coefficients_host(l) = device_complex(h[l].real(), h[l].imag());
  Kokkos::deep_copy(exec, m_coefficients, m_coefficients_host);
  const auto c = m_coefficients;
  const auto basis = m_basis;
  Kokkos::parallel_for(
      "heom::krylov::subtract", typename traits::range_policy(exec, 0, m_size), KOKKOS_LAMBDA(const std::int64_t i) {
        device_complex s = w(i);
        for (int l = 0; l < count; ++l) s -= c(l) * basis(l, i);
        w(i) = s;
      });
}

template <class ExecSpace>
void HierarchyKrylov<ExecSpace>::combination(const ExecSpace& exec, const std::vector<complex>& y,
                                             const vector& out) const {
  Kokkos::deep_copy(exec, out, device_complex(0.0));
  std::vector<complex> minus(y.size());
  for (std::size_t l = 0; l < y.size(); ++l) minus[l] = -y[l];
  subtract_combination(exec, minus, out);
}

template <class ExecSpace>
void HierarchyKrylov<ExecSpace>::scale(const ExecSpace& exec, complex s, const vector& x) const {
  const device_complex factor(s.real(), s.imag());
  Kokkos::parallel_for(
      "heom::krylov::scale", typename traits::range_policy(exec, 0, static_cast<std::int64_t>(x.extent(0))),
      KOKKOS_LAMBDA(const std::int64_t i) { x(i) *= factor; });
}

template <class ExecSpace>
void HierarchyKrylov<ExecSpace>::hermitize(const ExecSpace& exec, const vector& x) const {
  const int n = m_n, n2 = n * n;
  // One thread per element pair (i <= j) of a block.
  Kokkos::parallel_for(
      "heom::krylov::hermitize", typename traits::range_policy(exec, 0, m_size), KOKKOS_LAMBDA(const std::int64_t e) {
        const std::int64_t block = e - e % n2;
        const int i = static_cast<int>(e % n2) / n, j = static_cast<int>(e % n);
        if (i > j) return;
        const device_complex upper = x(block + i * n + j), lower = x(block + j * n + i);
        const device_complex mean = 0.5 * (upper + Kokkos::conj(lower));
        x(block + i * n + j) = mean;
        x(block + j * n + i) = Kokkos::conj(mean);
      });
}

template <class ExecSpace>
complex HierarchyKrylov<ExecSpace>::trace(const ExecSpace& exec, const const_vector& x) const {
  const int n = m_n;
  device_complex tr(0.0);
  Kokkos::parallel_reduce(
      "heom::krylov::trace", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
      KOKKOS_LAMBDA(const int, device_complex& t) {
        for (int k = 0; k < n; ++k) t += x(k * (n + 1));
      },
      tr);
  exec.fence();
  return {tr.real(), tr.imag()};
}

template <class ExecSpace>
double HierarchyKrylov<ExecSpace>::residual(const ExecSpace& exec, const const_vector& x) const {
  m_generator->apply(exec, x, m_work);
  const double size = norm(exec, x);
  return size > 0.0 ? norm(exec, m_work) / (m_rate * size) : INFINITY;
}

template <class ExecSpace>
SteadyStateReport HierarchyKrylov<ExecSpace>::solve(const ExecSpace& exec, const vector& x, int max_iterations) {
  m_rhs = const_vector();
  m_shift = device_complex(0.0);
  SteadyStateReport report;
  report.rate = m_rate;
  // Stop a cycle once the bordered residual is well below what the tolerance asks of L(x)
  // (||x|| >= 1/sqrt(n) at tr = 1); b = rate u has norm rate / sqrt(n).
  const double b_norm = m_rate / std::sqrt(static_cast<double>(m_n));
  gmres(
      exec, x, max_iterations, 0.1 * m_options.tolerance * b_norm, [&] { return residual(exec, x); }, report);
  const complex tr = trace(exec, x);
  if (std::abs(tr) > 0.0) scale(exec, 1.0 / tr, x);
  exec.fence();
  return report;
}

template <class ExecSpace>
double HierarchyKrylov<ExecSpace>::shifted_residual(const ExecSpace& exec, const const_vector& b,
                                                    const const_vector& y) const {
  apply_system(exec, y, m_work);
  const vector work = m_work;
  Kokkos::parallel_for(
      "heom::krylov::residual", typename traits::range_policy(exec, 0, m_size),
      KOKKOS_LAMBDA(const std::int64_t e) { work(e) = b(e) - work(e); });
  return norm(exec, m_work);
}

template <class ExecSpace>
SteadyStateReport HierarchyKrylov<ExecSpace>::solve_shifted(const ExecSpace& exec, complex shift, const const_vector& b,
                                                            const vector& y, int max_iterations) {
  if (static_cast<std::int64_t>(b.extent(0)) != m_size || static_cast<std::int64_t>(y.extent(0)) != m_size)
    throw Error("solve_shifted: b and y must be state vectors of the generator");
  m_rhs = b;
  m_shift = device_complex(shift.real(), shift.imag());
  SteadyStateReport report;
  report.rate = m_rate;
  const double b_norm = norm(exec, b);
  if (!std::isfinite(b_norm)) throw Error("solve_shifted: b is not finite");
  if (b_norm == 0.0) {  // (y = 0 exactly: d rho is zero where a level is empty)
    Kokkos::deep_copy(exec, y, device_complex(0.0));
    report.residual = 0.0;
  } else {
    // (GMRES's estimate is the true residual's in exact arithmetic: a little margin suffices.)
    gmres(
        exec, y, max_iterations, 0.5 * m_options.tolerance * b_norm,
        [&] { return shifted_residual(exec, b, y) / b_norm; }, report);
  }
  m_rhs = const_vector();
  m_shift = device_complex(0.0);
  exec.fence();
  return report;
}

template <class ExecSpace>
void HierarchyKrylov<ExecSpace>::gmres(const ExecSpace& exec, const vector& x, int max_iterations, double cycle_target,
                                       const std::function<double()>& residual_of, SteadyStateReport& report) {
  const int m = m_options.restart, n = m_n;
  const double weight = m_rate / n;
  const vector r0 = row(0);
  report.residual = residual_of();
  while (report.residual > m_options.tolerance && report.iterations < max_iterations) {
    // r = b - A x, the first basis vector (b = rate u for the steady state, u = I/n in rho's block).
    apply_system(exec, x, m_work);
    const vector work = m_work;
    const const_vector rhs = m_rhs;
    const bool bordered = rhs.extent(0) == 0;
    Kokkos::parallel_for(
        "heom::krylov::initial_residual", typename traits::range_policy(exec, 0, m_size),
        KOKKOS_LAMBDA(const std::int64_t e) {
          if (!bordered) {
            r0(e) = rhs(e) - work(e);
            return;
          }
          const bool diagonal = e < n * n && e % (n + 1) == 0;
          r0(e) = (diagonal ? device_complex(weight) : device_complex(0.0)) - work(e);
        });
    const double beta = norm(exec, r0);
    if (!(beta > 0.0) || !std::isfinite(beta)) break;
    scale(exec, 1.0 / beta, r0);
    // Arnoldi with Givens rotations: hessenberg is column-major [m + 1][m].
    std::vector<complex> hessenberg(static_cast<std::size_t>(m + 1) * m, 0.0), g(m + 1, 0.0), cs(m), sn(m);
    g[0] = beta;
    int columns = 0;
    for (int j = 0; j < m && report.iterations < max_iterations; ++j) {
      precondition(exec, row(j), m_z);
      const vector w = row(j + 1);
      apply_system(exec, m_z, w);
      ++report.iterations;
      // Classical Gram-Schmidt, repeated once when it lost more than half the norm ("twice is enough").
      const double before = norm(exec, w);
      std::vector<complex> h = dots(exec, j + 1, w);
      subtract_combination(exec, h, w);
      double after = norm(exec, w);
      if (after < 0.5 * before) {
        const std::vector<complex> again = dots(exec, j + 1, w);
        subtract_combination(exec, again, w);
        for (int l = 0; l <= j; ++l) h[l] += again[l];
        after = norm(exec, w);
      }
      h.push_back(after);
      if (after > 0.0) scale(exec, 1.0 / after, w);
      for (int l = 0; l < j; ++l) {  // earlier rotations
        const complex t = std::conj(cs[l]) * h[l] + std::conj(sn[l]) * h[l + 1];
        h[l + 1] = -sn[l] * h[l] + cs[l] * h[l + 1];
        h[l] = t;
      }
      const double r = std::hypot(std::abs(h[j]), std::abs(h[j + 1]));
      cs[j] = r > 0.0 ? h[j] / r : 1.0;
      sn[j] = r > 0.0 ? h[j + 1] / r : 0.0;
      h[j] = r;
      h[j + 1] = 0.0;
      g[j + 1] = -sn[j] * g[j];
      g[j] = std::conj(cs[j]) * g[j];
      for (int l = 0; l <= j; ++l) hessenberg[static_cast<std::size_t>(j) * (m + 1) + l] = h[l];
      columns = j + 1;
      // Stop the cycle once its residual is below the target, or when the Krylov space is exhausted.
      if (std::abs(g[j + 1]) <= cycle_target || after == 0.0) break;
    }
    // y = H^-1 g (upper triangular), x += M^-1 (V y).
    std::vector<complex> y(columns, 0.0);
    for (int l = columns - 1; l >= 0; --l) {
      complex s = g[l];
      for (int k = l + 1; k < columns; ++k) s -= hessenberg[static_cast<std::size_t>(k) * (m + 1) + l] * y[k];
      y[l] = s / hessenberg[static_cast<std::size_t>(l) * (m + 1) + l];
    }
    combination(exec, y, m_work);
    precondition(exec, m_work, m_z);
    const vector z = m_z;
    Kokkos::parallel_for(
        "heom::krylov::update", typename traits::range_policy(exec, 0, m_size),
        KOKKOS_LAMBDA(const std::int64_t e) { x(e) += z(e); });
    ++report.cycles;
    report.residual = residual_of();
    if (m_options.progress) m_options.progress(report.iterations, report.residual);
  }
}

// One copy of each backend's (src/core/backend/instantiate_*.cpp), so that a steady state's bits do not
// depend on which of a program's files the linker took the solver's code from.
#define HEOM_EXTERN_KRYLOV(E) extern template class HierarchyKrylov<E>;
HEOM_FOR_EACH_BACKEND(HEOM_EXTERN_KRYLOV)
#undef HEOM_EXTERN_KRYLOV

}  // namespace impl
}  // namespace heom

#endif
