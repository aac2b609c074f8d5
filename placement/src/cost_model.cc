// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/cost_model.h"

#include <cstdint>
#include <string_view>

#include "plugrt/schema/graph_ir_generated.h"
#include "value_size.h"

namespace plugrt::placement {

namespace {

using flatbuffers::uoffset_t;

const ir::Value* input_value(const ir::Graph& graph, const ir::Node& node, size_t i) {
  if (node.inputs() == nullptr || i >= node.inputs()->size()) return nullptr;
  const int32_t v = node.inputs()->Get(static_cast<uoffset_t>(i));
  if (v < 0 || static_cast<uoffset_t>(v) >= graph.values()->size()) return nullptr;
  return graph.values()->Get(static_cast<uoffset_t>(v));
}

/// Product of dims [from, size) of a value's shape (1 when none).
double dims_product(const ir::Value* value, size_t from) {
  double product = 1;
  if (value == nullptr || value->shape() == nullptr) return product;
  for (size_t d = from; d < value->shape()->size(); ++d) {
    product *= static_cast<double>(value->shape()->Get(static_cast<uoffset_t>(d)));
  }
  return product;
}

int64_t dim(const ir::Value* value, int64_t index) {
  if (value == nullptr || value->shape() == nullptr) return 1;
  const auto rank = static_cast<int64_t>(value->shape()->size());
  if (index < 0) index += rank;
  if (index < 0 || index >= rank) return 1;
  return value->shape()->Get(static_cast<uoffset_t>(index));
}

const ir::Attribute* attribute(const ir::Node& node, std::string_view name) {
  if (node.attributes() == nullptr) return nullptr;
  for (const ir::Attribute* a : *node.attributes()) {
    if (a->name()->string_view() == name) return a;
  }
  return nullptr;
}

void append_value(std::string& out, const ir::Value* value) {
  if (value == nullptr) {
    out += "-";
    return;
  }
  out += std::to_string(static_cast<int>(value->dtype())) + "[";
  if (value->shape() != nullptr) {
    for (size_t d = 0; d < value->shape()->size(); ++d) {
      out += (d ? "," : "") + std::to_string(value->shape()->Get(static_cast<uoffset_t>(d)));
    }
  }
  out += value->data() != nullptr ? "]c" : "]";
}

/// FNV-1a, so that signatures stay short and stable across runs and machines.
uint64_t fnv1a(uint64_t hash, const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

}  // namespace

NodeWork node_work(const ir::Graph& graph, size_t index) {
  const ir::Node& node = *graph.nodes()->Get(static_cast<uoffset_t>(index));
  NodeWork work;
  double out_elements = 0;
  if (node.inputs() != nullptr) {
    for (int32_t v : *node.inputs()) {
      if (v >= 0) work.bytes += static_cast<double>(value_bytes(*graph.values()->Get(static_cast<uoffset_t>(v))));
    }
  }
  if (node.outputs() != nullptr) {
    for (int32_t v : *node.outputs()) {
      if (v < 0) continue;
      const ir::Value& value = *graph.values()->Get(static_cast<uoffset_t>(v));
      work.bytes += static_cast<double>(value_bytes(value));
      out_elements += static_cast<double>(value_elements(value));
    }
  }
  const std::string_view op = node.op_type()->string_view();
  const ir::Value* a = input_value(graph, node, 0);
  const ir::Value* b = input_value(graph, node, 1);
  if (op == "Conv") {
    work.flops = 2 * out_elements * dims_product(b, 1);  // weight [M, C/group, k...]
  } else if (op == "ConvTranspose") {
    work.flops = 2 * dims_product(a, 0) * dims_product(b, 1);  // weight [C, M/group, k...]
  } else if (op == "MatMul") {
    work.flops = 2 * out_elements * static_cast<double>(dim(a, -1));
  } else if (op == "Gemm") {
    const ir::Attribute* trans_a = attribute(node, "transA");
    const bool transposed = trans_a != nullptr && trans_a->i() != 0;
    work.flops = 2 * out_elements * static_cast<double>(dim(a, transposed ? 0 : 1));
  } else if (op == "MaxPool" || op == "AveragePool") {
    double window = 1;
    if (const ir::Attribute* kernel = attribute(node, "kernel_shape"); kernel != nullptr && kernel->ints()) {
      for (int64_t k : *kernel->ints()) window *= static_cast<double>(k);
    }
    work.flops = out_elements * window;
  } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "ReduceMean" || op == "ReduceSum") {
    work.flops = dims_product(a, 0);
  } else if (op == "Softmax" || op == "LayerNormalization" || op == "BatchNormalization" ||
             op == "InstanceNormalization" || op == "Erf" || op == "Gelu" || op == "Tanh" || op == "Sigmoid") {
    work.flops = 8 * out_elements;
  } else {
    work.flops = out_elements;
  }
  return work;
}

double estimated_node_us(const NodeWork& work, bool fallback, const EstimateParameters& parameters) {
  const double body = work.flops / (parameters.gflops * 1e3) + work.bytes / (parameters.gbytes_per_s * 1e3);
  return parameters.node_us + body * (fallback ? parameters.fallback_factor : 1.0);
}

std::string op_signature(const ir::Graph& graph, size_t index) {
  const ir::Node& node = *graph.nodes()->Get(static_cast<uoffset_t>(index));
  std::string out = node.op_type()->str() + "/" + std::to_string(graph.opset()) + "(";
  if (node.inputs() != nullptr) {
    for (size_t i = 0; i < node.inputs()->size(); ++i) {
      if (i) out += ",";
      append_value(out, input_value(graph, node, i));
    }
  }
  out += ")->(";
  if (node.outputs() != nullptr) {
    for (size_t i = 0; i < node.outputs()->size(); ++i) {
      const int32_t v = node.outputs()->Get(static_cast<uoffset_t>(i));
      if (i) out += ",";
      append_value(out, v >= 0 ? graph.values()->Get(static_cast<uoffset_t>(v)) : nullptr);
    }
  }
  out += ")";
  uint64_t hash = 1469598103934665603ull;
  if (node.attributes() != nullptr) {
    for (const ir::Attribute* a : *node.attributes()) {
      hash = fnv1a(hash, a->name()->data(), a->name()->size());
      const auto kind = static_cast<uint8_t>(a->kind());
      hash = fnv1a(hash, &kind, 1);
      const float f = a->f();
      const int64_t i = a->i();
      hash = fnv1a(hash, &f, sizeof f);
      hash = fnv1a(hash, &i, sizeof i);
      if (a->s() != nullptr) hash = fnv1a(hash, a->s()->data(), a->s()->size());
      if (a->floats() != nullptr) hash = fnv1a(hash, a->floats()->data(), a->floats()->size() * sizeof(float));
      if (a->ints() != nullptr) hash = fnv1a(hash, a->ints()->data(), a->ints()->size() * sizeof(int64_t));
    }
  }
  char text[17];
  static const char kHex[] = "0123456789abcdef";
  for (int d = 0; d < 16; ++d) text[d] = kHex[(hash >> (60 - 4 * d)) & 0xf];
  text[16] = '\0';
  return out + "#" + text;
}

}  // namespace plugrt::placement
