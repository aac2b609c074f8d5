// SPDX-License-Identifier: Apache-2.0
#include "run_time_parameters.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "half_widening.h"

namespace plugrt::portable {

namespace {

constexpr std::byte kNoBytes{0};

size_t round_up_8(size_t bytes) { return (bytes + 7) / 8 * 8; }

/// "[3, -1]": up to 8 elements of a parameter's bytes, read as its dtype.
std::string describe_values(const TensorInfo& info, const std::byte* bytes) {
  const int64_t count = info.num_elements();
  std::string text = "[";
  for (int64_t k = 0; k < count && k < 8; ++k) {
    if (k > 0) text += ", ";
    char number[32] = "?";
    switch (info.dtype) {
      case DType::kInt64: {
        int64_t v = 0;
        std::memcpy(&v, bytes + k * 8, 8);
        std::snprintf(number, sizeof(number), "%lld", static_cast<long long>(v));
        break;
      }
      case DType::kInt32: {
        int32_t v = 0;
        std::memcpy(&v, bytes + k * 4, 4);
        std::snprintf(number, sizeof(number), "%d", v);
        break;
      }
      case DType::kFloat32: {
        float v = 0;
        std::memcpy(&v, bytes + k * 4, 4);
        std::snprintf(number, sizeof(number), "%g", static_cast<double>(v));
        break;
      }
      case DType::kBool:
        std::snprintf(number, sizeof(number), "%s", bytes[k] != std::byte{0} ? "true" : "false");
        break;
      default: break;
    }
    text += number;
  }
  if (count > 8) text += ", ...";
  return text + "]";
}

/// A node prepared when it runs, for the values its parameter inputs have then.
class RunTimeParameterKernel final : public Kernel {
 public:
  RunTimeParameterKernel(PrepareFunction prepare, const NodeContext& node, uint64_t parameters)
      : prepare_(prepare), node_(node.node()), opset_(node.opset()) {
    for (size_t i = 0; i < node.num_inputs(); ++i) inputs_.push_back(copy(node.input(i)));
    for (size_t i = 0; i < node.num_outputs(); ++i) outputs_.push_back(copy(node.output(i)));
    fits_ = add_parameters(parameters);
  }

  bool may_fail() const override { return true; }
  void run(const KernelArgs& args) const override {
    char ignored[1];
    (void)run_checked(args, ignored, sizeof(ignored));
  }

  bool run_checked(const KernelArgs& args, char* error, size_t error_capacity) const override {
    ++calls_;
    gather(args);
    const Preparation* preparation = find();
    if (preparation == nullptr) {
      std::string why;
      preparation = prepare_for(args, &why);
      if (preparation == nullptr) {
        std::snprintf(error, error_capacity, "%s", why.c_str());
        return false;
      }
    }
    const KernelArgs inner{args.inputs, args.outputs, preparation->scratch};
    if (!preparation->kernel->may_fail()) {
      preparation->kernel->run(inner);
      return true;
    }
    return preparation->kernel->run_checked(inner, error, error_capacity);
  }

  /// The parameters' bytes fit in kMaxParameterBytes.
  bool fits() const { return fits_; }

 private:
  /// The kernel prepared for one set of parameter values.
  struct Preparation {
    std::vector<std::byte> values;   // the parameters' bytes, as in staging_
    std::vector<TensorInfo> inputs;  // the node's inputs, the parameters constants in `values`
    std::unique_ptr<Kernel> kernel;
    std::unique_ptr<std::byte[]> scratch_storage;
    void* scratch = nullptr;
    uint64_t last_use = 0;
  };

  static std::optional<TensorInfo> copy(const TensorInfo* info) {
    return info != nullptr ? std::optional<TensorInfo>(*info) : std::nullopt;
  }

  /// Reads the inputs of `bits` at run time too; their bytes get a place in staging_.
  /// False, adding none, when they would take more than kMaxParameterBytes in all.
  bool add_parameters(uint64_t bits) const {
    std::vector<size_t> added;
    size_t bytes = staging_.size();
    for (size_t i = 0; i < inputs_.size() && i < 64; ++i) {
      if ((bits >> i & 1) == 0 || !inputs_[i] ||
          std::find(parameters_.begin(), parameters_.end(), i) != parameters_.end()) {
        continue;
      }
      const size_t size = inputs_[i]->num_bytes();
      if (size > kMaxParameterBytes || round_up_8(size) > kMaxParameterBytes - bytes) return false;
      bytes += round_up_8(size);
      added.push_back(i);
    }
    for (size_t i : added) {
      parameters_.push_back(i);
      offsets_.push_back(staging_.size());
      staging_.resize(staging_.size() + round_up_8(inputs_[i]->num_bytes()));
    }
    if (!added.empty()) prepared_.clear();  // kept preparations were keyed by the parameters before
    return true;
  }

  void gather(const KernelArgs& args) const {
    for (size_t k = 0; k < parameters_.size(); ++k) {
      const size_t bytes = inputs_[parameters_[k]]->num_bytes();
      if (bytes > 0) std::memcpy(staging_.data() + offsets_[k], args.inputs[parameters_[k]], bytes);
    }
  }

  const Preparation* find() const {
    for (const std::unique_ptr<Preparation>& kept : prepared_) {
      if (kept->values.size() == staging_.size() &&
          (staging_.empty() || std::memcmp(kept->values.data(), staging_.data(), staging_.size()) == 0)) {
        kept->last_use = calls_;
        return kept.get();
      }
    }
    return nullptr;
  }

  /// "input 1 = [2, -1], input 2 = [0]": the parameters as this call gives them.
  std::string describe_parameters() const {
    std::string text;
    for (size_t k = 0; k < parameters_.size(); ++k) {
      text += (k == 0 ? "input " : ", input ") + std::to_string(parameters_[k]) + " = " +
              describe_values(*inputs_[parameters_[k]], staging_.data() + offsets_[k]);
    }
    return text;
  }

  /// Prepares the node for the values in staging_, reading more inputs at run time when
  /// the kernel asks for them; null with the reason when the kernel refuses the values.
  const Preparation* prepare_for(const KernelArgs& args, std::string* why) const {
    for (;;) {
      auto preparation = std::make_unique<Preparation>();
      preparation->values = staging_;
      std::vector<const TensorInfo*> inputs, outputs;
      for (const std::optional<TensorInfo>& input : inputs_)
        preparation->inputs.push_back(input.value_or(TensorInfo{}));
      for (size_t k = 0; k < parameters_.size(); ++k) {
        // An empty parameter (ReduceSum's axes = []) is constant too: not null.
        preparation->inputs[parameters_[k]].constant_data =
            inputs_[parameters_[k]]->num_bytes() > 0 ? preparation->values.data() + offsets_[k] : &kNoBytes;
      }
      for (size_t i = 0; i < inputs_.size(); ++i) inputs.push_back(inputs_[i] ? &preparation->inputs[i] : nullptr);
      for (const std::optional<TensorInfo>& output : outputs_) outputs.push_back(output ? &*output : nullptr);
      NodeContext context(node_, opset_, std::move(inputs), std::move(outputs));
      Prepared result = prepare_(context);
      if (result.kernel == nullptr) {
        const size_t known = parameters_.size();
        if (add_parameters(context.values_wanted()) && parameters_.size() > known) {
          gather(args);
          continue;
        }
        *why = result.error + " (with " + describe_parameters() + ", given at run time)";
        return nullptr;
      }
      preparation->kernel = std::move(result.kernel);
      const size_t scratch_bytes = preparation->kernel->scratch_bytes();
      if (scratch_bytes > 0) {
        std::byte* scratch = nullptr;
        preparation->scratch_storage = allocate_aligned(scratch_bytes, &scratch);
        preparation->scratch = scratch;
      }
      preparation->last_use = calls_;
      if (prepared_.size() == kMaxPreparedValues) {
        prepared_.erase(
            std::min_element(prepared_.begin(), prepared_.end(),
                             [](const std::unique_ptr<Preparation>& a, const std::unique_ptr<Preparation>& b) {
                               return a->last_use < b->last_use;
                             }));
      }
      prepared_.push_back(std::move(preparation));
      return prepared_.back().get();
    }
  }

  PrepareFunction prepare_;
  const ir::Node& node_;
  int opset_;
  std::vector<std::optional<TensorInfo>> inputs_;
  std::vector<std::optional<TensorInfo>> outputs_;
  // Run(), though const to the graph, keeps what it prepared: one graph runs one call
  // at a time.
  mutable std::vector<size_t> parameters_;  // input indices whose values are read
  mutable std::vector<size_t> offsets_;     // where each parameter's bytes are in staging_
  mutable std::vector<std::byte> staging_;  // this call's parameter bytes
  mutable std::vector<std::unique_ptr<Preparation>> prepared_;
  mutable uint64_t calls_ = 0;
  bool fits_ = false;
};

}  // namespace

Prepared prepare_node(PrepareFunction prepare, const NodeContext& node) {
  Prepared result = prepare(node);
  if (result.kernel == nullptr && node.values_wanted() == 0) {
    // A float16 or bfloat16 node on its float32 kernel, if that takes it.
    Prepared widened = prepare_widened(prepare, node);
    return widened.kernel != nullptr ? std::move(widened) : std::move(result);
  }
  if (result.kernel != nullptr || node.values_wanted() == 0) return result;
  auto deferred = std::make_unique<RunTimeParameterKernel>(prepare, node, node.values_wanted());
  if (!deferred->fits()) return result;
  return Prepared{std::move(deferred), {}};
}

}  // namespace plugrt::portable
