// SPDX-License-Identifier: Apache-2.0
// What the plugrt command prints comes partly from files it did not write (node and
// value names of a model, names in a program, a plugin's description, a backend's error
// message): a control character there (an escape sequence that recolours, moves the
// cursor or retitles the terminal, a carriage return that hides the start of a line)
// must not reach the terminal as it is. EscapingOutput puts a filter on std::cout and
// std::cerr for its lifetime that writes every control byte but newline and tab as
// "\xNN". JSON output is unaffected: nlohmann::json escapes those bytes already.
#ifndef PLUGRT_TOOLS_PLUGRT_ESCAPING_OUTPUT_H_
#define PLUGRT_TOOLS_PLUGRT_ESCAPING_OUTPUT_H_

#include <cstdio>
#include <iostream>
#include <streambuf>

namespace plugrt::tools {

class EscapingBuffer : public std::streambuf {
 public:
  explicit EscapingBuffer(std::streambuf* target) : target_(target) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const auto byte = static_cast<unsigned char>(traits_type::to_char_type(c));
    if ((byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      return target_->sputn(escaped, 4) == 4 ? c : traits_type::eof();
    }
    return target_->sputc(static_cast<char>(byte)) == traits_type::eof() ? traits_type::eof() : c;
  }
  int sync() override { return target_->pubsync(); }

 private:
  std::streambuf* target_;
};

class EscapingOutput {
 public:
  EscapingOutput() : out_(std::cout.rdbuf()), err_(std::cerr.rdbuf()) {
    std::cout.rdbuf(&out_);
    std::cerr.rdbuf(&err_);
  }
  ~EscapingOutput() {
    std::cout.flush();
    std::cerr.flush();
    std::cout.rdbuf(out_target_);
    std::cerr.rdbuf(err_target_);
  }
  EscapingOutput(const EscapingOutput&) = delete;
  EscapingOutput& operator=(const EscapingOutput&) = delete;

 private:
  std::streambuf* out_target_ = std::cout.rdbuf();
  std::streambuf* err_target_ = std::cerr.rdbuf();
  EscapingBuffer out_, err_;
};

}  // namespace plugrt::tools

#endif  // PLUGRT_TOOLS_PLUGRT_ESCAPING_OUTPUT_H_
