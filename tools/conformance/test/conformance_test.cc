// SPDX-License-Identifier: Apache-2.0
// The conformance runner's own parts: comparison and tolerances, reason grouping,
// reading test data (good and bad files), and whole tests in the ONNX test layout built
// here with the onnx protobuf API and run through the real pipeline on portable.
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "compare.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/half_float.h"
#include "plugrt/registry.h"
#include "portable_scope.h"
#include "report.h"
#include "runner.h"
#include "test_data.h"

namespace plugrt::conformance {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ---- Comparison -------------------------------------------------------------------

std::string compare_floats(const std::vector<float>& actual, const std::vector<float>& expected) {
  return compare_elements(DType::kFloat32, {static_cast<int64_t>(actual.size())}, actual.data(), expected.data(),
                          actual.size());
}

TEST(Compare, Float32WithinAbsoluteAndRelativeTolerance) {
  EXPECT_THAT(compare_floats({1.0f, 0.0f, 1000.0f}, {1.0f, 0.0f, 1000.0f}), IsEmpty());
  EXPECT_THAT(compare_floats({1.0009f}, {1.0f}), IsEmpty());     // 9e-4 <= 1e-5 + 1e-3
  EXPECT_THAT(compare_floats({1000.9f}, {1000.0f}), IsEmpty());  // 0.9 <= 1.00001
  EXPECT_THAT(compare_floats({9e-6f}, {0.0f}), IsEmpty());       // atol
  EXPECT_THAT(compare_floats({2e-5f}, {0.0f}), HasSubstr("1 of 1 elements differ"));
  EXPECT_THAT(compare_floats({1.002f}, {1.0f}), HasSubstr("got 1.00199997, expected 1"));
}

TEST(Compare, NanEqualsNanAndInfinitiesMatchBySign) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_THAT(compare_floats({nan, inf, -inf}, {nan, inf, -inf}), IsEmpty());
  EXPECT_THAT(compare_floats({nan}, {0.0f}), HasSubstr("differ"));
  EXPECT_THAT(compare_floats({0.0f}, {nan}), HasSubstr("differ"));
  EXPECT_THAT(compare_floats({-inf}, {inf}), HasSubstr("differ"));
  EXPECT_THAT(compare_floats({3e38f}, {inf}), HasSubstr("differ"));
}

TEST(Compare, ReportsTheFirstMismatchWithItsMultiIndex) {
  const std::vector<int64_t> actual = {0, 1, 2, 3, 4, 99};
  const std::vector<int64_t> expected = {0, 1, 2, 3, 4, 5};
  EXPECT_EQ(compare_elements(DType::kInt64, {2, 3}, actual.data(), expected.data(), 6),
            "1 of 6 elements differ; first at [1, 2] (index 5): got 99, expected 5 (int64: exact)");
  const std::vector<int32_t> a32 = {7, 8};
  const std::vector<int32_t> e32 = {6, 9};
  EXPECT_THAT(compare_elements(DType::kInt32, {2}, a32.data(), e32.data(), 2),
              HasSubstr("2 of 2 elements differ; first at [0] (index 0): got 7, expected 6"));
  const std::vector<int8_t> a8 = {-1};
  const std::vector<int8_t> e8 = {-2};
  EXPECT_THAT(compare_elements(DType::kInt8, {}, a8.data(), e8.data(), 1), HasSubstr("got -1, expected -2"));
}

TEST(Compare, BoolIsExactAndAnyNonZeroByteIsTrue) {
  const std::vector<uint8_t> actual = {0, 2, 1};
  const std::vector<uint8_t> expected = {0, 1, 1};
  EXPECT_THAT(compare_elements(DType::kBool, {3}, actual.data(), expected.data(), 3), IsEmpty());
  const std::vector<uint8_t> wrong = {1, 1, 1};
  EXPECT_THAT(compare_elements(DType::kBool, {3}, wrong.data(), expected.data(), 3),
              HasSubstr("got true, expected false (bool: exact)"));
}

TEST(Compare, Float16IsWidened) {
  EXPECT_EQ(float16_to_float(0x3c00), 1.0f);
  EXPECT_EQ(float16_to_float(0xc000), -2.0f);
  EXPECT_EQ(float16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(float16_to_float(0x7c00)));
  EXPECT_TRUE(std::isnan(float16_to_float(0x7e00)));
  const std::vector<uint16_t> actual = {0x3c00, 0x7e00};
  const std::vector<uint16_t> expected = {0x3c01, 0x7e01};  // 1 + 2^-10 is within 1e-3 + 1e-5
  EXPECT_THAT(compare_elements(DType::kFloat16, {2}, actual.data(), expected.data(), 2), IsEmpty());
}

// ---- Reasons ----------------------------------------------------------------------

TEST(Reasons, NodeNamesNumbersAndShapesAreMasked) {
  EXPECT_EQ(normalize_reason("node 'conv_17' (Conv, opset 13): no chosen backend takes it, and Conv 'conv_17': "
                             "input 0 is int8, expected float32"),
            "node '*' (Conv, opset N): no chosen backend takes it, and Conv '*': input N is int8, expected float32");
  EXPECT_EQ(normalize_reason("node #4 (Concat, opset 11): output 'y' has the dynamic shape [unk__3, 2]"),
            "node #N (Concat, opset N): output '*' has the dynamic shape [...]");
  // Op types and attribute values are causes, not instances: they stay.
  EXPECT_EQ(normalize_reason("the portable backend has no kernel for op type 'Trilu'"),
            "the portable backend has no kernel for op type 'Trilu'");
  EXPECT_EQ(normalize_reason("Resize: mode 'cubic' is not supported"), "Resize: mode 'cubic' is not supported");
  EXPECT_EQ(normalize_reason("scale -1.5e-3 and 2.0"), "scale N and N");
}

TEST(Reasons, ReportGroupsThemAndCountsOps) {
  Report report({"portable"});
  TestResult unsupported;
  unsupported.verdict = Verdict::kUnsupported;
  unsupported.reason = "node 'a' (Foo, opset 13): no kernel";
  report.add(TestCase{"test_a", "node", "/x"}, {"Foo"}, unsupported);
  unsupported.reason = "node 'b' (Foo, opset 12): no kernel";
  report.add(TestCase{"test_b", "node", "/x"}, {"Foo"}, unsupported);
  TestResult passed;
  passed.verdict = Verdict::kPass;
  report.add(TestCase{"test_c", "node", "/x"}, {"Add", "Foo"}, passed);
  EXPECT_EQ(report.summary_line(), "1 passed, 0 failed, 2 skipped");
  ASSERT_EQ(report.unsupported_reasons().size(), 1u);
  EXPECT_EQ(report.unsupported_reasons()[0].first, "node '*' (Foo, opset N): no kernel");
  EXPECT_EQ(report.unsupported_reasons()[0].second, 2u);
  const std::string json = report.to_json();
  EXPECT_THAT(json, HasSubstr("\"Foo\": {\n      \"failed\": 0,\n      \"passed\": 1,\n      \"unsupported\": 2"));
}

TEST(Reasons, OpTableGivesEachOpItsCountsAndItsCommonestReason) {
  Report report({"relu"});
  TestResult failed;
  failed.verdict = Verdict::kFail;
  failed.reason = "output 'y': 2 of 4 elements differ";
  report.add(TestCase{"test_relu", "node", "/x"}, {"Relu"}, failed);
  TestResult unsupported;
  unsupported.verdict = Verdict::kUnsupported;
  unsupported.reason = "partition took 0 of 1 nodes; not: node 'c1' (Conv)";
  report.add(TestCase{"test_conv", "node", "/x"}, {"Conv"}, unsupported);
  TestResult passed;
  passed.verdict = Verdict::kPass;
  report.add(TestCase{"test_relu_2", "node", "/x"}, {"Relu"}, passed);
  std::ostringstream table;
  report.print_ops(table);
  EXPECT_EQ(table.str(),
            "op    passed  failed  unsupported  reason\n"
            "Conv       0       0            1  partition took N of N nodes; not: node '*' (Conv)\n"
            "Relu       1       1            0  FAIL: output '*': N of N elements differ\n");
}

// ---- Test data --------------------------------------------------------------------

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "plugrt_conformance_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  std::string write(const std::string& relative, const std::string& bytes) {
    const fs::path path = fs::path(root_) / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }
  std::string root_;
};

onnx::TensorProto float_tensor(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& values) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor.add_dims(d);
  tensor.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return tensor;
}

onnx::TensorProto int64_tensor(const std::string& name, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) tensor.add_dims(d);
  for (int64_t v : values) tensor.add_int64_data(v);  // typed field, not raw_data
  return tensor;
}

using TensorFiles = TempDir;

TEST_F(TensorFiles, ReadsRawAndTypedData) {
  Result<HostTensor> f = read_tensor_file(write("f.pb", float_tensor("x", {2}, {1.5f, -2.0f}).SerializeAsString()));
  ASSERT_TRUE(f.is_ok()) << f.status().to_string();
  EXPECT_EQ(f->name, "x");
  EXPECT_EQ(f->dtype, DType::kFloat32);
  EXPECT_THAT(f->shape, ElementsAre(2));
  float values[2];
  ASSERT_EQ(f->bytes.size(), sizeof(values));
  std::memcpy(values, f->bytes.data(), sizeof(values));
  EXPECT_EQ(values[1], -2.0f);

  Result<HostTensor> i = read_tensor_file(write("i.pb", int64_tensor("y", {1, 3}, {4, 5, 6}).SerializeAsString()));
  ASSERT_TRUE(i.is_ok()) << i.status().to_string();
  EXPECT_EQ(i->num_elements, 3u);
  int64_t third = 0;
  std::memcpy(&third, i->bytes.data() + 16, 8);
  EXPECT_EQ(third, 6);

  onnx::TensorProto b;
  b.set_data_type(onnx::TensorProto::BOOL);
  b.add_dims(2);
  b.add_int32_data(0);
  b.add_int32_data(5);
  Result<HostTensor> bools = read_tensor_file(write("b.pb", b.SerializeAsString()));
  ASSERT_TRUE(bools.is_ok());
  EXPECT_THAT(bools->bytes, ElementsAre(0, 1));

  onnx::TensorProto scalar = float_tensor("s", {}, {3.0f});
  Result<HostTensor> s = read_tensor_file(write("s.pb", scalar.SerializeAsString()));
  ASSERT_TRUE(s.is_ok());
  EXPECT_THAT(s->shape, IsEmpty());
  EXPECT_EQ(s->num_elements, 1u);
}

TEST_F(TensorFiles, RefusesBadFiles) {
  EXPECT_EQ(read_tensor_file(root_ + "/missing.pb").code(), Error::kAccessFailed);
  EXPECT_EQ(read_tensor_file(write("garbage.pb", std::string("\xff\xff\xff\xff\x0f", 5))).code(),
            Error::kInvalidArgument);
  // An empty file parses as a TensorProto with no element type.
  EXPECT_EQ(read_tensor_file(write("empty.pb", "")).code(), Error::kNotSupported);

  onnx::TensorProto short_raw = float_tensor("x", {3}, {1.0f, 2.0f});
  Result<HostTensor> raw = read_tensor_file(write("short.pb", short_raw.SerializeAsString()));
  EXPECT_EQ(raw.code(), Error::kInvalidArgument);
  EXPECT_THAT(raw.status().message(), HasSubstr("raw_data holds 8 bytes, expected 12"));

  onnx::TensorProto typed = int64_tensor("x", {4}, {1, 2});
  EXPECT_EQ(read_tensor_file(write("typed.pb", typed.SerializeAsString())).code(), Error::kInvalidArgument);

  onnx::TensorProto negative = float_tensor("x", {-1}, {});
  EXPECT_EQ(read_tensor_file(write("negative.pb", negative.SerializeAsString())).code(), Error::kInvalidArgument);

  onnx::TensorProto huge = float_tensor("x", {int64_t{1} << 40, int64_t{1} << 40}, {});
  EXPECT_EQ(read_tensor_file(write("huge.pb", huge.SerializeAsString())).code(), Error::kNotSupported);

  onnx::TensorProto complex;
  complex.set_data_type(onnx::TensorProto::COMPLEX64);
  complex.add_float_data(1.0f);
  complex.add_float_data(0.0f);
  complex.add_dims(1);
  Result<HostTensor> c = read_tensor_file(write("complex.pb", complex.SerializeAsString()));
  EXPECT_EQ(c.code(), Error::kNotSupported);
  EXPECT_THAT(c.status().message(), HasSubstr("complex64"));

  // Doubles are read from double_data, uint64 from uint64_data.
  onnx::TensorProto dbl;
  dbl.set_data_type(onnx::TensorProto::DOUBLE);
  dbl.add_double_data(1.5);
  dbl.add_dims(1);
  Result<HostTensor> d = read_tensor_file(write("double.pb", dbl.SerializeAsString()));
  ASSERT_TRUE(d.is_ok()) << d.status().to_string();
  EXPECT_EQ(d->dtype, DType::kDouble);
  double value = 0;
  std::memcpy(&value, d->bytes.data(), sizeof(value));
  EXPECT_EQ(value, 1.5);
}

TEST_F(TensorFiles, DataSetsMustNumberTheirFilesWithoutGaps) {
  write("t/model.onnx", "");
  write("t/test_data_set_1/input_0.pb", "");
  write("t/test_data_set_1/output_0.pb", "");
  write("t/test_data_set_0/input_0.pb", "");
  write("t/test_data_set_0/input_1.pb", "");
  write("t/test_data_set_0/output_0.pb", "");
  Result<std::vector<DataSet>> sets = list_data_sets(root_ + "/t");
  ASSERT_TRUE(sets.is_ok()) << sets.status().to_string();
  ASSERT_EQ(sets->size(), 2u);
  EXPECT_EQ((*sets)[0].name, "test_data_set_0");
  EXPECT_EQ((*sets)[0].inputs.size(), 2u);

  write("t/test_data_set_2/input_1.pb", "");
  write("t/test_data_set_2/output_0.pb", "");
  EXPECT_EQ(list_data_sets(root_ + "/t").code(), Error::kInvalidArgument);
  EXPECT_EQ(list_data_sets(root_ + "/nothing").code(), Error::kAccessFailed);
}

// ---- Whole tests through the pipeline -----------------------------------------------

onnx::ModelProto make_model(int64_t opset = 13) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("plugrt-conformance-test");
  onnx::OperatorSetIdProto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  model.mutable_graph()->set_name("test");
  return model;
}

void describe(onnx::ValueInfoProto* info, const std::string& name, int32_t elem_type,
              const std::vector<int64_t>& dims) {
  info->set_name(name);
  onnx::TypeProto::Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

void add_node(onnx::ModelProto& model, const std::string& op_type, std::vector<std::string> inputs,
              std::vector<std::string> outputs) {
  onnx::NodeProto* node = model.mutable_graph()->add_node();
  node->set_op_type(op_type);
  node->set_name(op_type + "_node");
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
}

class WholeTests : public TempDir {
 protected:
  void SetUp() override {
    TempDir::SetUp();
    ASSERT_TRUE(register_builtin_backends(registry_).is_ok());
    options_.backends = {"portable"};
  }

  // Writes the test `name` under root_/node and runs it.
  TestResult run(const std::string& name, const onnx::ModelProto& model, const std::vector<onnx::TensorProto>& inputs,
                 const std::vector<onnx::TensorProto>& outputs) {
    const std::string dir = "node/" + name;
    write(dir + "/model.onnx", model.SerializeAsString());
    for (size_t k = 0; k < inputs.size(); ++k) {
      write(dir + "/test_data_set_0/input_" + std::to_string(k) + ".pb", inputs[k].SerializeAsString());
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      write(dir + "/test_data_set_0/output_" + std::to_string(k) + ".pb", outputs[k].SerializeAsString());
    }
    const TestCase test{name, "node", root_ + "/" + dir};
    Result<ModelInfo> info = read_model_info(test.dir + "/model.onnx");
    EXPECT_TRUE(info.is_ok()) << info.status().to_string();
    if (!info.is_ok()) return TestResult{};
    return run_test(test, *info, registry_, options_);
  }

  onnx::ModelProto relu_model() {
    onnx::ModelProto model = make_model();
    describe(model.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {2, 2});
    describe(model.mutable_graph()->add_output(), "y", onnx::TensorProto::FLOAT, {2, 2});
    add_node(model, "Relu", {"x"}, {"y"});
    return model;
  }

  Registry registry_;
  RunOptions options_;
};

TEST_F(WholeTests, PassesAndFailsOnTheValues) {
  const onnx::TensorProto x = float_tensor("x", {2, 2}, {-1.0f, 2.0f, 0.5f, -3.0f});
  TestResult good = run("test_relu_good", relu_model(), {x}, {float_tensor("y", {2, 2}, {0.0f, 2.0f, 0.5f, 0.0f})});
  EXPECT_EQ(good.verdict, Verdict::kPass) << good.reason;
  EXPECT_THAT(good.frozen_inputs, IsEmpty());

  TestResult bad = run("test_relu_bad", relu_model(), {x}, {float_tensor("y", {2, 2}, {0.0f, 2.0f, 0.6f, 0.0f})});
  EXPECT_EQ(bad.verdict, Verdict::kFail);
  EXPECT_THAT(bad.reason, HasSubstr("output 'y': 1 of 4 elements differ; first at [1, 0] (index 2): got 0.5, "
                                    "expected 0.600000024"));

  TestResult shape = run("test_relu_shape", relu_model(), {x}, {float_tensor("y", {4}, {0.0f, 2.0f, 0.5f, 0.0f})});
  EXPECT_EQ(shape.verdict, Verdict::kFail);
  EXPECT_THAT(shape.reason, HasSubstr("output 'y': the method gives float32[2, 2], expected float32[4]"));

  // Data that contradicts the model's own static input shape cannot be run as written
  // (ONNX 1.12's CastLike to bfloat16 tests are such): unsupported, with the reason.
  TestResult fed = run("test_relu_fed", relu_model(), {float_tensor("x", {4}, {1, 2, 3, 4})},
                       {float_tensor("y", {2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(fed.verdict, Verdict::kUnsupported);
  EXPECT_THAT(fed.reason, HasSubstr("the test data contradicts the model: input 'x' is declared [2, 2], "
                                    "input_0.pb holds [4]"));

  TestResult typed = run("test_relu_typed", relu_model(), {int64_tensor("x", {2, 2}, {1, 2, 3, 4})},
                         {float_tensor("y", {2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(typed.verdict, Verdict::kFail);
  EXPECT_THAT(typed.reason, HasSubstr("input 'x': the method takes float32[2, 2], the test feeds int64[2, 2]"));
}

TEST_F(WholeTests, OnlyBackendMakesWhatItDoesNotTakeUnsupported) {
  options_.only_backend = "portable";
  const onnx::TensorProto x = float_tensor("x", {2, 2}, {-1.0f, 2.0f, 0.5f, -3.0f});
  TestResult taken = run("test_relu_only", relu_model(), {x}, {float_tensor("y", {2, 2}, {0.0f, 2.0f, 0.5f, 0.0f})});
  EXPECT_EQ(taken.verdict, Verdict::kPass) << taken.reason;

  onnx::ModelProto lp_pool = make_model();  // an op the portable backend has no kernel for
  describe(lp_pool.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {1, 1, 2, 2});
  describe(lp_pool.mutable_graph()->add_output(), "y", onnx::TensorProto::FLOAT, {1, 1, 1, 1});
  add_node(lp_pool, "LpPool", {"x"}, {"y"});
  onnx::AttributeProto* kernel_shape = lp_pool.mutable_graph()->mutable_node(0)->add_attribute();
  kernel_shape->set_name("kernel_shape");
  kernel_shape->set_type(onnx::AttributeProto::INTS);
  kernel_shape->add_ints(2);
  kernel_shape->add_ints(2);
  TestResult refused = run("test_lp_pool_only", lp_pool, {float_tensor("x", {1, 1, 2, 2}, {-1.0f, 2.0f, 0.5f, -3.0f})},
                           {float_tensor("y", {1, 1, 1, 1}, {3.77f})});
  EXPECT_EQ(refused.verdict, Verdict::kUnsupported) << refused.reason;
  EXPECT_THAT(refused.reason, HasSubstr("partition took 0 of 1 nodes; not: node 'LpPool_node' (LpPool)"));

  options_.only_backend = "warp_drive";
  TestResult missing = run("test_relu_nowhere", relu_model(), {x}, {x});
  EXPECT_EQ(missing.verdict, Verdict::kFail);
  EXPECT_THAT(missing.reason, HasSubstr("warp_drive"));
}

TEST_F(WholeTests, UnsupportedCarriesTheReason) {
  onnx::ModelProto model = make_model();
  describe(model.mutable_graph()->add_input(), "x", onnx::TensorProto::FLOAT, {2, 2});
  describe(model.mutable_graph()->add_output(), "y", onnx::TensorProto::FLOAT, {2, 2});
  add_node(model, "Trilu", {"x"}, {"y"});
  const onnx::TensorProto x = float_tensor("x", {2, 2}, {1, 2, 3, 4});
  TestResult result = run("test_trilu", model, {x}, {float_tensor("y", {2, 2}, {1, 2, 0, 4})});
  EXPECT_EQ(result.verdict, Verdict::kUnsupported);
  EXPECT_THAT(result.reason, HasSubstr("Trilu"));
  EXPECT_THAT(result.reason, ::testing::Not(HasSubstr(root_)));  // no paths in reasons

  onnx::ModelProto sequence = make_model();
  onnx::ValueInfoProto* input = sequence.mutable_graph()->add_input();
  input->set_name("s");
  input->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  describe(sequence.mutable_graph()->add_output(), "y", onnx::TensorProto::FLOAT, {2, 2});
  add_node(sequence, "ConcatFromSequence", {"s"}, {"y"});
  TestResult seq = run("test_sequence", sequence, {x}, {x});
  EXPECT_EQ(seq.verdict, Verdict::kUnsupported);
  EXPECT_EQ(seq.reason, "input 's' is a sequence; only tensors are supported");
}

TEST_F(WholeTests, ParametersFedAsInputsAreFrozenOnRetry) {
  onnx::ModelProto model = make_model();
  describe(model.mutable_graph()->add_input(), "data", onnx::TensorProto::FLOAT, {2, 3});
  describe(model.mutable_graph()->add_input(), "shape", onnx::TensorProto::INT64, {2});
  describe(model.mutable_graph()->add_output(), "reshaped", onnx::TensorProto::FLOAT, {3, 2});
  add_node(model, "Reshape", {"data", "shape"}, {"reshaped"});
  const std::vector<onnx::TensorProto> inputs = {float_tensor("data", {2, 3}, {1, 2, 3, 4, 5, 6}),
                                                 int64_tensor("shape", {2}, {3, 2})};
  const std::vector<onnx::TensorProto> outputs = {float_tensor("reshaped", {3, 2}, {1, 2, 3, 4, 5, 6})};

  Result<ModelInfo> info = [&] {
    write("probe/model.onnx", model.SerializeAsString());
    return read_model_info(root_ + "/probe/model.onnx");
  }();
  ASSERT_TRUE(info.is_ok());
  ASSERT_EQ(info->inputs.size(), 2u);
  EXPECT_FALSE(info->inputs[0].parameter);
  EXPECT_TRUE(info->inputs[1].parameter);
  EXPECT_THAT(info->op_types, ElementsAre("Reshape"));

  TestResult frozen = run("test_reshape", model, inputs, outputs);
  if (frozen.frozen_inputs.empty()) {
    // The portable Reshape takes its shape as an input here: nothing to retry.
    EXPECT_EQ(frozen.verdict, Verdict::kPass) << frozen.reason;
  } else {
    EXPECT_EQ(frozen.verdict, Verdict::kPass) << frozen.reason;
    EXPECT_THAT(frozen.frozen_inputs, ElementsAre("shape"));
  }

  options_.freeze_parameters = false;
  TestResult as_is = run("test_reshape_as_is", model, inputs, outputs);
  if (!frozen.frozen_inputs.empty()) {
    EXPECT_EQ(as_is.verdict, Verdict::kUnsupported);
  }
}

TEST(PortableScope, ProbesTheBackendForKernels) {
  Result<PortableOpSet> ops = PortableOpSet::create();
  ASSERT_TRUE(ops.is_ok()) << ops.status().to_string();
  EXPECT_TRUE(ops->has_kernel("Relu"));
  EXPECT_TRUE(ops->has_kernel("Conv"));
  EXPECT_FALSE(ops->has_kernel("NoSuchOpAnywhere"));
  EXPECT_FALSE(ops->has_kernel("ai.onnx.ml:LabelEncoder"));
  EXPECT_TRUE(ops->in_scope({"Add", "Constant"}));
  EXPECT_FALSE(ops->in_scope({"Constant"}));
  EXPECT_FALSE(ops->in_scope({"Add", "NoSuchOpAnywhere"}));
  EXPECT_FALSE(ops->in_scope({}));
}

}  // namespace
}  // namespace plugrt::conformance
