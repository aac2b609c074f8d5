// SPDX-License-Identifier: Apache-2.0
#include "plugrt/graph_constants.h"

#include <string_view>
#include <unordered_set>

#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt {

Result<std::vector<plugrt_named_constant>> graph_constants(Span<const uint8_t> graph) {
  // Verifying the tables and vectors is enough here: the views only need to lie inside
  // the buffer. What the constants mean is checked by the backend that reads them.
  flatbuffers::Verifier verifier(graph.data(), graph.size());
  if (graph.size() < 8 || !ir::VerifyGraphBuffer(verifier)) {
    return Status(Error::kInvalidProgram, "the portable graph holding the constants is not a valid graph IR buffer");
  }
  const ir::Graph& root = *ir::GetGraph(graph.data());
  std::vector<plugrt_named_constant> constants;
  std::unordered_set<std::string_view> names;
  if (root.values() == nullptr) return constants;
  for (flatbuffers::uoffset_t v = 0; v < root.values()->size(); ++v) {
    const ir::Value& value = *root.values()->Get(v);
    if (value.data() == nullptr) continue;
    const std::string_view name = value.name() != nullptr ? value.name()->string_view() : std::string_view();
    if (name.empty()) {
      return Status(Error::kInvalidProgram, "constant value " + std::to_string(v) + " of the graph has no name");
    }
    if (!names.insert(name).second) {
      return Status(Error::kInvalidProgram, "two constants of the graph are named '" + std::string(name) + "'");
    }
    constants.push_back(plugrt_named_constant{{name.data(), name.size()}, value.data()->data(), value.data()->size()});
  }
  return constants;
}

}  // namespace plugrt
