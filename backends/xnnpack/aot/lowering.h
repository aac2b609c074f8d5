// SPDX-License-Identifier: Apache-2.0
// Lowering graph IR nodes to XNNPACK subgraph nodes. The same code decides what
// `partition` takes (a node is taken exactly when it lowers) and writes what
// `preprocess` stores, so the two can never disagree.
//
// Layout: inside a partition every 4-D value is NHWC; values of other ranks keep the
// graph's order. A node is taken only where that convention computes what ONNX says
// (a Reshape of a 4-D value, for example, only when NCHW and NHWC hold the same bytes).
// The partition's inputs and outputs are converted at its edges, in execute.
#ifndef PLUGRT_BACKENDS_XNNPACK_AOT_LOWERING_H_
#define PLUGRT_BACKENDS_XNNPACK_AOT_LOWERING_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "plugrt/sdk/graph_view.h"
#include "plugrt/sdk/onnx_semantics.h"
#include "xnnpack_blob_generated.h"

namespace plugrt::xnnpack {

using sdk::GraphView;
using sdk::num_elements;
using sdk::shape_text;

class Lowering {
 public:
  explicit Lowering(const GraphView& graph) : graph_(graph) {}

  /// Lowers node `index`. Returns "" when it is taken, otherwise the reason it is not
  /// (what a user reads in `plugrt compile`'s summary of untaken nodes).
  std::string add_node(size_t index);

  /// The finished blob (header + flatbuffer) for the graph's inputs and outputs, after
  /// every node was added. `error` says why when it cannot be written.
  std::vector<uint8_t> finish(std::string* error);

 private:
  struct Tensor {
    std::vector<uint64_t> dims;
    std::vector<float> data;
    bool is_static = false;
    // Quantized tensors (lowering_quantized.cc): the type, its parameters and, for a
    // static one, its bytes.
    blob::DataType datatype = blob::DataType::Float32;
    float scale = 0;
    int32_t zero_point = 0;
    std::vector<float> channel_scales;
    uint32_t channel_dim = 0;
    std::vector<uint8_t> bytes;
    bool from_uint8 = false;  // the graph's value is uint8 (see Quantization)
    // A QuantizeLinear's output, held at scale 1 (`scale` is 1): the graph's scale,
    // which readers fold into their own arithmetic (lower_quantize_linear). 0 otherwise.
    float graph_scale = 0;
  };
  /// One 8-bit activation's type and quantization, as a QLinear node states it, in
  /// XNNPACK's terms: a uint8 value is int8 inside the partition, each element and the
  /// zero point less 128 (`from_uint8`; the edges flip the top bit).
  struct Quantization {
    blob::DataType datatype = blob::DataType::QInt8;
    float scale = 0;
    int32_t zero_point = 0;
    bool from_uint8 = false;
  };
  struct Node {
    blob::NodeKind kind;
    std::vector<uint32_t> inputs, outputs;
    std::vector<uint32_t> padding, kernel, strides, dilations, adjustment;
    uint32_t groups = 0;
    uint64_t group_input_channels = 0, group_output_channels = 0;
    uint32_t depth_multiplier = 0;
    float output_min, output_max;
    float alpha = 0;
    std::vector<uint64_t> pre_paddings, post_paddings;
    float padding_value = 0;
    std::vector<uint64_t> new_shape;
    std::string name;
    Node();
  };

  std::string lower(const ir::Node& node);
  /// What Conv and ConvTranspose check alike: a float32 input of rank 4 (`what` names
  /// the op in the refusal) and 4-D float32 constant weights, whose shapes it returns.
  std::string check_conv_operands(int32_t x, int32_t w, const char* what, std::vector<int64_t>* xs,
                                  std::vector<int64_t>* ws) const;
  /// The bias of `out_channels` elements: the constant `b`, or zeros when there is none.
  std::string read_bias(int32_t b, int64_t out_channels, std::vector<float>* bias) const;
  std::string lower_conv(const ir::Node& node);
  std::string lower_conv_transpose(const ir::Node& node);
  std::string lower_gemm(const ir::Node& node);
  std::string lower_matmul(const ir::Node& node);
  std::string lower_binary(const ir::Node& node, blob::NodeKind kind);
  std::string lower_unary(const ir::Node& node);
  std::string lower_hard_sigmoid(const ir::Node& node);
  std::string lower_softmax(const ir::Node& node);
  std::string lower_pool(const ir::Node& node, bool is_max);
  std::string lower_global_pool(const ir::Node& node);
  std::string lower_pad(const ir::Node& node);
  std::string lower_reshape(const ir::Node& node);
  std::string lower_batch_norm(const ir::Node& node);
  std::string lower_qlinear_conv(const ir::Node& node);
  std::string lower_qlinear_matmul(const ir::Node& node);
  std::string lower_quantize_linear(const ir::Node& node);
  std::string lower_dequantize_linear(const ir::Node& node);
  /// For a QLinear node whose input tensor holds a QuantizeLinear's output at scale 1:
  /// the input's scale folded into the weights' (`x->scale` becomes 1), so that XNNPACK's
  /// multiplier 1 * (x_scale * w_scale) / y_scale is the one the node states.
  std::string fold_unit_input(uint32_t input, const Quantization& y, Quantization* x,
                              std::vector<float>* weight_scales) const;
  /// The quantization of the 8-bit run-time value `value` whose scale and zero point are
  /// the node's inputs `scale` and `zero_point` (the zero point may be absent).
  std::string read_quantization(const ir::Node& node, int32_t value, size_t scale, size_t zero_point, const char* role,
                                Quantization* out) const;
  /// The weights' scales (one, or one per output channel) after checking that their zero
  /// point is absent or 0, and the multipliers XNNPACK derives from them within its range.
  std::string read_weight_scales(const ir::Node& node, int64_t channels, const Quantization& x, const Quantization& y,
                                 std::vector<float>* scales) const;
  /// The tensor of an 8-bit run-time value: created with `q`, or the existing one when it
  /// has the same quantization (XNNPACK gives a value one), else a refusal.
  std::string quantized_activation(int32_t value, const Quantization& q, uint32_t* tensor);
  uint32_t add_quantized_static(std::vector<uint64_t> dims, blob::DataType datatype, float scale, int32_t zero_point,
                                std::vector<float> channel_scales, std::vector<uint8_t> bytes);

  /// The range the values of `tensor` are clamped to, as XNNPACK sees it once it has
  /// fused each Clamp into the node before it: the intersection along a chain of clamps.
  /// Kept per tensor once asked: a node's range is final once the next node reads it.
  std::pair<float, float> clamped_range(uint32_t tensor);
  /// Checks that `value` is a float32 value computed at run time of rank 1 to 6.
  std::string check_activation(int32_t value, const char* role) const;
  /// The tensor of a run-time value (created on first use).
  uint32_t activation(int32_t value);
  uint32_t add_static(std::vector<uint64_t> dims, std::vector<float> data);
  uint32_t add_internal(std::vector<uint64_t> dims);
  /// An internal run-time tensor of `dims` with the type and quantization of `like`.
  uint32_t add_internal_like(uint32_t like, std::vector<uint64_t> dims);
  Node& add(blob::NodeKind kind, const ir::Node& from, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs);

  const GraphView& graph_;
  std::vector<Tensor> tensors_;
  std::vector<Node> nodes_;
  std::map<int32_t, uint32_t> value_tensor_;
  std::vector<int32_t> values_added_;              // to value_tensor_ by the node being lowered
  std::unordered_map<uint32_t, size_t> producer_;  // tensor -> the node that writes it
  std::unordered_map<uint32_t, std::pair<float, float>> ranges_;
};

/// XNNPACK's dims of a graph shape: NCHW -> NHWC for 4-D, unchanged otherwise.
std::vector<uint64_t> xnn_dims(const std::vector<int64_t>& shape);
/// Whether a shape's NCHW and NHWC layouts hold the same bytes in the same order.
bool layout_trivial(const std::vector<int64_t>& shape);

}  // namespace plugrt::xnnpack

#endif  // PLUGRT_BACKENDS_XNNPACK_AOT_LOWERING_H_
