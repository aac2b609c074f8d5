// SPDX-License-Identifier: Apache-2.0
// Small text helpers the plugrt subcommands share.
#ifndef PLUGRT_TOOLS_PLUGRT_TEXT_H_
#define PLUGRT_TOOLS_PLUGRT_TEXT_H_

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace plugrt::tools {

/// "a,b,,c" -> {"a", "b", "c"}: the non-empty parts between separators.
inline std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator)) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

/// {2, 3} -> "[2, 3]".
inline std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace plugrt::tools

#endif  // PLUGRT_TOOLS_PLUGRT_TEXT_H_
