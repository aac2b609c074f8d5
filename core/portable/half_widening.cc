// SPDX-License-Identifier: Apache-2.0
#include "half_widening.h"

#include <memory>
#include <utility>
#include <vector>

#include "plugrt/half_float.h"

namespace plugrt::portable {

namespace {

bool is_half(const TensorInfo* info) {
  return info != nullptr && (info->dtype == DType::kFloat16 || info->dtype == DType::kBFloat16);
}

size_t aligned_64(size_t bytes) { return (bytes + 63) / 64 * 64; }

void widen(DType dtype, const void* from, float* to, int64_t count) {
  const auto* bits = static_cast<const uint16_t*>(from);
  if (dtype == DType::kFloat16) {
    for (int64_t i = 0; i < count; ++i) to[i] = float16_to_float(bits[i]);
  } else {
    for (int64_t i = 0; i < count; ++i) to[i] = bfloat16_to_float(bits[i]);
  }
}

void narrow(DType dtype, const float* from, void* to, int64_t count) {
  auto* bits = static_cast<uint16_t*>(to);
  if (dtype == DType::kFloat16) {
    for (int64_t i = 0; i < count; ++i) bits[i] = float_to_float16(from[i]);
  } else {
    for (int64_t i = 0; i < count; ++i) bits[i] = float_to_bfloat16(from[i]);
  }
}

/// One operand of the node: its own dtype, and whether and where it is widened.
struct Operand {
  DType dtype = DType::kUndefined;
  int64_t count = 0;
  bool widened = false;
  size_t scratch_offset = 0;    // of its float32 copy (run-time inputs and outputs)
  std::vector<float> constant;  // a constant input's float32 copy
};

class WidenedKernel final : public Kernel {
 public:
  WidenedKernel(std::unique_ptr<Kernel> inner, std::vector<Operand> inputs, std::vector<Operand> outputs)
      : inner_(std::move(inner)),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        input_pointers_(inputs_.size()),
        output_pointers_(outputs_.size()) {
    scratch_ = aligned_64(inner_->scratch_bytes());
    for (std::vector<Operand>* operands : {&inputs_, &outputs_}) {
      for (Operand& operand : *operands) {
        if (!operand.widened || !operand.constant.empty()) continue;
        operand.scratch_offset = scratch_;
        scratch_ += aligned_64(static_cast<size_t>(operand.count) * sizeof(float));
      }
    }
  }

  size_t scratch_bytes() const override { return scratch_; }
  bool may_fail() const override { return inner_->may_fail(); }
  bool reads_inputs() const override { return inner_->reads_inputs(); }
  void run(const KernelArgs& args) const override {
    inner_->run(widened(args));
    narrow_outputs(args);
  }
  bool run_checked(const KernelArgs& args, char* error, size_t error_capacity) const override {
    if (!inner_->run_checked(widened(args), error, error_capacity)) return false;
    narrow_outputs(args);
    return true;
  }

 private:
  /// The inner kernel's arguments: the half inputs widened into scratch.
  KernelArgs widened(const KernelArgs& args) const {
    auto* scratch = static_cast<std::byte*>(args.scratch);
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Operand& in = inputs_[i];
      input_pointers_[i] = args.inputs[i];
      if (!in.widened || args.inputs[i] == nullptr) continue;
      if (!in.constant.empty()) {
        input_pointers_[i] = in.constant.data();
        continue;
      }
      auto* copy = reinterpret_cast<float*>(scratch + in.scratch_offset);
      widen(in.dtype, args.inputs[i], copy, in.count);
      input_pointers_[i] = copy;
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      output_pointers_[i] = outputs_[i].widened ? scratch + outputs_[i].scratch_offset : args.outputs[i];
    }
    return KernelArgs{input_pointers_.data(), output_pointers_.data(), args.scratch};
  }

  void narrow_outputs(const KernelArgs& args) const {
    const auto* scratch = static_cast<const std::byte*>(args.scratch);
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const Operand& out = outputs_[i];
      if (!out.widened || args.outputs[i] == nullptr) continue;
      narrow(out.dtype, reinterpret_cast<const float*>(scratch + out.scratch_offset), args.outputs[i], out.count);
    }
  }

  std::unique_ptr<Kernel> inner_;
  std::vector<Operand> inputs_, outputs_;
  size_t scratch_ = 0;
  // Filled by each run (a graph runs one call at a time), so that running allocates nothing.
  mutable std::vector<const void*> input_pointers_;
  mutable std::vector<void*> output_pointers_;
};

/// The operand of `info`, widened when half: its float32 TensorInfo in `*widened_info`
/// (a constant's data widened once).
Operand operand_of(const TensorInfo* info, TensorInfo* widened_info) {
  Operand operand;
  if (info == nullptr) return operand;
  operand.dtype = info->dtype;
  operand.count = info->num_elements();
  *widened_info = *info;
  if (!is_half(info)) return operand;
  operand.widened = true;
  widened_info->dtype = DType::kFloat32;
  if (info->constant_data != nullptr) {
    operand.constant.resize(static_cast<size_t>(operand.count));
    widen(info->dtype, info->constant_data, operand.constant.data(), operand.count);
    widened_info->constant_data = operand.constant.data();
  }
  return operand;
}

}  // namespace

Prepared prepare_widened(PrepareFunction prepare, const NodeContext& node) {
  bool any_half = false;
  for (size_t i = 0; i < node.num_inputs(); ++i) any_half = any_half || is_half(node.input(i));
  for (size_t i = 0; i < node.num_outputs(); ++i) any_half = any_half || is_half(node.output(i));
  if (!any_half) return {};
  std::vector<TensorInfo> input_infos(node.num_inputs()), output_infos(node.num_outputs());
  std::vector<Operand> inputs, outputs;
  std::vector<const TensorInfo*> input_views, output_views;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    inputs.push_back(operand_of(node.input(i), &input_infos[i]));
    input_views.push_back(node.input(i) != nullptr ? &input_infos[i] : nullptr);
  }
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    outputs.push_back(operand_of(node.output(i), &output_infos[i]));
    output_views.push_back(node.output(i) != nullptr ? &output_infos[i] : nullptr);
  }
  // The constants' float32 copies move into the kernel below: their vectors' buffers,
  // which the widened infos point at, move with them.
  NodeContext widened(node.node(), node.opset(), std::move(input_views), std::move(output_views));
  Prepared inner = prepare(widened);
  if (inner.kernel == nullptr || widened.values_wanted() != 0) return {};
  return prepared<WidenedKernel>(std::move(inner.kernel), std::move(inputs), std::move(outputs));
}

}  // namespace plugrt::portable
