// The scaling study's JSON, built with nlohmann_json in the structure of results/scaling_study.json.
#include "scaling_study_json.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace heom::scaling_study {

namespace {

/// Per GPU network, the modelled step of partition `a` (efficiencies against one_device_step_s on `device`).
Json networks_json(const PartitionAnalysis& a, const ModelSpec& m, double one_device_step_s, const Device& device,
                   Exchange exchange) {
  Json model = Json::object();
  for (const Network& net : gpu_networks) {
    const StepTime t = step_time(a, m, device, net, step_overhead_s, exchange);
    Json n;
    n["step_s"] = t.plain;
    n["step_overlapped_s"] = t.overlapped;
    n["slowest_exchange_s"] = t.exchange;
    n["slowest_compute_s"] = t.compute;
    n["efficiency"] = one_device_step_s / (a.parts * t.plain);
    n["efficiency_overlapped"] = one_device_step_s / (a.parts * t.overlapped);
    model[net.key] = std::move(n);
  }
  return model;
}

/// What the Hermitian form exchanges (heom::HaloRows) and its modelled step.
Json hermitian_rows_json(const PartitionAnalysis& a, const ModelSpec& m, double one_device_step_s,
                         const Device& device) {
  Json j;
  std::vector<std::int64_t> rows(a.parts);
  std::vector<double> bytes(a.parts);
  for (int p = 0; p < a.parts; ++p) bytes[p] = (rows[p] = a.rows_received(p)) * row_bytes(m);
  j["rows_received"] = rows;
  j["bytes_received"] = bytes;
  j["largest_bytes_received"] = a.largest_rows_received() * row_bytes(m);
  j["rows_per_halo_block"] = a.hermitian_rows_fraction(m.dimension) * m.dimension;
  j["fraction_of_whole_block_bytes"] = a.hermitian_rows_fraction(m.dimension);
  j["model"] = networks_json(a, m, one_device_step_s, device, Exchange::hermitian_rows);
  return j;
}

/// One partition: its halo per part and, per GPU network, the modelled step (efficiencies against
/// one_device_step_s on `device`); where the Hermitian form exchanges rows, the same for those.
Json analysis_json(const PartitionAnalysis& a, const ModelSpec& m, double one_device_step_s, const Device& device) {
  Json j;
  j["scheme"] = a.scheme;
  j["parts"] = a.parts;
  j["largest_halo_ratio"] = a.largest_halo_ratio();
  j["total_halo_ratio"] = a.total_halo_ratio();
  j["largest_peers"] = a.largest_peers();
  j["mean_peers"] = a.mean_peers();
  j["largest_bytes_received"] = a.largest_halo() * block_bytes(m);
  j["smallest_interior_fraction"] = a.smallest_interior_fraction();
  j["owned"] = a.owned;
  j["halo"] = a.halo;
  j["sent"] = a.sent;
  j["peers"] = a.peers;
  j["interior"] = a.interior;
  std::vector<double> bytes_received(a.parts);
  for (int p = 0; p < a.parts; ++p) bytes_received[p] = a.halo[p] * block_bytes(m);
  j["bytes_received"] = bytes_received;
  j["flops"] = a.flops;
  j["model"] = networks_json(a, m, one_device_step_s, device, Exchange::whole_blocks);
  if (a.has_hermitian_rows()) j["hermitian_rows"] = hermitian_rows_json(a, m, one_device_step_s, device);
  return j;
}

Json analyses_json(const std::vector<PartitionAnalysis>& analyses, const ModelSpec& m, double one_device_step_s,
                   const Device& device) {
  Json out = Json::array();
  for (const PartitionAnalysis& a : analyses) out.push_back(analysis_json(a, m, one_device_step_s, device));
  return out;
}

Json model_json(const ModelResult& r) {
  const ModelSpec& m = r.spec;
  Json j;
  j["key"] = m.key;
  j["description"] = m.description;
  j["dimension"] = m.dimension;
  j["num_exponents"] = m.num_exponents;
  j["depth"] = m.depth;
  j["ados"] = r.ados;
  j["dense_coupling"] = m.dense_coupling;
  j["device_bytes_per_ado_step"] = device_bytes_per_ado(m);
  j["flops_per_ado_step_mean"] = r.total_flops / r.ados;
  j["vector_bytes"] = r.ados * block_bytes(m);
  j["one_device_step_s"] = r.one_device_step_s;
  j["one_device_step_vector_units_s"] = r.one_device_vector_s;
  j["balanced"] = analyses_json(r.balanced, m, r.one_device_step_s, h200);
  j["tier"] = analyses_json(r.tier, m, r.one_device_step_s, h200);
  // The same model at the vector units' flop rate: compute dearer, so communication matters less.
  if (m.dense_coupling) j["balanced_vector_units"] = analyses_json(r.balanced, m, r.one_device_vector_s, h200_vector);
  return j;
}

Json go_no_go_json(const GoNoGo& g) {
  Json j;
  j["model"] = g.model;
  j["network"] = g.network;
  j["exchange"] = g.exchange == Exchange::whole_blocks ? "whole_blocks" : "hermitian_rows";
  j["worth_it_parts"] = g.worth_it_parts;
  j["worth_it_speedup"] = g.worth_it_speedup;
  j["best_parts"] = g.best_parts;
  j["best_speedup"] = g.best_speedup;
  return j;
}

Json capacity_json(const Capacity& c) {
  Json j;
  j["family"] = c.family;
  j["dimension"] = c.dimension;
  j["num_exponents"] = c.num_exponents;
  j["depth"] = c.depth;
  j["ados"] = c.ados;
  j["vector_bytes"] = c.vector_bytes;
  j["device_bytes_one_gpu"] = c.device_bytes;
  j["device_bytes_one_gpu_low_storage"] = c.device_bytes_low_storage;
  j["host_table_bytes_per_rank"] = c.host_table_bytes;
  j["gpus_to_fit_without_halo"] = c.gpus_without_halo;
  j["gpus_to_fit_halo_once"] = c.gpus_halo_once;
  j["gpus_to_fit_halo_in_every_vector"] = c.gpus_halo_in_every_vector;
  j["ideal_step_s_at_fit"] = c.ideal_step_s;
  j["estimated_step_s_at_fit"] = c.estimated_step_s;
  j["estimated_step_s_at_fit_hermitian_rows"] = c.estimated_hermitian_step_s;
  return j;
}

Json cpu_prediction_json(const CpuPrediction& c) {
  const PartitionAnalysis& a = c.split;
  Json j;
  j["model"] = c.spec.description;
  j["ados"] = c.ados;
  j["owned"] = a.owned;
  j["halo"] = a.halo;
  j["interior"] = a.interior;
  j["host_cost_units"] = a.host_cost;
  j["largest_halo_ratio"] = a.largest_halo_ratio();
  j["largest_bytes_received"] = a.largest_halo() * block_bytes(c.spec);
  j["seconds_per_cost_unit"] = c.seconds_per_unit;
  j["one_rank_one_thread_step_s"] = c.one_rank_s;
  j["one_rank_two_threads_step_s"] = c.two_threads_s;
  j["two_ranks_slowest_compute_s"] = c.compute_s;
  j["two_ranks_slowest_exchange_s"] = c.exchange_s;
  j["two_ranks_step_s"] = c.plain_s;
  j["two_ranks_step_overlap_bound_s"] = c.overlapped_s;
  j["two_ranks_speedup"] = c.one_rank_s / c.plain_s;
  Json rows;
  rows["rows_received"] = std::vector<std::int64_t>{a.rows_received(0), a.rows_received(1)};
  rows["largest_bytes_received"] = a.largest_rows_received() * row_bytes(c.spec);
  rows["two_ranks_slowest_exchange_s"] = c.rows_exchange_s;
  rows["two_ranks_step_s"] = c.rows_plain_s;
  rows["two_ranks_speedup"] = c.one_rank_s / c.rows_plain_s;
  j["hermitian_rows"] = std::move(rows);
  return j;
}

}  // namespace

Json study_json(const Study& study, const std::vector<Constant>& constant_table, double run_seconds) {
  Json j;
  j["tool"] = "perf_tests/scaling_study.cpp";
  Json constants_json = Json::array();
  for (const Constant& c : constant_table) {
    Json entry;
    entry["name"] = c.name;
    entry["value"] = c.value;
    entry["unit"] = c.unit;
    entry["source"] = c.source;
    constants_json.push_back(std::move(entry));
  }
  j["constants"] = std::move(constants_json);
  Json models = Json::array();
  for (const ModelResult& r : study.models) models.push_back(model_json(r));
  j["models"] = std::move(models);
  j["worth_it_efficiency"] = worth_it_efficiency;
  Json summary = Json::array();
  for (const std::vector<GoNoGo>& per_model : study.summary)
    for (const GoNoGo& g : per_model) summary.push_back(go_no_go_json(g));
  j["summary"] = std::move(summary);
  Json capacity = Json::array();
  for (const Capacity& c : study.capacity) capacity.push_back(capacity_json(c));
  j["capacity"] = std::move(capacity);
  j["cpu_prediction"] = cpu_prediction_json(study.cpu);
  j["run_seconds"] = run_seconds;
  return j;
}

}  // namespace heom::scaling_study
