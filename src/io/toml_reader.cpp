// The input's TOML reader: TableReader's checks and messages, and the sanitizer of the text handed to toml++.
#include "io/toml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>
#include <sstream>

#include "io/input.hpp"

namespace heom::io::impl {

std::string format(double x) {
  std::ostringstream s;
  s.precision(10);
  s << x;
  return s.str();
}

void TableReader::fail(const std::string& key, const std::string& problem, const toml::node* at) const {
  const toml::source_region& where = at ? at->source() : m_table.source();
  std::string location = m_file;
  if (where.begin.line > 0) location += ":" + std::to_string(where.begin.line);
  throw InputError(location + ": " + name(key) + ": " + problem);
}

std::string TableReader::name(const std::string& key) const {
  if (key.empty()) return m_path;
  return m_path.empty() ? key : m_path + "." + key;
}

const toml::node* TableReader::node(const std::string& key, bool required) const {
  const toml::node* n = m_table.get(key);
  if (!n && required) fail(key, "required key is missing");
  return n;
}

std::optional<double> TableReader::number(const std::string& key, bool required) {
  const toml::node* n = node(key, required);
  if (!n) return std::nullopt;
  return number_value(key, *n, "the value");
}

double TableReader::number_value(const std::string& key, const toml::node& e, const std::string& what) const {
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

double TableReader::positive(const std::string& key) {
  const double x = *number(key);
  if (x <= 0.0) fail(key, "must be > 0, got " + format(x), m_table.get(key));
  return x;
}

double TableReader::non_negative(const std::string& key) {
  const double x = *number(key);
  if (x < 0.0) fail(key, "must be >= 0, got " + format(x), m_table.get(key));
  return x;
}

std::optional<std::int64_t> TableReader::integer(const std::string& key, bool required) {
  const toml::node* n = node(key, required);
  if (!n) return std::nullopt;
  if (auto i = n->as_integer()) return i->get();
  fail(key, std::string("expected an integer, got ") + type_name(*n), n);
}

std::optional<int> TableReader::int_value(const std::string& key) {
  const std::optional<std::int64_t> value = integer(key, false);
  if (!value) return std::nullopt;
  if (*value < std::numeric_limits<int>::min() || *value > std::numeric_limits<int>::max())
    fail(key, "is out of range, got " + std::to_string(*value), m_table.get(key));
  return static_cast<int>(*value);
}

std::optional<bool> TableReader::boolean(const std::string& key, bool required) {
  const toml::node* n = node(key, required);
  if (!n) return std::nullopt;
  if (auto b = n->as_boolean()) return b->get();
  fail(key, std::string("expected true or false, got ") + type_name(*n), n);
}

std::optional<std::string> TableReader::string(const std::string& key, bool required) {
  const toml::node* n = node(key, required);
  if (!n) return std::nullopt;
  if (auto s = n->as_string()) return s->get();
  fail(key, std::string("expected a string, got ") + type_name(*n), n);
}

std::optional<std::vector<double>> TableReader::numbers(const std::string& key, bool required) {
  const toml::node* n = node(key, required);
  if (!n) return std::nullopt;
  const toml::array* a = n->as_array();
  if (!a) fail(key, std::string("expected an array of numbers, got ") + type_name(*n), n);
  std::vector<double> out;
  for (std::size_t i = 0; i < a->size(); ++i)
    out.push_back(number_value(key, *a->get(i), "element " + std::to_string(i)));
  return out;
}

std::optional<Matrix> TableReader::square_matrix(const std::string& key, bool required) {
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

std::optional<Matrix> TableReader::complex_matrix(const std::string& key, const std::string& imag_key, bool required) {
  std::optional<Matrix> real = square_matrix(key, required);
  std::optional<Matrix> imag = square_matrix(imag_key, false);
  if (imag && !real) fail(imag_key, "given without " + name(key), m_table.get(imag_key));
  if (!imag) return real;
  if (imag->rows() != real->rows())
    fail(imag_key, "is " + imag->shape_string() + " but " + name(key) + " is " + real->shape_string(),
         m_table.get(imag_key));
  return Matrix::from_parts(*real, *imag);
}

void TableReader::allow_only(const std::vector<std::string>& allowed, const std::string& what) const {
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

const char* TableReader::type_name(const toml::node& n) {
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

std::size_t TableReader::edit_distance(const std::string& a, const std::string& b) {
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

double number_of(const toml::node& node) {
  if (auto i = node.as_integer()) return static_cast<double>(i->get());
  return node.as_floating_point()->get();
}

namespace {
/// Whether toml++ 3.3 (Debian 12's) can classify code point c: for U+00A1-U+0499, U+2C5E-U+3057
/// (but U+3000) and U+FB26-U+FEFE its test for Unicode whitespace reaches undefined behaviour
/// (found by unit_tests/fuzz/), and it runs that test wherever malformed input makes it look for
/// whitespace, inside what would have been a string included.
bool toml_can_classify(char32_t c) {
  return !((c >= 0xA1 && c <= 0x499) || (c >= 0x2C5E && c <= 0x3057 && c != 0x3000) || (c >= 0xFB26 && c <= 0xFEFE));
}
}  // namespace

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

}  // namespace heom::io::impl
