// SPDX-License-Identifier: Apache-2.0
#include "dynamic_writer.h"

#include <map>
#include <set>

#include "qdq_writer.h"

namespace plugrt::quantizer {

namespace {

/// DynamicQuantizeLinear of `x`, once per activation.
void quantize_activation(const std::string& x, std::set<std::string>* done, std::vector<onnx::NodeProto>* nodes) {
  if (!done->insert(x).second) return;
  nodes->push_back(make_node("DynamicQuantizeLinear", {x}, {x + "_quantized", x + "_scale", x + "_zero_point"},
                             x + "_DynamicQuantizeLinear"));
}

void write_matmul(onnx::GraphProto* graph, const Candidate& c, std::vector<onnx::NodeProto>* nodes) {
  const onnx::NodeProto& node = graph->node(static_cast<int>(c.node));
  FloatConstant weights;
  float_initializer(*graph, node.input(1), &weights);
  const QuantizedWeights q = quantize_weights(weights, 1);
  const std::string w = c.node_output + "_weight", y = c.node_output, x = c.input;
  const std::vector<int64_t> columns{weights.shape[1]};
  const std::vector<int8_t> zeros(q.scales.size(), 0);
  add_initializer(graph, w + "_quantized", onnx::TensorProto::INT8, weights.shape, q.values.data(), q.values.size());
  add_float_initializer(graph, w + "_scale", q.scales, columns);
  add_initializer(graph, w + "_zero_point", onnx::TensorProto::INT8, columns, zeros.data(), zeros.size());
  nodes->push_back(make_node("MatMulInteger",
                             {x + "_quantized", w + "_quantized", x + "_zero_point", w + "_zero_point"}, {y + "_int32"},
                             c.name));
  onnx::NodeProto cast = make_node("Cast", {y + "_int32"}, {y + "_unscaled"}, c.name + "_Cast");
  set_int_attribute(&cast, "to", onnx::TensorProto::FLOAT);
  nodes->push_back(cast);
  nodes->push_back(make_node("Mul", {x + "_scale", w + "_scale"}, {y + "_scale"}, c.name + "_scale_Mul"));
  nodes->push_back(make_node("Mul", {y + "_unscaled", y + "_scale"}, {y}, c.name + "_Mul"));
}

}  // namespace

size_t write_dynamic(onnx::GraphProto* graph, const std::vector<Candidate>& chosen) {
  std::map<size_t, const Candidate*> by_node;
  for (const Candidate& c : chosen) {
    if (c.op_type == "MatMul") by_node[c.node] = &c;
  }
  std::vector<onnx::NodeProto> nodes;
  std::set<std::string> quantized;
  for (int i = 0; i < graph->node_size(); ++i) {
    auto found = by_node.find(static_cast<size_t>(i));
    if (found == by_node.end()) {
      nodes.push_back(graph->node(i));
      continue;
    }
    quantize_activation(found->second->input, &quantized, &nodes);
    write_matmul(graph, *found->second, &nodes);
  }
  graph->clear_node();
  for (onnx::NodeProto& node : nodes) *graph->add_node() = std::move(node);
  drop_unread_initializers(graph);
  return by_node.size();
}

}  // namespace plugrt::quantizer
