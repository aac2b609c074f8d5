// SPDX-License-Identifier: Apache-2.0
// The registry with in-process plugins: descriptor validation, ranking, providers.
#include "plugrt/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "plugrt/graph_builder.h"

namespace plugrt {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Return;
using ::testing::StartsWith;

// A plugin made in the test: its descriptor and backend table are plain members that
// each test bends into shape before registering it.
bool always_available(void*, const plugrt_host_services*, plugrt_text_buffer*) { return true; }
plugrt_status init_counter(void* context, const plugrt_host_services*, const plugrt_init_args*,
                           plugrt_delegate_handle* handle) {
  ++*static_cast<int*>(context);
  *handle = reinterpret_cast<plugrt_delegate_handle>(context);
  return PLUGRT_STATUS_OK;
}
plugrt_status execute_nothing(plugrt_delegate_handle, const plugrt_execute_args*) { return PLUGRT_STATUS_OK; }
void destroy_counter(plugrt_delegate_handle handle) { --*reinterpret_cast<int*>(handle); }
plugrt_status partition_nothing(void*, const plugrt_host_services*, plugrt_partition_args*) { return PLUGRT_STATUS_OK; }

struct FakePlugin {
  int live_handles = 0;
  plugrt_aot_backend aot{sizeof(plugrt_aot_backend), &partition_nothing, nullptr};
  plugrt_backend backend{
      sizeof(plugrt_backend), {"fake", 4},      0,       &live_handles, &always_available, &init_counter,
      &execute_nothing,       &destroy_counter, nullptr, {"a fake", 6}};
  const plugrt_backend* backends[2] = {&backend, &backend};
  plugrt_plugin_descriptor descriptor{
      sizeof(plugrt_plugin_descriptor), PLUGRT_ABI_MAJOR, PLUGRT_ABI_MINOR, {"fakes", 5}, {"0.1", 3}, backends, 1};
};

// The entry function reads the plugin to hand out from here (entries take no context).
thread_local FakePlugin* current_plugin = nullptr;
plugrt_status fake_entry(const plugrt_host_services*, const plugrt_plugin_descriptor** out) {
  *out = &current_plugin->descriptor;
  return PLUGRT_STATUS_OK;
}

Result<PluginId> register_fake(Registry& registry, FakePlugin& plugin, std::string origin = "fake", int64_t rank = 0) {
  current_plugin = &plugin;
  PluginSource source;
  source.origin = std::move(origin);
  source.rank = rank;
  return registry.register_plugin(&fake_entry, std::move(source));
}

TEST(Registry, RegistersFindsAndListsABackend) {
  Registry registry;
  FakePlugin plugin;
  Result<PluginId> id = register_fake(registry, plugin);
  ASSERT_TRUE(id.is_ok()) << id.status().to_string();

  Result<RegisteredBackend> backend = registry.find_backend("fake");
  ASSERT_TRUE(backend.is_ok());
  EXPECT_EQ(backend->name(), "fake");
  EXPECT_EQ(backend->description(), "a fake");
  EXPECT_EQ(backend->plugin().name, "fakes");
  EXPECT_EQ(backend->plugin().id, *id);
  EXPECT_FALSE(backend->has_aot());

  std::vector<BackendInfo> listed = registry.list_backends();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].name, "fake");
  EXPECT_EQ(listed[0].plugin.origin, "fake");
  EXPECT_FALSE(listed[0].shadowed_by.has_value());
}

TEST(Registry, HandlesOutliveUnregistrationAndDestroyOnce) {
  Registry registry;
  FakePlugin plugin;
  Result<PluginId> id = register_fake(registry, plugin);
  ASSERT_TRUE(id.is_ok());
  {
    Result<DelegateHandle> handle = registry.find_backend("fake")->init(InitOptions{});
    ASSERT_TRUE(handle.is_ok());
    EXPECT_EQ(plugin.live_handles, 1);
    ASSERT_TRUE(registry.unregister_plugin(*id).is_ok());
    EXPECT_EQ(registry.find_backend("fake").code(), Error::kNotFound);
    DelegateHandle moved = std::move(handle).value();
    EXPECT_TRUE(moved.execute({}, {}).is_ok());
    EXPECT_EQ(plugin.live_handles, 1);
  }
  EXPECT_EQ(plugin.live_handles, 0);
  EXPECT_EQ(registry.unregister_plugin(*id).code(), Error::kNotFound);
}

// One way to spoil a descriptor, and the words the refusal must contain.
struct BadDescriptor {
  const char* label;
  std::function<void(FakePlugin&)> spoil;
  Error code;
  const char* reason;
};

const BadDescriptor kBadDescriptors[] = {
    {"OtherMajor", [](FakePlugin& p) { p.descriptor.abi_major = PLUGRT_ABI_MAJOR + 1; }, Error::kPluginAbiMismatch,
     "plugin built for ABI 2." PLUGRT_ABI_STRINGIFY(
         PLUGRT_ABI_MINOR) ", this host implements ABI 1." PLUGRT_ABI_STRINGIFY(PLUGRT_ABI_MINOR)},
    {"DescriptorTooSmall", [](FakePlugin& p) { p.descriptor.struct_size = 16; }, Error::kPluginInvalid,
     "descriptor struct_size is 16 bytes"},
    {"BadPluginName",
     [](FakePlugin& p) {
       p.descriptor.name = {"Fakes!", 6};
     },
     Error::kPluginInvalid, "invalid plugin name 'Fakes!'"},
    {"EmptyVersion",
     [](FakePlugin& p) {
       p.descriptor.version = {"", 0};
     },
     Error::kPluginInvalid, "plugin version is empty"},
    {"NoBackends", [](FakePlugin& p) { p.descriptor.num_backends = 0; }, Error::kPluginInvalid, "provides no backends"},
    {"NullBackendArray", [](FakePlugin& p) { p.descriptor.backends = nullptr; }, Error::kPluginInvalid,
     "backends array is NULL"},
    {"SameBackendTwice", [](FakePlugin& p) { p.descriptor.num_backends = 2; }, Error::kPluginInvalid,
     "backend 'fake' is listed twice"},
    {"NullBackend", [](FakePlugin& p) { p.backends[0] = nullptr; }, Error::kPluginInvalid, "backend #0 is NULL"},
    {"BackendTooSmall", [](FakePlugin& p) { p.backend.struct_size = PLUGRT_BACKEND_SIZE_1_0; }, Error::kPluginInvalid,
     "a table for ABI 1." PLUGRT_ABI_STRINGIFY(PLUGRT_ABI_MINOR) " needs at least"},
    {"NullStringWithSize",
     [](FakePlugin& p) {
       p.backend.name = {nullptr, 4};
     },
     Error::kPluginInvalid, "backend #0 name has a NULL pointer"},
    {"HugeName",
     [](FakePlugin& p) {
       p.backend.name = {"x", 1u << 20};
     },
     Error::kPluginInvalid, "more than the 63 allowed"},
    {"NullInit", [](FakePlugin& p) { p.backend.init = nullptr; }, Error::kPluginInvalid,
     "backend 'fake': required function 'init' is NULL"},
    {"HalfAnAotTable", [](FakePlugin& p) { p.backend.aot = &p.aot; }, Error::kPluginInvalid,
     "needs both 'partition' and 'preprocess'"},
};

void PrintTo(const BadDescriptor& bad, std::ostream* out) { *out << bad.label; }

class RegistryRefuses : public ::testing::TestWithParam<BadDescriptor> {};

TEST_P(RegistryRefuses, ABrokenDescriptorNamingOriginAndReason) {
  Registry registry;
  FakePlugin plugin;
  GetParam().spoil(plugin);
  Result<PluginId> id = register_fake(registry, plugin, "/plugins/libplugrt_fakes.so");
  ASSERT_FALSE(id.is_ok());
  EXPECT_EQ(id.code(), GetParam().code);
  EXPECT_THAT(id.status().message(), StartsWith("/plugins/libplugrt_fakes.so: "));
  EXPECT_THAT(id.status().message(), HasSubstr(GetParam().reason));
  EXPECT_TRUE(registry.list_plugins().empty());
}

INSTANTIATE_TEST_SUITE_P(EachField, RegistryRefuses, ::testing::ValuesIn(kBadDescriptors),
                         [](const ::testing::TestParamInfo<BadDescriptor>& param) {
                           return std::string(param.param.label);
                         });

plugrt_status failing_entry(const plugrt_host_services* host, const plugrt_plugin_descriptor**) {
  host->report_error(host->context, PLUGRT_STATUS_DELEGATE_UNAVAILABLE, {"no device node", 14});
  return PLUGRT_STATUS_DELEGATE_UNAVAILABLE;
}
plugrt_status silent_failing_entry(const plugrt_host_services*, const plugrt_plugin_descriptor**) {
  return 12345;  // not a code of the enum
}

TEST(Registry, ReportsAFailingEntryWithItsMessage) {
  Registry registry;
  Result<PluginId> id = registry.register_plugin(&failing_entry, PluginSource{"/x.so", {}, 0});
  EXPECT_EQ(id.code(), Error::kDelegateUnavailable);
  EXPECT_EQ(id.status().message(), "/x.so: the plugin's entry function failed: no device node");

  Result<PluginId> silent = registry.register_plugin(&silent_failing_entry, PluginSource{});
  EXPECT_EQ(silent.code(), Error::kInternal);
  EXPECT_THAT(silent.status().message(), HasSubstr("failed with Internal"));
}

TEST(Registry, LowerRankWinsAndTheNextTakesOverOnUnregister) {
  Registry registry;
  std::vector<std::string> warnings;
  registry.environment().set_log_sink([&](LogLevel level, std::string_view, std::string_view text) {
    if (level == LogLevel::kWarning) warnings.emplace_back(text);
  });
  FakePlugin late_but_better, early;
  late_but_better.descriptor.name = {"better", 6};
  ASSERT_TRUE(register_fake(registry, early, "early.so", 5).is_ok());
  Result<PluginId> better = register_fake(registry, late_but_better, "better.so", 1);
  ASSERT_TRUE(better.is_ok());

  EXPECT_EQ(registry.find_backend("fake")->plugin().origin, "better.so");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("provided by both better.so and early.so; using better.so"));
  std::vector<BackendInfo> listed = registry.list_backends();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1].plugin.origin, "early.so");
  EXPECT_EQ(listed[1].shadowed_by, "better.so");

  ASSERT_TRUE(registry.unregister_plugin(*better).is_ok());
  EXPECT_EQ(registry.find_backend("fake")->plugin().origin, "early.so");
}

TEST(Registry, EqualRanksGoToTheFirstRegistered) {
  Registry registry;
  registry.environment().set_log_sink(nullptr);
  FakePlugin first, second;
  second.descriptor.name = {"second", 6};
  ASSERT_TRUE(register_fake(registry, first, "first.so").is_ok());
  ASSERT_TRUE(register_fake(registry, second, "second.so").is_ok());
  EXPECT_EQ(registry.find_backend("fake")->plugin().origin, "first.so");
}

class MockProvider : public BackendProvider {
 public:
  MOCK_METHOD(std::optional<int64_t>, candidate_rank, (std::string_view), (override));
  MOCK_METHOD(Result<RegisteredBackend>, provide, (std::string_view, Registry&), (override));
  MOCK_METHOD(std::optional<BackendSource>, candidate_source, (std::string_view), (override));
};

TEST(Registry, AsksProvidersOnlyForBetterRankedCandidates) {
  Registry registry;
  FakePlugin plugin;
  ASSERT_TRUE(register_fake(registry, plugin, "registered.so", 3).is_ok());
  MockProvider provider;
  registry.add_provider(&provider);

  // A worse candidate: the registered backend is returned, provide() is not called.
  EXPECT_CALL(provider, candidate_rank(std::string_view("fake"))).WillOnce(Return(7));
  EXPECT_CALL(provider, provide).Times(0);
  EXPECT_EQ(registry.find_backend("fake")->plugin().origin, "registered.so");
  ::testing::Mock::VerifyAndClearExpectations(&provider);

  // A better candidate that fails to load: the registered one still serves.
  EXPECT_CALL(provider, candidate_rank(std::string_view("fake"))).WillOnce(Return(1));
  EXPECT_CALL(provider, provide(std::string_view("fake"), ::testing::Ref(registry)))
      .WillOnce(Return(Result<RegisteredBackend>(Status(Error::kPluginInvalid, "bad.so: truncated"))));
  EXPECT_EQ(registry.find_backend("fake")->plugin().origin, "registered.so");
  ::testing::Mock::VerifyAndClearExpectations(&provider);

  // A name nothing has: the provider's refusal is the answer.
  EXPECT_CALL(provider, candidate_rank(std::string_view("npu"))).WillOnce(Return(0));
  EXPECT_CALL(provider, provide(std::string_view("npu"), ::testing::_))
      .WillOnce(Return(Result<RegisteredBackend>(Status(Error::kPluginInvalid, "npu.so: truncated"))));
  Result<RegisteredBackend> missing = registry.find_backend("npu");
  EXPECT_EQ(missing.code(), Error::kPluginInvalid);
  EXPECT_EQ(missing.status().message(), "npu.so: truncated");
  registry.remove_provider(&provider);
}

TEST(Registry, TellsWhereABackendWouldComeFromWithoutLoadingIt) {
  Registry registry;
  FakePlugin plugin;
  ASSERT_TRUE(register_fake(registry, plugin, "registered.so", 3).is_ok());
  MockProvider provider;
  registry.add_provider(&provider);
  EXPECT_CALL(provider, provide).Times(0);

  // A worse candidate: the registered plugin's file.
  EXPECT_CALL(provider, candidate_rank(std::string_view("fake"))).WillOnce(Return(7));
  std::optional<BackendSource> source = registry.backend_source("fake");
  ASSERT_TRUE(source.has_value());
  EXPECT_EQ(source->origin, "registered.so");
  EXPECT_FALSE(source->isolated);
  ::testing::Mock::VerifyAndClearExpectations(&provider);

  // A better one: the provider's answer, loading nothing.
  EXPECT_CALL(provider, candidate_rank(std::string_view("fake"))).WillOnce(Return(1));
  EXPECT_CALL(provider, candidate_source(std::string_view("fake")))
      .WillOnce(Return(std::optional<BackendSource>(BackendSource{"better.so", true})));
  source = registry.backend_source("fake");
  ASSERT_TRUE(source.has_value());
  EXPECT_EQ(source->origin, "better.so");
  EXPECT_TRUE(source->isolated);
  ::testing::Mock::VerifyAndClearExpectations(&provider);

  // A name nobody has.
  EXPECT_CALL(provider, candidate_rank(std::string_view("npu"))).WillOnce(Return(std::nullopt));
  EXPECT_FALSE(registry.backend_source("npu").has_value());
  registry.remove_provider(&provider);
}

// ---- Constants by name (ABI 1.4) with plugins of either age ------------------------------

/// Writes a one-byte blob; a 1.3 plugin knows nothing past the 1.0 args.
plugrt_status preprocess_like_1_3(void*, const plugrt_host_services* host, plugrt_preprocess_args* args) {
  args->blob = host->allocate(host->context, 1, 1);
  args->blob_size = 1;
  return PLUGRT_STATUS_OK;
}
/// Says its blob names constants whenever the args have room, offered or not.
plugrt_status preprocess_naming(void* context, const plugrt_host_services* host, plugrt_preprocess_args* args) {
  preprocess_like_1_3(context, host, args);
  if (args->struct_size >= PLUGRT_PREPROCESS_ARGS_SIZE_1_4) args->blob_flags |= PLUGRT_BLOB_NAMES_CONSTANTS;
  return PLUGRT_STATUS_OK;
}
/// The constants the last init was lent.
size_t lent_constants = 0;
plugrt_status init_counting_constants(void* context, const plugrt_host_services* host, const plugrt_init_args* args,
                                      plugrt_delegate_handle* handle) {
  lent_constants = args->struct_size >= PLUGRT_INIT_ARGS_SIZE_1_4 ? args->num_constants : 0;
  return init_counter(context, host, args, handle);
}

/// `plugin`, given ahead-of-time entries with this preprocess, registered and found.
Result<RegisteredBackend> register_with_preprocess(Registry& registry, FakePlugin& plugin,
                                                   decltype(plugrt_aot_backend::preprocess) preprocess) {
  plugin.aot.preprocess = preprocess;
  plugin.backend.aot = &plugin.aot;
  Result<PluginId> id = register_fake(registry, plugin);
  if (!id.is_ok()) return id.status();
  return registry.find_backend("fake");
}

TEST(RegisteredBackend, APluginOlderThan14IgnoresTheOfferAndItsBlobHoldsItsConstants) {
  Registry registry;
  FakePlugin plugin;
  plugin.descriptor.abi_minor = 3;
  Result<RegisteredBackend> backend = register_with_preprocess(registry, plugin, &preprocess_like_1_3);
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  const uint8_t graph[8] = {};
  Result<PreprocessedBlob> blob = backend->preprocess(graph, {}, PLUGRT_PREPROCESS_CONSTANTS_BY_NAME);
  ASSERT_TRUE(blob.is_ok()) << blob.status().to_string();
  EXPECT_EQ(blob->bytes.size(), 1u);
  EXPECT_FALSE(blob->names_constants);
}

TEST(RegisteredBackend, ABlobNamingConstantsThatWereNotOfferedIsRefused) {
  Registry registry;
  FakePlugin plugin;
  plugin.backend.init = &init_counting_constants;
  Result<RegisteredBackend> backend = register_with_preprocess(registry, plugin, &preprocess_naming);
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  const uint8_t graph[8] = {};
  Result<PreprocessedBlob> offered = backend->preprocess(graph, {}, PLUGRT_PREPROCESS_CONSTANTS_BY_NAME);
  ASSERT_TRUE(offered.is_ok()) << offered.status().to_string();
  EXPECT_TRUE(offered->names_constants);
  Result<std::vector<uint8_t>> not_offered = backend->preprocess(graph);
  EXPECT_EQ(not_offered.code(), Error::kPluginInvalid);
  EXPECT_THAT(not_offered.status().message(), HasSubstr("names constants, which were not offered"));

  // What the host lends reaches init.
  const float weight = 1;
  const plugrt_named_constant constants[] = {{{"w", 1}, &weight, sizeof(weight)}};
  InitOptions options;
  options.blob = graph;
  options.blob_size = 1;
  options.constants = Span<const plugrt_named_constant>(constants, 1);
  Result<DelegateHandle> handle = backend->init(options);
  ASSERT_TRUE(handle.is_ok());
  EXPECT_EQ(lent_constants, 1u);
}

// ---- Dimensions that vary (ABI 1.5) ------------------------------------------------

int partition_calls = 0;
plugrt_status partition_counting(void*, const plugrt_host_services*, plugrt_partition_args* args) {
  ++partition_calls;
  for (size_t n = 0; n < args->num_nodes; ++n) args->node_taken[n] = 1;
  return PLUGRT_STATUS_OK;
}
plugrt_status preprocess_one_byte(void*, const plugrt_host_services* host, plugrt_preprocess_args* args) {
  args->blob = host->allocate(host->context, 1, 1);
  args->blob_size = 1;
  return PLUGRT_STATUS_OK;
}

/// x[n] -> Relu -> y[n], n in 1..8: a graph IR version 2 buffer (with a symbol).
std::vector<uint8_t> graph_with_a_symbol() {
  GraphBuilder graph;
  const common::DimExpr n = common::DimExpr::symbol(graph.add_symbol("n", 1, 8));
  const ValueId x = graph.add_dynamic_value("x", DType::kFloat32, {n});
  const ValueId y = graph.add_dynamic_value("y", DType::kFloat32, {n});
  graph.add_node("Relu", "relu", {x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  return graph.finish();
}

/// `plugin` with a partition that takes every node and counts its calls.
Result<RegisteredBackend> register_counting(Registry& registry, FakePlugin& plugin) {
  plugin.aot.partition = &partition_counting;
  return register_with_preprocess(registry, plugin, &preprocess_one_byte);
}

TEST(RegisteredBackend, ABackendWithoutTheCapabilityIsGivenStaticGraphsOnly) {
  Registry registry;
  FakePlugin plugin;
  Result<RegisteredBackend> backend = register_counting(registry, plugin);
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  EXPECT_FALSE(backend->takes_varying_dimensions());
  const std::vector<uint8_t> graph = graph_with_a_symbol();
  partition_calls = 0;
  Result<std::vector<bool>> taken = backend->partition(graph, 1, {});
  ASSERT_TRUE(taken.is_ok()) << taken.status().to_string();
  EXPECT_THAT(*taken, ElementsAre(false));
  EXPECT_EQ(partition_calls, 0);
  Result<std::vector<uint8_t>> blob = backend->preprocess(graph);
  EXPECT_EQ(blob.code(), Error::kNotSupported);
  EXPECT_THAT(blob.status().message(), HasSubstr("takes static graphs only"));

  // A static graph still reaches it.
  GraphBuilder fixed;
  const ValueId x = fixed.add_value("x", DType::kFloat32, {4});
  const ValueId y = fixed.add_value("y", DType::kFloat32, {4});
  fixed.add_node("Relu", "relu", {x}, {y});
  fixed.add_input(x);
  fixed.add_output(y);
  Result<std::vector<bool>> static_taken = backend->partition(fixed.finish(), 1, {});
  ASSERT_TRUE(static_taken.is_ok());
  EXPECT_THAT(*static_taken, ElementsAre(true));
  EXPECT_EQ(partition_calls, 1);
}

TEST(RegisteredBackend, ABackendWithTheCapabilityIsGivenGraphsWithSymbols) {
  Registry registry;
  FakePlugin plugin;
  plugin.backend.capabilities = PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS;
  Result<RegisteredBackend> backend = register_counting(registry, plugin);
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  EXPECT_TRUE(backend->takes_varying_dimensions());
  partition_calls = 0;
  Result<std::vector<bool>> taken = backend->partition(graph_with_a_symbol(), 1, {});
  ASSERT_TRUE(taken.is_ok()) << taken.status().to_string();
  EXPECT_THAT(*taken, ElementsAre(true));
  EXPECT_EQ(partition_calls, 1);
  EXPECT_TRUE(backend->preprocess(graph_with_a_symbol()).is_ok());
}

TEST(RegisteredBackend, APluginOlderThan15CannotClaimTheCapability) {
  // The bit meant nothing before 1.5: a 1.4 plugin that sets it is not taken at its word.
  Registry registry;
  FakePlugin plugin;
  plugin.descriptor.abi_minor = 4;
  plugin.backend.capabilities = PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS | PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE;
  Result<RegisteredBackend> backend = register_counting(registry, plugin);
  ASSERT_TRUE(backend.is_ok()) << backend.status().to_string();
  EXPECT_FALSE(backend->takes_varying_dimensions());
  EXPECT_TRUE(backend->can_execute_concurrently());
  partition_calls = 0;
  Result<std::vector<bool>> taken = backend->partition(graph_with_a_symbol(), 1, {});
  ASSERT_TRUE(taken.is_ok());
  EXPECT_THAT(*taken, ElementsAre(false));
  EXPECT_EQ(partition_calls, 0);
}

}  // namespace
}  // namespace plugrt
