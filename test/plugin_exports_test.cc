// SPDX-License-Identifier: Apache-2.0
// Every plugin built with plugrt_add_backend() exports only its entry function and its
// metadata record, and does not link the runtime: proven on the built files themselves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/plugins/plugin_metadata.h"
#include "plugrt/plugins/search_path.h"

namespace plugrt::plugins {
namespace {

using ::testing::AnyOf;
using ::testing::Each;
using ::testing::Not;
using ::testing::StartsWith;

TEST(PluginExports, OnlyTheEntryAndMetadataAndNoRuntimeLibrary) {
  std::vector<std::string> files = list_plugin_files(PLUGRT_TEST_PLUGIN_DIR);
  ASSERT_GE(files.size(), 10u) << "the test plugins were not built";
  files.push_back(PLUGRT_PORTABLE_PLUGIN_FILE);  // the portable backend, built as a plugin
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    Result<PluginFileInfo> info = inspect_plugin_file(file);
    ASSERT_TRUE(info.is_ok()) << info.status().to_string();
    EXPECT_THAT(info->exported_symbols,
                Each(AnyOf(StartsWith("plugrt_plugin_entry_v"), std::string(PLUGRT_METADATA_SYMBOL))));
    EXPECT_THAT(info->needed_libraries, Each(Not(StartsWith("libplugrt"))));
  }
}

}  // namespace
}  // namespace plugrt::plugins
