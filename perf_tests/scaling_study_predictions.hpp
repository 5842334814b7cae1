// What the scaling study derives from its measurements and time model: go/no-go, capacity, CPU prediction.
#ifndef HEOM_PERF_TESTS_SCALING_STUDY_PREDICTIONS_HPP
#define HEOM_PERF_TESTS_SCALING_STUDY_PREDICTIONS_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "scaling_study_constants.hpp"
#include "scaling_study_hierarchy.hpp"
#include "scaling_study_time_model.hpp"

namespace heom::scaling_study {

/// The hierarchies the study measures. Spin-boson's sigma_z is diagonal with both rows nonzero, so its
/// Hermitian form reads whole blocks (and on CPUs n = 2 runs the two-level kernel, not that form).
inline const std::vector<ModelSpec> study_models = {
    {"spin_boson_k4_d10", "spin-boson, n=2, K=4, depth 10", 2, 4, 10, 4, false, {0b11}},
    {"fmo_k14_d5", "FMO, n=7, K=14, depth 5", 7, 14, 5, 2, false, site_projector_rows(7)},
    {"fmo_k14_d8", "FMO, n=7, K=14, depth 8", 7, 14, 8, 2, false, site_projector_rows(7)},
    {"lhcii_k28_d6", "LHCII monomer, n=14, K=28, depth 6", 14, 28, 6, 2, false, site_projector_rows(14)},
    {"dense24_k48_d3", "dense coupling, n=24, K=48 (24 baths), depth 3", 24, 48, 3, 2, true, {}},
    {"dense24_k48_d4", "dense coupling, n=24, K=48 (24 baths), depth 4", 24, 48, 4, 2, true, {}},
    {"dense24_k48_d5", "dense coupling, n=24, K=48 (24 baths), depth 5", 24, 48, 5, 2, true, {}},
};

struct ModelResult {
  ModelSpec spec;
  int ados = 0;
  double total_flops = 0.0;                       // the generator's, summed over the ADOs
  double one_device_step_s = 0.0;                 // one H200, from total_flops
  double one_device_vector_s = 0.0;               // the same at the vector units' flop rate
  std::vector<PartitionAnalysis> balanced, tier;  // one per part count
};

/// Builds m's hierarchy and splits it into each of part_counts parts, balanced (checked against heom's
/// own statistics) and by tier.
ModelResult measure(const ModelSpec& m);

/// One device's step time, its flops summed over the parts of the smallest balanced partition (the
/// tables' and the summary's T(1)).
double one_device_s(const ModelResult& r, const Device& device);

/// With overlap, the efficiency worth paying for (at P = 2 it means a 1.2x speedup).
inline constexpr double worth_it_efficiency = 0.6;

/// For one model, network and exchange, balanced with overlap: the largest P still at or above
/// worth_it_efficiency and its speedup, and the best speedup at any P.
struct GoNoGo {
  std::string model, network;
  Exchange exchange = Exchange::whole_blocks;
  int worth_it_parts = 1;
  double worth_it_speedup = 1.0;
  int best_parts = 1;
  double best_speedup = 1.0;
};

/// One entry per GPU network, and for a dense coupling one more: NVLink at the vector units' rate; then,
/// where the Hermitian form exchanges rows (diagonal baths), one per GPU network for that form.
std::vector<GoNoGo> decide_go_no_go(const ModelResult& r);

/// Which hierarchies need several GPUs just to fit, for one family at one depth.
struct Capacity {
  std::string family;
  int dimension = 0, num_exponents = 0, depth = 0;
  std::uint64_t ados = 0;
  double vector_bytes = 0.0;
  double device_bytes = 0.0;              // one GPU, exp-adams' stored vectors and the tables
  double device_bytes_low_storage = 0.0;  // the same with lsrk4's
  double host_table_bytes = 0.0;          // per rank
  int gpus_without_halo = 0, gpus_halo_once = 0, gpus_halo_in_every_vector = 0;
  double ideal_step_s = 0.0;                // on gpus_halo_once, no communication
  double estimated_step_s = 0.0;            // the same at the measured family's efficiency
  double estimated_hermitian_step_s = 0.0;  // the same, the Hermitian form's rows exchanged
};

/// Halo allowance from the deepest measured hierarchy of the same n and K in `results` (extrapolated;
/// P beyond 64 uses P = 64's ratio), either in the one vector the generator reads (the rest owned-size)
/// or in every stored vector.
std::vector<Capacity> estimate_capacity(const std::vector<ModelResult>& results);

/// FMO depth 6 on 2 MPI ranks of one thread each on a 2-core machine, calibrated on the measured
/// depth-5 step (per host cost unit, the weight Partition::balanced uses).
struct CpuPrediction {
  ModelSpec spec;
  int ados = 0;
  PartitionAnalysis split;  // balanced, 2 parts
  double seconds_per_unit = 0.0;
  double one_rank_s = 0.0;                   // 1 rank x 1 thread
  double two_threads_s = 0.0;                // 1 rank x 2 threads, by the measured ratio
  double compute_s = 0.0, exchange_s = 0.0;  // 2 ranks: the slowest part's
  double plain_s = 0.0;                      // 2 ranks, no overlap
  double overlapped_s = 0.0;                 // 2 ranks, the bound if the exchange could overlap
  // The same with the Hermitian form's rows exchanged (the compute as calibrated).
  double rows_exchange_s = 0.0, rows_plain_s = 0.0;
};

CpuPrediction predict_cpu(const CpuCalibration& cpu);

/// Everything the tables print and the JSON holds.
struct Study {
  std::vector<ModelResult> models;
  std::vector<std::vector<GoNoGo>> summary;  // per model
  std::vector<Capacity> capacity;
  CpuPrediction cpu;
};

}  // namespace heom::scaling_study

#endif
