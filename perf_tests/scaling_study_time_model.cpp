// The scaling study's time model: exchanges, reductions and the step time of a partitioned hierarchy.
#include "scaling_study_time_model.hpp"

#include <cmath>

namespace heom::scaling_study {

double bytes_received(const PartitionAnalysis& a, const ModelSpec& m, int p, int q, Exchange exchange) {
  if (exchange == Exchange::hermitian_rows && a.has_hermitian_rows()) return a.rows_received_from[p][q] * row_bytes(m);
  return a.received_from[p][q] * block_bytes(m);
}

double exchange_seconds(const PartitionAnalysis& a, int p, const Network& net, const ModelSpec& m, Exchange exchange) {
  struct Class {
    int peers = 0;
    double received = 0.0, sent = 0.0;
  } on_node, off_node;
  for (int q = 0; q < a.parts; ++q) {
    if (q == p || (a.received_from[p][q] == 0 && a.received_from[q][p] == 0)) continue;
    Class& c = (q / net.devices_per_node == p / net.devices_per_node) ? on_node : off_node;
    ++c.peers;
    c.received += bytes_received(a, m, p, q, exchange);
    c.sent += bytes_received(a, m, q, p, exchange);
  }
  auto time = [](const Class& c, const Link& link) {
    return c.peers == 0 ? 0.0 : c.peers * link.latency_s + std::max(c.received, c.sent) / link.bytes_per_s;
  };
  return std::max(time(on_node, net.intra), time(off_node, net.inter));
}

double allreduce_seconds(int parts, const Network& net) {
  const int on_node = std::min(parts, net.devices_per_node),
            nodes = (parts + net.devices_per_node - 1) / net.devices_per_node;
  return std::ceil(std::log2(on_node)) * net.intra.latency_s + std::ceil(std::log2(nodes)) * net.inter.latency_s;
}

StepTime step_time(const PartitionAnalysis& a, const ModelSpec& m, const Device& device, const Network& net,
                   double overhead_s, Exchange exchange) {
  StepTime t;
  const double bytes_per_ado = device_bytes_per_ado(m);
  double plain = 0.0, overlapped = 0.0;
  for (int p = 0; p < a.parts; ++p) {
    const double x = exchange_seconds(a, p, net, m, exchange);
    // The halo is written to HBM on arrival and read once by the generator; what is sent is read once.
    double received = 0.0, sent = 0.0;
    for (int q = 0; q < a.parts; ++q)
      received += bytes_received(a, m, p, q, exchange), sent += bytes_received(a, m, q, p, exchange);
    const double exchange_bytes = 2.0 * received + sent;
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

double efficiency(const PartitionAnalysis& a, const ModelSpec& m, const Device& device, const Network& net,
                  double one_device_step_s, bool overlapped, Exchange exchange) {
  const StepTime t = step_time(a, m, device, net, step_overhead_s, exchange);
  return one_device_step_s / (a.parts * (overlapped ? t.overlapped : t.plain));
}

}  // namespace heom::scaling_study
