// SPDX-License-Identifier: Apache-2.0
// The plugin-wide checks of the contract kit (PluginContract): the ABI, the metadata, the
// exported symbols, no link to the runtime, and loading and unloading many times.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kit_backend_options.h"
#include "kit_plugin.h"
#include "kit_samples.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/plugins/plugin_metadata.h"

namespace plugrt::sdk::testing::kit {

using ::testing::NiceMock;

class PluginContract : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<plugins::PluginFileInfo> info = plugins::inspect_plugin_file(config().plugin_path);
    ASSERT_TRUE(info.is_ok()) << info.status().to_string()
                              << "\nFix: build the plugin with plugrt_add_backend() and define its metadata with "
                                 "PLUGRT_SDK_EXPORT_PLUGIN (or PLUGRT_PLUGIN_METADATA).";
    info_ = std::move(info.value());
  }
  plugins::PluginFileInfo info_;
};

TEST_F(PluginContract, AbiVersionIsAcceptedByThisHost) {
  EXPECT_EQ(info_.metadata.abi_major, static_cast<uint32_t>(PLUGRT_ABI_MAJOR))
      << "the plugin was built for ABI " << info_.metadata.abi_major << "." << info_.metadata.abi_minor
      << ", this host speaks " << PLUGRT_ABI_MAJOR << "." << PLUGRT_ABI_MINOR
      << "; rebuild the plugin against this SDK's plugrt_abi.h";
  Registry registry;
  plugins::PluginLoader loader(registry);
  Result<PluginId> id = loader.load(config().plugin_path);
  EXPECT_TRUE(id.is_ok()) << "the runtime's plugin loader refuses the plugin: " << id.status().to_string();
}

TEST_F(PluginContract, MetadataAgreesWithTheEntryFunction) {
  NiceMock<MockHostServices> host;
  LoadedPlugin plugin = load_plugin(host.plugrt_table());
  ASSERT_EQ(plugin.error, "");
  const plugrt_plugin_descriptor& d = *plugin.descriptor;
  ASSERT_GE(d.struct_size, PLUGRT_PLUGIN_DESCRIPTOR_SIZE_1_0) << "the descriptor's struct_size is too small";
  const std::string fix =
      "\nFix: the metadata record and the descriptor must say the same thing; "
      "PLUGRT_SDK_EXPORT_PLUGIN writes both from one list.";
  EXPECT_EQ(text(d.name), info_.metadata.name) << "plugin name differs" << fix;
  EXPECT_EQ(text(d.version), info_.metadata.version) << "plugin version differs" << fix;
  EXPECT_EQ(d.abi_major, info_.metadata.abi_major) << "ABI major differs" << fix;
  EXPECT_EQ(d.abi_minor, info_.metadata.abi_minor) << "ABI minor differs" << fix;
  std::vector<std::string> names;
  for (size_t i = 0; i < d.num_backends; ++i) {
    names.push_back(d.backends[i] == nullptr ? "<NULL>" : text(d.backends[i]->name));
  }
  EXPECT_EQ(names, info_.metadata.backends) << "the backends (names and order) differ" << fix;
}

TEST_F(PluginContract, ExportsOnlyTheEntryAndTheMetadata) {
  for (const std::string& symbol : info_.exported_symbols) {
    EXPECT_TRUE(symbol == PLUGRT_PLUGIN_ENTRY_SYMBOL || symbol == PLUGRT_METADATA_SYMBOL)
        << "the plugin exports '" << symbol << "'. A plugin exports only " << PLUGRT_PLUGIN_ENTRY_SYMBOL << " and "
        << PLUGRT_METADATA_SYMBOL << ", so two plugins can carry conflicting copies of one library."
        << "\nFix: build it with plugrt_add_backend() (hidden visibility and the SDK's version script), "
           "and do not mark other symbols visibility(\"default\").";
  }
}

TEST_F(PluginContract, DoesNotLinkTheRuntime) {
  for (const std::string& needed : info_.needed_libraries) {
    EXPECT_NE(needed.rfind("libplugrt", 0), 0u)
        << "the plugin links '" << needed << "'. A backend links the SDK (headers only), never the runtime: "
        << "one process has exactly one registry.\nFix: remove plugrt::core/plugrt::plugins from its link libraries.";
  }
}

TEST_F(PluginContract, LoadInitDestroyUnload100Times) {
  // The sample blob of each backend, made once, in the parent.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> blobs;
  {
    NiceMock<MockHostServices> host;
    LoadedPlugin plugin = load_plugin(host.plugrt_table());
    ASSERT_EQ(plugin.error, "");
    for (const std::string& name : info_.metadata.backends) {
      const plugrt_backend* backend = plugin.backend(name);
      if (backend == nullptr) continue;
      select_kit_backend(name);
      SampleResult sample = make_sample(backend, host);
      print_sample_use(name, sample);
      if (sample.sample) blobs.emplace_back(name, sample.sample->blob);
    }
  }
  ChildOutcome outcome = run_in_child([&]() -> std::string {
    const long before = resident_kib();
    for (int cycle = 0; cycle < 100; ++cycle) {
      PlainHost host;
      {
        LoadedPlugin plugin = load_plugin(host.table());
        if (!plugin.error.empty()) return "cycle " + std::to_string(cycle) + ": " + plugin.error;
        for (const auto& [name, blob] : blobs) {
          const plugrt_backend* backend = plugin.backend(name);
          if (backend == nullptr) return "backend " + name + " vanished on cycle " + std::to_string(cycle);
          select_kit_backend(name);
          plugrt_init_args args = init_args(blob);
          plugrt_delegate_handle handle = nullptr;
          plugrt_status status = backend->init(backend->context, host.table(), &args, &handle);
          if (status != PLUGRT_STATUS_OK) {
            return name + ": init failed on cycle " + std::to_string(cycle) + " with " + name_of(status);
          }
          backend->destroy(handle);
        }
      }  // unloaded here (dlclose)
      if (host.live_allocations() != 0) {
        return "cycle " + std::to_string(cycle) + ": " + std::to_string(host.live_allocations()) +
               " host allocations were still live after destroy and unload";
      }
    }
    const long growth = resident_kib() - before;
    if (kResidentMemoryIsMeaningful && growth > 64 * 1024) {
      return "resident memory grew by " + std::to_string(growth / 1024) +
             " MiB over 100 load/unload cycles: release what the plugin's static objects hold";
    }
    return "";
  });
  EXPECT_TRUE(outcome.ok()) << "100 load, init, destroy, unload cycles: " << outcome.describe();
}

// Called by run_contract_tests, so that a static link keeps this file's checks.
void keep_plugin_checks() {}

}  // namespace plugrt::sdk::testing::kit
