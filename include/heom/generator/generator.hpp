// heom::Generator: the HEOM right-hand side d(rho_n)/dt, matrix-free on a Kokkos device.
#ifndef HEOM_GENERATOR_GENERATOR_HPP
#define HEOM_GENERATOR_GENERATOR_HPP

#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/backends.hpp"
#include "heom/core/error.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/model/model.hpp"

namespace heom {

namespace impl {

KOKKOS_INLINE_FUNCTION device_complex times_i(const device_complex& z) { return device_complex(-z.imag(), z.real()); }

/// The per-ADO kernel. One team per ADO; a team's threads split the n x n block's elements.
///   d rho_a = A rho_a + rho_a B - damping_a rho_a
///           + sum_b [ Q_b X_b + Y_b Q_b ],   X_b = -i M_b + R_b + 2 Delta_b rho_a Q_b,  Y_b = i M_b + R_b
/// where, over the exponents k of bath b,
///   M_b = sum_k rho_{n+e_k} + n_k c_k rho_{n-e_k}   (commutator part)
///   R_b = sum_k n_k c2_k rho_{n-e_k}                 (anticommutator part)
/// and A = -iH - sum_b Delta_b Q_b^2, B = iH - sum_b Delta_b Q_b^2 hold H and the terminators.
/// Summing one bath's neighbours first leaves two matrix products per bath instead of two per
/// exponent; a diagonal Q_b needs none: Q X + Y Q is then i (q_j - q_i) M_ij + (q_i + q_j) R_ij,
/// with both factors precomputed per element.
///
/// Loops run exponent by exponent over whole blocks (not element by element over exponents): the
/// neighbour indices are read once per ADO, and each inner loop streams one contiguous block.
template <class ExecSpace>
struct GeneratorKernel {
  using traits = BackendTraits<ExecSpace>;
  using member_type = typename traits::member_type;
  template <class T>
  using view = typename traits::template view<T>;

  int n = 0;
  int n2 = 0;
  int num_baths = 0;
  int num_exponents = 0;
  int scratch_level = 0;
  view<const device_complex**> a_sys, b_sys;
  view<const device_complex*> diagonal_sandwich;       // [n2] sum over diagonal terminated baths of 2 Delta q_i q_j
  view<const device_complex***> q;                     // [bath][n][n]
  view<const int*> q_diagonal;                         // [bath] 1 when Q_b is diagonal
  view<const device_complex**> commutator_factor;      // [bath][n2] i (q_j - q_i), diagonal Q only
  view<const device_complex**> anticommutator_factor;  // [bath][n2] q_i + q_j, diagonal Q only
  view<const int*> bath_begin;                         // [bath + 1] exponent ranges
  view<const device_complex*> two_delta;               // [bath] 2 Delta_b (0 without terminator)
  view<const device_complex*> c_commutator;            // [K]
  view<const device_complex*> c_anticommutator;        // [K]
  view<const device_complex*> damping;                 // [ado] sum_k n_k v_k
  view<const int**> labels, next, prev;                // [ado][K]
  view<const device_complex*> in;
  view<device_complex*> out;

  /// Scratch per team: M and R of one bath (later X and Y in place).
  std::size_t scratch_bytes() const { return 2 * sizeof(device_complex) * static_cast<std::size_t>(n2); }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const int a = team.league_rank();
    const std::int64_t base = static_cast<std::int64_t>(a) * n2;
    const device_complex gamma_a = damping(a);
    typename traits::scratch_view m(team.team_scratch(scratch_level), n2);
    typename traits::scratch_view r(team.team_scratch(scratch_level), n2);

    // System part, damping, and the terminators of diagonal baths.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n2), [&](const int e) {
      const int i = e / n, j = e % n;
      const device_complex rho = in(base + e);
      device_complex acc = (diagonal_sandwich(e) - gamma_a) * rho;
      for (int l = 0; l < n; ++l) acc += a_sys(i, l) * in(base + l * n + j) + in(base + i * n + l) * b_sys(l, j);
      out(base + e) = acc;
    });

    for (int b = 0; b < num_baths; ++b) {
      // M_b and R_b, exponent by exponent.
      team.team_barrier();  // the previous bath is done with m and r
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n2), [&](const int e) {
        m(e) = device_complex(0.0);
        r(e) = device_complex(0.0);
      });
      for (int k = bath_begin(b); k < bath_begin(b + 1); ++k) {
        const int up = next(a, k);
        const int nk = labels(a, k);
        if (up >= 0) {
          const std::int64_t up_base = static_cast<std::int64_t>(up) * n2;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n2), [&](const int e) { m(e) += in(up_base + e); });
        }
        if (nk > 0) {
          const std::int64_t down_base = static_cast<std::int64_t>(prev(a, k)) * n2;
          const device_complex cm = static_cast<double>(nk) * c_commutator(k);
          const device_complex ca = static_cast<double>(nk) * c_anticommutator(k);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n2), [&](const int e) {
            const device_complex x = in(down_base + e);
            m(e) += cm * x;
            r(e) += ca * x;
          });
        }
      }
      if (q_diagonal(b)) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n2), [&](const int e) {
          out(base + e) += commutator_factor(b, e) * m(e) + anticommutator_factor(b, e) * r(e);
        });
        continue;
      }
      // Dense Q_b: X_b and Y_b in place of M_b and R_b, then Q_b X_b + Y_b Q_b.
      const device_complex td = two_delta(b);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n2), [&](const int e) {
        device_complex xe = r(e) - times_i(m(e));
        if (td != device_complex(0.0)) {
          const int l = e / n, j = e % n;
          device_complex rho_q(0.0);
          for (int s = 0; s < n; ++s) rho_q += in(base + l * n + s) * q(b, s, j);
          xe += td * rho_q;
        }
        const device_complex ye = r(e) + times_i(m(e));
        m(e) = xe;
        r(e) = ye;
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n2), [&](const int e) {
        const int i = e / n, j = e % n;
        device_complex acc(0.0);
        for (int l = 0; l < n; ++l) acc += q(b, i, l) * m(l * n + j) + r(i * n + l) * q(b, l, j);
        out(base + e) += acc;
      });
    }
  }
};

}  // namespace impl

/// The HEOM generator (DESIGN.md section 1) for a model truncated at a hierarchy depth, applied
/// matrix-free. ADO vectors are flat Views of num_ados() * n * n complex numbers, ADO-major, each
/// ADO's n x n block row-major, ADOs in heom::Hierarchy's order.
template <class ExecSpace>
class Generator {
 public:
  using execution_space = ExecSpace;
  using traits = BackendTraits<ExecSpace>;
  using vector_type = typename traits::template view<device_complex*>;
  using const_vector_type = typename traits::template view<const device_complex*>;

  /// Copies the model's operators and the hierarchy's tables to the device of `exec`.
  Generator(const ExecSpace& exec, const Model& model, const Hierarchy& hierarchy);

  /// out = L(in). `in` and `out` must not alias.
  void apply(const ExecSpace& exec, const const_vector_type& in, const vector_type& out) const;

  int dimension() const { return m_kernel.n; }
  int num_ados() const { return m_num_ados; }
  /// Elements of a full ADO vector.
  std::int64_t vector_size() const { return static_cast<std::int64_t>(m_num_ados) * m_kernel.n2; }

 private:
  impl::GeneratorKernel<ExecSpace> m_kernel;
  int m_num_ados = 0;
  int m_team_size = 1;
};

// ---------------------------------------------------------------------------------------------

template <class ExecSpace>
Generator<ExecSpace>::Generator(const ExecSpace& exec, const Model& model, const Hierarchy& hierarchy) {
  Kokkos::Profiling::pushRegion("heom::Generator::setup");
  if (hierarchy.num_exponents() != model.num_exponents())
    throw Error("Generator: the hierarchy has " + std::to_string(hierarchy.num_exponents()) +
                " exponents but the model has " + std::to_string(model.num_exponents()));
  auto& k = m_kernel;
  const int n = model.dimension();
  const int num_baths = static_cast<int>(model.baths().size());
  const int num_exponents = model.num_exponents();
  k.n = n;
  k.n2 = n * n;
  k.num_baths = num_baths;
  k.num_exponents = num_exponents;
  m_num_ados = hierarchy.size();

  // System operators A = -iH - sum Delta Q^2 and B = iH - sum Delta Q^2.
  Matrix a_sys = complex(0.0, -1.0) * model.hamiltonian();
  Matrix b_sys = complex(0.0, 1.0) * model.hamiltonian();
  for (const Bath& bath : model.baths()) {
    if (!bath.has_terminator()) continue;
    const Matrix q2 = bath.coupling() * bath.coupling();
    a_sys -= bath.terminator_delta() * q2;
    b_sys -= bath.terminator_delta() * q2;
  }
  auto to_device = [](const Matrix& m, const std::string& label) {
    typename traits::template view<device_complex**> v(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), m.rows(),
                                                       m.cols());
    auto h = Kokkos::create_mirror_view(v);
    for (int i = 0; i < m.rows(); ++i)
      for (int j = 0; j < m.cols(); ++j) h(i, j) = device_complex(m(i, j).real(), m(i, j).imag());
    Kokkos::deep_copy(v, h);
    return v;
  };
  k.a_sys = to_device(a_sys, "heom::generator::a_sys");
  k.b_sys = to_device(b_sys, "heom::generator::b_sys");

  typename traits::template view<device_complex***> q(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "heom::generator::q"), num_baths, n, n);
  typename traits::template view<int*> q_diagonal("heom::generator::q_diagonal", num_baths);
  typename traits::template view<int*> bath_begin("heom::generator::bath_begin", num_baths + 1);
  typename traits::template view<device_complex*> two_delta("heom::generator::two_delta", num_baths);
  typename traits::template view<device_complex*> c_commutator("heom::generator::c_commutator", num_exponents);
  typename traits::template view<device_complex*> c_anticommutator("heom::generator::c_anticommutator", num_exponents);
  typename traits::template view<device_complex**> commutator_factor("heom::generator::commutator_factor", num_baths,
                                                                     n * n);
  typename traits::template view<device_complex**> anticommutator_factor("heom::generator::anticommutator_factor",
                                                                         num_baths, n * n);
  typename traits::template view<device_complex*> sandwich("heom::generator::diagonal_sandwich", n * n);
  auto h_commutator_factor = Kokkos::create_mirror_view(commutator_factor);
  auto h_anticommutator_factor = Kokkos::create_mirror_view(anticommutator_factor);
  auto h_sandwich = Kokkos::create_mirror_view(sandwich);
  Kokkos::deep_copy(h_sandwich, device_complex(0.0));
  auto h_q = Kokkos::create_mirror_view(q);
  auto h_q_diagonal = Kokkos::create_mirror_view(q_diagonal);
  auto h_bath_begin = Kokkos::create_mirror_view(bath_begin);
  auto h_two_delta = Kokkos::create_mirror_view(two_delta);
  auto h_cc = Kokkos::create_mirror_view(c_commutator);
  auto h_ca = Kokkos::create_mirror_view(c_anticommutator);
  std::vector<complex> rates;
  int kk = 0;
  for (int b = 0; b < num_baths; ++b) {
    const Bath& bath = model.baths()[b];
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        h_q(b, i, j) = device_complex(bath.coupling()(i, j).real(), bath.coupling()(i, j).imag());
    const bool diagonal = bath.coupling().is_diagonal();
    h_q_diagonal(b) = diagonal ? 1 : 0;
    const complex td = 2.0 * bath.terminator_delta();
    h_two_delta(b) = device_complex(td.real(), td.imag());
    for (int e = 0; e < n * n; ++e) {
      const complex qi = bath.coupling()(e / n, e / n), qj = bath.coupling()(e % n, e % n);
      const complex cf = diagonal ? complex(0.0, 1.0) * (qj - qi) : complex(0.0);
      const complex af = diagonal ? qi + qj : complex(0.0);
      const complex qxq = diagonal ? td * qi * qj : complex(0.0);
      h_commutator_factor(b, e) = device_complex(cf.real(), cf.imag());
      h_anticommutator_factor(b, e) = device_complex(af.real(), af.imag());
      h_sandwich(e) += device_complex(qxq.real(), qxq.imag());
    }
    h_bath_begin(b) = kk;
    for (const Exponent& e : bath.exponents()) {
      h_cc(kk) = device_complex(e.commutator_coefficient().real(), e.commutator_coefficient().imag());
      h_ca(kk) = device_complex(e.anticommutator_coefficient().real(), e.anticommutator_coefficient().imag());
      rates.push_back(e.v);
      ++kk;
    }
  }
  h_bath_begin(num_baths) = kk;
  Kokkos::deep_copy(commutator_factor, h_commutator_factor);
  Kokkos::deep_copy(anticommutator_factor, h_anticommutator_factor);
  Kokkos::deep_copy(sandwich, h_sandwich);
  k.commutator_factor = commutator_factor;
  k.anticommutator_factor = anticommutator_factor;
  k.diagonal_sandwich = sandwich;
  Kokkos::deep_copy(q, h_q);
  Kokkos::deep_copy(q_diagonal, h_q_diagonal);
  Kokkos::deep_copy(bath_begin, h_bath_begin);
  Kokkos::deep_copy(two_delta, h_two_delta);
  Kokkos::deep_copy(c_commutator, h_cc);
  Kokkos::deep_copy(c_anticommutator, h_ca);
  k.q = q;
  k.q_diagonal = q_diagonal;
  k.bath_begin = bath_begin;
  k.two_delta = two_delta;
  k.c_commutator = c_commutator;
  k.c_anticommutator = c_anticommutator;

  // Hierarchy tables and the damping sum_k n_k v_k of every ADO.
  const int num_ados = hierarchy.size();
  const int table_columns = num_exponents > 0 ? num_exponents : 1;  // keep the Views non-empty
  typename traits::template view<int**> labels(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "heom::generator::labels"), num_ados, table_columns);
  typename traits::template view<int**> next(Kokkos::view_alloc(Kokkos::WithoutInitializing, "heom::generator::next"),
                                             num_ados, table_columns);
  typename traits::template view<int**> prev(Kokkos::view_alloc(Kokkos::WithoutInitializing, "heom::generator::prev"),
                                             num_ados, table_columns);
  typename traits::template view<device_complex*> damping(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "heom::generator::damping"), num_ados);
  auto h_labels = Kokkos::create_mirror_view(labels);
  auto h_next = Kokkos::create_mirror_view(next);
  auto h_prev = Kokkos::create_mirror_view(prev);
  auto h_damping = Kokkos::create_mirror_view(damping);
  for (int a = 0; a < num_ados; ++a) {
    complex g = 0.0;
    for (int e = 0; e < table_columns; ++e) {
      const bool real_column = e < num_exponents;
      h_labels(a, e) = real_column ? hierarchy.label(a, e) : 0;
      h_next(a, e) = real_column ? hierarchy.next(a, e) : -1;
      h_prev(a, e) = real_column ? hierarchy.prev(a, e) : -1;
      if (real_column) g += static_cast<double>(hierarchy.label(a, e)) * rates[e];
    }
    h_damping(a) = device_complex(g.real(), g.imag());
  }
  Kokkos::deep_copy(labels, h_labels);
  Kokkos::deep_copy(next, h_next);
  Kokkos::deep_copy(prev, h_prev);
  Kokkos::deep_copy(damping, h_damping);
  k.labels = labels;
  k.next = next;
  k.prev = prev;
  k.damping = damping;

  m_team_size = traits::team_size(k.n2);
  k.scratch_level = traits::scratch_level(k.scratch_bytes());
  exec.fence();
  Kokkos::Profiling::popRegion();
}

template <class ExecSpace>
void Generator<ExecSpace>::apply(const ExecSpace& exec, const const_vector_type& in, const vector_type& out) const {
  if (in.extent(0) != static_cast<std::size_t>(vector_size()) ||
      out.extent(0) != static_cast<std::size_t>(vector_size()))
    throw Error("Generator::apply: vectors have " + std::to_string(in.extent(0)) + " and " +
                std::to_string(out.extent(0)) + " elements, expected " + std::to_string(vector_size()));
  if (in.data() == out.data()) throw Error("Generator::apply: in and out must be different vectors");
  impl::GeneratorKernel<ExecSpace> kernel = m_kernel;
  kernel.in = in;
  kernel.out = out;
  typename traits::team_policy policy(exec, m_num_ados, m_team_size);
  policy.set_scratch_size(kernel.scratch_level, Kokkos::PerTeam(kernel.scratch_bytes()));
  Kokkos::parallel_for("heom::generator::apply", policy, kernel);
}

#define HEOM_EXTERN_GENERATOR(E) extern template class Generator<E>;
HEOM_FOR_EACH_BACKEND(HEOM_EXTERN_GENERATOR)
#undef HEOM_EXTERN_GENERATOR

}  // namespace heom

#endif
