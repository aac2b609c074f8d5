// SPDX-License-Identifier: Apache-2.0
// Lookups that lazily load plugins, racing registration, unregistration and unloading.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/registry.h"
#include "test_plugin_files.h"

extern "C" plugrt_status plugrt_static_entry_test_plugin(const plugrt_host_services*, const plugrt_plugin_descriptor**);

namespace plugrt::plugins {
namespace {

using ::plugrt::testing::FloatTensor;
using ::plugrt::testing::only;
using ::plugrt::testing::TempDirectory;

TEST(RegistryConcurrency, LookupsAndLazyLoadsRaceRegistrationAndUnloading) {
  TempDirectory dir;
  const std::string good = dir.add_plugin("good");
  dir.add_plugin("private_a");
  SearchPathOptions options = only({dir.path()});
  Registry registry;
  registry.environment().set_min_log_level(LogLevel::kError);
  PluginLoader loader(registry, options);
  loader.discover();

  // Workers run until the churner has gone round often enough to overlap them many
  // times, and at least kMinRunsPerWorker runs each.
  constexpr int kWorkers = 4;
  constexpr int kMinRunsPerWorker = 2000;
  constexpr int kMinChurnCycles = 200;
  std::atomic<bool> done{false};
  std::atomic<int> churn_cycles{0};
  std::atomic<int> wrong{0}, failed{0};
  std::mutex failure_mutex;
  std::string first_failure;
  auto fail = [&](const Status& status) {
    std::lock_guard<std::mutex> lock(failure_mutex);
    if (failed++ == 0) first_failure = status.to_string();
  };

  // "offset" comes from the plugin file or from the static copy of the same code;
  // "private_a" only from its file. Every answer must be right whichever wins.
  auto worker = [&](int seed) {
    for (int run = 0; run < kMinRunsPerWorker || churn_cycles.load() < kMinChurnCycles; ++run) {
      const bool use_private = (run + seed) % 3 == 0;
      Result<RegisteredBackend> backend = registry.find_backend(use_private ? "private_a" : "offset");
      if (!backend.is_ok()) {
        fail(backend.status());
        continue;
      }
      const float offset = static_cast<float>(run);
      InitOptions init;
      init.blob = &offset;
      init.blob_size = sizeof(offset);
      Result<DelegateHandle> handle = backend->init(init);
      if (!handle.is_ok()) {
        fail(handle.status());
        continue;
      }
      FloatTensor in({1, 2}), out({0, 0});
      const DLTensor* inputs[] = {&in.tensor};
      const DLTensor* outputs[] = {&out.tensor};
      const float expected = 1 + offset + (use_private ? 1.0f : 0.0f);
      if (!handle->execute(inputs, outputs).is_ok() || out.data[0] != expected) wrong++;
    }
  };
  auto churn = [&] {
    while (!done.load()) {
      Result<PluginId> id = registry.register_plugin(&plugrt_static_entry_test_plugin, PluginSource{});
      if (!id.is_ok()) {
        fail(id.status());
      } else if (Status status = registry.unregister_plugin(*id); !status.is_ok()) {
        fail(status);
      }
      (void)loader.unload(good);  // NotFound when not loaded at the moment: fine
      churn_cycles++;
      std::this_thread::yield();
    }
  };

  std::thread churner(churn);
  std::vector<std::thread> workers;
  for (int i = 0; i < kWorkers; ++i) workers.emplace_back(worker, i);
  for (std::thread& thread : workers) thread.join();
  done = true;
  churner.join();

  EXPECT_GE(churn_cycles.load(), kMinChurnCycles);
  EXPECT_EQ(failed.load(), 0) << "first failure: " << first_failure;
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace plugrt::plugins
