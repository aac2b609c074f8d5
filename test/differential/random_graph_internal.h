// SPDX-License-Identifier: Apache-2.0
// The random graph generator's parts, shared by random_graph.cc (float graphs) and
// quantized_graph.cc (graphs with QuantizeLinear, DequantizeLinear, QLinearConv and
// QLinearMatMul).
#ifndef PLUGRT_TEST_DIFFERENTIAL_RANDOM_GRAPH_INTERNAL_H_
#define PLUGRT_TEST_DIFFERENTIAL_RANDOM_GRAPH_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "onnx_writer.h"
#include "random_graph.h"

namespace plugrt::differential::internal {

/// Draws from std::mt19937_64's raw output only, whose sequence the C++ standard fixes
/// (the standard distributions differ between libraries).
class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  /// A whole number in [lo, hi].
  int64_t between(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(engine_() % uint64_t(hi - lo + 1)); }
  /// A real number in [lo, hi).
  float real(float lo, float hi) { return lo + (hi - lo) * static_cast<float>(engine_() >> 40) * 0x1p-24f; }
  bool chance(double p) { return static_cast<double>(engine_() >> 11) * 0x1p-53 < p; }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(between(0, static_cast<int64_t>(items.size()) - 1))];
  }
  /// A real number of magnitude in [lo, hi), either sign.
  float signed_real(float lo, float hi) { return chance(0.5) ? real(lo, hi) : -real(lo, hi); }

 private:
  std::mt19937_64 engine_;
};

/// How a constant operand of an element-wise op is shaped against the value it meets.
enum class Operand { kScalar, kOneElement, kPerChannel, kLastAxis, kBroadcast, kFull };

constexpr int64_t kMaxElements = 24 * 1024;

/// "[1,8,5,5]".
std::string shape_text(const Shape& shape);

class Generator {
 public:
  explicit Generator(uint64_t seed) : random_(seed) { graph_.seed = seed; }
  /// A quantized graph for about one seed in four, an Einsum graph for about one in
  /// thirteen, a Pad graph for about one in thirty, a recurrent graph for about one in
  /// forty (all chosen from a stream of their own, so that the other seeds keep the
  /// graphs they always had), else a float one.
  RandomGraph generate();

 private:
  RandomGraph run();

  // ---- Stage heads: the ops a backend fuses into.
  Value head(const Value* x);
  Value matmul(const Value* x);
  Value gemm(const Value* x);
  Value conv(const Value* x);
  Value conv_transpose(const Value* x);
  Value pool(const Value* x);
  Value global_pool(const Value& x);
  Value normalization();
  Value softmax(const Value& x);
  Value binary_of_inputs();

  // ---- The chain after a head.
  Value chain_op(const Value& x);
  Value unary(const Value& x);
  Value binary_with_constant(const Value& x);
  Value binary_with_input(const Value& x);
  Value positive(const Value& x);
  Value reshape(const Value& x);
  Value channel_shuffle(const Value& x);
  Value resize_nearest(const Value& x);

  // ---- Helpers.
  Value image_input();
  Value weights(Shape shape, int64_t fan_in);
  Value random_constant(Shape shape, float lo, float hi);
  Shape operand_shape(const Shape& of, Operand kind);
  Value node(const std::string& op, const std::vector<Value>& inputs, Shape shape, const std::vector<Attr>& attrs = {},
             ElementType type = ElementType::kFloat);
  void reduces(int64_t length) { graph_.reduction_length = std::max(graph_.reduction_length, length); }

  // ---- Einsum graphs (einsum_graph.cc).
  RandomGraph run_einsum();
  /// An Einsum of two values whose equation is drawn as a batched matrix product.
  Value einsum();
  /// `text` in a random order.
  void shuffle(std::string* text);

  // ---- Pad graphs (pad_graph.cc).
  RandomGraph run_padded();
  /// `x` padded in a random mode by up to 3 on either side of each axis.
  Value pad(const Value& x);
  /// `x` sliced backwards (a negative step) along one axis.
  Value backward_slice(const Value& x);

  // ---- Recurrent graphs (recurrent_graph.cc).
  RandomGraph run_recurrent();

  // ---- Quantized graphs (quantized_graph.cc).
  /// An 8-bit value with its quantization, and how many quanta a fast backend's value
  /// may be from portable's (test/differential/README.md, "Quantized graphs").
  struct Quantized {
    Value value;
    float scale = 1;
    int32_t zero_point = 0;
    int64_t error = 0;
  };
  /// Int8 (or, to see them declined, uint8 or zero-point) weights and their scales.
  struct QuantizedWeights {
    Value values, scale, zero_point;
    std::vector<float> scales;     ///< one, or one per output channel
    std::vector<double> abs_sums;  ///< per output channel, the sum of |w - zero point|
    float typical_scale = 1;
  };
  RandomGraph run_quantized();
  Value float_source(bool* exact);
  Quantized quantize(const Value& x, float scale, double absolute, double relative);
  Value dequantize(const Quantized& x);
  Quantized quantized_step(const Quantized& x);
  Quantized qlinear_conv(const Quantized& x);
  Quantized qlinear_matmul(const Quantized& x);
  QuantizedWeights int8_weights(const Shape& shape, int64_t channels, bool channel_first);
  Quantized requantized(const std::string& op, const Quantized& x, const QuantizedWeights& w, int64_t fan_in, Shape ys,
                        std::vector<Value> extra, const std::vector<Attr>& attrs);
  Quantized requantize(const Quantized& x);
  Value float_step(const Value& x, double* absolute, double* relative, bool* exact);
  Value per_axis_round_trip(const Value& x, double* absolute);
  void quantized_output(const Quantized& x);
  Value lipschitz_op(const Value& x, double* absolute);
  float draw_scale(float range);
  int32_t draw_zero_point(ElementType type);
  Value zero_point(int32_t value, ElementType type) { return model_.integers({}, type, {value}); }
  void output(const Value& value, const std::string& bound);

  Random random_;
  OnnxWriter model_;
  RandomGraph graph_;
  std::vector<std::string> bounds_;  ///< a quantized graph's outputs' bounds (kOutputBoundsKey)
};

}  // namespace plugrt::differential::internal

#endif  // PLUGRT_TEST_DIFFERENTIAL_RANDOM_GRAPH_INTERNAL_H_
