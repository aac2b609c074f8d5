// SPDX-License-Identifier: Apache-2.0
// The portable backend built as a plugin (libplugrt_portable.so) is the same backend as
// the built-in one: same metadata, same ABI table, same results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/method.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/plugins/plugin_metadata.h"
#include "program_fixtures.h"

namespace plugrt::testing {
namespace {

using ::testing::ElementsAre;

TEST(PortablePlugin, ItsMetadataNamesThePortableBackend) {
  Result<plugins::PluginFileInfo> info = plugins::inspect_plugin_file(PLUGRT_PORTABLE_PLUGIN_FILE);
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->metadata.name, "portable");
  EXPECT_THAT(info->metadata.backends, ElementsAre("portable"));
}

TEST(PortablePlugin, RunsTheSameProgramAsTheBuiltInBackend) {
  // Every delegate asks for a missing backend, so each runs on "portable": first the
  // plugin file's copy (a registry without built-ins), then the built-in one.
  OffsetProgramOptions options;
  options.backend = "absent";
  options.num_delegates = 3;
  Result<Program> program = Program::from_bytes(offset_program(options));
  ASSERT_TRUE(program.is_ok());

  std::vector<std::vector<float>> results;
  for (bool from_plugin : {true, false}) {
    Registry registry;
    plugins::SearchPathOptions search;
    search.use_environment = search.use_install_directory = search.use_executable_directory = false;
    plugins::PluginLoader loader(registry, search);
    if (from_plugin) {
      ASSERT_TRUE(loader.load(PLUGRT_PORTABLE_PLUGIN_FILE).is_ok());
    } else {
      ASSERT_TRUE(register_builtin_backends(registry).is_ok());
    }
    Result<Method> method = Method::load(*program, "forward", registry);
    ASSERT_TRUE(method.is_ok()) << method.status().to_string();
    const DelegatePlacement& placement = method->report().delegates[0];
    EXPECT_EQ(placement.backend, "portable");
    EXPECT_EQ(placement.origin, from_plugin ? std::string(PLUGRT_PORTABLE_PLUGIN_FILE) : "built-in");
    ASSERT_TRUE(set_floats(*method, 0, {0, 1, 2, 3, 4, 5}).is_ok());
    ASSERT_TRUE(method->execute().is_ok());
    results.push_back(output_floats(*method, 0));
  }
  EXPECT_THAT(results[0], ElementsAre(4.5f, 5.5f, 6.5f, 7.5f, 8.5f, 9.5f));
  EXPECT_EQ(results[0], results[1]);
}

}  // namespace
}  // namespace plugrt::testing
