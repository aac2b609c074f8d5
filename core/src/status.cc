// SPDX-License-Identifier: Apache-2.0
#include "plugrt/status.h"

namespace plugrt {

Error error_from_abi(plugrt_status status) {
  const Error error = static_cast<Error>(status);
  return to_string(error) == "Unknown" ? Error::kInternal : error;
}

std::string Status::to_string() const {
  std::string text(plugrt::to_string(code_));
  if (!message_.empty()) {
    text += ": ";
    text += message_;
  }
  return text;
}

Status Status::with_context(std::string_view context) const {
  if (is_ok()) return *this;
  std::string message(context);
  if (!message_.empty()) {
    message += ": ";
    message += message_;
  }
  return Status(code_, std::move(message));
}

}  // namespace plugrt
