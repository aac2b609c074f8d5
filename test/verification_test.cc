// SPDX-License-Identifier: Apache-2.0
// Verification at load (MethodOptions::verify): a delegate whose backend disagrees with
// its portable fallback runs on the fallback, the report says why, and the verdict kept
// in the blob cache spares the next load the check. The "good" test plugin's backend
// adds the offset its blob holds, so a blob that holds another offset than the fallback
// graph's Add is a backend that computes the wrong thing.
#include <cstring>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/method.h"
#include "plugrt/placement/load_placer.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "program_fixtures.h"
#include "test_plugin_files.h"

namespace plugrt::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::vector<uint8_t> offset_blob(float offset) {
  std::vector<uint8_t> bytes(sizeof(float));
  std::memcpy(bytes.data(), &offset, sizeof(float));
  return bytes;
}

class Verification : public ::testing::Test {
 protected:
  void SetUp() override {
    plugins_.add_plugin("good");
    ASSERT_TRUE(register_builtin_backends(registry_).is_ok());
    loader_ = std::make_unique<plugins::PluginLoader>(registry_, only({plugins_.path()}));
    loader_->discover();
  }
  /// A program whose delegate's fallback adds 1.5 and whose blob adds `blob_offset`.
  Result<Method> load(float blob_offset, MethodOptions options) {
    OffsetProgramOptions program_options;
    program_options.blob = offset_blob(blob_offset);
    Result<Program> program = Program::from_bytes(offset_program(program_options), "offset.prt");
    if (!program.is_ok()) return program.status();
    return Method::load(*program, "forward", registry_, options);
  }
  static MethodOptions verifying() {
    MethodOptions options;
    options.verify = true;
    return options;
  }

  TempDirectory plugins_;
  Registry registry_;
  std::unique_ptr<plugins::PluginLoader> loader_;
};

TEST_F(Verification, ADelegateThatAgreesStaysOnItsBackend) {
  Result<Method> method = load(1.5f, verifying());
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  const DelegatePlacement& placement = method->report().delegates.at(0);
  EXPECT_EQ(placement.backend, "offset");
  EXPECT_FALSE(placement.fell_back);
  EXPECT_THAT(placement.verification, StartsWith("agreed: max difference 0 "));
  EXPECT_THAT(method->report().to_string(), HasSubstr("verification agreed"));
}

TEST_F(Verification, ADelegateThatDisagreesRunsOnItsFallback) {
  Result<Method> method = load(2.0f, verifying());
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  const DelegatePlacement& placement = method->report().delegates.at(0);
  EXPECT_EQ(placement.backend, "portable");
  EXPECT_TRUE(placement.fell_back);
  EXPECT_THAT(placement.reason, HasSubstr("verification: max difference"));
  EXPECT_THAT(placement.verification, StartsWith("disagreed: "));
  ASSERT_TRUE(set_floats(*method, 0, {0, 1, 2, 3, 4, 5}).is_ok());
  ASSERT_TRUE(method->execute().is_ok());
  EXPECT_EQ(output_floats(*method, 0), (std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f}));
}

TEST_F(Verification, WithoutItTheBackendRunsAsPlaced) {
  Result<Method> method = load(2.0f, MethodOptions{});
  ASSERT_TRUE(method.is_ok()) << method.status().to_string();
  EXPECT_EQ(method->report().delegates.at(0).backend, "offset");
  EXPECT_TRUE(method->report().delegates.at(0).verification.empty());
}

TEST_F(Verification, TheBlobCacheKeepsEachVerdict) {
  TempDirectory cache;
  placement::LoadPlacerOptions placer_options;
  placer_options.cache_directory = cache.path();
  placement::LoadPlacer placer(placer_options);
  MethodOptions options = verifying();
  options.verdicts = &placer;
  for (float offset : {1.5f, 2.0f}) {
    Result<Method> first = load(offset, options);
    Result<Method> second = load(offset, options);
    ASSERT_TRUE(first.is_ok() && second.is_ok());
    const DelegatePlacement& was = first->report().delegates.at(0);
    const DelegatePlacement& now = second->report().delegates.at(0);
    EXPECT_THAT(was.verification, Not(HasSubstr("kept verdict"))) << offset;
    EXPECT_THAT(now.verification, HasSubstr("(kept verdict)")) << offset;
    EXPECT_EQ(now.backend, was.backend) << offset;
    EXPECT_EQ(now.fell_back, offset != 1.5f);
  }
}

}  // namespace
}  // namespace plugrt::testing
