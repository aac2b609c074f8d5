// SPDX-License-Identifier: Apache-2.0
// Lowering graph IR nodes to oneDNN ops (aot/op_list.h). The same code decides what
// `partition` takes (a node is taken exactly when it lowers on its own) and builds
// what `preprocess` stores, so the two can never disagree. Within one partition,
// `preprocess` also recognises multi-node patterns (layer normalization written out
// as ReduceMean/Sub/Pow/Sqrt/Div, GELU written with Erf) and lowers each to one
// primitive; every node of such a pattern also lowers alone, for partitions that hold
// only part of it.
//
// Shapes stay in the graph's logical order; init picks the memory formats.
#ifndef PLUGRT_BACKENDS_ONEDNN_AOT_LOWERING_H_
#define PLUGRT_BACKENDS_ONEDNN_AOT_LOWERING_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "aot/op_list.h"
#include "plugrt/sdk/graph_view.h"
#include "plugrt/sdk/onnx_semantics.h"

namespace plugrt::onednn {

using sdk::broadcasts_to;
using sdk::GraphView;
using sdk::normalize_axis;
using sdk::num_elements;
using sdk::resolve_window;
using sdk::shape_text;
using sdk::Window;
using sdk::window_output;

class Lowering {
 public:
  explicit Lowering(const GraphView& graph) : graph_(graph) {}

  /// Lowers node `index`. Returns "" when it is taken, otherwise the reason it is not
  /// (what a user reads in `plugrt compile`'s summary of untaken nodes).
  std::string add_node(size_t index);

  /// Lowers every node of the graph, fusing patterns; "" or the first refusal.
  std::string add_all_nodes();

  /// Name, in the blob, each constant that is used as the graph stores it, instead of
  /// copying it (the host offered the graph's constants by name).
  void set_name_constants(bool name_constants) { name_constants_ = name_constants; }

  /// The finished blob for the graph's inputs and outputs, after every node was added.
  /// `error` says why when it cannot be written.
  std::vector<uint8_t> finish(std::string* error);
  /// Whether the finished blob names constants (init then needs them).
  bool names_constants() const { return names_constants_; }

 private:
  std::string lower(const ir::Node& node);
  std::string lower_conv(const ir::Node& node);
  std::string lower_conv_transpose(const ir::Node& node);
  std::string lower_gemm(const ir::Node& node);
  std::string lower_matmul(const ir::Node& node);
  /// Einsum as one matmul through strided views (aot/lowering_einsum.cc).
  std::string lower_einsum(const ir::Node& node);
  std::string lower_binary(const ir::Node& node, blob::Algorithm algorithm);
  std::string lower_unary(const ir::Node& node, const std::string& op);
  std::string lower_clip(const ir::Node& node);
  /// Clip with a min or max (`computed`: their values, -1 where constant) computed at
  /// run time; the constant bounds `lo` and `hi`.
  void lower_clip_by_values(const ir::Node& node, const int32_t computed[2], float lo, float hi);
  std::string lower_pow(const ir::Node& node);
  std::string lower_softmax(const ir::Node& node, bool log);
  std::string lower_pool(const ir::Node& node, bool is_max, bool global);
  std::string lower_batch_norm(const ir::Node& node);
  std::string lower_layer_norm(const ir::Node& node);
  std::string lower_instance_norm(const ir::Node& node);
  std::string lower_concat(const ir::Node& node);
  std::string lower_transpose(const ir::Node& node);
  std::string lower_reshape(const ir::Node& node);
  std::string lower_slice(const ir::Node& node);
  std::string lower_resize(const ir::Node& node);
  std::string lower_resize_nearest(const ir::Node& node);
  std::string lower_pad(const ir::Node& node);
  std::string lower_gather(const ir::Node& node);
  std::string lower_recurrent(const ir::Node& node, bool lstm);
  std::string lower_reduce(const ir::Node& node, blob::Algorithm algorithm);
  /// A convolution's geometry (Conv, QLinearConv), checked against its input's dims
  /// `xs`, its weights `w` and its output `y`.
  struct ConvGeometry {
    int64_t group = 1, out_channels = 0;
    std::vector<int64_t> kernel;
    Window window;
  };
  std::string read_conv_geometry(const ir::Node& node, const std::vector<int64_t>& xs, int32_t w, int32_t y,
                                 ConvGeometry* geometry) const;
  /// Gives `op` the geometry's strides, dilations (oneDNN's: 0 is none), pads, kernel
  /// and groups.
  static void set_conv_geometry(const ConvGeometry& geometry, Op* op);
  // Quantized ops (aot/lowering_quantized.cc).
  std::string lower_qlinear_conv(const ir::Node& node);
  std::string lower_qlinear_matmul(const ir::Node& node);
  /// QuantizeLinear (`quantize`) or DequantizeLinear with one constant scale and zero point.
  std::string lower_quantize_linear(const ir::Node& node, bool quantize);
  /// A QuantizeLinear's or DequantizeLinear's scale and zero point (of type `quantized`):
  /// one each, or one per index of the `axis` attribute's dimension, into `op`.
  std::string read_linear_quantization(const ir::Node& node, ir::DType quantized, bool quantize, Op* op) const;
  std::string read_per_axis_quantization(const ir::Node& node, ir::DType quantized, Op* op) const;
  /// Checks that `value` is a uint8 or int8 value computed at run time with static dims.
  std::string check_quantized_activation(int32_t value, const char* role) const;
  /// The requantization of a QLinear op: the float32 scales at inputs `a_scale`,
  /// `b_scale` (one, or `channels` of them) and `y_scale`, the zero points at
  /// `a_zero_point` and `y_zero_point` (of the activations' types), the weights' at
  /// `b_zero_point` (all 0), into `op`'s scales and zero points.
  std::string read_requantization(const ir::Node& node, int a_scale, int a_zero_point, int b_scale, int b_zero_point,
                                  int y_scale, int y_zero_point, int64_t channels, Op* op) const;
  /// An int8, uint8 or int32 constant tensor of the graph's bytes.
  int32_t add_typed_constant(std::vector<int64_t> dims, blob::DataType dtype, std::vector<uint8_t> bytes,
                             int32_t source);

  // Patterns (aot/patterns.cc). Each returns the nodes it covers (empty: no match)
  // after lowering them as one op.
  std::vector<size_t> match_layer_norm(size_t first);
  std::vector<size_t> match_gelu(size_t first);
  std::vector<size_t> match_swish(size_t first);
  std::vector<size_t> match_hard_swish(size_t first);
  /// x * gate(x) from the gate node `first` as one eltwise op (SiLU, HardSwish).
  std::vector<size_t> match_self_gated(size_t first, blob::Algorithm algorithm, float alpha, const char* what);
  std::vector<size_t> match_channel_shuffle(size_t first);
  /// The node reading `value` when exactly one node does (and it is no graph output).
  int64_t sole_reader(int32_t value) const;

  /// Checks that `value` is a float32 value computed at run time with static dims.
  std::string check_activation(int32_t value, const char* role) const;
  /// The tensor of a run-time value (created on first use).
  int32_t activation(int32_t value);
  /// A constant tensor; `source` is the graph constant its data was read from, if any.
  int32_t add_constant(std::vector<int64_t> dims, std::vector<float> data, int32_t source = -1);
  /// Marks the tensors whose data is a graph constant's bytes as they are; whether any.
  bool name_constants();
  int32_t add_internal(std::vector<int64_t> dims);
  /// `tensor` seen with `rank` dims (leading 1s added): a Reshape when it runs, or a
  /// copy of a constant's dims.
  int32_t with_rank(int32_t tensor, size_t rank, const ir::Node& from);
  Op& add(blob::OpKind kind, const ir::Node& from, std::vector<int32_t> inputs, std::vector<int32_t> outputs);

  const GraphView& graph_;
  OpList list_;
  std::map<int32_t, int32_t> value_tensor_;
  std::vector<int32_t> values_added_;  // to value_tensor_ by the node being lowered
  bool name_constants_ = false;
  bool names_constants_ = false;
  mutable std::vector<int64_t> first_reader_;  // per value, the first node reading it (-1: none)
};

/// Dims of a graph shape as oneDNN sees them: a scalar is [1].
std::vector<int64_t> dnnl_dims(const std::vector<int64_t>& shape);

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_AOT_LOWERING_H_
