// The spectral function (density of states) of a fermionic level d of the system, from the odd-parity
// hierarchy: in time, the anticommutator correlation <{d(t0 + tau), d^dagger(t0)}> propagated, and
// in frequency, A(w) from linear solves at each w.
#ifndef HEOM_SOLVER_SPECTRAL_FUNCTION_HPP
#define HEOM_SOLVER_SPECTRAL_FUNCTION_HPP

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/generator/options.hpp"
#include "heom/hierarchy/memory_plan.hpp"
#include "heom/solver/solver.hpp"
#include "heom/solver/steady_state_options.hpp"

namespace heom {

namespace impl {
/// Throws heom::Error (naming `what`) unless `solver` and d suit a density of states: one model on one
/// device, square blocks, an even state, d n x n (the odd Solver's generator refuses Lindblad terms).
template <class ExecSpace>
void check_density_of_states(const Solver<ExecSpace>& solver, const Matrix& d, const std::string& what) {
  const int n = solver.model().dimension();
  if (d.rows() != n || d.cols() != n)
    throw Error(what + ": d is " + d.shape_string() + " but the system is " + std::to_string(n) + "x" +
                std::to_string(n));
  if (solver.members() != 1 || solver.distribution())
    throw Error(what + ": one model on one device (not a batch or a split hierarchy)");
  if (solver.options().generator.shape != AdoShape::square)
    throw Error(what + ": needs square blocks (not ground columns)");
  if (solver.options().generator.parity != Parity::even)
    throw Error(what + ": the solver's state must be even (a density matrix's hierarchy)");
}

/// A propagator of `solver`'s model and depth for the odd-parity hierarchy (the general kernel form:
/// d rho is not Hermitian), with `method`'s integrator.
template <class ExecSpace>
Propagator<ExecSpace> odd_propagator(const Solver<ExecSpace>& solver, Method method) {
  SolverOptions options = solver.options();
  options.generator.parity = Parity::odd;
  options.observe_all_ados = false;
  if (is_hermitian_form(options.generator.kernel)) options.generator.kernel = GeneratorKernel::automatic;
  if (method != options.integrator.method) {
    options.integrator.method = method;
    if (!is_adaptive(method) && !(options.integrator.step > 0.0)) options.integrator.step = 1.0;
  }
  return Propagator<ExecSpace>(solver.execution_space_instance(), solver.model(), solver.hierarchy().depth(), options);
}
}  // namespace impl

/// C(tau) = <{d(t0 + tau), d^dagger(t0)}> = <d(t0 + tau) d^dagger(t0)> + <d^dagger(t0) d(t0 + tau)> for
/// each delay tau (ascending, >= 0), from the solver's state at its current time t0 (a steady state,
/// Solver::solve_steady_state, for the stationary one). The retarded Green's function is
/// G^R(tau) = -i C(tau), and the spectral function (density of states)
///   A(w) = -(1/pi) Im G^R(w) = (1/pi) Re int_0^inf C(tau) exp(+i w tau) dtau,
/// which integrates to C(0) = <{d, d^dagger}> (1 for one fermionic mode).
///
/// Each term is a quantum-regression propagation of an odd operator, by a second Solver of the same
/// model and depth with GeneratorOptions::parity odd (HierarchicalEOM.jl's DensityOfStates, in time):
/// x(0) = d^dagger x(t0) traced against d gives the first, x(0) = d x(t0) traced against d^dagger the
/// complex conjugate of the second. `solver` is left as it was; the memory needed is one more Solver's
/// (held to SolverOptions::memory_limit on its own, or to what the device has free beside `solver`).
/// One model on one device, square blocks, no Lindblad terms (their jumps' parity is not known).
/// `on_step` sees the delay propagated so far over both passes, 0 .. 2 delays.back(); `statistics`,
/// when given, receives the two propagations' steps and evaluations, summed.
template <class ExecSpace>
std::vector<complex> anticommutator_correlation(const Solver<ExecSpace>& solver, const Matrix& d,
                                                const std::vector<double>& delays,
                                                const std::function<void(double)>& on_step = {},
                                                IntegratorStatistics* statistics = nullptr) {
  impl::check_density_of_states(solver, d, "anticommutator_correlation");
  for (std::size_t i = 0; i < delays.size(); ++i)
    if (!(delays[i] >= 0.0) || (i > 0 && delays[i] < delays[i - 1]))
      throw Error("anticommutator_correlation: delay " + std::to_string(i) + " is not >= 0 and ascending");
  if (delays.empty()) return {};

  const Propagator<ExecSpace> odd = impl::odd_propagator(solver, solver.options().integrator.method);
  HierarchyState<ExecSpace> x = odd.make_state();
  Observation<ExecSpace> observation(odd);
  const double t0 = solver.time(), span = delays.back();
  std::vector<double> times(delays.size());
  for (std::size_t i = 0; i < delays.size(); ++i) times[i] = t0 + delays[i];
  std::vector<complex> values(delays.size(), 0.0);
  const Matrix d_dagger = d.adjoint();
  for (int pass = 0; pass < 2; ++pass) {
    // pass 0: tr[d x(tau)] from d^dagger x(t0); pass 1: conj(tr[d^dagger x(tau)]) from d x(t0).
    x.set_ados(solver.ados(), t0);
    x.apply_operator(pass == 0 ? d_dagger : d, Side::left);
    const Matrix& traced = pass == 0 ? d : d_dagger;
    std::size_t k = 0;
    odd.run(
        x, times, observation,
        [&](const Snapshot<ExecSpace>& s) {
          const complex value = (traced * s.rho()).trace();
          values[k++] += pass == 0 ? value : std::conj(value);
        },
        [&](double t) {
          if (on_step) on_step(pass * span + (t - t0));
        });
  }
  if (statistics) *statistics = x.statistics();  // (restarts keep counting: both passes)
  return values;
}

/// What density_of_states_in_frequency did: its linear solves, their GMRES iterations (Arnoldi steps:
/// one generator application and one preconditioning each) and the largest relative residual left.
struct FrequencySolveReport {
  std::int64_t solves = 0;
  std::int64_t iterations = 0;
  double worst_residual = 0.0;
};

/// The spectral function A(w) = (1/pi) Re int_0^inf C(tau) exp(+i w tau) dtau of a fermionic level d at
/// each w of `omegas` (the model's energy unit), with C(tau) = <{d(t0 + tau), d^dagger(t0)}> from the
/// solver's state at t0 (a steady state), solved in frequency as HierarchicalEOM.jl's DensityOfStates:
/// the propagation's transform is int_0^inf exp(i w tau) exp(L tau) dtau = -(L + i w)^-1 with the odd
/// hierarchy's L, so
///   A(w) = (1/pi) Re[tr(d y+) + tr(d^dagger y-)], (L + i w) y+ = -d^dagger x(t0), (L - i w) y- = -d x(t0),
/// two GMRES solves per frequency (`options`: restart, preconditioner and max_iterations per solve; its
/// tolerance bounds each solve's relative residual ||b - (L + s) y|| / ||b||). Each solve starts from
/// the previous frequency's solution. Unlike anticommutator_correlation's transform, no time grid,
/// window or cut-off at t_end: A at each w is exact to the solves' tolerance; but each w costs its own
/// solves, where one propagation gives a whole FFT grid (perf_tests/README.md measures both). Throws
/// heom::SteadyStateError when a solve stops above the tolerance, heom::OutOfMemoryError when the odd
/// hierarchy or its Krylov vectors do not fit beside `solver` (within SolverOptions::memory_limit,
/// when set, each). `on_frequency` sees the frequencies done
/// (0 .. 2 omegas.size(), over both passes); `report`, when given, what the solves did.
template <class ExecSpace>
std::vector<double> density_of_states_in_frequency(const Solver<ExecSpace>& solver, const Matrix& d,
                                                   const std::vector<double>& omegas,
                                                   const SteadyStateOptions& options = {},
                                                   const std::function<void(std::int64_t)>& on_frequency = {},
                                                   FrequencySolveReport* report = nullptr) {
  constexpr double pi = 3.14159265358979323846;
  impl::check_density_of_states(solver, d, "density_of_states_in_frequency");
  require_valid(options.validate(), "density_of_states_in_frequency");
  for (std::size_t i = 0; i < omegas.size(); ++i)
    if (!std::isfinite(omegas[i]))
      throw Error("density_of_states_in_frequency: frequency " + std::to_string(i) + " is not finite");
  if (omegas.empty()) return {};
  using vector = typename Generator<ExecSpace>::vector_type;
  using const_vector = typename Generator<ExecSpace>::const_vector_type;
  // The odd hierarchy's state holds the right-hand side; its integrator never steps (lsrk4: the fewest
  // vectors), and the Krylov vectors come on top.
  const Propagator<ExecSpace> odd = impl::odd_propagator(solver, Method::lsrk4);
  HierarchyState<ExecSpace> x = odd.make_state();
  const ExecSpace& exec = odd.exec();
  const std::int64_t size = odd.generator().vector_size();
  const std::uint64_t needed = static_cast<std::uint64_t>(options.work_vectors() + 1) *
                               static_cast<std::uint64_t>(size) * sizeof(device_complex);
  // Held to SolverOptions::memory_limit beside the odd hierarchy, as a steady state's are beside its own.
  odd.require_memory(odd.memory_plan().bytes_total, needed,
                     "density_of_states_in_frequency: GMRES(" + std::to_string(options.restart) + ")",
                     " for its Krylov vectors", "; lower restart");
  impl::HierarchyKrylov<ExecSpace> krylov(odd.generator(), odd.model(), odd.hierarchy(), options);
  const vector y = impl::allocate_zeroed<vector>(exec, "heom::density_of_states::y", size);
  const int n = solver.model().dimension();
  const auto y_rho = Kokkos::subview(y, std::make_pair(0, n * n));
  const auto rho_host = Kokkos::create_mirror_view(y_rho);
  std::vector<double> a(omegas.size(), 0.0);
  FrequencySolveReport done;
  const Matrix d_dagger = d.adjoint();
  for (int pass = 0; pass < 2; ++pass) {
    // pass 0: b = -d^dagger x(t0), shift +i w, traced against d; pass 1: b = -d x(t0), shift -i w,
    // traced against d^dagger.
    x.set_ados(solver.ados(), solver.time());
    x.apply_operator(complex(-1.0) * (pass == 0 ? d_dagger : d), Side::left);
    const const_vector b(x.ados().data(), size);
    const Matrix& traced = pass == 0 ? d : d_dagger;
    Kokkos::deep_copy(exec, y, device_complex(0.0));
    for (std::size_t i = 0; i < omegas.size(); ++i) {
      const complex shift(0.0, pass == 0 ? omegas[i] : -omegas[i]);
      const SteadyStateReport r = krylov.solve_shifted(exec, shift, b, y, options.max_iterations);
      ++done.solves;
      done.iterations += r.iterations;
      done.worst_residual = std::max(done.worst_residual, r.residual);
      if (!(r.residual <= options.tolerance)) {
        std::ostringstream message;
        message << "density_of_states_in_frequency: the solve at w = " << omegas[i] << " stopped at relative residual "
                << r.residual << " > tolerance " << options.tolerance << " after " << r.iterations
                << " iterations (GMRES(" << options.restart << "), " << to_string(options.preconditioner)
                << " preconditioner)";
        throw SteadyStateError(message.str(), r);
      }
      Kokkos::deep_copy(exec, rho_host, y_rho);
      exec.fence();
      Matrix rho(n, n);
      for (int k = 0; k < n * n; ++k) rho.data()[k] = complex(rho_host(k).real(), rho_host(k).imag());
      a[i] += (traced * rho).trace().real() / pi;
      if (on_frequency) on_frequency(static_cast<std::int64_t>(pass * omegas.size() + i + 1));
    }
  }
  if (report) *report = done;
  return a;
}

}  // namespace heom

#endif
