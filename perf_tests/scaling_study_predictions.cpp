// What the scaling study derives from its measurements: per-model partitions, go/no-go, capacity, CPU prediction.
#include "scaling_study_predictions.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace heom::scaling_study {

namespace {

struct Family {
  std::string name;
  int dimension, num_exponents;
  std::vector<int> depths;
};

const std::vector<Family> families = {
    {"FMO", 7, 14, {8, 10, 12, 14}}, {"LHCII", 14, 28, {6, 7, 8, 9}}, {"dense24", 24, 48, {4, 5, 6}}};

}  // namespace

ModelResult measure(const ModelSpec& m) {
  const Hierarchy h(m.num_exponents, m.depth);
  std::vector<double> flops(h.size());
  for (int ado = 0; ado < h.size(); ++ado) flops[ado] = ado_flops(h, m, ado);
  ModelResult r;
  r.spec = m;
  r.ados = h.size();
  r.total_flops = std::accumulate(flops.begin(), flops.end(), 0.0);
  r.one_device_step_s = step_overhead_s + h200.seconds(h.size() * device_bytes_per_ado(m), r.total_flops);
  r.one_device_vector_s = step_overhead_s + h200_vector.seconds(h.size() * device_bytes_per_ado(m), r.total_flops);
  for (int parts : part_counts) {
    const Partition partition = Partition::balanced(h, parts);
    r.balanced.push_back(analyse(h, balanced_owner(partition, h.size()), parts, "balanced", flops));
    check_against_heom(h, partition, m, r.balanced.back());
    // A dense bath's neighbours are read whole: its Hermitian form exchanges whole blocks.
    if (!m.dense_coupling) measure_hermitian_rows(h, partition, m, r.balanced.back());
    r.tier.push_back(analyse(h, tier_owner(h, parts), parts, "tier", flops));
  }
  return r;
}

double one_device_s(const ModelResult& r, const Device& device) {
  double total_flops = 0.0;
  for (double f : r.balanced[0].flops) total_flops += f;
  return step_overhead_s + device.seconds(r.ados * device_bytes_per_ado(r.spec), total_flops);
}

std::vector<GoNoGo> decide_go_no_go(const ModelResult& r) {
  std::vector<GoNoGo> out;
  auto best = [&](const Device& device, const Network& net, double reference_s, const std::string& label,
                  Exchange exchange) {
    GoNoGo g;
    g.model = r.spec.key;
    g.network = label;
    g.exchange = exchange;
    for (const PartitionAnalysis& a : r.balanced) {
      const double e = efficiency(a, r.spec, device, net, reference_s, true, exchange);
      if (e >= worth_it_efficiency) g.worth_it_parts = a.parts, g.worth_it_speedup = a.parts * e;
      if (a.parts * e > g.best_speedup) g.best_parts = a.parts, g.best_speedup = a.parts * e;
    }
    out.push_back(g);
  };
  const double t1 = one_device_s(r, h200), t1_vector = one_device_s(r, h200_vector);
  for (const Network& net : gpu_networks) best(h200, net, t1, net.key, Exchange::whole_blocks);
  if (r.spec.dense_coupling)
    best(h200_vector, gpu_networks[0], t1_vector, gpu_networks[0].key + "_vector_units", Exchange::whole_blocks);
  if (r.balanced[0].has_hermitian_rows())
    for (const Network& net : gpu_networks) best(h200, net, t1, net.key, Exchange::hermitian_rows);
  return out;
}

std::vector<Capacity> estimate_capacity(const std::vector<ModelResult>& results) {
  std::vector<Capacity> out;
  for (const Family& f : families) {
    const ModelResult* measured = nullptr;
    for (const ModelResult& r : results)
      if (r.spec.dimension == f.dimension && r.spec.num_exponents == f.num_exponents &&
          (!measured || r.spec.depth > measured->spec.depth))
        measured = &r;
    for (int depth : f.depths) {
      Capacity c;
      c.family = f.name;
      c.dimension = f.dimension;
      c.num_exponents = f.num_exponents;
      c.depth = depth;
      c.ados = Hierarchy::count(f.num_exponents, depth);
      const double ados = static_cast<double>(c.ados);
      const double block = 16.0 * f.dimension * f.dimension;
      const double device_tables = ados * (table_bytes_per_exponent * f.num_exponents + table_bytes_per_ado);
      c.host_table_bytes = ados * table_bytes_per_exponent * f.num_exponents;
      const double vector = c.vector_bytes = ados * block;
      const double total = c.device_bytes = stored_vectors * vector + device_tables;
      c.device_bytes_low_storage = low_storage_vectors * vector + device_tables;
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
      c.gpus_without_halo = static_cast<int>(std::ceil(total / device_usable_bytes));
      c.gpus_halo_once = gpus_to_fit(1);
      c.gpus_halo_in_every_vector = gpus_to_fit(stored_vectors);
      const bool dense = f.name == "dense24";
      ModelSpec spec{"", "", f.dimension, f.num_exponents, depth, 2, dense, {}};
      if (!dense) spec.coupled_rows = site_projector_rows(f.dimension);
      // Mean flops per ADO from the deepest measured hierarchy (deep ADOs' neighbour counts differ little).
      double flops_per_ado = 0.0;
      if (measured) {
        for (double fl : measured->balanced[0].flops) flops_per_ado += fl;
        flops_per_ado /= measured->ados;
      }
      c.ideal_step_s = step_overhead_s + h200.seconds(ados / c.gpus_halo_once * device_bytes_per_ado(spec),
                                                      flops_per_ado * ados / c.gpus_halo_once);
      // Pessimistic: the smaller measured hierarchy's efficiency (its fixed costs weigh more).
      const double one_gpu_s = step_overhead_s + h200.seconds(ados * device_bytes_per_ado(spec), flops_per_ado * ados);
      auto family_efficiency = [&](Exchange exchange) {
        if (c.gpus_halo_once == 1 || !measured) return 1.0;
        return efficiency(measured_at(c.gpus_halo_once), measured->spec, h200, gpu_networks[0],
                          one_device_s(*measured, h200), true, exchange);
      };
      c.estimated_step_s = one_gpu_s / (c.gpus_halo_once * family_efficiency(Exchange::whole_blocks));
      c.estimated_hermitian_step_s = one_gpu_s / (c.gpus_halo_once * family_efficiency(Exchange::hermitian_rows));
      out.push_back(c);
    }
  }
  return out;
}

CpuPrediction predict_cpu(const CpuCalibration& cpu) {
  CpuPrediction out;
  out.spec = {"fmo_k14_d6", "FMO, n=7, K=14, depth 6", 7, 14, 6, 2, false, site_projector_rows(7)};
  const Hierarchy depth5(14, 5), depth6(14, 6);
  out.ados = depth6.size();
  double units5 = 0.0, units6 = 0.0;
  for (int ado = 0; ado < depth5.size(); ++ado) units5 += host_cost_units(depth5, ado);
  for (int ado = 0; ado < depth6.size(); ++ado) units6 += host_cost_units(depth6, ado);
  const double seconds_per_unit = out.seconds_per_unit = cpu.fmo_depth5_step_1thread_s / units5;
  out.one_rank_s = units6 * seconds_per_unit;
  out.two_threads_s = units6 * cpu.fmo_depth5_step_2threads_s / units5;
  std::vector<double> no_flops(depth6.size(), 0.0);
  const Partition partition = Partition::balanced(depth6, 2);
  const PartitionAnalysis& a = out.split =
      analyse(depth6, balanced_owner(partition, depth6.size()), 2, "balanced", no_flops);
  check_against_heom(depth6, partition, out.spec, a);
  measure_hermitian_rows(depth6, partition, out.spec, out.split);
  const Network mpi{"shared_memory_mpi",
                    "two MPI ranks on one host",
                    {shared_memory_mpi_bytes_per_s, shared_memory_mpi_latency_s},
                    {shared_memory_mpi_bytes_per_s, shared_memory_mpi_latency_s},
                    2};
  for (int p = 0; p < 2; ++p) {
    const double compute = a.host_cost[p] * seconds_per_unit;
    const double x = exchange_seconds(a, p, mpi, out.spec, Exchange::whole_blocks);
    const double rows_x = exchange_seconds(a, p, mpi, out.spec, Exchange::hermitian_rows);
    out.compute_s = std::max(out.compute_s, compute);
    out.exchange_s = std::max(out.exchange_s, x);
    out.plain_s = std::max(out.plain_s, x + compute);
    out.rows_exchange_s = std::max(out.rows_exchange_s, rows_x);
    out.rows_plain_s = std::max(out.rows_plain_s, rows_x + compute);
  }
  out.plain_s += allreduce_seconds(2, mpi);
  out.rows_plain_s += allreduce_seconds(2, mpi);
  // A one-thread rank copies its own messages, so nothing overlaps; the bound below assumes it could.
  for (int p = 0; p < 2; ++p) {
    const double interior = a.interior_host_cost[p] * seconds_per_unit;
    const double boundary = (a.host_cost[p] - a.interior_host_cost[p]) * seconds_per_unit;
    out.overlapped_s = std::max(
        out.overlapped_s, std::max(interior, exchange_seconds(a, p, mpi, out.spec, Exchange::whole_blocks)) + boundary);
  }
  out.overlapped_s += allreduce_seconds(2, mpi);
  return out;
}

}  // namespace heom::scaling_study
