// The input's [spectrum] table: an absorption spectrum (dipoles), a power spectrum (an operator) or a
// fermionic level's density of states (its annihilation operator).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/input_sections.hpp"

namespace heom::io::impl {

namespace {
/// The dipole operators of an absorption spectrum: one per polarization (one for numbers, x, y, z for
/// vectors, orientation-averaged), mu_p = sum_j d_j,p (|j><0| + |0><j|).
void read_dipoles(TableReader& t, SpectrumConfig& s, int n) {
  bool vectors = false;
  const std::vector<Dipole> d = read_site_dipoles(t, n - 1, vectors);
  const int polarizations = vectors ? 3 : 1;
  s.dipoles.assign(polarizations, Matrix(n, n));
  s.dipole_weight = 1.0 / polarizations;
  for (int j = 1; j < n; ++j)
    for (int p = 0; p < polarizations; ++p) s.dipoles[p](j, 0) = s.dipoles[p](0, j) = d[j - 1][p];
}

/// An absorption spectrum: its dipoles, and a level 0 that is a ground state apart from the rest (ADOs
/// of |0><0| are then zero in equilibrium).
void read_absorption(TableReader& t, const RunConfig& c, SpectrumConfig& s) {
  s.kind = SpectrumConfig::Kind::absorption;
  if (t.has("incoherent"))
    t.fail("incoherent", "belongs to a power spectrum (the absorption correlation has no coherent part)",
           t.table().get("incoherent"));
  if (t.has("operator"))
    t.fail("operator", "belongs to a power spectrum; absorption takes dipoles", t.table().get("operator"));
  require_ground_state(t, c, "kind", "\"absorption\"");
  read_dipoles(t, s, c.model.dimension());
}

}  // namespace

void read_transform(TableReader& t, SpectrumWindow& window, int& padding, int max_padding) {
  if (auto w = t.string("window", false)) {
    if (*w == "hann")
      window = SpectrumWindow::hann;
    else if (*w == "none")
      window = SpectrumWindow::none;
    else
      t.fail("window", "unknown window \"" + *w + "\" (expected \"none\" or \"hann\")", t.table().get("window"));
  }
  if (auto p = t.integer("padding", false)) {
    if (*p < 1 || *p > max_padding)
      t.fail("padding", "must be between 1 and " + std::to_string(max_padding) + ", got " + std::to_string(*p),
             t.table().get("padding"));
    padding = static_cast<int>(*p);
  }
}

void require_frequencies_in_range(TableReader& t, const std::vector<double>& range, std::int64_t points, double dt,
                                  const UnitScale& scale, const std::string& axis) {
  // The FFT's frequencies: m spacing for m = -M/2 .. M/2 - 1, M = padding x samples.
  const double m = static_cast<double>(points);
  const double spacing = 2.0 * 3.14159265358979323846 / (m * dt) / scale.energy;
  const double first = std::max(std::ceil(range[0] / spacing), -std::floor(m / 2));
  const double last = std::min(std::floor(range[1] / spacing), std::ceil(m / 2) - 1);
  if (first > last)
    t.fail("frequency_range",
           "holds none of the " + (axis.empty() ? std::string("spectrum's") : axis + " axis'") + " frequencies (" +
               format(-std::floor(m / 2) * spacing) + " to " + format((std::ceil(m / 2) - 1) * spacing) + " every " +
               format(spacing) + ")",
           t.table().get("frequency_range"));
}

std::optional<std::vector<double>> read_frequency_range(TableReader& t) {
  auto range = t.numbers("frequency_range", false);
  if (range && (range->size() != 2 || !((*range)[0] < (*range)[1])))
    t.fail("frequency_range", "expected [low, high] with low < high", t.table().get("frequency_range"));
  return range;
}

std::vector<Dipole> read_site_dipoles(TableReader& t, int sites, bool& vectors) {
  const toml::node* node = t.node("dipoles", true);
  const toml::array* list = node->as_array();
  if (!list || static_cast<int>(list->size()) != sites)
    t.fail("dipoles",
           "expected one transition dipole per excited level (" + std::to_string(sites) +
               "): numbers, or [x, y, z] vectors",
           node);
  vectors = list->get(0)->is_array();
  std::vector<Dipole> dipoles(sites, Dipole{0.0, 0.0, 0.0});
  double strength = 0.0;
  for (int j = 0; j < sites; ++j) {
    const toml::node& entry = *list->get(j);
    const std::string what = "entry " + std::to_string(j) + " (level " + std::to_string(j + 1) + ")";
    if (vectors) {
      const toml::array* v = entry.as_array();
      if (!v || v->size() != 3) t.fail("dipoles", what + " is not an [x, y, z] vector like the first", &entry);
      for (std::size_t p = 0; p < 3; ++p) dipoles[j][p] = t.number_value("dipoles", *v->get(p), what);
    } else {
      if (entry.is_array()) t.fail("dipoles", what + " is a vector but the first is a number", &entry);
      dipoles[j][0] = t.number_value("dipoles", entry, what);
    }
    for (double x : dipoles[j]) strength += x * x;
  }
  if (strength == 0.0) t.fail("dipoles", "are all zero: nothing absorbs", node);
  return dipoles;
}

void require_ground_state(TableReader& t, const RunConfig& c, const std::string& key, const std::string& what) {
  const int n = c.model.dimension();
  const toml::node* at = t.table().get(key);
  if (n < 2) t.fail(key, what + " needs a ground state (level 0) and at least one excited level", at);
  const Matrix& h = c.input_hamiltonian;
  for (int j = 1; j < n; ++j)
    if (h(0, j) != 0.0)
      t.fail(key,
             what + " needs level 0 to be a ground state, but system.hamiltonian[0][" + std::to_string(j) +
                 "] couples it to level " + std::to_string(j),
             at);
  for (std::size_t b = 0; b < c.model.baths().size(); ++b) {
    const Matrix& q = c.model.baths()[b].coupling();
    for (int j = 0; j < n; ++j)
      if (q(0, j) != 0.0 || q(j, 0) != 0.0)
        t.fail(key,
               what + " needs a ground state (level 0) that no bath couples to, but bath[" + std::to_string(b + 1) +
                   "].coupling has a non-zero element in row or column 0",
               at);
  }
  // (The ground-column shape holds column 0 alone: a term may decay into level 0, L |0> = 0, but not
  // take level 0 elsewhere.)
  for (std::size_t l = 0; l < c.model.lindblad().size(); ++l) {
    const Matrix& op = c.model.lindblad()[l].op;
    for (int j = 0; j < n; ++j)
      if (c.model.lindblad()[l].rate != 0.0 && op(j, 0) != 0.0)
        t.fail(key,
               what + " needs a ground state (level 0) that no Lindblad term takes elsewhere, but lindblad[" +
                   std::to_string(l + 1) + "].operator has a non-zero element in column 0",
               at);
  }
}

namespace {

/// A power spectrum or density of states: its operator (a density of states' an annihilation-type d).
void read_steady_state_kind(TableReader& t, const RunConfig& c, const std::string& kind, SpectrumConfig& s) {
  const int n = c.model.dimension();
  const bool power = kind == "power";
  s.kind = power ? SpectrumConfig::Kind::power : SpectrumConfig::Kind::density_of_states;
  if (t.has("dipoles"))
    t.fail("dipoles", "belong to an absorption spectrum; a " + kind + " spectrum takes operator",
           t.table().get("dipoles"));
  s.op = *t.complex_matrix("operator", "operator_imag");
  if (s.op.rows() != n)
    t.fail("operator",
           "is " + s.op.shape_string() + " but system.hamiltonian is " + std::to_string(n) + "x" + std::to_string(n),
           t.table().get("operator"));
  if (s.op.max_abs() == 0.0) t.fail("operator", "is zero: its spectrum is zero", t.table().get("operator"));
  if (power) {
    s.incoherent = t.boolean("incoherent", false).value_or(false);
    return;
  }
  if (t.has("incoherent"))
    t.fail("incoherent", "belongs to a power spectrum (a density of states has no coherent part)",
           t.table().get("incoherent"));
  if (s.op.is_hermitian())
    t.fail("operator",
           "is Hermitian, but a density of states takes the level's annihilation operator d (d^dagger != d)",
           t.table().get("operator"));
  if (std::any_of(c.model.lindblad().begin(), c.model.lindblad().end(),
                  [](const Lindblad& term) { return term.rate != 0.0; }))
    t.fail("kind",
           "\"density-of-states\" propagates odd operators, and [[lindblad]] terms are not supported there "
           "(whether a jump is even or odd is not known)",
           t.table().get("kind"));
}

/// A density of states solved in frequency: the frequencies and the solves' tolerance.
void read_frequency_grid(TableReader& t, SpectrumConfig& s) {
  for (const char* key : {"window", "padding"})
    if (t.has(key))
      t.fail(key, "belongs to method = \"time\" (the FFT of C(t)); in frequency A(w) is solved at each w",
             t.table().get(key));
  if (!t.has("frequency_range"))
    t.fail("frequency_range", "is required with method = \"frequency\": the frequencies solved span it",
           t.table().get("method"));
  const std::int64_t points = t.integer("frequency_points", false).value_or(401);
  if (points < 2 || points > 1000000)
    t.fail("frequency_points", "must be between 2 and 1000000, got " + std::to_string(points),
           t.table().get("frequency_points"));
  s.frequency_points = static_cast<int>(points);
  if (t.has("tolerance")) s.solve_tolerance = t.positive("tolerance");
  auto range = t.numbers("frequency_range", true);
  if (range->size() != 2 || !((*range)[0] < (*range)[1]) || !std::isfinite((*range)[0]) || !std::isfinite((*range)[1]))
    t.fail("frequency_range", "expected [low, high] with low < high", t.table().get("frequency_range"));
  s.frequency_range = *range;
}

/// A spectrum from C(t) in time: the FFT's window, padding and the frequencies kept.
void read_time_grid(TableReader& t, const RunConfig& c, SpectrumConfig& s) {
  if (t.has("frequency_points"))
    t.fail("frequency_points", "belongs to method = \"frequency\"; in time the FFT's grid is set by t_end and padding",
           t.table().get("frequency_points"));
  if (t.has("tolerance"))
    t.fail("tolerance", "belongs to method = \"frequency\" (its solves); in time [dynamics] rtol and atol apply",
           t.table().get("tolerance"));
  read_transform(t, s.window, s.padding, 64);
  if (auto range = read_frequency_range(t)) {
    const double samples = std::round(c.t_end / c.output_every) + 1.0;
    require_frequencies_in_range(t, *range, static_cast<std::int64_t>(samples) * s.padding, c.output_every,
                                 unit_scale(c.units), "");
    s.frequency_range = *range;
  }
}

}  // namespace

SpectrumConfig read_spectrum(TableReader& t, const RunConfig& c) {
  t.allow_only({"kind", "dipoles", "operator", "operator_imag", "incoherent", "window", "padding", "frequency_range",
                "method", "frequency_points", "tolerance"},
               "[spectrum]");
  SpectrumConfig s;
  const std::string kind = *t.string("kind");
  if (kind == "absorption")
    read_absorption(t, c, s);
  else if (kind == "power" || kind == "density-of-states")
    read_steady_state_kind(t, c, kind, s);
  else
    t.fail("kind", "unknown spectrum \"" + kind + "\" (expected \"absorption\", \"power\" or \"density-of-states\")",
           t.table().get("kind"));
  if (auto method = t.string("method", false)) {
    if (s.kind != SpectrumConfig::Kind::density_of_states)
      t.fail("method", "belongs to a density of states (other spectra are computed in time)", t.table().get("method"));
    if (*method == "frequency")
      s.method = SpectrumConfig::Method::frequency;
    else if (*method != "time")
      t.fail("method", "unknown method \"" + *method + "\" (expected \"time\" or \"frequency\")",
             t.table().get("method"));
  }
  if (s.method == SpectrumConfig::Method::frequency)
    read_frequency_grid(t, s);
  else
    read_time_grid(t, c, s);
  return s;
}

}  // namespace heom::io::impl

namespace heom::io {
std::vector<double> SpectrumConfig::solved_frequencies() const {
  std::vector<double> omega;
  if (method != Method::frequency) return omega;
  for (int i = 0; i < frequency_points; ++i)
    omega.push_back(frequency_range[0] + (frequency_range[1] - frequency_range[0]) * i / (frequency_points - 1));
  return omega;
}
}  // namespace heom::io
