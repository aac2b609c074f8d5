// SPDX-License-Identifier: Apache-2.0
// The portable backend's kernel interface.
//
// A kernel is prepared once per node when a delegate is initialised: it reads the
// node's attributes and its input and output TensorInfo, checks everything (dtypes,
// ranks, shapes, attribute values), and precomputes what it needs. (A node whose
// kernel needs the values of inputs given at run time, such as Reshape's shape, is
// prepared again when they change: run_time_parameters.h.) Running it then
// must not allocate: it reads its inputs and writes its outputs, using at most
// scratch_bytes() of scratch memory that the backend provides. Only control flow can
// fail at run time (a Loop running past its compiled scan length): such a kernel says
// so in may_fail() and the graph calls run_checked() instead of run().
#ifndef PLUGRT_PORTABLE_KERNEL_H_
#define PLUGRT_PORTABLE_KERNEL_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shape.h"

namespace plugrt::ir {
struct Node;
}

namespace plugrt::portable {

/// The data of one node's inputs and outputs, in the node's order. An absent
/// optional input is null.
struct KernelArgs {
  const void* const* inputs;
  void* const* outputs;
  /// scratch_bytes() bytes, 64-byte aligned, not preserved between runs.
  void* scratch;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual size_t scratch_bytes() const { return 0; }
  virtual void run(const KernelArgs& args) const = 0;
  virtual bool may_fail() const { return false; }
  /// False for a kernel whose outputs were decided when it was prepared (Shape's): it
  /// runs once, when its graph is compiled, whatever its inputs are.
  virtual bool reads_inputs() const { return true; }
  /// run(), reporting a failure on the data: false with the reason in `error`.
  virtual bool run_checked(const KernelArgs& args, char* error, size_t error_capacity) const {
    (void)error;
    (void)error_capacity;
    run(args);
    return true;
  }
};

/// What a kernel's prepare function sees of its node.
class NodeContext {
 public:
  NodeContext(const ir::Node& node, int opset, std::vector<const TensorInfo*> inputs,
              std::vector<const TensorInfo*> outputs);

  const ir::Node& node() const { return node_; }
  std::string_view op_type() const;
  std::string_view name() const;
  int opset() const { return opset_; }

  size_t num_inputs() const { return inputs_.size(); }
  /// Null when input `i` is absent (optional and not given, or beyond the count).
  const TensorInfo* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t num_outputs() const { return outputs_.size(); }
  /// Null when output `i` is absent.
  const TensorInfo* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }

  bool has_attribute(std::string_view name) const;
  int64_t attr_int(std::string_view name, int64_t fallback) const;
  float attr_float(std::string_view name, float fallback) const;
  std::string attr_string(std::string_view name, std::string_view fallback) const;
  /// Empty when absent.
  std::vector<int64_t> attr_ints(std::string_view name) const;
  std::vector<float> attr_floats(std::string_view name) const;
  /// The bytes of a subgraph attribute (a graph IR buffer); null with size 0 when absent.
  const uint8_t* attr_graph(std::string_view name, size_t* size) const;

  /// The elements of a constant int64 or int32 input, widened to int64; nullopt when
  /// the input is absent or not a constant.
  std::optional<std::vector<int64_t>> constant_ints(size_t i) const;
  /// The elements of a constant float32 input; nullopt when absent or not constant.
  std::optional<std::vector<float>> constant_floats(size_t i) const;
  /// The bytes of a constant input; null when absent or not a constant.
  const void* constant_data(size_t i) const;

  /// The inputs (bit i for input i < 64) whose values the kernel asked for through the
  /// three functions above while they were given but not constant: values that come
  /// at run time. A node that fails to prepare for want of them is prepared when it
  /// runs instead (run_time_parameters.h).
  uint64_t values_wanted() const { return values_wanted_; }

 private:
  /// Records input `i` as wanted when it is given but not constant.
  void want_values(size_t i) const;

  const ir::Node& node_;
  int opset_;
  std::vector<const TensorInfo*> inputs_;
  std::vector<const TensorInfo*> outputs_;
  mutable uint64_t values_wanted_ = 0;
};

/// The result of preparing a node: a kernel, or the reason the node cannot run.
struct Prepared {
  std::unique_ptr<Kernel> kernel;
  std::string error;
};

/// A failure naming the node: "Conv 'conv1': <why>".
Prepared prepare_error(const NodeContext& node, std::string why);

template <typename K, typename... Args>
Prepared prepared(Args&&... args) {
  return Prepared{std::make_unique<K>(std::forward<Args>(args)...), {}};
}

/// Writes int64 values known at init (Shape's dims, NonZero's indices of a constant).
class ConstantInt64Kernel final : public Kernel {
 public:
  explicit ConstantInt64Kernel(std::vector<int64_t> values) : values_(std::move(values)) {}
  bool reads_inputs() const override { return false; }
  void run(const KernelArgs& args) const override {
    if (!values_.empty()) std::memcpy(args.outputs[0], values_.data(), values_.size() * sizeof(int64_t));
  }

 private:
  std::vector<int64_t> values_;
};

/// `bytes` of storage with `*aligned` at its first 64-byte boundary. Uninitialised (not
/// zero-filled): an arena's pages are touched only when a kernel writes them, so a graph
/// planned for large bounds costs its address space, not its memory, until it runs at
/// large shapes. Throws std::bad_alloc when the memory is not there.
std::unique_ptr<std::byte[]> allocate_aligned(size_t bytes, std::byte** aligned);

/// Checks the node's input and output counts: an empty string when fine, else the reason.
std::string check_arity(const NodeContext& node, size_t min_inputs, size_t max_inputs, size_t min_outputs,
                        size_t max_outputs);
/// Checks that input or output `what` has `dtype`; the reason when not.
std::string check_dtype(const char* what, size_t index, const TensorInfo* info, DType dtype);
/// Checks that output `index` has shape `expected` and dtype `dtype`; the reason when not.
std::string check_output(const NodeContext& node, size_t index, const Shape& expected, DType dtype);

using PrepareFunction = Prepared (*)(const NodeContext& node);

struct KernelEntry {
  std::string_view op_type;
  PrepareFunction prepare;
};

/// Every kernel the portable backend has; looked up by op type at init.
PrepareFunction find_kernel(std::string_view op_type);
/// Op types with a kernel, sorted.
std::vector<std::string_view> supported_op_types();

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_KERNEL_H_
