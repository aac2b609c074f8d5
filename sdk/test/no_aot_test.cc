// SPDX-License-Identifier: Apache-2.0
// An on-device build (PLUGRT_SDK_NO_AOT): a backend class that has the ahead-of-time half
// in other builds hands the host no AOT table.
#define PLUGRT_STATIC_PLUGIN 1
#define PLUGRT_SDK_NO_AOT 1
#include <gtest/gtest.h>

#include "plugrt/sdk/backend.h"
#include "plugrt/sdk/testing/mock_host.h"

static_assert(PLUGRT_SDK_HAS_AOT == 0, "PLUGRT_SDK_NO_AOT turns the AOT half off");

namespace sdk = plugrt::sdk;

namespace {

class OnDeviceBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "on_device";
  static constexpr bool kHasAot = true;
  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext&) override {
    return sdk::Status::not_supported("not needed here");
  }
#if PLUGRT_SDK_HAS_AOT
  sdk::Status partition(const sdk::PartitionRequest&) override { return sdk::Status::ok(); }
#endif
};

}  // namespace

PLUGRT_SDK_EXPORT_PLUGIN(no_aot_test, "1.0.0", OnDeviceBackend);

TEST(SdkOnDeviceBuild, NoAotTableEvenWhenTheClassHasOne) {
  ::testing::NiceMock<plugrt::sdk::testing::MockHostServices> host;
  const plugrt_plugin_descriptor* descriptor = nullptr;
  ASSERT_EQ(plugrt_static_entry_no_aot_test(host.plugrt_table(), &descriptor), PLUGRT_STATUS_OK);
  ASSERT_EQ(descriptor->num_backends, 1u);
  EXPECT_EQ(descriptor->backends[0]->aot, nullptr);
  EXPECT_NE(descriptor->backends[0]->init, nullptr);
}
