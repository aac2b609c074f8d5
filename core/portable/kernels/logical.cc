// SPDX-License-Identifier: Apache-2.0
// Logical and bitwise kernels: Not, And, Or, Xor on bool tensors, BitShift on unsigned
// integers, with broadcasting (broadcast.h).
#include <string>

#include "broadcast.h"
#include "kernel_families.h"

namespace plugrt::portable {

namespace {

Prepared prepare_not(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, 1, 1, 1); !why.empty()) return prepare_error(node, why);
  const TensorInfo& in = *node.input(0);
  if (std::string why = check_dtype("input", 0, &in, DType::kBool); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_output(node, 0, in.shape, DType::kBool); !why.empty()) return prepare_error(node, why);
  return make_broadcast<uint8_t, uint8_t>({in.shape}, in.shape, [](uint8_t x) { return x == 0 ? 1 : 0; });
}

/// Two inputs of one dtype in kSet that broadcast, an output of `out_dtype` (or theirs).
template <unsigned kSet, typename Op>
Prepared prepare_broadcast_binary(const NodeContext& node, Op op) {
  if (std::string why = check_arity(node, 2, 2, 1, 1); !why.empty()) return prepare_error(node, why);
  if (std::string why = check_same_dtypes(node, 0, 2); !why.empty()) return prepare_error(node, why);
  Shape out;
  if (std::string why = broadcast_inputs(node, 2, &out); !why.empty()) return prepare_error(node, why);
  const DType dtype = node.input(0)->dtype;
  if (std::string why = check_output(node, 0, out, dtype); !why.empty()) return prepare_error(node, why);
  const std::array<Shape, 2> shapes{node.input(0)->shape, node.input(1)->shape};
  return dispatch<kSet>(node, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return make_broadcast<T, T, T>(shapes, out, op);
  });
}

Prepared prepare_and(const NodeContext& node) {
  return prepare_broadcast_binary<kBoolType>(node, [](uint8_t a, uint8_t b) { return (a != 0 && b != 0) ? 1 : 0; });
}
Prepared prepare_or(const NodeContext& node) {
  return prepare_broadcast_binary<kBoolType>(node, [](uint8_t a, uint8_t b) { return (a != 0 || b != 0) ? 1 : 0; });
}
Prepared prepare_xor(const NodeContext& node) {
  return prepare_broadcast_binary<kBoolType>(node, [](uint8_t a, uint8_t b) { return (a != 0) != (b != 0) ? 1 : 0; });
}

/// BitShift: a shift by the element's width or more gives 0, never undefined behaviour.
Prepared prepare_bit_shift(const NodeContext& node) {
  const std::string direction = node.attr_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    return prepare_error(node, "direction must be \"LEFT\" or \"RIGHT\", not \"" + direction + "\"");
  }
  const bool left = direction == "LEFT";
  return prepare_broadcast_binary<kUnsignedInts>(node, [left](auto x, auto shift) {
    using T = decltype(x);
    if (shift >= sizeof(T) * 8) return T{0};
    return static_cast<T>(left ? x << shift : x >> shift);
  });
}

}  // namespace

void add_logical_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"Not", prepare_not});
  table.push_back({"And", prepare_and});
  table.push_back({"Or", prepare_or});
  table.push_back({"Xor", prepare_xor});
  table.push_back({"BitShift", prepare_bit_shift});
}

}  // namespace plugrt::portable
