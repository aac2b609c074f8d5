#include "aot/graph_view.h"

#include <cstring>

#include "plugrt/sdk/graph.h"

namespace plugrt::onednn {

std::optional<GraphView> GraphView::open(const void* data, size_t size, std::string* error) {
  if (data == nullptr || size == 0) {
    *error = "the graph is empty";
    return std::nullopt;
  }
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data), size);
  if (!ir::VerifyGraphBuffer(verifier)) {
    *error = "the graph is not a valid graph IR buffer";
    return std::nullopt;
  }
  const ir::Graph* graph = ir::GetGraph(data);
  // The verifier checks vector lengths, not the alignment of 8-byte elements.
  if (!sdk::internal::int64_vectors_aligned(*graph)) {
    *error = "the graph IR buffer has misaligned 8-byte vectors";
    return std::nullopt;
  }
  if (graph->ir_version() != 1) {
    *error = "graph IR version " + std::to_string(graph->ir_version()) + " is not one this backend reads";
    return std::nullopt;
  }
  // Shapes are bounded once here, so element counts and strides computed from them
  // later cannot overflow: no negative dims, and at most 2^40 elements (zero dims aside).
  if (graph->values() != nullptr) {
    for (flatbuffers::uoffset_t v = 0; v < graph->values()->size(); ++v) {
      const ir::Value* value = graph->values()->Get(v);
      if (value->shape() == nullptr) continue;
      int64_t elements = 1;
      for (int64_t dim : *value->shape()) {
        if (dim < 0 || (dim > 0 && elements > (int64_t{1} << 40) / dim)) {
          *error = "value " + std::to_string(v) + " has a negative or too large shape";
          return std::nullopt;
        }
        if (dim > 0) elements *= dim;
      }
    }
  }
  GraphView view(graph);
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
  for (const auto* list : {graph->inputs(), graph->outputs()}) {
    if (list == nullptr) continue;
    for (int32_t v : *list) {
      if (!view.valid(v)) {
        *error = "the graph's inputs or outputs name value " + std::to_string(v) + ", which does not exist";
        return std::nullopt;
      }
    }
  }
  view.index_readers();
  return view;
}

void GraphView::index_readers() {
  const size_t count = graph_->values() == nullptr ? 0 : graph_->values()->size();
  readers_.assign(count, 0);
  producers_.assign(count, -1);
  graph_outputs_.assign(count, false);
  for (size_t n = 0; n < num_nodes(); ++n) {
    const ir::Node& node = this->node(n);
    if (node.inputs() != nullptr) {
      for (int32_t v : *node.inputs()) {
        if (v >= 0) ++readers_[static_cast<size_t>(v)];
      }
    }
    if (node.outputs() != nullptr) {
      for (int32_t v : *node.outputs()) {
        if (v >= 0) producers_[static_cast<size_t>(v)] = static_cast<int64_t>(n);
      }
    }
  }
  if (graph_->outputs() != nullptr) {
    for (int32_t v : *graph_->outputs()) graph_outputs_[static_cast<size_t>(v)] = true;
  }
}

bool GraphView::valid(int32_t value) const {
  return value >= 0 && graph_->values() != nullptr && static_cast<size_t>(value) < graph_->values()->size();
}

std::vector<int64_t> GraphView::shape(int32_t index) const {
  const ir::Value& v = value(index);
  if (v.shape() == nullptr) return {};
  return std::vector<int64_t>(v.shape()->begin(), v.shape()->end());
}

size_t GraphView::num_readers(int32_t value) const {
  if (!valid(value)) return 0;
  return readers_[static_cast<size_t>(value)] + (graph_outputs_[static_cast<size_t>(value)] ? 1 : 0);
}

bool GraphView::is_graph_output(int32_t value) const { return valid(value) && graph_outputs_[static_cast<size_t>(value)]; }

int64_t GraphView::producer(int32_t value) const { return valid(value) ? producers_[static_cast<size_t>(value)] : -1; }

int64_t num_elements(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::vector<float> GraphView::floats(int32_t index) const {
  std::vector<float> out;
  if (!valid(index)) return out;
  const ir::Value& v = value(index);
  if (v.data() == nullptr || v.dtype() != ir::DType::Float32) return out;
  const int64_t count = num_elements(shape(index));
  if (count < 0 || static_cast<uint64_t>(count) * sizeof(float) != v.data()->size()) return out;
  out.resize(static_cast<size_t>(count));
  if (count > 0) std::memcpy(out.data(), v.data()->data(), out.size() * sizeof(float));
  return out;
}

std::optional<std::vector<int64_t>> GraphView::ints(int32_t index) const {
  if (!valid(index)) return std::nullopt;
  const ir::Value& v = value(index);
  if (v.data() == nullptr) return std::nullopt;
  const int64_t count = num_elements(shape(index));
  // The data must hold exactly the shape's elements before anything is allocated for
  // them: the shape alone may claim far more than the buffer holds.
  const size_t element_size = v.dtype() == ir::DType::Int64 ? 8 : v.dtype() == ir::DType::Int32 ? 4 : 0;
  if (count < 0 || element_size == 0 || v.data()->size() / element_size != static_cast<uint64_t>(count) ||
      v.data()->size() % element_size != 0) {
    return std::nullopt;
  }
  std::vector<int64_t> out(static_cast<size_t>(count));
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

std::optional<float> GraphView::scalar(int32_t index) const {
  if (!is_constant(index) || !is_float(index)) return std::nullopt;
  const std::vector<float> data = floats(index);
  if (data.size() != 1) return std::nullopt;
  return data[0];
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
  return node.outputs() != nullptr && i < node.outputs()->size() ? node.outputs()->Get(static_cast<flatbuffers::uoffset_t>(i))
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

}  // namespace plugrt::onednn
