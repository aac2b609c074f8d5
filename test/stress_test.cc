// SPDX-License-Identifier: Apache-2.0
// Stress: eight threads run methods of several programs over several backends (the
// built-in portable backend, the portable plugin, test plugins and, when built, the
// XNNPACK plugin; test plugins isolated in backend host processes, one of which crashes)
// and check every result, while another thread keeps unloading, reloading and
// rediscovering plugins. It runs for PLUGRT_STRESS_SECONDS (default 10):
// the work scales with time, not a count, so it fits a sanitizer build too.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "compiler.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/method.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "program_fixtures.h"
#include "test_plugin_files.h"

namespace plugrt::testing {
namespace {

using Clock = std::chrono::steady_clock;
using plugins::PluginLoader;
using plugins::SearchPathOptions;

constexpr int kWorkers = 8;
// Each worker replaces one of its method instances with a fresh load every this many
// runs, so plugins are looked up, loaded, initialised and released all the time.
constexpr int kReloadEvery = 16;
// Lower bounds that keep a slow (sanitizer) build meaningful; not timing assertions.
constexpr int kMinChurnCycles = 20;

double stress_seconds() {
  const char* text = std::getenv("PLUGRT_STRESS_SECONDS");
  const double seconds = text != nullptr ? std::atof(text) : 0;
  return seconds > 0 ? seconds : 10;
}

/// A program, the registry it runs in, and the answer it must give for an input.
struct StressProgram {
  StressProgram(std::string name_in, Program program_in, Registry* registry_in)
      : name(std::move(name_in)), program(std::move(program_in)), registry(registry_in) {}
  std::string name;
  Program program;
  Registry* registry;
  MethodOptions options;
  std::function<std::vector<float>(const std::vector<float>&)> expected;
  double tolerance = 0;  // relative; 0: bit-exact
  std::atomic<uint64_t> runs{0};
};

/// y = x + offset, applied `times` times in float32, as the delegates compute it.
std::function<std::vector<float>(const std::vector<float>&)> add_repeatedly(float offset, int times) {
  return [offset, times](const std::vector<float>& x) {
    std::vector<float> y = x;
    for (int t = 0; t < times; ++t) {
      for (float& v : y) v += offset;
    }
    return y;
  };
}

Program from_bytes(const std::vector<uint8_t>& bytes, const std::string& origin) {
  Result<Program> program = Program::from_bytes(bytes, origin);
  EXPECT_TRUE(program.is_ok()) << program.status().to_string();
  return std::move(program).value();
}

/// y = Relu(x W^T + b) for x [4, 16] and W [8, 16]: the graph and its answer in double.
struct DenseLayer {
  static constexpr int kRows = 4, kIn = 16, kOut = 8;
  std::vector<float> weights, bias;
  DenseLayer() {
    for (int i = 0; i < kOut * kIn; ++i) weights.push_back(static_cast<float>((i * 37) % 17 - 8) / 16.0f);
    for (int o = 0; o < kOut; ++o) bias.push_back(static_cast<float>(o) / 8.0f - 0.5f);
  }
  std::vector<uint8_t> graph() const {
    GraphBuilder g;
    ValueId x = g.add_value("x", DType::kFloat32, {kRows, kIn});
    ValueId w = g.add_constant_f32("w", {kOut, kIn}, weights);
    ValueId b = g.add_constant_f32("b", {kOut}, bias);
    ValueId h = g.add_value("h", DType::kFloat32, {kRows, kOut});
    ValueId y = g.add_value("y", DType::kFloat32, {kRows, kOut});
    g.add_node("Gemm", "fc", {x, w, b}, {h}, {Attribute::Int("transB", 1)});
    g.add_node("Relu", "relu", {h}, {y});
    g.add_input(x);
    g.add_output(y);
    return g.finish();
  }
  std::vector<float> operator()(const std::vector<float>& x) const {
    std::vector<float> y;
    for (int r = 0; r < kRows; ++r) {
      for (int o = 0; o < kOut; ++o) {
        double sum = bias[o];
        for (int i = 0; i < kIn; ++i) sum += double{x[r * kIn + i]} * weights[o * kIn + i];
        y.push_back(static_cast<float>(std::max(sum, 0.0)));
      }
    }
    return y;
  }
};

bool matches(const std::vector<float>& actual, const std::vector<float>& expected, double tolerance) {
  if (actual.size() != expected.size()) return false;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (tolerance == 0 ? actual[i] != expected[i]
                       : !(std::fabs(double{actual[i]} - expected[i]) <=
                           tolerance * std::max(1.0, std::fabs(double{expected[i]})))) {
      return false;
    }
  }
  return true;
}

TEST(Stress, EightThreadsRunProgramsWhilePluginsLoadAndUnload) {
  const double seconds = stress_seconds();

  // Registry A: the built-in portable backend and test plugins found in a directory.
  TempDirectory dir;
  const std::vector<std::string> churned = {dir.add_plugin("good"), dir.add_plugin("private_a"),
                                            dir.add_plugin("faulty")};
  const std::string idle = dir.add_plugin("private_b");  // only the churner uses it
  Registry registry;
  registry.environment().set_min_log_level(LogLevel::kError);
  ASSERT_TRUE(register_builtin_backends(registry).is_ok());
  PluginLoader loader(registry, only({dir.path()}));
  loader.discover();

  // Registry B: no built-ins; "portable" is the plugin file, loaded on first use.
  TempDirectory portable_dir;
  const std::string portable_plugin = portable_dir.path() + "/libplugrt_portable.so";
  std::filesystem::copy_file(PLUGRT_PORTABLE_PLUGIN_FILE, portable_plugin);
  Registry plugin_registry;
  plugin_registry.environment().set_min_log_level(LogLevel::kError);
  PluginLoader plugin_loader(plugin_registry, only({portable_dir.path()}));
  plugin_loader.discover();

  // Registry C: plugins run isolated, in plugrt-backend-host processes; the crashy one
  // crashes on its fifth call on each handle, and that call finishes on the fallback.
  TempDirectory isolated_dir;
  isolated_dir.add_plugin("good");
  isolated_dir.add_plugin("crashy");
  Registry isolated_registry;
  isolated_registry.environment().set_min_log_level(LogLevel::kError);
  ASSERT_TRUE(register_builtin_backends(isolated_registry).is_ok());
  SearchPathOptions isolated_options = only({isolated_dir.path()});
  isolated_options.isolated_backends = {"all"};
  isolated_options.isolation.backend_host = PLUGRT_BACKEND_HOST_FILE;
  PluginLoader isolated_loader(isolated_registry, isolated_options);
  isolated_loader.discover();

  std::vector<std::unique_ptr<StressProgram>> programs;
  auto add = [&](std::string name, const std::vector<uint8_t>& bytes, Registry& in,
                 std::function<std::vector<float>(const std::vector<float>&)> expected) {
    auto program = std::make_unique<StressProgram>(name, from_bytes(bytes, name), &in);
    program->expected = std::move(expected);
    programs.push_back(std::move(program));
  };
  OffsetProgramOptions offset;
  offset.offset = 1.5f;
  offset.num_delegates = 3;
  add("offset plugin", offset_program(offset), registry, add_repeatedly(1.5f, 3));
  OffsetProgramOptions private_a;
  private_a.backend = "private_a";  // adds its offset plus its private value, 1
  private_a.offset = 0.25f;
  private_a.num_delegates = 2;
  add("private_a plugin", offset_program(private_a), registry, add_repeatedly(1.25f, 2));
  OffsetProgramOptions faulty;  // no fault asked for: serialised handles, right answers
  faulty.backend = "faulty";
  faulty.offset = 2.0f;
  add("faulty plugin, no faults", offset_program(faulty), registry, add_repeatedly(2.0f, 1));
  OffsetProgramOptions absent;  // every delegate runs on its portable fallback
  absent.backend = "absent";
  absent.offset = 0.5f;
  absent.num_delegates = 2;
  add("built-in portable", offset_program(absent), registry, add_repeatedly(0.5f, 2));
  absent.offset = 0.75f;
  add("portable plugin", offset_program(absent), plugin_registry, add_repeatedly(0.75f, 2));
  offset.offset = 0.125f;
  add("offset plugin, isolated", offset_program(offset), isolated_registry, add_repeatedly(0.125f, 3));
  OffsetProgramOptions crashy;
  crashy.backend = "crashy";
  crashy.offset = 0.375f;
  crashy.compile_specs = {CompileSpec{"crash_on_call", {'5'}}};
  add("crashy plugin, isolated", offset_program(crashy), isolated_registry, add_repeatedly(0.375f, 1));

  // XNNPACK, when built: a dense layer compiled for it through its own partition and
  // preprocess. It is loaded once and stays registered; the churner leaves it alone.
  const std::string xnnpack_file = PLUGRT_XNNPACK_PLUGIN_FILE;
  std::string xnnpack_note = "skipped: the XNNPACK plugin is not built";
  if (!xnnpack_file.empty() && std::filesystem::exists(xnnpack_file)) {
    Result<PluginId> loaded = loader.load(xnnpack_file);
    ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
    DenseLayer layer;
    compiler::CompileOptions compile;
    compile.backends = {"xnnpack"};
    Result<compiler::CompiledModel> compiled = compiler::compile_graph(layer.graph(), registry, compile);
    ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
    add("xnnpack plugin", compiled->program, registry, layer);
    programs.back()->tolerance = 1e-4;
    programs.back()->options.num_threads = 1;
    xnnpack_note = "included";
  }
  if (xnnpack_note != "included") std::printf("[ stress   ] XNNPACK part %s\n", xnnpack_note.c_str());

  // Every program runs on the backend it names (or its fallback) before the race starts.
  for (const auto& p : programs) {
    Result<Method> method = Method::load(p->program, "forward", *p->registry, p->options);
    ASSERT_TRUE(method.is_ok()) << p->name << ": " << method.status().to_string();
    const DelegatePlacement& placement = method->report().delegates.at(0);
    if (p->name == "xnnpack plugin") {
      EXPECT_EQ(placement.backend, "xnnpack");
    } else if (p->name == "portable plugin") {
      EXPECT_EQ(placement.origin, portable_plugin);
    } else if (p->name == "built-in portable") {
      EXPECT_EQ(placement.origin, "built-in");
    } else if (p->name.find("isolated") != std::string::npos) {
      EXPECT_TRUE(placement.isolated) << p->name;
    }
  }

  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> executes{0}, loads{0}, churn_cycles{0}, unloads{0};
  std::atomic<int> failures{0};
  std::mutex failure_mutex;
  std::string first_failure;
  auto fail = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(failure_mutex);
    if (failures++ == 0) first_failure = what;
  };

  auto worker = [&](int seed) {
    std::vector<std::optional<Method>> methods(programs.size());
    for (uint64_t run = 0;; ++run) {
      const size_t index = (run + static_cast<uint64_t>(seed)) % programs.size();
      // Stop after a whole round, once the time is up and the churner has done enough.
      if (index == 0 && run >= programs.size() && Clock::now() >= deadline && churn_cycles.load() >= kMinChurnCycles) {
        break;
      }
      StressProgram& p = *programs[index];
      std::optional<Method>& method = methods[index];
      if (!method || (run / programs.size()) % kReloadEvery == static_cast<uint64_t>(seed) % kReloadEvery) {
        method.reset();  // destroyed first, so its plugin may go before the reload
        Result<Method> loaded = Method::load(p.program, "forward", *p.registry, p.options);
        loads++;
        if (!loaded.is_ok()) {
          fail(p.name + ": load: " + loaded.status().to_string());
          continue;
        }
        method.emplace(std::move(loaded).value());
      }
      std::vector<float> x(method->input_spec(0).num_bytes() / sizeof(float));
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((seed * 131 + run * 7 + i) % 64) / 8.0f - 4.0f;
      if (Status status = set_floats(*method, 0, x); !status.is_ok()) {
        fail(p.name + ": set_input: " + status.to_string());
        continue;
      }
      Status status = method->execute();
      executes++;
      p.runs++;
      if (!status.is_ok()) {
        fail(p.name + ": execute: " + status.to_string());
      } else if (!matches(output_floats(*method, 0), p.expected(x), p.tolerance)) {
        fail(p.name + ": wrong result");
      }
    }
  };

  // Unloads every test plugin and the portable plugin (the registry forgets them; live
  // handles keep their code until they go), loads and releases an idle plugin, and
  // rescans the directory, over and over.
  auto churner = [&] {
    while (!stop.load()) {
      for (const std::string& path : churned) {
        if (loader.unload(path).is_ok()) unloads++;  // NotFound when not loaded now: fine
      }
      if (plugin_loader.unload(portable_plugin).is_ok()) unloads++;

      Result<PluginId> id = loader.load(idle);
      if (!id.is_ok()) {
        fail("load " + idle + ": " + id.status().to_string());
      } else {
        const float idle_offset = 0.5f;
        InitOptions init;
        init.blob = &idle_offset;
        init.blob_size = sizeof(idle_offset);
        Result<RegisteredBackend> backend = registry.find_backend("private_b");
        Result<DelegateHandle> handle =
            backend.is_ok() ? backend->init(init) : Result<DelegateHandle>(backend.status());
        if (!handle.is_ok()) {
          fail("private_b: " + handle.status().to_string());
        } else {
          FloatTensor in({1, 2}), out({0, 0});
          const DLTensor* inputs[] = {&in.tensor};
          const DLTensor* outputs[] = {&out.tensor};
          // private_b adds its offset and its private value, 2.
          if (!handle->execute(inputs, outputs).is_ok() || out.data[0] != 3.5f || out.data[1] != 4.5f) {
            fail("private_b: wrong result");
          }
        }
        if (Status status = loader.unload(idle); !status.is_ok()) fail("unload " + idle + ": " + status.to_string());
      }
      const uint64_t cycle = churn_cycles++;
      if (cycle % 8 == 0) {
        loader.discover();
        plugin_loader.discover();
        (void)loader.report();
        (void)registry.list_backends();
      }
      std::this_thread::yield();
    }
  };

  const Clock::time_point start = Clock::now();
  std::thread churn(churner);
  std::vector<std::thread> workers;
  for (int i = 0; i < kWorkers; ++i) workers.emplace_back(worker, i);
  for (std::thread& thread : workers) thread.join();
  stop = true;
  churn.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();

  const uint64_t operations = executes.load() + loads.load();
  RecordProperty("threads", kWorkers);
  RecordProperty("seconds", std::to_string(elapsed));
  RecordProperty("operations", std::to_string(operations));
  RecordProperty("executes", std::to_string(executes.load()));
  RecordProperty("method_loads", std::to_string(loads.load()));
  RecordProperty("churn_cycles", std::to_string(churn_cycles.load()));
  RecordProperty("xnnpack", xnnpack_note);
  std::printf(
      "[ stress   ] %d threads, %.1f s: %llu operations (%llu executes, %llu method loads), "
      "%llu churn cycles (%llu plugin unloads), %zu programs, XNNPACK %s\n",
      kWorkers, elapsed, static_cast<unsigned long long>(operations), static_cast<unsigned long long>(executes.load()),
      static_cast<unsigned long long>(loads.load()), static_cast<unsigned long long>(churn_cycles.load()),
      static_cast<unsigned long long>(unloads.load()), programs.size(), xnnpack_note.c_str());
  for (const auto& p : programs) {
    std::printf("[ stress   ]   %-26s %llu runs\n", p->name.c_str(), static_cast<unsigned long long>(p->runs.load()));
    EXPECT_GT(p->runs.load(), 0u) << p->name;
  }
  EXPECT_EQ(failures.load(), 0) << "first failure: " << first_failure;
}

}  // namespace
}  // namespace plugrt::testing
