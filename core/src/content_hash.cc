// SPDX-License-Identifier: Apache-2.0
#include "plugrt/content_hash.h"

#include <xxhash.h>

#include <new>

namespace plugrt {

std::string ContentHash::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text(32, '0');
  for (int i = 0; i < 16; ++i) {
    text[static_cast<size_t>(15 - i)] = kDigits[(high >> (4 * i)) & 0xF];
    text[static_cast<size_t>(31 - i)] = kDigits[(low >> (4 * i)) & 0xF];
  }
  return text;
}

ContentHasher::ContentHasher() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
}

ContentHasher::~ContentHasher() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

ContentHasher& ContentHasher::add(Span<const uint8_t> bytes) {
  add(static_cast<uint64_t>(bytes.size()));
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
  return *this;
}

ContentHasher& ContentHasher::add(std::string_view text) {
  return add(Span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

ContentHasher& ContentHasher::add(uint64_t number) {
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(number >> (8 * i));
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), bytes, sizeof(bytes));
  return *this;
}

ContentHash ContentHasher::finish() const {
  const XXH128_hash_t hash = XXH3_128bits_digest(static_cast<const XXH3_state_t*>(state_));
  return {hash.high64, hash.low64};
}

ContentHash content_hash(Span<const uint8_t> bytes) {
  const XXH128_hash_t hash = XXH3_128bits(bytes.data(), bytes.size());
  return {hash.high64, hash.low64};
}

}  // namespace plugrt
