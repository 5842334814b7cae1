// The input's TOML reader (internal): every key is read through a TableReader that knows its path and line, so
// that each error names the key, and keys nobody read are reported as unknown (typos do not pass silently).
#ifndef HEOM_IO_TOML_READER_HPP
#define HEOM_IO_TOML_READER_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// toml++ 3.3 (Debian 12's) asserts an invariant of its own parser that malformed input breaks (a '#'
// where a key starts, found by unit_tests/fuzz/), though it then reports the error correctly; release
// builds compile the assertion out, and so do we everywhere, so that a debug build does not abort on
// bad input. (unit_tests/fuzz/regressions/ keeps the input.)
#define TOML_ASSERT(expr) static_assert(true)
#include <toml++/toml.h>

#include "heom/core/matrix.hpp"

namespace heom::io::impl {

/// `x` with 10 significant digits, for messages.
std::string format(double x);

/// Reads the keys of one TOML table, remembering which were used.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string path, const std::string& file)
      : m_table(table), m_path(std::move(path)), m_file(file) {}

  /// Throws InputError "FILE:LINE: key: problem", LINE that of `at` (else of the table).
  [[noreturn]] void fail(const std::string& key, const std::string& problem, const toml::node* at = nullptr) const;

  /// The key's full name ("bath[1].gamma"); the table's own for an empty key.
  std::string name(const std::string& key) const;
  const std::string& file() const { return m_file; }
  bool has(const std::string& key) const { return m_table.contains(key); }

  const toml::node* node(const std::string& key, bool required) const;

  std::optional<double> number(const std::string& key, bool required = true);
  /// A number node's value (an integer counts as a number); `what` names the node in messages.
  double number_value(const std::string& key, const toml::node& e, const std::string& what) const;

  double positive(const std::string& key);
  double non_negative(const std::string& key);

  std::optional<std::int64_t> integer(const std::string& key, bool required = true);
  /// An optional integer that fits an int (beyond: "is out of range"), for options' int fields, which
  /// their validate() checks.
  std::optional<int> int_value(const std::string& key);
  std::optional<bool> boolean(const std::string& key, bool required = true);
  std::optional<std::string> string(const std::string& key, bool required = true);

  /// An array of numbers.
  std::optional<std::vector<double>> numbers(const std::string& key, bool required = true);

  /// A square matrix of numbers, [[row], [row], ...].
  std::optional<Matrix> square_matrix(const std::string& key, bool required = true);

  /// `key` (real part) plus the optional `imag_key` of the same shape.
  std::optional<Matrix> complex_matrix(const std::string& key, const std::string& imag_key, bool required = true);

  /// Rejects any key not in `allowed`, before anything is read, so that a misspelt key is reported
  /// as such (with a suggestion) rather than as a missing one. Reports the earliest in the file.
  void allow_only(const std::vector<std::string>& allowed, const std::string& what) const;

  const toml::table& table() const { return m_table; }

  /// "a table", "an integer", ...: what a node is, for messages.
  static const char* type_name(const toml::node& n);
  /// Levenshtein distance, for suggesting the key a misspelt one meant.
  static std::size_t edit_distance(const std::string& a, const std::string& b);

 private:
  const toml::table& m_table;
  std::string m_path;
  std::string m_file;
};

/// A sub-table [name] of the document (required or not).
std::optional<TableReader> sub_table(TableReader& root, const std::string& key, bool required);

/// Throws naming `key` (the entries that differ) unless `m` is Hermitian.
void require_hermitian(TableReader& r, const std::string& key, const Matrix& m);

/// A number node's value, integer or not (the document was validated before).
double number_of(const toml::node& node);

/// What toml++ is given to parse: the input with every character outside ASCII in a comment made a
/// space (comments mean nothing), or a refusal naming the line of the first one elsewhere that
/// toml++ cannot classify safely, or that is outside a string (TOML allows none there).
struct TomlText {
  std::string text;
  int bad_line = 0;  ///< 0: none
  char32_t bad_char = 0;
  bool outside_strings = false;
};

/// The sanitizer: `input` as toml++ may safely be given it, or the first character it must refuse.
TomlText prepare_for_toml(const std::string& input);

}  // namespace heom::io::impl

#endif
