// SPDX-License-Identifier: Apache-2.0
// MaxPool on float32, double, float16, int8 and uint8 (opset 12), with the optional
// Indices output: for each maximum, the flat index of its element in X, its spatial
// part row-major (storage_order 0) or column-major (storage_order 1). The first of equal
// maxima in row-major window order wins, as in ONNX Runtime.
#include <limits>

#include "max_pool.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

template <typename T>
class MaxPoolKernel final : public Kernel {
 public:
  MaxPoolKernel(const SpatialGeometry& g, int64_t planes, bool column_major, bool indices)
      : g_(g), planes_(planes), column_major_(column_major), indices_(indices) {}

  void run(const KernelArgs& args) const override {
    const T* x = static_cast<const T*>(args.inputs[0]);
    T* y = static_cast<T*>(args.outputs[0]);
    auto* indices = indices_ ? static_cast<int64_t*>(args.outputs[1]) : nullptr;
    for (int64_t plane = 0; plane < planes_; ++plane) {
      for (int64_t oz = 0; oz < g_.out[0]; ++oz) {
        for (int64_t oy = 0; oy < g_.out[1]; ++oy) {
          for (int64_t ox = 0; ox < g_.out[2]; ++ox) {
            int64_t at = 0;
            *y++ = window(x + plane * g_.in_size(), {oz, oy, ox}, &at);
            if (indices != nullptr) *indices++ = plane * g_.in_size() + storage_index(at);
          }
        }
      }
    }
  }

 private:
  /// The maximum of the window at output position `o`, and in `at` the row-major
  /// spatial offset of its element.
  T window(const T* in, const SpatialInts& o, int64_t* at) const {
    SpatialInts start{}, first{}, last{};
    for (size_t s = 0; s < kMaxSpatial; ++s) {
      start[s] = o[s] * g_.stride[s] - g_.pad_begin[s];
      valid_range(start[s], g_.dilation[s], g_.in[s], g_.kernel[s], &first[s], &last[s]);
    }
    Compute<T> max = std::numeric_limits<Compute<T>>::lowest();
    bool found = false;
    for (int64_t kz = first[0]; kz < last[0]; ++kz) {
      for (int64_t ky = first[1]; ky < last[1]; ++ky) {
        for (int64_t kx = first[2]; kx < last[2]; ++kx) {
          const int64_t offset =
              ((start[0] + kz * g_.dilation[0]) * g_.in[1] + start[1] + ky * g_.dilation[1]) * g_.in[2] + start[2] +
              kx * g_.dilation[2];
          const Compute<T> value = load(in[offset]);
          if (!found || value > max) {
            max = value;
            *at = offset;
            found = true;
          }
        }
      }
    }
    return store<T>(max);
  }

  /// A row-major spatial offset as storage_order says.
  int64_t storage_index(int64_t offset) const {
    if (!column_major_) return offset;
    const int64_t x = offset % g_.in[2], y = offset / g_.in[2] % g_.in[1], z = offset / (g_.in[2] * g_.in[1]);
    return z + y * g_.in[0] + x * g_.in[0] * g_.in[1];
  }

  SpatialGeometry g_;
  int64_t planes_;
  bool column_major_;
  bool indices_;  // whether the Indices output is there
};

}  // namespace

Prepared prepare_max_pool_general(const NodeContext& node, const SpatialGeometry& g) {
  const TensorInfo& x = *node.input(0);
  const Shape out = spatial_output_shape(x.shape[0], x.shape[1], g);
  if (std::string why = check_output(node, 0, out, x.dtype); !why.empty()) return prepare_error(node, why);
  if (node.output(1) != nullptr) {
    if (std::string why = check_output(node, 1, out, DType::kInt64); !why.empty()) return prepare_error(node, why);
  }
  const int64_t storage_order = node.attr_int("storage_order", 0);
  if (storage_order != 0 && storage_order != 1) return prepare_error(node, "storage_order must be 0 or 1");
  return dispatch<kFloat32Only | kDoubleType | kHalfTypes | kSignedInts | kUnsignedInts>(node, x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<MaxPoolKernel<T>>(g, x.shape[0] * x.shape[1], storage_order == 1, node.output(1) != nullptr);
  });
}

}  // namespace plugrt::portable
