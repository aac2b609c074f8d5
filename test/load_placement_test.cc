// SPDX-License-Identifier: Apache-2.0
// Placement auto at load time, end to end: a program compiled for the portable backend
// only, loaded where real backend plugins are present (dlopen), placed again over them,
// and checked against PyTorch's outputs; plugins added and removed between loads; the
// blob cache's entries damaged, truncated, swapped, and a plugin file rebuilt.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler.h"
#include "npy.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/method.h"
#include "plugrt/placement/load_placer.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "scratch_directory.h"

namespace plugrt::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string model_path(const std::string& file) { return std::string(PLUGRT_MODELS_DIR) + "/" + file; }

/// The bundled tiny_cnn compiled over `registry` as `options` say, as a program.
Result<Program> compile_tiny_cnn(Registry& registry, const compiler::CompileOptions& options, const std::string& name) {
  PLUGRT_ASSIGN_OR_RETURN(compiler::CompiledModel compiled,
                          compiler::compile_onnx_file(model_path("tiny_cnn.onnx"), registry, options));
  return Program::from_bytes(compiled.program, name);
}

/// The first backend plugin built here: onednn, else xnnpack; empty when neither is.
std::string accelerated_plugin() {
  if (std::string onednn = PLUGRT_ONEDNN_PLUGIN_FILE; !onednn.empty()) return onednn;
  return PLUGRT_XNNPACK_PLUGIN_FILE;
}

class LoadPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plugin_ = accelerated_plugin();
    if (plugin_.empty()) GTEST_SKIP() << "neither the onednn nor the xnnpack plugin is built";
    scratch_.emplace("load_placement");
    dir_ = scratch_->path();
    ASSERT_TRUE(register_builtin_backends(registry_).is_ok());

    // Compiled where only the portable backend exists.
    Registry portable_only;
    ASSERT_TRUE(register_builtin_backends(portable_only).is_ok());
    compiler::CompileOptions options;
    options.backends = {"portable"};
    Result<Program> program = compile_tiny_cnn(portable_only, options, "tiny_cnn.prt");
    ASSERT_TRUE(program.is_ok()) << program.status().to_string();
    program_.emplace(std::move(program).value());

    Result<tools::NpyArray> input = tools::read_npy(model_path("tiny_cnn.input.npy"));
    Result<tools::NpyArray> expected = tools::read_npy(model_path("tiny_cnn.output.npy"));
    ASSERT_TRUE(input.is_ok() && expected.is_ok());
    input_ = std::move(input).value();
    expected_ = std::move(expected).value();
  }

  std::string cache_dir() const { return dir_ + "/cache"; }

  /// Loads "forward" over `registry` with `policy` (auto: with a fresh placer over
  /// cache_dir(), as a new process would).
  Result<Method> load(const Program& program, Registry& registry, PlacementPolicy policy = PlacementPolicy::kAuto) {
    placement::LoadPlacerOptions placer_options;
    placer_options.cache_directory = cache_dir();
    placement::LoadPlacer placer(placer_options);
    MethodOptions options;
    options.placement = policy;
    options.placer = &placer;
    return Method::load(program, "forward", registry, options);
  }

  /// Loads "forward" as load() does, runs it on the model's input and checks PyTorch's output.
  LoadReport load_and_check(const Program& program, PlacementPolicy policy = PlacementPolicy::kAuto) {
    Result<Method> method = load(program, registry_, policy);
    EXPECT_TRUE(method.is_ok()) << method.status().to_string();
    if (!method.is_ok()) return {};
    EXPECT_TRUE(method->set_input(0, tools::dltensor_view(input_)).is_ok());
    const Status status = method->execute();
    EXPECT_TRUE(status.is_ok()) << status.to_string();
    EXPECT_EQ(method->output_spec(0).shape, expected_.shape);
    const float* actual = static_cast<const float*>(method->output(0).data);
    double worst = 0;
    for (size_t i = 0; i < expected_.data.size() / sizeof(float); ++i) {
      float want;
      std::memcpy(&want, expected_.data.data() + i * sizeof(float), sizeof(float));
      worst = std::max(worst, static_cast<double>(std::fabs(actual[i] - want)));
    }
    EXPECT_LT(worst, 1e-4) << method->report().to_string();
    return method->report();
  }

  /// The plugin's backend name: the file is libplugrt_<name>.so.
  std::string plugin_backend() const {
    const std::string file = fs::path(plugin_).filename().string();
    return file.substr(std::strlen("libplugrt_"), file.size() - std::strlen("libplugrt_") - std::strlen(".so"));
  }

  std::vector<fs::path> cache_entries() const {
    std::vector<fs::path> entries;
    for (const fs::directory_entry& entry : fs::directory_iterator(cache_dir() + "/blobs")) {
      if (entry.path().extension() == ".blob") entries.push_back(entry.path());
    }
    return entries;
  }

  std::string plugin_;
  std::optional<ScratchDirectory> scratch_;
  std::string dir_;
  Registry registry_;
  std::optional<Program> program_;
  tools::NpyArray input_, expected_;
};

TEST_F(LoadPlacementTest, APortableProgramRunsOnAPluginPresentAtLoadAndMatchesPyTorch) {
  plugins::PluginLoader loader(registry_, plugins::SearchPathOptions::explicit_files_only());
  ASSERT_TRUE(loader.load(plugin_).is_ok());

  const LoadReport first = load_and_check(*program_);
  EXPECT_EQ(first.placement, "auto");
  ASSERT_EQ(first.delegates.size(), 1u) << first.to_string();
  EXPECT_EQ(first.delegates[0].backend, plugin_backend());
  EXPECT_EQ(first.delegates[0].blob_origin, "lowered");
  EXPECT_THAT(first.delegates[0].placement_reason, HasSubstr("lowest estimated cost"));

  // A second load (a new placer, as in a new process) lowers nothing.
  const LoadReport second = load_and_check(*program_);
  ASSERT_EQ(second.delegates.size(), 1u);
  EXPECT_EQ(second.delegates[0].backend, plugin_backend());
  EXPECT_EQ(second.delegates[0].blob_origin, "cache");
  const placement::BlobCacheStats stats = placement::BlobCache(cache_dir()).stats();
  EXPECT_GE(stats.hits, 1u);
  EXPECT_GE(stats.entries, 2u);  // the partition's blob and the placed method

  // As compiled, the same program stays on portable.
  Result<Method> as_compiled = Method::load(*program_, "forward", registry_);
  ASSERT_TRUE(as_compiled.is_ok());
  EXPECT_EQ(as_compiled->report().delegates[0].backend, "portable");
}

TEST_F(LoadPlacementTest, APluginDroppedIntoTheSearchPathIsUsedAndOneRemovedIsNot) {
  const std::string plugin_dir = dir_ + "/plugins";
  const std::string dropped_file = plugin_dir + "/" + fs::path(plugin_).filename().string();
  fs::create_directories(plugin_dir);
  plugins::SearchPathOptions search = plugins::SearchPathOptions::explicit_files_only();
  search.application_directories = {plugin_dir};
  plugins::PluginLoader loader(registry_, search);
  loader.discover();
  const LoadReport before = load_and_check(*program_);
  ASSERT_EQ(before.delegates.size(), 1u);
  EXPECT_EQ(before.delegates[0].backend, "portable");

  fs::copy_file(plugin_, dropped_file);
  loader.discover();  // reads metadata only
  EXPECT_FALSE(registry_.find_registered_backend(plugin_backend()).is_ok()) << "nothing is loaded yet";
  const LoadReport dropped = load_and_check(*program_);
  ASSERT_EQ(dropped.delegates.size(), 1u);
  EXPECT_EQ(dropped.delegates[0].backend, plugin_backend());
  EXPECT_TRUE(fs::equivalent(dropped.delegates[0].origin, dropped_file)) << dropped.delegates[0].origin;

  ASSERT_TRUE(loader.unload(dropped_file).is_ok());
  fs::remove(dropped_file);
  loader.discover();
  const LoadReport removed = load_and_check(*program_);
  ASSERT_EQ(removed.delegates.size(), 1u);
  EXPECT_EQ(removed.delegates[0].backend, "portable");
  EXPECT_EQ(removed.delegates[0].blob_origin, "program");  // over portable alone it is placed as compiled
  EXPECT_THAT(removed.delegates[0].placement_reason, HasSubstr("as the program is"));
}

TEST_F(LoadPlacementTest, DamagedTruncatedAndSwappedEntriesAreRebuiltNeverUsed) {
  plugins::PluginLoader loader(registry_, plugins::SearchPathOptions::explicit_files_only());
  ASSERT_TRUE(loader.load(plugin_).is_ok());
  load_and_check(*program_);
  std::vector<fs::path> entries = cache_entries();
  ASSERT_EQ(entries.size(), 2u);

  // One byte flipped in the middle of each entry.
  for (const fs::path& entry : entries) {
    std::fstream file(entry, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(static_cast<std::streamoff>(fs::file_size(entry) / 2));
    const char byte = static_cast<char>(file.get() ^ 0x5A);
    file.seekp(static_cast<std::streamoff>(fs::file_size(entry) / 2));
    file.put(byte);
  }
  const LoadReport damaged = load_and_check(*program_);
  ASSERT_EQ(damaged.delegates.size(), 1u);
  EXPECT_EQ(damaged.delegates[0].backend, plugin_backend());
  EXPECT_EQ(damaged.delegates[0].blob_origin, "lowered");
  EXPECT_GE(placement::BlobCache(cache_dir()).stats().rejected, 2u);

  // Truncated to half.
  for (const fs::path& entry : cache_entries()) fs::resize_file(entry, fs::file_size(entry) / 2);
  EXPECT_EQ(load_and_check(*program_).delegates.at(0).blob_origin, "lowered");

  // Each entry under the other's name (foreign): the key in the header gives it away.
  entries = cache_entries();
  ASSERT_EQ(entries.size(), 2u);
  const fs::path swap = entries[0].string() + ".swap";
  fs::rename(entries[0], swap);
  fs::rename(entries[1], entries[0]);
  fs::rename(swap, entries[1]);
  EXPECT_EQ(load_and_check(*program_).delegates.at(0).blob_origin, "lowered");

  // Rebuilt: the next load uses them.
  EXPECT_EQ(load_and_check(*program_).delegates.at(0).blob_origin, "cache");
}

TEST_F(LoadPlacementTest, APluginWhoseBuildChangesDoesNotReuseItsEntries) {
  const std::string copy = dir_ + "/" + fs::path(plugin_).filename().string();
  fs::copy_file(plugin_, copy);
  {
    plugins::PluginLoader loader(registry_, plugins::SearchPathOptions::explicit_files_only());
    ASSERT_TRUE(loader.load(copy).is_ok());
    EXPECT_EQ(load_and_check(*program_).delegates.at(0).blob_origin, "lowered");
    EXPECT_EQ(load_and_check(*program_).delegates.at(0).blob_origin, "cache");
    ASSERT_TRUE(loader.unload(copy).is_ok());
  }
  // Another build of the same plugin (here: the same code with a byte appended).
  {
    std::ofstream append(copy, std::ios::binary | std::ios::app);
    append.put('\0');
  }
  plugins::PluginLoader loader(registry_, plugins::SearchPathOptions::explicit_files_only());
  ASSERT_TRUE(loader.load(copy).is_ok());
  const LoadReport rebuilt = load_and_check(*program_);
  EXPECT_EQ(rebuilt.delegates.at(0).backend, plugin_backend());
  EXPECT_EQ(rebuilt.delegates.at(0).blob_origin, "lowered");
}

TEST_F(LoadPlacementTest, ASecondLoadLoadsOnlyThePluginsThePlacedMethodUses) {
  // Both plugins found on the search path: the first load examines (loads) both.
  if (std::string(PLUGRT_ONEDNN_PLUGIN_FILE).empty() || std::string(PLUGRT_XNNPACK_PLUGIN_FILE).empty()) {
    GTEST_SKIP() << "needs both the onednn and the xnnpack plugin";
  }
  const std::string plugin_dir = dir_ + "/plugins";
  fs::create_directories(plugin_dir);
  for (const std::string file : {PLUGRT_ONEDNN_PLUGIN_FILE, PLUGRT_XNNPACK_PLUGIN_FILE}) {
    fs::copy_file(file, plugin_dir + "/" + fs::path(file).filename().string());
  }
  plugins::SearchPathOptions search = plugins::SearchPathOptions::explicit_files_only();
  search.application_directories = {plugin_dir};
  std::string used;
  {
    plugins::PluginLoader loader(registry_, search);
    loader.discover();
    const LoadReport first = load_and_check(*program_);
    ASSERT_EQ(first.delegates.size(), 1u);
    EXPECT_EQ(first.delegates[0].blob_origin, "lowered");
    used = first.delegates[0].backend;
    EXPECT_NE(used, "portable");
    EXPECT_EQ(registry_.list_plugins().size(), 3u) << "the built-in portable backend and both plugins";
  }
  // A new process: a fresh registry and loader. The placed method comes from the cache
  // and only its own plugin is loaded.
  Registry fresh;
  ASSERT_TRUE(register_builtin_backends(fresh).is_ok());
  plugins::PluginLoader loader(fresh, search);
  loader.discover();
  Result<Method> second = load(*program_, fresh);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  ASSERT_EQ(second->report().delegates.size(), 1u);
  EXPECT_EQ(second->report().delegates[0].backend, used);
  EXPECT_EQ(second->report().delegates[0].blob_origin, "cache");
  std::vector<std::string> loaded;
  for (const PluginInfo& plugin : fresh.list_plugins()) loaded.push_back(fs::path(plugin.origin).filename().string());
  EXPECT_THAT(loaded, ::testing::UnorderedElementsAre("built-in", "libplugrt_" + used + ".so"));

  // A plugin file that changes (here: one more byte) names another placed method.
  const std::string other = used == "onednn" ? "xnnpack" : "onednn";
  {
    std::ofstream append(plugin_dir + "/libplugrt_" + other + ".so", std::ios::binary | std::ios::app);
    append.put('\0');
  }
  Result<Method> third = load(*program_, fresh);
  ASSERT_TRUE(third.is_ok()) << third.status().to_string();
  EXPECT_EQ(third->report().delegates.at(0).backend, used);
  EXPECT_EQ(third->report().delegates.at(0).blob_origin, "cache") << "its blob is cached, the placement is not";
  EXPECT_EQ(placement::BlobCache(cache_dir()).stats().entries, 3u) << "the blob and two placed methods";
}

TEST_F(LoadPlacementTest, AProgramCompiledForThePluginReusesItsOwnBlob) {
  plugins::PluginLoader loader(registry_, plugins::SearchPathOptions::explicit_files_only());
  ASSERT_TRUE(loader.load(plugin_).is_ok());
  compiler::CompileOptions options;
  options.backends = {plugin_backend()};
  Result<Program> program = compile_tiny_cnn(registry_, options, "tiny_cnn.accelerated.prt");
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  const LoadReport report = load_and_check(*program);
  ASSERT_EQ(report.delegates.size(), 1u);
  EXPECT_EQ(report.delegates[0].backend, plugin_backend());
  EXPECT_EQ(report.delegates[0].blob_origin, "program");
  // The cache keeps only that verdict, none of the program's blobs.
  const placement::BlobCacheStats stats = placement::BlobCache(cache_dir()).stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_LT(stats.bytes, 4096u);
  EXPECT_EQ(load_and_check(*program).delegates.at(0).blob_origin, "program");
  EXPECT_EQ(placement::BlobCache(cache_dir()).stats().hits, 1u);
}

TEST_F(LoadPlacementTest, WithoutAPlacerAutoIsRefusedAndWithoutFallbacksTheProgramRunsAsCompiled) {
  MethodOptions options;
  options.placement = PlacementPolicy::kAuto;
  Result<Method> refused = Method::load(*program_, "forward", registry_, options);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("needs a placer"));

  // A program with no portable graph of its delegate cannot be placed again.
  plugins::PluginLoader loader(registry_, plugins::SearchPathOptions::explicit_files_only());
  ASSERT_TRUE(loader.load(plugin_).is_ok());
  compiler::CompileOptions compile;
  compile.backends = {plugin_backend()};
  compile.fallback = false;
  Result<Program> program = compile_tiny_cnn(registry_, compile, "no_fallback.prt");
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  const LoadReport report = load_and_check(*program);
  EXPECT_EQ(report.placement, "as-compiled");
  EXPECT_THAT(report.placement_note, HasSubstr("keeps no portable graph"));
}

// A program whose blob names its weights in the fallback graph (ABI 1.4), run by the
// backend isolated in its own process: the constants cross with the blob, and the
// partition runs there, as compiled or placed at load (an isolated backend cannot lower,
// so the program keeps its placement).
TEST_F(LoadPlacementTest, ABlobNamingItsWeightsRunsInAnIsolatedBackend) {
  Registry compiling;
  ASSERT_TRUE(register_builtin_backends(compiling).is_ok());
  plugins::PluginLoader compile_loader(compiling, plugins::SearchPathOptions::explicit_files_only());
  ASSERT_TRUE(compile_loader.load(plugin_).is_ok());
  compiler::CompileOptions options;
  options.backends = {plugin_backend()};
  Result<Program> program = compile_tiny_cnn(compiling, options, "tiny_cnn.named.prt");
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  const std::vector<DelegateSummary> delegates = program->describe("forward")->delegates;
  const bool names =
      std::any_of(delegates.begin(), delegates.end(), [](const DelegateSummary& d) { return d.blob_names_constants; });
  if (plugin_backend() == "onednn") {
    EXPECT_TRUE(names) << "the oneDNN blob names its weights";
  }

  plugins::SearchPathOptions search = plugins::SearchPathOptions::explicit_files_only();
  search.isolated_backends = {plugin_backend()};
  search.isolation.backend_host = PLUGRT_BACKEND_HOST_FILE;
  plugins::PluginLoader loader(registry_, search);
  ASSERT_TRUE(loader.load(plugin_).is_ok());
  for (PlacementPolicy policy : {PlacementPolicy::kAsCompiled, PlacementPolicy::kAuto}) {
    const LoadReport report = load_and_check(*program, policy);
    size_t isolated = 0;
    for (const DelegatePlacement& d : report.delegates) {
      EXPECT_FALSE(d.fell_back) << d.reason;
      if (d.isolated) ++isolated;
    }
    EXPECT_GE(isolated, 1u) << report.to_string();
  }
}

}  // namespace
}  // namespace plugrt::testing
