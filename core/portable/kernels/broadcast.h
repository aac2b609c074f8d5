// SPDX-License-Identifier: Apache-2.0
// The elementwise kernels' shared loop: out[i] = op(in0[...], in1[...], ...) with NumPy
// broadcasting. Elements are loaded into their compute type (typed.h) before `op` and
// stored back after it, so one op serves float16 and bfloat16 as well.
#ifndef PLUGRT_PORTABLE_KERNELS_BROADCAST_H_
#define PLUGRT_PORTABLE_KERNELS_BROADCAST_H_

#include <array>
#include <string>
#include <tuple>
#include <utility>

#include "typed.h"

namespace plugrt::portable {

template <typename Out, typename Op, typename... In>
class BroadcastKernel final : public Kernel {
  static constexpr size_t kInputs = sizeof...(In);

 public:
  BroadcastKernel(const std::array<Shape, kInputs>& inputs, const Shape& out, Op op) : out_(out), op_(op) {
    for (size_t i = 0; i < kInputs; ++i) {
      strides_[i] = broadcast_strides(inputs[i], out);
      same_shapes_ = same_shapes_ && inputs[i] == out;
    }
  }

  void run(const KernelArgs& args) const override { run_with(args, std::index_sequence_for<In...>{}); }

 private:
  template <size_t... I>
  void run_with(const KernelArgs& args, std::index_sequence<I...>) const {
    const std::tuple<const In*...> in{static_cast<const In*>(args.inputs[I])...};
    Out* out = static_cast<Out*>(args.outputs[0]);
    const int64_t count = out_.num_elements();
    if (same_shapes_) {
      for (int64_t i = 0; i < count; ++i) out[i] = store<Out>(op_(load(std::get<I>(in)[i])...));
      return;
    }
    BroadcastIterator it(out_, static_cast<int>(kInputs), strides_.data());
    for (int64_t i = 0; i < count; ++i, it.next()) {
      out[i] = store<Out>(op_(load(std::get<I>(in)[it.offset(static_cast<int>(I))])...));
    }
  }

  Shape out_;
  std::array<std::array<int64_t, kMaxRank>, kInputs> strides_{};
  Op op_;
  bool same_shapes_ = true;
};

/// make_broadcast<Out, In...>(input shapes, output shape, op).
template <typename Out, typename... In, typename Op>
Prepared make_broadcast(const std::array<Shape, sizeof...(In)>& inputs, const Shape& out, Op op) {
  return prepared<BroadcastKernel<Out, Op, In...>>(inputs, out, op);
}

/// The broadcast shape of the first `count` inputs; the reason when they do not broadcast.
std::string broadcast_inputs(const NodeContext& node, size_t count, Shape* out);

/// Checks that inputs [first, first + count) all have input `first`'s dtype.
std::string check_same_dtypes(const NodeContext& node, size_t first, size_t count);

/// One input and one output of the same shape and dtype (in kSet), out = op(x) computed
/// in the input's compute type.
template <unsigned kSet, typename Op>
Prepared prepare_same_type_unary(const NodeContext& node, Op op, size_t max_inputs = 1) {
  if (std::string why = check_arity(node, 1, max_inputs, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  if (std::string why = check_output(node, 0, in.shape, in.dtype); !why.empty()) return prepare_error(node, why);
  return dispatch<kSet>(node, in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return make_broadcast<T, T>({in.shape}, in.shape, op);
  });
}

}  // namespace plugrt::portable

#endif  // PLUGRT_PORTABLE_KERNELS_BROADCAST_H_
