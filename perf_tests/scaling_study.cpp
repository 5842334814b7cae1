// Feasibility study: one hierarchy split over several devices. Measures, on real hierarchies, the halo of
// heom::Partition::balanced and of tier partitions (ADOs grouped by level |n|), then feeds the per-part
// counts to a roofline and link model of H200 GPUs. Writes every raw number as JSON and prints the
// tables of docs/scaling.md (markdown). Host-only: no Kokkos, no device.
//
//   scaling_study [output.json]     (default perf_tests/results/scaling_study.json)
//
// The model's constants and where they come from: docs/scaling.md, "Assumptions".
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "heom/hierarchy/hierarchy.hpp"
#include "heom/hierarchy/partition.hpp"

namespace {

// ---------------------------------------------------------------------------------------------------
// Assumptions (named here once; docs/scaling.md gives each one's source).

struct Constant {
  const char* name;
  double value;
  const char* unit;
  const char* source;
};

constexpr double hbm_peak_bytes_per_s = 4.8e12;
constexpr double hbm_effective_bytes_per_s = 3.5e12;
constexpr double fp64_flops_per_s = 50e12;
constexpr double fp64_vector_flops_per_s = 25e12;  // the sensitivity case: the vector units, no tensor cores
constexpr int generator_vectors_per_step = 2;      // read the ADO once, write its derivative once
constexpr int integrator_vectors_per_step = 6;     // exp-adams: y, past derivatives, y_new
constexpr int stored_vectors = 8;                  // exp-adams' seven plus a dense-output buffer
constexpr int low_storage_vectors = 3;             // lsrk4: y, running increment, stage derivative
constexpr double table_bytes_per_exponent = 12.0;  // label, next, prev: one int each
constexpr double table_bytes_per_ado = 16.0;       // complex damping
constexpr double step_overhead_s = 10e-6;
constexpr double device_usable_bytes = 135e9;
constexpr int gpus_per_node = 8;

constexpr double nvlink_bytes_per_s = 450e9, nvlink_latency_s = 5e-6;
constexpr double pcie_staged_bytes_per_s = 25e9, pcie_staged_latency_s = 10e-6;
constexpr double infiniband_bytes_per_s = 50e9, infiniband_latency_s = 15e-6;
constexpr double shared_memory_mpi_bytes_per_s = 5e9, shared_memory_mpi_latency_s = 1e-6;

// The CPU calibration: one exp-adams step of FMO depth 5 on this machine's CI kind, from the benchmark
// JSON in perf_tests/results (BM_Step/model:1/depth:5/method:0).
constexpr double cpu_fmo_depth5_step_1thread_s = 5.0173e-3;
constexpr double cpu_fmo_depth5_step_2threads_s = 2.6271e-3;

const std::vector<Constant> constants = {
    {"hbm_peak_bytes_per_s", hbm_peak_bytes_per_s, "B/s", "H200 SXM vendor datasheet (4.8 TB/s HBM3e)"},
    {"hbm_effective_bytes_per_s", hbm_effective_bytes_per_s, "B/s",
     "assumption: ~73% of peak, a typical STREAM-like fraction on Hopper"},
    {"fp64_flops_per_s", fp64_flops_per_s, "FLOP/s",
     "assumption: ~75% of the 67 TFLOP/s FP64 tensor-core datasheet figure (batched ZGEMM); conservative for "
     "scaling since faster compute makes communication relatively dearer"},
    {"fp64_vector_flops_per_s", fp64_vector_flops_per_s, "FLOP/s",
     "sensitivity case: ~75% of the 34 TFLOP/s FP64 vector datasheet figure (a Kokkos team kernel)"},
    {"generator_vectors_per_step", generator_vectors_per_step, "vectors", "DESIGN.md section 4: 32 n^2 B/ADO"},
    {"integrator_vectors_per_step", integrator_vectors_per_step, "vectors",
     "assumption: exp-adams order 4-5 streams y, past derivatives and y_new (5-7)"},
    {"stored_vectors", stored_vectors, "vectors", "src/integrator/options.cpp: exp-adams 7 + dense output 1"},
    {"low_storage_vectors", low_storage_vectors, "vectors", "src/integrator/options.cpp: lsrk4"},
    {"table_bytes_per_exponent", table_bytes_per_exponent, "B", "src/hierarchy/memory_plan.cpp"},
    {"table_bytes_per_ado", table_bytes_per_ado, "B", "src/hierarchy/memory_plan.cpp"},
    {"step_overhead_s", step_overhead_s, "s",
     "assumption: ~3 kernel launches and the host's step-size decision (a device-to-host copy) per step"},
    {"device_usable_bytes", device_usable_bytes, "B",
     "141 GB H200 datasheet figure less ~6 GB for CUDA context, Kokkos and fragmentation (assumption)"},
    {"gpus_per_node", gpus_per_node, "GPUs", "HGX H200 vendor datasheet (8 GPUs, NVSwitch)"},
    {"nvlink_bytes_per_s", nvlink_bytes_per_s, "B/s", "vendor datasheet: NVLink 4, 900 GB/s bidirectional"},
    {"nvlink_latency_s", nvlink_latency_s, "s", "assumption: NCCL point-to-point small-message latency"},
    {"pcie_staged_bytes_per_s", pcie_staged_bytes_per_s, "B/s",
     "assumption: PCIe Gen5 x16 (64 GB/s datasheet) device->host->device with pinned buffers"},
    {"pcie_staged_latency_s", pcie_staged_latency_s, "s", "assumption: two cudaMemcpy and an MPI message"},
    {"infiniband_bytes_per_s", infiniband_bytes_per_s, "B/s", "vendor datasheet: InfiniBand NDR 400 Gb/s per GPU"},
    {"infiniband_latency_s", infiniband_latency_s, "s", "assumption: 10-20 us GPU to GPU across nodes"},
    {"shared_memory_mpi_bytes_per_s", shared_memory_mpi_bytes_per_s, "B/s",
     "assumption: one core's copy through MPI shared memory"},
    {"shared_memory_mpi_latency_s", shared_memory_mpi_latency_s, "s", "assumption: intra-node MPI latency"},
    {"cpu_fmo_depth5_step_1thread_s", cpu_fmo_depth5_step_1thread_s, "s",
     "measured: perf_tests/results/generator-1thread.json, BM_Step FMO depth 5 exp-adams"},
    {"cpu_fmo_depth5_step_2threads_s", cpu_fmo_depth5_step_2threads_s, "s",
     "measured: perf_tests/results/generator-2threads.json, BM_Step FMO depth 5 exp-adams"},
};

const std::vector<int> part_counts = {2, 4, 8, 16, 32, 64};

// ---------------------------------------------------------------------------------------------------
// Models and per-ADO costs.

struct ModelSpec {
  std::string key;
  std::string description;
  int dimension;           // n
  int num_exponents;       // K
  int depth;               // L
  int exponents_per_bath;  // consecutive exponents share a coupling operator
  bool dense_coupling;     // Q_b dense (n x n products) rather than diagonal (element-wise)
};

double block_bytes(const ModelSpec& m) { return 16.0 * m.dimension * m.dimension; }

/// HBM traffic of one exp-adams step per owned ADO: the generator's and integrator's vector streams,
/// neighbour blocks counted once (they come from L2), and the ADO's table rows.
double device_bytes_per_ado(const ModelSpec& m) {
  return block_bytes(m) * (generator_vectors_per_step + integrator_vectors_per_step) +
         table_bytes_per_exponent * m.num_exponents + table_bytes_per_ado;
}

/// Floating-point operations of the generator for ADO a, as the portable (GPU) kernel does them: [H, rho]
/// is two complex n x n products (16 n^3); each neighbour adds one complex multiply-add per element
/// (8 n^2); a dense bath then costs one commutator and one anticommutator (16 n^3) on the summed blocks.
double ado_flops(const heom::Hierarchy& h, const ModelSpec& m, int ado) {
  const double n = m.dimension, n2 = n * n, n3 = n2 * n;
  int neighbours = 0;
  for (int k = 0; k < m.num_exponents; ++k) neighbours += (h.next(ado, k) >= 0) + (h.prev(ado, k) >= 0);
  const int baths = m.dense_coupling ? m.num_exponents / m.exponents_per_bath : 0;
  return 16.0 * n3 * (1 + baths) + 8.0 * n2 * neighbours;
}

/// The host kernels' cost of an ADO in neighbour-term units, as Partition::balanced weighs it.
double host_cost_units(const heom::Hierarchy& h, int ado) {
  double cost = 2.0;
  for (int k = 0; k < h.num_exponents(); ++k) cost += (h.next(ado, k) >= 0) + (h.prev(ado, k) >= 0);
  return cost;
}

// ---------------------------------------------------------------------------------------------------
// Halos of any assignment of ADOs to parts.

struct PartitionAnalysis {
  std::string scheme;
  int parts = 0;
  std::vector<std::int64_t> owned, halo, interior, sent;
  std::vector<int> peers;
  std::vector<std::vector<std::int64_t>> received_from;  // [p][q]: halo ADOs part p reads from part q
  std::vector<double> flops, interior_flops, host_cost, interior_host_cost;

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
  /// The smallest fraction of a part's owned ADOs that need no halo (what overlap can hide behind).
  double smallest_interior_fraction() const {
    double f = 1.0;
    for (int p = 0; p < parts; ++p)
      if (owned[p] > 0) f = std::min(f, static_cast<double>(interior[p]) / owned[p]);
    return f;
  }
};

/// owner[a] is the part of ADO a. The neighbour relation is symmetric, so what p sends to q is q's halo
/// from p.
PartitionAnalysis analyse(const heom::Hierarchy& h, const std::vector<int>& owner, int parts, const std::string& scheme,
                          const std::vector<double>& flops) {
  const int size = h.size(), K = h.num_exponents();
  PartitionAnalysis a;
  a.scheme = scheme;
  a.parts = parts;
  a.owned.assign(parts, 0);
  a.halo.assign(parts, 0);
  a.interior.assign(parts, 0);
  a.sent.assign(parts, 0);
  a.peers.assign(parts, 0);
  a.received_from.assign(parts, std::vector<std::int64_t>(parts, 0));
  a.flops.assign(parts, 0.0);
  a.interior_flops.assign(parts, 0.0);
  a.host_cost.assign(parts, 0.0);
  a.interior_host_cost.assign(parts, 0.0);

  std::vector<int> start(parts + 1, 0), members(size);  // ADOs grouped by part (counting sort)
  for (int ado = 0; ado < size; ++ado) ++start[owner[ado] + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<int> fill(start.begin(), start.end() - 1);
  for (int ado = 0; ado < size; ++ado) members[fill[owner[ado]]++] = ado;

  std::vector<int> counted_for(size, -1);  // the last part whose halo counted this ADO
  for (int p = 0; p < parts; ++p) {
    for (int i = start[p]; i < start[p + 1]; ++i) {
      const int ado = members[i];
      bool interior = true;
      for (int k = 0; k < K; ++k)
        for (int b : {h.next(ado, k), h.prev(ado, k)}) {
          if (b < 0 || owner[b] == p) continue;
          interior = false;
          if (counted_for[b] != p) {
            counted_for[b] = p;
            ++a.received_from[p][owner[b]];
          }
        }
      const double cost = host_cost_units(h, ado);
      ++a.owned[p];
      a.flops[p] += flops[ado];
      a.host_cost[p] += cost;
      if (interior) {
        ++a.interior[p];
        a.interior_flops[p] += flops[ado];
        a.interior_host_cost[p] += cost;
      }
    }
  }
  for (int p = 0; p < parts; ++p)
    for (int q = 0; q < parts; ++q) {
      a.halo[p] += a.received_from[p][q];
      a.sent[p] += a.received_from[q][p];
      a.peers[p] += a.received_from[p][q] > 0;
    }
  return a;
}

std::vector<int> balanced_owner(const heom::Partition& partition, int size) {
  std::vector<int> owner(size);
  for (int p = 0; p < partition.parts(); ++p)
    for (int ado = partition.first(p); ado < partition.last(p); ++ado) owner[ado] = p;
  return owner;
}

/// Tier partition: ADOs in (level, then lexicographic) order, cut into `parts` runs of equal count.
std::vector<int> tier_owner(const heom::Hierarchy& h, int parts) {
  const int size = h.size(), depth = h.depth();
  std::vector<int> level(size), start(depth + 2, 0), order(size);
  for (int ado = 0; ado < size; ++ado) ++start[(level[ado] = h.level(ado)) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  for (int ado = 0; ado < size; ++ado) order[start[level[ado]]++] = ado;  // stable: lexicographic within a level
  std::vector<int> owner(size);
  for (int i = 0; i < size; ++i) owner[order[i]] = static_cast<int>(static_cast<std::int64_t>(i) * parts / size);
  return owner;
}

/// The balanced analysis must agree with heom's own statistics and halo plans; a mismatch is a bug here
/// or there, and stops the study.
void check_against_heom(const heom::Hierarchy& h, const heom::Partition& partition, const ModelSpec& m,
                        const PartitionAnalysis& a) {
  const heom::PartitionStatistics s = heom::partition_statistics(h, partition, m.dimension);
  for (int p = 0; p < a.parts; ++p) {
    const int interior = heom::HaloPlan::make(h, partition, p).interior_count();
    const bool same = s.owned[p] == a.owned[p] && s.halo[p] == a.halo[p] && s.peers[p] == a.peers[p] &&
                      s.bytes_received[p] == static_cast<std::uint64_t>(a.halo[p] * block_bytes(m)) &&
                      interior == a.interior[p];
    if (!same)
      throw std::runtime_error(m.key + ": part " + std::to_string(p) + " of " + std::to_string(a.parts) +
                               " disagrees with heom::partition_statistics / HaloPlan");
  }
  if (std::abs(s.largest_halo_ratio - a.largest_halo_ratio()) > 1e-12 ||
      std::abs(s.total_halo_ratio - a.total_halo_ratio()) > 1e-12)
    throw std::runtime_error(m.key + ": halo ratios disagree with heom::partition_statistics");
}

// ---------------------------------------------------------------------------------------------------
// The time model.

struct Link {
  double bytes_per_s, latency_s;
};

/// How parts talk: `intra` between parts on one node (parts p / devices_per_node), `inter` across nodes.
struct Network {
  std::string key, description;
  Link intra, inter;
  int devices_per_node;
};

const std::vector<Network> gpu_networks = {
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

/// One exchange of part p: per link class, a latency per peer plus the larger of the bytes in and out
/// (links are full duplex); on-node and off-node traffic proceed at once.
double exchange_seconds(const PartitionAnalysis& a, int p, const Network& net, double bytes_per_block) {
  struct Class {
    int peers = 0;
    double received = 0.0, sent = 0.0;
  } on_node, off_node;
  for (int q = 0; q < a.parts; ++q) {
    if (q == p || (a.received_from[p][q] == 0 && a.received_from[q][p] == 0)) continue;
    Class& c = (q / net.devices_per_node == p / net.devices_per_node) ? on_node : off_node;
    ++c.peers;
    c.received += a.received_from[p][q] * bytes_per_block;
    c.sent += a.received_from[q][p] * bytes_per_block;
  }
  auto time = [](const Class& c, const Link& link) {
    return c.peers == 0 ? 0.0 : c.peers * link.latency_s + std::max(c.received, c.sent) / link.bytes_per_s;
  };
  return std::max(time(on_node, net.intra), time(off_node, net.inter));
}

/// The step-size control's global reduction: a tree, log2 rounds, on-node rounds first.
double allreduce_seconds(int parts, const Network& net) {
  const int on_node = std::min(parts, net.devices_per_node),
            nodes = (parts + net.devices_per_node - 1) / net.devices_per_node;
  return std::ceil(std::log2(on_node)) * net.intra.latency_s + std::ceil(std::log2(nodes)) * net.inter.latency_s;
}

/// A device's compute time for a kernel moving `bytes` through HBM and doing `flops`: the roofline's larger side.
struct Device {
  double bytes_per_s, flops_per_s;
  double seconds(double bytes, double flops) const { return std::max(bytes / bytes_per_s, flops / flops_per_s); }
};

struct StepTime {
  double plain = 0.0;       // exchange, then compute
  double overlapped = 0.0;  // interior ADOs computed while the halo moves, then the boundary
  double exchange = 0.0;    // the slowest part's exchange
  double compute = 0.0;     // the slowest part's compute
};

StepTime step_time(const PartitionAnalysis& a, const ModelSpec& m, const Device& device, const Network& net,
                   double overhead_s) {
  StepTime t;
  const double bytes_per_ado = device_bytes_per_ado(m);
  double plain = 0.0, overlapped = 0.0;
  for (int p = 0; p < a.parts; ++p) {
    const double x = exchange_seconds(a, p, net, block_bytes(m));
    // The halo is written to HBM on arrival and read once by the generator; sent blocks are read once.
    const double exchange_bytes = (2.0 * a.halo[p] + a.sent[p]) * block_bytes(m);
    const double all = device.seconds(a.owned[p] * bytes_per_ado + exchange_bytes, a.flops[p]);
    const double interior = device.seconds(a.interior[p] * bytes_per_ado, a.interior_flops[p]);
    const double boundary =
        device.seconds((a.owned[p] - a.interior[p]) * bytes_per_ado + exchange_bytes, a.flops[p] - a.interior_flops[p]);
    plain = std::max(plain, x + all);
    overlapped = std::max(overlapped, std::max(interior, x) + boundary);
    t.exchange = std::max(t.exchange, x);
    t.compute = std::max(t.compute, all);
  }
  const double fixed = overhead_s + (a.parts > 1 ? allreduce_seconds(a.parts, net) : 0.0);
  t.plain = fixed + plain;
  t.overlapped = fixed + overlapped;
  return t;
}

// ---------------------------------------------------------------------------------------------------
// JSON output (a small writer: objects, arrays, numbers, strings).

class Json {
 public:
  void open(const std::string& key, char bracket) {
    item(key);
    m_text << bracket;
    m_first.push_back(true);
  }
  void close(char bracket) {
    m_first.pop_back();
    m_text << '\n' << std::string(2 * m_first.size(), ' ') << bracket;
  }
  void number(const std::string& key, double value) {
    item(key);
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.9g", value);
    m_text << (std::isfinite(value) ? buffer : "null");
  }
  void boolean(const std::string& key, bool value) {
    item(key);
    m_text << (value ? "true" : "false");
  }
  void string(const std::string& key, const std::string& value) {
    item(key);
    m_text << '"' << value << '"';  // our strings hold no quotes or backslashes
  }
  template <class T>
  void numbers(const std::string& key, const std::vector<T>& values) {
    item(key);
    m_text << '[';
    for (std::size_t i = 0; i < values.size(); ++i) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(values[i]));
      m_text << (i ? ", " : "") << buffer;
    }
    m_text << ']';
  }
  std::string text() const { return m_text.str() + "\n"; }

 private:
  void item(const std::string& key) {
    if (!m_first.empty()) {
      m_text << (m_first.back() ? "\n" : ",\n") << std::string(2 * m_first.size(), ' ');
      m_first.back() = false;
    }
    if (!key.empty()) m_text << '"' << key << "\": ";
  }
  std::ostringstream m_text;
  std::vector<bool> m_first;
};

// ---------------------------------------------------------------------------------------------------
// The study.

std::string mib(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, bytes < 10 * 1048576.0 ? "%.2f" : "%.0f", bytes / 1048576.0);
  return buffer;
}

std::string fixed(double value, int digits) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

struct ModelResult {
  ModelSpec spec;
  int ados = 0;
  std::vector<PartitionAnalysis> balanced, tier;  // one per part count
};

void write_analysis(Json& json, const PartitionAnalysis& a, const ModelSpec& m, double one_device_step_s,
                    const Device& device) {
  json.open("", '{');
  json.string("scheme", a.scheme);
  json.number("parts", a.parts);
  json.number("largest_halo_ratio", a.largest_halo_ratio());
  json.number("total_halo_ratio", a.total_halo_ratio());
  json.number("largest_peers", a.largest_peers());
  json.number("mean_peers", a.mean_peers());
  json.number("largest_bytes_received", a.largest_halo() * block_bytes(m));
  json.number("smallest_interior_fraction", a.smallest_interior_fraction());
  json.numbers("owned", a.owned);
  json.numbers("halo", a.halo);
  json.numbers("sent", a.sent);
  json.numbers("peers", a.peers);
  json.numbers("interior", a.interior);
  std::vector<double> bytes_received(a.parts);
  for (int p = 0; p < a.parts; ++p) bytes_received[p] = a.halo[p] * block_bytes(m);
  json.numbers("bytes_received", bytes_received);
  json.numbers("flops", a.flops);
  json.open("model", '{');
  for (const Network& net : gpu_networks) {
    const StepTime t = step_time(a, m, device, net, step_overhead_s);
    json.open(net.key, '{');
    json.number("step_s", t.plain);
    json.number("step_overlapped_s", t.overlapped);
    json.number("slowest_exchange_s", t.exchange);
    json.number("slowest_compute_s", t.compute);
    json.number("efficiency", one_device_step_s / (a.parts * t.plain));
    json.number("efficiency_overlapped", one_device_step_s / (a.parts * t.overlapped));
    json.close('}');
  }
  json.close('}');
  json.close('}');
}

double efficiency(const PartitionAnalysis& a, const ModelSpec& m, const Device& device, const Network& net,
                  double one_device_step_s, bool overlapped) {
  const StepTime t = step_time(a, m, device, net, step_overhead_s);
  return one_device_step_s / (a.parts * (overlapped ? t.overlapped : t.plain));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string output = argc > 1 ? argv[1] : "perf_tests/results/scaling_study.json";
  const auto started = std::chrono::steady_clock::now();
  const Device h200{hbm_effective_bytes_per_s, fp64_flops_per_s};
  const Device h200_vector{hbm_effective_bytes_per_s, fp64_vector_flops_per_s};

  const std::vector<ModelSpec> models = {
      {"spin_boson_k4_d10", "spin-boson, n=2, K=4, depth 10", 2, 4, 10, 4, false},
      {"fmo_k14_d5", "FMO, n=7, K=14, depth 5", 7, 14, 5, 2, false},
      {"fmo_k14_d8", "FMO, n=7, K=14, depth 8", 7, 14, 8, 2, false},
      {"lhcii_k28_d6", "LHCII monomer, n=14, K=28, depth 6", 14, 28, 6, 2, false},
      {"dense24_k48_d3", "dense coupling, n=24, K=48 (24 baths), depth 3", 24, 48, 3, 2, true},
      {"dense24_k48_d4", "dense coupling, n=24, K=48 (24 baths), depth 4", 24, 48, 4, 2, true},
      {"dense24_k48_d5", "dense coupling, n=24, K=48 (24 baths), depth 5", 24, 48, 5, 2, true},
  };

  Json json;
  json.open("", '{');
  json.string("tool", "perf_tests/scaling_study.cpp");
  json.open("constants", '[');
  for (const Constant& c : constants) {
    json.open("", '{');
    json.string("name", c.name);
    json.number("value", c.value);
    json.string("unit", c.unit);
    json.string("source", c.source);
    json.close('}');
  }
  json.close(']');

  std::vector<ModelResult> results;
  json.open("models", '[');
  for (const ModelSpec& m : models) {
    const heom::Hierarchy h(m.num_exponents, m.depth);
    std::vector<double> flops(h.size());
    for (int ado = 0; ado < h.size(); ++ado) flops[ado] = ado_flops(h, m, ado);
    const double total_flops = std::accumulate(flops.begin(), flops.end(), 0.0);
    const double one_device_step_s = step_overhead_s + h200.seconds(h.size() * device_bytes_per_ado(m), total_flops);
    const double one_device_vector_s =
        step_overhead_s + h200_vector.seconds(h.size() * device_bytes_per_ado(m), total_flops);

    ModelResult r{m, h.size(), {}, {}};
    for (int parts : part_counts) {
      const heom::Partition partition = heom::Partition::balanced(h, parts);
      r.balanced.push_back(analyse(h, balanced_owner(partition, h.size()), parts, "balanced", flops));
      check_against_heom(h, partition, m, r.balanced.back());
      r.tier.push_back(analyse(h, tier_owner(h, parts), parts, "tier", flops));
    }

    json.open("", '{');
    json.string("key", m.key);
    json.string("description", m.description);
    json.number("dimension", m.dimension);
    json.number("num_exponents", m.num_exponents);
    json.number("depth", m.depth);
    json.number("ados", h.size());
    json.boolean("dense_coupling", m.dense_coupling);
    json.number("device_bytes_per_ado_step", device_bytes_per_ado(m));
    json.number("flops_per_ado_step_mean", total_flops / h.size());
    json.number("vector_bytes", h.size() * block_bytes(m));
    json.number("one_device_step_s", one_device_step_s);
    json.number("one_device_step_vector_units_s", one_device_vector_s);
    json.open("balanced", '[');
    for (const PartitionAnalysis& a : r.balanced) write_analysis(json, a, m, one_device_step_s, h200);
    json.close(']');
    json.open("tier", '[');
    for (const PartitionAnalysis& a : r.tier) write_analysis(json, a, m, one_device_step_s, h200);
    json.close(']');
    if (m.dense_coupling) {
      // The same model at the vector units' flop rate: compute dearer, so communication matters less.
      json.open("balanced_vector_units", '[');
      for (const PartitionAnalysis& a : r.balanced) write_analysis(json, a, m, one_device_vector_s, h200_vector);
      json.close(']');
    }
    json.close('}');
    results.push_back(std::move(r));
    std::fprintf(stderr, "%s: %d ADOs, %.1f s so far\n", m.key.c_str(), h.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  json.close(']');

  // ---- Tables (markdown): one row per model, one column per part count.
  auto one_device_s = [&](const ModelResult& r, const Device& device) {
    double total_flops = 0.0;
    for (double f : r.balanced[0].flops) total_flops += f;
    return step_overhead_s + device.seconds(r.ados * device_bytes_per_ado(r.spec), total_flops);
  };
  auto pivot = [&](const std::string& title, const std::string& note, const auto& cell) {
    std::printf("\n### %s\n\n%s\n\n| model | ADOs | T(1) us |", title.c_str(), note.c_str());
    for (int parts : part_counts) std::printf(" P=%d |", parts);
    std::printf("\n| --- | ---: | ---: |");
    for (std::size_t i = 0; i < part_counts.size(); ++i) std::printf(" --- |");
    std::printf("\n");
    for (const ModelResult& r : results) {
      std::printf("| %s | %d | %s |", r.spec.key.c_str(), r.ados, fixed(one_device_s(r, h200) * 1e6, 0).c_str());
      for (std::size_t i = 0; i < part_counts.size(); ++i) std::printf(" %s |", cell(r, i).c_str());
      std::printf("\n");
    }
  };
  std::printf("## Halo volume\n");
  pivot("Balanced partition: halo / owned", "Largest part's halo / owned (all halos / all owned).",
        [](const ModelResult& r, std::size_t i) {
          return fixed(r.balanced[i].largest_halo_ratio(), 2) + " (" + fixed(r.balanced[i].total_halo_ratio(), 2) + ")";
        });
  pivot("Tier partition: halo / owned", "Largest part's halo / owned (all halos / all owned).",
        [](const ModelResult& r, std::size_t i) {
          return fixed(r.tier[i].largest_halo_ratio(), 2) + " (" + fixed(r.tier[i].total_halo_ratio(), 2) + ")";
        });
  pivot("Balanced partition: one exchange",
        "MiB the busiest part receives / most peers of a part / smallest interior fraction.",
        [](const ModelResult& r, std::size_t i) {
          const PartitionAnalysis& a = r.balanced[i];
          return mib(a.largest_halo() * block_bytes(r.spec)) + " / " + std::to_string(a.largest_peers()) + " / " +
                 fixed(a.smallest_interior_fraction(), 2);
        });
  pivot("Tier partition: one exchange", "MiB the busiest part receives / most peers of a part.",
        [](const ModelResult& r, std::size_t i) {
          const PartitionAnalysis& a = r.tier[i];
          return mib(a.largest_halo() * block_bytes(r.spec)) + " / " + std::to_string(a.largest_peers());
        });

  std::printf("\n## Modelled strong-scaling efficiency on H200s\n");
  for (const Network& net : gpu_networks)
    pivot("Balanced, " + net.key, "T(1) / (P T(P)) without / with overlap; " + net.description + ".",
          [&](const ModelResult& r, std::size_t i) {
            const double t1 = one_device_s(r, h200);
            return fixed(efficiency(r.balanced[i], r.spec, h200, net, t1, false), 2) + " / " +
                   fixed(efficiency(r.balanced[i], r.spec, h200, net, t1, true), 2);
          });
  pivot("Tier, " + gpu_networks[0].key, "T(1) / (P T(P)) without / with overlap.",
        [&](const ModelResult& r, std::size_t i) {
          const double t1 = one_device_s(r, h200);
          return fixed(efficiency(r.tier[i], r.spec, h200, gpu_networks[0], t1, false), 2) + " / " +
                 fixed(efficiency(r.tier[i], r.spec, h200, gpu_networks[0], t1, true), 2);
        });
  // ---- Go/no-go summary, with overlap: the largest P still at or above the efficiency worth paying for
  // (at P = 2 it means a 1.2x speedup), and the best speedup at any P.
  constexpr double worth_it_efficiency = 0.6;
  std::printf("\n## Go/no-go for speed (balanced, with overlap)\n\n");
  std::printf("Largest P with efficiency >= %.1f: its speedup; then the best speedup at any P.\n\n",
              worth_it_efficiency);
  std::printf("| model | T(1) us |");
  for (const Network& net : gpu_networks) std::printf(" %s |", net.key.c_str());
  std::printf(" nvlink_node at %.0f TFLOP/s |\n| --- | ---: |", fp64_vector_flops_per_s / 1e12);
  for (std::size_t i = 0; i <= gpu_networks.size(); ++i) std::printf(" --- |");
  std::printf("\n");
  json.number("worth_it_efficiency", worth_it_efficiency);
  json.open("summary", '[');
  for (const ModelResult& r : results) {
    const double t1 = one_device_s(r, h200), t1_vector = one_device_s(r, h200_vector);
    std::printf("| %s | %s |", r.spec.key.c_str(), fixed(t1 * 1e6, 0).c_str());
    auto best = [&](const Device& device, const Network& net, double reference_s, const std::string& label) {
      int worth_parts = 1, best_parts = 1;
      double worth_speedup = 1.0, best_speedup = 1.0;
      for (const PartitionAnalysis& a : r.balanced) {
        const double e = efficiency(a, r.spec, device, net, reference_s, true);
        if (e >= worth_it_efficiency) worth_parts = a.parts, worth_speedup = a.parts * e;
        if (a.parts * e > best_speedup) best_parts = a.parts, best_speedup = a.parts * e;
      }
      const std::string worth =
          worth_parts == 1 ? "no" : "P=" + std::to_string(worth_parts) + " " + fixed(worth_speedup, 1) + "x";
      const std::string most =
          best_parts == 1 ? "" : "; max " + fixed(best_speedup, 1) + "x @" + std::to_string(best_parts);
      std::printf(" %s%s |", worth.c_str(), most.c_str());
      json.open("", '{');
      json.string("model", r.spec.key);
      json.string("network", label);
      json.number("worth_it_parts", worth_parts);
      json.number("worth_it_speedup", worth_speedup);
      json.number("best_parts", best_parts);
      json.number("best_speedup", best_speedup);
      json.close('}');
    };
    for (const Network& net : gpu_networks) best(h200, net, t1, net.key);
    if (r.spec.dense_coupling)
      best(h200_vector, gpu_networks[0], t1_vector, gpu_networks[0].key + "_vector_units");
    else
      std::printf(" (memory-bound) |");
    std::printf("\n");
  }
  json.close(']');

  // ---- Capacity: which hierarchies need several GPUs just to fit. Halo allowance from the deepest
  // measured hierarchy of the same n and K (extrapolated; P beyond 64 uses P = 64's ratio), either in the
  // one vector the generator reads (the rest owned-size) or in every stored vector.
  struct Family {
    std::string name;
    int dimension, num_exponents;
    std::vector<int> depths;
  };
  const std::vector<Family> families = {
      {"FMO", 7, 14, {8, 10, 12, 14}}, {"LHCII", 14, 28, {6, 7, 8, 9}}, {"dense24", 24, 48, {4, 5, 6}}};
  std::printf("\n## Capacity (exp-adams %d vectors, lsrk4 %d; H200 usable %.0f GB)\n\n", stored_vectors,
              low_storage_vectors, device_usable_bytes / 1e9);
  std::printf(
      "| family | depth | ADOs | GB per vector | GB exp-adams | GB lsrk4 | host tables GB per rank | "
      "GPUs, no halo | GPUs, halo once | GPUs, halo in every vector | ms/step on those, no comm. | "
      "ms/step, measured family's efficiency |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  json.open("capacity", '[');
  for (const Family& f : families) {
    const ModelResult* measured = nullptr;
    for (const ModelResult& r : results)
      if (r.spec.dimension == f.dimension && r.spec.num_exponents == f.num_exponents &&
          (!measured || r.spec.depth > measured->spec.depth))
        measured = &r;
    for (int depth : f.depths) {
      const double ados = static_cast<double>(heom::Hierarchy::count(f.num_exponents, depth));
      const double block = 16.0 * f.dimension * f.dimension;
      const double device_tables = ados * (table_bytes_per_exponent * f.num_exponents + table_bytes_per_ado);
      const double host_tables = ados * table_bytes_per_exponent * f.num_exponents;
      const double vector = ados * block;
      const double total = stored_vectors * vector + device_tables;
      const double low_storage_total = low_storage_vectors * vector + device_tables;
      auto measured_at = [&](int parts) -> const PartitionAnalysis& {
        std::size_t i = 0;
        while (i + 1 < part_counts.size() && part_counts[i] < parts) ++i;
        return measured->balanced[i];
      };
      auto halo_ratio = [&](int parts) {
        return parts == 1 || !measured ? 0.0 : measured_at(parts).largest_halo_ratio();
      };
      auto gpus_to_fit = [&](int vectors_with_halo) {
        int parts = 1;
        while ((total + vectors_with_halo * halo_ratio(parts) * vector) / parts > device_usable_bytes &&
               parts < (1 << 16))
          parts *= 2;
        return parts;
      };
      const int gpus_ideal = static_cast<int>(std::ceil(total / device_usable_bytes));
      const int gpus_halo_once = gpus_to_fit(1), gpus_halo_everywhere = gpus_to_fit(stored_vectors);
      const ModelSpec spec{"", "", f.dimension, f.num_exponents, depth, 2, f.name == "dense24"};
      // Mean flops per ADO from the deepest measured hierarchy (deep ADOs' neighbour counts differ little).
      double flops_per_ado = 0.0;
      if (measured) {
        for (double fl : measured->balanced[0].flops) flops_per_ado += fl;
        flops_per_ado /= measured->ados;
      }
      const double ideal_step_s = step_overhead_s + h200.seconds(ados / gpus_halo_once * device_bytes_per_ado(spec),
                                                                 flops_per_ado * ados / gpus_halo_once);
      // Pessimistic: the smaller measured hierarchy's efficiency (its fixed costs weigh more).
      const double one_gpu_s = step_overhead_s + h200.seconds(ados * device_bytes_per_ado(spec), flops_per_ado * ados);
      double family_efficiency = 1.0;
      if (gpus_halo_once > 1 && measured)
        family_efficiency = efficiency(measured_at(gpus_halo_once), measured->spec, h200, gpu_networks[0],
                                       one_device_s(*measured, h200), true);
      const double estimated_step_s = one_gpu_s / (gpus_halo_once * family_efficiency);
      std::printf("| %s | %d | %.4g | %.3g | %.3g | %.3g | %.3g | %d | %d | %d | %.3g | %.3g |\n", f.name.c_str(),
                  depth, ados, vector / 1e9, total / 1e9, low_storage_total / 1e9, host_tables / 1e9, gpus_ideal,
                  gpus_halo_once, gpus_halo_everywhere, ideal_step_s * 1e3, estimated_step_s * 1e3);
      json.open("", '{');
      json.string("family", f.name);
      json.number("dimension", f.dimension);
      json.number("num_exponents", f.num_exponents);
      json.number("depth", depth);
      json.number("ados", ados);
      json.number("vector_bytes", vector);
      json.number("device_bytes_one_gpu", total);
      json.number("device_bytes_one_gpu_low_storage", low_storage_total);
      json.number("host_table_bytes_per_rank", host_tables);
      json.number("gpus_to_fit_without_halo", gpus_ideal);
      json.number("gpus_to_fit_halo_once", gpus_halo_once);
      json.number("gpus_to_fit_halo_in_every_vector", gpus_halo_everywhere);
      json.number("ideal_step_s_at_fit", ideal_step_s);
      json.number("estimated_step_s_at_fit", estimated_step_s);
      json.close('}');
    }
  }
  json.close(']');

  // ---- The CPU prediction: FMO depth 6 on 2 MPI ranks of one thread each on this 2-core machine,
  // calibrated on the measured depth-5 step (per host cost unit, the weight Partition::balanced uses).
  {
    const ModelSpec fmo6{"fmo_k14_d6", "FMO, n=7, K=14, depth 6", 7, 14, 6, 2, false};
    const heom::Hierarchy depth5(14, 5), depth6(14, 6);
    double units5 = 0.0, units6 = 0.0;
    for (int ado = 0; ado < depth5.size(); ++ado) units5 += host_cost_units(depth5, ado);
    for (int ado = 0; ado < depth6.size(); ++ado) units6 += host_cost_units(depth6, ado);
    const double seconds_per_unit = cpu_fmo_depth5_step_1thread_s / units5;
    const double one_rank_s = units6 * seconds_per_unit;
    const double two_threads_s = units6 * cpu_fmo_depth5_step_2threads_s / units5;
    std::vector<double> no_flops(depth6.size(), 0.0);
    const heom::Partition partition = heom::Partition::balanced(depth6, 2);
    const PartitionAnalysis a = analyse(depth6, balanced_owner(partition, depth6.size()), 2, "balanced", no_flops);
    check_against_heom(depth6, partition, fmo6, a);
    const Network mpi{"shared_memory_mpi",
                      "two MPI ranks on one host",
                      {shared_memory_mpi_bytes_per_s, shared_memory_mpi_latency_s},
                      {shared_memory_mpi_bytes_per_s, shared_memory_mpi_latency_s},
                      2};
    double compute_s = 0.0, plain_s = 0.0, exchange_s = 0.0;
    for (int p = 0; p < 2; ++p) {
      const double x = exchange_seconds(a, p, mpi, block_bytes(fmo6));
      compute_s = std::max(compute_s, a.host_cost[p] * seconds_per_unit);
      exchange_s = std::max(exchange_s, x);
      plain_s = std::max(plain_s, x + a.host_cost[p] * seconds_per_unit);
    }
    plain_s += allreduce_seconds(2, mpi);
    // A one-thread rank copies its own messages, so nothing overlaps; the bound below assumes it could.
    double overlapped_s = 0.0;
    for (int p = 0; p < 2; ++p) {
      const double interior = a.interior_host_cost[p] * seconds_per_unit;
      const double boundary = (a.host_cost[p] - a.interior_host_cost[p]) * seconds_per_unit;
      overlapped_s =
          std::max(overlapped_s, std::max(interior, exchange_seconds(a, p, mpi, block_bytes(fmo6))) + boundary);
    }
    overlapped_s += allreduce_seconds(2, mpi);
    std::printf("\n## CPU prediction: FMO depth 6 (%d ADOs), 2 MPI ranks x 1 thread, shared-memory MPI\n\n",
                depth6.size());
    std::printf("| quantity | value |\n| --- | ---: |\n");
    std::printf("| owned per rank | %lld / %lld |\n", static_cast<long long>(a.owned[0]),
                static_cast<long long>(a.owned[1]));
    std::printf("| halo per rank (ADOs) | %lld / %lld |\n", static_cast<long long>(a.halo[0]),
                static_cast<long long>(a.halo[1]));
    std::printf("| largest halo / owned | %.2f |\n", a.largest_halo_ratio());
    std::printf("| MiB per exchange (largest) | %s |\n", mib(a.largest_halo() * block_bytes(fmo6)).c_str());
    std::printf("| 1 rank x 1 thread, ms per step | %.2f |\n", one_rank_s * 1e3);
    std::printf("| 1 rank x 2 threads (measured ratio), ms | %.2f |\n", two_threads_s * 1e3);
    std::printf("| 2 ranks: slowest compute, ms | %.2f |\n", compute_s * 1e3);
    std::printf("| 2 ranks: slowest exchange, ms | %.2f |\n", exchange_s * 1e3);
    std::printf("| 2 ranks, no overlap, ms per step | %.2f (speedup %.2f) |\n", plain_s * 1e3, one_rank_s / plain_s);
    std::printf("| 2 ranks, overlap bound, ms per step | %.2f (speedup %.2f) |\n", overlapped_s * 1e3,
                one_rank_s / overlapped_s);
    json.open("cpu_prediction", '{');
    json.string("model", fmo6.description);
    json.number("ados", depth6.size());
    json.numbers("owned", a.owned);
    json.numbers("halo", a.halo);
    json.numbers("interior", a.interior);
    json.numbers("host_cost_units", a.host_cost);
    json.number("largest_halo_ratio", a.largest_halo_ratio());
    json.number("largest_bytes_received", a.largest_halo() * block_bytes(fmo6));
    json.number("seconds_per_cost_unit", seconds_per_unit);
    json.number("one_rank_one_thread_step_s", one_rank_s);
    json.number("one_rank_two_threads_step_s", two_threads_s);
    json.number("two_ranks_slowest_compute_s", compute_s);
    json.number("two_ranks_slowest_exchange_s", exchange_s);
    json.number("two_ranks_step_s", plain_s);
    json.number("two_ranks_step_overlap_bound_s", overlapped_s);
    json.number("two_ranks_speedup", one_rank_s / plain_s);
    json.close('}');
  }

  json.number("run_seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  json.close('}');
  std::ofstream file(output);
  file << json.text();
  if (!file) {
    std::fprintf(stderr, "scaling_study: cannot write %s\n", output.c_str());
    return 1;
  }
  std::fprintf(stderr, "wrote %s\n", output.c_str());
  return 0;
}
