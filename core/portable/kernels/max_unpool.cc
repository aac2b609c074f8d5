// SPDX-License-Identifier: Apache-2.0
// MaxUnpool: the inverse of MaxPool with Indices. Y starts as zeros and each X element
// goes to the position its index gives (an index outside Y is skipped). Y's shape is the
// output_shape input (a constant or given at run time) when given, else the default:
// (in - 1) * stride + kernel - pads along each spatial axis.
#include <cstring>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

/// Scatters X into Y at its indices. An index counts in the default output shape (the
/// one MaxPool's input had); with an output_shape, each element keeps its coordinates
/// there (the extra extent is padding at the end of each axis, as ONNX's test data has it).
template <typename T>
class MaxUnpoolKernel final : public Kernel {
 public:
  MaxUnpoolKernel(int64_t in_count, const Shape& pooled, const Shape& out)
      : in_count_(in_count), pooled_(pooled), out_(out) {}
  void run(const KernelArgs& args) const override {
    const T* x = static_cast<const T*>(args.inputs[0]);
    const auto* indices = static_cast<const int64_t*>(args.inputs[1]);
    T* y = static_cast<T*>(args.outputs[0]);
    std::memset(static_cast<void*>(y), 0, static_cast<size_t>(out_.num_elements()) * sizeof(T));
    for (int64_t i = 0; i < in_count_; ++i) {
      const int64_t at = place(indices[i]);
      if (at >= 0) y[at] = x[i];
    }
  }

 private:
  /// The offset in Y of flat index `index` of the default shape; -1 when outside.
  int64_t place(int64_t index) const {
    if (index < 0 || index >= pooled_.num_elements()) return -1;
    int64_t offset = 0, stride = 1;
    for (int a = pooled_.rank - 1; a >= 0; --a) {
      const int64_t coordinate = index % pooled_[a];
      index /= pooled_[a];
      if (coordinate >= out_[a]) return -1;
      offset += coordinate * stride;
      stride *= out_[a];
    }
    return offset;
  }

  int64_t in_count_;
  Shape pooled_, out_;
};

/// The default output shape from kernel_shape, strides and pads; the reason when they
/// do not fit the input.
std::string default_unpool_shape(const NodeContext& node, const Shape& in, Shape* out) {
  const auto spatial = static_cast<size_t>(in.rank - 2);
  const std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  std::vector<int64_t> strides = node.attr_ints("strides"), pads = node.attr_ints("pads");
  if (strides.empty()) strides.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial) {
    return "kernel_shape and strides need one value per spatial axis, pads two";
  }
  *out = Shape{in[0], in[1]};
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t size = (in[static_cast<int>(d) + 2] - 1) * strides[d] + kernel[d] - pads[d] - pads[d + spatial];
    if (size < 0) return "kernel_shape, strides and pads give a negative output size";
    out->push_back(size);
  }
  return {};
}

Prepared prepare_max_unpool(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 3, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  const TensorInfo& indices = *node.input(1);
  if (x.shape.rank < 3) return prepare_error(node, "X has shape " + to_string(x.shape) + "; expected N x C x D1...");
  if (std::string why = check_dtype("input", 1, &indices, DType::kInt64); !why.empty()) return prepare_error(node, why);
  if (indices.shape != x.shape) return prepare_error(node, "I must have X's shape " + to_string(x.shape));
  Shape pooled;
  if (std::string why = default_unpool_shape(node, x.shape, &pooled); !why.empty()) return prepare_error(node, why);
  Shape out = pooled;
  if (node.input(2) != nullptr) {
    out = Shape();
    const std::optional<std::vector<int64_t>> given = node.constant_ints(2);
    if (!given) return prepare_error(node, "output_shape must be an int64 constant or given at run time");
    if (given->size() != static_cast<size_t>(x.shape.rank)) return prepare_error(node, "output_shape needs X's rank");
    for (int64_t dim : *given) {
      if (dim < 0) return prepare_error(node, "output_shape has a negative dimension");
      out.push_back(dim);
    }
  }
  if (std::string why = check_output(node, 0, out, x.dtype); !why.empty()) return prepare_error(node, why);
  return dispatch<kNumericTypes>(node, x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<MaxUnpoolKernel<T>>(x.num_elements(), pooled, out);
  });
}

}  // namespace

void add_max_unpool_kernels(std::vector<KernelEntry>& table) { table.push_back({"MaxUnpool", prepare_max_unpool}); }

}  // namespace plugrt::portable
