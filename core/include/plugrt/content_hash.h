// SPDX-License-Identifier: Apache-2.0
// A 128-bit content hash (XXH3, from libxxhash): fast enough to hash a model's weights
// on every load, and wide enough that two different contents never meet by chance. It
// is not a cryptographic hash: it finds identical bytes and detects damage, it does not
// authenticate (plugin trust uses SHA-256 for that).
#ifndef PLUGRT_CONTENT_HASH_H_
#define PLUGRT_CONTENT_HASH_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "plugrt/span.h"

namespace plugrt {

struct ContentHash {
  uint64_t high = 0;
  uint64_t low = 0;
  bool operator==(const ContentHash& other) const { return high == other.high && low == other.low; }
  bool operator!=(const ContentHash& other) const { return !(*this == other); }
  /// 32 lowercase hex digits.
  std::string hex() const;
};

/// Hashes a sequence of parts as one, each part's length included, so that ("ab", "c")
/// and ("a", "bc") differ.
class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher(const ContentHasher&) = delete;
  ContentHasher& operator=(const ContentHasher&) = delete;
  ContentHasher& add(Span<const uint8_t> bytes);
  ContentHasher& add(std::string_view text);
  ContentHasher& add(uint64_t number);
  ContentHash finish() const;

 private:
  void* state_;  // XXH3_state_t
};

ContentHash content_hash(Span<const uint8_t> bytes);

}  // namespace plugrt

#endif  // PLUGRT_CONTENT_HASH_H_
