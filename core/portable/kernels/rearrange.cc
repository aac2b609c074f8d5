// SPDX-License-Identifier: Apache-2.0
// Kernels that move elements to computed places: Tile, DepthToSpace, SpaceToDepth,
// Trilu, ReverseSequence, EyeLike, and CumSum (a running sum along an axis). All but
// CumSum take any dtype.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

// ---- Tile --------------------------------------------------------------------------------

template <typename T>
class TileKernel final : public Kernel {
 public:
  TileKernel(const Shape& in, const Shape& out) : in_(in), out_(out), in_strides_(contiguous_strides(in)) {}

  void run(const KernelArgs& args) const override {
    const T* in = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    const int64_t count = out_.num_elements();
    std::array<int64_t, kMaxRank> coord{};
    for (int64_t i = 0; i < count; ++i) {
      int64_t offset = 0;
      for (int d = 0; d < out_.rank; ++d) {
        const auto u = static_cast<size_t>(d);
        offset += (coord[u] % in_[d]) * in_strides_[u];
      }
      out[i] = in[offset];
      for (int d = out_.rank - 1; d >= 0; --d) {
        const auto u = static_cast<size_t>(d);
        if (++coord[u] < out_[d]) break;
        coord[u] = 0;
      }
    }
  }

 private:
  Shape in_, out_;
  std::array<int64_t, kMaxRank> in_strides_;
};

/// Tile(input, repeats): repeats a constant 1-D int64 of one non-negative count per axis.
Prepared prepare_tile(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  std::optional<std::vector<int64_t>> repeats = node.constant_ints(1);
  if (!repeats) return prepare_error(node, "the repeats (input 1) must be a constant int64 tensor");
  if (repeats->size() != static_cast<size_t>(in.shape.rank)) {
    return prepare_error(node, "the repeats hold " + std::to_string(repeats->size()) + " counts for an input of rank " +
                                   std::to_string(in.shape.rank));
  }
  Shape out;
  for (int d = 0; d < in.shape.rank; ++d) {
    const int64_t r = (*repeats)[static_cast<size_t>(d)];
    if (r < 0) return prepare_error(node, "repeat count " + std::to_string(r) + " is negative");
    if (r > 0 && in.shape[d] > std::numeric_limits<int64_t>::max() / r) {
      return prepare_error(node, "repeat count " + std::to_string(r) + " overflows axis " + std::to_string(d));
    }
    out.push_back(in.shape[d] * r);
  }
  if (std::string why = check_output(node, 0, out, in.dtype); !why.empty()) return prepare_error(node, why);
  return dispatch_bits(in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<TileKernel<T>>(in.shape, out);
  });
}

// ---- DepthToSpace, SpaceToDepth -----------------------------------------------------------

/// NCHW: out[n][c][h * b + i][w * b + j] = in[n][channel(c, i, j)][h][w] (DepthToSpace),
/// or the reverse move (SpaceToDepth, kToSpace false).
template <typename T, bool kToSpace>
class BlockKernel final : public Kernel {
 public:
  /// `space`: the NCHW shape of the side with the spatial blocks; `crd`: DepthToSpace's
  /// CRD mode.
  BlockKernel(const Shape& space, int64_t block, bool crd) : space_(space), block_(block), crd_(crd) {}

  void run(const KernelArgs& args) const override {
    const T* in = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    const int64_t n_count = space_[0], channels = space_[1], height = space_[2], width = space_[3];
    const int64_t b = block_, h_in = height / b, w_in = width / b, depth = channels * b * b;
    for (int64_t n = 0; n < n_count; ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        for (int64_t y = 0; y < height; ++y) {
          for (int64_t x = 0; x < width; ++x) {
            const int64_t i = y % b, j = x % b;
            const int64_t d = crd_ ? (c * b + i) * b + j : (i * b + j) * channels + c;
            const int64_t space_at = ((n * channels + c) * height + y) * width + x;
            const int64_t depth_at = ((n * depth + d) * h_in + y / b) * w_in + x / b;
            if (kToSpace)
              out[space_at] = in[depth_at];
            else
              out[depth_at] = in[space_at];
          }
        }
      }
    }
  }

 private:
  Shape space_;
  int64_t block_;
  bool crd_;
};

template <bool kToSpace>
Prepared prepare_block(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  if (in.shape.rank != 4) return prepare_error(node, "the input must be 4-D (NCHW), not " + to_string(in.shape));
  const int64_t b = node.attr_int("blocksize", 0);
  // Bounded so that b * b and a dimension times b cannot overflow.
  if (b < 1 || b > 65536) return prepare_error(node, "blocksize must be in [1, 65536], not " + std::to_string(b));
  const std::string mode = kToSpace && node.opset() >= 11 ? node.attr_string("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD") return prepare_error(node, "mode must be DCR or CRD, not " + mode);
  Shape out = in.shape, space = in.shape;
  if (kToSpace) {
    if (in.shape[1] % (b * b) != 0) {
      return prepare_error(node,
                           "the channels (" + std::to_string(in.shape[1]) + ") are not a multiple of blocksize^2");
    }
    out = Shape{in.shape[0], in.shape[1] / (b * b), in.shape[2] * b, in.shape[3] * b};
    space = out;
  } else {
    if (in.shape[2] % b != 0 || in.shape[3] % b != 0) {
      return prepare_error(node, "the height and width of " + to_string(in.shape) + " are not multiples of blocksize");
    }
    out = Shape{in.shape[0], in.shape[1] * b * b, in.shape[2] / b, in.shape[3] / b};
  }
  if (std::string why = check_output(node, 0, out, in.dtype); !why.empty()) return prepare_error(node, why);
  return dispatch_bits(in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<BlockKernel<T, kToSpace>>(space, b, mode == "CRD");
  });
}

// ---- Trilu ---------------------------------------------------------------------------------

/// Zeroes what lies below (upper) or above (lower) diagonal k of each matrix. k is
/// prepared, or read from input 1 on each run when it is given there.
template <typename T>
class TriluKernel final : public Kernel {
 public:
  TriluKernel(int64_t matrices, int64_t rows, int64_t cols, int64_t k, bool k_from_input, bool upper)
      : matrices_(matrices), rows_(rows), cols_(cols), k_(k), k_from_input_(k_from_input), upper_(upper) {}

  void run(const KernelArgs& args) const override {
    const T* in = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    const int64_t k = k_from_input_ ? clamp_k(*static_cast<const int64_t*>(args.inputs[1]), rows_, cols_) : k_;
    for (int64_t m = 0; m < matrices_; ++m) {
      for (int64_t i = 0; i < rows_; ++i) {
        for (int64_t j = 0; j < cols_; ++j) {
          const int64_t at = (m * rows_ + i) * cols_ + j;
          const bool keep = upper_ ? j - i >= k : j - i <= k;
          out[at] = keep ? in[at] : T{0};
        }
      }
    }
  }

  /// k beyond the matrix is the same as k at its edge, and stays far from overflow.
  static int64_t clamp_k(int64_t k, int64_t rows, int64_t cols) {
    const int64_t bound = rows + cols + 1;
    return std::max(-bound, std::min(bound, k));
  }

 private:
  int64_t matrices_, rows_, cols_, k_;
  bool k_from_input_, upper_;
};

/// Trilu(input, k): k an optional int64 scalar (the diagonal offset), constant or given
/// at run time.
Prepared prepare_trilu(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  if (in.shape.rank < 2) return prepare_error(node, "the input must have rank 2 or more");
  int64_t k = 0;
  bool k_from_input = false;
  if (const TensorInfo* given = node.input(1); given != nullptr) {
    if (given->constant_data != nullptr) {
      std::optional<std::vector<int64_t>> value = node.constant_ints(1);
      if (!value || value->size() != 1) return prepare_error(node, "k (input 1) must be an int64 scalar");
      k = (*value)[0];
    } else if (given->dtype == DType::kInt64 && given->num_elements() == 1) {
      k_from_input = true;
    } else {
      return prepare_error(node, "k (input 1) must be an int64 scalar");
    }
  }
  const int64_t upper = node.attr_int("upper", 1);
  if (std::string why = check_output(node, 0, in.shape, in.dtype); !why.empty()) return prepare_error(node, why);
  const int rank = in.shape.rank;
  const int64_t rows = in.shape[rank - 2];
  const int64_t cols = in.shape[rank - 1];
  return dispatch_bits(in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<TriluKernel<T>>(in.shape.product(0, rank - 2), rows, cols, TriluKernel<T>::clamp_k(k, rows, cols),
                                    k_from_input, upper != 0);
  });
}

// ---- CumSum ------------------------------------------------------------------------------

/// The running sum along one axis. The axis is prepared, or read from input 1 (an int32
/// or int64 scalar) on each run when it is given there; an axis out of range then fails
/// the run.
template <typename T>
class CumSumKernel final : public Kernel {
 public:
  CumSumKernel(const Shape& shape, int axis, DType axis_from_input, bool exclusive, bool reverse)
      : shape_(shape), axis_(axis), axis_from_input_(axis_from_input), exclusive_(exclusive), reverse_(reverse) {}

  void run(const KernelArgs& args) const override {
    int axis = 0;
    if (resolve_axis(args, &axis)) sum(args, axis);
  }
  bool may_fail() const override { return axis_from_input_ != DType::kUndefined; }
  bool run_checked(const KernelArgs& args, char* error, size_t error_capacity) const override {
    int axis = 0;
    if (!resolve_axis(args, &axis)) {
      std::snprintf(error, error_capacity, "CumSum: axis %lld (input 1) is out of range for rank %d",
                    static_cast<long long>(given_axis(args)), shape_.rank);
      return false;
    }
    sum(args, axis);
    return true;
  }

 private:
  int64_t given_axis(const KernelArgs& args) const {
    return axis_from_input_ == DType::kInt64 ? *static_cast<const int64_t*>(args.inputs[1])
                                             : *static_cast<const int32_t*>(args.inputs[1]);
  }
  bool resolve_axis(const KernelArgs& args, int* axis) const {
    *axis = axis_;
    return axis_from_input_ == DType::kUndefined || normalize_axis(given_axis(args), shape_.rank, axis);
  }

  void sum(const KernelArgs& args, int axis) const {
    const T* in = static_cast<const T*>(args.inputs[0]);
    T* out = static_cast<T*>(args.outputs[0]);
    const int64_t outer = shape_.product(0, axis);
    const int64_t length = shape_[axis];
    const int64_t inner = shape_.product(axis + 1, shape_.rank);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * length * inner + i;
        Compute<T> total{0};
        for (int64_t step = 0; step < length; ++step) {
          const int64_t k = reverse_ ? length - 1 - step : step;
          const int64_t at = base + k * inner;
          const Compute<T> x = load(in[at]);
          if (!exclusive_) total = add(total, x);
          out[at] = store<T>(total);
          if (exclusive_) total = add(total, x);
        }
      }
    }
  }

  static Compute<T> add(Compute<T> a, Compute<T> b) {  // integers wrap around
    if constexpr (std::is_integral_v<Compute<T>>) {
      return static_cast<Compute<T>>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    } else {
      return a + b;
    }
  }

  Shape shape_;
  int axis_;
  DType axis_from_input_;  // kUndefined when the axis is prepared
  bool exclusive_, reverse_;
};

/// CumSum(x, axis): the axis an int32 or int64 scalar, constant or given at run time.
Prepared prepare_cum_sum(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  const TensorInfo& given = *node.input(1);
  if ((given.dtype != DType::kInt64 && given.dtype != DType::kInt32) || given.num_elements() != 1) {
    return prepare_error(node, "the axis (input 1) must be an int32 or int64 scalar");
  }
  if (in.shape.rank == 0) return prepare_error(node, "the input must have rank 1 or more");
  int a = 0;
  DType axis_from_input = DType::kUndefined;
  if (given.constant_data == nullptr) {
    axis_from_input = given.dtype;
  } else {
    const int64_t axis = (*node.constant_ints(1))[0];
    if (!normalize_axis(axis, in.shape.rank, &a)) {
      return prepare_error(
          node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(in.shape.rank));
    }
  }
  if (std::string why = check_output(node, 0, in.shape, in.dtype); !why.empty()) return prepare_error(node, why);
  const bool exclusive = node.attr_int("exclusive", 0) != 0;
  const bool reverse = node.attr_int("reverse", 0) != 0;
  return dispatch<kFloatTypes | kIntTypes>(node, in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<CumSumKernel<T>>(in.shape, a, axis_from_input, exclusive, reverse);
  });
}

// ---- EyeLike, ReverseSequence ---------------------------------------------------------------

template <typename T>
class EyeLikeKernel final : public Kernel {
 public:
  EyeLikeKernel(int64_t rows, int64_t cols, int64_t k) : rows_(rows), cols_(cols), k_(k) {}
  void run(const KernelArgs& args) const override {
    T* out = static_cast<T*>(args.outputs[0]);
    for (int64_t i = 0; i < rows_; ++i) {
      for (int64_t j = 0; j < cols_; ++j) out[i * cols_ + j] = store<T>(j - i == k_ ? 1 : 0);
    }
  }

 private:
  int64_t rows_, cols_, k_;
};

/// EyeLike(input): a 2-D tensor of the input's shape with ones on diagonal k, of the
/// dtype attribute (default: the input's).
Prepared prepare_eye_like(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  if (in.shape.rank != 2) return prepare_error(node, "the input must be 2-D, not " + to_string(in.shape));
  const DType dtype = node.has_attribute("dtype") ? static_cast<DType>(node.attr_int("dtype", 0)) : in.dtype;
  if (std::string why = check_output(node, 0, in.shape, dtype); !why.empty()) return prepare_error(node, why);
  const int64_t bound = in.shape[0] + in.shape[1];
  const int64_t k = std::max(-bound, std::min(bound, node.attr_int("k", 0)));
  return dispatch<kAllTypes>(node, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<EyeLikeKernel<T>>(in.shape[0], in.shape[1], k);
  });
}

/// Reverses the first sequence_lens[b] steps of each batch entry b along the time axis;
/// a length beyond the time axis counts as all of it, a negative one as none.
template <typename T>
class ReverseSequenceKernel final : public Kernel {
 public:
  ReverseSequenceKernel(const Shape& shape, int time_axis, int batch_axis)
      : shape_(shape), strides_(contiguous_strides(shape)), time_axis_(time_axis), batch_axis_(batch_axis) {}

  void run(const KernelArgs& args) const override {
    const T* in = static_cast<const T*>(args.inputs[0]);
    const int64_t* lengths = static_cast<const int64_t*>(args.inputs[1]);
    T* out = static_cast<T*>(args.outputs[0]);
    const int64_t time = shape_[time_axis_];
    const int64_t time_stride = strides_[static_cast<size_t>(time_axis_)];
    const int64_t batch_stride = strides_[static_cast<size_t>(batch_axis_)];
    const int64_t count = shape_.num_elements();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t t = (i / time_stride) % time;
      const int64_t b = (i / batch_stride) % shape_[batch_axis_];
      const int64_t length = std::max<int64_t>(0, std::min(lengths[b], time));
      out[i] = t < length ? in[i + (length - 1 - 2 * t) * time_stride] : in[i];
    }
  }

 private:
  Shape shape_;
  std::array<int64_t, kMaxRank> strides_;
  int time_axis_, batch_axis_;
};

Prepared prepare_reverse_sequence(const NodeContext& node) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  const TensorInfo& lengths = *node.input(1);
  const int64_t time_axis = node.attr_int("time_axis", 0);
  const int64_t batch_axis = node.attr_int("batch_axis", 1);
  if (in.shape.rank < 2) return prepare_error(node, "the input must have rank 2 or more");
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0))) {
    return prepare_error(node, "time_axis and batch_axis must be 0 and 1, or 1 and 0");
  }
  const int t = static_cast<int>(time_axis), b = static_cast<int>(batch_axis);
  if (lengths.dtype != DType::kInt64 || lengths.shape != Shape{in.shape[b]}) {
    return prepare_error(node, "sequence_lens (input 1) must be int64 of shape [" + std::to_string(in.shape[b]) + "]");
  }
  if (std::string why = check_output(node, 0, in.shape, in.dtype); !why.empty()) return prepare_error(node, why);
  return dispatch_bits(in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<ReverseSequenceKernel<T>>(in.shape, t, b);
  });
}

// ---- Range ------------------------------------------------------------------------------

template <typename T>
class RangeKernel final : public Kernel {
 public:
  RangeKernel(T start, T delta, int64_t count) : start_(start), delta_(delta), count_(count) {}
  void run(const KernelArgs& args) const override {
    T* out = static_cast<T*>(args.outputs[0]);
    for (int64_t k = 0; k < count_; ++k) {
      if constexpr (std::is_integral_v<T>) {  // wrapping, never undefined
        using U = std::make_unsigned_t<T>;
        out[k] = static_cast<T>(static_cast<U>(start_) + static_cast<U>(k) * static_cast<U>(delta_));
      } else {
        out[k] = start_ + static_cast<T>(k) * delta_;
      }
    }
  }

 private:
  T start_, delta_;
  int64_t count_;
};

/// Range(start, limit, delta): scalars of one dtype; start, start + delta, ... while
/// below limit (above it for a negative delta). The length depends on the values, which
/// come from constants or at run time (checked against the compiled output length).
Prepared prepare_range(const NodeContext& node) {
  if (std::string why = check_arity(node, 3, 3, 1, 1); !why.empty()) return prepare_error(node, why);
  const DType dtype = node.input(0)->dtype;
  for (size_t i = 0; i < 3; ++i) {
    if (node.input(i)->dtype != dtype || node.input(i)->num_elements() != 1) {
      return prepare_error(node, "start, limit and delta must be scalars of one dtype");
    }
  }
  const void* values[3] = {node.constant_data(0), node.constant_data(1), node.constant_data(2)};
  if (values[0] == nullptr || values[1] == nullptr || values[2] == nullptr) {
    return prepare_error(node, "start, limit and delta must be constants or given at run time");
  }
  return dispatch<kFloat32Only | kDoubleType | kSignedInts>(node, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T start, limit, delta;
    std::memcpy(&start, values[0], sizeof(T));
    std::memcpy(&limit, values[1], sizeof(T));
    std::memcpy(&delta, values[2], sizeof(T));
    const double span = static_cast<double>(limit) - static_cast<double>(start);
    const double steps = std::ceil(span / static_cast<double>(delta));
    if (delta == T(0) || !(steps < 1e15)) {
      return prepare_error(node, "delta is 0, or the range has too many elements");
    }
    const auto count = static_cast<int64_t>(std::max(steps, 0.0));
    if (std::string why = check_output(node, 0, Shape{count}, dtype); !why.empty()) return prepare_error(node, why);
    return prepared<RangeKernel<T>>(start, delta, count);
  });
}

}  // namespace

void add_rearrange_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"Range", prepare_range});
  table.push_back({"Tile", prepare_tile});
  table.push_back({"DepthToSpace", prepare_block<true>});
  table.push_back({"SpaceToDepth", prepare_block<false>});
  table.push_back({"Trilu", prepare_trilu});
  table.push_back({"CumSum", prepare_cum_sum});
  table.push_back({"EyeLike", prepare_eye_like});
  table.push_back({"ReverseSequence", prepare_reverse_sequence});
}

}  // namespace plugrt::portable
