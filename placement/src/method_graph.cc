// SPDX-License-Identifier: Apache-2.0
#include "plugrt/placement/method_graph.h"

#include <string>

#include "editable_graph.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/schema/graph_ir_generated.h"

namespace plugrt::placement {

namespace {

using flatbuffers::uoffset_t;

std::vector<int64_t> shape_of(const ir::Value& value) {
  return value.shape() != nullptr ? std::vector<int64_t>(value.shape()->begin(), value.shape()->end())
                                  : std::vector<int64_t>();
}

std::string label(const DelegateContents& delegate) {
  return "delegate '" + delegate.name + "' (" + delegate.backend + ")";
}

std::string dims_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// The graph's inputs and outputs must be what the program declares of the values its
/// instruction passes (dtype, and shape where neither side varies): placed again, the
/// method runs the graph, so a graph that says otherwise would silently run other shapes.
Status check_interface(const MethodContents& method, const DelegateContents& delegate, const ir::Graph& graph) {
  auto check = [&](const flatbuffers::Vector<int32_t>* ends, const std::vector<uint32_t>& values,
                   const char* role) -> Status {
    for (size_t i = 0; i < values.size(); ++i) {
      const int32_t index = ends != nullptr && i < ends->size() ? ends->Get(static_cast<uoffset_t>(i)) : -1;
      const ir::Value* value =
          graph.values() != nullptr && index >= 0 && static_cast<uoffset_t>(index) < graph.values()->size()
              ? graph.values()->Get(static_cast<uoffset_t>(index))
              : nullptr;
      if (value == nullptr || values[i] >= method.values.size()) {
        return Status(Error::kInvalidProgram, label(delegate) + ": its portable graph's " + role + " " +
                                                  std::to_string(i) + " is out of range");
      }
      const TensorSpec& declared = method.values[values[i]];
      const bool varies = declared.varies() || (value->dims() != nullptr && value->dims()->size() > 0);
      const std::vector<int64_t> shape = shape_of(*value);
      if (static_cast<DType>(value->dtype()) != declared.dtype || (!varies && shape != declared.shape)) {
        return Status(Error::kInvalidProgram,
                      label(delegate) + ": its portable graph's " + role + " " + std::to_string(i) + " is " +
                          std::string(to_string(static_cast<DType>(value->dtype()))) + " " + dims_text(shape) +
                          ", but the program declares '" + declared.name + "' " +
                          std::string(to_string(declared.dtype)) + " " + dims_text(declared.shape));
      }
    }
    return Status::ok();
  };
  PLUGRT_RETURN_IF_ERROR(check(graph.inputs(), delegate.inputs, "input"));
  return check(graph.outputs(), delegate.outputs, "output");
}

}  // namespace

Result<MethodGraph> method_graph(const MethodContents& method) {
  for (const DelegateContents& delegate : method.delegates) {
    if (delegate.portable_graph.empty()) {
      return Status(Error::kNotSupported, label(delegate) + " keeps no portable graph (compiled without fallbacks)");
    }
    // The portable backend's own check: a verified buffer, every index in bounds.
    Result<std::vector<std::string>> checked = portable_node_support(delegate.portable_graph);
    if (!checked.is_ok()) {
      return Status(Error::kInvalidProgram, label(delegate) + ": its portable graph: " + checked.status().message());
    }
    const ir::Graph& graph = *ir::GetGraph(delegate.portable_graph.data());
    const size_t num_inputs = graph.inputs() != nullptr ? graph.inputs()->size() : 0;
    const size_t num_outputs = graph.outputs() != nullptr ? graph.outputs()->size() : 0;
    if (num_inputs != delegate.inputs.size() || num_outputs != delegate.outputs.size()) {
      return Status(Error::kInvalidProgram, label(delegate) + ": its portable graph has " + std::to_string(num_inputs) +
                                                " inputs and " + std::to_string(num_outputs) +
                                                " outputs, its instruction " + std::to_string(delegate.inputs.size()) +
                                                " and " + std::to_string(delegate.outputs.size()));
    }
    PLUGRT_RETURN_IF_ERROR(check_interface(method, delegate, graph));
  }
  MethodGraph result;
  if (method.delegates.size() == 1 && method.delegates[0].inputs == method.inputs &&
      method.delegates[0].outputs == method.outputs) {
    result.bytes = method.delegates[0].portable_graph;
    return result;
  }

  // Join the delegates' graphs: their inputs and outputs become the method's values.
  int opset = 0;
  for (const DelegateContents& delegate : method.delegates) {
    const int delegate_opset = ir::GetGraph(delegate.portable_graph.data())->opset();
    if (opset != 0 && delegate_opset != opset) {
      return Status(Error::kNotSupported, label(delegate) + " follows opset " + std::to_string(delegate_opset) +
                                              ", an earlier delegate opset " + std::to_string(opset));
    }
    opset = delegate_opset;
  }
  GraphBuilder builder(opset != 0 ? opset : 17);
  // Dimensions that vary: every partition graph carries the whole method's symbols.
  const ir::Graph& first = *ir::GetGraph(method.delegates.front().portable_graph.data());
  builder.copy_symbols(first);
  const size_t num_symbols = first.symbols() != nullptr ? first.symbols()->size() : 0;
  for (const DelegateContents& delegate : method.delegates) {
    const ir::Graph& graph = *ir::GetGraph(delegate.portable_graph.data());
    if ((graph.symbols() != nullptr ? graph.symbols()->size() : 0) != num_symbols) {
      return Status(Error::kNotSupported, label(delegate) + " has other symbols than the first delegate");
    }
  }
  std::vector<ValueId> method_value(method.values.size(), kNoValue);
  auto value_of = [&](uint32_t v) {
    if (method_value[v] == kNoValue) {
      const TensorSpec& spec = method.values[v];
      if (!method.constants[v].empty()) {
        method_value[v] =
            builder.add_constant(spec.name, spec.dtype, spec.shape,
                                 std::vector<uint8_t>(method.constants[v].begin(), method.constants[v].end()));
      } else if (spec.varies()) {
        std::vector<common::DimExpr> dims;
        for (size_t axis = 0; axis < spec.dims.size(); ++axis) {
          dims.push_back(spec.dims[axis].empty() ? common::DimExpr::constant(spec.shape[axis])
                                                 : common::DimExpr::from_words(spec.dims[axis]));
        }
        method_value[v] = builder.add_dynamic_value(spec.name, spec.dtype, std::move(dims));
      } else {
        method_value[v] = builder.add_value(spec.name, spec.dtype, spec.shape);
      }
    }
    return method_value[v];
  };
  for (uint32_t v : method.inputs) builder.add_input(value_of(v));
  for (const DelegateContents& delegate : method.delegates) {
    const ir::Graph& graph = *ir::GetGraph(delegate.portable_graph.data());
    std::vector<ValueId> local(graph.values()->size(), kNoValue);
    for (uoffset_t k = 0; k < graph.inputs()->size(); ++k) local[graph.inputs()->Get(k)] = value_of(delegate.inputs[k]);
    for (uoffset_t v = 0; v < graph.values()->size(); ++v) {
      const ir::Value& value = *graph.values()->Get(v);
      if (value.data() == nullptr) continue;
      local[v] = builder.add_constant(value.name() != nullptr ? value.name()->str() : std::string(),
                                      static_cast<DType>(value.dtype()), shape_of(value),
                                      std::vector<uint8_t>(value.data()->begin(), value.data()->end()));
    }
    for (uoffset_t k = 0; k < graph.outputs()->size(); ++k) {
      const int32_t v = graph.outputs()->Get(k);
      const ValueId target = value_of(delegate.outputs[k]);
      if (local[static_cast<size_t>(v)] == kNoValue) {
        local[static_cast<size_t>(v)] = target;
      } else {  // an input, a constant or an output named twice: copied to where the method expects it
        builder.add_node("Identity", delegate.name + "/output_" + std::to_string(k), {local[static_cast<size_t>(v)]},
                         {target});
      }
    }
    for (const ir::Node* node : *graph.nodes()) {
      std::vector<ValueId> inputs, outputs;
      if (node->inputs() != nullptr) {
        for (int32_t v : *node->inputs()) {
          if (v >= 0 && local[static_cast<size_t>(v)] == kNoValue) {
            return Status(Error::kInvalidProgram, label(delegate) + ": a node reads a value before it is written");
          }
          inputs.push_back(v < 0 ? kNoValue : local[static_cast<size_t>(v)]);
        }
      }
      for (int32_t v : *node->outputs()) {
        if (local[static_cast<size_t>(v)] == kNoValue) {
          local[static_cast<size_t>(v)] = builder.copy_value(*graph.values()->Get(static_cast<uoffset_t>(v)));
        }
        outputs.push_back(local[static_cast<size_t>(v)]);
      }
      std::vector<Attribute> attributes;
      if (node->attributes() != nullptr) {
        for (const ir::Attribute* a : *node->attributes()) attributes.push_back(read_attribute(*a));
      }
      builder.add_node(node->op_type()->str(), node->name() != nullptr ? node->name()->str() : std::string(),
                       std::move(inputs), std::move(outputs), std::move(attributes));
    }
  }
  for (uint32_t v : method.outputs) builder.add_output(value_of(v));
  result.storage = builder.finish();
  result.bytes = result.storage;
  return result;
}

}  // namespace plugrt::placement
