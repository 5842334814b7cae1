// TOML input: every key is read through a TableReader that knows its path and line, so that each
// error names the key, and keys nobody read are reported as unknown (typos do not pass silently).
#include "io/input.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

// toml++ 3.3 (Debian 12's) asserts an invariant of its own parser that malformed input breaks (a '#'
// where a key starts, found by unit_tests/fuzz/), though it then reports the error correctly; release
// builds compile the assertion out, and so do we everywhere, so that a debug build does not abort on
// bad input. (unit_tests/fuzz/regressions/ keeps the input.)
#define TOML_ASSERT(expr) static_assert(true)
#include <toml++/toml.h>

#include "heom/ensemble/disorder.hpp"
#include "heom/model/bath.hpp"
#include "heom/model/correlation.hpp"

extern "C" {
// LAPACK: eigenvalues of a complex Hermitian matrix (to check that rho is positive semidefinite).
void zheev_(const char* jobz, const char* uplo, const int* n, std::complex<double>* a, const int* lda, double* w,
            std::complex<double>* work, const int* lwork, double* rwork, int* info);
}

namespace heom::io {
namespace {

std::string format(double x) {
  std::ostringstream s;
  s.precision(10);
  s << x;
  return s.str();
}

/// Reads the keys of one TOML table, remembering which were used.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string path, const std::string& file)
      : m_table(table), m_path(std::move(path)), m_file(file) {}

  [[noreturn]] void fail(const std::string& key, const std::string& problem, const toml::node* at = nullptr) const {
    const toml::source_region& where = at ? at->source() : m_table.source();
    std::string location = m_file;
    if (where.begin.line > 0) location += ":" + std::to_string(where.begin.line);
    throw InputError(location + ": " + name(key) + ": " + problem);
  }

  std::string name(const std::string& key) const {
    if (key.empty()) return m_path;
    return m_path.empty() ? key : m_path + "." + key;
  }
  const std::string& file() const { return m_file; }
  bool has(const std::string& key) const { return m_table.contains(key); }

  const toml::node* node(const std::string& key, bool required) const {
    const toml::node* n = m_table.get(key);
    if (!n && required) fail(key, "required key is missing");
    return n;
  }

  std::optional<double> number(const std::string& key, bool required = true) {
    const toml::node* n = node(key, required);
    if (!n) return std::nullopt;
    return number_value(key, *n, "the value");
  }

  /// A number node's value (an integer counts as a number); `what` names the node in messages.
  double number_value(const std::string& key, const toml::node& e, const std::string& what) const {
    double x = 0.0;
    if (auto i = e.as_integer())
      x = static_cast<double>(i->get());
    else if (auto f = e.as_floating_point())
      x = f->get();
    else
      fail(key, what + " is " + type_name(e) + ", expected a number", &e);
    if (!std::isfinite(x)) fail(key, what + " is not finite", &e);
    return x;
  }

  double positive(const std::string& key) {
    const double x = *number(key);
    if (x <= 0.0) fail(key, "must be > 0, got " + format(x), m_table.get(key));
    return x;
  }

  double non_negative(const std::string& key) {
    const double x = *number(key);
    if (x < 0.0) fail(key, "must be >= 0, got " + format(x), m_table.get(key));
    return x;
  }

  std::optional<std::int64_t> integer(const std::string& key, bool required = true) {
    const toml::node* n = node(key, required);
    if (!n) return std::nullopt;
    if (auto i = n->as_integer()) return i->get();
    fail(key, std::string("expected an integer, got ") + type_name(*n), n);
  }

  std::optional<bool> boolean(const std::string& key, bool required = true) {
    const toml::node* n = node(key, required);
    if (!n) return std::nullopt;
    if (auto b = n->as_boolean()) return b->get();
    fail(key, std::string("expected true or false, got ") + type_name(*n), n);
  }

  std::optional<std::string> string(const std::string& key, bool required = true) {
    const toml::node* n = node(key, required);
    if (!n) return std::nullopt;
    if (auto s = n->as_string()) return s->get();
    fail(key, std::string("expected a string, got ") + type_name(*n), n);
  }

  /// An array of numbers.
  std::optional<std::vector<double>> numbers(const std::string& key, bool required = true) {
    const toml::node* n = node(key, required);
    if (!n) return std::nullopt;
    const toml::array* a = n->as_array();
    if (!a) fail(key, std::string("expected an array of numbers, got ") + type_name(*n), n);
    std::vector<double> out;
    for (std::size_t i = 0; i < a->size(); ++i)
      out.push_back(number_value(key, *a->get(i), "element " + std::to_string(i)));
    return out;
  }

  /// A square matrix of numbers, [[row], [row], ...].
  std::optional<Matrix> square_matrix(const std::string& key, bool required = true) {
    const toml::node* n = node(key, required);
    if (!n) return std::nullopt;
    const toml::array* rows = n->as_array();
    if (!rows || rows->empty()) fail(key, "expected a square matrix [[...], [...], ...]", n);
    const int dim = static_cast<int>(rows->size());
    Matrix m(dim, dim);
    for (int i = 0; i < dim; ++i) {
      const toml::array* row = rows->get(i)->as_array();
      if (!row) fail(key, "row " + std::to_string(i) + " is not an array of numbers", rows->get(i));
      if (static_cast<int>(row->size()) != dim)
        fail(key,
             "is not square: " + std::to_string(dim) + " rows but row " + std::to_string(i) + " has " +
                 std::to_string(row->size()) + " entries",
             row);
      for (int j = 0; j < dim; ++j)
        m(i, j) = number_value(key, *row->get(j), "element [" + std::to_string(i) + "][" + std::to_string(j) + "]");
    }
    return m;
  }

  /// `key` (real part) plus the optional `imag_key` of the same shape.
  std::optional<Matrix> complex_matrix(const std::string& key, const std::string& imag_key, bool required = true) {
    std::optional<Matrix> real = square_matrix(key, required);
    std::optional<Matrix> imag = square_matrix(imag_key, false);
    if (imag && !real) fail(imag_key, "given without " + name(key), m_table.get(imag_key));
    if (!imag) return real;
    if (imag->rows() != real->rows())
      fail(imag_key, "is " + imag->shape_string() + " but " + name(key) + " is " + real->shape_string(),
           m_table.get(imag_key));
    return Matrix::from_parts(*real, *imag);
  }

  /// Rejects any key not in `allowed`, before anything is read, so that a misspelt key is reported
  /// as such (with a suggestion) rather than as a missing one. Reports the earliest in the file.
  void allow_only(const std::vector<std::string>& allowed, const std::string& what) const {
    const toml::node* first = nullptr;
    std::string first_key;
    for (auto&& [k, v] : m_table) {
      const std::string key(k.str());
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      if (!first || v.source().begin.line < first->source().begin.line) {
        first = &v;
        first_key = key;
      }
    }
    if (!first) return;
    std::string suggestion;
    std::size_t closest = 3;  // suggest only keys within two edits
    for (const std::string& a : allowed) {
      const std::size_t d = edit_distance(first_key, a);
      if (d < closest) {
        closest = d;
        suggestion = " (did you mean " + name(a) + "?)";
      }
    }
    fail(first_key, "unknown key for " + what + suggestion, first);
  }

  const toml::table& table() const { return m_table; }

  static const char* type_name(const toml::node& n) {
    switch (n.type()) {
      case toml::node_type::table:
        return "a table";
      case toml::node_type::array:
        return "an array";
      case toml::node_type::string:
        return "a string";
      case toml::node_type::integer:
        return "an integer";
      case toml::node_type::floating_point:
        return "a number";
      case toml::node_type::boolean:
        return "a boolean";
      default:
        return "a date or time";
    }
  }

  static std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[b.size()];
  }

 private:
  const toml::table& m_table;
  std::string m_path;
  std::string m_file;
};

/// A sub-table [name] of the document (required or not).
std::optional<TableReader> sub_table(TableReader& root, const std::string& key, bool required) {
  const toml::node* n = root.node(key, required);
  if (!n) return std::nullopt;
  const toml::table* t = n->as_table();
  if (!t) root.fail(key, "expected a table [" + key + "]", n);
  return TableReader(*t, key, root.file());
}

void require_hermitian(TableReader& r, const std::string& key, const Matrix& m) {
  if (const auto at = m.first_non_hermitian()) {
    const int i = at->first, j = at->second;
    std::ostringstream s;
    s.precision(10);
    s << "must be Hermitian, but [" << i << "][" << j << "] = " << m(i, j) << " and [" << j << "][" << i
      << "] = " << m(j, i);
    r.fail(key, s.str(), r.table().get(key));
  }
}

std::vector<double> hermitian_eigenvalues(Matrix m) {
  const int n = m.rows();
  std::vector<double> w(n);
  int lwork = std::max(1, 2 * n - 1), info = 0;
  std::vector<std::complex<double>> work(lwork);
  std::vector<double> rwork(std::max(1, 3 * n - 2));
  // LAPACK is column-major: the row-major data is the transpose, which has the same eigenvalues.
  zheev_("N", "U", &n, m.data(), &n, w.data(), work.data(), &lwork, rwork.data(), &info);
  if (info != 0) throw Error("LAPACK zheev failed with info = " + std::to_string(info));
  return w;
}

Bath read_bath(TableReader& b, const UnitScale& scale, int dimension) {
  const std::string kind = *b.string("kind");
  std::vector<std::string> allowed = {"kind", "coupling", "coupling_imag"};
  if (kind == "drude-lorentz") {
    allowed.insert(allowed.end(), {"lambda", "gamma", "temperature", "terms", "expansion", "terminator"});
  } else if (kind == "underdamped") {
    allowed.insert(allowed.end(), {"lambda", "gamma", "w0", "temperature", "terms"});
  } else if (kind == "exponents") {
    for (const char* list : {"ck_real", "vk_real", "ck_imag", "vk_imag"})
      allowed.insert(allowed.end(), {list, std::string(list) + "_imag"});
  } else {
    b.fail("kind", "unknown bath kind \"" + kind + "\" (expected \"drude-lorentz\", \"underdamped\" or \"exponents\")",
           b.table().get("kind"));
  }
  b.allow_only(allowed, "a " + kind + " bath");
  const std::optional<Matrix> q = b.complex_matrix("coupling", "coupling_imag");
  if (q->rows() != dimension)
    b.fail("coupling",
           "is " + q->shape_string() + " but system.hamiltonian is " + std::to_string(dimension) + "x" +
               std::to_string(dimension),
           b.table().get("coupling"));
  require_hermitian(b, "coupling", *q);

  auto energy = [&](const char* key) { return b.positive(key) * scale.energy; };
  auto terms = [&]() {
    const std::int64_t nk = *b.integer("terms");
    if (nk < 0 || nk > 1000)
      b.fail("terms", "must be between 0 and 1000, got " + std::to_string(nk), b.table().get("terms"));
    return static_cast<int>(nk);
  };
  try {
    if (kind == "drude-lorentz") {
      DrudeLorentz p;
      p.lambda = b.non_negative("lambda") * scale.energy;
      p.gamma = energy("gamma");
      p.temperature = b.positive("temperature") * scale.temperature;
      p.terms = terms();
      const std::string expansion = b.string("expansion", false).value_or("matsubara");
      if (expansion == "pade")
        p.expansion = DrudeLorentzExpansion::Pade;
      else if (expansion != "matsubara")
        b.fail("expansion", "unknown expansion \"" + expansion + "\" (expected \"matsubara\" or \"pade\")",
               b.table().get("expansion"));
      p.terminator = b.boolean("terminator", false).value_or(false);
      return Bath::drude_lorentz(*q, p);
    }
    if (kind == "underdamped") {
      Underdamped p;
      p.lambda = b.non_negative("lambda") * scale.energy;
      p.gamma = energy("gamma");
      p.w0 = energy("w0");
      p.temperature = b.positive("temperature") * scale.temperature;
      p.terms = terms();
      if (p.w0 <= p.gamma / 2) b.fail("w0", "must be > gamma / 2 for an underdamped bath", b.table().get("w0"));
      return Bath::underdamped(*q, p);
    }
    if (kind == "exponents") {
      CorrelationExpansion e;
      // C(t) is an energy squared: coefficients scale as energy^2, rates as energy (spectroscopy
      // units: ck in cm^-2, vk in cm^-1).
      auto list = [&](const std::string& key, double factor, std::vector<complex>& out) {
        const std::vector<double> re = b.numbers(key, false).value_or(std::vector<double>{});
        const std::optional<std::vector<double>> im = b.numbers(key + "_imag", false);
        if (im && im->size() != re.size())
          b.fail(
              key + "_imag",
              "has " + std::to_string(im->size()) + " entries but " + b.name(key) + " has " + std::to_string(re.size()),
              b.table().get(key + "_imag"));
        for (std::size_t i = 0; i < re.size(); ++i) out.push_back(factor * complex(re[i], im ? (*im)[i] : 0.0));
      };
      const double c_factor = scale.energy * scale.energy;
      list("ck_real", c_factor, e.ck_real);
      list("vk_real", scale.energy, e.vk_real);
      list("ck_imag", c_factor, e.ck_imag);
      list("vk_imag", scale.energy, e.vk_imag);
      if (e.ck_real.size() != e.vk_real.size())
        b.fail("vk_real", "has " + std::to_string(e.vk_real.size()) + " entries but " + b.name("ck_real") + " has " +
                              std::to_string(e.ck_real.size()));
      if (e.ck_imag.size() != e.vk_imag.size())
        b.fail("vk_imag", "has " + std::to_string(e.vk_imag.size()) + " entries but " + b.name("ck_imag") + " has " +
                              std::to_string(e.ck_imag.size()));
      if (e.ck_real.empty() && e.ck_imag.empty())
        b.fail("ck_real", "an exponents bath needs ck_real/vk_real or ck_imag/vk_imag");
      return Bath::from_expansion(*q, e);
    }
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {  // the library's own checks (e.g. a singular expansion)
    b.fail("", e.what());
  }
  throw Error("read_bath: unreachable");
}

EnsembleConfig read_ensemble(TableReader& root, const toml::table& doc, const RunConfig& base);

SteadyStateOptions read_steady(TableReader& t, const UnitScale& scale) {
  t.allow_only({"tolerance", "restart", "max_iterations", "preconditioner", "fallback_time"}, "[steady]");
  SteadyStateOptions o;
  if (t.has("tolerance")) o.tolerance = t.positive("tolerance");
  if (o.tolerance < 1e-15)
    t.fail("tolerance", "must be >= 1e-15 (double precision), got " + format(o.tolerance), t.table().get("tolerance"));
  if (auto restart = t.integer("restart", false)) {
    if (*restart < 1 || *restart > steady_state_max_restart)
      t.fail("restart",
             "must be between 1 and " + std::to_string(steady_state_max_restart) + ", got " + std::to_string(*restart),
             t.table().get("restart"));
    o.restart = static_cast<int>(*restart);
  }
  if (auto most = t.integer("max_iterations", false)) {
    if (*most < 1 || *most > 100000000)
      t.fail("max_iterations", "must be between 1 and 10^8, got " + std::to_string(*most),
             t.table().get("max_iterations"));
    o.max_iterations = static_cast<int>(*most);
  }
  if (auto p = t.string("preconditioner", false)) {
    if (*p == "system")
      o.preconditioner = SteadyPreconditioner::system;
    else if (*p == "none")
      o.preconditioner = SteadyPreconditioner::none;
    else
      t.fail("preconditioner", "unknown preconditioner \"" + *p + "\" (expected \"system\" or \"none\")",
             t.table().get("preconditioner"));
  }
  if (t.has("fallback_time")) o.fallback_time = t.non_negative("fallback_time") * scale.time;
  return o;
}

/// The dipole operators of an absorption spectrum: `dipoles` holds one entry per excited level 1..n-1,
/// a number (one polarization) or an [x, y, z] vector (three, orientation-averaged).
void read_dipoles(TableReader& t, SpectrumConfig& s, int n) {
  const toml::node* node = t.node("dipoles", true);
  const toml::array* list = node->as_array();
  if (!list || static_cast<int>(list->size()) != n - 1)
    t.fail("dipoles",
           "expected one transition dipole per excited level (" + std::to_string(n - 1) +
               "): numbers, or [x, y, z] vectors",
           node);
  const bool vectors = list->get(0)->is_array();
  const int polarizations = vectors ? 3 : 1;
  s.dipoles.assign(polarizations, Matrix(n, n));
  s.dipole_weight = 1.0 / polarizations;
  double strength = 0.0;
  for (int j = 1; j < n; ++j) {
    const toml::node& entry = *list->get(j - 1);
    const std::string what = "entry " + std::to_string(j - 1) + " (level " + std::to_string(j) + ")";
    std::vector<double> d;
    if (vectors) {
      const toml::array* v = entry.as_array();
      if (!v || v->size() != 3) t.fail("dipoles", what + " is not an [x, y, z] vector like the first", &entry);
      for (std::size_t p = 0; p < 3; ++p) d.push_back(t.number_value("dipoles", *v->get(p), what));
    } else {
      if (entry.is_array()) t.fail("dipoles", what + " is a vector but the first is a number", &entry);
      d.push_back(t.number_value("dipoles", entry, what));
    }
    for (int p = 0; p < polarizations; ++p) {
      s.dipoles[p](j, 0) = s.dipoles[p](0, j) = d[p];
      strength += d[p] * d[p];
    }
  }
  if (strength == 0.0) t.fail("dipoles", "are all zero: nothing absorbs", node);
}

SpectrumConfig read_spectrum(TableReader& t, const RunConfig& c) {
  t.allow_only({"kind", "dipoles", "operator", "operator_imag", "incoherent", "window", "padding", "frequency_range"},
               "[spectrum]");
  SpectrumConfig s;
  const int n = c.model.dimension();
  const std::string kind = *t.string("kind");
  if (kind == "absorption") {
    s.kind = SpectrumConfig::Kind::absorption;
    if (t.has("incoherent"))
      t.fail("incoherent", "belongs to a power spectrum (the absorption correlation has no coherent part)",
             t.table().get("incoherent"));
    if (t.has("operator"))
      t.fail("operator", "belongs to a power spectrum; absorption takes dipoles", t.table().get("operator"));
    if (n < 2)
      t.fail("kind", "\"absorption\" needs a ground state (level 0) and at least one excited level",
             t.table().get("kind"));
    // Level 0 must be a ground state that stays separate: ADOs of |0><0| are then zero in equilibrium.
    const Matrix& h = c.input_hamiltonian;
    for (int j = 1; j < n; ++j)
      if (h(0, j) != 0.0)
        t.fail("kind",
               "\"absorption\" needs level 0 to be a ground state, but system.hamiltonian[0][" + std::to_string(j) +
                   "] couples it to level " + std::to_string(j),
               t.table().get("kind"));
    for (std::size_t b = 0; b < c.model.baths().size(); ++b) {
      const Matrix& q = c.model.baths()[b].coupling();
      for (int j = 0; j < n; ++j)
        if (q(0, j) != 0.0 || q(j, 0) != 0.0)
          t.fail("kind",
                 "\"absorption\" needs a ground state (level 0) that no bath couples to, but bath[" +
                     std::to_string(b + 1) + "].coupling has a non-zero element in row or column 0",
                 t.table().get("kind"));
    }
    read_dipoles(t, s, n);
  } else if (kind == "power") {
    s.kind = SpectrumConfig::Kind::power;
    if (t.has("dipoles"))
      t.fail("dipoles", "belong to an absorption spectrum; a power spectrum takes operator", t.table().get("dipoles"));
    s.op = *t.complex_matrix("operator", "operator_imag");
    if (s.op.rows() != n)
      t.fail("operator",
             "is " + s.op.shape_string() + " but system.hamiltonian is " + std::to_string(n) + "x" + std::to_string(n),
             t.table().get("operator"));
    if (s.op.max_abs() == 0.0) t.fail("operator", "is zero: its spectrum is zero", t.table().get("operator"));
    s.incoherent = t.boolean("incoherent", false).value_or(false);
  } else {
    t.fail("kind", "unknown spectrum \"" + kind + "\" (expected \"absorption\" or \"power\")", t.table().get("kind"));
  }
  if (auto w = t.string("window", false)) {
    if (*w == "hann")
      s.window = SpectrumWindow::hann;
    else if (*w != "none")
      t.fail("window", "unknown window \"" + *w + "\" (expected \"none\" or \"hann\")", t.table().get("window"));
  }
  if (auto p = t.integer("padding", false)) {
    if (*p < 1 || *p > 64)
      t.fail("padding", "must be between 1 and 64, got " + std::to_string(*p), t.table().get("padding"));
    s.padding = static_cast<int>(*p);
  }
  if (auto range = t.numbers("frequency_range", false)) {
    if (range->size() != 2 || !((*range)[0] < (*range)[1]))
      t.fail("frequency_range", "expected [low, high] with low < high", t.table().get("frequency_range"));
    // The FFT's frequencies: m spacing for m = -M/2 .. M/2 - 1, M = padding x samples.
    const double samples = std::round(c.t_end / c.output_every) + 1.0, points = samples * s.padding;
    const double spacing = 2.0 * 3.14159265358979323846 / (points * c.output_every) / unit_scale(c.units).energy;
    const double first = std::max(std::ceil((*range)[0] / spacing), -std::floor(points / 2));
    const double last = std::min(std::floor((*range)[1] / spacing), std::ceil(points / 2) - 1);
    if (first > last)
      t.fail("frequency_range",
             "holds none of the spectrum's frequencies (" + format(-std::floor(points / 2) * spacing) + " to " +
                 format((std::ceil(points / 2) - 1) * spacing) + " every " + format(spacing) + ")",
             t.table().get("frequency_range"));
    s.frequency_range = *range;
  }
  return s;
}

/// The run a document describes; its [ensemble] too when `with_ensemble` (not when the document is
/// one point of the ensemble's sweeps).
RunConfig parse_document(const toml::table& doc, const std::string& text, const std::string& file,
                         bool with_ensemble = true) {
  TableReader root(doc, "", file);
  root.allow_only(
      {"units", "system", "bath", "hierarchy", "initial_state", "dynamics", "output", "ensemble", "steady", "spectrum"},
      "the top level");

  Units units = Units::natural;
  if (auto u = root.string("units", false)) {
    if (*u == "spectroscopy")
      units = Units::spectroscopy;
    else if (*u != "natural")
      root.fail("units", "unknown units \"" + *u + "\" (expected \"natural\" or \"spectroscopy\")", doc.get("units"));
  }
  const UnitScale scale = unit_scale(units);

  TableReader system = *sub_table(root, "system", true);
  system.allow_only({"hamiltonian", "hamiltonian_imag"}, "[system]");
  Matrix h = *system.complex_matrix("hamiltonian", "hamiltonian_imag");
  require_hermitian(system, "hamiltonian", h);
  const Matrix input_hamiltonian = h;
  h *= scale.energy;
  const int n = h.rows();

  std::vector<Bath> baths;
  if (const toml::node* bath_node = root.node("bath", false)) {
    const toml::array* list = bath_node->as_array();
    if (!list || !list->is_array_of_tables()) root.fail("bath", "expected [[bath]] tables", bath_node);
    for (std::size_t i = 0; i < list->size(); ++i) {
      TableReader b(*list->get(i)->as_table(), "bath[" + std::to_string(i + 1) + "]", file);
      baths.push_back(read_bath(b, scale, n));
    }
  }

  TableReader hierarchy = *sub_table(root, "hierarchy", true);
  hierarchy.allow_only({"depth"}, "[hierarchy]");
  const std::int64_t depth = *hierarchy.integer("depth");
  if (depth < 0 || depth > 1000)
    hierarchy.fail("depth", "must be between 0 and 1000, got " + std::to_string(depth), hierarchy.table().get("depth"));

  // Optional here: a spectrum starts from the ground state or the steady state, and `heom steady` from
  // I/n without one; the program asks for it where rho is propagated from it.
  Matrix rho0 = operators::projector(n, 0, 0);
  const bool has_initial_state = root.has("initial_state");
  if (has_initial_state) {
    TableReader initial = *sub_table(root, "initial_state", true);
    initial.allow_only({"rho", "rho_imag"}, "[initial_state]");
    rho0 = *initial.complex_matrix("rho", "rho_imag");
    if (rho0.rows() != n)
      initial.fail("rho", "is " + rho0.shape_string() + " but system.hamiltonian is " + h.shape_string(),
                   initial.table().get("rho"));
    require_hermitian(initial, "rho", rho0);
    if (std::abs(rho0.trace() - complex(1.0)) > 1e-6)
      initial.fail("rho", "trace must be 1, got " + format(rho0.trace().real()), initial.table().get("rho"));
    const auto eigenvalues = hermitian_eigenvalues(rho0);
    const double smallest = *std::min_element(eigenvalues.begin(), eigenvalues.end());
    if (smallest < -1e-10)
      initial.fail("rho", "is not positive semidefinite: eigenvalue " + format(smallest), initial.table().get("rho"));
  }

  TableReader dynamics = *sub_table(root, "dynamics", true);
  dynamics.allow_only({"t_end", "output_every", "method", "rtol", "atol", "step"}, "[dynamics]");
  const double t_end = dynamics.positive("t_end") * scale.time;
  const double output_every = dynamics.positive("output_every") * scale.time;
  if (t_end / output_every > 1e7)
    dynamics.fail("output_every", "gives more than 10^7 output times up to t_end",
                  dynamics.table().get("output_every"));
  IntegratorOptions integrator;
  const std::string method_name = dynamics.string("method", false).value_or(to_string(integrator.method));
  try {
    integrator.method = parse_method(method_name, "dynamics.method");
  } catch (const Error&) {
    dynamics.fail("method", "unknown method \"" + method_name + "\" (expected " + method_names() + ")",
                  dynamics.table().get("method"));
  }
  if (is_adaptive(integrator.method)) {
    if (dynamics.has("rtol")) integrator.rtol = dynamics.positive("rtol");
    if (dynamics.has("atol")) integrator.atol = dynamics.positive("atol");
    if (dynamics.has("step")) integrator.step = dynamics.positive("step") * scale.time;
    if (integrator.rtol < 1e-14)
      dynamics.fail("rtol", "must be >= 1e-14 (double precision), got " + format(integrator.rtol),
                    dynamics.table().get("rtol"));
  } else {
    integrator.step = dynamics.positive("step") * scale.time;
    for (const char* key : {"rtol", "atol"})
      if (dynamics.has(key))
        dynamics.fail(key, std::string("applies to the adaptive methods only, not ") + to_string(integrator.method),
                      dynamics.table().get(key));
  }

  std::string output_file, checkpoint_file;
  bool ados = false;
  CheckpointEvery checkpoint_every;
  if (auto output = sub_table(root, "output", false)) {
    output->allow_only({"file", "ados", "checkpoint_every", "checkpoint_file"}, "[output]");
    output_file = output->string("file", false).value_or("");
    if (output->has("file") && output_file.empty())
      output->fail("file", "must not be empty", output->table().get("file"));
    ados = output->boolean("ados", false).value_or(false);
    checkpoint_file = output->string("checkpoint_file", false).value_or("");
    if (output->has("checkpoint_file") && checkpoint_file.empty())
      output->fail("checkpoint_file", "must not be empty", output->table().get("checkpoint_file"));
    if (const toml::node* every = output->node("checkpoint_every", false)) {
      auto add = [&](const toml::node& interval) {
        const auto interval_text = interval.as_string();
        if (!interval_text)
          output->fail("checkpoint_every",
                       std::string("expected a string such as \"30 min\" or \"1000 steps\", got ") +
                           TableReader::type_name(interval),
                       &interval);
        try {
          parse_checkpoint_every(interval_text->get(), output->name("checkpoint_every"), checkpoint_every);
        } catch (const InputError& e) {
          output->fail("checkpoint_every", std::string(e.what()).substr(output->name("checkpoint_every").size() + 2),
                       &interval);
        }
      };
      if (const toml::array* list = every->as_array()) {
        if (list->empty()) output->fail("checkpoint_every", "must not be empty", every);
        for (const toml::node& interval : *list) add(interval);
      } else {
        add(*every);
      }
    }
  }

  Model model(h);
  for (auto& b : baths) model.add_bath(std::move(b));
  RunConfig config{text,
                   file,
                   units,
                   std::move(model),
                   rho0,
                   static_cast<int>(depth),
                   t_end,
                   output_every,
                   integrator,
                   output_file,
                   ados,
                   input_hamiltonian,
                   std::nullopt,
                   SteadyStateOptions{},
                   std::nullopt,
                   has_initial_state,
                   checkpoint_every,
                   checkpoint_file};
  if (auto steady = sub_table(root, "steady", false)) config.steady = read_steady(*steady, scale);
  if (auto spectrum = sub_table(root, "spectrum", false)) {
    config.spectrum = read_spectrum(*spectrum, config);
    if (config.spectrum->kind == SpectrumConfig::Kind::absorption && has_initial_state)
      root.fail("initial_state", "is not used by an absorption spectrum, which starts from the ground state |0><0|",
                doc.get("initial_state"));
    const double samples = t_end / output_every;
    if (std::abs(samples - std::round(samples)) > 1e-9 * samples || samples < 1.5)
      dynamics.fail("output_every",
                    "must divide t_end into equal intervals (at least 2) for a spectrum: they are its samples",
                    dynamics.table().get("output_every"));
  }
  if (config.spectrum && ados)
    root.fail("output", "output.ados: a spectrum writes its correlation function, not the ADOs", doc.get("output"));
  if ((config.spectrum || (with_ensemble && root.has("ensemble"))) &&
      (checkpoint_every.any() || !checkpoint_file.empty()))
    root.fail("output",
              std::string(checkpoint_every.any() ? "output.checkpoint_every" : "output.checkpoint_file") +
                  ": checkpoints cover the propagation of one hierarchy, not a [spectrum] or [ensemble] run",
              doc.get("output"));
  if (with_ensemble && root.has("ensemble")) {
    if (config.spectrum && config.spectrum->kind == SpectrumConfig::Kind::power)
      root.fail("ensemble",
                "a power spectrum is computed for one model (its steady state); the ensemble average is "
                "available for absorption spectra",
                doc.get("ensemble"));
    if (ados)
      root.fail("ensemble", "output.ados: writing every ADO is not available for an ensemble (it stores rho(t))",
                doc.get("ensemble"));
    config.ensemble = read_ensemble(root, doc, config);
    if (config.spectrum && !config.ensemble->parameter_names.empty())
      root.fail("ensemble",
                "sweeps with a [spectrum] are not available: the spectrum is the mean over every member (static "
                "disorder); run one input per sweep point",
                doc.get("ensemble"));
  }
  return config;
}

/// A number node's value, integer or not (the document was validated before).
double number_of(const toml::node& node) {
  if (auto i = node.as_integer()) return static_cast<double>(i->get());
  return node.as_floating_point()->get();
}

/// A swept parameter: what it names in the document.
struct SweepTarget {
  enum class Kind { bath, hamiltonian, initial_state } kind;
  std::vector<int> baths;  // bath: the [[bath]] tables (0-based), one or all ("bath[*]")
  std::string key;         // bath: the key in each
  int element = 0;         // hamiltonian: the diagonal element
};

SweepTarget sweep_target(TableReader& sweep, const toml::table& doc, int dimension) {
  const std::string name = *sweep.string("parameter");
  const toml::node* at = sweep.table().get("parameter");
  std::smatch m;
  static const std::regex bath_parameter(R"(bath\[(\*|[0-9]{1,6})\]\.(temperature|lambda|gamma|w0))");
  static const std::regex diagonal_element(R"(system\.hamiltonian\[([0-9]{1,6})\]\[([0-9]{1,6})\])");
  SweepTarget t;
  if (std::regex_match(name, m, bath_parameter)) {
    t.kind = SweepTarget::Kind::bath;
    t.key = m[2];
    const toml::array* baths = doc.get("bath") ? doc.get("bath")->as_array() : nullptr;
    const int count = baths ? static_cast<int>(baths->size()) : 0;
    if (m[1] == "*") {
      if (count == 0) sweep.fail("parameter", "\"" + name + "\": the model has no bath", at);
      for (int b = 0; b < count; ++b) t.baths.push_back(b);
    } else {
      const int b = std::stoi(m[1]) - 1;
      if (b < 0 || b >= count)
        sweep.fail("parameter",
                   "\"" + name + "\": the model has " + std::to_string(count) + (count == 1 ? " bath" : " baths") +
                       " (numbered from 1)",
                   at);
      t.baths.push_back(b);
    }
    for (int b : t.baths) {
      const toml::table& bath = *baths->get(b)->as_table();
      if (!bath.contains(t.key))
        sweep.fail("parameter",
                   "\"" + name + "\": bath[" + std::to_string(b + 1) + "] (" +
                       bath.get("kind")->value_or(std::string("?")) + ") has no " + t.key,
                   at);
    }
    return t;
  }
  if (std::regex_match(name, m, diagonal_element)) {
    t.kind = SweepTarget::Kind::hamiltonian;
    const int i = std::stoi(m[1]), j = std::stoi(m[2]);
    if (i != j) sweep.fail("parameter", "\"" + name + "\": only diagonal elements of H can be swept", at);
    if (i >= dimension)
      sweep.fail("parameter",
                 "\"" + name + "\": the hamiltonian is " + std::to_string(dimension) + "x" + std::to_string(dimension),
                 at);
    t.element = i;
    return t;
  }
  if (name == "initial_state.rho") {
    if (!doc.contains("initial_state"))
      sweep.fail("parameter", "\"initial_state.rho\": the input has no [initial_state] to sweep", at);
    t.kind = SweepTarget::Kind::initial_state;
    return t;
  }
  sweep.fail("parameter",
             "unknown parameter \"" + name +
                 "\" (expected bath[N].temperature, bath[N].lambda, bath[N].gamma, bath[N].w0 with N a bath number "
                 "or *, system.hamiltonian[J][J], or initial_state.rho)",
             at);
}

/// Whether two sweeps set a value in common (the later would silently override the earlier).
bool overlap(const SweepTarget& a, const SweepTarget& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == SweepTarget::Kind::hamiltonian) return a.element == b.element;
  if (a.kind == SweepTarget::Kind::initial_state) return true;
  if (a.key != b.key) return false;
  for (int x : a.baths)
    if (std::find(b.baths.begin(), b.baths.end(), x) != b.baths.end()) return true;
  return false;
}

/// Sets `target` to `value` in `doc`.
void apply_sweep(toml::table& doc, const SweepTarget& target, const toml::node& value) {
  switch (target.kind) {
    case SweepTarget::Kind::bath:
      for (int b : target.baths)
        doc["bath"].as_array()->get(b)->as_table()->insert_or_assign(target.key, number_of(value));
      break;
    case SweepTarget::Kind::hamiltonian: {
      toml::array& row = *doc["system"]["hamiltonian"].as_array()->get(target.element)->as_array();
      row.replace(row.begin() + target.element, number_of(value));
      break;
    }
    case SweepTarget::Kind::initial_state:
      doc["initial_state"].as_table()->insert_or_assign("rho", *value.as_array());
      doc["initial_state"].as_table()->erase("rho_imag");
      break;
  }
}

/// "FILE:LINE: key: problem" -> "key: problem".
std::string without_location(const std::string& message, const std::string& file) {
  if (message.rfind(file + ":", 0) != 0) return message;
  const std::size_t colon = message.find(": ", file.size());
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

EnsembleConfig read_ensemble(TableReader& root, const toml::table& doc, const RunConfig& base) {
  TableReader e = *sub_table(root, "ensemble", true);
  e.allow_only({"members", "seed", "site_energy_sigma", "store_members", "batch", "sweep"}, "[ensemble]");
  const int n = base.model.dimension();
  EnsembleConfig c;
  if (!e.has("members") && !e.has("sweep"))
    e.fail("members", "required key is missing (the number of members, or give [[ensemble.sweep]] tables)");
  if (auto members = e.integer("members", false)) {
    if (*members < 1 || *members > 10000000)
      e.fail("members", "must be between 1 and 10^7, got " + std::to_string(*members), e.table().get("members"));
    c.realizations = *members;
  }
  if (auto seed = e.integer("seed", false)) {
    if (*seed < 0) e.fail("seed", "must be >= 0, got " + std::to_string(*seed), e.table().get("seed"));
    c.seed = static_cast<std::uint64_t>(*seed);
  }
  if (const toml::node* sigma = e.node("site_energy_sigma", false)) {
    if (sigma->is_array()) {
      c.site_energy_sigma = *e.numbers("site_energy_sigma");
      if (static_cast<int>(c.site_energy_sigma.size()) != n)
        e.fail("site_energy_sigma",
               "has " + std::to_string(c.site_energy_sigma.size()) + " entries but system.hamiltonian is " +
                   std::to_string(n) + "x" + std::to_string(n) + " (one per diagonal element)",
               sigma);
    } else {
      c.site_energy_sigma.assign(n, e.number_value("site_energy_sigma", *sigma, "the value"));
    }
    for (std::size_t j = 0; j < c.site_energy_sigma.size(); ++j)
      if (c.site_energy_sigma[j] < 0.0)
        e.fail("site_energy_sigma",
               "must be >= 0, got " + format(c.site_energy_sigma[j]) + " for element " + std::to_string(j), sigma);
  }
  c.store_members = e.boolean("store_members", false).value_or(false);
  if (auto batch = e.integer("batch", false)) {
    if (*batch < 1 || *batch > 100000)
      e.fail("batch", "must be between 1 and 10^5, got " + std::to_string(*batch), e.table().get("batch"));
    c.batch = static_cast<int>(*batch);
  }

  // The sweeps: each a parameter and its values.
  std::vector<SweepTarget> targets;
  std::vector<const toml::array*> values;
  std::vector<TableReader> sweeps;
  if (const toml::node* node = e.node("sweep", false)) {
    const toml::array* list = node->as_array();
    if (!list || !list->is_array_of_tables()) e.fail("sweep", "expected [[ensemble.sweep]] tables", node);
    for (std::size_t k = 0; k < list->size(); ++k) {
      TableReader& sweep =
          sweeps.emplace_back(*list->get(k)->as_table(), "ensemble.sweep[" + std::to_string(k + 1) + "]", root.file());
      sweep.allow_only({"parameter", "values"}, "[[ensemble.sweep]]");
      targets.push_back(sweep_target(sweep, doc, n));
      const std::string name = *sweep.string("parameter");
      for (std::size_t earlier = 0; earlier + 1 < targets.size(); ++earlier)
        if (overlap(targets[earlier], targets.back()))
          sweep.fail("parameter",
                     "\"" + name + "\" sets what ensemble.sweep[" + std::to_string(earlier + 1) + "] (\"" +
                         c.parameter_names[earlier] + "\") already sweeps",
                     sweep.table().get("parameter"));
      c.parameter_names.push_back(name);
      const toml::node* v = sweep.node("values", true);
      const toml::array* a = v->as_array();
      if (!a || a->empty()) sweep.fail("values", "expected a non-empty array of values", v);
      // Each value alone must make a valid run (its problem is reported as the base file's would be).
      for (std::size_t j = 0; j < a->size(); ++j) {
        const toml::node& x = *a->get(j);
        if (targets.back().kind == SweepTarget::Kind::initial_state) {
          if (!x.is_array()) sweep.fail("values", "element " + std::to_string(j) + " is not a matrix [[...], ...]", &x);
        } else {
          sweep.number_value("values", x, "element " + std::to_string(j));
        }
        toml::table single = doc;
        apply_sweep(single, targets.back(), x);
        try {
          parse_document(single, base.input_text, base.input_name, false);
        } catch (const InputError& error) {
          sweep.fail("values",
                     "element " + std::to_string(j) + " gives " + without_location(error.what(), base.input_name), &x);
        }
      }
      values.push_back(a);
      if (c.sweep_points * static_cast<std::int64_t>(a->size()) > 10000000)
        sweep.fail("values", "the sweeps have more than 10^7 points", v);
      c.sweep_points *= static_cast<std::int64_t>(a->size());
    }
  }
  if (c.sweep_points * c.realizations > 10000000)
    e.fail("members", "the ensemble has more than 10^7 members", e.table().get("members"));

  // Every point of the Cartesian product (the first sweep slowest), parsed and validated as a run of
  // its own, then its realizations of the disorder.
  const double energy = unit_scale(base.units).energy;
  std::vector<std::size_t> index(targets.size(), 0);
  for (std::int64_t point = 0; point < c.sweep_points; ++point) {
    toml::table point_doc = doc;
    std::vector<double> parameters;
    std::string values_here;
    for (std::size_t k = 0; k < targets.size(); ++k) {
      const toml::node& value = *values[k]->get(index[k]);
      apply_sweep(point_doc, targets[k], value);
      parameters.push_back(targets[k].kind == SweepTarget::Kind::initial_state ? static_cast<double>(index[k])
                                                                               : number_of(value));
      values_here += (k ? ", " : "") + c.parameter_names[k] + " element " + std::to_string(index[k]);
    }
    std::optional<RunConfig> swept;
    try {
      if (!targets.empty()) swept = parse_document(point_doc, base.input_text, base.input_name, false);
    } catch (const InputError& error) {  // values valid alone, not together (e.g. gamma and w0)
      e.fail("sweep", "the point " + values_here + " gives " + without_location(error.what(), base.input_name),
             e.table().get("sweep"));
    }
    const RunConfig& at = swept ? *swept : base;
    for (std::int64_t r = 0; r < c.realizations; ++r) {
      Matrix hamiltonian = c.site_energy_sigma.empty()
                               ? at.input_hamiltonian
                               : with_diagonal_disorder(at.input_hamiltonian, c.site_energy_sigma, c.seed,
                                                        static_cast<std::uint64_t>(r));
      Model model(complex(energy) * hamiltonian, at.model.baths());
      c.members.push_back({std::move(model), at.rho0, std::move(hamiltonian), parameters});
    }
    // The next point: the last sweep fastest.
    for (std::size_t k = targets.size(); k-- > 0;) {
      if (++index[k] < values[k]->size()) break;
      index[k] = 0;
    }
  }
  return c;
}

}  // namespace

std::vector<double> RunConfig::output_times() const {
  std::vector<double> times;
  const double steps = t_end / output_every;
  const auto whole = static_cast<std::int64_t>(std::floor(steps + 1e-9));
  for (std::int64_t i = 0; i <= whole; ++i) times.push_back(std::min(t_end, static_cast<double>(i) * output_every));
  if (t_end - times.back() > 1e-9 * t_end) times.push_back(t_end);
  times.back() = t_end;
  return times;
}

namespace {
/// Whether toml++ 3.3 (Debian 12's) can classify code point c: for U+00A1-U+0499, U+2C5E-U+3057
/// (but U+3000) and U+FB26-U+FEFE its test for Unicode whitespace reaches undefined behaviour
/// (found by unit_tests/fuzz/), and it runs that test wherever malformed input makes it look for
/// whitespace, inside what would have been a string included.
bool toml_can_classify(char32_t c) {
  return !((c >= 0xA1 && c <= 0x499) || (c >= 0x2C5E && c <= 0x3057 && c != 0x3000) || (c >= 0xFB26 && c <= 0xFEFE));
}

/// What toml++ is given to parse: the input with every character outside ASCII in a comment made a
/// space (comments mean nothing), or a refusal naming the line of the first one elsewhere that
/// toml++ cannot classify safely, or that is outside a string (TOML allows none there).
struct TomlText {
  std::string text;
  int bad_line = 0;  ///< 0: none
  char32_t bad_char = 0;
  bool outside_strings = false;
};

TomlText prepare_for_toml(const std::string& input) {
  TomlText out{input};
  std::string& text = out.text;
  enum class In { code, comment, basic, literal, multiline_basic, multiline_literal } in = In::code;
  int line = 1;
  char last = '\n';  // the last character of code that is not a space or tab: where a string may start
  auto at = [&](std::size_t i, const char* s) { return text.compare(i, std::char_traits<char>::length(s), s) == 0; };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      if (in == In::comment || in == In::basic || in == In::literal) in = In::code;  // (unterminated: toml++ says so)
      if (in == In::code) last = '\n';
      continue;
    }
    if (c >= 0x80) {
      if (in == In::comment) {
        text[i] = ' ';
        continue;
      }
      // The code point of a UTF-8 sequence (malformed ones are left to toml++, which refuses them).
      char32_t cp = c;
      const int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
      cp = extra == 3 ? c & 0x07 : extra == 2 ? c & 0x0F : c & 0x1F;
      for (int k = 1; k <= extra && i + k < text.size(); ++k) cp = (cp << 6) | (text[i + k] & 0x3F);
      if (in == In::code || !toml_can_classify(cp)) {
        out.bad_line = line;
        out.bad_char = cp;
        out.outside_strings = in == In::code;
        return out;
      }
      i += extra;
      continue;
    }
    switch (in) {
      case In::code:
        if (c == '#') {
          in = In::comment;
        } else if ((c == '"' || c == '\'') && std::strchr("\n=[{,.", last)) {
          const bool multiline = at(i, c == '"' ? "\"\"\"" : "'''");
          in = c == '"' ? (multiline ? In::multiline_basic : In::basic)
                        : (multiline ? In::multiline_literal : In::literal);
          if (multiline) i += 2;
        } else if (c != ' ' && c != '\t' && c != '\r') {
          last = static_cast<char>(c);
        }
        break;
      case In::comment:
        break;
      case In::basic:
      case In::multiline_basic:
        if (c == '\\' && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0x80) {
          ++i;  // (an escaped quote does not end the string; a character outside ASCII is checked as any)
          if (text[i] == '\n') ++line;
        } else if (in == In::basic ? c == '"' : at(i, "\"\"\"")) {
          if (in == In::multiline_basic)
            for (i += 2; i + 1 < text.size() && text[i + 1] == '"';) ++i;  // up to two quotes end the content
          in = In::code;
          last = '"';
        }
        break;
      case In::literal:
      case In::multiline_literal:
        if (in == In::literal ? c == '\'' : at(i, "'''")) {
          if (in == In::multiline_literal)
            for (i += 2; i + 1 < text.size() && text[i + 1] == '\'';) ++i;
          in = In::code;
          last = '\'';
        }
        break;
    }
  }
  return out;
}
}  // namespace

void parse_checkpoint_every(const std::string& text, const std::string& key, CheckpointEvery& every) {
  const std::string problem =
      key + ": \"" + text + "\" is not an interval such as \"30 min\", \"2 h\", \"90 s\" or \"1000 steps\"";
  // A decimal number (digits first: no "inf", "nan" or hex) and a unit, spaces around them allowed.
  const auto space = [](char c) { return c == ' ' || c == '\t'; };
  std::size_t at = 0;
  while (at < text.size() && space(text[at])) ++at;
  if (at == text.size() || !std::isdigit(static_cast<unsigned char>(text[at]))) throw InputError(problem);
  std::size_t number_end = at;
  while (number_end < text.size() && std::strchr("0123456789.eE+-", text[number_end])) ++number_end;
  char* end = nullptr;
  const std::string number = text.substr(at, number_end - at);
  const double value = std::strtod(number.c_str(), &end);
  if (*end != '\0') throw InputError(problem);
  std::string unit = text.substr(number_end);
  while (!unit.empty() && space(unit.front())) unit.erase(unit.begin());
  while (!unit.empty() && space(unit.back())) unit.pop_back();
  if (!(value > 0.0) || !std::isfinite(value))
    throw InputError(key + ": \"" + text + "\" must be a positive number of seconds, minutes, hours or steps");
  if (unit == "steps" || unit == "step") {
    if (value != std::floor(value) || value > 1e15)
      throw InputError(key + ": \"" + text + "\": a number of steps is a whole number");
    every.steps =
        every.steps > 0 ? std::min(every.steps, static_cast<long long>(value)) : static_cast<long long>(value);
    return;
  }
  const std::pair<const char*, double> units[] = {{"s", 1.0}, {"min", 60.0}, {"h", 3600.0}};
  for (const auto& [name, seconds] : units)
    if (unit == name) {
      every.seconds = every.seconds > 0.0 ? std::min(every.seconds, value * seconds) : value * seconds;
      return;
    }
  throw InputError(problem);
}

RunConfig parse_run_config(const std::string& text, const std::string& name) {
  const TomlText prepared = prepare_for_toml(text);
  if (prepared.bad_line > 0) {
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(prepared.bad_char));
    throw InputError(name + ":" + std::to_string(prepared.bad_line) + ": the character " + code +
                     (prepared.outside_strings ? " is outside a string or comment (TOML allows none there)"
                                               : " is accepted in comments only (the TOML reader cannot classify it "
                                                 "safely elsewhere)"));
  }
  toml::table doc;
  try {
    doc = toml::parse(prepared.text, name);
  } catch (const toml::parse_error& e) {
    throw InputError(name + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  return parse_document(doc, text, name);
}

RunConfig read_run_config(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the input file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_run_config(text.str(), path);
}

}  // namespace heom::io
