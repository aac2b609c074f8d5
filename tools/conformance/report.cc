// SPDX-License-Identifier: Apache-2.0
#include "report.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace plugrt::conformance {

namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The word that ends just before `end` (skipping spaces), lowercased.
std::string word_before(const std::string& text, size_t end) {
  while (end > 0 && text[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && is_word_char(text[begin - 1])) --begin;
  std::string word = text.substr(begin, end - begin);
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return word;
}

// Words after which a quoted string names a particular node or value of one model.
bool names_an_instance(const std::string& word) {
  static const char* const kWords[] = {"node",   "nodes",       "input",  "inputs",   "output",    "outputs", "value",
                                       "values", "initializer", "tensor", "delegate", "partition", "graph"};
  return std::any_of(std::begin(kWords), std::end(kWords), [&](const char* w) { return word == w; });
}

// Replaces the content of quoted names ('conv1' after "node", or "Conv 'conv1':").
std::string mask_names(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    // An apostrophe inside a word ("can't") opens no quote.
    if (c != '\'' || (i > 0 && is_word_char(text[i - 1]))) {
      out += c;
      ++i;
      continue;
    }
    const size_t close = text.find('\'', i + 1);
    if (close == std::string::npos) {
      out += text.substr(i);
      break;
    }
    const bool followed_by_colon = close + 1 < text.size() && text[close + 1] == ':';
    if (names_an_instance(word_before(text, i)) || followed_by_colon) {
      out += "'*'";
    } else {
      out += text.substr(i, close + 1 - i);
    }
    i = close + 1;
  }
  return out;
}

// Replaces numbers that stand alone or follow an underscore (input_0, unk__1), but not
// those that end a word (float32, int64), with N.
std::string mask_numbers(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const bool starts_number = std::isdigit(static_cast<unsigned char>(text[i])) != 0 &&
                               (i == 0 || text[i - 1] == '_' || (!is_word_char(text[i - 1]) && text[i - 1] != '.'));
    if (!starts_number) {
      out += text[i++];
      continue;
    }
    if (!out.empty() && out.back() == '-') out.pop_back();
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) != 0 || text[i] == '.')) ++i;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
      size_t j = i + 1;
      if (j < text.size() && (text[j] == '-' || text[j] == '+')) ++j;
      if (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) != 0) {
        i = j;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) ++i;
      }
    }
    out += 'N';
  }
  return out;
}

// Whether one item of a bracketed list is a dimension: N, ?, or a symbol onnx made
// up (unk__N).
bool is_dimension(const std::string& item) {
  if (item == "N" || item == "?") return true;
  if (item.size() < 3 || item.compare(item.size() - 3, 3, "__N") != 0) return false;
  return std::all_of(item.begin(), item.end(), is_word_char);
}

// Whether the text between brackets is a shape: dimensions separated by commas, or nothing.
bool is_shape(const std::string& content) {
  if (content.find_first_not_of(' ') == std::string::npos) return true;
  size_t start = 0;
  while (true) {
    const size_t comma = content.find(',', start);
    std::string item = content.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (!is_dimension(item)) return false;
    if (comma == std::string::npos) return true;
    start = comma + 1;
  }
}

// Shapes ("[N, N, N]", "[unk__N, N]", "[]") become "[...]".
std::string collapse_lists(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t close = text[i] == '[' ? text.find(']', i) : std::string::npos;
    if (close != std::string::npos && is_shape(text.substr(i + 1, close - i - 1))) {
      out += "[...]";
      i = close + 1;
      continue;
    }
    out += text[i++];
  }
  return out;
}

}  // namespace

std::string normalize_reason(const std::string& reason) { return collapse_lists(mask_numbers(mask_names(reason))); }

void Report::add(const TestCase& test, const std::vector<std::string>& op_types, const TestResult& result) {
  tests_.push_back(Entry{test.name, test.suite, result.verdict, result.reason, op_types, result.frozen_inputs});
  for (const std::string& op : op_types) {
    OpCounts& counts = ops_[op];
    switch (result.verdict) {
      case Verdict::kPass: ++counts.passed; break;
      case Verdict::kFail: ++counts.failed; break;
      case Verdict::kUnsupported: ++counts.unsupported; break;
    }
  }
  switch (result.verdict) {
    case Verdict::kPass:
      ++passed_;
      if (!result.frozen_inputs.empty()) ++frozen_passes_;
      break;
    case Verdict::kFail: ++failed_; break;
    case Verdict::kUnsupported:
      ++unsupported_;
      ++reasons_[normalize_reason(result.reason)];
      break;
  }
}

std::vector<std::pair<std::string, size_t>> Report::unsupported_reasons() const {
  std::vector<std::pair<std::string, size_t>> sorted(reasons_.begin(), reasons_.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

std::string Report::to_json() const {
  using nlohmann::json;
  json tests = json::array();
  for (const Entry& entry : tests_) {
    json test = {{"name", entry.name},
                 {"suite", entry.suite},
                 {"result", std::string(to_string(entry.verdict))},
                 {"reason", entry.reason},
                 {"ops", entry.ops}};
    if (!entry.frozen_inputs.empty()) test["frozen_inputs"] = entry.frozen_inputs;
    tests.push_back(std::move(test));
  }
  json ops = json::object();
  for (const auto& [op, counts] : ops_) {
    ops[op] = {{"passed", counts.passed}, {"failed", counts.failed}, {"unsupported", counts.unsupported}};
  }
  json reasons = json::array();
  for (const auto& [reason, count] : unsupported_reasons()) reasons.push_back({{"reason", reason}, {"count", count}});
  const json report = {{"backends", backends_},         {"passed", passed_}, {"failed", failed_},
                       {"unsupported", unsupported_},   {"tests", tests},    {"ops", ops},
                       {"unsupported_reasons", reasons}};
  // Test data is not ours: a reason quoting invalid UTF-8 is written with replacements.
  return report.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

void Report::print_reasons(std::ostream& out, size_t limit) const {
  const auto reasons = unsupported_reasons();
  if (reasons.empty()) return;
  out << "Top unsupported reasons:\n";
  for (size_t i = 0; i < reasons.size() && i < limit; ++i) {
    std::string count = std::to_string(reasons[i].second);
    if (count.size() < 6) count.insert(0, 6 - count.size(), ' ');
    out << count << "  " << reasons[i].first << "\n";
  }
}

void Report::print_ops(std::ostream& out) const {
  // reasons[op][verdict][normalized reason] = tests
  std::map<std::string, std::map<Verdict, std::map<std::string, size_t>>> reasons;
  for (const Entry& entry : tests_) {
    if (entry.verdict == Verdict::kPass) continue;
    for (const std::string& op : entry.ops) ++reasons[op][entry.verdict][normalize_reason(entry.reason)];
  }
  auto most_frequent = [](const std::map<std::string, size_t>& counts) {
    const std::pair<const std::string, size_t>* best = nullptr;
    for (const auto& item : counts) {
      if (best == nullptr || item.second > best->second) best = &item;
    }
    return best == nullptr ? std::string() : best->first;
  };
  size_t width = 2;
  for (const auto& [op, counts] : ops_) width = std::max(width, op.size());
  auto cell = [](std::string text, size_t size) {
    if (text.size() < size) text.insert(0, size - text.size(), ' ');
    return text;
  };
  out << "op" << std::string(width - 2, ' ') << "  passed  failed  unsupported  reason\n";
  for (const auto& [op, counts] : ops_) {
    std::string reason;
    if (auto it = reasons.find(op); it != reasons.end()) {
      const auto& by_verdict = it->second;
      if (auto failed = by_verdict.find(Verdict::kFail); failed != by_verdict.end()) {
        reason = "FAIL: " + most_frequent(failed->second);
      } else if (auto skipped = by_verdict.find(Verdict::kUnsupported); skipped != by_verdict.end()) {
        reason = most_frequent(skipped->second);
      }
    }
    out << op << std::string(width - op.size(), ' ') << cell(std::to_string(counts.passed), 8)
        << cell(std::to_string(counts.failed), 8) << cell(std::to_string(counts.unsupported), 13) << "  " << reason
        << "\n";
  }
}

std::string Report::summary_line() const {
  return std::to_string(passed_) + " passed, " + std::to_string(failed_) + " failed, " + std::to_string(unsupported_) +
         " skipped";
}

}  // namespace plugrt::conformance
