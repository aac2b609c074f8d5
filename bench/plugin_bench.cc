// SPDX-License-Identifier: Apache-2.0
// The costs DESIGN.md budgets for the plugin machinery:
//   - looking a backend up by name,
//   - discovering 100 plugin files (metadata only, no dlopen),
//   - loading and registering one plugin,
//   - one execute through the ABI, against a direct call of the same function and
//     against the same backend linked statically.
#include <benchmark/benchmark.h>
#include <dlpack/dlpack.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/registry.h"

extern "C" {
plugrt_status plugrt_static_entry_test_plugin(const plugrt_host_services*, const plugrt_plugin_descriptor**);
plugrt_status plugrt_static_entry_bench_sdk_offset(const plugrt_host_services*, const plugrt_plugin_descriptor**);
plugrt_status plugrt_test_offset_execute(plugrt_delegate_handle, const plugrt_execute_args*);
}

namespace plugrt {
namespace {

const std::string kGoodPlugin = std::string(PLUGRT_TEST_PLUGIN_DIR) + "/libplugrt_good.so";

plugins::SearchPathOptions only(const std::string& directory) {
  plugins::SearchPathOptions options;
  options.application_directories = {directory};
  options.use_environment = options.use_install_directory = options.use_executable_directory = false;
  return options;
}

std::string make_temp_directory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "plugrt_bench_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  return pattern;
}

// A quiet registry: duplicate-name warnings would otherwise dominate some runs.
std::shared_ptr<HostEnvironment> quiet() {
  auto environment = std::make_shared<HostEnvironment>();
  environment->set_log_sink(nullptr);
  return environment;
}

void BM_FindBackend(benchmark::State& state) {
  // 64 registrations of the static test plugin: one name with 64 providers, in
  // reverse rank order so every insertion lands at the front.
  Registry registry(quiet());
  for (int i = 0; i < 64; ++i) {
    PluginSource source;
    source.rank = 64 - i;
    if (!registry.register_plugin(&plugrt_static_entry_test_plugin, source).is_ok()) std::abort();
  }
  for (auto _ : state) {
    Result<RegisteredBackend> backend = registry.find_backend("offset");
    benchmark::DoNotOptimize(backend.is_ok());
  }
}
BENCHMARK(BM_FindBackend);

// 100 copies of the good plugin, each with its metadata's backend name rewritten
// (offset_000 ...) so discovery sees 100 distinct plugins, as in a real plugin folder.
struct HundredPlugins {
  HundredPlugins() : directory(make_temp_directory()) {
    std::ifstream in(kGoodPlugin, std::ios::binary);
    const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t magic = image.find(PLUGRT_METADATA_MAGIC);
    if (magic == std::string::npos) std::abort();
    const size_t names = magic + offsetof(plugrt_plugin_metadata, backend_names);
    for (int i = 0; i < 100; ++i) {
      char name[16];
      std::snprintf(name, sizeof(name), "offset_%03d", i);
      std::string copy = image;
      std::memcpy(&copy[names], name, std::strlen(name) + 1);
      std::ofstream(directory + "/libplugrt_good_" + std::to_string(i) + ".so", std::ios::binary) << copy;
    }
  }
  ~HundredPlugins() { std::filesystem::remove_all(directory); }
  std::string directory;
};

void BM_Discover100PluginFiles(benchmark::State& state) {
  HundredPlugins files;
  Registry registry(quiet());
  for (auto _ : state) {
    plugins::PluginLoader loader(registry, only(files.directory));
    loader.discover();
    benchmark::DoNotOptimize(loader.report().size());
  }
  plugins::PluginLoader loader(registry, only(files.directory));
  loader.discover();
  size_t accepted = 0;
  for (const plugins::PluginReport& report : loader.report()) {
    accepted += report.state == plugins::PluginReport::State::kAccepted;
  }
  state.counters["accepted"] = static_cast<double>(accepted);
}
BENCHMARK(BM_Discover100PluginFiles)->Unit(benchmark::kMillisecond);

void BM_LoadRegisterUnloadOnePlugin(benchmark::State& state) {
  Registry registry(quiet());
  plugins::PluginLoader loader(registry, only("/nonexistent"));
  for (auto _ : state) {
    if (!loader.load(kGoodPlugin).is_ok()) std::abort();
    if (!loader.unload(kGoodPlugin).is_ok()) std::abort();  // dlclose: nothing pins it
  }
}
BENCHMARK(BM_LoadRegisterUnloadOnePlugin)->Unit(benchmark::kMicrosecond);

// Execute on a tiny tensor, so the call overhead is what is measured.
struct ExecuteFixture {
  explicit ExecuteFixture(DelegateHandle made) : handle(std::move(made)) {
    tensor = DLTensor{data.data(), DLDevice{kDLCPU, 0}, 1, DLDataType{kDLFloat, 32, 1}, shape, nullptr, 0};
  }
  DelegateHandle handle;
  std::vector<float> data = std::vector<float>(4, 1.0f);
  int64_t shape[1] = {4};
  DLTensor tensor;
};

DelegateHandle init_offset(Registry& registry, const char* backend_name = "offset") {
  static const float offset = 0.0f;
  InitOptions options;
  options.blob = &offset;
  options.blob_size = sizeof(offset);
  Result<RegisteredBackend> backend = registry.find_backend(backend_name);
  if (!backend.is_ok()) std::abort();
  Result<DelegateHandle> handle = backend->init(options);
  if (!handle.is_ok()) std::abort();
  return std::move(handle).value();
}

void BM_ExecuteDirectCall(benchmark::State& state) {
  // The baseline: the static copy's own table, init and execute called directly,
  // with no registry, no DelegateHandle and no function pointer in between.
  PluginHostServices host(quiet(), "bench");
  const plugrt_plugin_descriptor* descriptor = nullptr;
  if (plugrt_static_entry_test_plugin(host.table(), &descriptor) != PLUGRT_STATUS_OK) std::abort();
  const plugrt_backend* table = descriptor->backends[0];
  static const float offset = 0.0f;
  plugrt_init_args init{};
  init.struct_size = sizeof(init);
  init.blob = &offset;
  init.blob_size = sizeof(offset);
  plugrt_delegate_handle raw = nullptr;
  if (table->init(table->context, host.table(), &init, &raw) != PLUGRT_STATUS_OK) std::abort();

  std::vector<float> data(4, 1.0f);
  int64_t shape[1] = {4};
  DLTensor tensor{data.data(), DLDevice{kDLCPU, 0}, 1, DLDataType{kDLFloat, 32, 1}, shape, nullptr, 0};
  const DLTensor* tensors[] = {&tensor};
  const plugrt_execute_args args{sizeof(args), tensors, 1, tensors, 1, 0, nullptr, 0, 0, nullptr, 0};
  for (auto _ : state) {
    benchmark::DoNotOptimize(plugrt_test_offset_execute(raw, &args));
  }
  table->destroy(raw);
}
BENCHMARK(BM_ExecuteDirectCall);

void BM_ExecuteStaticBackendThroughAbi(benchmark::State& state) {
  Registry registry(quiet());
  if (!registry.register_plugin(&plugrt_static_entry_test_plugin, PluginSource{}).is_ok()) {
    std::abort();
  }
  ExecuteFixture fixture(init_offset(registry));
  const DLTensor* tensors[] = {&fixture.tensor};
  for (auto _ : state) {
    benchmark::DoNotOptimize(fixture.handle.execute(tensors, tensors).is_ok());
  }
}
BENCHMARK(BM_ExecuteStaticBackendThroughAbi);

// The same backend written on the SDK (sdk_offset_backend.cc): against the one above, the
// cost of the SDK's adapter per call (its argument and device checks, Status, the
// exception guard).
void BM_ExecuteSdkBackendThroughAbi(benchmark::State& state) {
  Registry registry(quiet());
  if (!registry.register_plugin(&plugrt_static_entry_bench_sdk_offset, PluginSource{}).is_ok()) std::abort();
  ExecuteFixture fixture(init_offset(registry, "sdk_offset"));
  const DLTensor* tensors[] = {&fixture.tensor};
  for (auto _ : state) {
    benchmark::DoNotOptimize(fixture.handle.execute(tensors, tensors).is_ok());
  }
}
BENCHMARK(BM_ExecuteSdkBackendThroughAbi);

void BM_ExecutePluginThroughAbi(benchmark::State& state) {
  Registry registry(quiet());
  plugins::PluginLoader loader(registry, only("/nonexistent"));
  if (!loader.load(kGoodPlugin).is_ok()) std::abort();
  ExecuteFixture fixture(init_offset(registry));
  const DLTensor* tensors[] = {&fixture.tensor};
  for (auto _ : state) {
    benchmark::DoNotOptimize(fixture.handle.execute(tensors, tensors).is_ok());
  }
}
BENCHMARK(BM_ExecutePluginThroughAbi);

}  // namespace
}  // namespace plugrt

BENCHMARK_MAIN();
