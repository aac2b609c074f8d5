// SPDX-License-Identifier: Apache-2.0
// What the application front door costs per call, on a one-node program (Relu over 16
// floats, on portable): Method::set_input + execute directly, against the same call
// through the C API of libplugrt.so (plugrt_session_run) and its C++ wrapper. Python's
// cost over the C API is measured by bench/python_overhead.py.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/placement/compile.h"
#include "plugrt/plugrt.hpp"
#include "plugrt/runtime/runtime.h"

namespace {

/// Writes the one-node program and returns its path.
std::string write_one_node_program() {
  plugrt::GraphBuilder graph;
  plugrt::ValueId x = graph.add_value("x", plugrt::DType::kFloat32, {16});
  plugrt::ValueId y = graph.add_value("y", plugrt::DType::kFloat32, {16});
  graph.add_node("Relu", "relu", {x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  plugrt::Registry registry;
  (void)plugrt::register_builtin_backends(registry);
  plugrt::placement::CompileOptions options;
  options.backends = {"portable"};
  plugrt::Result<plugrt::placement::CompiledModel> compiled =
      plugrt::placement::compile_graph(graph.finish(), registry, options);
  if (!compiled.is_ok()) return "";
  const std::string path =
      (std::filesystem::temp_directory_path() / ("plugrt_api_bench_" + std::to_string(getpid()) + ".prt")).string();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(compiled->program.data()),
             static_cast<std::streamsize>(compiled->program.size()));
  return path;
}

const std::string& program_path() {
  static const std::string path = write_one_node_program();
  return path;
}

struct Input {
  std::vector<float> values = std::vector<float>(16, -0.5f);
  int64_t shape[1] = {16};
  DLTensor tensor{values.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, nullptr, 0};
};

void BM_MethodExecute(benchmark::State& state) {
  plugrt::RuntimeOptions options;
  options.load.placement = "as-compiled";
  options.load.threads = 1;
  auto runtime = plugrt::Runtime::create(options);
  plugrt::Result<plugrt::Program> program = plugrt::Program::load(program_path());
  if (!runtime.is_ok() || !program.is_ok()) return state.SkipWithError("no program");
  plugrt::Result<plugrt::Method> method = (*runtime)->load_method(*program, "forward", options.load);
  if (!method.is_ok()) return state.SkipWithError(method.status().message().c_str());
  Input input;
  for (auto _ : state) {
    (void)method->set_input(0, input.tensor);
    (void)method->execute();
    benchmark::DoNotOptimize(method->output(0).data);
  }
}
BENCHMARK(BM_MethodExecute);

void BM_CApiRun(benchmark::State& state) {
  plugrt_runtime_options options;
  plugrt_runtime_options_init(&options);
  options.use_environment = 0;
  options.placement = "as-compiled";
  options.num_threads = 1;
  plugrt::api::Runtime runtime(&options);
  plugrt::api::Session session = runtime.open(program_path());
  Input input;
  const DLTensor* inputs[] = {&input.tensor};
  for (auto _ : state) {
    plugrt_error* error = plugrt_session_run(session.handle(), inputs, 1);
    if (error != nullptr) return state.SkipWithError(plugrt_error_message(error));
    benchmark::DoNotOptimize(session.output(0).data);
  }
}
BENCHMARK(BM_CApiRun);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove(program_path());
  return 0;
}
