// heom::Integrator: the interface the solver steps a state through time with.
#ifndef HEOM_INTEGRATOR_INTEGRATOR_HPP
#define HEOM_INTEGRATOR_INTEGRATOR_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "heom/core/backend_traits.hpp"
#include "heom/core/error.hpp"
#include "heom/distributed/reductions.hpp"
#include "heom/generator/generator_definitions.hpp"
#include "heom/integrator/options.hpp"
#include "heom/integrator/state.hpp"
#include "heom/linalg/vector_ops.hpp"

namespace heom {

namespace impl {
/// std::complex<double> elements seen as Kokkos::complex<double> (the same two doubles); Complex is
/// complex or const complex.
template <class Complex>
auto host_view(Complex* data, std::size_t size) {
  static_assert(sizeof(complex) == sizeof(device_complex), "std::complex and Kokkos::complex differ in size");
  using element = std::conditional_t<std::is_const<Complex>::value, const device_complex, device_complex>;
  // (std::vector's operator new gives 16-byte blocks, the alignment Kokkos::complex asks for.)
  if (reinterpret_cast<std::uintptr_t>(data) % alignof(device_complex) != 0)
    throw Error("integrator state: a host vector is not aligned for Kokkos::complex");
  return Kokkos::View<element*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
      reinterpret_cast<element*>(data), size);
}

/// The first `count` elements of `v` on the host.
template <class ExecSpace, class Vector>
std::vector<complex> to_host(const ExecSpace& exec, const Vector& v, std::int64_t count) {
  std::vector<complex> host(static_cast<std::size_t>(count));
  Kokkos::deep_copy(exec, host_view(host.data(), host.size()),
                    Kokkos::subview(v, std::make_pair(std::int64_t(0), count)));
  exec.fence();
  return host;
}

/// Writes `host` into the leading elements of `v`.
template <class ExecSpace, class Vector>
void from_host(const ExecSpace& exec, const std::vector<complex>& host, const Vector& v) {
  Kokkos::deep_copy(exec, Kokkos::subview(v, std::make_pair(std::int64_t(0), static_cast<std::int64_t>(host.size()))),
                    host_view(host.data(), host.size()));
  exec.fence();
}
}  // namespace impl

template <class ExecSpace>
class Integrator {
 public:
  using vector_type = typename Generator<ExecSpace>::vector_type;
  using const_vector_type = typename Generator<ExecSpace>::const_vector_type;

  virtual ~Integrator() = default;

  /// The state y(time()). Its storage may move between steps: fetch it again after stepping.
  const vector_type& state() const { return m_y; }
  double time() const { return m_time; }
  const IntegratorStatistics& statistics() const { return m_stats; }
  /// Adds another integrator's counts to these (one that stepped the same state before, or worked
  /// for it: Method::automatic's two).
  void carry_statistics(const IntegratorStatistics& other) {
    m_stats.steps += other.steps;
    m_stats.rejected += other.rejected;
    m_stats.rhs_evaluations += other.rhs_evaluations;
  }

  /// Declares that state() now holds y(t), set from outside, of that form (its ADOs all Hermitian or
  /// not: which generator forms may run); cached derivatives are dropped.
  virtual void restart(double t, InputForm form) {
    m_time = t;
    m_form = form;
  }
  /// The form of the state's ADOs, which the generator is told at every step.
  InputForm input_form() const { return m_form; }
  /// Declares the state's ADOs of that form, its history kept (a state just loaded).
  void set_input_form(InputForm form) { m_form = form; }
  /// Takes one step, never past `t_limit`: it ends exactly on t_limit when the step would reach it.
  /// Returns the new time. Throws heom::IntegrationError when the run diverges.
  virtual double step(const ExecSpace& exec, double t_limit) = 0;
  /// Writes y(t) for t within the last step into `out` (its first out.extent(0) elements: rho alone
  /// needs only the first block); false when the method has no dense output (the solver then steps onto
  /// output times instead).
  virtual bool interpolate(const ExecSpace& exec, double t, const vector_type& out) const = 0;
  /// The blocks of this device's ADOs listed in `ados` alone (the rest of out as it was: observables
  /// that read a few ADOs); methods without a cheaper way write all of out (interpolate()).
  using ado_list = typename BackendTraits<ExecSpace>::template view<const int*>;
  virtual bool interpolate_ados(const ExecSpace& exec, double t, const vector_type& out, const ado_list& ados) const {
    (void)ados;
    return interpolate(exec, t, out);
  }

  /// The output times a run will read next (ascending, from the current time on), announced before
  /// each step and valid until it returns, and how many leading elements of the state it reads at
  /// each (Observation's output). A method whose output times inside a step come from the step's own
  /// work (chebyshev) keeps those; the others interpolate and ignore this.
  virtual void expect_outputs(const double* times, std::size_t count, std::int64_t elements) {
    (void)times;
    (void)count;
    (void)elements;
  }

  virtual Method method() const = 0;
  /// Everything the next steps and interpolations read (IntegratorState), copied to the host; the
  /// vectors go to `store`, one at a time, or into the state itself.
  IntegratorState save(const ExecSpace& exec, VectorStore* store = nullptr) const {
    IntegratorState s;
    s.method = method();
    s.time = m_time;
    s.statistics = m_stats;
    VectorStore& out = store ? *store : s;
    out.put("y", to_host(exec, m_y));
    save_history(exec, s, out);
    return s;
  }
  /// Continues from a saved state of the same method on the same hierarchy (this device's share of
  /// it), its vectors read from `store` (else the state's own). Throws heom::Error, changing nothing,
  /// when it is of another method or size or lacks a value; a vector that cannot be read (a damaged
  /// file) leaves the integrator to be loaded again.
  void load(const ExecSpace& exec, const IntegratorState& s, const VectorStore* store = nullptr) {
    if (s.method != method())
      throw Error(std::string("integrator state: saved by ") + to_string(s.method) + ", loaded into " +
                  to_string(method()));
    const VectorStore& in = store ? *store : s;
    in.require("y", static_cast<std::size_t>(owned_size()));
    load_history(exec, s, in);  // (checks all it needs before it changes anything)
    from_host(exec, in.get("y"), m_y);
    m_time = s.time;
    m_stats = s.statistics;
    exec.fence();
  }

 protected:
  /// The method's own part of save() and load() (which checks every value and vector it needs before
  /// it changes anything): the fixed-step methods carry nothing between steps.
  virtual void save_history(const ExecSpace&, IntegratorState&, VectorStore&) const {}
  virtual void load_history(const ExecSpace&, const IntegratorState&, const VectorStore&) {}
  /// The owned elements of `v` on the host.
  std::vector<complex> to_host(const ExecSpace& exec, const vector_type& v) const {
    return impl::to_host(exec, v, owned_size());
  }
  /// Writes `host` (owned_size() elements) into the owned part of `v`.
  void from_host(const ExecSpace& exec, const std::vector<complex>& host, const vector_type& v) const {
    impl::from_host(exec, host, v);
  }

  explicit Integrator(const Generator<ExecSpace>& generator) : m_generator(generator) {}
  /// The elements this device updates: the leading, owned part of each vector.
  std::int64_t owned_size() const { return m_generator.owned_size(); }
  /// An OrderedSum over the owned elements, in chunks of `chunk_ados` ADOs (a divisor of
  /// Partition::ados_per_unit, so that no chunk spans two devices), reduced over every device; in a
  /// batch, over each member's elements (OrderedSum::rms: the largest member's norm).
  impl::OrderedSum<ExecSpace> make_ordered_sum(std::int64_t chunk_ados) const {
    const std::int64_t block = m_generator.block_size();
    if (m_generator.members() > 1)
      return impl::OrderedSum<ExecSpace>(m_generator.exec(), m_generator.member_size(), chunk_ados * block, nullptr, 0,
                                         m_generator.members(), m_generator.member_size());
    return impl::OrderedSum<ExecSpace>(m_generator.exec(), owned_size(), chunk_ados * block, m_generator.communicator(),
                                       m_generator.global_vector_size());
  }
  /// An OrderedSum over rho's elements (ADO 0) of each member.
  impl::OrderedSum<ExecSpace> make_rho_sum() const {
    const std::int64_t block = m_generator.block_size();
    return impl::OrderedSum<ExecSpace>(m_generator.exec(), block, block, nullptr, 0, m_generator.members(),
                                       m_generator.member_size());
  }
  /// The largest of `value` over every device.
  double global_max(double value) const { return impl::max_over_devices(m_generator.communicator(), value); }
  /// The sum of `value` over every device (exact for counts).
  double global_sum(double value) const { return impl::sum_in_global_order(m_generator.communicator(), {value}); }
  /// The value that the device holding rho computed, on every device (rho's own error norm).
  double from_rho_owner(double value) const {
    const Communicator* c = m_generator.communicator();
    return c ? impl::from_device(c, value, m_generator.distribution()->rho_owner()) : value;
  }
  /// A zeroed state vector (with a split hierarchy's halo).
  vector_type allocate_state(const std::string& label) const {
    return impl::allocate_zeroed<vector_type>(m_generator.exec(), label, m_generator.vector_size());
  }
  /// A vector the generator reads (a state or stage input): on a split hierarchy it holds the halo too.
  vector_type allocate_input(
      const std::string& label) const {  // (a const char* would read as a data pointer in Kokkos 3.4)
    return impl::allocate<vector_type>(m_generator.exec(), label, m_generator.vector_size());
  }
  /// A vector the generator writes or the integrator combines, never read by the generator: the
  /// owned blocks alone.
  vector_type allocate_derivative(const std::string& label) const {
    return impl::allocate<vector_type>(m_generator.exec(), label, m_generator.owned_size());
  }
  /// The adaptive methods' common step bookkeeping. Throws unless t_limit lies ahead of t.
  static void require_ahead(const char* method, double t, double t_limit) {
    if (!(t_limit > t))
      throw Error(std::string(method) + ": cannot step from t = " + std::to_string(t) + " to " +
                  std::to_string(t_limit));
  }
  /// The trial step h from t, or exactly the rest up to t_limit (`lands`) when h would reach it or
  /// stop a sliver short of it.
  static double clip_to_limit(double t, double h, double t_limit, bool& lands) {
    lands = t + 1.01 * h >= t_limit;
    return lands ? t_limit - t : h;
  }
  /// The least step that moves t by more than its rounding: 16 eps |t| (as MATLAB's ode45). The
  /// adaptive methods raise a first trial step to it; smaller ones, accepted, would barely move t.
  static double resolution_floor(double t) { return 16.0 * std::numeric_limits<double>::epsilon() * std::abs(t); }
  /// A first trial step h raised to resolution_floor(t), but not past max_step (where > 0: a max_step
  /// below the floor then fails require_above_floor).
  static double raised_to_resolution(double h, double t, double max_step) {
    const double least = resolution_floor(t);
    return std::max(h, max_step > 0.0 ? std::min(least, max_step) : least);
  }
  /// Throws heom::IntegrationError when h has fallen below `floor` or, where the step does not land
  /// on the limit (`lands` false), below resolution_floor(t): divergence or extreme stiffness.
  static void require_above_floor(const char* method, double h, double floor, double t, bool lands = true) {
    const bool resolution = !lands && resolution_floor(t) > floor;
    if (resolution) floor = resolution_floor(t);
    if (h >= floor) return;
    std::ostringstream msg;
    msg << method << ": step size " << h << " fell below " << floor
        << (resolution ? " (16 eps |t|, the least step that moves t)" : "") << " at t = " << t
        << "; the run diverged or the generator is too stiff for the tolerances";
    throw IntegrationError(msg.str(), t);
  }

  /// The fixed-step methods' step from t towards t_limit: `step`, or the interval up to a finite
  /// limit split into equal steps no longer than `step`, the last one landing exactly (`lands`).
  static double fixed_step(const char* method, double t, double t_limit, double step, bool& lands) {
    double h = step;
    lands = false;
    if (t_limit - t <= h * (1.0 + 1e-12)) {
      h = t_limit - t;
      lands = true;
    } else if (std::isfinite(t_limit)) {
      h = (t_limit - t) / std::ceil((t_limit - t) / step * (1.0 - 1e-12));
    }
    if (!(h > 0.0))
      throw Error(std::string(method) + ": cannot step from t = " + std::to_string(t) + " to " +
                  std::to_string(t_limit));
    return h;
  }
  /// Throws heom::IntegrationError when a fixed step left a non-finite state (`largest` is max |y_i|^2,
  /// non-finite values mapped to impl::non_finite_norm).
  static void require_finite(const char* method, double largest, double t, double h) {
    if (largest < impl::non_finite_norm) return;
    std::ostringstream msg;
    msg << method << ": the state became NaN or Inf in the step from t = " << t << " (step " << h
        << "); the step is too large for this generator, or the model is unstable";
    throw IntegrationError(msg.str(), t);
  }

  /// out = L(t)(in): a driven model's generator at the stage time t, read on `side` of its
  /// breakpoints (TimeSide::before for a stage at the end of a step, so that no step sees a jump).
  void evaluate(const ExecSpace& exec, double t, const const_vector_type& in, const vector_type& out,
                typename Generator<ExecSpace>::Damping damping = Generator<ExecSpace>::Damping::included,
                TimeSide side = TimeSide::after) {
    m_generator.at_time(exec, t, side);
    m_generator.apply(exec, in, out, damping, m_form);
    ++m_stats.rhs_evaluations;
  }
  /// evaluate() with Generator::apply_then's after(first, last) (host backends).
  template <class After>
  void evaluate_then(const ExecSpace& exec, double t, const const_vector_type& in, const vector_type& out,
                     typename Generator<ExecSpace>::Damping damping, const After& after) {
    m_generator.at_time(exec, t, TimeSide::after);
    m_generator.apply_then(exec, in, out, damping, m_form, after);
    ++m_stats.rhs_evaluations;
  }

  const Generator<ExecSpace>& m_generator;
  vector_type m_y;
  double m_time = 0.0;
  InputForm m_form = InputForm::general;
  IntegratorStatistics m_stats;
};

}  // namespace heom

#endif
