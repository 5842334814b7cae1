// Links the installed heom: evolves a damped two-level system and checks that it relaxes.
#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>

#include <heom/heom.hpp>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const heom::Matrix sz = heom::operators::sigma_z(), sx = heom::operators::sigma_x();
  const heom::Model model(0.5 * sx, {heom::Bath::drude_lorentz(sz, {0.1, 0.5, 0.5, 1})});
  heom::Solver<Kokkos::DefaultExecutionSpace> solver(Kokkos::DefaultExecutionSpace(), model, 3);
  solver.set_initial_state(heom::Matrix{{1.0, 0.0}, {0.0, 0.0}});
  solver.run_until(5.0);
  const heom::Matrix rho = solver.rho();
  std::printf("heom %s: rho_00(5) = %.6f, trace = %.12f\n", HEOM_VERSION_STRING, rho(0, 0).real(), rho.trace().real());
  const bool ok = std::abs(rho.trace() - 1.0) < 1e-9 && rho(0, 0).real() < 0.99 && rho(0, 0).real() > 0.0;
  return ok ? 0 : 1;
}
