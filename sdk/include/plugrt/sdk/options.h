// SPDX-License-Identifier: Apache-2.0
/// \file options.h
/// Options: a read-only view of compile specs or runtime options (plugrt_option arrays),
/// with typed getters that fail with InvalidArgument and a message naming the key.
///
/// An option's value is raw bytes whose meaning the backend defines. The getters below
/// read the common convention, text: "4", "true", "0.5", "fast". Keys are compared as
/// bytes; when a key appears twice, the last one wins (later layers override earlier).
#ifndef PLUGRT_SDK_OPTIONS_H_
#define PLUGRT_SDK_OPTIONS_H_

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugrt/plugrt_abi.h"
#include "plugrt/sdk/status.h"

namespace plugrt::sdk {

/// Borrowed: valid as long as the array it views (for init: during the call only).
class Options {
 public:
  Options() = default;
  Options(const plugrt_option* options, size_t count, std::string_view what = "option")
      : options_(count == 0 ? nullptr : options), count_(options == nullptr ? 0 : count), what_(what) {}

  size_t size() const { return count_; }
  std::string_view key(size_t i) const { return view(options_[i].key); }
  std::string_view value(size_t i) const {
    return {static_cast<const char*>(options_[i].value), options_[i].value == nullptr ? 0 : options_[i].value_size};
  }

  /// The raw value of `key`, or nullopt when it is absent.
  std::optional<std::string_view> find(std::string_view key) const {
    for (size_t i = count_; i > 0; --i) {
      if (this->key(i - 1) == key) return value(i - 1);
    }
    return std::nullopt;
  }
  bool contains(std::string_view key) const { return find(key).has_value(); }

  /// The value as text, or `fallback` when absent.
  std::string get_string(std::string_view key, std::string_view fallback = {}) const {
    return std::string(find(key).value_or(fallback));
  }

  /// A decimal integer in [min, max]; `fallback` when absent.
  Expected<int64_t> get_int(std::string_view key, int64_t fallback, int64_t min = INT64_MIN,
                            int64_t max = INT64_MAX) const {
    std::optional<std::string_view> text = find(key);
    if (!text) return fallback;
    std::string copy(*text);
    char* end = nullptr;
    errno = 0;
    long long value = std::strtoll(copy.c_str(), &end, 10);
    if (copy.empty() || end != copy.c_str() + copy.size() || errno == ERANGE) {
      return bad(key, copy, "an integer");
    }
    if (value < min || value > max) {
      return bad(key, copy, "an integer from " + std::to_string(min) + " to " + std::to_string(max));
    }
    return static_cast<int64_t>(value);
  }

  /// "1", "true", "on", "yes" or "0", "false", "off", "no"; `fallback` when absent.
  Expected<bool> get_bool(std::string_view key, bool fallback) const {
    std::optional<std::string_view> text = find(key);
    if (!text) return fallback;
    if (*text == "1" || *text == "true" || *text == "on" || *text == "yes") return true;
    if (*text == "0" || *text == "false" || *text == "off" || *text == "no") return false;
    return bad(key, std::string(*text), "true or false");
  }

  /// A decimal number; `fallback` when absent.
  Expected<double> get_double(std::string_view key, double fallback) const {
    std::optional<std::string_view> text = find(key);
    if (!text) return fallback;
    std::string copy(*text);
    char* end = nullptr;
    errno = 0;
    double value = std::strtod(copy.c_str(), &end);
    if (copy.empty() || end != copy.c_str() + copy.size() || errno == ERANGE) return bad(key, copy, "a number");
    return value;
  }

  /// One of `choices`; `fallback` when absent.
  Expected<std::string> get_choice(std::string_view key, std::initializer_list<std::string_view> choices,
                                   std::string_view fallback) const {
    std::optional<std::string_view> text = find(key);
    if (!text) return std::string(fallback);
    std::string list;
    for (std::string_view choice : choices) {
      if (*text == choice) return std::string(choice);
      list += (list.empty() ? "" : ", ") + std::string(choice);
    }
    return bad(key, std::string(*text), "one of " + list);
  }

 private:
  static std::string_view view(plugrt_string s) { return {s.data == nullptr ? "" : s.data, s.size}; }
  Status bad(std::string_view key, const std::string& value, const std::string& expected) const {
    return Status::invalid_argument(std::string(what_) + " '" + std::string(key) + "' is '" + value + "', expected " +
                                    expected);
  }

  const plugrt_option* options_ = nullptr;
  size_t count_ = 0;
  std::string_view what_ = "option";
};

/// A copy of Options that outlives the call that lent them (init's are valid during init
/// only): for a delegate that calls preprocess or init again later, as PerShapeDelegate
/// does. Movable; view() stays valid until the copy is destroyed.
class OwnedOptions {
 public:
  OwnedOptions() = default;
  OwnedOptions(const Options& options, std::string_view what) : what_(what) {
    for (size_t i = 0; i < options.size(); ++i) {
      entries_.push_back({std::string(options.key(i)), std::string(options.value(i))});
    }
    for (const Entry& entry : entries_) {
      options_.push_back({{entry.key.data(), entry.key.size()}, entry.value.data(), entry.value.size()});
    }
  }
  OwnedOptions(OwnedOptions&&) = default;
  OwnedOptions& operator=(OwnedOptions&&) = default;
  OwnedOptions(const OwnedOptions&) = delete;
  OwnedOptions& operator=(const OwnedOptions&) = delete;

  Options view() const { return Options(options_.data(), options_.size(), what_); }

 private:
  struct Entry {
    std::string key, value;
  };
  std::vector<Entry> entries_;  // never resized after construction: options_ points into it
  std::vector<plugrt_option> options_;
  std::string_view what_ = "option";
};

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_OPTIONS_H_
