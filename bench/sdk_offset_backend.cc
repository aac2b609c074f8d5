// SPDX-License-Identifier: Apache-2.0
// The test plugin's "offset" backend (test/plugins/test_plugin.c) written on the SDK, as a
// first-party backend is: the same work and checks per call, so that the benchmark's
// difference between the two is what the SDK's adapter costs.
#define PLUGRT_STATIC_PLUGIN 1
#include <cstring>

#include "plugrt/sdk/backend.h"

namespace {

class OffsetDelegate final : public plugrt::sdk::Delegate {
 public:
  explicit OffsetDelegate(float offset) : offset_(offset) {}

  plugrt::sdk::Status execute(const plugrt::sdk::Arguments& args) override {
    const plugrt_execute_args& raw = args.raw();
    if (raw.num_inputs != 1 || raw.num_outputs != 1) {
      return plugrt::sdk::Status::invalid_argument("expects one input and one output");
    }
    const DLTensor* in = raw.inputs[0];
    const DLTensor* out = raw.outputs[0];
    if (in->dtype.code != kDLFloat || in->dtype.bits != 32 || in->dtype.lanes != 1 || out->dtype.code != kDLFloat ||
        out->dtype.bits != 32 || out->dtype.lanes != 1) {
      return plugrt::sdk::Status::invalid_argument("tensors must be float32");
    }
    if (in->ndim != out->ndim || in->strides != nullptr || out->strides != nullptr) {
      return plugrt::sdk::Status::invalid_argument("tensors must be dense, of equal rank");
    }
    size_t count = 1;
    for (int32_t d = 0; d < in->ndim; ++d) {
      if (in->shape[d] != out->shape[d] || in->shape[d] < 0) {
        return plugrt::sdk::Status::invalid_argument("input and output shapes differ");
      }
      count *= static_cast<size_t>(in->shape[d]);
    }
    const float* src = reinterpret_cast<const float*>(static_cast<const char*>(in->data) + in->byte_offset);
    float* dst = reinterpret_cast<float*>(static_cast<char*>(out->data) + out->byte_offset);
    for (size_t i = 0; i < count; ++i) dst[i] = src[i] + offset_;
    return plugrt::sdk::Status::ok();
  }

 private:
  float offset_;
};

class SdkOffsetBackend : public plugrt::sdk::Backend {
 public:
  static constexpr char kName[] = "sdk_offset";
  // As the C backend: the host then takes no lock around a call.
  static constexpr plugrt_backend_capabilities kCapabilities = PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE;
  using DelegateType = OffsetDelegate;  // execute without a virtual call
  plugrt::sdk::Expected<std::unique_ptr<plugrt::sdk::Delegate>> init(const plugrt::sdk::InitContext& c) override {
    if (c.blob_size != sizeof(float)) return plugrt::sdk::Status::incompatible_blob("the blob is one float");
    float offset;
    std::memcpy(&offset, c.blob, sizeof(offset));
    return std::unique_ptr<plugrt::sdk::Delegate>(std::make_unique<OffsetDelegate>(offset));
  }
};

}  // namespace

PLUGRT_SDK_EXPORT_PLUGIN(bench_sdk_offset, "1.0.0", SdkOffsetBackend);
