// SPDX-License-Identifier: Apache-2.0
#include "plugrt/backend_options.h"

#include <algorithm>

#include "plugrt/names.h"

namespace plugrt {

namespace {

Status malformed(std::string_view text, const std::string& why) {
  return Status(Error::kInvalidArgument, "backend option '" + std::string(text) + "' is not NAME.KEY=VALUE: " + why);
}

}  // namespace

Status BackendOptions::add(std::string_view text) {
  const size_t dot = text.find('.');
  const size_t equals = text.find('=');
  if (dot == std::string_view::npos || equals == std::string_view::npos || equals < dot) {
    return malformed(text, "it needs a backend name, a dot, a key, '=' and a value");
  }
  const std::string_view backend = text.substr(0, dot);
  const std::string_view key = text.substr(dot + 1, equals - dot - 1);
  if (!is_valid_name(backend)) {
    return malformed(text, "'" + std::string(backend) + "' is not a backend name ([a-z0-9_], 1 to 63 characters)");
  }
  if (key.empty()) return malformed(text, "the key is empty");
  entries_.push_back(Entry{std::string(backend), std::string(key), std::string(text.substr(equals + 1))});
  return Status::ok();
}

Status BackendOptions::add_all(const std::vector<std::string>& texts) {
  for (const std::string& text : texts) PLUGRT_RETURN_IF_ERROR(add(text));
  return Status::ok();
}

std::vector<std::string> BackendOptions::backends() const {
  std::vector<std::string> names;
  for (const Entry& entry : entries_) {
    if (std::find(names.begin(), names.end(), entry.backend) == names.end()) names.push_back(entry.backend);
  }
  return names;
}

std::vector<plugrt_option> BackendOptions::for_backend(std::string_view backend) const {
  std::vector<plugrt_option> options;
  for (const Entry& entry : entries_) {
    if (entry.backend != backend) continue;
    options.push_back(plugrt_option{
        {entry.key.data(), entry.key.size()}, entry.value.empty() ? nullptr : entry.value.data(), entry.value.size()});
  }
  return options;
}

std::string BackendOptions::first_option_of(std::string_view backend) const {
  for (const Entry& entry : entries_) {
    if (entry.backend == backend) return entry.backend + "." + entry.key + "=" + entry.value;
  }
  return std::string(backend);
}

Status BackendOptions::check_backends(const std::vector<std::string>& known) const {
  for (const std::string& name : backends()) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return Status(Error::kNotFound, "backend option '" + first_option_of(name) + "' names backend '" + name +
                                          "', which is not among the backends found (" +
                                          (known.empty() ? "none" : join_names(known)) + ")");
    }
  }
  return Status::ok();
}

}  // namespace plugrt
