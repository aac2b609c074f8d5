// SPDX-License-Identifier: Apache-2.0
// One oneDNN handle: the primitives built once from a blob, the memories
// they run on (an arena planned at init, the host's tensors bound at the edges), and
// the calls that run them.
#ifndef PLUGRT_BACKENDS_ONEDNN_SRC_ONEDNN_DELEGATE_H_
#define PLUGRT_BACKENDS_ONEDNN_SRC_ONEDNN_DELEGATE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "plugrt/sdk/backend.h"

namespace plugrt::onednn {

namespace blob {
struct Blob;
}  // namespace blob

/// A kRecurrent step's cell and sizes: T steps, batch N, K input features, H hidden
/// units, D directions; axis 0 forward, 1 reverse, 2 both (as the blob's recurrent op).
struct RecurrentShape {
  /// An LSTM; a GRU (reset before its recurrent product); a GRU with the reset after
  /// (ONNX's linear_before_reset, PyTorch's GRU).
  enum class Cell { kLstm, kGru, kGruResetAfter };
  Cell cell = Cell::kLstm;
  int64_t steps = 0, batch = 0, features = 0, hidden = 0, directions = 1;
  int axis = 0;
  int64_t gates() const { return cell == Cell::kLstm ? 4 : 3; }
  /// The bias rows per direction: the reset-after GRU keeps R's bias of its third gate apart.
  int64_t bias_gates() const { return cell == Cell::kGru ? 3 : 4; }
};

/// One call of the execution plan.
struct Step {
  enum class Kind {
    kPrimitive,
    kErf,
    kFill,
    kQuantizeU8,
    kQuantizeS8,
    kDequantizeU8,
    kDequantizeS8,
    kGather,
    kIndexedCopy,
    kAddDequantized,
    kRecurrent,
  };
  /// An operand's element type in a kAddDequantized step.
  enum class Element { kF32, kU8, kS8 };
  Kind kind = Kind::kPrimitive;
  dnnl::primitive primitive;
  std::unordered_map<int, dnnl::memory> args;
  /// `args` as the C API takes them, made once so that running a step copies nothing.
  std::vector<dnnl_exec_arg_t> c_args;
  // kErf: element-wise erf from `source` to `destination` (both plain).
  // kFill: `count` elements of `destination` set to `value`.
  // kQuantize*: `count` float32 elements of `source` to uint8 or int8 in `destination`
  // (the same layout), saturate(round_half_even(x / value) + zero_point), as ONNX's
  // QuantizeLinear. kDequantize*: uint8 or int8 to float32, (x - zero_point) * value.
  // Per axis (plain layouts), `scales` and `zero_points` instead: element i takes those
  // at (i / inner) % scales.size().
  // kGather: for each of the `count` int64 indices in `source`, the row of `inner` floats
  // it names in `table` ([rows, inner]; negative counts from the end) to `destination`.
  // kIndexedCopy: `destination` (plain, `dims`) element [i0, i1, ...] is `source`'s (plain,
  // element `strides`) at [map_0(i0), map_1(i1), ...] times `value`, map_d being dims[d]
  // entries of `index_map` after those of the axes before (a Pad in reflect or edge
  // mode, a slice with negative steps).
  // kAddDequantized: `count` float32 elements of `destination` = a + b, in one layout,
  // a read from `source` and b from `source2`: float32 as they are, or uint8 or int8
  // dequantized as above, a's with `value` and `zero_point`, b's with `value2` and
  // `zero_point2` (DequantizeLinear, DequantizeLinear or not, then Add, each rounded
  // in float32 as they would be); with `relu`, then s > 0 ? s : 0, as oneDNN's Relu of
  // slope 0 computes it (a max with 0).
  dnnl::memory source, destination, source2;
  size_t count = 0;
  float value = 0.0f, value2 = 0.0f;
  int32_t zero_point = 0, zero_point2 = 0;
  Element element = Element::kF32, element2 = Element::kF32;
  bool relu = false;
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  size_t inner = 1;
  dnnl::memory table;
  int64_t rows = 0;
  std::vector<int64_t> dims, strides, index_map;
  // kRecurrent: its operands in `args` (src/recurrent_steps.h).
  RecurrentShape recurrent;
};

/// One partition input or output: the host tensor's dims and the memories that view it.
struct External {
  std::vector<int64_t> dims;
  size_t num_elements = 0;
  /// float32, or uint8 or int8 at a quantized op's edge.
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<dnnl::memory> views;
};

/// What the plan builder (src/plan_builder.cc) hands over.
struct Plan {
  std::vector<Step> steps;
  std::vector<External> inputs, outputs;
  /// Memories that live in the arena, at these byte offsets.
  std::vector<std::pair<dnnl::memory, size_t>> arena_views;
  size_t arena_size = 0;
  /// Memories that share the scratchpad buffer.
  std::vector<dnnl::memory> scratchpad_views;
  size_t scratchpad_size = 0;
  /// Weights reordered at init into oneDNN's preferred formats (oneDNN owns the buffers).
  std::vector<dnnl::memory> constants;
};

/// A plan with its arena and scratchpad, bound: ready to run.
struct BoundPlan {
  Plan plan;
  void* arena = nullptr;
  void* scratchpad = nullptr;
};

class OnednnDelegate final : public sdk::Delegate {
 public:
  /// Verifies the blob, builds every primitive and plans the memory. A blob of another
  /// format or version, or one this oneDNN cannot build, is refused as incompatible (the
  /// host falls back).
  static sdk::Expected<std::unique_ptr<sdk::Delegate>> create(const sdk::InitContext& context);

  /// Checks the arguments, binds the host's tensors and runs the plan. Creates no
  /// primitive and allocates nothing of its own unless it fails, or it is the first call
  /// on one thread of a small handle (see plan_for).
  sdk::Status execute(const sdk::Arguments& args) override;

  ~OnednnDelegate() override;
  OnednnDelegate(const OnednnDelegate&) = delete;
  OnednnDelegate& operator=(const OnednnDelegate&) = delete;

 private:
  /// The most blob and constant bytes for which a handle makes a second plan, for calls
  /// on one thread, rather than capping its plan's teams (see plan_for); the runtime
  /// option `one_thread_plan_max_bytes` changes it (`--backend-option
  /// onednn.one_thread_plan_max_bytes=N`, MethodOptions::backend_options).
  static constexpr int64_t kMaxBytesForOneThreadPlan = int64_t{32} << 20;

  explicit OnednnDelegate(sdk::Host host) : host_(host) {}
  sdk::Status build(const sdk::InitContext& context);
  /// Builds the blob's plan for `threads` and binds it.
  sdk::Status make_plan(int threads, BoundPlan* bound);
  sdk::Status bind(BoundPlan* bound);
  void release(BoundPlan* bound);
  /// The plan for a call on `threads`: the handle's, or for one thread a plan made for
  /// one on the first such call when the handle is small.
  BoundPlan& plan_for(size_t threads);
  /// Runs a plan's steps on the bound tensors.
  /// Runs the plan's steps in order; between two, stops when the host asks (ABI 1.8).
  sdk::Status run_steps(Plan& plan, const sdk::Arguments& args);
  static sdk::Expected<void*> check_tensor(const char* role, size_t index, const DLTensor* tensor,
                                           const External& external);

  sdk::Host host_;
  int threads_ = 1;
  dnnl::engine engine_;
  dnnl::stream stream_;
  BoundPlan plan_;
  // What a plan is built from again: the blob (it outlives the handle) and the host's
  // constants (their bytes do too; the array init got does not).
  const blob::Blob* blob_ = nullptr;
  std::vector<plugrt_named_constant> constants_;
  std::unique_ptr<BoundPlan> one_thread_plan_;
  bool one_thread_plan_refused_ = false;
};

}  // namespace plugrt::onednn

#endif  // PLUGRT_BACKENDS_ONEDNN_SRC_ONEDNN_DELEGATE_H_
