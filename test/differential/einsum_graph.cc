// SPDX-License-Identifier: Apache-2.0
// Einsum graphs: one Einsum of two values, then a chain of 0 to 3 ops as in the float
// graphs. The equation is a batched matrix product drawn at random: batch, row (M),
// column (N) and summed (K) indices of random letters, up to two of each, every operand
// and the result in a random order; sometimes an ellipsis whose dims broadcast (a 1
// against any size), sometimes an implicit output; and about
// one graph in seven a form a fast backend must decline (an index twice in one operand, an
// index summed within one operand). Two summed indices in random orders are often
// apart, which oneDNN declines too.
#include <map>

#include "random_graph_internal.h"

namespace plugrt::differential::internal {

RandomGraph Generator::run_einsum() {
  Value x = einsum();
  const int64_t length = random_.between(0, 3);
  for (int64_t i = 0; i < length; ++i) {
    x = chain_op(x);
    if (random_.chance(0.1)) model_.output(x);  // a second reader of a fused value
  }
  model_.output(x);
  graph_.onnx = model_.serialise();
  return graph_;
}

Value Generator::einsum() {
  // ONNX 1.12's shape inference counts an implicit output's letters in an array of 26
  // (an upper-case letter writes outside it), so such an equation takes lower case only.
  const bool implicit_output = random_.chance(0.1);
  std::string pool = "abcdefghijklmnopqrstuvwxyz";
  if (!implicit_output) pool += "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  shuffle(&pool);
  size_t next = 0;
  auto letters = [&](int64_t count) {
    const std::string taken = pool.substr(next, static_cast<size_t>(count));
    next += static_cast<size_t>(count);
    return taken;
  };
  const std::string batch = letters(random_.between(0, 2)), k = letters(random_.between(0, 2));
  std::string m = letters(random_.between(0, 2));
  const std::string n = letters(random_.between(0, 2));
  if (batch.empty() && m.empty() && n.empty()) m = letters(1);  // a result of rank 1 at least
  std::map<char, int64_t> size;
  for (char c : batch + m + n + k) size[c] = random_.chance(0.2) ? 1 : random_.between(2, random_.chance(0.3) ? 13 : 6);
  std::string a = batch + m + k, b = batch + k + n, y = batch + m + n;
  // Forms to decline: an index twice in one operand (a diagonal), or summed within one.
  const int64_t decline = random_.chance(0.15) ? random_.between(1, 2) : 0;
  if (decline == 1 && !a.empty()) {
    a += a[static_cast<size_t>(random_.between(0, static_cast<int64_t>(a.size()) - 1))];
  } else if (decline == 2) {
    const char extra = letters(1)[0];
    size[extra] = random_.between(2, 4);
    (random_.chance(0.5) ? a : b) += extra;
  }
  shuffle(&a);
  shuffle(&b);
  shuffle(&y);
  // An ellipsis ('.' here) for dims that broadcast: a 1 against the other's size. (ONNX's
  // shape inference wants every ellipsis to stand for as many dims.)
  Shape ea, eb, ey;
  const bool ellipsis = a.size() <= 4 && b.size() <= 4 && random_.chance(0.25);
  if (ellipsis) {
    const int64_t rank = random_.between(1, 2);
    for (int64_t d = 0; d < rank; ++d) ey.push_back(random_.between(1, 4));
    ea = ey;
    eb = ey;
    if (random_.chance(0.5)) {
      for (size_t d = 0; d < ey.size(); ++d) {
        const int64_t which = random_.between(0, 2);
        if (which > 0) (which == 1 ? ea : eb)[d] = 1;
      }
    }
    for (std::string* term : {&a, &b, &y}) {
      term->insert(static_cast<size_t>(random_.between(0, static_cast<int64_t>(term->size()))), 1, '.');
    }
  }
  // Sometimes an implicit output: the ellipsis, then the letters used once, sorted.
  const bool implicit = implicit_output && decline == 0 && !(m + n).empty();
  if (implicit) {
    y = m + n;
    std::sort(y.begin(), y.end());
    if (ellipsis) y.insert(y.begin(), '.');
  }
  auto shape_of = [&](const std::string& term, const Shape& dots) {
    Shape shape;
    for (char c : term) {
      if (c == '.') {
        shape.insert(shape.end(), dots.begin(), dots.end());
      } else {
        shape.push_back(size[c]);
      }
    }
    return shape;
  };
  // Within the element budget: the largest index halves until every tensor fits.
  for (;;) {
    const int64_t largest =
        std::max({element_count(shape_of(a, ea)), element_count(shape_of(b, eb)), element_count(shape_of(y, ey))});
    if (largest <= kMaxElements) break;
    auto biggest =
        std::max_element(size.begin(), size.end(), [](const auto& l, const auto& r) { return l.second < r.second; });
    biggest->second = (biggest->second + 1) / 2;
  }
  auto text = [](std::string term) {
    const size_t dot = term.find('.');
    if (dot != std::string::npos) term.replace(dot, 1, "...");
    return term;
  };
  const std::string equation = text(a) + "," + text(b) + (implicit ? "" : "->" + text(y));
  int64_t summed = 1;
  for (const auto& [c, count] : size) {
    if ((a + b).find(c) != std::string::npos && y.find(c) == std::string::npos) summed *= count;
  }
  reduces(summed);
  const Shape as = shape_of(a, ea), bs = shape_of(b, eb);
  const int64_t constant = random_.between(0, 9);  // 0: A, 1 to 3: B, else neither
  const Value va = constant == 0 ? weights(as, summed) : model_.input(as);
  const Value vb = constant >= 1 && constant <= 3 ? weights(bs, summed) : model_.input(bs);
  graph_.description += (graph_.description.empty() ? "" : " ") + equation;
  return node("Einsum", {va, vb}, shape_of(y, ey), {Attr::s("equation", equation)});
}

void Generator::shuffle(std::string* text) {
  for (size_t i = text->size(); i > 1; --i) {
    std::swap((*text)[i - 1], (*text)[static_cast<size_t>(random_.between(0, static_cast<int64_t>(i) - 1))]);
  }
}

}  // namespace plugrt::differential::internal
