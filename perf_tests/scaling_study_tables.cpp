// The scaling study's markdown tables: halo volumes, efficiencies, go/no-go, capacity, CPU prediction.
#include "scaling_study_tables.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace heom::scaling_study {

namespace {

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

/// One row per model, one column per part count; cell(r, i) is model r at part_counts[i].
template <class Cell>
void pivot(const std::vector<ModelResult>& results, const std::string& title, const std::string& note,
           const Cell& cell) {
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
}

/// The models whose Hermitian form exchanges rows (diagonal baths): the rows' tables list these alone.
std::vector<ModelResult> with_hermitian_rows(const std::vector<ModelResult>& results) {
  std::vector<ModelResult> out;
  for (const ModelResult& r : results)
    if (r.balanced[0].has_hermitian_rows()) out.push_back(r);
  return out;
}

void print_halos(const std::vector<ModelResult>& results) {
  std::printf("## Halo volume\n");
  pivot(results, "Balanced partition: halo / owned", "Largest part's halo / owned (all halos / all owned).",
        [](const ModelResult& r, std::size_t i) {
          return fixed(r.balanced[i].largest_halo_ratio(), 2) + " (" + fixed(r.balanced[i].total_halo_ratio(), 2) + ")";
        });
  pivot(results, "Tier partition: halo / owned", "Largest part's halo / owned (all halos / all owned).",
        [](const ModelResult& r, std::size_t i) {
          return fixed(r.tier[i].largest_halo_ratio(), 2) + " (" + fixed(r.tier[i].total_halo_ratio(), 2) + ")";
        });
  pivot(results, "Balanced partition: one exchange",
        "MiB the busiest part receives / most peers of a part / smallest interior fraction.",
        [](const ModelResult& r, std::size_t i) {
          const PartitionAnalysis& a = r.balanced[i];
          return mib(a.largest_halo() * block_bytes(r.spec)) + " / " + std::to_string(a.largest_peers()) + " / " +
                 fixed(a.smallest_interior_fraction(), 2);
        });
  pivot(with_hermitian_rows(results), "Balanced partition: one exchange of the Hermitian form's rows",
        "MiB the busiest part receives / rows per halo block / the rows' share of the whole blocks' bytes (all "
        "parts together).",
        [](const ModelResult& r, std::size_t i) {
          const PartitionAnalysis& a = r.balanced[i];
          const double fraction = a.hermitian_rows_fraction(r.spec.dimension);
          return mib(a.largest_rows_received() * row_bytes(r.spec)) + " / " + fixed(fraction * r.spec.dimension, 2) +
                 " / " + fixed(fraction, 2);
        });
  pivot(results, "Tier partition: one exchange", "MiB the busiest part receives / most peers of a part.",
        [](const ModelResult& r, std::size_t i) {
          const PartitionAnalysis& a = r.tier[i];
          return mib(a.largest_halo() * block_bytes(r.spec)) + " / " + std::to_string(a.largest_peers());
        });
}

void print_efficiencies(const std::vector<ModelResult>& results) {
  std::printf("\n## Modelled strong-scaling efficiency on H200s\n");
  for (const Network& net : gpu_networks)
    pivot(results, "Balanced, " + net.key, "T(1) / (P T(P)) without / with overlap; " + net.description + ".",
          [&](const ModelResult& r, std::size_t i) {
            const double t1 = one_device_s(r, h200);
            return fixed(efficiency(r.balanced[i], r.spec, h200, net, t1, false), 2) + " / " +
                   fixed(efficiency(r.balanced[i], r.spec, h200, net, t1, true), 2);
          });
  for (const Network& net : gpu_networks)
    pivot(with_hermitian_rows(results), "Balanced, " + net.key + ", the Hermitian form's rows exchanged",
          "T(1) / (P T(P)) without / with overlap.", [&](const ModelResult& r, std::size_t i) {
            const double t1 = one_device_s(r, h200);
            return fixed(efficiency(r.balanced[i], r.spec, h200, net, t1, false, Exchange::hermitian_rows), 2) + " / " +
                   fixed(efficiency(r.balanced[i], r.spec, h200, net, t1, true, Exchange::hermitian_rows), 2);
          });
  pivot(results, "Tier, " + gpu_networks[0].key, "T(1) / (P T(P)) without / with overlap.",
        [&](const ModelResult& r, std::size_t i) {
          const double t1 = one_device_s(r, h200);
          return fixed(efficiency(r.tier[i], r.spec, h200, gpu_networks[0], t1, false), 2) + " / " +
                 fixed(efficiency(r.tier[i], r.spec, h200, gpu_networks[0], t1, true), 2);
        });
}

std::string go_no_go_cell(const GoNoGo& g) {
  const std::string worth =
      g.worth_it_parts == 1 ? "no" : "P=" + std::to_string(g.worth_it_parts) + " " + fixed(g.worth_it_speedup, 1) + "x";
  const std::string most =
      g.best_parts == 1 ? "" : "; max " + fixed(g.best_speedup, 1) + "x @" + std::to_string(g.best_parts);
  return worth + most;
}

void print_go_no_go(const Study& study) {
  std::printf("\n## Go/no-go for speed (balanced, with overlap)\n\n");
  std::printf("Largest P with efficiency >= %.1f: its speedup; then the best speedup at any P.\n\n",
              worth_it_efficiency);
  std::printf("### Whole blocks exchanged\n\n| model | T(1) us |");
  for (const Network& net : gpu_networks) std::printf(" %s |", net.key.c_str());
  std::printf(" nvlink_node at %.0f TFLOP/s |\n| --- | ---: |", fp64_vector_flops_per_s / 1e12);
  for (std::size_t i = 0; i <= gpu_networks.size(); ++i) std::printf(" --- |");
  std::printf("\n");
  for (std::size_t m = 0; m < study.models.size(); ++m) {
    const ModelResult& r = study.models[m];
    std::printf("| %s | %s |", r.spec.key.c_str(), fixed(one_device_s(r, h200) * 1e6, 0).c_str());
    for (const GoNoGo& g : study.summary[m])
      if (g.exchange == Exchange::whole_blocks) std::printf(" %s |", go_no_go_cell(g).c_str());
    if (!r.spec.dense_coupling) std::printf(" (memory-bound) |");
    std::printf("\n");
  }
  std::printf("\n### The Hermitian form's rows exchanged\n\n| model | T(1) us |");
  for (const Network& net : gpu_networks) std::printf(" %s |", net.key.c_str());
  std::printf("\n| --- | ---: |");
  for (std::size_t i = 0; i < gpu_networks.size(); ++i) std::printf(" --- |");
  std::printf("\n");
  for (std::size_t m = 0; m < study.models.size(); ++m) {
    const ModelResult& r = study.models[m];
    if (!r.balanced[0].has_hermitian_rows()) continue;
    std::printf("| %s | %s |", r.spec.key.c_str(), fixed(one_device_s(r, h200) * 1e6, 0).c_str());
    for (const GoNoGo& g : study.summary[m])
      if (g.exchange == Exchange::hermitian_rows) std::printf(" %s |", go_no_go_cell(g).c_str());
    std::printf("\n");
  }
}

void print_capacity(const std::vector<Capacity>& capacity) {
  std::printf("\n## Capacity (exp-adams %d vectors, lsrk4 %d; H200 usable %.0f GB)\n\n", stored_vectors,
              low_storage_vectors, device_usable_bytes / 1e9);
  std::printf(
      "| family | depth | ADOs | GB per vector | GB exp-adams | GB lsrk4 | host tables GB per rank | "
      "GPUs, no halo | GPUs, halo once | GPUs, halo in every vector | ms/step on those, no comm. | "
      "ms/step, measured family's efficiency | the same, Hermitian form's rows |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const Capacity& c : capacity)
    std::printf("| %s | %d | %.4g | %.3g | %.3g | %.3g | %.3g | %d | %d | %d | %.3g | %.3g | %.3g |\n",
                c.family.c_str(), c.depth, static_cast<double>(c.ados), c.vector_bytes / 1e9, c.device_bytes / 1e9,
                c.device_bytes_low_storage / 1e9, c.host_table_bytes / 1e9, c.gpus_without_halo, c.gpus_halo_once,
                c.gpus_halo_in_every_vector, c.ideal_step_s * 1e3, c.estimated_step_s * 1e3,
                c.estimated_hermitian_step_s * 1e3);
}

void print_cpu_prediction(const CpuPrediction& c) {
  const PartitionAnalysis& a = c.split;
  std::printf("\n## CPU prediction: FMO depth 6 (%d ADOs), 2 MPI ranks x 1 thread, shared-memory MPI\n\n", c.ados);
  std::printf("| quantity | value |\n| --- | ---: |\n");
  std::printf("| owned per rank | %lld / %lld |\n", static_cast<long long>(a.owned[0]),
              static_cast<long long>(a.owned[1]));
  std::printf("| halo per rank (ADOs) | %lld / %lld |\n", static_cast<long long>(a.halo[0]),
              static_cast<long long>(a.halo[1]));
  std::printf("| largest halo / owned | %.2f |\n", a.largest_halo_ratio());
  std::printf("| MiB per exchange (largest) | %s |\n", mib(a.largest_halo() * block_bytes(c.spec)).c_str());
  std::printf("| 1 rank x 1 thread, ms per step | %.2f |\n", c.one_rank_s * 1e3);
  std::printf("| 1 rank x 2 threads (measured ratio), ms | %.2f |\n", c.two_threads_s * 1e3);
  std::printf("| 2 ranks: slowest compute, ms | %.2f |\n", c.compute_s * 1e3);
  std::printf("| 2 ranks: slowest exchange, ms | %.2f |\n", c.exchange_s * 1e3);
  std::printf("| 2 ranks, no overlap, ms per step | %.2f (speedup %.2f) |\n", c.plain_s * 1e3,
              c.one_rank_s / c.plain_s);
  std::printf("| 2 ranks, overlap bound, ms per step | %.2f (speedup %.2f) |\n", c.overlapped_s * 1e3,
              c.one_rank_s / c.overlapped_s);
  std::printf("| Hermitian form's rows: halo rows per rank | %lld / %lld |\n",
              static_cast<long long>(a.rows_received(0)), static_cast<long long>(a.rows_received(1)));
  std::printf("| Hermitian form's rows: MiB per exchange (largest) | %s |\n",
              mib(a.largest_rows_received() * row_bytes(c.spec)).c_str());
  std::printf("| Hermitian form's rows: slowest exchange, ms | %.2f |\n", c.rows_exchange_s * 1e3);
  std::printf("| Hermitian form's rows: 2 ranks, no overlap, ms per step | %.2f (speedup %.2f) |\n",
              c.rows_plain_s * 1e3, c.one_rank_s / c.rows_plain_s);
}

}  // namespace

void print_tables(const Study& study) {
  print_halos(study.models);
  print_efficiencies(study.models);
  print_go_no_go(study);
  print_capacity(study.capacity);
  print_cpu_prediction(study.cpu);
}

}  // namespace heom::scaling_study
