// SPDX-License-Identifier: Apache-2.0
// The tensors, calls and sample graphs of the contract kit's checks: small graphs the
// backend's partition may take, the blob its preprocess makes of one, inputs with known
// values and outputs poisoned with NaN, and the check of a result.
#ifndef PLUGRT_SDK_CONTRACT_KIT_SAMPLES_H_
#define PLUGRT_SDK_CONTRACT_KIT_SAMPLES_H_

#include <dlpack/dlpack.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kit_plugin.h"
#include "plugrt/plugrt_abi.h"
#include "plugrt/sdk/testing/mock_host.h"

namespace plugrt::sdk::testing::kit {

/// One tensor the kit owns, and its DLTensor view.
struct OwnedTensor {
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  DLTensor tensor{};

  OwnedTensor(DLDataType dtype, std::vector<int64_t> dims) : shape(std::move(dims)) {
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    bytes.assign(static_cast<size_t>(count) * (dtype.bits / 8) + 64, 0);
    tensor.data = bytes.data();
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = dtype;
    tensor.shape = shape.data();
    tensor.strides = nullptr;
    tensor.byte_offset = 0;
  }
  OwnedTensor(const OwnedTensor&) = delete;
  OwnedTensor& operator=(const OwnedTensor&) = delete;
  float* f32() { return reinterpret_cast<float*>(bytes.data()); }
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kI32{kDLInt, 32, 1};

/// Inputs and outputs for one execute call.
struct Call {
  std::vector<std::unique_ptr<OwnedTensor>> inputs, outputs;
  std::vector<const DLTensor*> in_views, out_views;
  plugrt_execute_args args{};

  const plugrt_execute_args* finish() {
    in_views.clear();
    out_views.clear();
    for (auto& t : inputs) in_views.push_back(&t->tensor);
    for (auto& t : outputs) out_views.push_back(&t->tensor);
    play_size(&args, host_abi().execute_args_size());
    args.inputs = in_views.data();
    args.num_inputs = in_views.size();
    args.outputs = out_views.data();
    args.num_outputs = out_views.size();
    return &args;
  }
};

/// A small graph, the blob the backend's preprocess made of it, and what it computes.
struct Sample {
  std::string description;
  std::vector<uint8_t> blob;
  bool can_execute = false;  // false for a --blob file: its shapes are unknown
  std::vector<std::vector<int64_t>> input_shapes, output_shapes;
  std::function<float(const std::vector<float>& in)> reference;  // per element
};

struct GraphCase {
  std::string description;
  std::vector<uint8_t> graph;
  std::string node;  // its one node, "node 'Relu_0' (Relu)"
  size_t num_nodes;
  size_t num_inputs;
  std::function<float(const std::vector<float>&)> reference;
};

/// The kit's sample graphs: one node each, on float32[2,3].
std::vector<GraphCase> sample_graphs();

/// Why no sample could be made, or the sample; and what the backend's partition said of
/// each sample graph tried.
struct SampleResult {
  std::optional<Sample> sample;
  std::string why_not;
  std::vector<std::string> tried;  // "Relu on float32[2,3]: partition took node 'Relu_0' (Relu)"
};

/// Says which sample a check used and what partition took, so an author sees what was
/// exercised (printed outside any output capture).
void print_sample_use(const std::string& backend, const SampleResult& result);
/// The --blob file, or the first sample graph the backend's partition takes whole,
/// preprocessed.
SampleResult make_sample(const plugrt_backend* backend, MockHostServices& host);
/// Fills a float32 output with NaN before execute, so that an element the backend never
/// writes cannot pass for a result.
void poison(OwnedTensor& output);
/// What a wrong element says when it is still the poison.
std::string poisoned_hint(float got);
/// Inputs with values from -3.5 to 3.5, outputs poisoned.
Call make_call(const Sample& sample);
/// Empty when output 0 holds the reference result.
std::string check_result(const Sample& sample, Call& call);

}  // namespace plugrt::sdk::testing::kit

#endif  // PLUGRT_SDK_CONTRACT_KIT_SAMPLES_H_
