// SPDX-License-Identifier: Apache-2.0
// Program files: written by ProgramBuilder, loaded (mapped and copied), described and
// run on the built-in portable backend.
#include "plugrt/program.h"

#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/method.h"
#include "plugrt/program_builder.h"
#include "plugrt/program_format.h"
#include "scratch_directory.h"

namespace plugrt {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// relu(x + bias) for x of [2, 2], as a graph IR blob.
std::vector<uint8_t> add_relu_graph() {
  GraphBuilder graph;
  ValueId x = graph.add_value("x", DType::kFloat32, {2, 2});
  ValueId bias = graph.add_constant_f32("bias", {2}, {-1.0f, 1.0f});
  ValueId sum = graph.add_value("sum", DType::kFloat32, {2, 2});
  ValueId y = graph.add_value("y", DType::kFloat32, {2, 2});
  graph.add_node("Add", "add", {x, bias}, {sum});
  graph.add_node("Relu", "relu", {sum}, {y});
  graph.add_input(x);
  graph.add_output(y);
  return graph.finish();
}

/// A program with "forward": relu(x + bias) on the portable backend.
std::vector<uint8_t> portable_program() {
  ProgramBuilder builder;
  builder.set_producer("program_test");
  MethodBuilder& method = builder.add_method("forward");
  uint32_t x = method.add_value("x", DType::kFloat32, {2, 2});
  uint32_t y = method.add_value("y", DType::kFloat32, {2, 2});
  method.add_input(x);
  method.add_output(y);
  uint32_t delegate = method.add_delegate("portable:0", "portable", add_relu_graph());
  method.add_instruction(delegate, {x}, {y});
  Result<std::vector<uint8_t>> file = builder.finish();
  EXPECT_TRUE(file.is_ok()) << file.status().to_string();
  return std::move(file).value();
}

std::vector<float> run_forward(const Program& program, Registry& registry, std::vector<float> input) {
  Result<Method> method = Method::load(program, "forward", registry);
  EXPECT_TRUE(method.is_ok()) << method.status().to_string();
  std::vector<int64_t> shape = {2, 2};
  DLTensor tensor{input.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
  EXPECT_TRUE(method->set_input(0, tensor).is_ok());
  Status status = method->execute();
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  const float* out = static_cast<const float*>(method->output(0).data);
  return std::vector<float>(out, out + 4);
}

TEST(Program, RoundTripsThroughAFileMappedAndCopied) {
  testing::ScratchDirectory scratch("plugrt_program_test");
  const std::string path = scratch.write("program.prt", portable_program());
  Registry registry;
  ASSERT_TRUE(register_builtin_backends(registry).is_ok());
  for (bool mapped : {true, false}) {
    Result<Program> program = mapped ? Program::load(path) : Program::load_copy(path);
    ASSERT_TRUE(program.is_ok()) << program.status().to_string();
    EXPECT_EQ(program->is_mapped(), mapped);
    EXPECT_EQ(program->origin(), path);
    EXPECT_EQ(program->producer(), "program_test");
    EXPECT_EQ(program->format_major(), kProgramFormatMajor);
    EXPECT_THAT(program->method_names(), ElementsAre("forward"));
    EXPECT_THAT(run_forward(*program, registry, {0.5f, -3.0f, 2.0f, 0.0f}), ElementsAre(0.0f, 0.0f, 1.0f, 1.0f));
  }
}

TEST(Program, DescribesItsMethods) {
  Result<Program> program = Program::from_bytes(portable_program());
  ASSERT_TRUE(program.is_ok());
  Result<MethodSummary> summary = program->describe("forward");
  ASSERT_TRUE(summary.is_ok());
  ASSERT_EQ(summary->inputs.size(), 1u);
  EXPECT_EQ(summary->inputs[0].name, "x");
  EXPECT_EQ(summary->inputs[0].dtype, DType::kFloat32);
  EXPECT_THAT(summary->inputs[0].shape, ElementsAre(2, 2));
  ASSERT_EQ(summary->delegates.size(), 1u);
  EXPECT_EQ(summary->delegates[0].backend, "portable");
  EXPECT_EQ(summary->delegates[0].fallback_size, 0u);
  EXPECT_EQ(summary->num_instructions, 1u);
  EXPECT_EQ(program->describe("nope").code(), Error::kNotFound);
}

TEST(Program, SegmentsAreAlignedAndIdenticalBlobsStoredOnce) {
  ProgramBuilder builder;
  const std::vector<uint8_t> blob = add_relu_graph();
  for (const char* name : {"a", "b"}) {
    MethodBuilder& method = builder.add_method(name);
    uint32_t x = method.add_value("x", DType::kFloat32, {2, 2});
    uint32_t y = method.add_value("y", DType::kFloat32, {2, 2});
    uint32_t w = method.add_constant("w", DType::kFloat32, {3}, std::vector<uint8_t>(12, 1));
    method.add_input(x);
    method.add_output(y);
    method.add_instruction(method.add_delegate("portable:0", "portable", blob), {x}, {y});
    (void)w;
  }
  EXPECT_EQ(builder.num_segments(), 2u);  // one blob, one constant, shared by both methods
  Result<std::vector<uint8_t>> file = builder.finish();
  ASSERT_TRUE(file.is_ok());
  ProgramFileHeader header;
  std::memcpy(&header, file->data(), sizeof(header));
  EXPECT_EQ(header.segments_offset % kSegmentAlignment, 0u);
  Result<Program> program = Program::from_bytes(*file);
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  EXPECT_THAT(program->method_names(), ElementsAre("a", "b"));
}

/// A program whose "forward" runs relu(x + bias) as one delegate of `backend`, whose blob
/// is `header` bytes then the graph, with the graph as its portable fallback.
std::vector<uint8_t> program_with_blob_ending_in_its_fallback(const std::string& backend, size_t header) {
  const std::vector<uint8_t> graph = add_relu_graph();
  std::vector<uint8_t> blob(header, 0x5a);
  blob.insert(blob.end(), graph.begin(), graph.end());
  ProgramBuilder builder;
  MethodBuilder& method = builder.add_method("forward");
  uint32_t x = method.add_value("x", DType::kFloat32, {2, 2});
  uint32_t y = method.add_value("y", DType::kFloat32, {2, 2});
  method.add_input(x);
  method.add_output(y);
  method.add_instruction(method.add_delegate(backend + ":0", backend, blob, {}, graph), {x}, {y});
  Result<std::vector<uint8_t>> file = builder.finish();
  EXPECT_TRUE(file.is_ok()) << file.status().to_string();
  return std::move(file).value();
}

TEST(Program, AFallbackThatABlobEndsWithIsStoredWithinIt) {
  const size_t graph_size = add_relu_graph().size();
  const std::vector<uint8_t> within = program_with_blob_ending_in_its_fallback("npu", 64);
  Result<Program> program = Program::from_bytes(within);
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  Result<MethodSummary> summary = program->describe("forward");
  ASSERT_TRUE(summary.is_ok());
  EXPECT_EQ(summary->delegates.at(0).blob_size, 64 + graph_size);
  EXPECT_EQ(summary->delegates[0].fallback_size, graph_size);
  EXPECT_TRUE(summary->delegates[0].fallback_within_blob);
  // No npu backend here: the fallback, read from within the blob, runs.
  Registry registry;
  ASSERT_TRUE(register_builtin_backends(registry).is_ok());
  EXPECT_THAT(run_forward(*program, registry, {0.5f, -3.0f, 2.0f, 0.0f}), ElementsAre(0.0f, 0.0f, 1.0f, 1.0f));

  // From an offset off the segment alignment, the bytes are stored twice.
  const std::vector<uint8_t> twice = program_with_blob_ending_in_its_fallback("npu", 60);
  Result<Program> apart = Program::from_bytes(twice);
  ASSERT_TRUE(apart.is_ok()) << apart.status().to_string();
  EXPECT_FALSE(apart->describe("forward")->delegates.at(0).fallback_within_blob);
  EXPECT_GE(twice.size(), within.size() + graph_size - 4);
}

TEST(Program, ThePlannedArenaReusesMemoryAlongAChain) {
  // x -> t0 -> t1 -> ... -> y, each step through the same portable identity graph.
  GraphBuilder graph;
  ValueId in = graph.add_value("in", DType::kFloat32, {256});
  ValueId out = graph.add_value("out", DType::kFloat32, {256});
  graph.add_node("Identity", "copy", {in}, {out});
  graph.add_input(in);
  graph.add_output(out);
  const std::vector<uint8_t> blob = graph.finish();

  ProgramBuilder builder;
  MethodBuilder& method = builder.add_method("forward");
  uint32_t current = method.add_value("x", DType::kFloat32, {256});
  method.add_input(current);
  uint32_t delegate = method.add_delegate("copy", "portable", blob);
  for (int i = 0; i < 10; ++i) {
    uint32_t next = method.add_value("t" + std::to_string(i), DType::kFloat32, {256});
    method.add_instruction(delegate, {current}, {next});
    current = next;
  }
  method.add_output(current);
  Result<std::vector<uint8_t>> file = builder.finish();
  ASSERT_TRUE(file.is_ok());
  Result<Program> program = Program::from_bytes(*file);
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  // The input lives throughout; the nine intermediates and the output (written last)
  // need only two buffers between them.
  EXPECT_EQ(program->describe("forward")->arena_size, 3 * 1024u);

  Registry registry;
  Result<Method> instance = Method::load(*program, "forward", registry);  // built-in fallback registry
  ASSERT_TRUE(instance.is_ok()) << instance.status().to_string();
  std::vector<float> values(256);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  std::vector<int64_t> shape = {256};
  DLTensor tensor{values.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
  ASSERT_TRUE(instance->set_input(0, tensor).is_ok());
  ASSERT_TRUE(instance->execute().is_ok());
  const float* result = static_cast<const float*>(instance->output(0).data);
  EXPECT_EQ(std::vector<float>(result, result + 256), values);
}

TEST(ProgramBuilder, RefusesABadValueIndex) {
  ProgramBuilder builder;
  MethodBuilder& method = builder.add_method("forward");
  method.add_output(3);
  Result<std::vector<uint8_t>> file = builder.finish();
  EXPECT_EQ(file.code(), Error::kInvalidArgument);
  EXPECT_THAT(file.status().message(), HasSubstr("method 'forward': an output refers to value 3 of 0"));
}

TEST(Program, AMissingPortableBackendInTheRegistryUsesTheBuiltInOne) {
  Result<Program> program = Program::from_bytes(portable_program());
  ASSERT_TRUE(program.is_ok());
  Registry empty;
  EXPECT_THAT(run_forward(*program, empty, {1, 1, 1, 1}), ElementsAre(0.0f, 2.0f, 0.0f, 2.0f));
}

}  // namespace
}  // namespace plugrt
