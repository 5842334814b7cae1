// heom::Solver's member definitions, and those of what it is made of (solver.hpp includes this at its
// end; the library instantiates them once per backend).
#ifndef HEOM_SOLVER_DETAIL_SOLVER_DEFINITIONS_HPP
#define HEOM_SOLVER_DETAIL_SOLVER_DEFINITIONS_HPP

#include <utility>
#include <vector>

#include "heom/solver/detail/hierarchy_state_definitions.hpp"
#include "heom/solver/detail/propagator_definitions.hpp"
#include "heom/solver/solver.hpp"

namespace heom {

template <class ExecSpace>
Solver<ExecSpace>::Solver(const ExecSpace& exec, Model model, int depth, SolverOptions options)
    : m_propagator(exec, std::move(model), depth, std::move(options)),
      m_state(m_propagator.make_state()),
      m_observation(m_propagator) {}

template <class ExecSpace>
Solver<ExecSpace>::Solver(const ExecSpace& exec, std::vector<Model> members, int depth, SolverOptions options)
    : m_propagator(exec, std::move(members), depth, std::move(options)),
      m_state(m_propagator.make_state()),
      m_observation(m_propagator) {}

template <class ExecSpace>
double Solver<ExecSpace>::step() {
  const double t = m_propagator.step(m_state);
  m_propagator.exec().fence();
  return t;
}

template <class ExecSpace>
SteadyStateReport Solver<ExecSpace>::solve_steady_state(const SteadyStateOptions& options) {
  return heom::solve_steady_state(m_propagator, m_state, options);
}

}  // namespace heom

#endif
