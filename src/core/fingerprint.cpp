// Digests and comparisons of fingerprints.
#include "heom/core/fingerprint.hpp"

#include <algorithm>
#include <cstdio>

#include "heom/core/error.hpp"

namespace heom {

void Digest::add(const Fingerprint& entries) {
  for (const auto& [name, value] : entries) {
    add_value(name.size());
    add(name);
    add_value(value.size());
    add(value);
  }
}

std::string Digest::hex() const {
  char digits[17];
  std::snprintf(digits, sizeof(digits), "%016llx", static_cast<unsigned long long>(m_value));
  return digits;
}

std::string fingerprint_hash(const std::string& text) {
  Digest d;
  d.add(text);
  return d.hex();
}

namespace {

/// Entries whose values are shown in messages; the others are hashes, named alone.
bool readable(const std::string& name) { return name != "hamiltonian" && name != "baths"; }

}  // namespace

void require_same_fingerprint(const Fingerprint& expected, const Fingerprint& found, const std::string& what) {
  for (const auto& [name, value] : expected) {
    const std::string* other = nullptr;
    for (const auto& entry : found)
      if (entry.first == name) other = &entry.second;
    if (!other) throw StateMismatchError(what + " does not say which " + name + " it was written for");
    if (*other == value) continue;
    if (!readable(name)) throw StateMismatchError(what + " was written for a different " + name);
    throw StateMismatchError(what + " was written for " + name + " " + *other + ", not " + value);
  }
  for (const char* name : {"parity", "importance_threshold"}) {
    const auto named = [&](const auto& entry) { return entry.first == name; };
    const auto saved = std::find_if(found.begin(), found.end(), named);
    if (saved != found.end() && std::none_of(expected.begin(), expected.end(), named))
      throw StateMismatchError(what + " was written for " + name + " " + saved->second + ", not the default");
  }
}

}  // namespace heom
