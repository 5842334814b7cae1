// heom::Integrator: the interface the solver steps a state through time with.
#ifndef HEOM_INTEGRATOR_INTEGRATOR_HPP
#define HEOM_INTEGRATOR_INTEGRATOR_HPP

#include <memory>
#include <string>

#include "heom/core/backend_traits.hpp"
#include "heom/generator/generator.hpp"
#include "heom/integrator/options.hpp"

namespace heom {

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

  /// Declares that state() now holds y(t), set from outside; cached derivatives are dropped.
  virtual void restart(double t) { m_time = t; }
  /// Takes one step, never past `t_limit`: it ends exactly on t_limit when the step would reach it.
  /// Returns the new time. Throws heom::IntegrationError when the run diverges.
  virtual double step(const ExecSpace& exec, double t_limit) = 0;
  /// Writes y(t) for t within the last step into `out` (its first out.extent(0) elements: rho alone
  /// needs only the first n^2); false when the method has no dense output (the solver then steps onto
  /// output times instead).
  virtual bool interpolate(const ExecSpace& exec, double t, const vector_type& out) const = 0;

 protected:
  explicit Integrator(const Generator<ExecSpace>& generator) : m_generator(generator) {}
  vector_type allocate(const std::string& label) const {  // (a const char* would read as a data pointer in Kokkos 3.4)
    return vector_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), m_generator.vector_size());
  }
  void evaluate(const ExecSpace& exec, const const_vector_type& in, const vector_type& out) {
    m_generator.apply(exec, in, out);
    ++m_stats.rhs_evaluations;
  }

  const Generator<ExecSpace>& m_generator;
  vector_type m_y;
  double m_time = 0.0;
  IntegratorStatistics m_stats;
};

/// The integrator `options.method` names, for `generator`'s vectors; its state is zero at t = 0.
template <class ExecSpace>
std::unique_ptr<Integrator<ExecSpace>> make_integrator(const ExecSpace& exec, const Generator<ExecSpace>& generator,
                                                       const IntegratorOptions& options);

}  // namespace heom

#endif
