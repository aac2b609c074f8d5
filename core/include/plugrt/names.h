// SPDX-License-Identifier: Apache-2.0
// The naming rule for plugins and backends, shared by every reader of names, and how
// messages list names.
#ifndef PLUGRT_NAMES_H_
#define PLUGRT_NAMES_H_

#include <string>
#include <string_view>
#include <vector>

namespace plugrt {

/// Longest plugin or backend name (the metadata record stores it with a NUL in 64 bytes).
inline constexpr size_t kMaxNameLength = 63;

/// True for 1 to 63 characters of [a-z0-9_]: names appear in file names
/// (libplugrt_<name>.so), command lines and program files.
constexpr bool is_valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

/// Names as a message lists them: "a, b, c" (empty for none).
inline std::string join_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace plugrt

#endif  // PLUGRT_NAMES_H_
