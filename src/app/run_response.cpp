// `heom run` with a [response]: the third-order response of the exciton model's manifolds, and its 2D
// spectra at each waiting time.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "heom/core/backend_traits.hpp"
#include "heom/solver/response.hpp"
#include "io/hdf5_output.hpp"
#include "io/spectrum.hpp"
#include "io/units.hpp"
#include "plans.hpp"
#include "progress.hpp"
#include "run_steady.hpp"

namespace heom::app {

namespace {

std::string joined_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string polarization_text(const io::RunConfig& c) {
  return c.response->polarization_name +
         (c.response->options.polarization.isotropic ? ", isotropic average" : ", in the lab frame");
}

/// Each waiting time's 2D spectra of `r` into `record`, in the input's units, cropped to the range.
void transform(const io::RunConfig& config, const ThirdOrderResponse& r, io::ResponseRecord& record) {
  const io::ResponseConfig& rc = *config.response;
  const io::UnitScale scale = io::unit_scale(config.units);
  // (The input asks for at least two points on each axis.)
  const int n1 = static_cast<int>(r.t1.size()), n3 = static_cast<int>(r.t3.size());
  const std::size_t signals = r.signals.size();
  std::vector<io::Spectrum2D> spectra;  // [T][signal]
  for (std::size_t b = 0; b < r.waiting_times.size(); ++b)
    for (std::size_t s = 0; s < signals; ++s) {
      std::vector<complex> samples(static_cast<std::size_t>(n1) * n3, 0.0);
      for (std::size_t p = 0; p < r.pathways.size(); ++p)
        for (int a = 0; a < n1; ++a)
          for (int c = 0; c < n3; ++c)
            samples[static_cast<std::size_t>(a) * n3 + c] +=
                r(static_cast<int>(s), static_cast<int>(p), static_cast<int>(b), a, c);
      const int sign1 = r.signals[s] == ResponseSignal::rephasing ? -1 : 1;
      spectra.push_back(io::two_dimensional_spectrum(samples, n1, n3, rc.options.t1_step, rc.options.t3_step, sign1,
                                                     rc.window, rc.padding));
    }
  const io::Spectrum2D& grid = spectra.front();
  std::vector<std::size_t> keep1, keep3;
  auto kept = [&](double omega) {
    return rc.frequency_range.empty() || (omega >= rc.frequency_range[0] && omega <= rc.frequency_range[1]);
  };
  for (std::size_t i = 0; i < grid.omega1.size(); ++i)
    if (kept(grid.omega1[i] / scale.energy)) {
      keep1.push_back(i);
      record.omega1.push_back(grid.omega1[i] / scale.energy);
    }
  for (std::size_t i = 0; i < grid.omega3.size(); ++i)
    if (kept(grid.omega3[i] / scale.energy)) {
      keep3.push_back(i);
      record.omega3.push_back(grid.omega3[i] / scale.energy);
    }
  // Per unit of the output's w1 and w3, as the linear spectra are per unit of w.
  const double per_unit = scale.energy * scale.energy;
  const std::size_t m3 = grid.omega3.size();
  record.signal_spectra.assign(signals * r.waiting_times.size() * keep1.size() * keep3.size(), 0.0);
  for (std::size_t b = 0; b < r.waiting_times.size(); ++b)
    for (std::size_t k1 = 0; k1 < keep1.size(); ++k1)
      for (std::size_t k3 = 0; k3 < keep3.size(); ++k3) {
        complex sum = 0.0;
        for (std::size_t s = 0; s < signals; ++s) {
          const complex value = per_unit * spectra[b * signals + s].values[keep1[k1] * m3 + keep3[k3]];
          sum += value;
          record.signal_spectra[((s * r.waiting_times.size() + b) * keep1.size() + k1) * keep3.size() + k3] = value;
        }
        record.absorptive.push_back(sum.real());  // [T][w1][w3]
      }
  record.frequency_unit = scale.energy_unit;
  record.window = io::to_string(rc.window);
  record.padding = rc.padding;
}

}  // namespace

void print_response_plan(const io::RunConfig& c) {
  const io::ResponseConfig& r = *c.response;
  const io::UnitScale scale = io::unit_scale(c.units);
  const ExcitonManifolds& m = r.manifolds;
  const ResponseWork work = response_work(m, r.options);
  std::vector<std::string> pathways, signals;
  for (const Pathway p : resolved_pathways(m, r.options)) pathways.push_back(to_string(p));
  for (const ResponseSignal s : resolved_signals(r.options)) signals.push_back(to_string(s));
  std::printf("  response    manifolds: g, %d one-exciton and %zu two-exciton states (%d levels)", m.sites,
              m.pairs.size(), m.dimension());
  if (m.two_exciton && r.biexciton_shift != 0.0)
    std::printf(", biexciton shift %g %s", r.biexciton_shift, scale.energy_unit);
  std::printf("\n              %s; %s; %s\n", joined_names(pathways).c_str(), joined_names(signals).c_str(),
              polarization_text(c).c_str());
  const ResponseOptions& o = r.options;
  std::printf("              t1 = 0 .. %g %s every %g (%d), t3 = 0 .. %g every %g (%d), waiting times",
              (o.t1_points - 1) * o.t1_step / scale.time, scale.time_unit, o.t1_step / scale.time, o.t1_points,
              (o.t3_points - 1) * o.t3_step / scale.time, o.t3_step / scale.time, o.t3_points);
  for (double w : o.waiting_times) std::printf(" %g", w / scale.time);
  std::printf(" %s\n", scale.time_unit);
  if (work.one_exciton_levels > 0)
    std::printf("              the bleach and stimulated emission on the %d levels without the two-exciton states\n",
                work.one_exciton_levels);
  if (const std::uint64_t side = response_side_bytes(c); side > 0)
    std::printf("              the bleach and emission's smaller states beside the whole model's: %s more memory\n",
                format_bytes(side).c_str());
  std::printf(
      "              propagations: %lld through t1, %lld through the waiting times, %lld through t3: %.4g %s in "
      "all\n",
      static_cast<long long>(work.t1_legs), static_cast<long long>(work.waiting_legs),
      static_cast<long long>(work.t3_legs), work.propagated_time / scale.time, scale.time_unit);
}

int run_response(const io::RunConfig& config, const std::string& output_path, const MpiJob& job,
                 const Devices& devices) {
  require_one_device(job, devices, "a [response]");
  const io::ResponseConfig& rc = *config.response;
  const io::UnitScale scale = io::unit_scale(config.units);
  const MemoryPlan plan = memory_plan(config, AdoShape::square, Observes::rho);
  print_plan(config, plan, BackendTraits<Exec>::available_memory(Exec()), output_path);
  const auto start = std::chrono::steady_clock::now();
  const Propagator<Exec> propagator(Exec(), rc.manifolds.model, config.depth, config.solver);
  const ResponseWork work = response_work(rc.manifolds, rc.options);
  Progress progress(0.0, static_cast<double>(work.t3_legs), "", stderr, "propagations");
  const ThirdOrderResponse r =
      third_order_response(propagator, rc.manifolds, rc.options,
                           [&](std::int64_t done, std::int64_t) { progress.update(static_cast<double>(done)); });
  progress.finish();

  io::RunRecord record = describe_run(config);
  record.times.clear();
  record.statistics = r.statistics;
  record.generator_kernel = to_string(propagator.generator().kernel(InputForm::general));
  io::ResponseRecord out;
  for (double t : r.t1) out.t1.push_back(t / scale.time);
  for (double t : r.waiting_times) out.waiting_times.push_back(t / scale.time);
  for (double t : r.t3) out.t3.push_back(t / scale.time);
  for (const ResponseSignal s : r.signals) out.signals.push_back(to_string(s));
  for (const Pathway p : r.pathways) out.pathways.push_back(to_string(p));
  out.values = r.values;
  out.polarization = polarization_text(config);
  out.definition =
      "R(t3, T, t1) per signal and pathway without the factor i^3: tr[mu- G(t3) V3 G(T) V2 G(t1) V1 |g><g|] with "
      "each V a dipole from the left or right, every ADO; excited-state absorption enters with its minus sign";
  out.propagations = r.propagations;
  transform(config, r, out);
  record.response = std::move(out);
  record.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.threads = Exec().concurrency();
  io::write_run_record(output_path, record);
  std::printf("done: third-order response, %lld propagations, %lld steps, %s; wrote %s\n",
              static_cast<long long>(r.propagations), static_cast<long long>(r.statistics.steps),
              format_duration(record.wall_time_s).c_str(), output_path.c_str());
  return 0;
}

}  // namespace heom::app
