// SPDX-License-Identifier: Apache-2.0
// The costs of isolation (docs/plugins.md, "Isolated backends"):
//   - one delegate call on the "offset" test backend (6 floats) in process and isolated
//     in a plugrt-backend-host process: the difference is the per-call overhead (a socket
//     round trip and the copies through shared memory);
//   - from a crash in an isolated backend to the end of the same execute() on the portable
//     fallback: crash detection, reaping, the fallback's init and the re-run.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "plugrt/builtin_backends.h"
#include "plugrt/method.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "program_fixtures.h"
#include "test_plugin_files.h"

namespace plugrt {
namespace {

using testing::OffsetProgramOptions;

/// A registry whose loader sees the good and crashy test plugins, isolated or not.
struct Setup {
  explicit Setup(bool isolated) {
    dir.add_plugin("good");
    dir.add_plugin("crashy");
    (void)register_builtin_backends(registry);
    registry.environment().set_min_log_level(LogLevel::kError);
    plugins::SearchPathOptions options = testing::only({dir.path()});
    if (isolated) options.isolated_backends = {"all"};
    options.isolation.backend_host = PLUGRT_BACKEND_HOST_FILE;
    loader = std::make_unique<plugins::PluginLoader>(registry, options);
    loader->discover();
  }
  Result<Method> load(const std::string& backend, std::vector<CompileSpec> specs = {}) {
    OffsetProgramOptions options;
    options.backend = backend;
    options.compile_specs = std::move(specs);
    if (!program) {
      Result<Program> loaded = Program::from_bytes(testing::offset_program(options), backend + ".prt");
      if (!loaded.is_ok()) return loaded.status();
      program = std::make_unique<Program>(std::move(loaded).value());
    }
    return Method::load(*program, "forward", registry);
  }
  testing::TempDirectory dir;
  Registry registry;
  std::unique_ptr<plugins::PluginLoader> loader;
  std::unique_ptr<Program> program;
};

void BM_OffsetCall(benchmark::State& state) {
  Setup setup(state.range(0) != 0);
  Result<Method> method = setup.load("offset");
  if (!method.is_ok() || !testing::set_floats(*method, 0, {1, 2, 3, 4, 5, 6}).is_ok()) {
    state.SkipWithError(method.status().to_string().c_str());
    return;
  }
  for (auto _ : state) {
    Status status = method->execute();
    if (!status.is_ok()) state.SkipWithError(status.to_string().c_str());
  }
  state.SetLabel(state.range(0) != 0 ? "isolated" : "in process");
}
BENCHMARK(BM_OffsetCall)->Arg(0)->Arg(1)->UseRealTime();

void BM_CrashToFallbackResult(benchmark::State& state) {
  Setup setup(true);
  for (auto _ : state) {
    state.PauseTiming();
    auto method = std::make_unique<Result<Method>>(setup.load("crashy", {CompileSpec{"crash_on_call", {'1'}}}));
    if (!(*method).is_ok() || !testing::set_floats(**method, 0, {1, 2, 3, 4, 5, 6}).is_ok()) {
      state.SkipWithError("cannot load the crashy program");
      break;
    }
    state.ResumeTiming();
    Status status = (**method).execute();  // crashes on crashy, finishes on portable
    state.PauseTiming();
    if (!status.is_ok() || !(**method).report().delegates.at(0).fell_back) {
      state.SkipWithError("the call did not fall back");
    }
    method.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_CrashToFallbackResult)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace plugrt

BENCHMARK_MAIN();
