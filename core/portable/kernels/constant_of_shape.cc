// SPDX-License-Identifier: Apache-2.0
// ConstantOfShape: a tensor of the shape its int64 input gives (a constant or given at
// run time), every element the fill value. The importer carries ONNX's one-element
// `value` tensor as value_dtype (an ONNX element type) and value_bits (its bytes); absent,
// the fill is float32 0.
#include <cstring>

#include "kernel_families.h"

namespace plugrt::portable {

namespace {

class FillKernel final : public Kernel {
 public:
  FillKernel(uint64_t bits, size_t element_size, int64_t count)
      : bits_(bits), element_size_(element_size), count_(count) {}
  void run(const KernelArgs& args) const override {
    auto* out = static_cast<uint8_t*>(args.outputs[0]);
    for (int64_t i = 0; i < count_; ++i)
      std::memcpy(out + static_cast<size_t>(i) * element_size_, &bits_, element_size_);
  }

 private:
  uint64_t bits_;  // little-endian: its first element_size_ bytes are the value
  size_t element_size_;
  int64_t count_;
};

Prepared prepare_constant_of_shape(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_dtype("input", 0, node.input(0), DType::kInt64); !why.empty()) {
    return prepare_error(node, why);
  }
  if (node.input(0)->shape.rank != 1) return prepare_error(node, "the shape input must be 1-D");
  const std::optional<std::vector<int64_t>> dims = node.constant_ints(0);
  if (!dims) return prepare_error(node, "the shape must be a constant or given at run time");
  if (dims->size() > static_cast<size_t>(kMaxRank)) return prepare_error(node, "the shape has too many dimensions");
  Shape shape;
  for (int64_t d : *dims) {
    if (d < 0) return prepare_error(node, "the shape has a negative dimension");
    shape.push_back(d);
  }
  const auto dtype = static_cast<DType>(node.attr_int("value_dtype", static_cast<int64_t>(DType::kFloat32)));
  const size_t size = dtype_size(dtype);
  if (size == 0 || size > sizeof(uint64_t)) return prepare_error(node, "the fill value's dtype is not supported");
  if (std::string why = check_output(node, 0, shape, dtype); !why.empty()) return prepare_error(node, why);
  return prepared<FillKernel>(static_cast<uint64_t>(node.attr_int("value_bits", 0)), size, shape.num_elements());
}

}  // namespace

void add_constant_of_shape_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"ConstantOfShape", prepare_constant_of_shape});
}

}  // namespace plugrt::portable
