// The scaling study's measurements on real hierarchies: per-ADO costs and the halos of partitions, as
// whole blocks and as the rows of them that the Hermitian form reads.
#ifndef HEOM_PERF_TESTS_SCALING_STUDY_HIERARCHY_HPP
#define HEOM_PERF_TESTS_SCALING_STUDY_HIERARCHY_HPP

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "heom/hierarchy/hierarchy.hpp"
#include "heom/hierarchy/partition.hpp"
#include "scaling_study_constants.hpp"

namespace heom::scaling_study {

struct ModelSpec {
  std::string key;
  std::string description;
  int dimension;           // n
  int num_exponents;       // K
  int depth;               // L
  int exponents_per_bath;  // consecutive exponents share a coupling operator
  bool dense_coupling;     // Q_b dense (n x n products) rather than diagonal (element-wise)
  /// Per bath of a diagonal coupling, the rows its Q_b couples (bit i: row i); empty for a dense one.
  std::vector<std::uint64_t> coupled_rows;
};

/// Site projectors |m><m|, one bath per site: bath m couples row m alone.
std::vector<std::uint64_t> site_projector_rows(int sites);

/// What the Hermitian form reads of a neighbour reached through exponent k (bit i: row i), as
/// impl::hermitian_rows_read has it: its diagonal bath's coupled rows, or every row of a dense bath.
std::vector<std::uint64_t> hermitian_rows_of_exponent(const ModelSpec& m);

inline double block_bytes(const ModelSpec& m) { return 16.0 * m.dimension * m.dimension; }
inline double row_bytes(const ModelSpec& m) { return 16.0 * m.dimension; }

/// HBM traffic of one exp-adams step per owned ADO: the generator's and integrator's vector streams,
/// neighbour blocks counted once (they come from L2), and the ADO's table rows.
inline double device_bytes_per_ado(const ModelSpec& m) {
  return block_bytes(m) * (generator_vectors_per_step + integrator_vectors_per_step) +
         table_bytes_per_exponent * m.num_exponents + table_bytes_per_ado;
}

/// Floating-point operations of the generator for ADO a, as the portable (GPU) kernel does them: [H, rho]
/// is two complex n x n products (16 n^3); each neighbour adds one complex multiply-add per element
/// (8 n^2); a dense bath then costs one commutator and one anticommutator (16 n^3) on the summed blocks.
double ado_flops(const Hierarchy& h, const ModelSpec& m, int ado);

/// The host kernels' cost of an ADO in neighbour-term units, as Partition::balanced weighs it.
double host_cost_units(const Hierarchy& h, int ado);

/// The halo of one assignment of ADOs to parts, per part.
struct PartitionAnalysis {
  std::string scheme;
  int parts = 0;
  std::vector<std::int64_t> owned, halo, interior, sent;
  std::vector<int> peers;
  std::vector<std::vector<std::int64_t>> received_from;  // [p][q]: halo ADOs part p reads from part q
  std::vector<double> flops, interior_flops, host_cost, interior_host_cost;
  /// [p][q]: rows of the halo blocks part p reads from part q that the Hermitian form reads
  /// (heom::HaloRows, what heom exchanges when that form runs). Empty where the form reads whole blocks
  /// (a dense bath) or where it was not measured (tier partitions).
  std::vector<std::vector<std::int64_t>> rows_received_from;

  double largest_halo_ratio() const {
    double r = 0.0;
    for (int p = 0; p < parts; ++p)
      if (owned[p] > 0) r = std::max(r, static_cast<double>(halo[p]) / owned[p]);
    return r;
  }
  double total_halo_ratio() const {
    const double h = std::accumulate(halo.begin(), halo.end(), 0.0);
    return h / std::accumulate(owned.begin(), owned.end(), 0.0);
  }
  std::int64_t largest_halo() const { return *std::max_element(halo.begin(), halo.end()); }
  int largest_peers() const { return *std::max_element(peers.begin(), peers.end()); }
  double mean_peers() const {
    double sum = 0.0;
    int active = 0;
    for (int p = 0; p < parts; ++p)
      if (owned[p] > 0) sum += peers[p], ++active;
    return active > 0 ? sum / active : 0.0;
  }
  bool has_hermitian_rows() const { return !rows_received_from.empty(); }
  std::int64_t rows_received(int p) const {
    return std::accumulate(rows_received_from[p].begin(), rows_received_from[p].end(), std::int64_t{0});
  }
  std::int64_t largest_rows_received() const {
    std::int64_t r = 0;
    for (int p = 0; p < parts; ++p) r = std::max(r, rows_received(p));
    return r;
  }
  /// The Hermitian form's rows over whole blocks' rows, all parts together (the share of the bytes).
  double hermitian_rows_fraction(int dimension) const {
    std::int64_t rows = 0;
    for (int p = 0; p < parts; ++p) rows += rows_received(p);
    return static_cast<double>(rows) / (std::accumulate(halo.begin(), halo.end(), 0.0) * dimension);
  }
  /// The smallest fraction of a part's owned ADOs that need no halo (what overlap can hide behind).
  double smallest_interior_fraction() const {
    double f = 1.0;
    for (int p = 0; p < parts; ++p)
      if (owned[p] > 0) f = std::min(f, static_cast<double>(interior[p]) / owned[p]);
    return f;
  }
};

/// owner[a] is the part of ADO a; flops[a] its generator's operations (ado_flops).
PartitionAnalysis analyse(const Hierarchy& h, const std::vector<int>& owner, int parts, const std::string& scheme,
                          const std::vector<double>& flops);

/// The owners of heom's balanced partition.
std::vector<int> balanced_owner(const Partition& partition, int size);

/// Tier partition: ADOs in (level, then lexicographic) order, cut into `parts` runs of equal count.
std::vector<int> tier_owner(const Hierarchy& h, int parts);

/// The balanced analysis must agree with heom's own statistics and halo plans; a mismatch is a bug here
/// or there, and stops the study (std::runtime_error).
void check_against_heom(const Hierarchy& h, const Partition& partition, const ModelSpec& m, const PartitionAnalysis& a);

/// Fills a.rows_received_from from heom::HaloRows on the balanced partition (m's baths diagonal), and
/// stops the study (std::runtime_error) if what a part sends is not what its peer receives.
void measure_hermitian_rows(const Hierarchy& h, const Partition& partition, const ModelSpec& m, PartitionAnalysis& a);

}  // namespace heom::scaling_study

#endif
