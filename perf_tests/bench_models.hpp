// The models the benchmarks measure, shared by heom_bench_generator and heom_bench_scaling.
#ifndef HEOM_PERF_TESTS_BENCH_MODELS_HPP
#define HEOM_PERF_TESTS_BENCH_MODELS_HPP

#include <cmath>
#include <vector>

#include "heom/heom.hpp"

namespace heom::bench {

/// Spin-boson as in QuTiP's guide with Nk Matsubara terms (K = Nk + 1 exponents).
inline Model spin_boson(int nk) {
  const Matrix sz = operators::sigma_z(), sx = operators::sigma_x();
  return Model(0.25 * sz + 0.5 * sx, {Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, nk})});
}

/// FMO (Ishizaki-Fleming 2009) in rad/fs: seven site-local Drude-Lorentz baths, Nk = 1 (K = 14).
inline Model fmo() {
  const double cm = 2 * M_PI * 2.99792458e-5;
  const double h[7][7] = {{200, -87.7, 5.5, -5.9, 6.7, -13.7, -9.9}, {-87.7, 320, 30.8, 8.2, 0.7, 11.8, 4.3},
                          {5.5, 30.8, 0, -53.5, -2.2, -9.6, 6.0},    {-5.9, 8.2, -53.5, 110, -70.7, -17.0, -63.3},
                          {6.7, 0.7, -2.2, -70.7, 270, 81.1, -1.3},  {-13.7, 11.8, -9.6, -17.0, 81.1, 420, 39.7},
                          {-9.9, 4.3, 6.0, -63.3, -1.3, 39.7, 230}};
  Matrix H(7, 7);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j) H(i, j) = h[i][j] * cm;
  Model model(H);
  for (int j = 0; j < 7; ++j)
    model.add_bath(
        Bath::drude_lorentz(operators::projector(7, j, j), {35 * cm, 106.1767491775 * cm, 77 * 0.6950348 * cm, 1}));
  return model;
}

/// fmo()'s aggregate as a third-order response propagates it: the ground state, the 7 one-exciton
/// and 21 two-exciton states (29 levels; heom::build_manifolds), each bath coupled to the number of
/// excitations on its site.
inline Model fmo_manifolds() {
  const Model one = fmo();
  ExcitonAggregate aggregate;
  aggregate.hamiltonian = one.hamiltonian();
  aggregate.baths = one.baths();
  for (int m = 0; m < 7; ++m) aggregate.dipoles.push_back({std::cos(0.9 * m), std::sin(0.9 * m), 0.1 * m});
  return build_manifolds(aggregate).model;
}

/// fmo() with Lindblad terms: Markovian dephasing of every site (real diagonal L: the element-wise
/// term) and two incoherent transfers, 3 -> 2 and 6 -> 5 (jumps of a non-diagonal L).
inline Model fmo_lindblad() {
  const double cm = 2 * M_PI * 2.99792458e-5;
  Model model = fmo();
  for (int j = 0; j < 7; ++j) model.add_lindblad(operators::projector(7, j, j), 5 * cm);
  model.add_lindblad(operators::projector(7, 2, 3), 1 * cm).add_lindblad(operators::projector(7, 5, 6), 1 * cm);
  return model;
}

/// fmo() driven: a Stark shift of the site energies by a cosine field and a Gaussian pulse on the
/// couplings of sites 1-2 and 3-4 (Hermitian operators, real f: the Hermitian form still runs).
inline Model fmo_driven() {
  const double cm = 2 * M_PI * 2.99792458e-5;
  Model model = fmo();
  Matrix stark(7, 7), couplings(7, 7);
  for (int j = 0; j < 7; ++j) stark(j, j) = 0.1 * (j + 1);
  couplings(0, 1) = couplings(1, 0) = couplings(2, 3) = couplings(3, 2) = 1.0;
  model.add_drive(stark, DriveShape::cosine(20 * cm, 200 * cm));
  model.add_drive(couplings, DriveShape::gaussian(30 * cm, 300.0, 50.0, 150 * cm));
  return model;
}

/// QuTiP's single-impurity tutorial: a level (e = 1) between two Lorentzian leads at bias 2
/// (gamma 0.01, W 1, T 0.0259), ten Pade terms each: 44 fermionic exponents (depth 2: 991 ADOs,
/// depth 3: 14,235).
inline Model siam() {
  const Matrix d{{0, 1}, {0, 0}};
  std::vector<Bath> leads;
  for (const double mu : {1.0, -1.0}) leads.push_back(Bath::lorentzian(d, {0.01, 1.0, mu, 0.025851991, 10}));
  return Model(Matrix{{0, 0}, {0, 1}}, leads);
}

/// A spinful Anderson impurity (n = 4: e = -0.5, U = 1) between two leads at bias 0.4, each spin
/// coupled to each (gamma 0.2, W 1, T 0.1, four Pade terms): 40 fermionic exponents.
inline Model spinful_anderson() {
  const Matrix a{{0, 1}, {0, 0}}, p{{1, 0}, {0, -1}}, one = Matrix::identity(2);
  Matrix up(4, 4), down(4, 4);  // Jordan-Wigner: a x 1 and p x a
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
          up(2 * i + r, 2 * j + c) = a(i, j) * one(r, c);
          down(2 * i + r, 2 * j + c) = p(i, j) * a(r, c);
        }
  const Matrix n_up = up.adjoint() * up, n_down = down.adjoint() * down;
  std::vector<Bath> leads;
  for (const double mu : {0.2, -0.2})
    for (const Matrix& d : {up, down}) leads.push_back(Bath::lorentzian(d, {0.2, 1.0, mu, 0.1, 4}));
  return Model(-0.5 * (n_up + n_down) + 1.0 * (n_up * n_down), leads);
}

}  // namespace heom::bench

#endif
