// SPDX-License-Identifier: Apache-2.0
// The portable backend built as a plugin (libplugrt_portable.so) is the same backend as
// the built-in one: same metadata, same ABI table, same results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

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

TEST(PortablePlugin, TakesAGraphWithSymbolsAndRunsItAtEachCallsShapes) {
  Registry registry;
  plugins::SearchPathOptions search;
  search.use_environment = search.use_install_directory = search.use_executable_directory = false;
  plugins::PluginLoader loader(registry, search);
  ASSERT_TRUE(loader.load(PLUGRT_PORTABLE_PLUGIN_FILE).is_ok());
  Result<RegisteredBackend> backend = registry.find_backend("portable");
  ASSERT_TRUE(backend.is_ok());
  EXPECT_TRUE(backend->takes_varying_dimensions());

  const std::vector<uint8_t> bytes = relu_flatten_graph(16);
  Result<std::vector<bool>> taken = backend->partition(bytes, 2);
  ASSERT_TRUE(taken.is_ok()) << taken.status().to_string();
  EXPECT_THAT(*taken, ElementsAre(true, true));
  Result<std::vector<uint8_t>> blob = backend->preprocess(bytes);
  ASSERT_TRUE(blob.is_ok()) << blob.status().to_string();
  InitOptions init;
  init.blob = blob->data();
  init.blob_size = blob->size();
  Result<DelegateHandle> handle = backend->init(init);
  ASSERT_TRUE(handle.is_ok()) << handle.status().to_string();

  for (int64_t length : {int64_t{3}, int64_t{16}, int64_t{1}}) {
    std::vector<float> in(static_cast<size_t>(4 * length)), out(static_cast<size_t>(4 * length), 9.0f);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 2 == 0 ? -1.0 * i : 1.0 * i);
    int64_t in_shape[2] = {length, 4};
    int64_t out_shape[1] = {4 * length};
    DLTensor in_view{in.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, in_shape, nullptr, 0};
    DLTensor out_view{out.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, out_shape, nullptr, 0};
    const DLTensor* inputs[] = {&in_view};
    const DLTensor* outputs[] = {&out_view};
    ASSERT_TRUE(handle->execute(inputs, outputs).is_ok()) << length;
    for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(out[i], std::max(0.0f, in[i]));
  }
  // Past the bound: refused, naming the input, the dimension and the bound.
  std::vector<float> big(17 * 4);
  int64_t big_shape[2] = {17, 4};
  int64_t big_out_shape[1] = {68};
  DLTensor big_view{big.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, big_shape, nullptr, 0};
  DLTensor big_out{big.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, big_out_shape, nullptr, 0};
  const DLTensor* inputs[] = {&big_view};
  const DLTensor* outputs[] = {&big_out};
  const Status refused = handle->execute(inputs, outputs);
  EXPECT_EQ(refused.code(), Error::kInvalidArgument);
  EXPECT_THAT(refused.message(),
              ::testing::HasSubstr("input 0 ('x') dimension 0 is 17, above 16, the largest 'n' may be"));
}

}  // namespace
}  // namespace plugrt::testing
