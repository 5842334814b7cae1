// The scaling study's time model: H200 rooflines and links, and the step time of a partitioned hierarchy.
#ifndef HEOM_PERF_TESTS_SCALING_STUDY_TIME_MODEL_HPP
#define HEOM_PERF_TESTS_SCALING_STUDY_TIME_MODEL_HPP

#include <algorithm>
#include <string>
#include <vector>

#include "scaling_study_constants.hpp"
#include "scaling_study_hierarchy.hpp"

namespace heom::scaling_study {

struct Link {
  double bytes_per_s, latency_s;
};

/// How parts talk: `intra` between parts on one node (parts p / devices_per_node), `inter` across nodes.
struct Network {
  std::string key, description;
  Link intra, inter;
  int devices_per_node;
};

inline const std::vector<Network> gpu_networks = {
    {"nvlink_node",
     "NVLink within nodes of 8 H200s, InfiniBand NDR between them",
     {nvlink_bytes_per_s, nvlink_latency_s},
     {infiniband_bytes_per_s, infiniband_latency_s},
     gpus_per_node},
    {"pcie_staged",
     "every message staged through host memory over PCIe Gen5",
     {pcie_staged_bytes_per_s, pcie_staged_latency_s},
     {pcie_staged_bytes_per_s, pcie_staged_latency_s},
     1 << 20},
    {"infiniband",
     "one H200 per node, every message over InfiniBand NDR",
     {infiniband_bytes_per_s, infiniband_latency_s},
     {infiniband_bytes_per_s, infiniband_latency_s},
     1},
};

/// A device's compute time for a kernel moving `bytes` through HBM and doing `flops`: the roofline's larger side.
struct Device {
  double bytes_per_s, flops_per_s;
  double seconds(double bytes, double flops) const { return std::max(bytes / bytes_per_s, flops / flops_per_s); }
};

inline constexpr Device h200{hbm_effective_bytes_per_s, fp64_flops_per_s};
inline constexpr Device h200_vector{hbm_effective_bytes_per_s, fp64_vector_flops_per_s};

/// What an exchange moves: whole n x n blocks (the general form), or the rows of them that the Hermitian
/// form reads (heom::HaloRows; whole blocks where a partition has no rows measured: dense baths). The
/// compute is the same roofline either way: the diagonal models are memory-bound, and both forms stream
/// the same vectors.
enum class Exchange { whole_blocks, hermitian_rows };

/// Bytes one exchange moves from part q to part p.
double bytes_received(const PartitionAnalysis& a, const ModelSpec& m, int p, int q, Exchange exchange);

struct StepTime {
  double plain = 0.0;       // exchange, then compute
  double overlapped = 0.0;  // interior ADOs computed while the halo moves, then the boundary
  double exchange = 0.0;    // the slowest part's exchange
  double compute = 0.0;     // the slowest part's compute
};

/// One exchange of part p: per link class, a latency per peer plus the larger of the bytes in and out
/// (links are full duplex); on-node and off-node traffic proceed at once.
double exchange_seconds(const PartitionAnalysis& a, int p, const Network& net, const ModelSpec& m, Exchange exchange);

/// The step-size control's global reduction: a tree, log2 rounds, on-node rounds first.
double allreduce_seconds(int parts, const Network& net);

StepTime step_time(const PartitionAnalysis& a, const ModelSpec& m, const Device& device, const Network& net,
                   double overhead_s, Exchange exchange = Exchange::whole_blocks);

/// T(1) / (P T(P)), with or without overlap, at step_overhead_s.
double efficiency(const PartitionAnalysis& a, const ModelSpec& m, const Device& device, const Network& net,
                  double one_device_step_s, bool overlapped, Exchange exchange = Exchange::whole_blocks);

}  // namespace heom::scaling_study

#endif
