// SPDX-License-Identifier: Apache-2.0
// Control flow: If, Loop and Scan. Each subgraph (a graph IR buffer in a Graph
// attribute) is compiled once when the node is prepared, as a CompiledGraph of its
// own; running the node binds the subgraph's inputs and outputs to the node's tensors
// (or to the loop-carried buffers in scratch) and runs it.
//
// A subgraph is self-contained: the values it reads from the enclosing graph are
// passed as the node's last inputs, `captured` of them (core/FORMAT.md):
//   If:   inputs (cond, captured...);                 branches: (captured...) -> (outputs...)
//   Loop: inputs (M, cond, carried..., captured...);  body: (iteration, cond, carried...,
//         captured...) -> (cond, carried..., scan elements...)
//   Scan: inputs (state..., scanned..., captured...); body: (state..., elements...,
//         captured...) -> (state..., scan elements...), along axis 0.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "../call_stop.h"
#include "../compiled_graph.h"
#include "kernel_families.h"

namespace plugrt::portable {

namespace {

/// The error of a loop that stopped at iteration `t` because its call was asked to.
bool stopped(const std::string& label, int64_t t, char* error, size_t error_capacity) {
  std::snprintf(error, error_capacity, "%s: stopped at iteration %lld: the call was cancelled or passed its time limit",
                label.c_str(), static_cast<long long>(t));
  return false;
}

/// Subgraphs nest at most this deep (a crafted graph could otherwise recurse without bound).
constexpr int kMaxNesting = 16;
thread_local int nesting = 0;

constexpr size_t kAlignment = 64;
size_t aligned(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

/// "[2, 3] float32".
std::string describe(const TensorInfo& info) {
  return to_string(info.shape) + " " + std::string(to_string(info.dtype));
}

bool same_type(const TensorInfo& a, const TensorInfo& b) { return a.dtype == b.dtype && a.shape == b.shape; }

/// A compiled subgraph with DLTensor views of its inputs and outputs, whose data
/// pointers are set before each run.
class Subgraph {
 public:
  /// Compiles the subgraph attribute `name`; the reason on failure.
  std::string compile(const NodeContext& node, const char* name) {
    size_t size = 0;
    const uint8_t* data = node.attr_graph(name, &size);
    if (data == nullptr) return std::string("has no subgraph '") + name + "'";
    if (nesting >= kMaxNesting) return "subgraphs nest deeper than " + std::to_string(kMaxNesting);
    struct Level {  // one level deeper while the subgraph compiles, even if it throws
      Level() { ++nesting; }
      ~Level() { --nesting; }
    };
    std::string error;
    CompileFailure failure = CompileFailure::kInvalid;
    {
      Level level;
      graph_ = CompiledGraph::compile(data, size, &error, &failure);
    }
    if (graph_ == nullptr) return std::string("subgraph '") + name + "': " + error;
    name_ = name;
    inputs_.assign(graph_->num_inputs(), DLTensor{});
    outputs_.assign(graph_->num_outputs(), DLTensor{});
    shapes_.clear();
    shapes_.reserve(inputs_.size() + outputs_.size());
    auto view = [this](DLTensor& tensor, const TensorInfo& info) {
      const std::vector<int64_t>& shape =
          shapes_.emplace_back(info.shape.dims.begin(), info.shape.dims.begin() + info.shape.rank);
      tensor.device = {kDLCPU, 0};
      tensor.ndim = info.shape.rank;
      tensor.dtype = to_dlpack(info.dtype);
      tensor.shape = const_cast<int64_t*>(shape.data());
    };
    for (size_t k = 0; k < inputs_.size(); ++k) view(inputs_[k], graph_->input_info(k));
    for (size_t k = 0; k < outputs_.size(); ++k) view(outputs_[k], graph_->output_info(k));
    for (DLTensor& tensor : inputs_) input_views_.push_back(&tensor);
    for (DLTensor& tensor : outputs_) output_views_.push_back(&tensor);
    return {};
  }

  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  const TensorInfo& input(size_t k) const { return graph_->input_info(k); }
  const TensorInfo& output(size_t k) const { return graph_->output_info(k); }

  /// Checks the subgraph's input `k` against `expected`; the reason when they differ.
  std::string expect_input(size_t k, const TensorInfo& expected, const char* role) const {
    if (same_type(input(k), expected)) return {};
    return name_ + "'s input " + std::to_string(k) + " is " + describe(input(k)) + ", but " + role + " is " +
           describe(expected);
  }
  std::string expect_output(size_t k, const TensorInfo& expected, const char* role) const {
    if (same_type(output(k), expected)) return {};
    return name_ + "'s output " + std::to_string(k) + " is " + describe(output(k)) + ", but " + role + " is " +
           describe(expected);
  }

  void bind_input(size_t k, const void* data) const { inputs_[k].data = const_cast<void*>(data); }
  void bind_output(size_t k, void* data) const { outputs_[k].data = data; }

  bool run(char* error, size_t error_capacity) const {
    return graph_->run(input_views_.data(), input_views_.size(), output_views_.data(), output_views_.size(), error,
                       error_capacity);
  }

 private:
  std::unique_ptr<CompiledGraph> graph_;
  std::string name_;
  // Views whose data pointers each run rebinds: the graph is the only user.
  mutable std::vector<DLTensor> inputs_, outputs_;
  std::vector<const DLTensor*> input_views_, output_views_;
  std::vector<std::vector<int64_t>> shapes_;
};

/// The count of captured values: the `captured` attribute, checked against the inputs.
bool read_captured(const NodeContext& node, size_t fixed_inputs, size_t* captured, std::string* why) {
  const int64_t count = node.attr_int("captured", 0);
  if (count < 0 || static_cast<uint64_t>(count) > node.num_inputs() - std::min(fixed_inputs, node.num_inputs()) ||
      node.num_inputs() < fixed_inputs) {
    *why = "attribute 'captured' (" + std::to_string(count) + ") does not fit its " +
           std::to_string(node.num_inputs()) + " inputs";
    return false;
  }
  *captured = static_cast<size_t>(count);
  for (size_t i = node.num_inputs() - *captured; i < node.num_inputs(); ++i) {
    if (node.input(i) == nullptr) {
      *why = "captured input " + std::to_string(i) + " is absent";
      return false;
    }
  }
  return true;
}

bool is_single(const TensorInfo* info, DType dtype) {
  return info != nullptr && info->dtype == dtype && info->num_elements() == 1;
}

class IfKernel final : public Kernel {
 public:
  std::string prepare(const NodeContext& node) {
    if (!is_single(node.input(0), DType::kBool)) return "its condition (input 0) must be one bool";
    size_t captured = 0;
    if (std::string problem; !read_captured(node, 1, &captured, &problem)) return problem;
    if (captured != node.num_inputs() - 1) {
      return "attribute 'captured' (" + std::to_string(captured) + ") does not fit its " +
             std::to_string(node.num_inputs()) + " inputs (an If passes all but its condition)";
    }
    for (size_t i = 1; i < node.num_inputs(); ++i) {
      if (node.input(i) == nullptr) return "captured input " + std::to_string(i) + " is absent";
    }
    for (auto [branch, name] : {std::pair{&then_, "then_branch"}, std::pair{&else_, "else_branch"}}) {
      if (std::string why = branch->compile(node, name); !why.empty()) return why;
      if (branch->num_inputs() != node.num_inputs() - 1 || branch->num_outputs() != node.num_outputs()) {
        return std::string(name) + " has " + std::to_string(branch->num_inputs()) + " inputs and " +
               std::to_string(branch->num_outputs()) + " outputs; the node passes " +
               std::to_string(node.num_inputs() - 1) + " and takes " + std::to_string(node.num_outputs());
      }
      for (size_t k = 0; k < branch->num_inputs(); ++k) {
        if (std::string why = branch->expect_input(k, *node.input(k + 1), "the value passed"); !why.empty()) {
          return why;
        }
      }
      for (size_t k = 0; k < branch->num_outputs(); ++k) {
        if (node.output(k) == nullptr) return "output " + std::to_string(k) + " is required";
        if (std::string why = branch->expect_output(k, *node.output(k), "the node's output"); !why.empty()) {
          return why;
        }
      }
    }
    return {};
  }

  void run(const KernelArgs& args) const override {
    char ignored[1];
    (void)run_checked(args, ignored, sizeof(ignored));
  }
  bool may_fail() const override { return true; }
  bool run_checked(const KernelArgs& args, char* error, size_t error_capacity) const override {
    // A bool tensor's byte is read as a byte: any nonzero value is true.
    const Subgraph& branch = *static_cast<const uint8_t*>(args.inputs[0]) != 0 ? then_ : else_;
    for (size_t k = 0; k < branch.num_inputs(); ++k) branch.bind_input(k, args.inputs[k + 1]);
    for (size_t k = 0; k < branch.num_outputs(); ++k) branch.bind_output(k, args.outputs[k]);
    return branch.run(error, error_capacity);
  }

 private:
  Subgraph then_, else_;
};

/// Two scratch buffers per carried value: a body reads one and writes the other.
class CarriedBuffers {
 public:
  void add(size_t bytes) {
    bytes_.push_back(bytes);
    offsets_.push_back(total_);
    total_ += 2 * aligned(bytes);
  }
  size_t count() const { return bytes_.size(); }
  size_t scratch_bytes() const { return total_; }
  /// Buffer `which` (0 or 1) of value `k`.
  std::byte* buffer(std::byte* scratch, size_t k, int which) const {
    return scratch + offsets_[k] + (which != 0 ? aligned(bytes_[k]) : 0);
  }
  size_t bytes(size_t k) const { return bytes_[k]; }

 private:
  std::vector<size_t> bytes_, offsets_;
  size_t total_ = 0;
};

/// The node's scan outputs: outputs [first, end), each [length, element shape...] of the
/// body's outputs from `body_first` on. Sets `length` (the same for all); the reason
/// on failure.
std::string check_scan_outputs(const NodeContext& node, const Subgraph& body, size_t first, size_t body_first,
                               int64_t* length, std::vector<size_t>* element_bytes) {
  for (size_t k = first; k < node.num_outputs(); ++k) {
    const TensorInfo* out = node.output(k);
    if (out == nullptr) return "output " + std::to_string(k) + " is required";
    const TensorInfo& element = body.output(body_first + k - first);
    Shape expected;
    expected.push_back(out->shape.rank > 0 ? out->shape[0] : -1);
    for (int axis = 0; axis < element.shape.rank && expected.rank < kMaxRank; ++axis) {
      expected.push_back(element.shape[axis]);
    }
    if (out->shape.rank == 0 || out->dtype != element.dtype || out->shape != expected) {
      return "scan output " + std::to_string(k) + " is " + describe(*out) + ", but the body's scan element is " +
             describe(element);
    }
    if (*length >= 0 && out->shape[0] != *length) {
      return "the scan outputs have different lengths (" + std::to_string(*length) + " and " +
             std::to_string(out->shape[0]) + ")";
    }
    *length = out->shape[0];
    element_bytes->push_back(element.num_bytes());
  }
  return {};
}

class LoopKernel final : public Kernel {
 public:
  std::string prepare(const NodeContext& node) {
    label_ = std::string(node.op_type()) + (node.name().empty() ? "" : " '" + std::string(node.name()) + "'");
    if (std::string problem; !read_captured(node, 2, &captured_, &problem)) return problem;
    has_trip_count_ = node.input(0) != nullptr;
    has_condition_ = node.input(1) != nullptr;
    if (has_trip_count_ && !is_single(node.input(0), DType::kInt64)) {
      return "its trip count (input 0) must be one int64";
    }
    if (has_condition_ && !is_single(node.input(1), DType::kBool)) return "its condition (input 1) must be one bool";
    const size_t carried = node.num_inputs() - 2 - captured_;
    if (node.num_outputs() < carried) {
      return "has " + std::to_string(node.num_outputs()) + " outputs for " + std::to_string(carried) +
             " loop-carried values";
    }
    if (std::string why = body_.compile(node, "body"); !why.empty()) return why;
    const size_t scans = node.num_outputs() - carried;
    if (body_.num_inputs() != node.num_inputs() || body_.num_outputs() != 1 + carried + scans) {
      return "body has " + std::to_string(body_.num_inputs()) + " inputs and " + std::to_string(body_.num_outputs()) +
             " outputs; the node needs " + std::to_string(node.num_inputs()) + " and " +
             std::to_string(1 + carried + scans);
    }
    TensorInfo iteration{DType::kInt64, Shape{}, nullptr}, condition{DType::kBool, Shape{}, nullptr};
    for (auto [k, info, role] : {std::tuple{size_t{0}, &iteration, "the iteration number"},
                                 std::tuple{size_t{1}, &condition, "the condition"}}) {
      if (std::string why = body_.expect_input(k, *info, role); !why.empty()) return why;
    }
    if (std::string why = body_.expect_output(0, condition, "the condition"); !why.empty()) return why;
    for (size_t k = 0; k < carried; ++k) {
      const TensorInfo* initial = node.input(2 + k);
      if (initial == nullptr) return "loop-carried input " + std::to_string(2 + k) + " is absent";
      for (const std::string& why : {body_.expect_input(2 + k, *initial, "the initial value"),
                                     body_.expect_output(1 + k, *initial, "the initial value")}) {
        if (!why.empty()) return why;
      }
      if (node.output(k) == nullptr) return "output " + std::to_string(k) + " is required";
      if (!same_type(*node.output(k), *initial)) {
        return "output " + std::to_string(k) + " is " + describe(*node.output(k)) + ", but its initial value is " +
               describe(*initial);
      }
      carried_.add(initial->num_bytes());
    }
    for (size_t k = 2 + carried; k < node.num_inputs(); ++k) {
      if (std::string why = body_.expect_input(k, *node.input(k), "the value passed"); !why.empty()) return why;
    }
    return check_scan_outputs(node, body_, carried, 1 + carried, &scan_length_, &scan_bytes_);
  }

  // The iteration number and the two conditions, then the carried buffers.
  size_t scratch_bytes() const override { return kAlignment + carried_.scratch_bytes(); }
  void run(const KernelArgs& args) const override {
    char ignored[1];
    (void)run_checked(args, ignored, sizeof(ignored));
  }
  bool may_fail() const override { return true; }

  bool run_checked(const KernelArgs& args, char* error, size_t error_capacity) const override {
    auto* scratch = static_cast<std::byte*>(args.scratch);
    auto* iteration = reinterpret_cast<int64_t*>(scratch);
    auto* condition_in = reinterpret_cast<uint8_t*>(scratch + sizeof(int64_t));  // bools, read as bytes
    auto* condition_out = condition_in + 1;
    std::byte* buffers = scratch + kAlignment;
    const size_t carried = carried_.count();
    const int64_t trips =
        has_trip_count_ ? *static_cast<const int64_t*>(args.inputs[0]) : std::numeric_limits<int64_t>::max();
    bool condition = !has_condition_ || *static_cast<const uint8_t*>(args.inputs[1]) != 0;
    for (size_t k = 0; k < carried; ++k) {
      if (carried_.bytes(k) != 0) std::memcpy(carried_.buffer(buffers, k, 0), args.inputs[2 + k], carried_.bytes(k));
    }
    body_.bind_input(0, iteration);
    body_.bind_input(1, condition_in);
    body_.bind_output(0, condition_out);
    for (size_t k = 2 + carried; k < body_.num_inputs(); ++k) body_.bind_input(k, args.inputs[k]);
    int current = 0;
    int64_t t = 0;
    for (; t < trips && condition; ++t) {
      if (stop_requested()) return stopped(label_, t, error, error_capacity);
      if (!scan_bytes_.empty() && t >= scan_length_) {
        std::snprintf(error, error_capacity, "%s: runs more than %lld iterations, the length of its scan outputs",
                      label_.c_str(), static_cast<long long>(scan_length_));
        return false;
      }
      *iteration = t;
      *condition_in = condition;
      for (size_t k = 0; k < carried; ++k) {
        body_.bind_input(2 + k, carried_.buffer(buffers, k, current));
        body_.bind_output(1 + k, carried_.buffer(buffers, k, 1 - current));
      }
      for (size_t j = 0; j < scan_bytes_.size(); ++j) {
        body_.bind_output(1 + carried + j,
                          static_cast<std::byte*>(args.outputs[carried + j]) + static_cast<size_t>(t) * scan_bytes_[j]);
      }
      if (!body_.run(error, error_capacity)) return false;
      condition = *condition_out != 0;
      current = 1 - current;
    }
    if (!scan_bytes_.empty() && t != scan_length_) {
      std::snprintf(error, error_capacity, "%s: ran %lld iterations, but its scan outputs have length %lld",
                    label_.c_str(), static_cast<long long>(t), static_cast<long long>(scan_length_));
      return false;
    }
    for (size_t k = 0; k < carried; ++k) {
      if (carried_.bytes(k) != 0) std::memcpy(args.outputs[k], carried_.buffer(buffers, k, current), carried_.bytes(k));
    }
    return true;
  }

 private:
  std::string label_;
  Subgraph body_;
  size_t captured_ = 0;
  bool has_trip_count_ = false, has_condition_ = false;
  CarriedBuffers carried_;
  int64_t scan_length_ = -1;
  std::vector<size_t> scan_bytes_;  // per scan output, one element's bytes
};

class ScanKernel final : public Kernel {
 public:
  std::string prepare(const NodeContext& node) {
    if (node.opset() < 9) return "Scan before opset 9 (with a batch axis) is not supported";
    label_ = std::string(node.op_type()) + (node.name().empty() ? "" : " '" + std::string(node.name()) + "'");
    const int64_t scanned = node.attr_int("num_scan_inputs", -1);
    if (std::string problem; !read_captured(node, 0, &captured_, &problem)) return problem;
    if (scanned < 1 || static_cast<uint64_t>(scanned) > node.num_inputs() - captured_) {
      return "attribute 'num_scan_inputs' (" + std::to_string(scanned) + ") does not fit its inputs";
    }
    const size_t state = node.num_inputs() - captured_ - static_cast<size_t>(scanned);
    if (node.num_outputs() < state) return "has fewer outputs than state values";
    const size_t scans = node.num_outputs() - state;
    for (const char* axes : {"scan_input_axes", "scan_output_axes"}) {
      for (int64_t axis : node.attr_ints(axes)) {
        if (axis != 0) return std::string("attribute '") + axes + "' must be all 0 (other axes are not supported)";
      }
    }
    input_reversed_ = read_directions(node, "scan_input_directions", static_cast<size_t>(scanned));
    output_reversed_ = read_directions(node, "scan_output_directions", scans);
    if (input_reversed_.empty() && scanned > 0)
      return "attribute 'scan_input_directions' must hold 0s and 1s, one per scan input";
    if (output_reversed_.empty() && scans > 0)
      return "attribute 'scan_output_directions' must hold 0s and 1s, one per scan output";
    if (std::string why = body_.compile(node, "body"); !why.empty()) return why;
    if (body_.num_inputs() != node.num_inputs() || body_.num_outputs() != node.num_outputs()) {
      return "body has " + std::to_string(body_.num_inputs()) + " inputs and " + std::to_string(body_.num_outputs()) +
             " outputs; the node has " + std::to_string(node.num_inputs()) + " and " +
             std::to_string(node.num_outputs());
    }
    for (size_t k = 0; k < state; ++k) {
      const TensorInfo* initial = node.input(k);
      if (initial == nullptr) return "state input " + std::to_string(k) + " is absent";
      for (const std::string& why : {body_.expect_input(k, *initial, "the initial state"),
                                     body_.expect_output(k, *initial, "the initial state")}) {
        if (!why.empty()) return why;
      }
      if (node.output(k) == nullptr || !same_type(*node.output(k), *initial)) {
        return "output " + std::to_string(k) + " must be like its initial state " + describe(*initial);
      }
      state_.add(initial->num_bytes());
    }
    for (size_t j = 0; j < static_cast<size_t>(scanned); ++j) {
      const TensorInfo* sequence = node.input(state + j);
      if (sequence == nullptr || sequence->shape.rank == 0)
        return "scan input " + std::to_string(state + j) + " must have a rank";
      if (length_ >= 0 && sequence->shape[0] != length_) return "the scan inputs have different lengths";
      length_ = sequence->shape[0];
      TensorInfo element{sequence->dtype, Shape{}, nullptr};
      for (int axis = 1; axis < sequence->shape.rank; ++axis) element.shape.push_back(sequence->shape[axis]);
      if (std::string why = body_.expect_input(state + j, element, "the scanned element"); !why.empty()) return why;
      input_bytes_.push_back(element.num_bytes());
    }
    for (size_t k = state + static_cast<size_t>(scanned); k < node.num_inputs(); ++k) {
      if (std::string why = body_.expect_input(k, *node.input(k), "the value passed"); !why.empty()) return why;
    }
    int64_t output_length = -1;
    if (std::string why = check_scan_outputs(node, body_, state, state, &output_length, &output_bytes_); !why.empty()) {
      return why;
    }
    if (output_length >= 0 && output_length != length_) {
      return "its scan outputs have length " + std::to_string(output_length) + ", its scan inputs " +
             std::to_string(length_);
    }
    return {};
  }

  size_t scratch_bytes() const override { return state_.scratch_bytes(); }
  void run(const KernelArgs& args) const override {
    char ignored[1];
    (void)run_checked(args, ignored, sizeof(ignored));
  }
  bool may_fail() const override { return true; }

  bool run_checked(const KernelArgs& args, char* error, size_t error_capacity) const override {
    auto* buffers = static_cast<std::byte*>(args.scratch);
    const size_t state = state_.count(), scanned = input_bytes_.size();
    for (size_t k = 0; k < state; ++k) {
      if (state_.bytes(k) != 0) std::memcpy(state_.buffer(buffers, k, 0), args.inputs[k], state_.bytes(k));
    }
    for (size_t k = state + scanned; k < body_.num_inputs(); ++k) body_.bind_input(k, args.inputs[k]);
    int current = 0;
    for (int64_t t = 0; t < length_; ++t) {
      if (stop_requested()) return stopped(label_, t, error, error_capacity);
      for (size_t k = 0; k < state; ++k) {
        body_.bind_input(k, state_.buffer(buffers, k, current));
        body_.bind_output(k, state_.buffer(buffers, k, 1 - current));
      }
      for (size_t j = 0; j < scanned; ++j) {
        const int64_t index = input_reversed_[j] ? length_ - 1 - t : t;
        body_.bind_input(state + j, static_cast<const std::byte*>(args.inputs[state + j]) +
                                        static_cast<size_t>(index) * input_bytes_[j]);
      }
      for (size_t j = 0; j < output_bytes_.size(); ++j) {
        const int64_t index = output_reversed_[j] ? length_ - 1 - t : t;
        body_.bind_output(state + j, static_cast<std::byte*>(args.outputs[state + j]) +
                                         static_cast<size_t>(index) * output_bytes_[j]);
      }
      if (!body_.run(error, error_capacity)) return false;
      current = 1 - current;
    }
    for (size_t k = 0; k < state; ++k) {
      if (state_.bytes(k) != 0) std::memcpy(args.outputs[k], state_.buffer(buffers, k, current), state_.bytes(k));
    }
    return true;
  }

 private:
  /// One flag per sequence (1: reversed); empty when the attribute is malformed.
  static std::vector<bool> read_directions(const NodeContext& node, const char* name, size_t count) {
    const std::vector<int64_t> values = node.attr_ints(name);
    if (values.empty()) return std::vector<bool>(count, false);
    if (values.size() != count) return {};
    std::vector<bool> reversed;
    for (int64_t v : values) {
      if (v != 0 && v != 1) return {};
      reversed.push_back(v == 1);
    }
    return reversed;
  }

  std::string label_;
  Subgraph body_;
  size_t captured_ = 0;
  CarriedBuffers state_;
  int64_t length_ = -1;
  std::vector<size_t> input_bytes_, output_bytes_;  // one element's bytes per sequence
  std::vector<bool> input_reversed_, output_reversed_;
};

template <typename K>
Prepared prepare_control_flow(const NodeContext& node) {
  auto kernel = std::make_unique<K>();
  if (std::string why = kernel->prepare(node); !why.empty()) return prepare_error(node, why);
  return Prepared{std::move(kernel), {}};
}

}  // namespace

void add_control_flow_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"If", prepare_control_flow<IfKernel>});
  table.push_back({"Loop", prepare_control_flow<LoopKernel>});
  table.push_back({"Scan", prepare_control_flow<ScanKernel>});
}

}  // namespace plugrt::portable
