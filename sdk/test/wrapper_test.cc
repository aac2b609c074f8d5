// SPDX-License-Identifier: Apache-2.0
// The C++ wrapper on its own: a backend class compiled into this test (statically, with
// PLUGRT_STATIC_PLUGIN), driven through its C table with the published host mocks.
#define PLUGRT_STATIC_PLUGIN 1
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <new>
#include <stdexcept>

#include "plugrt/sdk/backend.h"
#include "plugrt/sdk/testing/matchers.h"
#include "plugrt/sdk/testing/mock_host.h"

namespace sdk = plugrt::sdk;
using plugrt::sdk::testing::ErrorIs;
using plugrt::sdk::testing::IsOk;
using plugrt::sdk::testing::IsOkAndHolds;
using plugrt::sdk::testing::MockHostServices;
using ::testing::HasSubstr;
using ::testing::NiceMock;

namespace {

/// Scales a float32 [N] tensor by the compile spec "scale"; throws on request.
class ScaleDelegate final : public sdk::Delegate {
 public:
  ScaleDelegate(float scale, sdk::HostBuffer state) : scale_(scale), state_(std::move(state)) {}
  sdk::Status execute(const sdk::Arguments& args) override {
    PLUGRT_SDK_RETURN_IF_ERROR(args.expect_count(1, 1));
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor x, args.input(0, sdk::kFloat32, {sdk::kAnyDim}));
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor y, args.output(0, sdk::kFloat32, x.shape()));
    if (x.num_elements() == 13) throw std::runtime_error("thirteen is unlucky");
    if (x.num_elements() == 14) throw std::bad_alloc();
    for (int64_t i = 0; i < x.num_elements(); ++i) y.data<float>()[i] = x.data<float>()[i] * scale_;
    return sdk::Status::ok();
  }

 private:
  float scale_;
  sdk::HostBuffer state_;
};

class ScaleBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "scale";
  static constexpr char kDescription[] = "multiplies by a constant";
  static constexpr plugrt_backend_capabilities kCapabilities = PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE;
  using DelegateType = ScaleDelegate;  // executes without a virtual call

  sdk::Availability is_available(sdk::Host host) override {
    host.info("checking");
    return sdk::Availability::yes();
  }
  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext& c) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(double scale, c.compile_specs.get_double("scale", 1.0));
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::HostBuffer state, sdk::HostBuffer::allocate(c.host, 128));
    return std::make_unique<ScaleDelegate>(static_cast<float>(scale), std::move(state));
  }
};

class UnavailableBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "offline";
  sdk::Availability is_available(sdk::Host) override { return sdk::Availability::no("no accelerator attached"); }
  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext&) override {
    throw std::logic_error("init on an unavailable backend");
  }
};

/// Declares ScaleDelegate its delegate type, but its init makes another.
class MistypedBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "mistyped";
  using DelegateType = ScaleDelegate;
  class OtherDelegate : public sdk::Delegate {
    sdk::Status execute(const sdk::Arguments&) override { return sdk::Status::ok(); }
  };
  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext&) override {
    return std::unique_ptr<sdk::Delegate>(std::make_unique<OtherDelegate>());
  }
};

}  // namespace

PLUGRT_SDK_EXPORT_PLUGIN(wrapper_test, "2.3.4", ScaleBackend, UnavailableBackend, MistypedBackend);

namespace {

class WrapperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(plugrt_static_entry_wrapper_test(host_.plugrt_table(), &descriptor_), PLUGRT_STATUS_OK);
    scale_ = descriptor_->backends[0];
    offline_ = descriptor_->backends[1];
  }
  plugrt_status init(const plugrt_backend* b, std::vector<plugrt_option> specs, plugrt_delegate_handle* h) {
    plugrt_init_args args{};
    args.struct_size = sizeof(args);
    args.compile_specs = specs.data();
    args.num_compile_specs = specs.size();
    return b->init(b->context, host_.plugrt_table(), &args, h);
  }
  NiceMock<MockHostServices> host_;
  const plugrt_plugin_descriptor* descriptor_ = nullptr;
  const plugrt_backend* scale_ = nullptr;
  const plugrt_backend* offline_ = nullptr;
};

plugrt_option option(const char* key, const char* value) {
  return plugrt_option{{key, std::strlen(key)}, value, std::strlen(value)};
}

TEST_F(WrapperTest, DescriptorListsEveryBackendClass) {
  EXPECT_EQ(descriptor_->abi_major, static_cast<uint32_t>(PLUGRT_ABI_MAJOR));
  EXPECT_EQ(std::string(descriptor_->name.data, descriptor_->name.size), "wrapper_test");
  EXPECT_EQ(std::string(descriptor_->version.data, descriptor_->version.size), "2.3.4");
  ASSERT_EQ(descriptor_->num_backends, 3u);
  EXPECT_EQ(std::string(scale_->name.data, scale_->name.size), "scale");
  EXPECT_EQ(std::string(scale_->description.data, scale_->description.size), "multiplies by a constant");
  EXPECT_EQ(scale_->capabilities, PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE);
  EXPECT_EQ(scale_->aot, nullptr);
  EXPECT_EQ(std::string(offline_->name.data, offline_->name.size), "offline");
}

TEST_F(WrapperTest, MetadataIsBuiltAtCompileTime) {
  constexpr plugrt_plugin_metadata m =
      sdk::internal::make_metadata<ScaleBackend, UnavailableBackend>("wrapper_test", "2.3.4");
  static_assert(m.num_backends == 2);
  static_assert(m.backend_names[0] == 's' && m.backend_names[5] == '\0' && m.backend_names[6] == 'o');
  EXPECT_EQ(std::string(m.plugin_name), "wrapper_test");
  EXPECT_EQ(std::string(m.magic, 8), PLUGRT_METADATA_MAGIC);
}

TEST_F(WrapperTest, IsAvailableLogsThroughTheHostAndSaysWhyNot) {
  EXPECT_CALL(host_, log(PLUGRT_LOG_INFO, "checking"));
  EXPECT_TRUE(scale_->is_available(scale_->context, host_.plugrt_table(), nullptr));
  char reason[8];
  plugrt_text_buffer buffer{reason, sizeof(reason), 0};
  EXPECT_FALSE(offline_->is_available(offline_->context, host_.plugrt_table(), &buffer));
  EXPECT_EQ(std::string(reason, buffer.size), "no accel");  // truncated to capacity
}

TEST_F(WrapperTest, InitExecuteDestroyWithACompileSpec) {
  plugrt_delegate_handle handle = nullptr;
  ASSERT_THAT(init(scale_, {option("scale", "2.5")}, &handle), IsOk());
  EXPECT_EQ(host_.live_allocations(), 1);
  float in[3] = {1, 2, 3}, out[3] = {};
  int64_t shape[1] = {3};
  DLTensor x{in, {kDLCPU, 0}, 1, sdk::kFloat32, shape, nullptr, 0};
  DLTensor y{out, {kDLCPU, 0}, 1, sdk::kFloat32, shape, nullptr, 0};
  const DLTensor* ins[] = {&x};
  const DLTensor* outs[] = {&y};
  plugrt_execute_args args{sizeof(args), ins, 1, outs, 1, 0, nullptr, 0, 0, nullptr, 0};
  EXPECT_THAT(scale_->execute(handle, &args), IsOk());
  EXPECT_EQ(out[2], 7.5f);
  scale_->destroy(handle);
  EXPECT_EQ(host_.live_allocations(), 0);
}

TEST_F(WrapperTest, ABadCompileSpecIsInvalidArgumentWithTheKey) {
  EXPECT_CALL(host_, report_error(PLUGRT_STATUS_INVALID_ARGUMENT, "compile spec 'scale' is 'big', expected a number"));
  plugrt_delegate_handle handle = nullptr;
  EXPECT_THAT(init(scale_, {option("scale", "big")}, &handle), ErrorIs(PLUGRT_STATUS_INVALID_ARGUMENT));
}

TEST_F(WrapperTest, WrongArgumentsAreInvalidArgumentWithAMessage) {
  plugrt_delegate_handle handle = nullptr;
  ASSERT_THAT(init(scale_, {}, &handle), IsOk());
  int32_t data[3] = {};
  int64_t shape[1] = {3};
  DLTensor x{data, {kDLCPU, 0}, 1, sdk::kInt32, shape, nullptr, 0};
  const DLTensor* ins[] = {&x};
  plugrt_execute_args args{sizeof(args), ins, 1, ins, 1, 0, nullptr, 0, 0, nullptr, 0};
  EXPECT_CALL(host_, report_error(PLUGRT_STATUS_INVALID_ARGUMENT, "input 0: dtype is int32, expected float32"));
  EXPECT_THAT(scale_->execute(handle, &args), ErrorIs(PLUGRT_STATUS_INVALID_ARGUMENT));
  args.num_outputs = 0;
  EXPECT_CALL(host_, report_error(PLUGRT_STATUS_INVALID_ARGUMENT, "expected 1 inputs and 1 outputs, got 1 and 0"));
  EXPECT_THAT(scale_->execute(handle, &args), ErrorIs(PLUGRT_STATUS_INVALID_ARGUMENT));
  scale_->destroy(handle);
}

TEST(SdkArguments, ReadTheHandOffFlagOnlyWhenTheHostSentIt) {
  plugrt_execute_args args{sizeof(args), nullptr, 0, nullptr, 0, PLUGRT_EXECUTE_PARK_WORKERS,
                           nullptr,      0,       0, nullptr, 0};
  EXPECT_TRUE(sdk::Arguments(&args).park_workers());
  args.flags = 0;
  EXPECT_FALSE(sdk::Arguments(&args).park_workers());
  // The args of a host older than 1.2 end before `flags`: what lies there is not read.
  args.struct_size = PLUGRT_EXECUTE_ARGS_SIZE_1_0;
  args.flags = PLUGRT_EXECUTE_PARK_WORKERS;
  EXPECT_FALSE(sdk::Arguments(&args).park_workers());
  EXPECT_EQ(sdk::Arguments(&args).flags(), 0u);
}

TEST(SdkArguments, AStopIsRequestedByTheFlagOrThePassedDeadlineOnlyFromA18Host) {
  uint32_t flag = 0;
  plugrt_execute_args args{sizeof(args), nullptr, 0, nullptr, 0, 0, nullptr, 0, 0, &flag, 0};
  EXPECT_FALSE(sdk::Arguments(&args).stop_requested());
  __atomic_store_n(&flag, 1u, __ATOMIC_RELAXED);  // as the host's other thread does
  EXPECT_TRUE(sdk::Arguments(&args).stop_requested());
  flag = 0;
  args.deadline_ns = 1;  // long past on CLOCK_MONOTONIC
  EXPECT_TRUE(sdk::Arguments(&args).stop_requested());
  args.deadline_ns = std::numeric_limits<int64_t>::max();
  EXPECT_FALSE(sdk::Arguments(&args).stop_requested());
  // A 1.7 host's args end before the fields: what lies there is not read.
  args.struct_size = PLUGRT_EXECUTE_ARGS_SIZE_1_7;
  args.deadline_ns = 1;
  EXPECT_FALSE(sdk::Arguments(&args).stop_requested());
}

TEST_F(WrapperTest, InitRefusesADelegateOtherThanTheDeclaredDelegateType) {
  const plugrt_backend* mistyped = descriptor_->backends[2];
  plugrt_delegate_handle handle = nullptr;
  EXPECT_CALL(host_, report_error(PLUGRT_STATUS_INTERNAL, HasSubstr("other than its DelegateType")));
  EXPECT_THAT(init(mistyped, {}, &handle), ErrorIs(PLUGRT_STATUS_INTERNAL));
  EXPECT_EQ(handle, nullptr);
}

TEST_F(WrapperTest, ExceptionsBecomeInternalWithTheirMessage) {
  plugrt_delegate_handle handle = nullptr;
  EXPECT_CALL(host_, report_error(PLUGRT_STATUS_INTERNAL, HasSubstr("init on an unavailable backend")));
  EXPECT_THAT(init(offline_, {}, &handle), ErrorIs(PLUGRT_STATUS_INTERNAL));

  ASSERT_THAT(init(scale_, {}, &handle), IsOk());
  float data[13] = {};
  int64_t shape[1] = {13};
  DLTensor x{data, {kDLCPU, 0}, 1, sdk::kFloat32, shape, nullptr, 0};
  const DLTensor* ts[] = {&x};
  plugrt_execute_args args{sizeof(args), ts, 1, ts, 1, 0, nullptr, 0, 0, nullptr, 0};
  EXPECT_CALL(host_, report_error(PLUGRT_STATUS_INTERNAL, "execute threw an exception: thirteen is unlucky"));
  EXPECT_THAT(scale_->execute(handle, &args), ErrorIs(PLUGRT_STATUS_INTERNAL));
  scale_->destroy(handle);
}

TEST_F(WrapperTest, BadAllocBecomesDelegateMemoryAllocationFailed) {
  plugrt_delegate_handle handle = nullptr;
  ASSERT_THAT(init(scale_, {}, &handle), IsOk());
  float data[14] = {};
  int64_t shape[1] = {14};
  DLTensor x{data, {kDLCPU, 0}, 1, sdk::kFloat32, shape, nullptr, 0};
  const DLTensor* ts[] = {&x};
  plugrt_execute_args args{sizeof(args), ts, 1, ts, 1, 0, nullptr, 0, 0, nullptr, 0};
  EXPECT_CALL(host_, report_error(PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED, "out of memory"));
  EXPECT_THAT(scale_->execute(handle, &args), ErrorIs(PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED));
  scale_->destroy(handle);
}

TEST_F(WrapperTest, TensorsOnAnotherDeviceAreRefusedBeforeExecute) {
  plugrt_delegate_handle handle = nullptr;
  ASSERT_THAT(init(scale_, {}, &handle), IsOk());
  float in[2] = {1, 2}, out[2] = {};
  int64_t shape[1] = {2};
  DLTensor x{in, {kDLCUDA, 0}, 1, sdk::kFloat32, shape, nullptr, 0};
  DLTensor y{out, {kDLCPU, 0}, 1, sdk::kFloat32, shape, nullptr, 0};
  const DLTensor* ins[] = {&x};
  const DLTensor* outs[] = {&y};
  plugrt_execute_args args{sizeof(args), ins, 1, outs, 1, 0, nullptr, 0, 0, nullptr, 0};
  EXPECT_CALL(host_, report_error(PLUGRT_STATUS_INVALID_ARGUMENT,
                                  "input 0 is on device type 2, this backend runs on device type 1"));
  EXPECT_THAT(scale_->execute(handle, &args), ErrorIs(PLUGRT_STATUS_INVALID_ARGUMENT));
  x.device = {kDLCUDAHost, 0};  // pinned host memory is CPU memory
  EXPECT_THAT(scale_->execute(handle, &args), IsOk());
  EXPECT_EQ(out[1], 2.0f);
  scale_->destroy(handle);
}

TEST(SdkDevices, CpuBackendsAcceptHostMemoryPinnedForAnAccelerator) {
  static_assert(sdk::internal::device_matches(kDLCPU, DLDevice{kDLCPU, 0}));
  static_assert(sdk::internal::device_matches(kDLCPU, DLDevice{kDLROCMHost, 0}));
  static_assert(!sdk::internal::device_matches(kDLCPU, DLDevice{kDLCUDA, 0}));
  static_assert(!sdk::internal::device_matches(kDLCUDA, DLDevice{kDLCUDAHost, 0}));
  EXPECT_TRUE(sdk::internal::device_matches(kDLCUDA, DLDevice{kDLCUDA, 1}));
}

TEST(SdkOptions, TypedGettersNameTheKey) {
  plugrt_option specs[] = {option("threads", "4"), option("fast", "yes"), option("mode", "tiled"),
                           option("threads", "8")};
  sdk::Options options(specs, 4, "runtime option");
  EXPECT_THAT(options.get_int("threads", 1), IsOkAndHolds(8));  // the last one wins
  EXPECT_THAT(options.get_int("absent", 3), IsOkAndHolds(3));
  EXPECT_THAT(options.get_bool("fast", false), IsOkAndHolds(true));
  EXPECT_THAT(options.get_choice("mode", {"tiled", "direct"}, "direct"), IsOkAndHolds(std::string("tiled")));
  sdk::Expected<int64_t> bounded = options.get_int("threads", 1, 1, 4);
  EXPECT_THAT(bounded, ErrorIs(PLUGRT_STATUS_INVALID_ARGUMENT));
  EXPECT_EQ(bounded.status().message(), "runtime option 'threads' is '8', expected an integer from 1 to 4");
}

TEST(SdkTensor, ViewsRefuseWhatTheyCannotRead) {
  float data[6] = {};
  int64_t shape[2] = {2, 3};
  int64_t strides[2] = {1, 2};
  DLTensor t{data, {kDLCPU, 0}, 2, sdk::kFloat32, shape, strides, 0};
  EXPECT_EQ(sdk::Tensor::view(&t, "input 0").status().message(),
            "input 0 is not dense (strided tensors are not supported)");
  t.strides = nullptr;
  sdk::Expected<sdk::Tensor> view = sdk::Tensor::view(&t, "input 0");
  ASSERT_THAT(view, IsOk());
  EXPECT_EQ(view->num_elements(), 6);
  EXPECT_EQ(view->expect_shape({2, sdk::kAnyDim}).code(), PLUGRT_STATUS_OK);
  EXPECT_EQ(view->expect_shape({3, 2}).message(), "input 0: shape is [2, 3], expected [3, 2]");
  EXPECT_EQ(view->expect_rank(3).message(), "input 0: rank is 2, expected 3");
  EXPECT_EQ(sdk::Tensor::view(nullptr, "output 1").status().message(), "output 1 is NULL");
}

}  // namespace
