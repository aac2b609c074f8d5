// SPDX-License-Identifier: Apache-2.0
// Options addressed to one backend by name, as the command line takes them
// (`--backend-option NAME.KEY=VALUE`): compile specs at compile time, runtime options at
// load. Each backend is given only the options that name it, in the order given (the
// SDK's sdk::Options lets the last of a repeated key win).
#ifndef PLUGRT_BACKEND_OPTIONS_H_
#define PLUGRT_BACKEND_OPTIONS_H_

#include <string>
#include <string_view>
#include <vector>

#include "plugrt/plugrt_abi.h"
#include "plugrt/status.h"

namespace plugrt {

class BackendOptions {
 public:
  /// Adds "NAME.KEY=VALUE": NAME a backend name ([a-z0-9_]), KEY non-empty, VALUE any
  /// text (may be empty). Errors: kInvalidArgument naming the text and what is wrong.
  Status add(std::string_view text);
  /// Adds every text; the first malformed one is the error.
  Status add_all(const std::vector<std::string>& texts);

  bool empty() const { return entries_.empty(); }
  /// The backend names the options address, each once, in order of first use.
  std::vector<std::string> backends() const;
  /// The options addressed to `backend`, as the ABI passes them. They point into this
  /// object: valid until it is changed or destroyed.
  std::vector<plugrt_option> for_backend(std::string_view backend) const;
  /// Errors (kNotFound) when an option names a backend not in `known`, naming it and them.
  Status check_backends(const std::vector<std::string>& known) const;

 private:
  struct Entry {
    std::string backend, key, value;
  };
  /// "NAME.KEY=VALUE" of the first option addressed to `backend`.
  std::string first_option_of(std::string_view backend) const;
  std::vector<Entry> entries_;
};

}  // namespace plugrt

#endif  // PLUGRT_BACKEND_OPTIONS_H_
