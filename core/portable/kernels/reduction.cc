// SPDX-License-Identifier: Apache-2.0
// Reduction kernels: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare over any set of axes, and
// Softmax / LogSoftmax / Hardmax along an axis.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

std::string name_of(DType dtype) { return std::string(to_string(dtype)); }

// ---- ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, -----
// ---- ReduceLogSumExp, ReduceSumSquare ---------------------------------------------------

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

/// Integer accumulation wraps around (two's complement) instead of overflowing.
template <typename A>
A wrap_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename A>
A wrap_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

/// Accumulates every input element into its output slot (in scratch, as double for
/// float inputs and for the L2 and log-sum-exp of integers), then writes the outputs.
template <typename T, Reduce kReduce>
class ReduceKernel final : public Kernel {
  static constexpr bool kInDouble = std::is_floating_point_v<Compute<T>> || kReduce == Reduce::kL2 ||
                                    kReduce == Reduce::kLogSum || kReduce == Reduce::kLogSumExp;
  using Acc = std::conditional_t<kInDouble, double, T>;

 public:
  /// `kept`: the input shape with the reduced axes set to 1.
  ReduceKernel(const Shape& in, const Shape& kept)
      : in_(in),
        out_count_(kept.num_elements()),
        group_(kept.num_elements() > 0 ? in.num_elements() / kept.num_elements() : 0),
        strides_(broadcast_strides(kept, in)) {}

  size_t scratch_bytes() const override { return static_cast<size_t>(out_count_) * sizeof(Acc); }

  void run(const KernelArgs& args) const override {
    const T* in = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    Acc* acc = static_cast<Acc*>(args.scratch);
    std::fill(acc, acc + out_count_, initial());
    BroadcastIterator it(in_, 1, &strides_);
    const int64_t count = in_.num_elements();
    for (int64_t i = 0; i < count; ++i, it.next()) {
      Acc& slot = acc[it.offset(0)];
      const Acc x = static_cast<Acc>(load(in[i]));
      if constexpr (kReduce == Reduce::kMax) {
        if (x > slot || is_nan(x)) slot = x;  // NaN wins
      } else if constexpr (kReduce == Reduce::kMin) {
        if (x < slot || is_nan(x)) slot = x;
      } else if constexpr (kReduce == Reduce::kProd) {
        slot = wrap_mul(slot, x);
      } else if constexpr (kReduce == Reduce::kL1) {
        slot = wrap_add(slot, is_negative(x) ? wrap_mul(x, static_cast<Acc>(-1)) : x);
      } else if constexpr (kReduce == Reduce::kL2 || kReduce == Reduce::kSumSquare) {
        slot = wrap_add(slot, wrap_mul(x, x));
      } else if constexpr (kReduce == Reduce::kLogSumExp) {
        slot += std::exp(x);
      } else {
        slot = wrap_add(slot, x);
      }
    }
    for (int64_t i = 0; i < out_count_; ++i) out[i] = store<T>(finish(acc[i]));
  }

 private:
  static bool is_nan(Acc x) {
    if constexpr (std::is_floating_point_v<Acc>) return std::isnan(x);
    return false;
  }
  static bool is_negative(Acc x) {
    if constexpr (std::is_signed_v<Acc>) return x < 0;
    return false;
  }

  static Acc initial() {
    if constexpr (kReduce == Reduce::kProd) return Acc{1};
    if constexpr (kReduce == Reduce::kMax) {
      if constexpr (std::is_floating_point_v<Acc>) return -std::numeric_limits<Acc>::infinity();
      return std::numeric_limits<Acc>::lowest();
    }
    if constexpr (kReduce == Reduce::kMin) {
      if constexpr (std::is_floating_point_v<Acc>) return std::numeric_limits<Acc>::infinity();
      return std::numeric_limits<Acc>::max();
    }
    return Acc{0};
  }

  Compute<T> finish(Acc value) const {
    using C = Compute<T>;
    if constexpr (kReduce == Reduce::kMean) {
      if constexpr (std::is_integral_v<Acc>) return group_ > 0 ? static_cast<C>(value / group_) : C{0};
      return static_cast<C>(value / static_cast<double>(group_));  // 0 / 0 gives NaN
    }
    if constexpr (kReduce == Reduce::kL2) return static_cast<C>(std::sqrt(value));
    if constexpr (kReduce == Reduce::kLogSumExp || kReduce == Reduce::kLogSum) return static_cast<C>(std::log(value));
    return static_cast<C>(value);
  }

  Shape in_;
  int64_t out_count_;
  int64_t group_;  // input elements per output element
  std::array<int64_t, kMaxRank> strides_;
};

/// noop_with_empty_axes with no axes: the output is the input.
class CopyKernel final : public Kernel {
 public:
  explicit CopyKernel(size_t bytes) : bytes_(bytes) {}
  void run(const KernelArgs& args) const override {
    if (bytes_ > 0) std::memcpy(args.outputs[0], args.inputs[0], bytes_);
  }

 private:
  size_t bytes_;
};

/// The reduce ops' axes: an attribute, or from `input_opset` an optional constant input.
std::string read_axes(const NodeContext& node, int input_opset, std::vector<int64_t>* axes) {
  if (node.opset() < input_opset) {
    if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return why;
    *axes = node.attr_ints("axes");
    return {};
  }
  if (std::string why = check_arity(node, 1, 2, 1, 1); !why.empty()) return why;
  if (node.has_attribute("axes")) {
    return "from opset " + std::to_string(input_opset) + " the axes are input 1, not an attribute";
  }
  if (node.input(1) == nullptr) return {};
  std::optional<std::vector<int64_t>> values = node.constant_ints(1);
  if (!values || node.input(1)->shape.rank > 1) return "the axes (input 1) must be a constant 1-D int64 tensor";
  *axes = *values;
  return {};
}

constexpr unsigned kReduceTypes = kFloatTypes | kIntTypes;

template <Reduce kReduce>
Prepared prepare_reduce(const NodeContext& node) {
  const int input_opset = kReduce == Reduce::kSum ? 13 : 18;
  std::vector<int64_t> axes;
  if (std::string why = read_axes(node, input_opset, &axes); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  const int64_t keepdims = node.attr_int("keepdims", 1);
  const int64_t noop = node.opset() >= input_opset ? node.attr_int("noop_with_empty_axes", 0) : 0;
  if (keepdims != 0 && keepdims != 1) return prepare_error(node, "keepdims must be 0 or 1");
  if (noop != 0 && noop != 1) return prepare_error(node, "noop_with_empty_axes must be 0 or 1");
  if (!dtype_in(in.dtype, kReduceTypes)) {
    return prepare_error(node, "supports " + describe_dtypes(kReduceTypes) + ", not " + name_of(in.dtype));
  }
  if (axes.empty() && noop == 1) {
    if (std::string why = check_output(node, 0, in.shape, in.dtype); !why.empty()) return prepare_error(node, why);
    return prepared<CopyKernel>(in.num_bytes());
  }
  bool reduced[kMaxRank] = {};
  for (int64_t axis : axes) {
    int a = 0;
    if (!normalize_axis(axis, in.shape.rank, &a)) {
      return prepare_error(
          node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(in.shape.rank));
    }
    if (reduced[a]) return prepare_error(node, "axis " + std::to_string(axis) + " is given twice");
    reduced[a] = true;
  }
  Shape kept, out;
  for (int a = 0; a < in.shape.rank; ++a) {
    const bool reduce = axes.empty() || reduced[a];
    kept.push_back(reduce ? 1 : in.shape[a]);
    if (!reduce || keepdims == 1) out.push_back(kept[a]);
  }
  if (std::string why = check_output(node, 0, out, in.dtype); !why.empty()) return prepare_error(node, why);
  return dispatch<kReduceTypes>(node, in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<ReduceKernel<T, kReduce>>(in.shape, kept);
  });
}

// ---- Softmax and LogSoftmax -----------------------------------------------------------

/// Normalizes `outer` x `inner` independent rows of `length` elements, `inner` apart.
template <bool kLog>
class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(int64_t outer, int64_t length, int64_t inner) : outer_(outer), length_(length), inner_(inner) {}

  void run(const KernelArgs& args) const override {
    const float* in = static_cast<const float*>(args.inputs[0]);
    float* out = static_cast<float*>(args.outputs[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) {
        const int64_t base = o * length_ * inner_ + i;
        row(in + base, out + base);
      }
    }
  }

 private:
  void row(const float* in, float* out) const {
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t k = 0; k < length_; ++k) max = std::max(max, in[k * inner_]);
    double sum = 0;
    for (int64_t k = 0; k < length_; ++k) {
      const float e = std::exp(in[k * inner_] - max);
      sum += e;
      if (!kLog) out[k * inner_] = e;
    }
    if (kLog) {
      const float log_sum = static_cast<float>(std::log(sum));
      for (int64_t k = 0; k < length_; ++k) out[k * inner_] = in[k * inner_] - max - log_sum;
    } else {
      const float scale = static_cast<float>(1.0 / sum);
      for (int64_t k = 0; k < length_; ++k) out[k * inner_] *= scale;
    }
  }

  int64_t outer_, length_, inner_;
};

/// Hardmax: 1 at the first maximum of each row, 0 elsewhere.
template <typename T>
class HardmaxKernel final : public Kernel {
 public:
  HardmaxKernel(int64_t outer, int64_t length, int64_t inner) : outer_(outer), length_(length), inner_(inner) {}

  void run(const KernelArgs& args) const override {
    const T* in = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) {
        const int64_t base = o * length_ * inner_ + i;
        int64_t best = 0;
        for (int64_t k = 1; k < length_; ++k) {
          if (load(in[base + k * inner_]) > load(in[base + best * inner_])) best = k;
        }
        for (int64_t k = 0; k < length_; ++k) out[base + k * inner_] = store<T>(k == best ? 1.0f : 0.0f);
      }
    }
  }

 private:
  int64_t outer_, length_, inner_;
};

/// Before opset 13 the input is seen as 2-D at `axis` (default 1) and each row of
/// dims[axis:] is normalized; from 13 only dims[axis] (default -1) is.
template <bool kLog>
Prepared prepare_softmax(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  if (std::string why = check_dtype("input", 0, &in, DType::kFloat32); !why.empty()) {
    return prepare_error(node, why);
  }
  const bool single_axis = node.opset() >= 13;
  const int64_t axis = node.attr_int("axis", single_axis ? -1 : 1);
  const int rank = in.shape.rank;
  int a = 0;
  if (!normalize_axis(axis, rank, &a)) {
    return prepare_error(node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  if (std::string why = check_output(node, 0, in.shape, DType::kFloat32); !why.empty()) {
    return prepare_error(node, why);
  }
  const int64_t outer = in.shape.product(0, a);
  if (single_axis) return prepared<SoftmaxKernel<kLog>>(outer, in.shape[a], in.shape.product(a + 1, rank));
  return prepared<SoftmaxKernel<kLog>>(outer, in.shape.product(a, rank), int64_t{1});
}

Prepared prepare_hardmax(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  const bool single_axis = node.opset() >= 13;
  const int64_t axis = node.attr_int("axis", single_axis ? -1 : 1);
  const int rank = in.shape.rank;
  int a = 0;
  if (!normalize_axis(axis, rank, &a)) {
    return prepare_error(node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  if (std::string why = check_output(node, 0, in.shape, in.dtype); !why.empty()) return prepare_error(node, why);
  const int64_t outer = in.shape.product(0, a);
  const int64_t length = single_axis ? in.shape[a] : in.shape.product(a, rank);
  const int64_t inner = single_axis ? in.shape.product(a + 1, rank) : 1;
  return dispatch<kFloatTypes>(node, in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<HardmaxKernel<T>>(outer, length, inner);
  });
}

}  // namespace

void add_reduction_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"ReduceSum", prepare_reduce<Reduce::kSum>});
  table.push_back({"ReduceMean", prepare_reduce<Reduce::kMean>});
  table.push_back({"ReduceMax", prepare_reduce<Reduce::kMax>});
  table.push_back({"ReduceMin", prepare_reduce<Reduce::kMin>});
  table.push_back({"ReduceProd", prepare_reduce<Reduce::kProd>});
  table.push_back({"ReduceL1", prepare_reduce<Reduce::kL1>});
  table.push_back({"ReduceL2", prepare_reduce<Reduce::kL2>});
  table.push_back({"ReduceLogSum", prepare_reduce<Reduce::kLogSum>});
  table.push_back({"ReduceLogSumExp", prepare_reduce<Reduce::kLogSumExp>});
  table.push_back({"ReduceSumSquare", prepare_reduce<Reduce::kSumSquare>});
  table.push_back({"Softmax", prepare_softmax<false>});
  table.push_back({"LogSoftmax", prepare_softmax<true>});
  table.push_back({"Hardmax", prepare_hardmax});
}

}  // namespace plugrt::portable
