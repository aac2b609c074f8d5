// SPDX-License-Identifier: Apache-2.0
// Einsum's output shape. ONNX 1.12's inference gives Einsum only a rank; plugrt needs
// static dimensions, which the equation and the input shapes fix.
#include <map>

#include "onnx_internal.h"
#include "plugrt/common/einsum.h"

namespace plugrt::compiler::onnx_import {

bool einsum_output_dims(std::string equation, const std::vector<std::vector<int64_t>>& inputs,
                        std::vector<int64_t>* dims) {
  common::EinsumEquation parsed;
  if (!common::parse_einsum(std::move(equation), &parsed).empty() || parsed.inputs.size() != inputs.size())
    return false;
  std::map<char, int64_t> size_of;
  std::vector<int64_t> ellipsis;  // broadcast, right-aligned
  for (size_t i = 0; i < parsed.inputs.size(); ++i) {
    const common::EinsumTerm& term = parsed.inputs[i];
    const std::vector<int64_t>& shape = inputs[i];
    const size_t letters = term.letters.size();
    if (shape.size() < letters || (shape.size() > letters && term.ellipsis_at < 0)) return false;
    const size_t e = shape.size() - letters;
    const size_t at = term.ellipsis_at < 0 ? letters : static_cast<size_t>(term.ellipsis_at);
    for (size_t k = 0; k < letters; ++k) {
      const int64_t d = shape[k < at ? k : k + e];
      auto [it, added] = size_of.emplace(term.letters[k], d);
      if (!added && it->second < 0) it->second = d;
    }
    if (e > ellipsis.size()) ellipsis.insert(ellipsis.begin(), e - ellipsis.size(), 1);
    for (size_t k = 0; k < e; ++k) {
      int64_t& target = ellipsis[ellipsis.size() - e + k];
      const int64_t d = shape[at + k];
      if (target == 1 || d < 0) target = d;
    }
  }
  dims->clear();
  const common::EinsumTerm& out = parsed.output;
  for (size_t k = 0; k <= out.letters.size(); ++k) {
    if (static_cast<int>(k) == out.ellipsis_at) dims->insert(dims->end(), ellipsis.begin(), ellipsis.end());
    if (k == out.letters.size()) break;
    dims->push_back(size_of.at(out.letters[k]));
  }
  return true;
}

}  // namespace plugrt::compiler::onnx_import
