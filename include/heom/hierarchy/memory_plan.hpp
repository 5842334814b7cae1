// heom::MemoryPlan: what a hierarchy will cost before anything is allocated, and the refusal of one
// that does not fit.
#ifndef HEOM_HIERARCHY_MEMORY_PLAN_HPP
#define HEOM_HIERARCHY_MEMORY_PLAN_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "heom/hierarchy/hierarchy.hpp"

namespace heom {

struct MemoryPlan {
  int dimension = 0;                 ///< n
  int num_exponents = 0;             ///< K
  std::vector<int> max_excitations;  ///< [K] each exponent's cap (heom::Hierarchy; 0: the depth alone)
  int depth = 0;                     ///< L
  int state_vectors = 0;             ///< full ADO vectors held at once (state + integrator work vectors)
  int ado_columns = 0;               ///< columns of each ADO's block held: n, or 1 (heom::AdoShape::ground_column)
  ImportanceTruncation truncation;   ///< the hierarchy's (threshold 0: none)
  std::uint64_t num_ados = 0;        ///< the ADOs the hierarchy holds (a truncation's kept ones)
  /// ADO blocks in one of this device's vectors: num_ados, or a share's owned ADOs and halo.
  std::uint64_t local_ados = 0;
  std::uint64_t bytes_per_vector = 0;  ///< one vector of this device's ADOs (n x ado_columns complex<double> each)
  std::uint64_t bytes_halo = 0;        ///< the halo blocks that each vector the generator reads adds
  std::uint64_t bytes_exchange = 0;    ///< the buffer of blocks packed for other devices
  std::uint64_t bytes_tables = 0;      ///< labels, neighbour tables, damping (device + host copy; on host backends
                                       ///< a Solver's generator reads the host copy: an upper bound there)
  std::uint64_t bytes_total = 0;       ///< saturates at UINT64_MAX

  /// The plan for n, K, L and an integrator that keeps `state_vectors` full vectors, each ADO held as
  /// `ado_columns` columns of its block (0: all n).
  static MemoryPlan make(int dimension, int num_exponents, int depth, int state_vectors, int ado_columns = 0);
  /// The same with capped exponents (Model::max_excitations: a fermionic exponent's 0/1 rule), and
  /// the ADOs a truncation keeps (counted by a walk that costs about the kept ADOs: Hierarchy::count).
  static MemoryPlan make(int dimension, const std::vector<int>& max_excitations, int depth, int state_vectors,
                         int ado_columns = 0, const ImportanceTruncation& truncation = {});

  /// One device's share of this plan when the hierarchy is split (heom::Partition): its vectors hold
  /// its `owned_ados`, and the `input_vectors` of them that the generator reads hold the halo too
  /// (`local_ados` blocks in all); `sent_ados` blocks are packed for the other devices; its device
  /// tables cover the owned ADOs, on the device and on the host.
  MemoryPlan share(std::uint64_t local_ados, std::uint64_t owned_ados, int input_vectors,
                   std::uint64_t sent_ados) const;

  /// Throws heom::OutOfMemoryError, naming the largest depth that would fit, when bytes_total
  /// exceeds `available_bytes`. `device` names where the memory is ("OpenMP host memory").
  void require_fits(std::uint64_t available_bytes, const std::string& device) const;
  /// The largest depth <= this->depth whose plan fits in `available_bytes`; -1 if not even depth 0.
  int largest_fitting_depth(std::uint64_t available_bytes) const;
};

/// "1.50 GiB" style, for plans and messages.
std::string format_bytes(std::uint64_t bytes);

}  // namespace heom

#endif
