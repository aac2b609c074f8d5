// SPDX-License-Identifier: Apache-2.0
// Einsum of two float32 operands that is a batched matrix product, lowered to one oneDNN
// matmul that reads both operands and writes the result in place, through strided
// views (OperandView in schema/onednn_blob.fbs): "bhid,bhjd->bhij", "ij,jk->ki",
// "...id,...jd->...ij", "bhwc,hkc->bhwk".
//
// Every index of the equation is a label. Size-1 axes are left out (a dense layout's
// other strides do not change without them), so a label of size 1 is nowhere. The rest
// are batch labels (in both inputs and the output), M labels (src and the output), N
// labels (weights and the output) and K labels (both inputs, summed). The K labels must
// lie next to each other, in one order, in both inputs, and become one dim; the M labels
// that lie next to each other in both src and the output become M (the N labels: N),
// and any other M or N label becomes a batch dim that the other input broadcasts. Batch
// labels next to each other everywhere become one dim. Anything else (a repeated index,
// an index summed within one input) is declined and stays on portable.
#include <algorithm>
#include <initializer_list>

#include "aot/lowering.h"
#include "plugrt/sdk/einsum.h"

namespace plugrt::onednn {

namespace {

/// oneDNN's matmul takes ranks 2 to 6 here, as MatMul does.
constexpr size_t kMaxMatmulRank = 6;

using Labels = std::vector<int>;

bool contains(const Labels& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

/// Whether `group` is a run of `term`, in the same order (an empty group is).
bool is_run_of(const Labels& group, const Labels& term) {
  if (group.empty()) return true;
  const auto first = std::find(term.begin(), term.end(), group[0]);
  if (static_cast<size_t>(term.end() - first) < group.size()) return false;
  return std::equal(group.begin(), group.end(), first);
}

/// Among the runs of `term` made only of `candidates`, the one that is also a run of
/// `output` with the most elements (the innermost of equals): what merges into M or N.
Labels best_run(const Labels& candidates, const Labels& term, const Labels& output, const std::vector<int64_t>& size) {
  Labels best;
  int64_t best_elements = 0;
  for (size_t begin = 0; begin < term.size(); ++begin) {
    int64_t elements = 1;
    for (size_t end = begin; end < term.size() && contains(candidates, term[end]); ++end) {
      const Labels run(term.begin() + static_cast<std::ptrdiff_t>(begin),
                       term.begin() + static_cast<std::ptrdiff_t>(end) + 1);
      elements *= size[static_cast<size_t>(term[end])];
      if (is_run_of(run, output) && elements >= best_elements) {
        best = run;
        best_elements = elements;
      }
    }
  }
  return best;
}

/// How a matmul with dims made of `groups` (each the labels of one matmul axis) reads a
/// tensor whose labels, size-1 axes left out, are `term`: adjacent labels of one group
/// merge into one axis, and a group the tensor lacks is an axis of 1 at the end.
/// Returns false where a group's labels are not one run of `term`.
bool make_view(const Labels& term, const std::vector<Labels>& groups, const std::vector<int64_t>& size,
               OperandView* view) {
  std::vector<int64_t> axis_of(groups.size(), -1);
  view->dims.clear();
  int previous = -1;
  for (int label : term) {
    int group = -1;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (contains(groups[g], label)) group = static_cast<int>(g);
    }
    if (group < 0) return false;
    if (group != previous) {
      if (axis_of[static_cast<size_t>(group)] >= 0) return false;  // the group comes back: not one run
      axis_of[static_cast<size_t>(group)] = static_cast<int64_t>(view->dims.size());
      view->dims.push_back(1);
      previous = group;
    }
    view->dims.back() *= size[static_cast<size_t>(label)];
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    if (axis_of[g] >= 0) {
      if (!is_run_of(groups[g], term)) return false;  // only part of the group is here
      continue;
    }
    for (int label : groups[g]) {
      if (contains(term, label)) return false;
    }
    axis_of[g] = static_cast<int64_t>(view->dims.size());
    view->dims.push_back(1);
  }
  view->perm = axis_of;
  return true;
}

}  // namespace

std::string Lowering::lower_einsum(const ir::Node& node) {
  if (GraphView::num_inputs(node) != 2) return "only Einsum of two inputs is taken";
  const int32_t a = GraphView::input(node, 0), b = GraphView::input(node, 1), y = GraphView::output(node, 0);
  sdk::EinsumEquation equation;
  if (std::string why = sdk::parse_einsum(GraphView::string_attribute(node, "equation", ""), &equation); !why.empty()) {
    return "the equation does not parse: " + why;
  }
  if (equation.inputs.size() != 2) return "the equation does not have two input terms";
  const bool a_constant = graph_.is_constant(a), b_constant = graph_.is_constant(b);
  if (a_constant && b_constant) return "both inputs are constants";
  for (int32_t value : {a, b}) {
    if (graph_.is_constant(value)) {
      if (!graph_.is_float(value)) return "a constant input is not float32";
    } else if (std::string why = check_activation(value, "input"); !why.empty()) {
      return why;
    }
  }
  const std::vector<std::vector<int64_t>> shapes = {graph_.shape(a), graph_.shape(b)};

  // Labels: the ellipsis' dims first (right-aligned across the inputs), then the letters.
  size_t ellipsis_rank = 0;
  for (size_t i = 0; i < 2; ++i) {
    const sdk::EinsumTerm& term = equation.inputs[i];
    if (shapes[i].size() < term.letters.size() || (shapes[i].size() > term.letters.size() && term.ellipsis_at < 0)) {
      return "input " + std::to_string(i) + "'s rank does not fit its term";
    }
    ellipsis_rank = std::max(ellipsis_rank, shapes[i].size() - term.letters.size());
  }
  std::string letters;
  for (const sdk::EinsumTerm& term : equation.inputs) {
    for (char c : term.letters) {
      if (letters.find(c) == std::string::npos) letters += c;
    }
  }
  const size_t num_labels = ellipsis_rank + letters.size();
  std::vector<int64_t> size(num_labels, 1);
  std::vector<bool> sized(num_labels, false);
  // Each input's labels in axis order, size-1 axes left out.
  std::vector<Labels> terms(2);
  for (size_t i = 0; i < 2; ++i) {
    const sdk::EinsumTerm& term = equation.inputs[i];
    const size_t e = shapes[i].size() - term.letters.size();
    const size_t at = term.ellipsis_at < 0 ? term.letters.size() : static_cast<size_t>(term.ellipsis_at);
    Labels all;
    for (size_t axis = 0; axis < shapes[i].size(); ++axis) {
      const bool in_ellipsis = axis >= at && axis < at + e;
      const size_t label = in_ellipsis ? ellipsis_rank - e + (axis - at)
                                       : ellipsis_rank + letters.find(term.letters[axis < at ? axis : axis - e]);
      if (contains(all, static_cast<int>(label))) return "an index repeats within input " + std::to_string(i);
      all.push_back(static_cast<int>(label));
      const int64_t dim = shapes[i][axis];
      if (in_ellipsis && dim == 1) continue;  // broadcasts
      if (sized[label] && size[label] != dim) {
        if (!in_ellipsis || size[label] != 1) return "an index has two sizes";
      }
      size[label] = dim;
      sized[label] = true;
      if (dim > 1) terms[i].push_back(static_cast<int>(label));
    }
  }
  Labels out_labels;
  const sdk::EinsumTerm& out = equation.output;
  for (size_t k = 0; k <= out.letters.size(); ++k) {
    if (static_cast<int>(k) == out.ellipsis_at) {
      for (size_t l = 0; l < ellipsis_rank; ++l) out_labels.push_back(static_cast<int>(l));
    }
    if (k == out.letters.size()) break;
    out_labels.push_back(static_cast<int>(ellipsis_rank + letters.find(out.letters[k])));
  }
  std::vector<int64_t> expected;
  Labels y_term;
  for (int label : out_labels) {
    expected.push_back(size[static_cast<size_t>(label)]);
    if (size[static_cast<size_t>(label)] > 1) y_term.push_back(label);
  }
  if (graph_.shape(y) != expected) return "the output shape is not " + shape_text(expected);

  // The constant input, if any, is the matmul's weights; otherwise the result's innermost
  // label comes from the weights where it can (oneDNN's fast kernels write rows).
  bool swap = a_constant;
  if (!a_constant && !b_constant && !y_term.empty()) {
    const int last = y_term.back();
    swap = contains(terms[0], last) && !contains(terms[1], last);
  }
  const Labels& x_term = terms[swap ? 1 : 0];
  const Labels& w_term = terms[swap ? 0 : 1];
  Labels batch, m_like, n_like, k;
  for (size_t l = 0; l < num_labels; ++l) {
    const int label = static_cast<int>(l);
    if (size[l] == 1) continue;
    const bool in_x = contains(x_term, label), in_w = contains(w_term, label), in_y = contains(y_term, label);
    if (in_x && in_w) {
      (in_y ? batch : k).push_back(label);
    } else if (!in_y) {
      return "an index is summed within one input";
    }
  }
  for (int label : x_term) {
    if (!contains(w_term, label) && contains(y_term, label)) m_like.push_back(label);
  }
  for (int label : w_term) {
    if (!contains(x_term, label) && contains(y_term, label)) n_like.push_back(label);
  }
  // K in src's order, which must be weights' too.
  Labels k_group;
  for (int label : x_term) {
    if (contains(k, label)) k_group.push_back(label);
  }
  if (!is_run_of(k_group, x_term) || !is_run_of(k_group, w_term)) {
    return "the summed indices are not adjacent, in one order, in both inputs";
  }
  const Labels m_group = best_run(m_like, x_term, y_term, size);
  const Labels n_group = best_run(n_like, w_term, y_term, size);
  // Batch dims in the output's order; the other M and N labels broadcast in the input
  // that lacks them. Neighbours merge where every tensor has both, adjacent, or neither.
  Labels batch_labels;
  for (int label : y_term) {
    if (!contains(m_group, label) && !contains(n_group, label)) batch_labels.push_back(label);
  }
  std::vector<Labels> batch_groups;
  for (int label : batch_labels) {
    bool merges = !batch_groups.empty();
    if (merges) {
      const int last = batch_groups.back().back();
      for (const Labels* term : std::initializer_list<const Labels*>{&x_term, &w_term, &y_term}) {
        const auto at = std::find(term->begin(), term->end(), last);
        const bool has_last = at != term->end(), has_label = contains(*term, label);
        if (has_last != has_label || (has_last && (at + 1 == term->end() || *(at + 1) != label))) merges = false;
      }
    }
    if (merges) {
      batch_groups.back().push_back(label);
    } else {
      batch_groups.push_back({label});
    }
  }
  if (batch_groups.size() + 2 > kMaxMatmulRank) return "the product has more than 4 batch dims";
  std::vector<Labels> src_groups = batch_groups, weights_groups = batch_groups, dst_groups = batch_groups;
  src_groups.push_back(m_group);
  src_groups.push_back(k_group);
  weights_groups.push_back(k_group);
  weights_groups.push_back(n_group);
  dst_groups.push_back(m_group);
  dst_groups.push_back(n_group);
  std::vector<OperandView> views(3);
  if (!make_view(x_term, src_groups, size, &views[0]) || !make_view(w_term, weights_groups, size, &views[1]) ||
      !make_view(y_term, dst_groups, size, &views[2])) {
    return "the indices cannot be read as one batched matrix product";
  }

  const int32_t x = swap ? b : a, w = swap ? a : b;
  int32_t tx = -1, tw = -1;
  for (const auto& [value, tensor] : {std::pair{x, &tx}, std::pair{w, &tw}}) {
    if (graph_.is_constant(value)) {
      std::vector<float> data = graph_.floats(value);
      if (data.empty()) return "a constant input's data does not match its shape";
      *tensor = add_constant(graph_.shape(value), std::move(data), value);
    } else {
      *tensor = activation(value);
    }
  }
  Op& op = add(blob::OpKind::MatMul, node, {tx, tw}, {activation(y)});
  op.alpha = 1.0f;
  op.views = std::move(views);
  return "";
}

}  // namespace plugrt::onednn
