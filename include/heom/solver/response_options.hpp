// The optical response's options and results (heom::third_order_response, response.hpp): host types
// alone, which the program's input reader fills.
#ifndef HEOM_SOLVER_RESPONSE_OPTIONS_HPP
#define HEOM_SOLVER_RESPONSE_OPTIONS_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heom/core/error.hpp"
#include "heom/core/matrix.hpp"
#include "heom/integrator/options.hpp"
#include "heom/model/aggregate.hpp"

namespace heom {

/// The Liouville pathways of a third-order signal.
enum class Pathway {
  ground_state_bleach,       ///< t2 in the ground state
  stimulated_emission,       ///< t2 in the one-exciton manifold, emission to g
  excited_state_absorption,  ///< t2 in the one-exciton manifold, absorption to the two-exciton one
};
/// The phase-matched signals: rephasing k_I = -k1 + k2 + k3 (a |g><e| coherence in t1) and
/// non-rephasing k_II = k1 - k2 + k3 (|e><g| in t1).
enum class ResponseSignal { rephasing, non_rephasing };

const char* to_string(Pathway pathway);
const char* to_string(ResponseSignal signal);
/// "ground-state-bleach", "stimulated-emission", "excited-state-absorption"; nullopt for another name.
std::optional<Pathway> pathway_from_string(const std::string& name);
std::optional<ResponseSignal> signal_from_string(const std::string& name);

/// The four fields' polarizations (three pulses, then the detected field), and whether the response is
/// averaged over the aggregate's orientations (isotropic: by the three rotational invariants of a
/// fourth-rank tensor, once per pathway over the dipole components; not by sampling) or taken for the
/// aggregate as it lies in the lab frame.
struct Polarization {
  std::array<Dipole, 4> fields{{{1, 0, 0}, {1, 0, 0}, {1, 0, 0}, {1, 0, 0}}};
  bool isotropic = true;

  /// "xxxx", "xxyy", "xyxy", "xyyx" (field i's axis is the i-th letter), or "magic-angle" (the first
  /// two along x, the last two at 54.7356 degrees to them: the isotropic pump-probe, free of
  /// orientational relaxation). nullopt for another name.
  static std::optional<Polarization> named(const std::string& name, bool isotropic = true);
  /// The weight of the dipole components (i, j, k, l) at the four interactions:
  /// isotropic: (1/30) [c1 d_ij d_kl + c2 d_ik d_jl + c3 d_il d_jk] with c1 = 4(e1.e2)(e3.e4) -
  /// (e1.e3)(e2.e4) - (e1.e4)(e2.e3) and its permutations; else e1_i e2_j e3_k e4_l.
  double weight(int i, int j, int k, int l) const;
  /// The first problem, if any ("polarization.fields[2]: is not a unit vector").
  std::optional<OptionProblem> validate() const;
};

/// The response's grids and what is computed.
struct ResponseOptions {
  /// Waiting times T (the model's time unit), ascending, >= 0.
  std::vector<double> waiting_times{0.0};
  /// The coherence times t1 = 0, t1_step, ... (t1_points of them) and detection times t3 likewise.
  double t1_step = 0.0;
  int t1_points = 0;
  double t3_step = 0.0;
  int t3_points = 0;
  /// Which pathways (empty: all the manifolds allow: excited-state absorption needs the two-exciton
  /// manifold) and signals (empty: both), each once.
  std::vector<Pathway> pathways;
  std::vector<ResponseSignal> signals;
  Polarization polarization;

  std::optional<OptionProblem> validate() const;
};

/// R(t3, T, t1) of each signal and pathway, without the overall factor i^3: each pathway's
/// contribution to its signal with its sign (excited-state absorption enters negative), so that a
/// signal is the sum of its pathways. With the dipoles real, the absorptive 2D spectrum of
/// S(w3, T, w1) = int int dt1 dt3 R exp(i w3 t3 -+ i w1 t1) (- for rephasing: its w1 flipped) is
/// Re[S_rephasing + S_non_rephasing], positive for the bleach and stimulated emission.
struct ThirdOrderResponse {
  std::vector<double> t1, waiting_times, t3;
  std::vector<ResponseSignal> signals;
  std::vector<Pathway> pathways;
  /// [signal][pathway][T][t1][t3], row-major, in the orders of the vectors above.
  std::vector<complex> values;
  /// Propagations (legs between two interactions, or to the last t3) and what they took.
  std::int64_t propagations = 0;
  IntegratorStatistics statistics;

  complex operator()(int signal, int pathway, int waiting, int i1, int i3) const {
    return values[index(signal, pathway, waiting, i1, i3)];
  }
  std::size_t index(int signal, int pathway, int waiting, int i1, int i3) const {
    return (((static_cast<std::size_t>(signal) * pathways.size() + pathway) * waiting_times.size() + waiting) *
                t1.size() +
            i1) *
               t3.size() +
           i3;
  }
};

/// A response as the program's [response] table and the Python module (keyword arguments) name it:
/// each front end fills these and make_response_options / response_manifolds turn them into the
/// library's types, so that both accept and refuse the same values with the same words.
struct ResponseSettings {
  std::vector<double> waiting_times;  ///< in the model's time unit
  double t1_step = 0.0;
  int t1_points = 0;
  double t3_step = 0.0;
  int t3_points = 0;
  std::vector<std::string> pathways;  ///< to_string's names; empty: every one the manifolds allow
  std::vector<std::string> signals;   ///< likewise; empty: both
  std::string polarization = "xxxx";  ///< Polarization::named's names
  bool isotropic = true;
  double biexciton_shift = 0.0;  ///< in the model's energy unit
};

/// The ResponseOptions `settings` ask for. Throws heom::OptionError whose field is the setting's name
/// ("pathways", "polarization", "t1_points", ...) when one is refused.
ResponseOptions make_response_options(const ResponseSettings& settings);

/// Whether `options` compute excited-state absorption (asked for, or all pathways): the two-exciton
/// manifold is then built.
bool needs_two_excitons(const ResponseOptions& options);

/// The manifolds of `aggregate` (its dipoles, baths and one-exciton H) that `options` need: with the
/// two-exciton states where excited-state absorption is computed, shifted by settings.biexciton_shift.
/// Throws heom::OptionError naming "biexciton_shift" (a shift no computed pathway visits), "pathways"
/// (excited-state absorption of one site), "dipoles" (all weighted zero by an isotropic average) or
/// "polarization" (fields that weigh every dipole component zero); heom::Error where build_manifolds
/// refuses the aggregate.
ExcitonManifolds response_manifolds(ExcitonAggregate aggregate, const ResponseSettings& settings,
                                    const ResponseOptions& options);

/// The response `options` ask of `manifolds` with every value zero: its axes, signals and pathways
/// (what third_order_response fills, and what a sum of several starts from).
ThirdOrderResponse zero_response(const ExcitonManifolds& manifolds, const ResponseOptions& options);

/// The dipole components (i, j, k) of the first three interactions whose response a polarization
/// needs: every one present in the manifolds' dipoles, with a nonzero weight for some component l of
/// the last.
using ComponentTuples = std::array<std::array<std::array<bool, 3>, 3>, 3>;
ComponentTuples needed_components(const ExcitonManifolds& manifolds, const Polarization& polarization);

/// The pathways and signals a response computes: those asked for, else every one the manifolds allow
/// (excited-state absorption needs the two-exciton manifold) and both signals. Throws OptionError for
/// excited-state absorption without the two-exciton manifold.
std::vector<Pathway> resolved_pathways(const ExcitonManifolds& manifolds, const ResponseOptions& options);
std::vector<ResponseSignal> resolved_signals(const ResponseOptions& options);

/// What third_order_response propagates: its legs through t1 (one per signal and first component),
/// through the waiting times (per signal, t1, first two components and second interaction) and
/// through t3 (per waiting time, pathway and component tuple), and the time they span together.
/// Where the bleach or stimulated emission is computed beside excited-state absorption and the
/// two-exciton states are apart from the rest (without_two_excitons), the first two run on the model
/// without them (of one_exciton_levels levels), with legs through t1 and the waiting times of their
/// own; else one_exciton_levels is 0 and every pathway runs on the whole model.
struct ResponseWork {
  std::int64_t t1_legs = 0, waiting_legs = 0, t3_legs = 0;
  double propagated_time = 0.0;
  int one_exciton_levels = 0;
};
ResponseWork response_work(const ExcitonManifolds& manifolds, const ResponseOptions& options);

}  // namespace heom

#endif
