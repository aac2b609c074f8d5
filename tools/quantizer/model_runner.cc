// SPDX-License-Identifier: Apache-2.0
#include "model_runner.h"

#include <map>
#include <set>

#include "compiler.h"
#include "plugrt/common/graph_ir.h"

namespace plugrt::quantizer {

namespace {

std::string dims_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

/// `model` with each of `tensors` that is not yet an output made one, at its shape in
/// `shapes` (float32).
onnx::ModelProto with_outputs(const onnx::ModelProto& model, const std::vector<std::string>& tensors,
                              const ValueShapes& shapes) {
  onnx::ModelProto copy = model;
  std::set<std::string> outputs;  // and the inputs, which are read from the samples
  for (const onnx::ValueInfoProto& output : copy.graph().output()) outputs.insert(output.name());
  for (const onnx::ValueInfoProto& input : copy.graph().input()) outputs.insert(input.name());
  for (const std::string& name : tensors) {
    if (!outputs.insert(name).second) continue;
    onnx::ValueInfoProto* output = copy.mutable_graph()->add_output();
    output->set_name(name);
    onnx::TypeProto::Tensor* type = output->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto::FLOAT);
    type->mutable_shape();
    auto shape = shapes.find(name);
    if (shape == shapes.end()) continue;  // the import says what is wrong
    for (int64_t d : shape->second) type->mutable_shape()->add_dim()->set_dim_value(d);
  }
  return copy;
}

/// Whether a declared input has a dimension without a fixed size.
bool dynamic(const onnx::ValueInfoProto& input) {
  for (const onnx::TensorShapeProto::Dimension& d : input.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return true;
  }
  return false;
}

/// `model` imported, each input with dynamic dimensions at the shape of `example`'s array
/// (a static one is checked against the sample when it runs). A shape that does not fit
/// is an error naming the sample's file.
Result<compiler::ImportedModel> import_model(const onnx::ModelProto& model, const Sample& example,
                                             const std::string& origin) {
  compiler::ImportOptions options;
  compiler::InputShapeProblem problem;
  options.input_shape_problem = &problem;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    auto found = example.inputs.find(input.name());
    if (found != example.inputs.end() && dynamic(input)) options.input_shapes[input.name()] = found->second.shape;
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) return Status(Error::kInvalidArgument, origin + ": cannot serialize the model");
  Result<compiler::ImportedModel> imported = compiler::import_onnx_bytes(
      Span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), origin, options);
  if (!imported.is_ok() && problem.kind == compiler::InputShapeProblem::Kind::kShapeRefused) {
    const std::string file = example.files.count(problem.input) ? example.files.at(problem.input) : origin;
    return Status(Error::kInvalidArgument, file + ": does not fit the model: " + problem.reason);
  }
  return imported;
}

Result<std::vector<uint8_t>> compile_portable(const onnx::ModelProto& model, const Sample& example, Registry& registry,
                                              const std::string& origin) {
  PLUGRT_ASSIGN_OR_RETURN(compiler::ImportedModel imported, import_model(model, example, origin));
  compiler::CompileOptions options;
  options.backends = {"portable"};
  options.producer = "plugrt quantize";
  Result<compiler::CompiledModel> compiled = compiler::compile_graph(imported.graph, registry, options);
  if (!compiled.is_ok()) return compiled.status().with_context(origin);
  return std::move(compiled->program);
}

Status set_inputs(Method& method, const Sample& sample) {
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    const TensorSpec& spec = method.input_spec(i);
    auto found = sample.inputs.find(spec.name);
    if (found == sample.inputs.end()) {
      return Status(Error::kInvalidArgument, "the calibration sample has no value for input '" + spec.name + "'");
    }
    tools::NpyArray array = found->second;
    const std::string& file = sample.files.at(spec.name);
    if (array.dtype != spec.dtype || array.shape != spec.shape) {
      return Status(Error::kInvalidArgument, file + ": " + std::string(to_string(array.dtype)) + " " +
                                                 dims_text(array.shape) + " does not fit input '" + spec.name +
                                                 "' of the model (" + std::string(to_string(spec.dtype)) + " " +
                                                 dims_text(spec.shape) + ")");
    }
    PLUGRT_RETURN_IF_ERROR(method.set_input(i, tools::dltensor_view(array)).with_context(file));
  }
  return Status::ok();
}

void visit_values(const Method& method, size_t sample, const Sample& values, const std::set<std::string>& wanted,
                  const TensorVisitor& visit) {
  for (const auto& [name, array] : values.inputs) {
    if (wanted.count(name) == 0 || array.dtype != DType::kFloat32) continue;
    visit(sample, name, Span<const float>(reinterpret_cast<const float*>(array.data.data()), array.data.size() / 4));
  }
  for (size_t i = 0; i < method.num_outputs(); ++i) {
    const TensorSpec& spec = method.output_spec(i);
    if (wanted.count(spec.name) == 0 || spec.dtype != DType::kFloat32) continue;
    const DLTensor& tensor = method.output(i);
    size_t count = 1;
    for (int d = 0; d < tensor.ndim; ++d) count *= static_cast<size_t>(tensor.shape[d]);
    visit(sample, spec.name, Span<const float>(static_cast<const float*>(tensor.data), count));
  }
}

}  // namespace

Result<ValueShapes> value_shapes(const onnx::ModelProto& model, const Sample& example, const std::string& origin) {
  PLUGRT_ASSIGN_OR_RETURN(compiler::ImportedModel imported, import_model(model, example, origin));
  const ir::Graph* graph = common::verified_graph(imported.graph.data(), imported.graph.size());
  if (graph == nullptr) return Status(Error::kInternal, origin + ": the imported graph does not verify");
  ValueShapes shapes;
  for (size_t i = 0; i < common::num_values(*graph); ++i) {
    const ir::Value* value = common::value_at(*graph, static_cast<int32_t>(i));
    if (value != nullptr && value->name() != nullptr) shapes[value->name()->str()] = common::shape_of(*value);
  }
  return shapes;
}

Result<std::unique_ptr<ModelRunner>> ModelRunner::make(const onnx::ModelProto& model,
                                                       const std::vector<std::string>& tensors,
                                                       const ValueShapes& shapes, const Sample& example,
                                                       Registry& registry, const std::string& origin) {
  PLUGRT_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                          compile_portable(with_outputs(model, tensors, shapes), example, registry, origin));
  std::unique_ptr<ModelRunner> runner(new ModelRunner());
  runner->origin_ = origin;
  runner->wanted_.insert(tensors.begin(), tensors.end());
  PLUGRT_ASSIGN_OR_RETURN(Program program,
                          Program::from_bytes(Span<const uint8_t>(bytes.data(), bytes.size()), origin));
  runner->program_.emplace(std::move(program));
  PLUGRT_ASSIGN_OR_RETURN(Method method, Method::load(*runner->program_, "forward", registry));
  runner->method_.emplace(std::move(method));
  return runner;
}

Status ModelRunner::run(const Sample& sample, size_t index, const TensorVisitor& visit) {
  PLUGRT_RETURN_IF_ERROR(set_inputs(*method_, sample));
  PLUGRT_RETURN_IF_ERROR(method_->execute().with_context(origin_));
  visit_values(*method_, index, sample, wanted_, visit);
  return Status::ok();
}

}  // namespace plugrt::quantizer
