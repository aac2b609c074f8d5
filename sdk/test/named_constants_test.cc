// SPDX-License-Identifier: Apache-2.0
// Constants by name (ABI 1.4) through the SDK's adapter, against hosts of every age: a
// backend compiled into this test (statically, with PLUGRT_STATIC_PLUGIN) names its one
// weight when the host offers, and embeds it otherwise.
#define PLUGRT_STATIC_PLUGIN 1
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "plugrt/sdk/backend.h"
#include "plugrt/sdk/testing/matchers.h"
#include "plugrt/sdk/testing/mock_host.h"

namespace sdk = plugrt::sdk;
using plugrt::sdk::testing::ErrorIs;
using plugrt::sdk::testing::IsOk;
using plugrt::sdk::testing::MockHostServices;
using ::testing::HasSubstr;
using ::testing::NiceMock;

namespace {

constexpr char kNamed[] = "name:weight";
constexpr float kEmbeddedWeight = 3.0f;

/// Holds the weight it multiplies by: the host's named constant, or its own copy.
class WeightDelegate final : public sdk::Delegate {
 public:
  explicit WeightDelegate(float weight) : weight_(weight) {}
  sdk::Status execute(const sdk::Arguments&) override { return sdk::Status::ok(); }
  float weight() const { return weight_; }

 private:
  float weight_;
};

/// Its blob names the graph constant "weight" when the host offers constants by name,
/// else holds the weight (this test's stand-in for a lowered graph).
class WeightBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "weights";
  static constexpr bool kHasAot = true;

  sdk::Expected<std::vector<uint8_t>> preprocess(const sdk::PreprocessRequest& request) override {
    if (request.constants_by_name_offered) {
      request.name_constants();
      return std::vector<uint8_t>(kNamed, kNamed + sizeof(kNamed) - 1);
    }
    std::vector<uint8_t> blob(sizeof(float));
    std::memcpy(blob.data(), &kEmbeddedWeight, sizeof(float));
    return blob;
  }
  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext& c) override {
    float weight = 0;
    if (c.blob_size == sizeof(float)) {
      std::memcpy(&weight, c.blob, sizeof(float));
    } else {
      if (c.constants.empty()) return sdk::Status::incompatible_blob("the blob names constants; none were lent");
      const plugrt_named_constant* found = c.constants.find("weight");
      if (found == nullptr || found->size != sizeof(float)) return sdk::Status::invalid_argument("no float 'weight'");
      std::memcpy(&weight, found->data, sizeof(float));
    }
    return std::unique_ptr<sdk::Delegate>(std::make_unique<WeightDelegate>(weight));
  }
};

}  // namespace

PLUGRT_SDK_EXPORT_PLUGIN(named_constants_test, "1.0.0", WeightBackend);

namespace {

class NamedConstantsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const plugrt_plugin_descriptor* descriptor = nullptr;
    ASSERT_EQ(plugrt_static_entry_named_constants_test(host_.plugrt_table(), &descriptor), PLUGRT_STATUS_OK);
    backend_ = descriptor->backends[0];
    ASSERT_NE(backend_->aot, nullptr);
  }
  /// Preprocesses with args of `struct_size` bytes; `flags` as the host offers them.
  std::string preprocess(size_t struct_size, plugrt_preprocess_flags flags, plugrt_blob_flags* blob_flags) {
    plugrt_preprocess_args args{};
    args.struct_size = struct_size;
    args.flags = flags;
    args.blob_flags = 0x80;  // a bit no host sets: an adapter must not clear what it may not write
    EXPECT_THAT(backend_->aot->preprocess(backend_->context, host_.plugrt_table(), &args), IsOk());
    std::string blob(static_cast<const char*>(args.blob), args.blob_size);
    host_.plugrt_table()->deallocate(host_.plugrt_table()->context, args.blob);
    *blob_flags = args.blob_flags;
    return blob;
  }
  /// Inits with args of `struct_size` bytes lending `constants`; the weight it read.
  plugrt_status init(const std::string& blob, size_t struct_size, std::vector<plugrt_named_constant> constants,
                     float* weight) {
    plugrt_init_args args{};
    args.struct_size = struct_size;
    args.blob = blob.data();
    args.blob_size = blob.size();
    args.constants = constants.data();
    args.num_constants = constants.size();
    plugrt_delegate_handle handle = nullptr;
    const plugrt_status status = backend_->init(backend_->context, host_.plugrt_table(), &args, &handle);
    if (status == PLUGRT_STATUS_OK) {
      *weight = static_cast<WeightDelegate&>(*reinterpret_cast<sdk::internal::HandleBox*>(handle)->delegate).weight();
      backend_->destroy(handle);
    }
    return status;
  }
  NiceMock<MockHostServices> host_;
  const plugrt_backend* backend_ = nullptr;
};

TEST_F(NamedConstantsTest, AnOfferFromA14HostIsTakenAndSaidSo) {
  plugrt_blob_flags blob_flags = 0;
  const std::string blob = preprocess(sizeof(plugrt_preprocess_args), PLUGRT_PREPROCESS_CONSTANTS_BY_NAME, &blob_flags);
  EXPECT_EQ(blob, kNamed);
  EXPECT_EQ(blob_flags, PLUGRT_BLOB_NAMES_CONSTANTS);
  const float weight = 7.0f;
  float read = 0;
  ASSERT_THAT(init(blob, sizeof(plugrt_init_args), {{{"weight", 6}, &weight, sizeof(weight)}}, &read), IsOk());
  EXPECT_EQ(read, 7.0f);
}

TEST_F(NamedConstantsTest, WithoutAnOfferTheBlobHoldsItsWeightAndSaysNothing) {
  plugrt_blob_flags blob_flags = 0;
  const std::string blob = preprocess(sizeof(plugrt_preprocess_args), 0, &blob_flags);
  EXPECT_EQ(blob.size(), sizeof(float));
  EXPECT_EQ(blob_flags, 0u);
  float read = 0;
  ASSERT_THAT(init(blob, sizeof(plugrt_init_args), {}, &read), IsOk());
  EXPECT_EQ(read, kEmbeddedWeight);
}

// A host older than 1.4 sends smaller args: the fields past them are garbage to the
// plugin, which neither reads the offer nor writes the blob's flags there.
TEST_F(NamedConstantsTest, AnOlderHostIsOfferedNothingAndItsArgsAreNotWrittenPastTheirSize) {
  plugrt_blob_flags blob_flags = 0;
  const std::string blob =
      preprocess(PLUGRT_PREPROCESS_ARGS_SIZE_1_0, PLUGRT_PREPROCESS_CONSTANTS_BY_NAME, &blob_flags);
  EXPECT_EQ(blob.size(), sizeof(float));
  EXPECT_EQ(blob_flags, 0x80u);
  float read = 0;
  ASSERT_THAT(init(blob, PLUGRT_INIT_ARGS_SIZE_1_0, {}, &read), IsOk());
  EXPECT_EQ(read, kEmbeddedWeight);
}

// A program compiled with constants by name, loaded by a host older than 1.4: its init
// args end before the constants, so the blob is refused as incompatible (the host then
// runs the portable fallback), never read without its weight.
TEST_F(NamedConstantsTest, ABlobThatNamesConstantsIsIncompatibleWithAnOlderHost) {
  const float weight = 7.0f;
  float read = 0;
  EXPECT_CALL(host_, report_error(PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY, HasSubstr("none were lent")));
  EXPECT_THAT(init(kNamed, PLUGRT_INIT_ARGS_SIZE_1_0, {{{"weight", 6}, &weight, sizeof(weight)}}, &read),
              ErrorIs(PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY));
}

TEST(SdkNamedConstants, FindByName) {
  const float a = 1, b = 2;
  const plugrt_named_constant items[] = {{{"a", 1}, &a, sizeof(a)}, {{"bb", 2}, &b, sizeof(b)}};
  const sdk::NamedConstants constants(items, 2);
  EXPECT_EQ(constants.size(), 2u);
  EXPECT_EQ(constants.find("bb"), &items[1]);
  EXPECT_EQ(constants.find("b"), nullptr);
  EXPECT_TRUE(sdk::NamedConstants().empty());
}

}  // namespace
