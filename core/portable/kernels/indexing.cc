// SPDX-License-Identifier: Apache-2.0
// Indexing kernels: ArgMax, ArgMin, TopK, GatherElements, GatherND, ScatterElements
// (and the older Scatter), ScatterND, OneHot, NonZero, Compress.
//
// An index outside its axis (after adding the axis length to a negative one) is refused
// at init when the indices are constant; when they are computed, running cannot fail,
// so a gather writes zero for it and a scatter skips it, never touching memory out of
// bounds.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

std::string name_of(DType dtype) { return std::string(to_string(dtype)); }

/// The elements of an int64 or int32 index tensor, widened.
int64_t index_at(const void* data, bool wide, int64_t i) {
  return wide ? static_cast<const int64_t*>(data)[i] : static_cast<const int32_t*>(data)[i];
}

/// Maps a possibly negative index into [0, extent); false when out of range.
bool resolve_index(int64_t index, int64_t extent, int64_t* resolved) {
  if (index < 0) index += extent;
  if (index < 0 || index >= extent) return false;
  *resolved = index;
  return true;
}

std::string check_index_dtype(const TensorInfo& indices, size_t input) {
  if (indices.dtype == DType::kInt64 || indices.dtype == DType::kInt32) return {};
  return "the indices (input " + std::to_string(input) + ") are " + name_of(indices.dtype) +
         "; int64 or int32 expected";
}

/// With constant indices: the first one outside [-extent(k), extent(k)), where
/// extent(k) says how long the axis of the k-th index is; an empty string when none.
template <typename Extent>
std::string check_constant_indices(const TensorInfo& indices, Extent extent) {
  if (indices.constant_data == nullptr) return {};
  const bool wide = indices.dtype == DType::kInt64;
  for (int64_t k = 0; k < indices.num_elements(); ++k) {
    const int64_t index = index_at(indices.constant_data, wide, k);
    int64_t resolved = 0;
    if (!resolve_index(index, extent(k), &resolved)) {
      return "index " + std::to_string(index) + " (element " + std::to_string(k) +
             " of the indices) is out of range for an axis of length " + std::to_string(extent(k));
    }
  }
  return {};
}

/// Outer, axis and inner extents of `shape` split at `axis`.
struct AxisSplit {
  int64_t outer, length, inner;
};
AxisSplit split_at(const Shape& shape, int axis) {
  return {shape.product(0, axis), shape[axis], shape.product(axis + 1, shape.rank)};
}

// ---- ArgMax, ArgMin -------------------------------------------------------------------

template <typename T, bool kMax>
class ArgKernel final : public Kernel {
 public:
  ArgKernel(AxisSplit split, bool last) : split_(split), last_(last) {}

  void run(const KernelArgs& args) const override {
    const T* in = static_cast<const T*>(args.inputs[0]);
    int64_t* out = static_cast<int64_t*>(args.outputs[0]);
    for (int64_t o = 0; o < split_.outer; ++o) {
      for (int64_t i = 0; i < split_.inner; ++i) {
        const T* row = in + o * split_.length * split_.inner + i;
        Compute<T> best = load(row[0]);
        int64_t best_index = 0;
        for (int64_t k = 1; k < split_.length; ++k) {
          const Compute<T> v = load(row[k * split_.inner]);
          const bool better = kMax ? v > best : v < best;
          if (better || (last_ && v == best)) {
            best = v;
            best_index = k;
          }
        }
        out[o * split_.inner + i] = best_index;
      }
    }
  }

 private:
  AxisSplit split_;
  bool last_;
};

template <bool kMax>
Prepared prepare_arg(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  const int64_t axis = node.attr_int("axis", 0);
  const int64_t keepdims = node.attr_int("keepdims", 1);
  const int64_t last = node.opset() >= 12 ? node.attr_int("select_last_index", 0) : 0;
  int a = 0;
  if (!normalize_axis(axis, in.shape.rank, &a)) {
    return prepare_error(node,
                         "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(in.shape.rank));
  }
  if (keepdims != 0 && keepdims != 1) return prepare_error(node, "keepdims must be 0 or 1");
  if (last != 0 && last != 1) return prepare_error(node, "select_last_index must be 0 or 1");
  if (in.shape[a] == 0) return prepare_error(node, "the axis has length 0, so there is no index to return");
  Shape out;
  for (int d = 0; d < in.shape.rank; ++d) {
    if (d != a)
      out.push_back(in.shape[d]);
    else if (keepdims == 1)
      out.push_back(1);
  }
  if (std::string why = check_output(node, 0, out, DType::kInt64); !why.empty()) return prepare_error(node, why);
  return dispatch<kNumericTypes>(node, in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<ArgKernel<T, kMax>>(split_at(in.shape, a), last == 1);
  });
}

// ---- TopK ------------------------------------------------------------------------------

/// The k largest (or smallest) of each row, in order; equal values keep their index order.
template <typename T>
class TopKKernel final : public Kernel {
 public:
  TopKKernel(AxisSplit split, int64_t k, bool largest, bool with_indices)
      : split_(split), k_(k), largest_(largest), with_indices_(with_indices) {}

  size_t scratch_bytes() const override { return static_cast<size_t>(split_.length) * sizeof(int64_t); }

  void run(const KernelArgs& args) const override {
    const T* in = static_cast<const T*>(args.inputs[0]);
    T* values = static_cast<T*>(args.outputs[0]);
    int64_t* indices = with_indices_ ? static_cast<int64_t*>(args.outputs[1]) : nullptr;
    int64_t* order = static_cast<int64_t*>(args.scratch);
    for (int64_t o = 0; o < split_.outer; ++o) {
      for (int64_t i = 0; i < split_.inner; ++i) {
        const T* row = in + o * split_.length * split_.inner + i;
        for (int64_t k = 0; k < split_.length; ++k) order[k] = k;
        auto before = [&](int64_t a, int64_t b) {
          const Compute<T> x = load(row[a * split_.inner]);
          const Compute<T> y = load(row[b * split_.inner]);
          if (x != y) return largest_ ? x > y : x < y;
          return a < b;
        };
        std::partial_sort(order, order + k_, order + split_.length, before);
        const int64_t base = o * k_ * split_.inner + i;
        for (int64_t k = 0; k < k_; ++k) {
          values[base + k * split_.inner] = row[order[k] * split_.inner];
          if (indices != nullptr) indices[base + k * split_.inner] = order[k];
        }
      }
    }
  }

 private:
  AxisSplit split_;
  int64_t k_;
  bool largest_;
  bool with_indices_;
};

/// TopK: k is an attribute before opset 10, then a constant 1-element int64 input.
Prepared prepare_top_k(const NodeContext& node) {
  const bool k_input = node.opset() >= 10;
  if (std::string why = check_arity(node, k_input ? 2 : 1, k_input ? 2 : 1, 1, 2); !why.empty()) {
    return prepare_error(node, why);
  }
  const TensorInfo& in = *node.input(0);
  int64_t k = node.attr_int("k", -1);
  if (k_input) {
    std::optional<std::vector<int64_t>> value = node.constant_ints(1);
    if (!value || value->size() != 1) return prepare_error(node, "k (input 1) must be a constant 1-element int64");
    k = (*value)[0];
  }
  const int64_t axis = node.attr_int("axis", -1);
  const int64_t largest = node.opset() >= 11 ? node.attr_int("largest", 1) : 1;
  int a = 0;
  if (!normalize_axis(axis, in.shape.rank, &a)) {
    return prepare_error(node,
                         "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(in.shape.rank));
  }
  if (k < 0 || k > in.shape[a]) {
    return prepare_error(node, "k = " + std::to_string(k) + " is outside [0, " + std::to_string(in.shape[a]) +
                                   "], the length of axis " + std::to_string(a));
  }
  Shape out = in.shape;
  out[a] = k;
  if (std::string why = check_output(node, 0, out, in.dtype); !why.empty()) return prepare_error(node, why);
  if (node.output(1) != nullptr) {
    if (std::string why = check_output(node, 1, out, DType::kInt64); !why.empty()) return prepare_error(node, why);
  }
  return dispatch<kNumericTypes>(node, in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<TopKKernel<T>>(split_at(in.shape, a), k, largest != 0, node.output(1) != nullptr);
  });
}

// ---- GatherElements, ScatterElements --------------------------------------------------

enum class Combine { kNone, kAdd, kMul, kMax, kMin };

template <typename T>
T combine(Combine how, T old_value, T update) {
  const Compute<T> a = load(old_value), b = load(update);
  switch (how) {
    case Combine::kAdd: return store<T>(a + b);
    case Combine::kMul: return store<T>(a * b);
    case Combine::kMax: return store<T>(std::max(a, b));
    case Combine::kMin: return store<T>(std::min(a, b));
    case Combine::kNone: break;
  }
  return update;
}

/// Walks the elements of `indices_shape` in order, giving for each the offset into a
/// tensor of `data_shape` with the same coordinates except on `axis`, which is left 0.
class ElementWalker {
 public:
  ElementWalker(const Shape& indices_shape, const Shape& data_shape, int axis)
      : shape_(indices_shape), data_strides_(contiguous_strides(data_shape)), axis_(axis) {}

  int64_t base() const { return base_; }
  int64_t axis_stride() const { return data_strides_[static_cast<size_t>(axis_)]; }
  void next() {
    for (int d = shape_.rank - 1; d >= 0; --d) {
      const auto u = static_cast<size_t>(d);
      if (++coord_[u] < shape_[d]) {
        if (d != axis_) base_ += data_strides_[u];
        return;
      }
      if (d != axis_) base_ -= (coord_[u] - 1) * data_strides_[u];
      coord_[u] = 0;
    }
  }

 private:
  Shape shape_;
  std::array<int64_t, kMaxRank> data_strides_;
  std::array<int64_t, kMaxRank> coord_{};
  int axis_;
  int64_t base_ = 0;
};

template <typename T>
class GatherElementsKernel final : public Kernel {
 public:
  GatherElementsKernel(const Shape& data, const Shape& indices, int axis, bool wide)
      : data_(data), indices_(indices), axis_(axis), wide_(wide) {}

  void run(const KernelArgs& args) const override {
    const T* data = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    ElementWalker walk(indices_, data_, axis_);
    const int64_t count = indices_.num_elements();
    for (int64_t i = 0; i < count; ++i, walk.next()) {
      int64_t index = 0;
      out[i] = resolve_index(index_at(args.inputs[1], wide_, i), data_[axis_], &index)
                   ? data[walk.base() + index * walk.axis_stride()]
                   : T{};
    }
  }

 private:
  Shape data_, indices_;
  int axis_;
  bool wide_;
};

template <typename T>
class ScatterElementsKernel final : public Kernel {
 public:
  ScatterElementsKernel(const Shape& data, const Shape& indices, int axis, bool wide, Combine how)
      : data_(data), indices_(indices), axis_(axis), wide_(wide), how_(how) {}

  void run(const KernelArgs& args) const override {
    T* out = static_cast<T*>(args.outputs[0]);
    if (args.outputs[0] != args.inputs[0]) {
      std::memcpy(out, args.inputs[0], static_cast<size_t>(data_.num_elements()) * sizeof(T));
    }
    const T* updates = static_cast<const T*>(args.inputs[2]);
    ElementWalker walk(indices_, data_, axis_);
    const int64_t count = indices_.num_elements();
    for (int64_t i = 0; i < count; ++i, walk.next()) {
      int64_t index = 0;
      if (!resolve_index(index_at(args.inputs[1], wide_, i), data_[axis_], &index)) continue;
      T& slot = out[walk.base() + index * walk.axis_stride()];
      slot = combine(how_, slot, updates[i]);
    }
  }

 private:
  Shape data_, indices_;
  int axis_;
  bool wide_;
  Combine how_;
};

std::string read_reduction(const NodeContext& node, Combine* how) {
  const std::string reduction = node.attr_string("reduction", "none");
  if (reduction == "none")
    *how = Combine::kNone;
  else if (reduction == "add")
    *how = Combine::kAdd;
  else if (reduction == "mul")
    *how = Combine::kMul;
  else if (reduction == "max")
    *how = Combine::kMax;
  else if (reduction == "min")
    *how = Combine::kMin;
  else
    return "reduction must be none, add, mul, max or min, not \"" + reduction + "\"";
  return {};
}

/// GatherElements (kScatter false) and ScatterElements / Scatter (kScatter true).
template <bool kScatter>
Prepared prepare_elements(const NodeContext& node) {
  const size_t inputs = kScatter ? 3 : 2;
  if (std::string why = check_arity(node, inputs, inputs, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& data = *node.input(0);
  const TensorInfo& indices = *node.input(1);
  if (std::string why = check_index_dtype(indices, 1); !why.empty()) return prepare_error(node, why);
  if (indices.shape.rank != data.shape.rank) {
    return prepare_error(node, "the indices have rank " + std::to_string(indices.shape.rank) + ", the data " +
                                   std::to_string(data.shape.rank) + "; they must match");
  }
  const int64_t axis = node.attr_int("axis", 0);
  int a = 0;
  if (!normalize_axis(axis, data.shape.rank, &a)) {
    return prepare_error(
        node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(data.shape.rank));
  }
  for (int d = 0; d < data.shape.rank; ++d) {
    if (d != a && indices.shape[d] > data.shape[d]) {
      return prepare_error(node, "the indices' shape " + to_string(indices.shape) + " exceeds the data's " +
                                     to_string(data.shape) + " at axis " + std::to_string(d));
    }
  }
  const int64_t length = data.shape[a];
  if (std::string why = check_constant_indices(indices, [length](int64_t) { return length; }); !why.empty()) {
    return prepare_error(node, why);
  }
  const bool wide = indices.dtype == DType::kInt64;
  Combine how = Combine::kNone;
  if constexpr (kScatter) {
    const TensorInfo& updates = *node.input(2);
    if (updates.dtype != data.dtype || updates.shape != indices.shape) {
      return prepare_error(node, "the updates must have the data's dtype and the indices' shape " +
                                     to_string(indices.shape) + ", not " + name_of(updates.dtype) + " " +
                                     to_string(updates.shape));
    }
    if (std::string why = read_reduction(node, &how); !why.empty()) return prepare_error(node, why);
    if (how != Combine::kNone && data.dtype == DType::kBool) {
      return prepare_error(node, "a reduction on bool data is not supported");
    }
    if (std::string why = check_output(node, 0, data.shape, data.dtype); !why.empty()) return prepare_error(node, why);
  } else {
    if (std::string why = check_output(node, 0, indices.shape, data.dtype); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  return dispatch<kAllTypes>(node, data.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kScatter) {
      return prepared<ScatterElementsKernel<T>>(data.shape, indices.shape, a, wide, how);
    } else {
      return prepared<GatherElementsKernel<T>>(data.shape, indices.shape, a, wide);
    }
  });
}

// ---- GatherND, ScatterND ----------------------------------------------------------------

/// The geometry both share: `batches` x `tuples` index tuples of `depth` indices each,
/// every one selecting a slice of `slice` elements in its batch of the data.
struct NdGeometry {
  int64_t batches = 1, tuples = 1, depth = 0, slice = 1, batch_stride = 0;
  std::array<int64_t, kMaxRank> extents{}, strides{};  // of the indexed data dims
};

std::string nd_geometry(const Shape& data, const Shape& indices, int64_t batch_dims, NdGeometry* g) {
  if (indices.rank < 1) return "the indices must have rank 1 or more";
  const int64_t depth = indices[indices.rank - 1];
  if (batch_dims < 0 || batch_dims >= std::min(data.rank, indices.rank)) {
    return "batch_dims " + std::to_string(batch_dims) + " must be below both ranks";
  }
  const int b = static_cast<int>(batch_dims);
  if (depth < 1 || depth > data.rank - b) {
    return "the indices' last dimension " + std::to_string(depth) + " must be in [1, " + std::to_string(data.rank - b) +
           "]";
  }
  for (int d = 0; d < b; ++d) {
    if (data[d] != indices[d]) return "the batch dimensions of the data and the indices differ";
  }
  g->depth = depth;
  g->batches = data.product(0, b);
  g->tuples = indices.product(b, indices.rank - 1);
  g->slice = data.product(b + static_cast<int>(depth), data.rank);
  g->batch_stride = data.product(b, data.rank);
  const std::array<int64_t, kMaxRank> strides = contiguous_strides(data);
  for (int j = 0; j < depth; ++j) {
    g->extents[static_cast<size_t>(j)] = data[b + j];
    g->strides[static_cast<size_t>(j)] = strides[static_cast<size_t>(b + j)];
  }
  return {};
}

/// The data offset of tuple `t` of batch `n`; false when an index is out of range.
bool nd_offset(const NdGeometry& g, const void* indices, bool wide, int64_t n, int64_t t, int64_t* offset) {
  int64_t at = n * g.batch_stride;
  const int64_t first = (n * g.tuples + t) * g.depth;
  for (int64_t j = 0; j < g.depth; ++j) {
    int64_t index = 0;
    const auto u = static_cast<size_t>(j);
    if (!resolve_index(index_at(indices, wide, first + j), g.extents[u], &index)) return false;
    at += index * g.strides[u];
  }
  *offset = at;
  return true;
}

template <typename T>
class GatherNDKernel final : public Kernel {
 public:
  GatherNDKernel(const NdGeometry& g, bool wide) : g_(g), wide_(wide) {}

  void run(const KernelArgs& args) const override {
    const T* data = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    for (int64_t n = 0; n < g_.batches; ++n) {
      for (int64_t t = 0; t < g_.tuples; ++t) {
        T* target = out + (n * g_.tuples + t) * g_.slice;
        int64_t offset = 0;
        if (nd_offset(g_, args.inputs[1], wide_, n, t, &offset)) {
          std::copy(data + offset, data + offset + g_.slice, target);
        } else {
          std::fill(target, target + g_.slice, T{});
        }
      }
    }
  }

 private:
  NdGeometry g_;
  bool wide_;
};

template <typename T>
class ScatterNDKernel final : public Kernel {
 public:
  ScatterNDKernel(const NdGeometry& g, int64_t data_count, bool wide, Combine how)
      : g_(g), data_count_(data_count), wide_(wide), how_(how) {}

  void run(const KernelArgs& args) const override {
    T* out = static_cast<T*>(args.outputs[0]);
    if (args.outputs[0] != args.inputs[0]) {
      std::memcpy(out, args.inputs[0], static_cast<size_t>(data_count_) * sizeof(T));
    }
    const T* updates = static_cast<const T*>(args.inputs[2]);
    for (int64_t t = 0; t < g_.tuples; ++t) {
      int64_t offset = 0;
      if (!nd_offset(g_, args.inputs[1], wide_, 0, t, &offset)) continue;
      for (int64_t e = 0; e < g_.slice; ++e)
        out[offset + e] = combine(how_, out[offset + e], updates[t * g_.slice + e]);
    }
  }

 private:
  NdGeometry g_;
  int64_t data_count_;
  bool wide_;
  Combine how_;
};

/// The constant indices of an ND op, checked against their axes.
std::string check_nd_indices(const TensorInfo& indices, const NdGeometry& g) {
  return check_constant_indices(indices, [&g](int64_t k) { return g.extents[static_cast<size_t>(k % g.depth)]; });
}

Prepared prepare_gather_nd(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& data = *node.input(0);
  const TensorInfo& indices = *node.input(1);
  if (indices.dtype != DType::kInt64) return prepare_error(node, "the indices (input 1) must be int64");
  const int64_t batch_dims = node.opset() >= 12 ? node.attr_int("batch_dims", 0) : 0;
  NdGeometry g;
  if (std::string why = nd_geometry(data.shape, indices.shape, batch_dims, &g); !why.empty()) {
    return prepare_error(node, why);
  }
  if (std::string why = check_nd_indices(indices, g); !why.empty()) return prepare_error(node, why);
  Shape out;
  for (int d = 0; d < indices.shape.rank - 1; ++d) out.push_back(indices.shape[d]);
  for (int d = static_cast<int>(batch_dims + g.depth); d < data.shape.rank; ++d) out.push_back(data.shape[d]);
  if (out.rank > kMaxRank) return prepare_error(node, "the output would have more than 8 dimensions");
  if (std::string why = check_output(node, 0, out, data.dtype); !why.empty()) return prepare_error(node, why);
  return dispatch<kAllTypes>(node, data.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<GatherNDKernel<T>>(g, true);
  });
}

Prepared prepare_scatter_nd(const NodeContext& node) {
  if (std::string why = check_arity(node, 3, 3, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& data = *node.input(0);
  const TensorInfo& indices = *node.input(1);
  const TensorInfo& updates = *node.input(2);
  if (indices.dtype != DType::kInt64) return prepare_error(node, "the indices (input 1) must be int64");
  NdGeometry g;
  if (std::string why = nd_geometry(data.shape, indices.shape, 0, &g); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_nd_indices(indices, g); !why.empty()) return prepare_error(node, why);
  Shape expected;
  for (int d = 0; d < indices.shape.rank - 1; ++d) expected.push_back(indices.shape[d]);
  for (int d = static_cast<int>(g.depth); d < data.shape.rank; ++d) expected.push_back(data.shape[d]);
  if (updates.dtype != data.dtype || updates.shape != expected) {
    return prepare_error(node, "the updates must be " + name_of(data.dtype) + " " + to_string(expected) + ", not " +
                                   name_of(updates.dtype) + " " + to_string(updates.shape));
  }
  Combine how = Combine::kNone;
  if (std::string why = read_reduction(node, &how); !why.empty()) return prepare_error(node, why);
  if (how != Combine::kNone && data.dtype == DType::kBool) {
    return prepare_error(node, "a reduction on bool data is not supported");
  }
  if (std::string why = check_output(node, 0, data.shape, data.dtype); !why.empty()) return prepare_error(node, why);
  return dispatch<kAllTypes>(node, data.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<ScatterNDKernel<T>>(g, data.num_elements(), true, how);
  });
}

// ---- OneHot ----------------------------------------------------------------------------

template <typename I, typename V>
class OneHotKernel final : public Kernel {
 public:
  OneHotKernel(int64_t outer, int64_t inner, int64_t depth) : outer_(outer), inner_(inner), depth_(depth) {}

  void run(const KernelArgs& args) const override {
    const I* indices = static_cast<const I*>(args.inputs[0]);
    const V* values = static_cast<const V*>(args.inputs[2]);
    V* out = static_cast<V*>(args.outputs[0]);
    std::fill(out, out + outer_ * depth_ * inner_, values[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) {
        // Non-integer indices are truncated, as a cast to int64 would.
        const double raw = static_cast<double>(load(indices[o * inner_ + i]));
        if (!(raw > -static_cast<double>(depth_) - 1 && raw < static_cast<double>(depth_))) continue;
        int64_t index = 0;
        if (!resolve_index(static_cast<int64_t>(raw), depth_, &index)) continue;
        out[(o * depth_ + index) * inner_ + i] = values[1];
      }
    }
  }

 private:
  int64_t outer_, inner_, depth_;
};

/// OneHot(indices, depth, values): depth must be a constant scalar (any numeric type).
Prepared prepare_one_hot(const NodeContext& node) {
  if (std::string why = check_arity(node, 3, 3, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& indices = *node.input(0);
  const TensorInfo& depth_info = *node.input(1);
  const TensorInfo& values = *node.input(2);
  const void* depth_data = node.constant_data(1);
  if (depth_data == nullptr || depth_info.num_elements() != 1) {
    return prepare_error(node, "the depth (input 1) must be a constant with one element");
  }
  double depth_value = 0;
  Prepared read = dispatch<kNumericTypes>(node, depth_info.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    depth_value = static_cast<double>(load(*static_cast<const T*>(depth_data)));
    return Prepared{};
  });
  if (!read.error.empty()) return read;
  if (!(depth_value >= 1 && depth_value <= 1e12)) {
    return prepare_error(node, "the depth must be at least 1, not " + std::to_string(depth_value));
  }
  const auto depth = static_cast<int64_t>(depth_value);
  if (values.num_elements() != 2) return prepare_error(node, "the values (input 2) must hold [off, on]");
  const int64_t axis = node.attr_int("axis", -1);
  int a = 0;
  if (!normalize_axis(axis, indices.shape.rank + 1, &a)) {
    return prepare_error(
        node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(indices.shape.rank + 1));
  }
  if (indices.shape.rank + 1 > kMaxRank) return prepare_error(node, "the output would have more than 8 dimensions");
  Shape out;
  for (int d = 0; d < indices.shape.rank; ++d) {
    if (d == a) out.push_back(depth);
    out.push_back(indices.shape[d]);
  }
  if (a == indices.shape.rank) out.push_back(depth);
  if (std::string why = check_output(node, 0, out, values.dtype); !why.empty()) return prepare_error(node, why);
  const int64_t outer = indices.shape.product(0, a);
  const int64_t inner = indices.shape.product(a, indices.shape.rank);
  return dispatch<kNumericTypes>(node, indices.dtype, [&](auto index_tag) {
    return dispatch_bits(values.dtype, [&](auto value_tag) {
      using I = typename decltype(index_tag)::type;
      using V = typename decltype(value_tag)::type;
      return prepared<OneHotKernel<I, V>>(outer, inner, depth);
    });
  });
}

// ---- NonZero ---------------------------------------------------------------------------

/// NonZero of an input that is not a constant: how many elements are not zero depends on
/// the values, so the output keeps the length the model declares, and a call that finds
/// another number fails, naming the node and both numbers.
template <typename T>
class NonZeroKernel final : public Kernel {
 public:
  NonZeroKernel(std::string label, const Shape& shape, int64_t declared)
      : label_(std::move(label)), shape_(shape), declared_(declared) {}
  void run(const KernelArgs& args) const override { (void)write(args); }
  bool may_fail() const override { return true; }
  bool run_checked(const KernelArgs& args, char* error, size_t error_capacity) const override {
    const int64_t count = write(args);
    if (count == declared_) return true;
    std::snprintf(error, error_capacity,
                  "%s: found %lld non-zero elements, but its output was compiled for %lld; the number depends on the "
                  "values, so the model must declare the length its inputs give",
                  label_.c_str(), static_cast<long long>(count), static_cast<long long>(declared_));
    return false;
  }

 private:
  /// Writes the coordinates of up to declared_ non-zero elements; returns how many there are.
  int64_t write(const KernelArgs& args) const {
    const T* x = static_cast<const T*>(args.inputs[0]);
    auto* out = static_cast<int64_t*>(args.outputs[0]);
    const std::array<int64_t, kMaxRank> strides = contiguous_strides(shape_);
    int64_t count = 0;
    for (int64_t i = 0; i < shape_.num_elements(); ++i) {
      if (load(x[i]) == Compute<T>{0}) continue;
      int64_t rest = i;
      for (int d = 0; d < shape_.rank && count < declared_; ++d) {
        out[d * declared_ + count] = rest / strides[static_cast<size_t>(d)];
        rest %= strides[static_cast<size_t>(d)];
      }
      ++count;
    }
    return count;
  }

  std::string label_;
  Shape shape_;
  int64_t declared_;
};

Prepared prepare_non_zero_at_run_time(const NodeContext& node) {
  const TensorInfo& in = *node.input(0);
  const TensorInfo* out = node.output(0);
  if (out == nullptr || out->shape.rank != 2) {
    return prepare_error(node, "the output shape depends on the input's values: the model must declare it");
  }
  const int64_t declared = out->shape[1];
  if (std::string why = check_output(node, 0, Shape{in.shape.rank, declared}, DType::kInt64); !why.empty()) {
    return prepare_error(node, why);
  }
  if (declared > in.num_elements()) return prepare_error(node, "the output declares more elements than the input has");
  std::string label = std::string(node.op_type()) + (node.name().empty() ? "" : " '" + std::string(node.name()) + "'");
  return dispatch<kAllTypes>(node, in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<NonZeroKernel<T>>(std::move(label), in.shape, declared);
  });
}

/// NonZero of a constant is computed here (the importer uses this kernel to fold it);
/// of another input, when it runs, into the length the model declares.
Prepared prepare_non_zero(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  if (in.constant_data == nullptr) return prepare_non_zero_at_run_time(node);
  std::vector<int64_t> positions;
  Prepared scan = dispatch<kAllTypes>(node, in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = static_cast<const T*>(in.constant_data);
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      if (load(data[i]) != Compute<T>{0}) positions.push_back(i);
    }
    return Prepared{};
  });
  if (!scan.error.empty()) return scan;
  const int rank = in.shape.rank;
  const auto count = static_cast<int64_t>(positions.size());
  const std::array<int64_t, kMaxRank> strides = contiguous_strides(in.shape);
  std::vector<int64_t> out(static_cast<size_t>(rank * count));
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = positions[static_cast<size_t>(k)];
    for (int d = 0; d < rank; ++d) {
      const int64_t stride = strides[static_cast<size_t>(d)];
      out[static_cast<size_t>(d * count + k)] = rest / stride;
      rest %= stride;
    }
  }
  const Shape shape{static_cast<int64_t>(rank), count};
  if (std::string why = check_output(node, 0, shape, DType::kInt64); !why.empty()) return prepare_error(node, why);
  return prepared<ConstantInt64Kernel>(std::move(out));
}

// ---- Compress ------------------------------------------------------------------------

/// Copies the slices along an axis whose indices were chosen at init.
template <typename T>
class CompressKernel final : public Kernel {
 public:
  CompressKernel(AxisSplit split, std::vector<int64_t> chosen) : split_(split), chosen_(std::move(chosen)) {}
  void run(const KernelArgs& args) const override {
    const T* in = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    const auto count = static_cast<int64_t>(chosen_.size());
    for (int64_t o = 0; o < split_.outer; ++o) {
      for (int64_t s = 0; s < count; ++s) {
        const T* from = in + (o * split_.length + chosen_[static_cast<size_t>(s)]) * split_.inner;
        std::copy(from, from + split_.inner, out + (o * count + s) * split_.inner);
      }
    }
  }

 private:
  AxisSplit split_;
  std::vector<int64_t> chosen_;
};

/// Compress(input, condition): the output's length depends on the condition, so it must
/// be a constant 1-D bool; without an axis the input is flattened first.
Prepared prepare_compress(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  const TensorInfo& condition = *node.input(1);
  const auto* flags = static_cast<const uint8_t*>(node.constant_data(1));
  if (condition.dtype != DType::kBool || condition.shape.rank != 1 || flags == nullptr) {
    return prepare_error(node,
                         "the output shape depends on the condition (input 1), so it must be a constant 1-D bool");
  }
  AxisSplit split{1, in.num_elements(), 1};
  Shape out;
  int a = -1;
  if (node.has_attribute("axis")) {
    const int64_t axis = node.attr_int("axis", 0);
    if (!normalize_axis(axis, in.shape.rank, &a)) {
      return prepare_error(
          node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(in.shape.rank));
    }
    split = split_at(in.shape, a);
  }
  if (condition.num_elements() > split.length) {
    return prepare_error(node, "the condition has " + std::to_string(condition.num_elements()) +
                                   " elements, more than the " + std::to_string(split.length) + " it selects from");
  }
  std::vector<int64_t> chosen;
  for (int64_t k = 0; k < condition.num_elements(); ++k) {
    if (flags[k] != 0) chosen.push_back(k);
  }
  if (a < 0) {
    out.push_back(static_cast<int64_t>(chosen.size()));
  } else {
    out = in.shape;
    out[a] = static_cast<int64_t>(chosen.size());
  }
  if (std::string why = check_output(node, 0, out, in.dtype); !why.empty()) return prepare_error(node, why);
  return dispatch_bits(in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<CompressKernel<T>>(split, std::move(chosen));
  });
}

}  // namespace

void add_indexing_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"ArgMax", prepare_arg<true>});
  table.push_back({"ArgMin", prepare_arg<false>});
  table.push_back({"TopK", prepare_top_k});
  table.push_back({"GatherElements", prepare_elements<false>});
  table.push_back({"ScatterElements", prepare_elements<true>});
  table.push_back({"Scatter", prepare_elements<true>});
  table.push_back({"GatherND", prepare_gather_nd});
  table.push_back({"ScatterND", prepare_scatter_nd});
  table.push_back({"OneHot", prepare_one_hot});
  table.push_back({"NonZero", prepare_non_zero});
  table.push_back({"Compress", prepare_compress});
}

}  // namespace plugrt::portable
