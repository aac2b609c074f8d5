// SPDX-License-Identifier: Apache-2.0
/// \file einsum.h
/// Einsum's equation as ONNX (and NumPy) write it: "bij,bjk->bik", "..." for dims that
/// broadcast, and an implicit output when there is no "->". Header-only; plugrt::common
/// (the SDK names the same as plugrt::sdk::parse_einsum, ... through plugrt/sdk/einsum.h).
#ifndef PLUGRT_COMMON_EINSUM_H_
#define PLUGRT_COMMON_EINSUM_H_

#include <algorithm>
#include <string>
#include <vector>

namespace plugrt::common {

/// One term: its letters, and where "..." stands among them (-1: no ellipsis).
struct EinsumTerm {
  std::string letters;
  int ellipsis_at = -1;
};

struct EinsumEquation {
  std::vector<EinsumTerm> inputs;
  /// Explicit, or implied: "...", then the letters the inputs use exactly once, in
  /// character order (upper case first).
  EinsumTerm output;
};

/// Parses one term; "" or the reason it is malformed.
inline std::string parse_einsum_term(const std::string& text, EinsumTerm* term) {
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (text.compare(i, 3, "...") == 0) {
      if (term->ellipsis_at >= 0) return "term '" + text + "' has more than one ellipsis";
      term->ellipsis_at = static_cast<int>(term->letters.size());
      i += 3;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      term->letters += c;
      ++i;
    } else {
      return "term '" + text + "' holds '" + c + "', which is neither a letter nor part of '...'";
    }
  }
  return {};
}

/// Parses `equation` (spaces ignored); "" or the reason it is malformed. An explicit
/// output may name only letters of the inputs, each once.
inline std::string parse_einsum(std::string equation, EinsumEquation* parsed) {
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  parsed->inputs.clear();
  for (size_t begin = 0;;) {
    const size_t comma = lhs.find(',', begin);
    EinsumTerm term;
    if (std::string why =
            parse_einsum_term(lhs.substr(begin, comma == std::string::npos ? comma : comma - begin), &term);
        !why.empty()) {
      return why;
    }
    parsed->inputs.push_back(term);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  std::string used, once;
  for (const EinsumTerm& term : parsed->inputs) used += term.letters;
  for (char c : used) {
    if (std::count(used.begin(), used.end(), c) == 1) once += c;
  }
  parsed->output = EinsumTerm();
  if (arrow == std::string::npos) {
    std::sort(once.begin(), once.end());
    parsed->output.letters = once;
    const bool any_ellipsis = std::any_of(parsed->inputs.begin(), parsed->inputs.end(),
                                          [](const EinsumTerm& term) { return term.ellipsis_at >= 0; });
    parsed->output.ellipsis_at = any_ellipsis ? 0 : -1;
    return {};
  }
  if (std::string why = parse_einsum_term(equation.substr(arrow + 2), &parsed->output); !why.empty()) return why;
  const std::string& out = parsed->output.letters;
  for (size_t k = 0; k < out.size(); ++k) {
    if (used.find(out[k]) == std::string::npos) return std::string("output index '") + out[k] + "' appears in no input";
    if (out.find(out[k]) != k) return std::string("output index '") + out[k] + "' repeats";
  }
  return {};
}

}  // namespace plugrt::common

#endif  // PLUGRT_COMMON_EINSUM_H_
