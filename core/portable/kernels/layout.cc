// SPDX-License-Identifier: Apache-2.0
// Layout and shape kernels: ops that move or view bytes without arithmetic, for any
// dtype. This file has the ops that copy whole blocks (Identity, Flatten, Reshape,
// Squeeze, Unsqueeze, Shape, Concat, Split, Gather); layout_strided.cc has those that
// walk the input with strides (Transpose, Slice, Expand, Pad).
#include <algorithm>
#include <cstring>

#include "kernel_families.h"
#include "layout_common.h"

namespace plugrt::portable {

void add_strided_layout_kernels(std::vector<KernelEntry>& table);  // layout_strided.cc

namespace {

/// Copies the input bytes unchanged (Identity, and the reshaping ops whose output has
/// the same elements in the same order).
class CopyKernel final : public Kernel {
 public:
  explicit CopyKernel(size_t bytes) : bytes_(bytes) {}
  void run(const KernelArgs& args) const override {
    if (args.outputs[0] != args.inputs[0] && bytes_ > 0) std::memmove(args.outputs[0], args.inputs[0], bytes_);
  }

 private:
  size_t bytes_;
};

/// Checks the output against `shape` and returns a CopyKernel.
Prepared prepare_copy(const NodeContext& node, const Shape& shape) {
  const TensorInfo& in = *node.input(0);
  if (std::string why = check_output(node, 0, shape, in.dtype); !why.empty()) return prepare_error(node, why);
  return prepared<CopyKernel>(in.num_bytes());
}

Prepared prepare_identity(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  return prepare_copy(node, node.input(0)->shape);
}

Prepared prepare_flatten(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const Shape& in = node.input(0)->shape;
  int64_t axis = node.attr_int("axis", 1);
  if (axis < -in.rank || axis > in.rank) {
    return prepare_error(node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(in.rank));
  }
  if (axis < 0) axis += in.rank;
  return prepare_copy(node, Shape{in.product(0, static_cast<int>(axis)), in.product(static_cast<int>(axis), in.rank)});
}

/// Reshape's target: 0 copies the input dim (unless allowzero), one -1 is inferred.
std::string reshape_target(const Shape& in, const std::vector<int64_t>& request, bool allow_zero, Shape* out) {
  if (request.size() > static_cast<size_t>(kMaxRank))
    return "shape has more than " + std::to_string(kMaxRank) + " dims";
  int inferred = -1;
  int64_t known = 1;
  *out = Shape();
  for (size_t i = 0; i < request.size(); ++i) {
    int64_t dim = request[i];
    if (dim == 0 && !allow_zero) {
      if (i >= static_cast<size_t>(in.rank)) return "shape copies dim " + std::to_string(i) + ", which the input lacks";
      dim = in[static_cast<int>(i)];
    }
    if (dim == -1) {
      if (inferred >= 0) return "shape has more than one -1";
      inferred = static_cast<int>(i);
      dim = 1;
    } else if (dim < 0) {
      return "shape has invalid dim " + std::to_string(dim);
    } else {
      if (known != 0 && dim > INT64_MAX / known) return "shape has too many elements";
      known *= dim;
    }
    out->push_back(dim);
  }
  const int64_t total = in.num_elements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0) return "the -1 in shape cannot be inferred for " + to_string(in);
    (*out)[inferred] = total / known;
  } else if (known != total) {
    return "shape gives " + std::to_string(known) + " elements, the input has " + std::to_string(total);
  }
  return {};
}

Prepared prepare_reshape(const NodeContext& node) {
  if (std::string why = check_arity(node, node.opset() < 5 ? 1 : 2, 2, 1, 1); !why.empty()) {
    return prepare_error(node, why);
  }
  std::optional<std::vector<int64_t>> request;
  if (std::string why = read_ints_parameter(node, "shape", 1, 5, &request); !why.empty())
    return prepare_error(node, why);
  if (!request) return prepare_error(node, "the shape attribute is required");
  const bool allow_zero = node.attr_int("allowzero", 0) != 0;
  if (allow_zero && std::count(request->begin(), request->end(), 0) > 0 &&
      std::count(request->begin(), request->end(), -1) > 0) {
    return prepare_error(node, "shape cannot have both 0 and -1 with allowzero");
  }
  Shape out;
  if (std::string why = reshape_target(node.input(0)->shape, *request, allow_zero, &out); !why.empty()) {
    return prepare_error(node, why);
  }
  return prepare_copy(node, out);
}

Prepared prepare_squeeze(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const Shape& in = node.input(0)->shape;
  std::optional<std::vector<int64_t>> axes;
  if (std::string why = read_ints_parameter(node, "axes", 1, 13, &axes); !why.empty()) return prepare_error(node, why);
  std::array<bool, kMaxRank> squeezed{};
  if (axes) {
    if (std::string why = mark_axes(*axes, in.rank, &squeezed); !why.empty()) return prepare_error(node, why);
  }
  Shape out;
  for (int axis = 0; axis < in.rank; ++axis) {
    const bool squeeze = axes ? squeezed[static_cast<size_t>(axis)] : in[axis] == 1;
    if (squeeze && in[axis] != 1) {
      return prepare_error(node, "axis " + std::to_string(axis) + " of " + to_string(in) + " is not 1");
    }
    if (!squeeze) out.push_back(in[axis]);
  }
  return prepare_copy(node, out);
}

Prepared prepare_unsqueeze(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const Shape& in = node.input(0)->shape;
  std::optional<std::vector<int64_t>> axes;
  if (std::string why = read_ints_parameter(node, "axes", 1, 13, &axes); !why.empty()) return prepare_error(node, why);
  if (!axes) return prepare_error(node, "axes are required");
  const size_t rank = static_cast<size_t>(in.rank) + axes->size();
  if (rank > static_cast<size_t>(kMaxRank)) return prepare_error(node, "the output would exceed rank 8");
  std::array<bool, kMaxRank> inserted{};
  if (std::string why = mark_axes(*axes, static_cast<int>(rank), &inserted); !why.empty()) {
    return prepare_error(node, why);
  }
  Shape out;
  for (int axis = 0, next = 0; axis < static_cast<int>(rank); ++axis) {
    out.push_back(inserted[static_cast<size_t>(axis)] ? 1 : in[next++]);
  }
  return prepare_copy(node, out);
}

// ---- Shape: the input's dims as int64 -------------------------------------------------

Prepared prepare_shape(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const Shape& in = node.input(0)->shape;
  // Opset 15's start and end: negative counts from the back, both clamped to [0, rank].
  auto clamp_end = [&](int64_t value) { return std::clamp<int64_t>(value < 0 ? value + in.rank : value, 0, in.rank); };
  const int64_t start = clamp_end(node.attr_int("start", 0));
  const int64_t end = clamp_end(node.attr_int("end", in.rank));
  std::vector<int64_t> dims;
  for (int64_t axis = start; axis < end; ++axis) dims.push_back(in[static_cast<int>(axis)]);
  if (std::string why = check_output(node, 0, Shape{static_cast<int64_t>(dims.size())}, DType::kInt64); !why.empty()) {
    return prepare_error(node, why);
  }
  return prepared<ConstantInt64Kernel>(std::move(dims));
}

// ---- Concat and Split: blocks along one axis ------------------------------------------

/// Concat and Split both see the big tensor as `outer` rows, each the pieces' blocks
/// side by side; blocks_[i] is piece i's block in bytes.
class ConcatKernel final : public Kernel {
 public:
  ConcatKernel(bool split, int64_t outer, std::vector<size_t> blocks)
      : split_(split), outer_(outer), blocks_(std::move(blocks)) {}

  void run(const KernelArgs& args) const override {
    const size_t pieces = blocks_.size();
    for (int64_t o = 0; o < outer_; ++o) {
      const size_t row = static_cast<size_t>(o);
      if (split_) {
        const std::byte* in = static_cast<const std::byte*>(args.inputs[0]);
        size_t offset = row * total();
        for (size_t i = 0; i < pieces; ++i) {
          std::memcpy(static_cast<std::byte*>(args.outputs[i]) + row * blocks_[i], in + offset, blocks_[i]);
          offset += blocks_[i];
        }
      } else {
        std::byte* out = static_cast<std::byte*>(args.outputs[0]);
        size_t offset = row * total();
        for (size_t i = 0; i < pieces; ++i) {
          std::memcpy(out + offset, static_cast<const std::byte*>(args.inputs[i]) + row * blocks_[i], blocks_[i]);
          offset += blocks_[i];
        }
      }
    }
  }

 private:
  size_t total() const {
    size_t sum = 0;
    for (size_t block : blocks_) sum += block;
    return sum;
  }
  bool split_;
  int64_t outer_;
  std::vector<size_t> blocks_;
};

Prepared prepare_concat(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, static_cast<size_t>(-1), 1, 1); !why.empty()) {
    return prepare_error(node, why);
  }
  if (!node.has_attribute("axis") && node.opset() >= 4) return prepare_error(node, "the axis attribute is required");
  const TensorInfo& first = *node.input(0);
  int axis = 0;
  if (!normalize_axis(node.attr_int("axis", 1), first.shape.rank, &axis)) {
    return prepare_error(node, "axis " + std::to_string(node.attr_int("axis", 1)) + " is out of range for rank " +
                                   std::to_string(first.shape.rank));
  }
  Shape out = first.shape;
  out[axis] = 0;
  std::vector<size_t> blocks;
  const size_t inner = static_cast<size_t>(first.shape.product(axis + 1, first.shape.rank)) * dtype_size(first.dtype);
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    const TensorInfo* in = node.input(i);
    if (in == nullptr) return prepare_error(node, "input " + std::to_string(i) + " is missing");
    Shape expected = out;
    expected[axis] = in->shape.rank == out.rank ? in->shape[axis] : 0;
    if (in->dtype != first.dtype || in->shape != expected) {
      return prepare_error(node, "input " + std::to_string(i) + " is " + std::string(to_string(in->dtype)) + " " +
                                     to_string(in->shape) + "; it must match input 0 except along axis " +
                                     std::to_string(axis));
    }
    out[axis] += in->shape[axis];
    blocks.push_back(static_cast<size_t>(in->shape[axis]) * inner);
  }
  if (std::string why = check_output(node, 0, out, first.dtype); !why.empty()) return prepare_error(node, why);
  return prepared<ConcatKernel>(false, first.shape.product(0, axis), std::move(blocks));
}

Prepared prepare_split(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 2, 1, static_cast<size_t>(-1)); !why.empty()) {
    return prepare_error(node, why);
  }
  const TensorInfo& in = *node.input(0);
  int axis = 0;
  if (!normalize_axis(node.attr_int("axis", 0), in.shape.rank, &axis)) {
    return prepare_error(node, "axis " + std::to_string(node.attr_int("axis", 0)) + " is out of range for rank " +
                                   std::to_string(in.shape.rank));
  }
  const int64_t count = static_cast<int64_t>(node.num_outputs());
  const int64_t dim = in.shape[axis];
  std::optional<std::vector<int64_t>> sizes;
  if (std::string why = read_ints_parameter(node, "split", 1, 13, &sizes); !why.empty())
    return prepare_error(node, why);
  if (!sizes && node.has_attribute("num_outputs")) {  // opset 18: the last part may be smaller
    if (node.attr_int("num_outputs", 0) != count) return prepare_error(node, "num_outputs does not match the outputs");
    const int64_t part = (dim + count - 1) / count;
    sizes = std::vector<int64_t>(static_cast<size_t>(count), part);
    sizes->back() = dim - part * (count - 1);
  } else if (!sizes) {
    if (dim % count != 0) {
      return prepare_error(
          node, "dim " + std::to_string(dim) + " does not split into " + std::to_string(count) + " equal parts");
    }
    sizes = std::vector<int64_t>(static_cast<size_t>(count), dim / count);
  }
  bool valid = static_cast<int64_t>(sizes->size()) == count;
  int64_t sum = 0;
  for (int64_t size : *sizes) {
    valid = valid && size >= 0 && size <= dim - sum;
    if (valid) sum += size;
  }
  if (!valid || sum != dim) {
    return prepare_error(
        node, "split sizes do not give " + std::to_string(count) + " parts summing to " + std::to_string(dim));
  }
  const size_t inner = static_cast<size_t>(in.shape.product(axis + 1, in.shape.rank)) * dtype_size(in.dtype);
  std::vector<size_t> blocks;
  for (size_t i = 0; i < sizes->size(); ++i) {
    Shape out = in.shape;
    out[axis] = (*sizes)[i];
    if (std::string why = check_output(node, i, out, in.dtype); !why.empty()) return prepare_error(node, why);
    blocks.push_back(static_cast<size_t>((*sizes)[i]) * inner);
  }
  return prepared<ConcatKernel>(true, in.shape.product(0, axis), std::move(blocks));
}

// ---- Gather ---------------------------------------------------------------------------

/// Gathers blocks along the axis. Indices are read at run time (they may be a graph
/// input): a negative index counts from the end, and an index still out of range
/// yields a block of zeros instead of reading out of bounds.
template <typename Index>
class GatherKernel final : public Kernel {
 public:
  GatherKernel(int64_t outer, int64_t axis_dim, size_t block, int64_t count)
      : outer_(outer), axis_dim_(axis_dim), block_(block), count_(count) {}

  void run(const KernelArgs& args) const override {
    const std::byte* data = static_cast<const std::byte*>(args.inputs[0]);
    const Index* indices = static_cast<const Index*>(args.inputs[1]);
    std::byte* out = static_cast<std::byte*>(args.outputs[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t t = 0; t < count_; ++t, out += block_) {
        int64_t index = static_cast<int64_t>(indices[t]);
        if (index < 0) index += axis_dim_;
        if (index >= 0 && index < axis_dim_) {
          std::memcpy(out, data + static_cast<size_t>(o * axis_dim_ + index) * block_, block_);
        } else {
          std::memset(out, 0, block_);
        }
      }
    }
  }

 private:
  int64_t outer_, axis_dim_;
  size_t block_;
  int64_t count_;
};

Prepared prepare_gather(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& data = *node.input(0);
  const TensorInfo& indices = *node.input(1);
  if (indices.dtype != DType::kInt64 && indices.dtype != DType::kInt32) {
    return prepare_error(node, "indices are " + std::string(to_string(indices.dtype)) + "; expected int64 or int32");
  }
  int axis = 0;
  if (!normalize_axis(node.attr_int("axis", 0), data.shape.rank, &axis)) {
    return prepare_error(node, "axis " + std::to_string(node.attr_int("axis", 0)) + " is out of range for rank " +
                                   std::to_string(data.shape.rank));
  }
  if (data.shape.rank - 1 + indices.shape.rank > kMaxRank) return prepare_error(node, "the output would exceed rank 8");
  Shape out;
  for (int a = 0; a < axis; ++a) out.push_back(data.shape[a]);
  for (int a = 0; a < indices.shape.rank; ++a) out.push_back(indices.shape[a]);
  for (int a = axis + 1; a < data.shape.rank; ++a) out.push_back(data.shape[a]);
  if (std::string why = check_output(node, 0, out, data.dtype); !why.empty()) return prepare_error(node, why);
  const int64_t outer = data.shape.product(0, axis);
  const size_t block = static_cast<size_t>(data.shape.product(axis + 1, data.shape.rank)) * dtype_size(data.dtype);
  if (indices.dtype == DType::kInt32) {
    return prepared<GatherKernel<int32_t>>(outer, data.shape[axis], block, indices.num_elements());
  }
  return prepared<GatherKernel<int64_t>>(outer, data.shape[axis], block, indices.num_elements());
}

}  // namespace

void add_layout_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"Concat", prepare_concat});
  table.push_back({"Flatten", prepare_flatten});
  table.push_back({"Gather", prepare_gather});
  table.push_back({"Identity", prepare_identity});
  table.push_back({"Reshape", prepare_reshape});
  table.push_back({"Shape", prepare_shape});
  table.push_back({"Split", prepare_split});
  table.push_back({"Squeeze", prepare_squeeze});
  table.push_back({"Unsqueeze", prepare_unsqueeze});
  add_strided_layout_kernels(table);
}

}  // namespace plugrt::portable
