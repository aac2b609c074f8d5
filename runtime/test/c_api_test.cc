// SPDX-License-Identifier: Apache-2.0
// The C API through its C++ wrapper (plugrt/plugrt.hpp), as an application links it:
// libplugrt.so only. Outputs against the bundled models' own; every error a value with
// the runtime's message; options structs from a newer header.
#include <cstring>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "npy.h"
#include "plugrt/plugrt.hpp"

namespace {

using ::testing::HasSubstr;

plugrt_runtime_options in_tree_options() {
  plugrt_runtime_options options;
  plugrt_runtime_options_init(&options);
  static const char* const dirs[] = {PLUGRT_IN_TREE_PLUGIN_DIR, nullptr};
  options.plugin_dirs = dirs;
  return options;
}

TEST(CApi, RunsABundledModelAndDescribesItsTensors) {
  const plugrt_runtime_options options = in_tree_options();
  plugrt::api::Runtime runtime(&options);
  plugrt::api::Session session = runtime.open(PLUGRT_MODELS_DIR "/tiny_cnn.onnx");
  ASSERT_EQ(session.num_inputs(), 1u);
  ASSERT_EQ(session.num_outputs(), 1u);
  const plugrt::api::TensorInfo input = session.input_info(0);
  EXPECT_FALSE(input.name.empty());
  EXPECT_EQ(input.dtype.code, kDLFloat);
  EXPECT_EQ(input.dtype.bits, 32);

  auto in = plugrt::tools::read_npy(PLUGRT_MODELS_DIR "/tiny_cnn.input.npy");
  auto expected = plugrt::tools::read_npy(PLUGRT_MODELS_DIR "/tiny_cnn.output.npy");
  ASSERT_TRUE(in.is_ok() && expected.is_ok());
  EXPECT_EQ(input.shape, in->shape);
  DLTensor view = plugrt::tools::dltensor_view(*in);
  session.run({&view});

  // Read in place, and copied into the caller's tensor.
  const DLTensor& output = session.output(0);
  const auto* values = static_cast<const float*>(output.data);
  const auto* want = reinterpret_cast<const float*>(expected->data.data());
  std::vector<float> copy(expected->data.size() / sizeof(float));
  std::vector<int64_t> shape(output.shape, output.shape + output.ndim);
  DLTensor destination{copy.data(), {kDLCPU, 0}, output.ndim, output.dtype, shape.data(), nullptr, 0};
  session.copy_output(0, destination);
  for (size_t i = 0; i < copy.size(); ++i) {
    EXPECT_NEAR(values[i], want[i], 1e-3);
    EXPECT_EQ(copy[i], values[i]);
  }
  EXPECT_THAT(session.report_json(), HasSubstr("\"delegates\""));

  shape[0] += 1;  // a destination of another shape
  try {
    session.copy_output(0, destination);
    ADD_FAILURE() << "a destination of another shape was accepted";
  } catch (const plugrt::api::Error& error) {
    EXPECT_EQ(error.code(), PLUGRT_C_INVALID_ARGUMENT);
    EXPECT_THAT(error.what(), HasSubstr("shape differs"));
  }
}

TEST(CApi, ErrorsAreValuesWithTheRuntimesMessage) {
  plugrt_runtime* runtime = nullptr;
  ASSERT_EQ(plugrt_runtime_create(nullptr, &runtime), nullptr);
  plugrt_session* session = nullptr;
  plugrt_error* error = plugrt_session_open(runtime, "absent.onnx", &session);
  ASSERT_NE(error, nullptr);
  EXPECT_THAT(plugrt_error_message(error), HasSubstr("absent.onnx"));
  EXPECT_EQ(session, nullptr);
  plugrt_error_free(error);

  error = plugrt_session_open(nullptr, "absent.onnx", &session);
  EXPECT_EQ(plugrt_error_code_of(error), PLUGRT_C_INVALID_ARGUMENT);
  plugrt_error_free(error);
  EXPECT_EQ(plugrt_session_num_inputs(nullptr), 0u);
  plugrt_runtime_destroy(runtime);

  plugrt_runtime_options options;
  plugrt_runtime_options_init(&options);
  options.placement = "fastest";
  error = plugrt_runtime_create(&options, &runtime);
  EXPECT_THAT(plugrt_error_message(error), HasSubstr("'fastest'"));
  plugrt_error_free(error);
}

TEST(CApi, OptionsFromANewerHeaderAreReadUpToWhatThisLibraryKnows) {
  struct Newer {
    plugrt_runtime_options known;
    uint64_t later_field;
  } newer{};
  plugrt_runtime_options_init(&newer.known);
  newer.known.struct_size = sizeof(Newer);
  plugrt_runtime* runtime = nullptr;
  // A field this library does not know, left at zero: accepted.
  ASSERT_EQ(plugrt_runtime_create(&newer.known, &runtime), nullptr);
  plugrt_runtime_destroy(runtime);
  // Set: refused, since this library cannot do what it asks.
  newer.later_field = 1;
  plugrt_error* error = plugrt_runtime_create(&newer.known, &runtime);
  EXPECT_EQ(plugrt_error_code_of(error), PLUGRT_C_NOT_SUPPORTED);
  EXPECT_THAT(plugrt_error_message(error), HasSubstr("does not know"));
  plugrt_error_free(error);
  EXPECT_EQ(plugrt_c_api_version() >> 16, uint32_t{PLUGRT_C_API_VERSION_MAJOR});
}

}  // namespace

namespace {

// An ONNX model whose input length varies: refused without bounds, with the remedy
// named; opened with them, it runs at each length within them.
TEST(CApi, AnOnnxModelWithOpenDimensionsOpensWithBounds) {
  const plugrt_runtime_options options = in_tree_options();
  plugrt::api::Runtime runtime(&options);
  try {
    runtime.open(PLUGRT_MODELS_DIR "/varying_conv1d.onnx");
    ADD_FAILURE() << "a model with an open dimension opened without bounds";
  } catch (const plugrt::api::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("'len'"));
    EXPECT_THAT(error.what(), HasSubstr("open it with input shapes for 'input'"));
  }
  plugrt::api::OpenOptions open;
  open.dims = {"len=1..64"};
  plugrt::api::Session session = runtime.open(PLUGRT_MODELS_DIR "/varying_conv1d.onnx", open);
  EXPECT_EQ(session.input_info(0).varies, (std::vector<bool>{false, false, true}));
  EXPECT_EQ(session.input_info(0).shape[2], 64);
  for (const char* length : {"1x8x7.", "1x8x64."}) {
    auto in = plugrt::tools::read_npy(std::string(PLUGRT_MODELS_DIR "/varying_conv1d.") + length + "input.npy");
    auto expected = plugrt::tools::read_npy(std::string(PLUGRT_MODELS_DIR "/varying_conv1d.") + length + "output.npy");
    ASSERT_TRUE(in.is_ok() && expected.is_ok());
    DLTensor view = plugrt::tools::dltensor_view(*in);
    session.run({&view});
    const DLTensor& output = session.output(0);
    ASSERT_EQ(std::vector<int64_t>(output.shape, output.shape + output.ndim), expected->shape) << length;
    const auto* values = static_cast<const float*>(output.data);
    const auto* want = reinterpret_cast<const float*>(expected->data.data());
    for (size_t i = 0; i < expected->data.size() / sizeof(float); ++i) EXPECT_NEAR(values[i], want[i], 1e-4);
  }
  open.dims = {"len=1-64"};
  try {
    runtime.open(PLUGRT_MODELS_DIR "/varying_conv1d.onnx", open);
    ADD_FAILURE() << "malformed bounds were accepted";
  } catch (const plugrt::api::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("'len=1-64' are not NAME=MIN..MAX"));
  }
}

}  // namespace
