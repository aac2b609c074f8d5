// SPDX-License-Identifier: Apache-2.0
#include "backend_contract.h"

#include <cstring>

#include "plugrt/plugins/plugin_metadata.h"

namespace plugrt::sdk::testing::kit {

/// Makes again, in the parent, the assertions the check's child reported; then says how
/// the child ended when it did not end normally.
void replay_child(const ChildOutcome& outcome, int timeout_seconds) {
  const std::string& bytes = outcome.message;
  size_t at = 0;
  auto get = [&](uint32_t* n) {
    if (at + sizeof(*n) > bytes.size()) return false;
    std::memcpy(n, bytes.data() + at, sizeof(*n));
    at += sizeof(*n);
    return true;
  };
  while (at < bytes.size()) {
    const auto type = static_cast<::testing::TestPartResult::Type>(bytes[at++]);
    uint32_t line = 0, file_size = 0, message_size = 0;
    if (!get(&line) || !get(&file_size) || at + file_size > bytes.size()) break;
    const std::string file = bytes.substr(at, file_size);
    at += file_size;
    if (!get(&message_size) || at + message_size > bytes.size()) break;
    const std::string message = bytes.substr(at, message_size);
    at += message_size;
    if (type == ::testing::TestPartResult::kSuccess) continue;
    GTEST_MESSAGE_AT_(file.empty() ? nullptr : file.c_str(), static_cast<int>(line), message.c_str(), type);
  }
  if (outcome.timed_out) {
    ADD_FAILURE() << "the check did not finish within " << timeout_seconds
                  << " seconds and was killed: a call into the backend hangs (--check-timeout sets the limit)";
  } else if (!outcome.exited) {
    ADD_FAILURE() << "the check " << outcome.describe()
                  << ": the backend crashed the process running it (what the check found before is above)."
                  << "\nFix: a backend must return an error, never crash";
  } else if (outcome.exit_code != 0) {
    ADD_FAILURE() << "the process running the check exited with code " << outcome.exit_code
                  << " before the check finished: the plugin called exit()";
  }
}

std::vector<std::string> backend_names() {
  Result<plugins::PluginFileInfo> info = plugins::inspect_plugin_file(config().plugin_path);
  if (!info.is_ok()) return {};
  return info->metadata.backends;
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BackendContract);
INSTANTIATE_TEST_SUITE_P(Plugin, BackendContract, ::testing::ValuesIn(backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

}  // namespace plugrt::sdk::testing::kit
