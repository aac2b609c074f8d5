// SPDX-License-Identifier: Apache-2.0
// Pad and flip graphs: a stage head, then a Pad in one of ONNX's modes (constant,
// reflect, edge) with up to 3 elements on either side of each axis, or (one in three) a
// Slice walking one axis backwards, then a chain of 0 to 2 ops as in the float graphs.
// Reflect pads stay shorter than their axis (ONNX Runtime refuses longer ones); now and
// then one is exactly one shorter, the longest mirror.
#include "random_graph_internal.h"

namespace plugrt::differential::internal {

RandomGraph Generator::run_padded() {
  const Value first = head(nullptr);
  Value x = random_.chance(1.0 / 3) ? backward_slice(first) : pad(first);
  const int64_t length = random_.between(0, 2);
  for (int64_t i = 0; i < length; ++i) x = chain_op(x);
  model_.output(x);
  graph_.onnx = model_.serialise();
  return graph_;
}

Value Generator::pad(const Value& x) {
  const Shape& xs = x.shape;
  const std::vector<std::string> modes = {"constant", "reflect", "edge"};
  const std::string mode = random_.pick(modes);
  std::vector<int64_t> pads(2 * xs.size(), 0);
  Shape ys = xs;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (d == 0 && random_.chance(0.8)) continue;  // the batch axis now and then
    for (size_t side : {d, d + xs.size()}) {
      int64_t length = random_.chance(0.3) ? 0 : random_.between(1, 3);
      if (mode == "reflect") length = random_.chance(0.1) ? xs[d] - 1 : std::min(length, xs[d] - 1);
      pads[side] = std::max<int64_t>(length, 0);
      ys[d] += pads[side];
    }
  }
  if (element_count(ys) > kMaxElements) return node("Identity", {x}, xs);
  std::vector<Value> inputs = {x, model_.ints(pads)};
  if (mode == "constant" && random_.chance(0.5)) inputs.push_back(model_.constant({}, {random_.real(-2.0f, 2.0f)}));
  return node("Pad", inputs, ys, {Attr::s("mode", mode)});
}

Value Generator::backward_slice(const Value& x) {
  const Shape& xs = x.shape;
  const int64_t axis = random_.between(0, static_cast<int64_t>(xs.size()) - 1);
  const int64_t dim = xs[static_cast<size_t>(axis)];
  // From a start (sometimes past the end, clamped) back to an end (sometimes before the
  // start of the axis, clamped), by 1 to 3.
  const int64_t step = -random_.between(1, 3);
  const int64_t start = random_.chance(0.3) ? dim + random_.between(0, 5) : random_.between(0, dim - 1);
  const int64_t end = random_.chance(0.5) ? -dim - random_.between(1, 5) : random_.between(-1, dim - 1) - dim;
  const int64_t from = std::min(start, dim - 1), to = std::max<int64_t>(end + dim, -1);
  Shape ys = xs;
  ys[static_cast<size_t>(axis)] = from > to ? (from - to - step - 1) / -step : 0;
  if (ys[static_cast<size_t>(axis)] == 0) return node("Identity", {x}, xs);
  return node("Slice", {x, model_.ints({start}), model_.ints({end}), model_.ints({axis}), model_.ints({step})}, ys);
}

}  // namespace plugrt::differential::internal
