// SPDX-License-Identifier: Apache-2.0
#include "host_abi.h"

#include <cstdlib>

namespace plugrt::sdk::testing {

size_t HostAbi::execute_args_size() const {
  if (minor >= 8) return PLUGRT_EXECUTE_ARGS_SIZE_1_8;
  if (minor >= 7) return PLUGRT_EXECUTE_ARGS_SIZE_1_7;
  if (minor >= 6) return PLUGRT_EXECUTE_ARGS_SIZE_1_6;
  if (minor >= 2) return PLUGRT_EXECUTE_ARGS_SIZE_1_2;
  return PLUGRT_EXECUTE_ARGS_SIZE_1_0;
}

std::string HostAbi::describe() const {
  return "playing a host of plugin ABI " + text() + ": init args of " + std::to_string(init_args_size()) +
         " bytes, execute args of " + std::to_string(execute_args_size()) + ", preprocess args of " +
         std::to_string(preprocess_args_size()) + (offers_constants_by_name() ? "" : "; no constants by name") +
         (gives_graphs_with_symbols() ? "" : "; no graphs with symbols");
}

bool parse_host_abi(const std::string& text, HostAbi* abi) {
  const std::string major = std::to_string(PLUGRT_ABI_MAJOR) + ".";
  if (text.rfind(major, 0) != 0 || text.size() == major.size()) return false;
  char* end = nullptr;
  const std::string minor = text.substr(major.size());
  const unsigned long value = std::strtoul(minor.c_str(), &end, 10);
  if (*end != '\0' || minor[0] < '0' || minor[0] > '9' || value > PLUGRT_ABI_MINOR) return false;
  abi->minor = static_cast<uint32_t>(value);
  return true;
}

}  // namespace plugrt::sdk::testing
