// SPDX-License-Identifier: Apache-2.0
// The host the kit plays (--host-abi 1.N): the struct sizes a host of that ABI minor
// passes, and what it offers (core/ABI_CHANGELOG.md says what each minor added). The
// bytes of an args struct past the played size are filled with a pattern, so a plugin
// that reads a field the played host does not have reads nonsense, not convenient zeros.
#ifndef PLUGRT_SDK_CONTRACT_HOST_ABI_H_
#define PLUGRT_SDK_CONTRACT_HOST_ABI_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "plugrt/plugrt_abi.h"

namespace plugrt::sdk::testing {

/// The byte written past the played size of an args struct.
constexpr unsigned char kPastTheHostsSize = 0xA5;

struct HostAbi {
  uint32_t minor = PLUGRT_ABI_MINOR;

  size_t init_args_size() const { return minor >= 4 ? PLUGRT_INIT_ARGS_SIZE_1_4 : PLUGRT_INIT_ARGS_SIZE_1_0; }
  size_t preprocess_args_size() const {
    return minor >= 4 ? PLUGRT_PREPROCESS_ARGS_SIZE_1_4 : PLUGRT_PREPROCESS_ARGS_SIZE_1_0;
  }
  size_t execute_args_size() const;
  /// 1.4: constants offered to preprocess by name, and lent to init.
  bool offers_constants_by_name() const { return minor >= 4; }
  /// 1.5: graphs with symbols, to a backend with PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS.
  bool gives_graphs_with_symbols() const { return minor >= 5; }
  /// "1.N"
  std::string text() const { return std::to_string(PLUGRT_ABI_MAJOR) + "." + std::to_string(minor); }
  /// One line: what a host of this minor passes and offers.
  std::string describe() const;
};

/// Reads "1.N", N from 0 up to this kit's minor; false for anything else.
bool parse_host_abi(const std::string& text, HostAbi* abi);

/// Sets `args->struct_size` to `size` and fills the bytes after it with the pattern.
template <typename Args>
void play_size(Args* args, size_t size) {
  args->struct_size = size;
  if (size < sizeof(Args))
    std::memset(reinterpret_cast<unsigned char*>(args) + size, kPastTheHostsSize, sizeof(Args) - size);
}

}  // namespace plugrt::sdk::testing

#endif  // PLUGRT_SDK_CONTRACT_HOST_ABI_H_
