#include "aot/graph_view.h"

#include <cstring>
#include <limits>

#include "plugrt/sdk/graph.h"

namespace plugrt::xnnpack {

std::optional<GraphView> GraphView::open(const void* data, size_t size, std::string* error) {
  if (data == nullptr || size == 0) {
    *error = "the graph is empty";
    return std::nullopt;
  }
  // The SDK's reader: the FlatBuffers verifier, and the alignment of 8-byte vectors that
  // the verifier does not check.
  sdk::Expected<const ir::Graph*> read = sdk::read_graph(data, size);
  if (!read.is_ok()) {
    *error = "the graph is not a valid graph IR buffer: " + read.status().message();
    return std::nullopt;
  }
  const ir::Graph* graph = *read;
  if (graph->ir_version() != 1) {
    *error = "graph IR version " + std::to_string(graph->ir_version()) + " is not one this backend reads";
    return std::nullopt;
  }
  GraphView view(graph);
  // Every index a node names must be a value.
  for (size_t n = 0; n < view.num_nodes(); ++n) {
    const ir::Node& node = view.node(n);
    for (const auto* list : {node.inputs(), node.outputs()}) {
      if (list == nullptr) continue;
      for (int32_t v : *list) {
        if (v != -1 && !view.valid(v)) {
          *error = "node " + std::to_string(n) + " names value " + std::to_string(v) + ", which does not exist";
          return std::nullopt;
        }
      }
    }
  }
  return view;
}

bool GraphView::valid(int32_t value) const {
  return value >= 0 && graph_->values() != nullptr && static_cast<size_t>(value) < graph_->values()->size();
}

std::vector<int64_t> GraphView::shape(int32_t index) const {
  const ir::Value& v = value(index);
  if (v.shape() == nullptr) return {};
  return std::vector<int64_t>(v.shape()->begin(), v.shape()->end());
}

int64_t num_elements(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    // A graph's shapes come from the host: refuse what does not fit, do not overflow.
    if (dim < 0 || (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)) return -1;
    count *= dim;
  }
  return count;
}

std::vector<float> GraphView::floats(int32_t index) const {
  const ir::Value& v = value(index);
  std::vector<float> out;
  if (v.data() == nullptr || v.dtype() != ir::DType::Float32) return out;
  const int64_t count = num_elements(shape(index));
  if (count < 0 || static_cast<uint64_t>(count) * sizeof(float) != v.data()->size()) return out;
  out.resize(static_cast<size_t>(count));
  if (count > 0) std::memcpy(out.data(), v.data()->data(), out.size() * sizeof(float));
  return out;
}

std::optional<std::vector<int64_t>> GraphView::ints(int32_t index) const {
  const ir::Value& v = value(index);
  if (v.data() == nullptr) return std::nullopt;
  const int64_t count = num_elements(shape(index));
  std::vector<int64_t> out(static_cast<size_t>(count < 0 ? 0 : count));
  if (v.dtype() == ir::DType::Int64 && v.data()->size() == out.size() * 8) {
    if (!out.empty()) std::memcpy(out.data(), v.data()->data(), out.size() * 8);
    return out;
  }
  if (v.dtype() == ir::DType::Int32 && v.data()->size() == out.size() * 4) {
    for (size_t i = 0; i < out.size(); ++i) {
      int32_t element;
      std::memcpy(&element, v.data()->data() + i * 4, 4);
      out[i] = element;
    }
    return out;
  }
  return std::nullopt;
}

int32_t GraphView::input(const ir::Node& node, size_t i) {
  return node.inputs() != nullptr && i < node.inputs()->size() ? node.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i))
                                                               : -1;
}

size_t GraphView::num_outputs(const ir::Node& node) {
  size_t count = 0;
  if (node.outputs() == nullptr) return 0;
  for (int32_t v : *node.outputs()) count += v != -1 ? 1 : 0;
  return count;
}

int32_t GraphView::output(const ir::Node& node, size_t i) {
  return node.outputs() != nullptr && i < node.outputs()->size()
             ? node.outputs()->Get(static_cast<flatbuffers::uoffset_t>(i))
             : -1;
}

const ir::Attribute* GraphView::attribute(const ir::Node& node, const char* name) {
  if (node.attributes() == nullptr) return nullptr;
  for (const ir::Attribute* attribute : *node.attributes()) {
    if (attribute->name()->str() == name) return attribute;
  }
  return nullptr;
}

int64_t GraphView::int_attribute(const ir::Node& node, const char* name, int64_t fallback) {
  const ir::Attribute* a = attribute(node, name);
  return a != nullptr && a->kind() == ir::AttributeKind::Int ? a->i() : fallback;
}

float GraphView::float_attribute(const ir::Node& node, const char* name, float fallback) {
  const ir::Attribute* a = attribute(node, name);
  return a != nullptr && a->kind() == ir::AttributeKind::Float ? a->f() : fallback;
}

std::string GraphView::string_attribute(const ir::Node& node, const char* name, const std::string& fallback) {
  const ir::Attribute* a = attribute(node, name);
  return a != nullptr && a->kind() == ir::AttributeKind::String && a->s() != nullptr ? a->s()->str() : fallback;
}

std::vector<int64_t> GraphView::ints_attribute(const ir::Node& node, const char* name, std::vector<int64_t> fallback) {
  const ir::Attribute* a = attribute(node, name);
  if (a == nullptr || a->kind() != ir::AttributeKind::Ints || a->ints() == nullptr) return fallback;
  return std::vector<int64_t>(a->ints()->begin(), a->ints()->end());
}

}  // namespace plugrt::xnnpack
