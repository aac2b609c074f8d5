// SPDX-License-Identifier: Apache-2.0
// Bundled models (models/) quantized end to end with calibration data written here: the
// QDQ model passes ONNX's checker, compiles with its groups on oneDNN as QLinearConv,
// agrees with the float model, and runs alike on oneDNN and portable.
#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <fstream>

#include "compiler.h"
#include "npy.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/method.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "quantizer.h"

namespace plugrt::quantizer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kModels = PLUGRT_MODELS_DIR;

std::vector<float> reproducible(size_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = normal(engine);
  return values;
}

tools::NpyArray float_array(const std::vector<float>& values, const std::vector<int64_t>& shape) {
  tools::NpyArray array{DType::kFloat32, shape, std::vector<uint8_t>(values.size() * 4)};
  std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

size_t element_count(const std::vector<int64_t>& shape) {
  size_t count = 1;
  for (int64_t d : shape) count *= static_cast<size_t>(d);
  return count;
}

/// TempDir()/plugrt_quantizer_<pid>_<name>: each test process has its own files.
std::string temp_path(const std::string& name) {
  return (fs::path(::testing::TempDir()) / ("plugrt_quantizer_" + std::to_string(getpid()) + "_" + name)).string();
}

/// A fresh directory of `samples` seeded normal inputs of `shape` (DIR/*.npy).
std::string write_calibration(const std::string& name, const std::vector<int64_t>& shape, size_t samples) {
  const fs::path dir = temp_path("calibration_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (size_t s = 0; s < samples; ++s) {
    const auto array = float_array(reproducible(element_count(shape), 100 + static_cast<uint32_t>(s)), shape);
    EXPECT_TRUE(tools::write_npy((dir / ("sample" + std::to_string(s) + ".npy")).string(), array).is_ok());
  }
  return dir.string();
}

onnx::ModelProto load_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromIstream(&in)) << path;
  return model;
}

void save_model(const onnx::ModelProto& model, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(model.SerializeToOstream(&out)) << path;
}

size_t count_ops(const onnx::ModelProto& model, const std::string& op_type) {
  size_t count = 0;
  for (const onnx::NodeProto& node : model.graph().node()) count += node.op_type() == op_type ? 1 : 0;
  return count;
}

class QuantizeModels : public ::testing::Test {
 public:
  void SetUp() override {
    ASSERT_TRUE(register_builtin_backends(registry_).is_ok());
    onednn_ = PLUGRT_ONEDNN_PLUGIN_FILE;
    if (onednn_.empty()) return;
    Result<PluginId> loaded = loader_.load(onednn_);
    ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  }

  /// Removes what this process wrote (temp_path()).
  void TearDown() override {
    const std::string prefix = fs::path(temp_path("")).filename().string();
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(::testing::TempDir(), error)) {
      if (entry.path().filename().string().rfind(prefix, 0) == 0) fs::remove_all(entry.path(), error);
    }
  }

  Result<QuantizeReport> quantize(QuantizeOptions options) { return quantize_model(options, registry_); }

  compiler::CompiledModel compile(const std::string& path, const std::vector<std::string>& backends) {
    compiler::CompileOptions options;
    options.backends = backends;
    Result<compiler::CompiledModel> compiled = compiler::compile_onnx_file(path, registry_, options);
    EXPECT_TRUE(compiled.is_ok()) << compiled.status().to_string();
    return compiled.is_ok() ? std::move(*compiled) : compiler::CompiledModel{};
  }

  /// Every output of the program on `input`, by name.
  std::map<std::string, std::vector<float>> run(const compiler::CompiledModel& compiled, std::vector<float> input) {
    std::map<std::string, std::vector<float>> outputs;
    Result<Program> program = Program::from_bytes(compiled.program, "quantized.prt");
    EXPECT_TRUE(program.is_ok()) << program.status().to_string();
    if (!program.is_ok()) return outputs;
    Result<Method> method = Method::load(*program, "forward", registry_);
    EXPECT_TRUE(method.is_ok()) << method.status().to_string();
    if (!method.is_ok()) return outputs;
    std::vector<int64_t> shape = method->input_spec(0).shape;
    EXPECT_EQ(element_count(shape), input.size());
    DLTensor tensor{
        input.data(), {kDLCPU, 0}, static_cast<int32_t>(shape.size()), {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
    EXPECT_TRUE(method->set_input(0, tensor).is_ok());
    Status status = method->execute();
    EXPECT_TRUE(status.is_ok()) << status.to_string();
    for (size_t i = 0; i < method->num_outputs(); ++i) {
      const float* data = static_cast<const float*>(method->output(i).data);
      outputs[method->output_spec(i).name].assign(data, data + method->output_spec(i).num_bytes() / 4);
    }
    return outputs;
  }

 protected:
  Registry registry_;
  plugins::PluginLoader loader_{registry_, plugins::SearchPathOptions::explicit_files_only()};
  std::string onednn_;
};

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
  return ab / std::sqrt(aa * bb);
}

const std::vector<int64_t> kCnnInput{1, 3, 32, 32};

QuantizeOptions cnn_options(const std::string& name) {
  QuantizeOptions options;
  options.model = kModels + "/tiny_cnn.onnx";
  options.output = temp_path(name + ".int8.onnx");
  options.calibrate = write_calibration(name, kCnnInput, 8);
  return options;
}

/// The float and the quantized tiny_cnn agree on an input the calibration did not see.
void expect_agrees_with_float(QuantizeModels& test, const std::string& quantized) {
  const std::vector<float> input = reproducible(element_count(kCnnInput), 9);
  auto expected = test.run(test.compile(kModels + "/tiny_cnn.onnx", {"portable"}), input);
  auto actual = test.run(test.compile(quantized, {"portable"}), input);
  ASSERT_EQ(actual.count("output"), 1u);
  EXPECT_GE(cosine(expected["output"], actual["output"]), 0.99);
}

TEST_F(QuantizeModels, TinyCnnBecomesValidQdqThatAgreesWithFloat) {
  const QuantizeOptions options = cnn_options("tiny_cnn_minmax");
  Result<QuantizeReport> report = quantize(options);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->samples, 8u);
  ASSERT_EQ(report->nodes.size(), 6u);  // five Convs and the classifier's Gemm
  EXPECT_EQ(report->nodes.back().op_type, "Gemm");
  for (const NodeReport& row : report->nodes) {
    EXPECT_TRUE(row.quantized) << row.node;
    EXPECT_GT(row.cosine, 0.99) << row.node;
  }
  ASSERT_EQ(report->outputs.size(), 1u);  // the model's own output, measured too
  EXPECT_EQ(report->outputs[0].output, "output");
  EXPECT_GT(report->outputs[0].cosine, 0.99);
  EXPECT_NO_THROW(onnx::checker::check_model(options.output));
  const onnx::ModelProto model = load_model(options.output);
  EXPECT_EQ(count_ops(model, "Conv"), 5u);
  EXPECT_EQ(count_ops(model, "Relu"), 0u);  // both folded into their Conv's output quantization
  EXPECT_EQ(count_ops(model, "Clip"), 0u);  // a ReLU6, folded the same way
  EXPECT_EQ(count_ops(model, "Gemm"), 0u);
  // Every group written is one the importer's QDQ pass turns into an integer op.
  std::map<std::string, size_t> ops;
  for (const auto& p : compile(options.output, {"portable"}).summary.partitions) {
    for (const auto& [op, count] : p.op_counts) ops[op] += count;
  }
  EXPECT_EQ(ops["QLinearConv"], 5u);
  EXPECT_EQ(ops["QLinearMatMul"], 1u);
  EXPECT_EQ(ops.count("Conv") + ops.count("MatMul"), 0u);
  expect_agrees_with_float(*this, options.output);
}

/// Writes the QDQ model at `path` to `probed` with every quantized activation (a
/// DequantizeLinear's output) also an output; returns each one's scale.
std::map<std::string, float> probe_quantized_activations(const std::string& path, const std::string& probed) {
  onnx::ModelProto model = load_model(path);
  onnx::ModelProto inferred = model;
  onnx::shape_inference::InferShapes(inferred);
  std::map<std::string, onnx::TypeProto> types;
  for (const onnx::ValueInfoProto& info : inferred.graph().value_info()) types[info.name()] = info.type();
  std::map<std::string, float> scales;
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (node.op_type() != "DequantizeLinear" || node.input(0) != node.output(0) + "_quantized") continue;
    for (const onnx::TensorProto& tensor : model.graph().initializer()) {
      if (tensor.name() == node.input(1)) std::memcpy(&scales[node.output(0)], tensor.raw_data().data(), 4);
    }
    onnx::ValueInfoProto* output = model.mutable_graph()->add_output();
    output->set_name(node.output(0));
    *output->mutable_type() = types.at(node.output(0));
  }
  save_model(model, probed);
  return scales;
}

TEST_F(QuantizeModels, EachConvBecomesQLinearConvOnOnednnWithinOneQuantumOfPortable) {
  if (onednn_.empty()) GTEST_SKIP() << "the onednn plugin is not built (PLUGRT_BUILD_ONEDNN is off)";
  for (bool int8 : {false, true}) {
    SCOPED_TRACE(int8 ? "int8 activations" : "uint8 activations");
    QuantizeOptions options = cnn_options(int8 ? "tiny_cnn_onednn_int8" : "tiny_cnn_onednn");
    options.int8_activations = int8;
    ASSERT_TRUE(quantize(options).is_ok());
    const std::string probed = temp_path(int8 ? "tiny_cnn_probed_int8.onnx" : "tiny_cnn_probed.onnx");
    const std::map<std::string, float> scales = probe_quantized_activations(options.output, probed);
    const compiler::CompiledModel on_onednn = compile(probed, {"onednn"});
    size_t qlinear_on_onednn = 0;
    for (const compiler::PartitionSummary& p : on_onednn.summary.partitions) {
      if (p.backend == "onednn" && p.op_counts.count("QLinearConv") != 0) {
        qlinear_on_onednn += p.op_counts.at("QLinearConv");
      }
    }
    EXPECT_EQ(qlinear_on_onednn, 5u);
    const std::vector<float> input = reproducible(element_count(kCnnInput), 11);
    auto onednn = run(on_onednn, input);
    auto portable = run(compile(probed, {"portable"}), input);
    ASSERT_FALSE(scales.empty());
    for (const auto& [name, scale] : scales) {
      ASSERT_EQ(onednn[name].size(), portable[name].size()) << name;
      for (size_t i = 0; i < onednn[name].size(); ++i) {
        ASSERT_LE(std::fabs(onednn[name][i] - portable[name][i]), scale * 1.001f) << name << " element " << i;
      }
    }
  }
}

TEST_F(QuantizeModels, Int8ActivationsAgreeWithFloat) {
  QuantizeOptions options = cnn_options("tiny_cnn_int8_activations");
  options.int8_activations = true;
  ASSERT_TRUE(quantize(options).is_ok());
  EXPECT_NO_THROW(onnx::checker::check_model(options.output));
  expect_agrees_with_float(*this, options.output);
}

TEST_F(QuantizeModels, PercentileAndEntropyObserversAgreeWithFloat) {
  for (Observer observer : {Observer::kPercentile, Observer::kEntropy}) {
    QuantizeOptions options =
        cnn_options(observer == Observer::kPercentile ? "tiny_cnn_percentile" : "tiny_cnn_entropy");
    options.observer = observer;
    Result<QuantizeReport> report = quantize(options);
    ASSERT_TRUE(report.is_ok()) << report.status().to_string();
    EXPECT_NO_THROW(onnx::checker::check_model(options.output));
    expect_agrees_with_float(*this, options.output);
  }
}

TEST_F(QuantizeModels, ExcludedNodeStaysFloat) {
  QuantizeOptions options = cnn_options("tiny_cnn_exclude");
  options.exclude = {"/features/features.0/Conv"};
  Result<QuantizeReport> report = quantize(options);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_FALSE(report->nodes.front().quantized);
  EXPECT_EQ(report->nodes.front().reason, "excluded (--exclude)");
  const onnx::ModelProto model = load_model(options.output);
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (node.name() == "/features/features.0/Conv") {
      EXPECT_THAT(node.input(1), ::testing::Not(::testing::EndsWith("_dequantized")));  // float weights
    }
  }
  EXPECT_EQ(count_ops(model, "Relu"), 1u);  // the excluded Conv's
  EXPECT_THAT(report_text(*report), HasSubstr("/features/features.0/Conv\tConv\tno\t-\t-\texcluded (--exclude)"));
  expect_agrees_with_float(*this, options.output);
}

TEST_F(QuantizeModels, NodesAboveTheToleranceStayFloat) {
  QuantizeOptions options = cnn_options("tiny_cnn_tolerance");
  options.tolerance = 1e-9;  // no quantized output is this close
  Result<QuantizeReport> report = quantize(options);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  for (const NodeReport& row : report->nodes) {
    EXPECT_FALSE(row.quantized) << row.node;
    EXPECT_THAT(row.reason, HasSubstr("above the tolerance")) << row.node;
  }
  EXPECT_EQ(count_ops(load_model(options.output), "QuantizeLinear"), 0u);
}

TEST_F(QuantizeModels, DynamicMlpUsesMatMulIntegerAndAgreesWithFloat) {
  QuantizeOptions options;
  options.model = kModels + "/mlp.onnx";
  options.output = temp_path("mlp.dynamic.onnx");
  options.dynamic = true;
  Result<QuantizeReport> report = quantize(options);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_NO_THROW(onnx::checker::check_model(options.output));
  const onnx::ModelProto model = load_model(options.output);
  EXPECT_EQ(count_ops(model, "MatMulInteger"), report->nodes.size());
  EXPECT_GE(count_ops(model, "DynamicQuantizeLinear"), 1u);
  const std::vector<float> input = reproducible(4 * 64, 5);
  auto expected = run(compile(options.model, {"portable"}), input);
  auto actual = run(compile(options.output, {"portable"}), input);
  ASSERT_FALSE(expected.empty());
  for (const auto& [name, values] : expected) EXPECT_GE(cosine(values, actual[name]), 0.99) << name;
  // Given samples, the report measures each node's error.
  options.calibrate = write_calibration("mlp", {4, 64}, 4);
  Result<QuantizeReport> measured = quantize(options);
  ASSERT_TRUE(measured.is_ok()) << measured.status().to_string();
  EXPECT_EQ(measured->samples, 4u);
  for (const NodeReport& row : measured->nodes) {
    EXPECT_EQ(row.op_type, "Gemm");
    EXPECT_GT(row.relative_l2, 0.0) << row.node;
    EXPECT_GT(row.cosine, 0.99) << row.node;
  }
}

/// y = a @ w + b: two inputs, so samples are DIR/<sample>/<input>.npy.
onnx::ModelProto two_input_model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("two_inputs");
  auto declare = [](onnx::ValueInfoProto* value, const std::string& name, std::vector<int64_t> shape) {
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape) tensor->mutable_shape()->add_dim()->set_dim_value(d);
  };
  declare(graph->add_input(), "a", {2, 8});
  declare(graph->add_input(), "b", {2, 4});
  declare(graph->add_output(), "y", {2, 4});
  onnx::TensorProto* w = graph->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(8);
  w->add_dims(4);
  for (float v : reproducible(32, 3)) w->add_float_data(v);
  onnx::NodeProto* matmul = graph->add_node();
  matmul->set_op_type("MatMul");
  matmul->set_name("project");
  matmul->add_input("a");
  matmul->add_input("w");
  matmul->add_output("m");
  onnx::NodeProto* add = graph->add_node();
  add->set_op_type("Add");
  add->add_input("m");
  add->add_input("b");
  add->add_output("y");
  return model;
}

TEST_F(QuantizeModels, SeveralInputsCalibrateFromOneDirectoryPerSample) {
  QuantizeOptions options;
  options.model = temp_path("two_inputs.onnx");
  options.output = temp_path("two_inputs.int8.onnx");
  save_model(two_input_model(), options.model);
  const fs::path dir = temp_path("calibration_two_inputs");
  fs::remove_all(dir);
  for (uint32_t s = 0; s < 4; ++s) {
    const fs::path sample = dir / ("sample" + std::to_string(s));
    fs::create_directories(sample);
    ASSERT_TRUE(tools::write_npy((sample / "a.npy").string(), float_array(reproducible(16, 10 + s), {2, 8})).is_ok());
    ASSERT_TRUE(tools::write_npy((sample / "b.npy").string(), float_array(reproducible(8, 20 + s), {2, 4})).is_ok());
  }
  options.calibrate = dir.string();
  Result<QuantizeReport> report = quantize(options);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->samples, 4u);
  ASSERT_EQ(report->nodes.size(), 1u);
  EXPECT_TRUE(report->nodes[0].quantized);
  EXPECT_GT(report->nodes[0].cosine, 0.99);
  EXPECT_NO_THROW(onnx::checker::check_model(options.output));
  EXPECT_EQ(compile(options.output, {"portable"}).summary.partitions.at(0).op_counts.count("QLinearMatMul"), 1u);
  // A sample without one of the inputs.
  fs::remove(dir / "sample2" / "b.npy");
  EXPECT_THAT(quantize(options).status().message(), HasSubstr("sample2: has no b.npy for input 'b'"));
}

TEST_F(QuantizeModels, BadInputsAreRefusedNamingTheFileAndReason) {
  QuantizeOptions options = cnn_options("tiny_cnn_bad");
  options.calibrate = temp_path("no_such_dir");
  EXPECT_THAT(quantize(options).status().message(), HasSubstr("no_such_dir: not a calibration directory"));
  // A sample of the wrong shape.
  const fs::path wrong = temp_path("calibration_wrong_shape");
  fs::create_directories(wrong);
  ASSERT_TRUE(tools::write_npy((wrong / "a.npy").string(), float_array(std::vector<float>(12), {1, 3, 2, 2})).is_ok());
  options.calibrate = wrong.string();
  EXPECT_THAT(quantize(options).status().message(),
              HasSubstr("a.npy: float32 [1,3,2,2] does not fit input 'input' of the model (float32 [1,3,32,32])"));
  // A sample directory whose file names no input.
  const fs::path named = fs::path(temp_path("calibration_wrong_name")) / "sample0";
  fs::create_directories(named);
  ASSERT_TRUE(
      tools::write_npy((named / "image.npy").string(), float_array(std::vector<float>(12), {1, 3, 2, 2})).is_ok());
  options.calibrate = named.parent_path().string();
  EXPECT_THAT(quantize(options).status().message(),
              HasSubstr("image.npy: names no input of the model (its inputs: 'input')"));
  options.calibrate = write_calibration("tiny_cnn_bad", kCnnInput, 2);
  options.exclude = {"no_such_node"};
  EXPECT_THAT(quantize(options).status().message(), HasSubstr("--exclude: the model has no node named 'no_such_node'"));
  options.exclude.clear();
  options.model = temp_path("missing.onnx");
  EXPECT_THAT(quantize(options).status().message(), HasSubstr("missing.onnx: cannot read the model"));
}

}  // namespace
}  // namespace plugrt::quantizer
