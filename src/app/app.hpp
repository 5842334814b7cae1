// What every part of the heom program shares: the execution space it runs on, and the devices of
// this process it asks for.
#ifndef HEOM_APP_APP_HPP
#define HEOM_APP_APP_HPP

#include <Kokkos_Core.hpp>

#include <vector>

#include "heom/solver/solver.hpp"
#include "io/input.hpp"

namespace heom::app {

using Exec = Kokkos::DefaultExecutionSpace;

/// The devices of this process that split a hierarchy or share an ensemble (--devices; 0 or 1: one
/// device), and on CUDA which GPUs (--device-ids: device d on gpu_ids[d % size]; empty: GPU d).
struct Devices {
  int count = 0;
  std::vector<int> gpu_ids;
};

/// The solver options every run of `config` starts from: its integrator and hierarchy truncation.
inline SolverOptions solver_options(const io::RunConfig& config) {
  SolverOptions options;
  options.integrator = config.integrator;
  options.importance_threshold = config.importance_threshold;
  return options;
}

}  // namespace heom::app

#endif
