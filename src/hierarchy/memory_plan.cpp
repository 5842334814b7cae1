// Memory accounting for a hierarchy: computed from counts alone, so a plan never allocates.
#include "heom/hierarchy/memory_plan.hpp"

#include <cstdio>
#include <limits>

#include "heom/core/error.hpp"
#include "heom/hierarchy/hierarchy.hpp"

namespace heom {
namespace {

constexpr std::uint64_t saturated = std::numeric_limits<std::uint64_t>::max();

std::uint64_t mul(std::uint64_t a, std::uint64_t b) { return (a != 0 && b > saturated / a) ? saturated : a * b; }
std::uint64_t add(std::uint64_t a, std::uint64_t b) { return a > saturated - b ? saturated : a + b; }

}  // namespace

MemoryPlan MemoryPlan::make(int dimension, int num_exponents, int depth, int state_vectors, int ado_columns) {
  return make(dimension, std::vector<int>(num_exponents > 0 ? num_exponents : 0, 0), depth, state_vectors, ado_columns);
}

MemoryPlan MemoryPlan::make(int dimension, const std::vector<int>& max_excitations, int depth, int state_vectors,
                            int ado_columns, const ImportanceTruncation& truncation) {
  MemoryPlan p;
  p.dimension = dimension;
  p.ado_columns = ado_columns > 0 ? ado_columns : dimension;
  p.num_exponents = static_cast<int>(max_excitations.size());
  p.max_excitations = max_excitations;
  p.depth = depth;
  p.state_vectors = state_vectors;
  p.truncation = truncation;
  p.num_ados = Hierarchy::count(max_excitations, depth, truncation);
  return p.share(p.num_ados, p.num_ados, 0, 0);
}

MemoryPlan MemoryPlan::share(std::uint64_t vector_ados, std::uint64_t owned_ados, int input_vectors,
                             std::uint64_t sent_ados) const {
  MemoryPlan p = *this;
  p.local_ados = vector_ados;
  const std::uint64_t block = static_cast<std::uint64_t>(dimension) * ado_columns;
  p.bytes_per_vector = mul(mul(owned_ados, block), 16);
  p.bytes_halo = mul(mul(vector_ados - owned_ados, block), 16);
  p.bytes_exchange = mul(mul(sent_ados, block), 16);
  // Per ADO: label, next and prev tables (K ints each) and the complex damping; held for the ADOs a
  // device computes on the device and, in heom::Hierarchy, on the host (a share's own alone); a
  // share's halo plan holds its owned ADOs' tables once more. A truncated hierarchy also keeps each
  // kept ADO's rank in the whole triangle (8 bytes, host, on every device).
  const std::uint64_t tables = mul(3 * 4, static_cast<std::uint64_t>(num_exponents)), per_ado = add(tables, 16);
  const std::uint64_t per_host_ado = add(per_ado, owned_ados < num_ados ? tables : 0);
  p.bytes_tables =
      add(add(mul(owned_ados, per_ado), mul(owned_ados, per_host_ado)), truncation.active() ? mul(num_ados, 8) : 0);
  p.bytes_total = add(add(add(mul(p.bytes_per_vector, static_cast<std::uint64_t>(state_vectors)),
                              mul(p.bytes_halo, static_cast<std::uint64_t>(input_vectors))),
                          p.bytes_exchange),
                      p.bytes_tables);
  return p;
}

int MemoryPlan::largest_fitting_depth(std::uint64_t available_bytes) const {
  for (int l = depth; l >= 0; --l)
    if (make(dimension, max_excitations, l, state_vectors, ado_columns, truncation).bytes_total <= available_bytes)
      return l;
  return -1;
}

void MemoryPlan::require_fits(std::uint64_t available_bytes, const std::string& device) const {
  if (bytes_total <= available_bytes) return;
  const int fits = largest_fitting_depth(available_bytes);
  std::string advice = fits >= 0 ? "the largest depth that fits is " + std::to_string(fits) : "not even depth 0 fits";
  if (local_ados != num_ados) advice = "split it between more devices";
  throw OutOfMemoryError("hierarchy depth " + std::to_string(depth) + " (" +
                         (local_ados != num_ados ? "a share of " + std::to_string(local_ados) + " of " : "") +
                         std::to_string(num_ados) + " ADOs of " + std::to_string(dimension) + "x" +
                         std::to_string(ado_columns) + ", " + std::to_string(state_vectors) + " state vectors) needs " +
                         format_bytes(bytes_total) + " but " + device + " has " + format_bytes(available_bytes) +
                         " available; " + advice);
}

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int u = 0;
  while (value >= 1024.0 && u < 6) {
    value /= 1024.0;
    ++u;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, u == 0 ? "%.0f %s" : "%.2f %s", value, units[u]);
  return buffer;
}

}  // namespace heom
