// SPDX-License-Identifier: Apache-2.0
// Running the contract kit's binary from the SDK's tests, and the files they give it.
#ifndef PLUGRT_SDK_TEST_KIT_RUN_H_
#define PLUGRT_SDK_TEST_KIT_RUN_H_

#include <cstring>
#include <string>

#include "command_output.h"

namespace plugrt::kit_test {

using RunResult = testing::CommandOutput;

inline constexpr const char* kSkipped = "[  SKIPPED ]";
inline constexpr const char* kKitSkipped = "[ kit skipped ]";

inline RunResult run_kit(const std::string& plugin, const std::string& extra = "") {
  const std::string command = std::string(CONTRACT_RUNNER) + " --plugin " + plugin + " " + extra + " 2>&1";
  RunResult result = testing::run_shell(command);
  // ctest reads "[  SKIPPED ]" in a test's output as that test skipping, so the kit's own
  // skip lines, printed by a failing expectation, would hide the failure.
  for (size_t at = 0; (at = result.output.find(kSkipped, at)) != std::string::npos;) {
    result.output.replace(at, std::strlen(kSkipped), kKitSkipped);
  }
  return result;
}

inline std::string test_plugin(const char* name) {
  return std::string(SDK_TEST_PLUGIN_DIR) + "/libplugrt_" + name + ".so";
}

inline std::string model(const char* file) { return std::string(MODELS_DIR) + "/" + file; }

}  // namespace plugrt::kit_test

#endif  // PLUGRT_SDK_TEST_KIT_RUN_H_
