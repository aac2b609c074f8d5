// Einsum's output shape. ONNX 1.12's inference gives Einsum only a rank; plugrt needs
// static dimensions, which the equation and the input shapes fix.
#include <algorithm>
#include <cctype>

#include "onnx_internal.h"

namespace plugrt::compiler::onnx_import {

namespace {

struct Term {
  std::string letters;
  int ellipsis_at = -1;
};

bool parse_term(const std::string& text, Term* term) {
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, "...") == 0) {
      if (term->ellipsis_at >= 0) return false;
      term->ellipsis_at = static_cast<int>(term->letters.size());
      i += 3;
    } else if (std::isalpha(static_cast<unsigned char>(text[i])) != 0) {
      term->letters += text[i++];
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

bool einsum_output_dims(std::string equation, const std::vector<std::vector<int64_t>>& inputs,
                        std::vector<int64_t>* dims) {
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t begin = 0;;) {
    const size_t comma = lhs.find(',', begin);
    Term term;
    if (!parse_term(lhs.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin), &term)) {
      return false;
    }
    terms.push_back(term);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  if (terms.size() != inputs.size()) return false;
  std::map<char, int64_t> size_of;
  std::map<char, int> count_of;
  std::vector<int64_t> ellipsis;  // broadcast, right-aligned
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::vector<int64_t>& shape = inputs[i];
    const size_t letters = terms[i].letters.size();
    if (shape.size() < letters || (shape.size() > letters && terms[i].ellipsis_at < 0)) return false;
    const size_t e = shape.size() - letters;
    const size_t at = terms[i].ellipsis_at < 0 ? letters : static_cast<size_t>(terms[i].ellipsis_at);
    for (size_t k = 0; k < letters; ++k) {
      const char c = terms[i].letters[k];
      const int64_t d = shape[k < at ? k : k + e];
      ++count_of[c];
      if (size_of.count(c) == 0 || size_of[c] < 0) size_of[c] = d;
    }
    if (e > ellipsis.size()) ellipsis.insert(ellipsis.begin(), e - ellipsis.size(), 1);
    for (size_t k = 0; k < e; ++k) {
      int64_t& target = ellipsis[ellipsis.size() - e + k];
      const int64_t d = shape[at + k];
      if (target == 1 || d < 0) target = d;
    }
  }
  dims->clear();
  if (arrow == std::string::npos) {
    dims->insert(dims->end(), ellipsis.begin(), ellipsis.end());
    for (const auto& [c, count] : count_of) {  // std::map: alphabetical, upper case first
      if (count == 1) dims->push_back(size_of[c]);
    }
    return true;
  }
  Term out;
  if (!parse_term(equation.substr(arrow + 2), &out)) return false;
  for (size_t k = 0; k <= out.letters.size(); ++k) {
    if (static_cast<int>(k) == out.ellipsis_at) dims->insert(dims->end(), ellipsis.begin(), ellipsis.end());
    if (k == out.letters.size()) break;
    auto it = size_of.find(out.letters[k]);
    if (it == size_of.end()) return false;
    dims->push_back(it->second);
  }
  return true;
}

}  // namespace plugrt::compiler::onnx_import
