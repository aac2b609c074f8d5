// SPDX-License-Identifier: Apache-2.0
#include "plugrt/runtime/runtime_options.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace plugrt {
namespace {

/// The variable's value, or nullptr when unset. None in a set-uid or set-gid process:
/// there the invoking user's variables name no file and change no setting.
const char* variable(const char* name) { return secure_getenv(name); }

std::vector<std::string> comma_separated(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

Status refused(const char* name, const std::string& value, const char* what) {
  return Status(Error::kInvalidArgument, std::string(name) + "='" + value + "': " + what);
}

Status read_switch(const char* name, bool* value) {
  const char* text = variable(name);
  if (text == nullptr) return Status::ok();
  const std::string word(text);
  if (word == "1" || word == "true" || word == "yes" || word == "on") {
    *value = true;
  } else if (word.empty() || word == "0" || word == "false" || word == "no" || word == "off") {
    *value = false;
  } else {
    return refused(name, word, "expected 1, true, yes, on or 0, false, no, off");
  }
  return Status::ok();
}

Status read_count(const char* name, size_t* value) {
  const char* text = variable(name);
  if (text == nullptr || *text == '\0') return Status::ok();
  char* end = nullptr;
  errno = 0;
  const long long count = std::strtoll(text, &end, 10);
  if (*end != '\0' || errno != 0 || count < 0 || count > 4096) {
    return refused(name, text, "expected a whole number from 0 to 4096");
  }
  *value = static_cast<size_t>(count);
  return Status::ok();
}

}  // namespace

Result<RuntimeOptions> RuntimeOptions::from_environment() {
  RuntimeOptions options;
  if (const char* text = variable("PLUGRT_PLUGIN_ALLOW_LIST")) options.plugins.allow_list = text;
  if (const char* text = variable("PLUGRT_ISOLATE")) options.plugins.isolate = comma_separated(text);
  if (const char* text = variable("PLUGRT_PLACEMENT"); text != nullptr && *text != '\0') {
    options.load.placement = text;
    if (options.load.placement != "auto" && options.load.placement != "as-compiled") {
      return refused("PLUGRT_PLACEMENT", text, "expected auto or as-compiled");
    }
  }
  if (const char* text = variable("PLUGRT_CACHE_DIR")) options.load.cache_dir = text;
  options.log = variable("PLUGRT_LOG") != nullptr;
  for (Status status :
       {read_switch("PLUGRT_VERIFY", &options.load.verify), read_count("PLUGRT_NUM_THREADS", &options.load.threads)}) {
    if (!status.is_ok()) return status;
  }
  return options;
}

}  // namespace plugrt
