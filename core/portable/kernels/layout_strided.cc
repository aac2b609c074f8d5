// SPDX-License-Identifier: Apache-2.0
// Layout kernels that walk the input with strides, for any dtype: Transpose, Slice and
// Expand (one strided copy), and Pad. Part of the layout family (see layout.cc).
#include <algorithm>
#include <cstring>
#include <tuple>

#include "kernel_families.h"
#include "layout_common.h"

namespace plugrt::portable {

namespace {

/// Writes the output in order, reading input element base + sum(index[a] * strides[a])
/// (strides in elements, possibly zero or negative): Transpose permutes the input's
/// strides, Slice scales them by its steps, Expand zeroes the broadcast ones.
template <size_t N>
class StridedCopyKernel final : public Kernel {
 public:
  StridedCopyKernel(const Shape& out, const std::array<int64_t, kMaxRank>& strides, int64_t base)
      : strides_(strides), base_(base) {
    rows_ = out;
    if (out.rank > 0) {
      inner_ = out[out.rank - 1];
      inner_stride_ = strides[static_cast<size_t>(out.rank - 1)];
      rows_.rank = out.rank - 1;  // the iterator walks every dim but the last
    }
  }

  void run(const KernelArgs& args) const override {
    const std::byte* in = static_cast<const std::byte*>(args.inputs[0]);
    std::byte* out = static_cast<std::byte*>(args.outputs[0]);
    const int64_t rows = rows_.num_elements();
    BroadcastIterator it(rows_, 1, &strides_);
    for (int64_t r = 0; r < rows; ++r, it.next()) {
      const int64_t first = base_ + it.offset(0);
      if (inner_stride_ == 1) {
        std::memcpy(out, in + first * static_cast<int64_t>(N), static_cast<size_t>(inner_) * N);
        out += inner_ * static_cast<int64_t>(N);
        continue;
      }
      for (int64_t t = 0; t < inner_; ++t, out += N) {
        copy_element<N>(out, in + (first + t * inner_stride_) * static_cast<int64_t>(N));
      }
    }
  }

 private:
  Shape rows_;
  std::array<int64_t, kMaxRank> strides_;
  int64_t base_;
  int64_t inner_ = 1;
  int64_t inner_stride_ = 0;
};

Prepared prepare_transpose(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  const int rank = in.shape.rank;
  std::vector<int64_t> perm = node.attr_ints("perm");
  if (perm.empty() && !node.has_attribute("perm")) {
    for (int axis = rank - 1; axis >= 0; --axis) perm.push_back(axis);
  }
  std::array<bool, kMaxRank> seen{};
  if (perm.size() != static_cast<size_t>(rank) || !mark_axes(perm, rank, &seen).empty() ||
      std::any_of(perm.begin(), perm.end(), [](int64_t axis) { return axis < 0; })) {
    return prepare_error(node, "perm is not a permutation of the " + std::to_string(rank) + " axes");
  }
  const std::array<int64_t, kMaxRank> in_strides = contiguous_strides(in.shape);
  std::array<int64_t, kMaxRank> strides{};
  Shape out;
  for (int axis = 0; axis < rank; ++axis) {
    const int from = static_cast<int>(perm[static_cast<size_t>(axis)]);
    out.push_back(in.shape[from]);
    strides[static_cast<size_t>(axis)] = in_strides[static_cast<size_t>(from)];
  }
  if (std::string why = check_output(node, 0, out, in.dtype); !why.empty()) return prepare_error(node, why);
  return prepared_for_dtype<StridedCopyKernel>(node, in.dtype, out, strides, int64_t{0});
}

// ---- Slice ----------------------------------------------------------------------------

/// One sliced axis: ONNX's clamping of start and end for the step's sign.
void slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t* first, int64_t* length) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    *length = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    *length = start > end ? (start - end - step - 1) / -step : 0;
  }
  *first = *length > 0 ? start : 0;
}

Prepared prepare_slice(const NodeContext& node) {
  const bool from_inputs = node.opset() >= 10;
  if (std::string why = check_arity(node, from_inputs ? 3 : 1, from_inputs ? 5 : 1, 1, 1); !why.empty()) {
    return prepare_error(node, why);
  }
  const TensorInfo& in = *node.input(0);
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  for (auto [name, index, values] : {std::tuple{"starts", 1, &starts}, std::tuple{"ends", 2, &ends},
                                     std::tuple{"axes", 3, &axes}, std::tuple{"steps", 4, &steps}}) {
    if (std::string why = read_ints_parameter(node, name, static_cast<size_t>(index), 10, values); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  if (!starts || !ends) return prepare_error(node, "starts and ends are required");
  const size_t count = starts->size();
  if (!axes) {
    axes = std::vector<int64_t>(count);
    for (size_t i = 0; i < count; ++i) (*axes)[i] = static_cast<int64_t>(i);
  }
  if (!steps) steps = std::vector<int64_t>(count, 1);
  if (ends->size() != count || axes->size() != count || steps->size() != count) {
    return prepare_error(node, "starts, ends, axes and steps must have the same length");
  }
  std::array<bool, kMaxRank> marked{};
  if (std::string why = mark_axes(*axes, in.shape.rank, &marked); !why.empty()) return prepare_error(node, why);
  const std::array<int64_t, kMaxRank> in_strides = contiguous_strides(in.shape);
  std::array<int64_t, kMaxRank> strides = in_strides;
  Shape out = in.shape;
  int64_t base = 0;
  for (size_t i = 0; i < count; ++i) {
    int axis = 0;
    normalize_axis((*axes)[i], in.shape.rank, &axis);
    const int64_t dim = in.shape[axis];
    // A step beyond the dim takes at most one element, as a step of +-dim does.
    const int64_t bound = std::max<int64_t>(dim, 1);
    const int64_t step = std::clamp((*steps)[i], -bound, bound);
    if (step == 0) return prepare_error(node, "steps cannot be 0");
    int64_t first = 0, length = 0;
    slice_axis(dim, (*starts)[i], (*ends)[i], step, &first, &length);
    out[axis] = length;
    base += first * in_strides[static_cast<size_t>(axis)];
    strides[static_cast<size_t>(axis)] = step * in_strides[static_cast<size_t>(axis)];
  }
  if (std::string why = check_output(node, 0, out, in.dtype); !why.empty()) return prepare_error(node, why);
  return prepared_for_dtype<StridedCopyKernel>(node, in.dtype, out, strides, base);
}

// ---- Expand ---------------------------------------------------------------------------

Prepared prepare_expand(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  const std::optional<std::vector<int64_t>> dims = node.constant_ints(1);
  if (!dims) return prepare_error(node, "input 1 (shape) must be a constant int64 tensor");
  if (dims->size() > static_cast<size_t>(kMaxRank)) return prepare_error(node, "shape has more than 8 dims");
  Shape requested, out;
  for (int64_t dim : *dims) {
    if (dim < 0) return prepare_error(node, "shape has negative dim " + std::to_string(dim));
    requested.push_back(dim);
  }
  if (!broadcast_shapes(in.shape, requested, &out)) {
    return prepare_error(node, "input " + to_string(in.shape) + " does not broadcast to " + to_string(requested));
  }
  if (std::string why = check_output(node, 0, out, in.dtype); !why.empty()) return prepare_error(node, why);
  return prepared_for_dtype<StridedCopyKernel>(node, in.dtype, out, broadcast_strides(in.shape, out), int64_t{0});
}

// ---- Pad ------------------------------------------------------------------------------

enum class PadMode { kConstant, kReflect, kEdge };

/// Larger pads are refused (no tensor is that large), which keeps the sums exact.
constexpr int64_t kMaxPad = int64_t{1} << 40;

/// Reflects index `i` into [0, dim) about the first and last elements, repeatedly when
/// the padding is wider than the dim (as NumPy's reflect).
int64_t reflect(int64_t i, int64_t dim) {
  if (dim == 1) return 0;
  const int64_t period = 2 * (dim - 1);
  i %= period;
  if (i < 0) i += period;
  return i < dim ? i : period - i;
}

/// Each output index along each axis maps to an input index, or -1 for the constant.
template <size_t N>
class PadKernel final : public Kernel {
 public:
  PadKernel(const Shape& in, const Shape& out, std::vector<int64_t> maps,
            const std::array<int64_t, kMaxRank>& map_begin, const std::array<std::byte, 8>& value)
      : out_(out), in_strides_(contiguous_strides(in)), maps_(std::move(maps)), map_begin_(map_begin), value_(value) {}

  void run(const KernelArgs& args) const override {
    const std::byte* in = static_cast<const std::byte*>(args.inputs[0]);
    std::byte* out = static_cast<std::byte*>(args.outputs[0]);
    if (out_.rank == 0) return copy_element<N>(out, in);
    const int last = out_.rank - 1;
    const int64_t* last_map = maps_.data() + map_begin_[static_cast<size_t>(last)];
    const int64_t rows = out_.product(0, last);
    std::array<int64_t, kMaxRank> index{};
    for (int64_t r = 0; r < rows; ++r) {
      bool constant = false;
      int64_t offset = 0;
      for (size_t a = 0; a < static_cast<size_t>(last); ++a) {
        const int64_t from = maps_[static_cast<size_t>(map_begin_[a] + index[a])];
        constant = constant || from < 0;
        offset += from * in_strides_[a];
      }
      for (int64_t t = 0; t < out_[last]; ++t, out += N) {
        const bool fill = constant || last_map[t] < 0;
        copy_element<N>(out, fill ? value_.data() : in + (offset + last_map[t]) * static_cast<int64_t>(N));
      }
      for (int a = last - 1; a >= 0 && ++index[static_cast<size_t>(a)] == out_[a]; --a)
        index[static_cast<size_t>(a)] = 0;
    }
  }

 private:
  Shape out_;
  std::array<int64_t, kMaxRank> in_strides_;
  std::vector<int64_t> maps_;
  std::array<int64_t, kMaxRank> map_begin_;  // where each axis's map starts in maps_
  std::array<std::byte, 8> value_;
};

/// The constant to pad with, as element bytes: the constant_value input (opset 11+)
/// or the float value attribute (before 11).
std::string read_pad_value(const NodeContext& node, DType dtype, std::array<std::byte, 8>* value) {
  value->fill(std::byte{0});
  if (node.opset() < 11) {
    const float number = node.attr_float("value", 0.0f);
    if (dtype == DType::kFloat32) {
      std::memcpy(value->data(), &number, sizeof(number));
    } else if (number != 0.0f) {
      return "a non-zero value is supported only for float32";
    }
    return {};
  }
  const TensorInfo* input = node.input(2);
  if (input == nullptr) return {};
  const void* given = node.constant_data(2);
  if (given == nullptr) return "input 2 (constant_value) must be a constant";
  if (input->dtype != dtype || input->num_elements() != 1)
    return "constant_value must be one element of the data's dtype";
  std::memcpy(value->data(), given, dtype_size(dtype));
  return {};
}

Prepared prepare_pad(const NodeContext& node) {
  const bool from_inputs = node.opset() >= 11;
  if (std::string why = check_arity(node, from_inputs ? 2 : 1, from_inputs ? 4 : 1, 1, 1); !why.empty()) {
    return prepare_error(node, why);
  }
  const TensorInfo& in = *node.input(0);
  const int rank = in.shape.rank;
  std::optional<std::vector<int64_t>> pads, axes;
  if (std::string why = read_ints_parameter(node, node.opset() < 2 ? "paddings" : "pads", 1, 11, &pads); !why.empty()) {
    return prepare_error(node, why);
  }
  if (std::string why = read_ints_parameter(node, "axes", 3, 18, &axes); !why.empty()) return prepare_error(node, why);
  if (!pads) return prepare_error(node, "pads are required");
  if (!axes) {
    axes = std::vector<int64_t>();
    for (int axis = 0; axis < rank; ++axis) axes->push_back(axis);
  }
  std::array<bool, kMaxRank> marked{};
  if (std::string why = mark_axes(*axes, rank, &marked); !why.empty()) return prepare_error(node, why);
  if (pads->size() != 2 * axes->size()) {
    return prepare_error(
        node, "pads has " + std::to_string(pads->size()) + " values, expected " + std::to_string(2 * axes->size()));
  }
  const std::string mode_name = node.attr_string("mode", "constant");
  PadMode mode = PadMode::kConstant;
  if (mode_name == "reflect") {
    mode = PadMode::kReflect;
  } else if (mode_name == "edge") {
    mode = PadMode::kEdge;
  } else if (mode_name != "constant") {
    return prepare_error(node, "mode '" + mode_name + "' is not supported (constant, reflect, edge)");
  }
  std::array<std::byte, 8> value{};
  if (std::string why = read_pad_value(node, in.dtype, &value); !why.empty()) return prepare_error(node, why);

  std::array<int64_t, kMaxRank> begin{}, end{}, map_begin{};
  for (size_t i = 0; i < axes->size(); ++i) {
    int axis = 0;
    normalize_axis((*axes)[i], rank, &axis);
    begin[static_cast<size_t>(axis)] = (*pads)[i];
    end[static_cast<size_t>(axis)] = (*pads)[i + axes->size()];
  }
  Shape out;
  for (int axis = 0; axis < rank; ++axis) {
    const size_t a = static_cast<size_t>(axis);
    const int64_t dim = in.shape[axis];
    const bool padded = begin[a] > 0 || end[a] > 0;
    if (mode != PadMode::kConstant && padded && dim == 0) {
      return prepare_error(node, mode_name + " mode cannot pad the empty axis " + std::to_string(axis));
    }
    const auto too_large = [](int64_t pad) { return pad < -kMaxPad || pad > kMaxPad; };
    if (too_large(begin[a]) || too_large(end[a]) || dim + begin[a] + end[a] < 0) {
      return prepare_error(node, "pads along axis " + std::to_string(axis) + " give no valid output");
    }
    out.push_back(dim + begin[a] + end[a]);
  }
  if (std::string why = check_output(node, 0, out, in.dtype); !why.empty()) return prepare_error(node, why);
  std::vector<int64_t> maps;
  for (int axis = 0; axis < rank; ++axis) {
    const size_t a = static_cast<size_t>(axis);
    const int64_t dim = in.shape[axis];
    map_begin[a] = static_cast<int64_t>(maps.size());
    for (int64_t o = 0; o < out[axis]; ++o) {
      int64_t i = o - begin[a];
      if (i < 0 || i >= dim) {
        if (mode == PadMode::kConstant) i = -1;
        if (mode == PadMode::kEdge) i = std::clamp<int64_t>(i, 0, dim - 1);
        if (mode == PadMode::kReflect) i = reflect(i, dim);
      }
      maps.push_back(i);
    }
  }
  return prepared_for_dtype<PadKernel>(node, in.dtype, in.shape, out, std::move(maps), map_begin, value);
}

}  // namespace

void add_strided_layout_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"Expand", prepare_expand});
  table.push_back({"Pad", prepare_pad});
  table.push_back({"Slice", prepare_slice});
  table.push_back({"Transpose", prepare_transpose});
}

}  // namespace plugrt::portable
