// The heom program's plan: what a run will hold and where, printed before it starts (or alone, by `heom plan`).
#include "plans.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "app.hpp"
#include "heom/config.hpp"
#include "heom/core/backend_traits.hpp"
#include "heom/core/error.hpp"
#include "heom/hierarchy/hierarchy.hpp"
#include "heom/distributed/halo.hpp"
#include "heom/hierarchy/partition.hpp"
#include "heom/integrator/options.hpp"
#include "heom/model/bath.hpp"
#include "heom/model/correlation.hpp"
#include "heom/model/exponent.hpp"
#include "heom/solver/response_options.hpp"
#include "heom/solver/steady_state_options.hpp"
#include "io/units.hpp"

namespace heom::app {

AdoShape ado_shape(const io::RunConfig& c) {
  return c.spectrum && c.spectrum->kind == io::SpectrumConfig::Kind::absorption ? AdoShape::ground_column
                                                                                : AdoShape::square;
}

const Model& hierarchy_model(const io::RunConfig& c) { return c.response ? c.response->manifolds.model : c.model; }

MemoryPlan memory_plan(const io::RunConfig& c, AdoShape shape, Observes observes) {
  const Model& model = hierarchy_model(c);
  // (A run with leads interpolates the first tier for their currents: a full output vector.)
  const bool currents = observes == Observes::rho_and_lead_currents && model.has_fermionic_bath();
  // (A response holds three states of the whole model: the coherence in t1, its branch in the waiting
  // time and that one's in t3; response_side_bytes counts the smaller ones beside them.)
  const int states = c.response ? 3 : 1;
  return MemoryPlan::make(model.dimension(), model.max_excitations(), c.depth,
                          states * state_vectors(c.solver.integrator.method, currents),
                          shape == AdoShape::ground_column ? 1 : 0,
                          ImportanceTruncation{c.solver.importance_threshold, model.exponent_weights()});
}

std::uint64_t response_side_bytes(const io::RunConfig& c) {
  const ResponseWork work = response_work(c.response->manifolds, c.response->options);
  bool emits = false;  // (the bleach or stimulated emission radiates from a ground column)
  for (const Pathway p : resolved_pathways(c.response->manifolds, c.response->options))
    emits = emits || p != Pathway::excited_state_absorption;
  if (!emits) return 0;
  const Model& model = c.response->manifolds.model;
  const int vectors = state_vectors(c.solver.integrator.method);
  const int levels = work.one_exciton_levels > 0 ? work.one_exciton_levels : model.dimension();
  auto bytes = [&](int states, int columns) {
    return MemoryPlan::make(levels, model.max_excitations(), c.depth, states * vectors, columns,
                            ImportanceTruncation{c.solver.importance_threshold, model.exponent_weights()})
        .bytes_total;
  };
  return bytes(1, 1) + (work.one_exciton_levels > 0 ? bytes(2, 0) : 0);
}

void print_plan(const io::RunConfig& c, const MemoryPlan& plan, std::uint64_t available, const std::string& output) {
  const io::UnitScale scale = io::unit_scale(c.units);
  std::printf("heom %s: %s\n", HEOM_VERSION_STRING, c.input_name.c_str());
  std::printf("  system      dimension %d, units %s%s\n", c.model.dimension(), io::to_string(c.units),
              c.units == io::Units::spectroscopy ? " (solver works in rad/fs and fs)" : "");
  std::printf("  baths       %zu\n", c.model.baths().size());
  for (std::size_t b = 0; b < c.model.baths().size(); ++b) {
    const Bath& bath = c.model.baths()[b];
    std::printf(
        "    bath %-3zu  %s, %d exponents, %s coupling%s\n", b + 1, bath.description().c_str(), bath.num_exponents(),
        bath.is_fermionic() ? "fermionic" : (bath.coupling().is_diagonal() ? "diagonal" : "dense"),
        bath.has_terminator() ? (", terminator Delta = " + std::to_string(bath.terminator_delta().real())).c_str()
                              : "");
    for (const Exponent& e : bath.exponents()) {
      std::printf("                %-2s c = (%.6g, %.6g)", to_string(e.kind), e.c.real(), e.c.imag());
      if (e.kind == ExponentKind::RI) std::printf("  c2 = (%.6g, %.6g)", e.c2.real(), e.c2.imag());
      if (e.fermionic()) std::printf("  partner c = (%.6g, %.6g)", e.partner_c.real(), e.partner_c.imag());
      std::printf("  v = (%.6g, %.6g)\n", e.v.real(), e.v.imag());
    }
  }
  if (c.model.is_driven())
    std::printf("  drives      %zu terms of H(t)%s\n", c.model.drives().size(),
                c.units == io::Units::spectroscopy ? " (in rad/fs and fs)" : "");
  for (std::size_t d = 0; d < c.model.drives().size(); ++d)
    std::printf("    drive %-3zu %s\n", d + 1, c.model.drives()[d].shape.description().c_str());
  if (!c.model.lindblad().empty()) std::printf("  lindblad    %zu terms\n", c.model.lindblad().size());
  for (std::size_t l = 0; l < c.model.lindblad().size(); ++l) {
    const Lindblad& term = c.model.lindblad()[l];
    bool real_diagonal = term.op.is_diagonal();
    for (int i = 0; i < term.op.rows(); ++i) real_diagonal = real_diagonal && term.op(i, i).imag() == 0.0;
    std::printf("    term %-3zu  rate %.6g, %s\n", l + 1, term.rate,
                real_diagonal ? "real diagonal operator (element-wise)" : "a jump");
  }
  std::printf("  hierarchy   K = %d exponents, depth %d, %llu ADOs%s\n", c.model.num_exponents(), c.depth,
              static_cast<unsigned long long>(plan.num_ados),
              plan.ado_columns < plan.dimension ? ", column 0 of each (the ground-column shape)" : "");
  if (plan.truncation.active()) {
    const std::uint64_t whole = Hierarchy::count(c.model.max_excitations(), c.depth);
    std::printf("              importance threshold %g keeps %llu of the %llu ADOs up to depth %d (%.3g%%)\n",
                c.solver.importance_threshold, static_cast<unsigned long long>(plan.num_ados),
                static_cast<unsigned long long>(whole), c.depth,
                whole > 0 ? 100.0 * static_cast<double>(plan.num_ados) / static_cast<double>(whole) : 0.0);
  }
  std::printf("  memory      %s per state vector x %d + tables %s = %s (%s available)\n",
              format_bytes(plan.bytes_per_vector).c_str(), plan.state_vectors, format_bytes(plan.bytes_tables).c_str(),
              format_bytes(plan.bytes_total).c_str(), available > 0 ? format_bytes(available).c_str() : "unknown");
  std::printf("  backend     %s\n", BackendTraits<Exec>::describe(Exec()).c_str());
  // (A density of states solved in frequency propagates nothing: the spectrum line says what it solves.)
  if (c.spectrum && c.spectrum->method == io::SpectrumConfig::Method::frequency) {
    std::printf("  output      -> %s\n", output.c_str());
    std::fflush(stdout);
    return;
  }
  if (is_adaptive(c.solver.integrator.method))
    std::printf("  integrator  %s, rtol %g, atol %g%s\n", to_string(c.solver.integrator.method),
                c.solver.integrator.rtol, c.solver.integrator.atol,
                c.solver.integrator.max_order != IntegratorOptions{}.max_order
                    ? (", max order " + std::to_string(c.solver.integrator.max_order)).c_str()
                    : "");
  else
    std::printf("  integrator  %s, step %g %s\n", to_string(c.solver.integrator.method),
                c.solver.integrator.step / scale.time, scale.time_unit);
  if (c.solver.integrator.method == Method::automatic && c.model.is_driven())
    std::printf("              exp-adams: the model is driven (chebyshev's series is for undriven ones)\n");
  else if (c.solver.integrator.method == Method::automatic)
    std::printf(
        "              exp-adams; once its steps settle (windows of %lld), chebyshev instead where the series "
        "needs under %g of exp-adams' applications per unit of time\n",
        static_cast<long long>(automatic_window), automatic_handover_ratio);
  if (c.response) {
    print_response_plan(c);
    std::printf("  output      /response and /spectrum2d -> %s\n", output.c_str());
    std::fflush(stdout);
    return;
  }
  const auto times = c.output_times();
  std::printf("  output      t = 0 .. %g %s every %g (%zu times) -> %s\n", c.t_end / scale.time, scale.time_unit,
              c.output_every / scale.time, times.size(), output.c_str());
  std::fflush(stdout);
}

std::string fitted_baths_toml(const io::RunConfig& c) {
  const io::UnitScale scale = io::unit_scale(c.units);
  std::ostringstream out;
  out.precision(17);
  auto list = [&](const char* key, const std::vector<complex>& values, double factor) {
    bool complex_values = false;
    for (const complex& z : values) complex_values = complex_values || z.imag() != 0.0;
    for (int part = 0; part < (complex_values ? 2 : 1); ++part) {
      out << key << (part == 1 ? "_imag" : "") << " = [";
      for (std::size_t i = 0; i < values.size(); ++i)
        out << (i > 0 ? ", " : "") << (part == 0 ? values[i].real() : values[i].imag()) / factor;
      out << "]\n";
    }
  };
  auto matrix = [&](const char* key, const Matrix& m, bool imag) {
    out << key << " = [";
    for (int i = 0; i < m.rows(); ++i) {
      out << (i > 0 ? ", [" : "[");
      for (int j = 0; j < m.cols(); ++j) out << (j > 0 ? ", " : "") << (imag ? m(i, j).imag() : m(i, j).real());
      out << "]";
    }
    out << "]\n";
  };
  for (std::size_t b = 0; b < c.model.baths().size(); ++b) {
    const Bath& bath = c.model.baths()[b];
    if (!bath.fit()) continue;
    if (bath.exponents().empty()) {  // J = 0: an exponents bath needs one
      out << "# bath " << b + 1 << " of " << c.input_name << ": J = 0, no exponents (leave the bath out)\n\n";
      continue;
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f", bath.fit()->seconds);
    out << "# bath " << b + 1 << " of " << c.input_name << ": " << bath.description() << "; fitted in " << seconds
        << " s\n";
    out << "[[bath]]\nkind = \"exponents\"\n";
    matrix("coupling", bath.coupling(), false);
    bool imag = false;
    for (int i = 0; i < bath.coupling().rows(); ++i)
      for (int j = 0; j < bath.coupling().cols(); ++j) imag = imag || bath.coupling()(i, j).imag() != 0.0;
    if (imag) matrix("coupling_imag", bath.coupling(), true);
    CorrelationExpansion e;
    for (const Exponent& x : bath.exponents()) {
      if (x.kind != ExponentKind::I) {
        e.ck_real.push_back(x.c);
        e.vk_real.push_back(x.v);
      }
      if (x.kind != ExponentKind::R) {
        e.ck_imag.push_back(x.kind == ExponentKind::I ? x.c : x.c2);
        e.vk_imag.push_back(x.v);
      }
    }
    // C(t) is an energy squared, the rates energies (as the input reads an exponents bath).
    const double c_factor = scale.energy * scale.energy;
    list("ck_real", e.ck_real, c_factor);
    list("vk_real", e.vk_real, scale.energy);
    list("ck_imag", e.ck_imag, c_factor);
    list("vk_imag", e.vk_imag, scale.energy);
    out << "\n";
  }
  return out.str();
}

void describe_ensemble(const io::RunConfig& config, io::EnsembleRecord& out) {
  const io::EnsembleConfig& e = *config.ensemble;
  out.members = static_cast<long long>(e.members.size());
  out.realizations = e.realizations;
  out.sweep_points = e.sweep_points;
  out.seed = e.seed;
  out.energy_unit = io::unit_scale(config.units).energy_unit;
  out.site_energy_sigma = e.site_energy_sigma;
  out.parameter_names = e.parameter_names;
}

io::RunRecord describe_run(const io::RunConfig& config) {
  const io::UnitScale scale = io::unit_scale(config.units);
  io::RunRecord record;
  record.times = config.output_times();
  record.input_text = config.input_text;
  record.units = io::to_string(config.units);
  record.time_unit = scale.time_unit;
  record.dimension = hierarchy_model(config).dimension();
  record.num_exponents = config.model.num_exponents();
  record.depth = config.depth;
  record.num_ados =
      static_cast<long long>(Hierarchy::count(config.model.max_excitations(), config.depth, config.truncation()));
  record.backend = Exec::name();
  record.method = to_string(config.solver.integrator.method);
  record.rtol = is_adaptive(config.solver.integrator.method) ? config.solver.integrator.rtol : 0.0;
  record.atol = is_adaptive(config.solver.integrator.method) ? config.solver.integrator.atol : 0.0;
  record.step = config.solver.integrator.step / scale.time;
  record.partition = {0, record.num_ados};
  return record;
}

void print_steady_plan(const SteadyStateOptions& o, const io::RunConfig& c, const MemoryPlan& plan) {
  std::printf("  steady      GMRES(%d), %s preconditioner, tolerance %g, at most %d iterations%s\n", o.restart,
              to_string(o.preconditioner), o.tolerance, o.max_iterations,
              o.fallback_time > 0.0
                  ? (", then propagating " + std::to_string(o.fallback_time / io::unit_scale(c.units).time) + " " +
                     io::unit_scale(c.units).time_unit)
                        .c_str()
                  : "");
  std::printf("              Krylov vectors %s x %d more\n", format_bytes(plan.bytes_per_vector).c_str(),
              o.work_vectors());
  std::fflush(stdout);
}

void print_ensemble_plan(const io::RunConfig& c, const std::string& workers) {
  const io::EnsembleConfig& e = *c.ensemble;
  const char* unit = io::unit_scale(c.units).energy_unit;
  std::printf("  ensemble    %zu members: %lld realizations x %lld sweep points, on %s%s\n", e.members.size(),
              static_cast<long long>(e.realizations), static_cast<long long>(e.sweep_points), workers.c_str(),
              e.batch > 1 ? (", in batches of up to " + std::to_string(e.batch)).c_str() : "");
  if (!e.site_energy_sigma.empty()) {
    std::printf("    disorder  Gaussian on H's diagonal, seed %llu, sigma", static_cast<unsigned long long>(e.seed));
    for (double s : e.site_energy_sigma) std::printf(" %g", s);
    std::printf(" %s\n", unit);
  }
  for (std::size_t k = 0; k < e.parameter_names.size(); ++k) {
    std::vector<double> values;  // (over the sweep points: a member's iteration would make its model)
    for (const auto& point : e.members.points())
      if (std::find(values.begin(), values.end(), point.parameters[k]) == values.end())
        values.push_back(point.parameters[k]);
    std::printf("    sweep     %s over %zu %s\n", e.parameter_names[k].c_str(), values.size(),
                e.parameter_names[k] == "initial_state.rho" ? "initial states" : "values");
  }
  if (c.response)
    std::printf("    output    the members' mean response and its 2D spectra; each member's H\n");
  else
    std::printf("    output    the mean over members%s\n",
                e.store_members ? ", and every member's rho(t)" : " (store_members = false: not each member's rho(t))");
  std::fflush(stdout);
}

void print_device_plan(const io::RunConfig& c, const MemoryPlan& plan, int devices, std::uint64_t device_bytes) {
  // (Each share is planned from counts and its own ADOs: no whole table, as the ranks of a run.)
  const Hierarchy hierarchy = Hierarchy::without_tables(c.model.max_excitations(), c.depth, c.truncation());
  auto largest_share = [&](int parts, std::vector<MemoryPlan>* shares, PartitionStatistics* stats) {
    const Partition partition = Partition::balanced(hierarchy, parts);
    const PartitionStatistics s = partition_statistics(hierarchy, partition, c.model.dimension());
    std::uint64_t largest = 0;
    for (int p = 0; p < parts; ++p) {
      const MemoryPlan share = plan.share(static_cast<std::uint64_t>(s.owned[p]) + s.halo[p], s.owned[p],
                                          generator_input_vectors(c.solver.integrator.method), s.sent[p]);
      largest = std::max(largest, share.bytes_total);
      if (shares) shares->push_back(share);
    }
    if (stats) *stats = s;
    return largest;
  };
  std::vector<MemoryPlan> shares;
  PartitionStatistics stats;
  const std::uint64_t largest = largest_share(devices, &shares, &stats);
  std::printf("  devices     %d, halo %.2f of the owned ADOs in all (largest share %.2f)\n", devices,
              stats.total_halo_ratio, stats.largest_halo_ratio);
  std::printf("    device    owned ADOs   halo ADOs  peers  exchange     memory\n");
  for (int p = 0; p < devices; ++p)
    std::printf("    %-6d %13d %11d %6d  %-10s %s\n", p, stats.owned[p], stats.halo[p], stats.peers[p],
                format_bytes(stats.bytes_received[p]).c_str(), format_bytes(shares[p].bytes_total).c_str());
  std::fflush(stdout);
  if (device_bytes == 0 || largest <= device_bytes) return;
  // The smallest count that fits: double until one does, then bisect (shares shrink as devices grow).
  const int most = std::max(devices, (hierarchy.size() + Partition::ados_per_unit - 1) / Partition::ados_per_unit);
  int low = devices, high = devices;
  while (high < most && largest_share(high, nullptr, nullptr) > device_bytes) {
    low = high;
    high = std::min(most, 2 * high);
  }
  const bool fits = largest_share(high, nullptr, nullptr) <= device_bytes;
  while (fits && high - low > 1) {
    const int middle = (low + high) / 2;
    (largest_share(middle, nullptr, nullptr) <= device_bytes ? high : low) = middle;
  }
  throw OutOfMemoryError("a share of the hierarchy on " + std::to_string(devices) + " devices needs up to " +
                         format_bytes(largest) + " but a device has " + format_bytes(device_bytes) + "; " +
                         (fits ? "the smallest number of devices that fits is " + std::to_string(high)
                               : std::string("no number of devices fits")));
}

std::uint64_t output_bytes(const io::RunConfig& c, bool steady) {
  const std::uint64_t block = static_cast<std::uint64_t>(c.model.dimension()) * c.model.dimension() * 16;
  const std::uint64_t ados = Hierarchy::count(c.model.max_excitations(), c.depth, c.truncation());
  const std::uint64_t times = c.output_times().size();
  std::uint64_t bytes = 1 << 20;
  if (c.write_ados) bytes += ados * block;
  if (steady) return bytes + block;
  if (c.spectrum) return bytes + times * (16 + 8) + 64 * times * 16;  // C(t), and the padded spectrum
  if (c.response) {
    // R, and each waiting time's padded 2D spectra (absorptive and each signal's).
    const io::ResponseConfig& r = *c.response;
    const std::uint64_t grid = static_cast<std::uint64_t>(r.options.t1_points) * r.options.t3_points,
                        waits = r.options.waiting_times.size();
    return bytes + 2 * 3 * waits * grid * 16 + waits * grid * r.padding * r.padding * (8 + 2 * 16);
  }
  bytes += times * block;
  if (c.ensemble && c.ensemble->store_members) bytes += c.ensemble->members.size() * times * block;
  return bytes;
}

}  // namespace heom::app
