// SPDX-License-Identifier: Apache-2.0
// Unique (opset 11), any dtype: the distinct elements of X (without axis) or distinct
// slices along axis, sorted ascending (slices compared element by element) or, with
// sorted=0, in the order they first occur; with the index of each one's first
// occurrence, each element's or slice's place in Y (inverse_indices) and the counts.
// A NaN sorts last and equals other NaNs. How many there are depends on the values, so
// the outputs keep the lengths the model declares: a call that finds another number
// fails, naming the node and both numbers.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

/// -1, 0 or 1; a NaN is above every number and equal to another NaN.
template <typename V>
int compare_values(V a, V b) {
  if constexpr (std::is_floating_point_v<V>) {
    const bool a_nan = a != a, b_nan = b != b;
    if (a_nan || b_nan) return a_nan == b_nan ? 0 : (a_nan ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

/// X seen as [outer, slices, inner]: slice i is X[o, i, k] for every o, then k.
struct SliceLayout {
  int64_t outer = 1, slices = 0, inner = 1;
};

template <typename T>
class UniqueKernel final : public Kernel {
 public:
  UniqueKernel(std::string label, const SliceLayout& layout, int64_t declared, bool sorted, size_t outputs)
      : label_(std::move(label)), layout_(layout), declared_(declared), sorted_(sorted), outputs_(outputs) {}

  size_t scratch_bytes() const override { return 5 * static_cast<size_t>(layout_.slices) * sizeof(int64_t); }
  void run(const KernelArgs& args) const override { (void)find_and_write(args); }
  bool may_fail() const override { return true; }

  bool run_checked(const KernelArgs& args, char* error, size_t error_capacity) const override {
    const int64_t groups = find_and_write(args);
    if (groups == declared_) return true;
    std::snprintf(error, error_capacity,
                  "%s: found %lld unique values, but its outputs were compiled for %lld; the number found depends "
                  "on the values, so the model must declare the lengths its inputs give",
                  label_.c_str(), static_cast<long long>(groups), static_cast<long long>(declared_));
    return false;
  }

 private:
  /// Groups equal slices, and writes the outputs when there are declared_ groups;
  /// returns how many there are.
  int64_t find_and_write(const KernelArgs& args) const {
    const T* x = static_cast<const T*>(args.inputs[0]);
    const int64_t n = layout_.slices;
    int64_t* order = static_cast<int64_t*>(args.scratch);  // slices in sorted order
    int64_t* group = order + n;                            // each slice's group, in sorted order
    int64_t* first = group + n;                            // each group's first slice
    int64_t* count = first + n;                            // each group's size
    for (int64_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order, order + n, [&](int64_t a, int64_t b) {
      const int c = compare(x, a, b);
      return c < 0 || (c == 0 && a < b);
    });
    int64_t groups = 0;
    for (int64_t k = 0; k < n; ++k) {
      if (k == 0 || compare(x, order[k - 1], order[k]) != 0) {
        first[groups] = order[k];
        count[groups++] = 0;
      }
      ++count[groups - 1];
      group[order[k]] = groups - 1;
    }
    if (groups == declared_) write_outputs(args, x, group, first, count, groups);
    return groups;
  }

  int compare(const T* x, int64_t a, int64_t b) const {
    const int64_t stride = layout_.slices * layout_.inner;
    for (int64_t o = 0; o < layout_.outer; ++o) {
      for (int64_t k = 0; k < layout_.inner; ++k) {
        const int c =
            compare_values(load(x[o * stride + a * layout_.inner + k]), load(x[o * stride + b * layout_.inner + k]));
        if (c != 0) return c;
      }
    }
    return 0;
  }

  /// Writes Y and the optional outputs. `place` (reusing the sort order's scratch) lists
  /// the sorted groups in output order: as they are, or by first occurrence.
  void write_outputs(const KernelArgs& args, const T* x, const int64_t* group, const int64_t* first,
                     const int64_t* count, int64_t groups) const {
    int64_t* place = static_cast<int64_t*>(args.scratch);  // the order is no longer needed
    for (int64_t g = 0; g < groups; ++g) place[g] = g;
    if (!sorted_) {
      std::sort(place, place + groups, [&](int64_t a, int64_t b) { return first[a] < first[b]; });
    }
    T* y = static_cast<T*>(args.outputs[0]);
    auto* indices = outputs_ > 1 ? static_cast<int64_t*>(args.outputs[1]) : nullptr;
    auto* inverse = outputs_ > 2 ? static_cast<int64_t*>(args.outputs[2]) : nullptr;
    auto* counts = outputs_ > 3 ? static_cast<int64_t*>(args.outputs[3]) : nullptr;
    const int64_t stride = layout_.slices * layout_.inner;
    for (int64_t p = 0; p < groups; ++p) {
      const int64_t g = place[p];
      for (int64_t o = 0; o < layout_.outer; ++o) {
        std::memcpy(static_cast<void*>(y + (o * groups + p) * layout_.inner),
                    static_cast<const void*>(x + o * stride + first[g] * layout_.inner),
                    static_cast<size_t>(layout_.inner) * sizeof(T));
      }
      if (indices != nullptr) indices[p] = first[g];
      if (counts != nullptr) counts[p] = count[g];
    }
    if (inverse == nullptr) return;
    int64_t* position = place + 4 * layout_.slices;  // the output position of each sorted group
    for (int64_t p = 0; p < groups; ++p) position[place[p]] = p;
    for (int64_t i = 0; i < layout_.slices; ++i) inverse[i] = position[group[i]];
  }

  std::string label_;
  SliceLayout layout_;
  int64_t declared_;
  bool sorted_;
  size_t outputs_;  // the node's output count (an absent optional output is null)
};

Prepared prepare_unique(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 4); !why.empty()) return prepare_error(node, why);
  const TensorInfo& x = *node.input(0);
  const TensorInfo* y = node.output(0);
  if (y == nullptr) return prepare_error(node, "output 0 (Y) is missing");
  SliceLayout layout;
  int axis = -1;
  if (node.has_attribute("axis")) {
    if (!normalize_axis(node.attr_int("axis", 0), x.shape.rank, &axis)) {
      return prepare_error(node, "axis is out of range for input shape " + to_string(x.shape));
    }
    layout = {x.shape.product(0, axis), x.shape[axis], x.shape.product(axis + 1, x.shape.rank)};
  } else {
    layout.slices = x.num_elements();
  }
  if (y->shape.rank != (axis < 0 ? 1 : x.shape.rank)) {
    return prepare_error(node, "output 0 (Y) has shape " + to_string(y->shape) + ", of the wrong rank");
  }
  const int64_t declared = y->shape[axis < 0 ? 0 : axis];
  Shape y_shape = axis < 0 ? Shape{declared} : x.shape;
  if (axis >= 0) y_shape[axis] = declared;
  if (std::string why = check_output(node, 0, y_shape, x.dtype); !why.empty()) return prepare_error(node, why);
  const Shape index_shapes[3] = {Shape{declared}, Shape{layout.slices}, Shape{declared}};
  for (size_t i = 1; i < 4; ++i) {
    if (node.output(i) == nullptr) continue;
    if (std::string why = check_output(node, i, index_shapes[i - 1], DType::kInt64); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  if (declared > layout.slices) return prepare_error(node, "Y declares more unique values than X has");
  std::string label = std::string(node.op_type()) + (node.name().empty() ? "" : " '" + std::string(node.name()) + "'");
  const bool sorted = node.attr_int("sorted", 1) != 0;
  return dispatch<kAllTypes>(node, x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<UniqueKernel<T>>(std::move(label), layout, declared, sorted, node.num_outputs());
  });
}

}  // namespace

void add_unique_kernels(std::vector<KernelEntry>& table) { table.push_back({"Unique", prepare_unique}); }

}  // namespace plugrt::portable
