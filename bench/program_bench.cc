// SPDX-License-Identifier: Apache-2.0
// The costs DESIGN.md budgets for programs:
//   - loading a program: constant in the size of its weights (1 MB vs 200 MB of
//     constants; mapped, against a copying read for contrast),
//   - the executor's overhead per instruction: a method of 100 calls to a backend whose
//     execute does nothing, against calling that execute directly 100 times.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "plugrt/method.h"
#include "plugrt/program.h"
#include "plugrt/program_builder.h"
#include "plugrt/registry.h"
#include "plugrt/sdk/plugin_export.h"

namespace plugrt {
namespace {

// ---- A backend whose execute does nothing --------------------------------------------

bool empty_is_available(void*, const plugrt_host_services*, plugrt_text_buffer*) { return true; }
plugrt_status empty_init(void*, const plugrt_host_services*, const plugrt_init_args*, plugrt_delegate_handle* handle) {
  static int token;
  *handle = reinterpret_cast<plugrt_delegate_handle>(&token);
  return PLUGRT_STATUS_OK;
}
plugrt_status empty_execute(plugrt_delegate_handle, const plugrt_execute_args*) { return PLUGRT_STATUS_OK; }
void empty_destroy(plugrt_delegate_handle) {}

const plugrt_backend kEmptyBackend = {
    PLUGRT_BACKEND_SIZE,
    PLUGRT_LITERAL("empty"),
    PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE,
    nullptr,
    empty_is_available,
    empty_init,
    empty_execute,
    empty_destroy,
    nullptr,
    PLUGRT_LITERAL("does nothing"),
};
const plugrt_backend* const kEmptyBackends[] = {&kEmptyBackend};
const plugrt_plugin_descriptor kEmptyPlugin = {
    PLUGRT_PLUGIN_DESCRIPTOR_SIZE,
    PLUGRT_ABI_MAJOR,
    PLUGRT_ABI_MINOR,
    PLUGRT_LITERAL("empty"),
    PLUGRT_LITERAL("1.0.0"),
    kEmptyBackends,
    1,
};
plugrt_status empty_entry(const plugrt_host_services*, const plugrt_plugin_descriptor** descriptor) {
  *descriptor = &kEmptyPlugin;
  return PLUGRT_STATUS_OK;
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("plugrt_bench_") + name + "_" + std::to_string(getpid()) + ".prt"))
      .string();
}

/// A program with `constant_bytes` of constants and one trivial method.
std::string write_program_with_constants(size_t constant_bytes) {
  ProgramBuilder builder;
  MethodBuilder& method = builder.add_method("forward");
  uint32_t x = method.add_value("x", DType::kFloat32, {1});
  uint32_t y = method.add_value("y", DType::kFloat32, {1});
  std::vector<uint8_t> weights(constant_bytes);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
  uint32_t w = method.add_constant("w", DType::kUInt8, {static_cast<int64_t>(constant_bytes)}, weights);
  method.add_input(x);
  method.add_output(y);
  method.add_instruction(method.add_delegate("empty:0", "empty", std::vector<uint8_t>{0}), {x, w}, {y});
  const std::string path = temp_path(std::to_string(constant_bytes).c_str());
  if (!builder.write(path).is_ok()) std::abort();
  return path;
}

void BM_ProgramLoad(benchmark::State& state) {
  const size_t megabytes = static_cast<size_t>(state.range(0));
  const bool mapped = state.range(1) != 0;
  const std::string path = write_program_with_constants(megabytes << 20);
  for (auto _ : state) {
    Result<Program> program = mapped ? Program::load(path) : Program::load_copy(path);
    if (!program.is_ok()) state.SkipWithError(program.status().message().c_str());
    benchmark::DoNotOptimize(program);
  }
  state.SetLabel(std::to_string(megabytes) + " MB of constants, " + (mapped ? "mapped" : "read"));
  std::remove(path.c_str());
}
BENCHMARK(BM_ProgramLoad)->Args({1, 1})->Args({200, 1})->Args({1, 0})->Args({200, 0})->Unit(benchmark::kMicrosecond);

constexpr int kCalls = 100;

/// One method of kCalls instructions on the empty backend, each over a 1-element tensor.
std::vector<uint8_t> hundred_call_program() {
  ProgramBuilder builder;
  MethodBuilder& method = builder.add_method("forward");
  uint32_t current = method.add_value("x", DType::kFloat32, {1});
  method.add_input(current);
  uint32_t delegate = method.add_delegate("empty:0", "empty", std::vector<uint8_t>{0});
  for (int i = 0; i < kCalls; ++i) {
    uint32_t next = method.add_value("t" + std::to_string(i), DType::kFloat32, {1});
    method.add_instruction(delegate, {current}, {next});
    current = next;
  }
  method.add_output(current);
  Result<std::vector<uint8_t>> file = builder.finish();
  if (!file.is_ok()) std::abort();
  return std::move(file).value();
}

void BM_ExecuteHundredEmptyCalls(benchmark::State& state) {
  Registry registry;
  if (!registry.register_plugin(empty_entry, PluginSource{}).is_ok()) std::abort();
  Result<Program> program = Program::from_bytes(hundred_call_program());
  if (!program.is_ok()) std::abort();
  Result<Method> method = Method::load(*program, "forward", registry);
  if (!method.is_ok() || method->report().delegates[0].backend != "empty") std::abort();
  for (auto _ : state) {
    Status status = method->execute();
    benchmark::DoNotOptimize(status);
  }
  state.SetItemsProcessed(state.iterations() * kCalls);
}
BENCHMARK(BM_ExecuteHundredEmptyCalls);

// The floor: the same execute function called directly, 100 times, with real arguments.
void BM_DirectHundredEmptyCalls(benchmark::State& state) {
  float in = 0, out = 0;
  int64_t shape = 1;
  DLTensor a{&in, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &shape, nullptr, 0};
  DLTensor b{&out, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, &shape, nullptr, 0};
  const DLTensor* inputs[] = {&a};
  const DLTensor* outputs[] = {&b};
  plugrt_execute_args args{sizeof(args), inputs, 1, outputs, 1, 0, nullptr, 0, 0, nullptr, 0};
  auto* volatile execute = &empty_execute;  // an indirect call, as through a table
  plugrt_delegate_handle handle = nullptr;
  empty_init(nullptr, nullptr, nullptr, &handle);
  for (auto _ : state) {
    for (int i = 0; i < kCalls; ++i) benchmark::DoNotOptimize(execute(handle, &args));
  }
  state.SetItemsProcessed(state.iterations() * kCalls);
}
BENCHMARK(BM_DirectHundredEmptyCalls);

}  // namespace
}  // namespace plugrt

BENCHMARK_MAIN();
