// heom::Fingerprint: what a computation was made with, as named entries, and the one digest (FNV-1a)
// that every check of "the same run" hashes: saved states against the solver loading them, the
// parts of a split hierarchy against each other, a checkpoint against the program resuming it.
#ifndef HEOM_CORE_FINGERPRINT_HPP
#define HEOM_CORE_FINGERPRINT_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace heom {

/// (name, value) pairs in a fixed order; long values (operators, exponent lists) are hashes of every
/// bit of their numbers (fingerprint_hash).
using Fingerprint = std::vector<std::pair<std::string, std::string>>;

/// FNV-1a over bytes: a digest, not a cryptographic hash.
class Digest {
 public:
  void add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) m_value = (m_value ^ p[i]) * 1099511628211ull;
  }
  void add(const std::string& text) { add(text.data(), text.size()); }
  /// Each entry's name and value, each with its length (so that no two lists digest alike by
  /// running into each other).
  void add(const Fingerprint& entries);
  template <class T>
  void add_value(const T& value) {
    add(&value, sizeof(T));
  }
  std::uint64_t value() const { return m_value; }
  /// value() as 16 hex digits.
  std::string hex() const;

 private:
  std::uint64_t m_value = 14695981039346656037ull;
};

/// 16 hex digits that name `text`: a fingerprint entry for a long value.
std::string fingerprint_hash(const std::string& text);

/// Throws heom::StateMismatchError naming the first entry of `expected` that `found` lacks or gives
/// another value, as "`what` was written for a different hamiltonian" or "... for depth 4, not 5".
/// Entries named "hamiltonian" and "baths" are hashes, named alone. The Solver's "parity" and
/// "importance_threshold" are written only where they differ from their defaults (so that older
/// states keep their fingerprints): one that `found` has and `expected` lacks is refused too.
void require_same_fingerprint(const Fingerprint& expected, const Fingerprint& found, const std::string& what);

}  // namespace heom

#endif
