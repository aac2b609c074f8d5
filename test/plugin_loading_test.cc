// SPDX-License-Identifier: Apache-2.0
// Loading real plugin files: the good one, each broken one, lazy loading, unloading.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/registry.h"
#include "test_plugin_files.h"

namespace plugrt::plugins {
namespace {

using ::plugrt::testing::FloatTensor;
using ::plugrt::testing::is_mapped;
using ::plugrt::testing::LogCapture;
using ::plugrt::testing::only;
using ::plugrt::testing::plugin_file;
using ::plugrt::testing::TempDirectory;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

InitOptions offset_blob(const float& offset) {
  InitOptions options;
  options.blob = &offset;
  options.blob_size = sizeof(offset);
  return options;
}

// Runs backend `name` once on {1, 2, 3} with offset 0.5 and returns the output.
std::vector<float> run_offset(Registry& registry, const std::string& name) {
  Result<RegisteredBackend> backend = registry.find_backend(name);
  EXPECT_TRUE(backend.is_ok()) << backend.status().to_string();
  if (!backend.is_ok()) return {};
  const float offset = 0.5f;
  Result<DelegateHandle> handle = backend->init(offset_blob(offset));
  EXPECT_TRUE(handle.is_ok()) << handle.status().to_string();
  if (!handle.is_ok()) return {};
  FloatTensor in({1, 2, 3}), out({0, 0, 0});
  const DLTensor* inputs[] = {&in.tensor};
  const DLTensor* outputs[] = {&out.tensor};
  Status status = handle->execute(inputs, outputs);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return out.data;
}

TEST(PluginLoader, LoadsAGoodPluginAndRunsItsBackend) {
  Registry registry;
  PluginLoader loader(registry, only({}));
  Result<PluginId> id = loader.load(plugin_file("good"));
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();

  Result<RegisteredBackend> backend = registry.find_backend("offset");
  ASSERT_TRUE(backend.is_ok());
  EXPECT_EQ(backend->plugin().name, "good");
  EXPECT_EQ(backend->plugin().version, "1.0.0");
  EXPECT_EQ(backend->plugin().abi_major, PLUGRT_ABI_MAJOR);
  EXPECT_EQ(backend->plugin().abi_minor, PLUGRT_ABI_MINOR);
  EXPECT_THAT(backend->plugin().origin, HasSubstr("libplugrt_good.so"));
  EXPECT_EQ(backend->description(), "adds a constant; a plugrt test plugin");
  EXPECT_TRUE(backend->is_available().available);
  EXPECT_THAT(run_offset(registry, "offset"), ElementsAre(1.5f, 2.5f, 3.5f));
}

TEST(PluginLoader, LoadingTheSameFileTwiceGivesTheSamePlugin) {
  Registry registry;
  PluginLoader loader(registry, only({}));
  Result<PluginId> first = loader.load(plugin_file("good"));
  Result<PluginId> second = loader.load(plugin_file("good"));
  ASSERT_TRUE(first.is_ok() && second.is_ok());
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(registry.list_plugins().size(), 1u);
}

// One broken plugin file: how it is made, and what the refusal must say.
struct BrokenCase {
  const char* label;
  std::string (*make)(TempDirectory& dir);
  Error code;
  const char* reason;
};

std::string patched_good(TempDirectory& dir, size_t offset, std::string bytes, size_t truncate_to) {
  std::string image = ::plugrt::testing::read_file(plugin_file("good"));
  image.replace(offset, bytes.size(), bytes);
  if (truncate_to != 0) image.resize(truncate_to);
  return dir.write("libplugrt_patched.so", image);
}

const BrokenCase kBrokenCases[] = {
    {"NotAnElfFile", [](TempDirectory& d) { return d.write("libplugrt_text.so", "#!/bin/sh\necho hi\n"); },
     Error::kPluginInvalid, "not an ELF file"},
    {"TruncatedElf", [](TempDirectory& d) { return patched_good(d, 0, "", 300); }, Error::kPluginInvalid, "truncated"},
    {"WrongMachine",  // e_machine (offset 18) = EM_AARCH64 (183)
     [](TempDirectory& d) { return patched_good(d, 18, std::string("\xb7\x00", 2), 0); }, Error::kPluginInvalid,
     "AArch64"},
    {"MissingEntrySymbol", [](TempDirectory& d) { return d.add_plugin("no_entry"); }, Error::kPluginInvalid,
     "does not export its entry function plugrt_plugin_entry_v1"},
    {"AbiMajorMismatch", [](TempDirectory& d) { return d.add_plugin("abi_major_2"); }, Error::kPluginAbiMismatch,
     "built for plugin ABI 2."},
    {"RequiredFunctionNull", [](TempDirectory& d) { return d.add_plugin("null_execute"); }, Error::kPluginInvalid,
     "required function 'execute' is NULL"},
    {"StructSizeTooSmall", [](TempDirectory& d) { return d.add_plugin("small_struct"); }, Error::kPluginInvalid,
     "struct_size is 8 bytes"},
    {"EntryPointFails", [](TempDirectory& d) { return d.add_plugin("entry_fails"); }, Error::kNotSupported,
     "the test licence file is missing"},
    {"MetadataDisagreesWithEntry", [](TempDirectory& d) { return d.add_plugin("metadata_lies"); },
     Error::kPluginInvalid, "its metadata says plugin 'metadata_lies' with backends [not_honest]"},
};

void PrintTo(const BrokenCase& broken, std::ostream* out) { *out << broken.label; }

class BrokenPlugin : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(BrokenPlugin, IsRefusedWithItsReasonAndTheProcessKeepsWorking) {
  const BrokenCase& broken = GetParam();
  TempDirectory dir;
  const std::string path = broken.make(dir);

  Registry registry;
  PluginLoader loader(registry, only({}));
  Result<PluginId> loaded = loader.load(path);
  ASSERT_FALSE(loaded.is_ok());
  EXPECT_EQ(loaded.code(), broken.code) << loaded.status().to_string();
  EXPECT_THAT(loaded.status().message(), StartsWith(path));
  EXPECT_THAT(loaded.status().message(), HasSubstr(broken.reason));
  EXPECT_TRUE(registry.list_backends().empty());

  std::vector<PluginReport> report = loader.report();
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].state, PluginReport::State::kRefused);
  EXPECT_EQ(report[0].refusal.message(), loaded.status().message());

  // The refusal is remembered, not retried, and the good plugin still loads and runs.
  EXPECT_EQ(loader.load(path).status().message(), loaded.status().message());
  ASSERT_TRUE(loader.load(plugin_file("good")).is_ok());
  EXPECT_THAT(run_offset(registry, "offset"), ElementsAre(1.5f, 2.5f, 3.5f));
}

INSTANTIATE_TEST_SUITE_P(EachWayToBeBroken, BrokenPlugin, ::testing::ValuesIn(kBrokenCases),
                         [](const ::testing::TestParamInfo<BrokenCase>& param) {
                           return std::string(param.param.label);
                         });

TEST(PluginLoader, MetadataChecksRunNoPluginCode) {
  // A plugin refused on its metadata must never have been mapped.
  TempDirectory dir;
  const std::string path = dir.add_plugin("abi_major_2");
  Registry registry;
  PluginLoader loader(registry, only({dir.path()}));
  loader.discover();
  EXPECT_FALSE(loader.load(path).is_ok());
  EXPECT_FALSE(is_mapped(path));
}

TEST(PluginLoader, ABackendWhosePluginWasRefusedSaysWhyNotThatItIsNotInstalled) {
  TempDirectory dir;
  dir.add_plugin("abi_major_2", "future");  // libplugrt_future.so, backend "future", ABI 2.0
  Registry registry;
  PluginLoader loader(registry, only({dir.path()}));
  loader.discover();
  Result<RegisteredBackend> backend = registry.find_backend("future");
  ASSERT_FALSE(backend.is_ok());
  EXPECT_EQ(backend.code(), Error::kPluginAbiMismatch);
  EXPECT_THAT(backend.status().message(), AllOf(HasSubstr("backend 'future' is not available"),
                                                HasSubstr("built for plugin ABI 2."), HasSubstr("majors must match")));
  EXPECT_EQ(registry.find_backend("absent").code(), Error::kNotFound);  // nothing refused for it
}

TEST(PluginLoader, AcceptsAPluginBuiltForAnOlderMinor) {
  Registry registry;
  PluginLoader loader(registry, only({}));
  ASSERT_TRUE(loader.load(plugin_file("older_minor")).is_ok());
  Result<RegisteredBackend> backend = registry.find_backend("older");
  ASSERT_TRUE(backend.is_ok());
  EXPECT_EQ(backend->plugin().abi_minor, 0u);
  EXPECT_EQ(backend->description(), "");  // the 1.1 field is beyond its table
  EXPECT_THAT(run_offset(registry, "older"), ElementsAre(1.5f, 2.5f, 3.5f));
}

TEST(PluginLoader, AcceptsAPluginBuiltForANewerMinor) {
  Registry registry;
  PluginLoader loader(registry, only({}));
  ASSERT_TRUE(loader.load(plugin_file("newer_minor")).is_ok());
  Result<RegisteredBackend> backend = registry.find_backend("newer");
  ASSERT_TRUE(backend.is_ok());
  EXPECT_EQ(backend->plugin().abi_minor, PLUGRT_ABI_MINOR + 1u);
  EXPECT_EQ(backend->description(), "adds a constant; a plugrt test plugin");
  EXPECT_THAT(run_offset(registry, "newer"), ElementsAre(1.5f, 2.5f, 3.5f));
}

TEST(PluginLoader, ReportsAnUnavailableBackendWithItsReason) {
  Registry registry;
  PluginLoader loader(registry, only({}));
  ASSERT_TRUE(loader.load(plugin_file("unavailable")).is_ok());
  Result<RegisteredBackend> backend = registry.find_backend("offline");
  ASSERT_TRUE(backend.is_ok());
  Availability availability = backend->is_available();
  EXPECT_FALSE(availability.available);
  EXPECT_EQ(availability.reason, "no test accelerator is attached");
}

TEST(PluginLoader, InitFailureCarriesTheBackendsCodeAndMessage) {
  Registry registry;
  PluginLoader loader(registry, only({}));
  ASSERT_TRUE(loader.load(plugin_file("init_fails")).is_ok());
  Result<RegisteredBackend> backend = registry.find_backend("flaky");
  ASSERT_TRUE(backend.is_ok());
  const float offset = 1.0f;
  Result<DelegateHandle> handle = backend->init(offset_blob(offset));
  ASSERT_FALSE(handle.is_ok());
  EXPECT_EQ(handle.code(), Error::kDelegateUnavailable);
  EXPECT_THAT(handle.status().message(), HasSubstr("backend 'flaky'"));
  EXPECT_THAT(handle.status().message(), HasSubstr("libplugrt_init_fails.so"));
  EXPECT_THAT(handle.status().message(), HasSubstr("the test device stopped responding"));
  // The next backend works as before.
  ASSERT_TRUE(loader.load(plugin_file("good")).is_ok());
  EXPECT_THAT(run_offset(registry, "offset"), ElementsAre(1.5f, 2.5f, 3.5f));
}

TEST(PluginLoader, BackendErrorsOnBadBlobsAndArguments) {
  Registry registry;
  PluginLoader loader(registry, only({}));
  ASSERT_TRUE(loader.load(plugin_file("good")).is_ok());
  Result<RegisteredBackend> backend = registry.find_backend("offset");
  ASSERT_TRUE(backend.is_ok());

  const char short_blob[3] = {1, 2, 3};
  InitOptions bad_blob;
  bad_blob.blob = short_blob;
  bad_blob.blob_size = sizeof(short_blob);
  Result<DelegateHandle> refused = backend->init(bad_blob);
  EXPECT_EQ(refused.code(), Error::kDelegateInvalidCompatibility);
  EXPECT_THAT(refused.status().message(), HasSubstr("blob must be exactly one float32 offset"));

  const float offset = 0.0f;
  Result<DelegateHandle> handle = backend->init(offset_blob(offset));
  ASSERT_TRUE(handle.is_ok());
  FloatTensor in({1, 2}), out({0, 0});
  in.tensor.dtype = DLDataType{kDLInt, 32, 1};
  const DLTensor* inputs[] = {&in.tensor};
  const DLTensor* outputs[] = {&out.tensor};
  Status status = handle->execute(inputs, outputs);
  EXPECT_EQ(status.code(), Error::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tensors must be float32"));
  EXPECT_EQ(handle->execute(inputs, {}).code(), Error::kInvalidArgument);
}

TEST(PluginLoader, LoadsLazilyOnTheFirstLookup) {
  TempDirectory dir;
  const std::string path = dir.add_plugin("good");
  Registry registry;
  PluginLoader loader(registry, only({dir.path()}));
  loader.discover();

  std::vector<PluginReport> report = loader.report();
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].state, PluginReport::State::kAccepted);
  EXPECT_EQ(report[0].found_in, "application");
  ASSERT_TRUE(report[0].metadata.has_value());
  EXPECT_THAT(report[0].metadata->backends, ElementsAre("offset"));
  EXPECT_FALSE(is_mapped(path));
  EXPECT_TRUE(registry.list_backends().empty());

  EXPECT_THAT(run_offset(registry, "offset"), ElementsAre(1.5f, 2.5f, 3.5f));
  EXPECT_TRUE(is_mapped(path));
  EXPECT_EQ(loader.report()[0].state, PluginReport::State::kLoaded);
}

TEST(PluginLoader, UnknownBackendNamesWhatExists) {
  TempDirectory dir;
  dir.add_plugin("good");
  Registry registry;
  PluginLoader loader(registry, only({dir.path()}));
  loader.discover();
  ASSERT_TRUE(registry.find_backend("offset").is_ok());
  Result<RegisteredBackend> missing = registry.find_backend("npu");
  EXPECT_EQ(missing.code(), Error::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("no backend named 'npu'"));
  EXPECT_THAT(missing.status().message(), HasSubstr("known: offset"));
}

TEST(PluginLoader, ALiveHandlePinsItsPluginUntilDestroyed) {
  TempDirectory dir;
  const std::string path = dir.add_plugin("good");
  Registry registry;
  PluginLoader loader(registry, only({dir.path()}));
  loader.discover();
  const float offset = 2.0f;
  std::optional<DelegateHandle> handle;
  {  // after this block only the handle holds the plugin
    Result<RegisteredBackend> backend = registry.find_backend("offset");
    ASSERT_TRUE(backend.is_ok());
    Result<DelegateHandle> made = backend->init(offset_blob(offset));
    ASSERT_TRUE(made.is_ok());
    handle.emplace(std::move(made).value());
  }

  ASSERT_TRUE(loader.unload(path).is_ok());
  EXPECT_TRUE(registry.list_backends().empty());
  EXPECT_TRUE(is_mapped(path));
  EXPECT_TRUE(loader.report()[0].code_mapped);

  FloatTensor in({1}), out({0});
  const DLTensor* inputs[] = {&in.tensor};
  const DLTensor* outputs[] = {&out.tensor};
  ASSERT_TRUE(handle->execute(inputs, outputs).is_ok());
  EXPECT_EQ(out.data[0], 3.0f);

  handle.reset();
  EXPECT_FALSE(is_mapped(path));
  EXPECT_FALSE(loader.report()[0].code_mapped);
  // Unloaded is not refused: the next lookup loads it again.
  EXPECT_THAT(run_offset(registry, "offset"), ElementsAre(1.5f, 2.5f, 3.5f));
}

TEST(PluginLoader, TwoPluginsOfOneBackendNameFollowTheSearchOrder) {
  TempDirectory first_dir, second_dir;
  const std::string winner = first_dir.add_plugin("dup_b");  // search order beats file name
  const std::string loser = second_dir.add_plugin("dup_a");
  Registry registry;
  LogCapture log(registry.environment());
  PluginLoader loader(registry, only({first_dir.path(), second_dir.path()}));
  loader.discover();
  EXPECT_TRUE(log.contains("backend 'dup' is offered by both " + winner + " and " + loser));

  // dup_b adds 200, dup_a adds 100 (their private values).
  EXPECT_THAT(run_offset(registry, "dup"), ElementsAre(201.5f, 202.5f, 203.5f));
  std::vector<PluginReport> report = loader.report();
  ASSERT_EQ(report.size(), 2u);
  EXPECT_TRUE(report[0].shadowed_by.empty());
  ASSERT_EQ(report[1].shadowed_by.size(), 1u);
  EXPECT_EQ(report[1].shadowed_by[0], std::make_pair(std::string("dup"), winner));

  // Both registered: the registry warns too, and lists the loser as shadowed.
  ASSERT_TRUE(loader.load(loser).is_ok());
  EXPECT_TRUE(log.contains("backend 'dup' is provided by both " + winner + " and " + loser));
  std::vector<BackendInfo> listed = registry.list_backends();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].plugin.origin, winner);
  EXPECT_EQ(listed[1].shadowed_by, winner);
  EXPECT_THAT(run_offset(registry, "dup"), ElementsAre(201.5f, 202.5f, 203.5f));

  // Unloading the winner does not change the search order: the next lookup loads it
  // again. Once its file is gone and the path is rediscovered, the other takes over.
  ASSERT_TRUE(loader.unload(winner).is_ok());
  EXPECT_THAT(run_offset(registry, "dup"), ElementsAre(201.5f, 202.5f, 203.5f));
  ASSERT_TRUE(loader.unload(winner).is_ok());
  ASSERT_EQ(std::remove(winner.c_str()), 0);
  loader.discover();
  EXPECT_THAT(run_offset(registry, "dup"), ElementsAre(101.5f, 102.5f, 103.5f));
}

TEST(PluginLoader, PluginsWithConflictingPrivateSymbolsWorkSideBySide) {
  Registry registry;
  PluginLoader loader(registry, only({}));
  ASSERT_TRUE(loader.load(plugin_file("private_a")).is_ok());
  ASSERT_TRUE(loader.load(plugin_file("private_b")).is_ok());
  // Both define plugrt_test_private_value(); each must call its own.
  EXPECT_THAT(run_offset(registry, "private_a"), ElementsAre(2.5f, 3.5f, 4.5f));
  EXPECT_THAT(run_offset(registry, "private_b"), ElementsAre(3.5f, 4.5f, 5.5f));
}

TEST(PluginLoader, DiscoveryReportsEveryFileAndKeepsGoodOnesUsable) {
  TempDirectory dir;
  dir.write("libplugrt_garbage.so", std::string(4096, '\x7f'));
  dir.write("not_a_plugin_name.so", "ignored: the name does not match libplugrt_*.so");
  dir.add_plugin("abi_major_2");
  const std::string good = dir.add_plugin("good");
  Registry registry;
  PluginLoader loader(registry, only({dir.path()}));
  loader.discover();

  std::vector<PluginReport> report = loader.report();
  ASSERT_EQ(report.size(), 3u);  // sorted by file name
  EXPECT_THAT(report[0].path, HasSubstr("libplugrt_abi_major_2.so"));
  EXPECT_EQ(report[0].state, PluginReport::State::kRefused);
  EXPECT_EQ(report[0].refusal.code(), Error::kPluginAbiMismatch);
  EXPECT_THAT(report[1].path, HasSubstr("libplugrt_garbage.so"));
  EXPECT_EQ(report[1].state, PluginReport::State::kRefused);
  EXPECT_EQ(report[2].path, good);
  EXPECT_EQ(report[2].state, PluginReport::State::kAccepted);
  EXPECT_THAT(run_offset(registry, "offset"), ElementsAre(1.5f, 2.5f, 3.5f));
}

extern "C" plugrt_status plugrt_static_entry_test_plugin(const plugrt_host_services*, const plugrt_plugin_descriptor**);

TEST(PluginLoader, AStaticallyLinkedBackendRegistersThroughTheSameTable) {
  TempDirectory dir;
  const std::string path = dir.add_plugin("good");
  Registry registry;
  Result<PluginId> id = registry.register_plugin(&plugrt_static_entry_test_plugin, PluginSource{});
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();
  PluginLoader loader(registry, only({dir.path()}));
  loader.discover();

  // The built-in one was registered first at the same rank, so it wins: no dlopen.
  Result<RegisteredBackend> backend = registry.find_backend("offset");
  ASSERT_TRUE(backend.is_ok());
  EXPECT_EQ(backend->plugin().origin, "built-in");
  EXPECT_EQ(backend->plugin().name, "good_static");
  EXPECT_THAT(run_offset(registry, "offset"), ElementsAre(1.5f, 2.5f, 3.5f));
  EXPECT_FALSE(is_mapped(path));
}

TEST(SearchPath, FollowsTheDocumentedOrder) {
  ASSERT_EQ(setenv("PLUGRT_PLUGIN_PATH", "/env/one:/env/two/::/app", 1), 0);
  SearchPathOptions options;
  options.application_directories = {"/app", "/app2/"};
  std::vector<SearchDirectory> path = plugin_search_path(options);
  unsetenv("PLUGRT_PLUGIN_PATH");

  std::vector<std::string> directories, sources;
  for (const SearchDirectory& directory : path) {
    directories.push_back(directory.path);
    sources.push_back(directory.source);
  }
  ASSERT_EQ(directories.size(), 6u);
  EXPECT_THAT(std::vector<std::string>(directories.begin(), directories.begin() + 4),
              ElementsAre("/app", "/app2", "/env/one", "/env/two"));
  EXPECT_EQ(directories[4], install_plugin_directory());
  EXPECT_EQ(directories[5], executable_directory() + "/plugins");
  // Found from the executable (<prefix>/bin/..), not from the configured prefix.
  const std::string prefix = executable_directory().substr(0, executable_directory().rfind('/'));
  EXPECT_THAT(install_plugin_directory(), StartsWith(prefix + "/"));
  EXPECT_THAT(install_plugin_directory(), EndsWith("/plugrt/plugins"));
  EXPECT_THAT(sources, ElementsAre("application", "application", "PLUGRT_PLUGIN_PATH", "PLUGRT_PLUGIN_PATH", "install",
                                   "executable"));
}

TEST(SearchPath, ARelativeEntryIsMadeAbsoluteOnceAndSaysSo) {
  ASSERT_EQ(setenv("PLUGRT_PLUGIN_PATH", "plugins/here:/env/one", 1), 0);
  SearchPathOptions options;
  options.use_install_directory = options.use_executable_directory = false;
  std::vector<SearchDirectory> path = plugin_search_path(options);
  unsetenv("PLUGRT_PLUGIN_PATH");
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0].path, std::filesystem::current_path().string() + "/plugins/here");
  EXPECT_EQ(path[0].source, "PLUGRT_PLUGIN_PATH (a relative entry, made absolute)");
  EXPECT_EQ(path[1].path, "/env/one");
}

}  // namespace
}  // namespace plugrt::plugins
