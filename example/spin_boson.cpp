// A spin-boson model written against heom's C++ API (no input file): a two-level system
// H = eps/2 sz + Delta/2 sx coupled through sz to a Drude-Lorentz bath, the case of QuTiP's HEOM
// guide. Prints the populations and the coherence of rho(t).
//
//   spin_boson [--depth L] [--t-end T]
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "heom/heom.hpp"

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  int depth = 5;
  double t_end = 20.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--depth") == 0) depth = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--t-end") == 0) t_end = std::atof(argv[i + 1]);
  }
  try {
    using namespace heom;
    const Matrix sz = operators::sigma_z(), sx = operators::sigma_x();
    const double eps = 0.5, delta = 1.0;

    DrudeLorentz bath;
    bath.lambda = 0.1;
    bath.gamma = 0.5;
    bath.temperature = 0.5;
    bath.terms = 2;  // Matsubara terms beyond the first
    const Model model(0.5 * eps * sz + 0.5 * delta * sx, {Bath::drude_lorentz(sz, bath)});

    SolverOptions options;
    options.integrator.method = Method::exp_adams;  // the default
    options.integrator.rtol = 1e-8;
    options.integrator.atol = 1e-10;

    using Exec = Kokkos::DefaultExecutionSpace;
    Solver<Exec> solver(Exec(), model, depth, options);
    solver.set_initial_state(Matrix{{1.0, 0.0}, {0.0, 0.0}});

    std::printf("# spin-boson: %d exponents, depth %d, %d ADOs on %s\n", model.num_exponents(), depth,
                solver.hierarchy().size(), BackendTraits<Exec>::describe(Exec()).c_str());
    std::printf("# %8s %14s %14s %14s %14s\n", "t", "rho_00", "rho_11", "Re rho_01", "Im rho_01");
    std::vector<double> times;
    for (int i = 0; i <= 40; ++i) times.push_back(t_end * i / 40);
    solver.run(times, [](const Snapshot<Exec>& s) {
      const Matrix rho = s.rho();
      std::printf("%10.4f %14.10f %14.10f %14.10f %14.10f\n", s.time, rho(0, 0).real(), rho(1, 1).real(),
                  rho(0, 1).real(), rho(0, 1).imag());
    });
    const auto& stats = solver.statistics();
    std::printf("# %lld steps (%lld rejected), %lld generator evaluations\n", static_cast<long long>(stats.steps),
                static_cast<long long>(stats.rejected), static_cast<long long>(stats.rhs_evaluations));
  } catch (const heom::Error& e) {
    std::cerr << "spin_boson: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
