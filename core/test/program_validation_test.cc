// SPDX-License-Identifier: Apache-2.0
// Program file validation: one crafted bad file for every failure the verifier
// (core/src/program_verifier.cc) reports, plus random corruptions and truncations of a
// valid file, and the load paths (mapped, copied, missing file).
//
// Bad files are made two ways: by patching the header of a file ProgramBuilder wrote,
// or by writing the flatbuffer directly from a ProgramSpec (below) and assembling
// header + flatbuffer + segments by hand, so that the tests can produce files the
// builder refuses to write.
#include <stdlib.h>  // mkdtemp

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugrt/common/dim_expr.h"
#include "plugrt/dtype.h"
#include "plugrt/program.h"
#include "plugrt/program_builder.h"
#include "plugrt/program_format.h"
#include "plugrt/schema/program_generated.h"
#include "scratch_directory.h"

namespace plugrt {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kOrigin[] = "crafted.prt";

uint64_t round_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

// ---------------------------------------------------------------------------------------
// A program as plain data, mirroring core/schema/program.fbs field for field, with
// nothing checked: serialize() writes whatever it holds.

struct ValueSpec {
  std::string name;
  int32_t dtype = static_cast<int32_t>(DType::kFloat32);
  std::vector<int64_t> shape;
  int64_t arena_offset = -1;
  int32_t segment = -1;
  /// Write the shape's elements at 4 mod 8 in the buffer (FlatBuffers' builder never does).
  bool misalign_shape = false;
};

struct OptionSpec {
  std::string key;
  std::vector<uint8_t> value;
};

struct DelegateSpec {
  std::string name;
  std::string backend = "portable";
  uint32_t blob_segment = 0;
  std::vector<OptionSpec> compile_specs;
  int32_t fallback_segment = -1;
  bool blob_names_constants = false;
};

struct InstructionSpec {
  uint32_t delegate = 0;
  std::vector<uint32_t> inputs, outputs;
};

struct MethodSpec {
  std::string name = "forward";
  std::vector<ValueSpec> values;
  std::vector<uint32_t> inputs, outputs;
  std::vector<DelegateSpec> delegates;
  std::vector<InstructionSpec> instructions;
  uint64_t arena_size = 0;
};

struct SegmentSpec {
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct ProgramSpec {
  std::vector<MethodSpec> methods;
  std::vector<SegmentSpec> segments;
  /// Bytes of the segment area; segments are filled with a pattern, the rest with zeros.
  uint64_t segment_area_size = 0;
  std::string producer = "program_validation_test";
  /// Empty vectors are omitted (null in the reader) unless this is set.
  bool write_empty_vectors = false;
  /// Write the segment table's elements at 4 mod 8 in the buffer.
  bool misalign_segment_table = false;
};

/// A vector of 8-byte elements given as their 32-bit little-endian halves, written with
/// only the 4-byte alignment of its length, as a careless writer could; `shift` puts
/// 4 bytes before it, so that one of the two choices leaves the elements misaligned.
flatbuffers::uoffset_t write_4_aligned(flatbuffers::FlatBufferBuilder& fbb, const std::vector<uint32_t>& words,
                                       size_t num_elements, bool shift) {
  if (shift) fbb.PushElement<uint32_t>(0);
  fbb.StartVector(words.size(), sizeof(uint32_t));
  for (auto it = words.rbegin(); it != words.rend(); ++it) fbb.PushElement(*it);
  return fbb.EndVector(num_elements);
}

void append_u64(std::vector<uint32_t>& words, uint64_t value) {
  words.push_back(static_cast<uint32_t>(value));
  words.push_back(static_cast<uint32_t>(value >> 32));
}

/// The flatbuffer of `spec`, with the PRTP identifier; `shift` as in write_4_aligned().
std::vector<uint8_t> serialize(const ProgramSpec& spec, bool shift) {
  flatbuffers::FlatBufferBuilder fbb(1024);
  // The buffer's size becomes a multiple of 8, so `shift` moves the vectors relative to
  // its start.
  if (shift) fbb.PushElement<uint64_t>(0);
  auto vec = [&](const auto& items) {
    using T = typename std::decay_t<decltype(items)>::value_type;
    return items.empty() && !spec.write_empty_vectors ? flatbuffers::Offset<flatbuffers::Vector<T>>()
                                                      : fbb.CreateVector(items);
  };
  std::vector<flatbuffers::Offset<program::Method>> methods;
  for (const MethodSpec& method : spec.methods) {
    std::vector<flatbuffers::Offset<program::TensorValue>> values;
    for (const ValueSpec& value : method.values) {
      flatbuffers::Offset<flatbuffers::Vector<int64_t>> shape;
      if (value.misalign_shape) {
        std::vector<uint32_t> words;
        for (int64_t dim : value.shape) append_u64(words, static_cast<uint64_t>(dim));
        shape = write_4_aligned(fbb, words, value.shape.size(), shift);
      } else {
        shape = vec(value.shape);
      }
      values.push_back(program::CreateTensorValue(fbb, fbb.CreateString(value.name),
                                                  static_cast<ir::DType>(value.dtype), shape, value.arena_offset,
                                                  value.segment));
    }
    std::vector<flatbuffers::Offset<program::Delegate>> delegates;
    for (const DelegateSpec& delegate : method.delegates) {
      std::vector<flatbuffers::Offset<program::Option>> specs;
      for (const OptionSpec& option : delegate.compile_specs) {
        specs.push_back(program::CreateOption(fbb, fbb.CreateString(option.key), vec(option.value)));
      }
      delegates.push_back(program::CreateDelegate(fbb, fbb.CreateString(delegate.name),
                                                  fbb.CreateString(delegate.backend), delegate.blob_segment, vec(specs),
                                                  delegate.fallback_segment, delegate.blob_names_constants));
    }
    std::vector<flatbuffers::Offset<program::Instruction>> instructions;
    for (const InstructionSpec& instruction : method.instructions) {
      instructions.push_back(
          program::CreateInstruction(fbb, instruction.delegate, vec(instruction.inputs), vec(instruction.outputs)));
    }
    methods.push_back(program::CreateMethod(fbb, fbb.CreateString(method.name), vec(values), vec(method.inputs),
                                            vec(method.outputs), vec(delegates), vec(instructions), method.arena_size));
  }
  std::vector<program::Segment> segments;
  std::vector<uint32_t> segment_words;
  for (const SegmentSpec& segment : spec.segments) {
    segments.emplace_back(segment.offset, segment.size);
    append_u64(segment_words, segment.offset);
    append_u64(segment_words, segment.size);
  }
  flatbuffers::Offset<flatbuffers::Vector<const program::Segment*>> segments_offset;
  if (spec.misalign_segment_table) {
    segments_offset = write_4_aligned(fbb, segment_words, segments.size(), shift);
  } else if (!segments.empty() || spec.write_empty_vectors) {
    segments_offset = fbb.CreateVectorOfStructs(segments);
  }
  auto root = program::CreateProgram(fbb, vec(methods), segments_offset, fbb.CreateString(spec.producer));
  program::FinishProgramBuffer(fbb, root);
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

/// Whether the elements of `vector` in `flatbuffer` are at 4 mod 8.
template <typename T>
bool misaligned_in(const std::vector<uint8_t>& flatbuffer, const flatbuffers::Vector<T>* vector) {
  return vector != nullptr && (vector->Data() - flatbuffer.data()) % 8 != 0;
}

/// The flatbuffer of `spec`, with the vectors it asks for misaligned.
std::vector<uint8_t> serialize(const ProgramSpec& spec) {
  for (bool shift : {false, true}) {
    std::vector<uint8_t> flatbuffer = serialize(spec, shift);
    const program::Program* root = program::GetProgram(flatbuffer.data());  // as written, unverified
    bool as_asked = !spec.misalign_segment_table || misaligned_in(flatbuffer, root->segments());
    for (size_t m = 0; m < spec.methods.size(); ++m) {
      for (size_t v = 0; v < spec.methods[m].values.size(); ++v) {
        if (!spec.methods[m].values[v].misalign_shape) continue;
        const program::TensorValue* value = root->methods()
                                                ->Get(static_cast<flatbuffers::uoffset_t>(m))
                                                ->values()
                                                ->Get(static_cast<flatbuffers::uoffset_t>(v));
        as_asked = as_asked && misaligned_in(flatbuffer, value->shape());
      }
    }
    if (as_asked) return flatbuffer;
  }
  ADD_FAILURE() << "cannot write the misaligned vectors the spec asks for";
  return std::vector<uint8_t>();
}

/// The header a correct writer puts in front of `flatbuffer_size` bytes of flatbuffer
/// and `segments_size` bytes of segments.
ProgramFileHeader make_header(uint64_t flatbuffer_size, uint64_t segments_size) {
  ProgramFileHeader header{};
  std::memcpy(header.magic, kProgramMagic, sizeof(header.magic));
  header.format_major = kProgramFormatMajor;
  header.format_minor = kProgramFormatMinor;
  header.header_size = sizeof(ProgramFileHeader);
  header.flatbuffer_offset = sizeof(ProgramFileHeader);
  header.flatbuffer_size = flatbuffer_size;
  header.segments_offset = round_up(header.flatbuffer_offset + flatbuffer_size, kSegmentAlignment);
  header.segments_size = segments_size;
  return header;
}

/// header + flatbuffer + segment area, laid out where `header` says (the file is as long
/// as the furthest of them). The segment area holds `segment_bytes`.
std::vector<uint8_t> assemble(const ProgramFileHeader& header, const std::vector<uint8_t>& flatbuffer,
                              const std::vector<uint8_t>& segment_bytes) {
  const uint64_t end = std::max<uint64_t>(
      {sizeof(header), header.flatbuffer_offset + flatbuffer.size(), header.segments_offset + segment_bytes.size()});
  std::vector<uint8_t> file(static_cast<size_t>(end), 0);
  std::memcpy(file.data(), &header, sizeof(header));
  if (!flatbuffer.empty()) std::memcpy(file.data() + header.flatbuffer_offset, flatbuffer.data(), flatbuffer.size());
  if (!segment_bytes.empty()) {
    std::memcpy(file.data() + header.segments_offset, segment_bytes.data(), segment_bytes.size());
  }
  return file;
}

/// The segment area of `spec`: each segment's bytes a pattern, the gaps zero.
std::vector<uint8_t> segment_area(const ProgramSpec& spec) {
  std::vector<uint8_t> area(static_cast<size_t>(spec.segment_area_size), 0);
  for (const SegmentSpec& segment : spec.segments) {
    for (uint64_t i = 0; i < segment.size && segment.offset + i < area.size(); ++i) {
      area[static_cast<size_t>(segment.offset + i)] = static_cast<uint8_t>(i * 13 + 1);
    }
  }
  return area;
}

/// The whole file of `spec`, laid out as ProgramBuilder would.
std::vector<uint8_t> file_of(const ProgramSpec& spec) {
  const std::vector<uint8_t> flatbuffer = serialize(spec);
  return assemble(make_header(flatbuffer.size(), spec.segment_area_size), flatbuffer, segment_area(spec));
}

/// A valid program: y = f(x, w) with x the input, w a [2, 2] float constant, y the
/// output, one delegate on the portable backend with a compile spec.
///   values: 0 "x" [2, 2] at arena 0, 1 "w" constant in segment 1, 2 "y" [2, 2] at arena 64
///   segments: 0 the delegate's blob (offset 0, 16 bytes), 1 w (offset 64, 16 bytes)
ProgramSpec valid_spec() {
  ProgramSpec spec;
  MethodSpec method;
  method.values = {
      ValueSpec{"x", static_cast<int32_t>(DType::kFloat32), {2, 2}, 0, -1},
      ValueSpec{"w", static_cast<int32_t>(DType::kFloat32), {2, 2}, -1, 1},
      ValueSpec{"y", static_cast<int32_t>(DType::kFloat32), {2, 2}, 64, -1},
  };
  method.inputs = {0};
  method.outputs = {2};
  method.delegates = {DelegateSpec{"portable:0", "portable", 0, {OptionSpec{"threads", {1}}}, -1}};
  method.instructions = {InstructionSpec{0, {0, 1}, {2}}};
  method.arena_size = 128;
  spec.methods.push_back(method);
  spec.segments = {SegmentSpec{0, 16}, SegmentSpec{64, 16}};
  spec.segment_area_size = 80;
  return spec;
}

MethodSpec& forward(ProgramSpec& spec) { return spec.methods.at(0); }

/// A valid file written by ProgramBuilder: two methods, constants, a delegate with
/// compile specs and a fallback.
std::vector<uint8_t> builder_file() {
  ProgramBuilder builder;
  builder.set_producer("program_validation_test");
  {
    MethodBuilder& method = builder.add_method("forward");
    const std::vector<uint8_t> weights(4 * 3 * sizeof(float), 7);
    uint32_t x = method.add_value("x", DType::kFloat32, {2, 4});
    uint32_t w = method.add_constant("w", DType::kFloat32, {4, 3}, weights);
    uint32_t h = method.add_value("h", DType::kFloat32, {2, 3});
    uint32_t y = method.add_value("y", DType::kFloat32, {2, 3});
    method.add_input(x);
    method.add_output(y);
    const std::vector<uint8_t> blob = {1, 2, 3, 4, 5};
    const std::vector<uint8_t> fallback = {9, 8, 7};
    uint32_t d0 = method.add_delegate("fake:0", "fake_backend", blob, {CompileSpec{"mode", {1, 2}}}, fallback);
    uint32_t d1 = method.add_delegate("portable:1", "portable", fallback);
    method.add_instruction(d0, {x, w}, {h});
    method.add_instruction(d1, {h}, {y});
  }
  {
    MethodBuilder& method = builder.add_method("double_it");
    uint32_t a = method.add_value("a", DType::kInt32, {3});
    uint32_t b = method.add_value("b", DType::kInt32, {3});
    method.add_input(a);
    method.add_output(b);
    const std::vector<uint8_t> blob = {42};
    uint32_t d = method.add_delegate("portable:0", "portable", blob);
    method.add_instruction(d, {a}, {b});
  }
  Result<std::vector<uint8_t>> file = builder.finish();
  EXPECT_TRUE(file.is_ok()) << file.status().to_string();
  return file.is_ok() ? std::move(file).value() : std::vector<uint8_t>();
}

ProgramFileHeader header_of(const std::vector<uint8_t>& file) {
  ProgramFileHeader header{};
  std::memcpy(&header, file.data(), sizeof(header));
  return header;
}

/// builder_file() with its header changed by `patch`.
std::vector<uint8_t> patched(const std::function<void(ProgramFileHeader&)>& patch) {
  std::vector<uint8_t> file = builder_file();
  ProgramFileHeader header = header_of(file);
  patch(header);
  std::memcpy(file.data(), &header, sizeof(header));
  return file;
}

Result<Program> load_bytes(const std::vector<uint8_t>& file) {
  return Program::from_bytes(Span<const uint8_t>(file.data(), file.size()), kOrigin);
}

/// Loading `file` fails with kInvalidProgram, a message naming the origin, and `reason`.
/// Returns the message.
std::string expect_invalid(const std::vector<uint8_t>& file, const std::string& reason) {
  Result<Program> program = load_bytes(file);
  EXPECT_FALSE(program.is_ok()) << "loaded, but expected: " << reason;
  if (program.is_ok()) return std::string();
  EXPECT_EQ(program.code(), Error::kInvalidProgram) << program.status().to_string();
  EXPECT_THAT(program.status().message(), StartsWith(std::string(kOrigin) + ": "));
  EXPECT_THAT(program.status().message(), HasSubstr(reason));
  return program.status().message();
}

std::string expect_invalid(const ProgramSpec& spec, const std::string& reason) {
  return expect_invalid(file_of(spec), reason);
}

/// Loading succeeds, and describe() works on every method.
void expect_valid(const std::vector<uint8_t>& file) {
  Result<Program> program = load_bytes(file);
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  for (const std::string& name : program->method_names()) {
    Result<MethodSummary> summary = program->describe(name);
    EXPECT_TRUE(summary.is_ok()) << summary.status().to_string();
  }
}

// ---------------------------------------------------------------------------------------
// Valid files.

TEST(ProgramValidation, ABuilderFileLoads) {
  const std::vector<uint8_t> file = builder_file();
  Result<Program> program = load_bytes(file);
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  EXPECT_EQ(program->origin(), kOrigin);
  EXPECT_FALSE(program->is_mapped());
  EXPECT_EQ(program->file_size(), file.size());
  EXPECT_EQ(program->format_major(), kProgramFormatMajor);
  EXPECT_EQ(program->producer(), "program_validation_test");
  EXPECT_EQ(program->method_names(), (std::vector<std::string>{"forward", "double_it"}));
  Result<MethodSummary> forward_summary = program->describe("forward");
  ASSERT_TRUE(forward_summary.is_ok()) << forward_summary.status().to_string();
  ASSERT_EQ(forward_summary->delegates.size(), 2u);
  EXPECT_EQ(forward_summary->delegates[0].blob_size, 5u);
  EXPECT_EQ(forward_summary->delegates[0].fallback_size, 3u);
  EXPECT_EQ(forward_summary->constant_bytes, 48u);
}

// Format 1.2: a method's dimensions that vary, and what the reader checks of them.
TEST(ProgramValidation, DimensionsThatVaryAreCheckedAgainstTheSymbolsAndInputs) {
  auto program_with = [](const std::function<void(MethodBuilder&, const common::DimExpr&)>& add_values) {
    ProgramBuilder builder;
    MethodBuilder& method = builder.add_method("forward");
    const common::DimExpr n = common::DimExpr::symbol(method.add_symbol("n", 1, 8));
    add_values(method, n);
    const uint8_t blob[4] = {1, 2, 3, 4};
    method.add_instruction(method.add_delegate("d", "portable", blob), {0}, {1});
    return builder.finish().value();
  };
  // The input gives n: loads, as format 1.2.
  const std::vector<uint8_t> good = program_with([](MethodBuilder& m, const common::DimExpr& n) {
    m.add_input(m.add_dynamic_value("x", DType::kFloat32, {n}));
    m.add_output(m.add_dynamic_value("y", DType::kFloat32, {n + common::DimExpr::constant(1)}));
  });
  Result<Program> program = load_bytes(good);
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  EXPECT_EQ(program->format_minor(), 2u);
  Result<MethodSummary> summary = program->describe("forward");
  ASSERT_TRUE(summary.is_ok());
  EXPECT_TRUE(summary->inputs[0].varies());
  EXPECT_EQ(summary->outputs[0].shape, std::vector<int64_t>{9});  // the bound of n + 1

  // No input's dimension is n alone: a run could not tell n.
  const std::vector<uint8_t> hidden = program_with([](MethodBuilder& m, const common::DimExpr& n) {
    m.add_input(m.add_dynamic_value("x", DType::kFloat32, {n + common::DimExpr::constant(1)}));
    m.add_output(m.add_dynamic_value("y", DType::kFloat32, {n}));
  });
  Result<Program> refused = load_bytes(hidden);
  EXPECT_EQ(refused.code(), Error::kInvalidProgram);
  EXPECT_THAT(refused.status().message(), HasSubstr("symbol 0 ('n') is not the size of any input's dimension"));

  // A static program stays format 1.1, readable by every 1.x runtime.
  Result<Program> fixed = load_bytes(builder_file());
  ASSERT_TRUE(fixed.is_ok());
  EXPECT_EQ(fixed->format_minor(), 1u);
}

TEST(ProgramValidation, TheCraftedBaseFileLoads) {
  const std::vector<uint8_t> file = file_of(valid_spec());
  expect_valid(file);
  Result<Program> program = load_bytes(file);
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  Result<MethodSummary> summary = program->describe("forward");
  ASSERT_TRUE(summary.is_ok());
  EXPECT_EQ(summary->inputs.size(), 1u);
  EXPECT_EQ(summary->outputs.size(), 1u);
  EXPECT_EQ(summary->constant_bytes, 16u);
  ASSERT_EQ(summary->delegates.size(), 1u);
  EXPECT_EQ(summary->delegates[0].compile_spec_keys, std::vector<std::string>{"threads"});
}

TEST(ProgramValidation, EmptyVectorsWrittenExplicitlyAreLikeAbsentOnes) {
  ProgramSpec spec = valid_spec();
  spec.write_empty_vectors = true;
  expect_valid(file_of(spec));
}

TEST(ProgramValidation, AValueOfExactly2To40BytesIsAccepted) {
  ProgramSpec spec = valid_spec();
  forward(spec).values[2].shape = {int64_t{1} << 38};  // float32: 2^40 bytes
  forward(spec).values[2].arena_offset = 0;
  forward(spec).values[0].arena_offset = int64_t{1} << 40;  // x: 16 bytes past y
  forward(spec).arena_size = kMaxArenaBytes;
  expect_invalid(spec, "value 0 'x' (arena offset 1099511627776, 16 bytes) is misaligned or outside the arena");
  forward(spec).values[0].arena_offset = 0;  // x shares y's bytes, while both live
  expect_invalid(spec, "share arena bytes while both are live");
  forward(spec).values[0].shape = {0};  // an empty x takes no bytes
  expect_valid(file_of(spec));
}

TEST(ProgramValidation, ValuesMayShareArenaBytesWhenTheirLifetimesDoNotMeet) {
  // x -> t -> u -> y, one instruction each (steps 1, 2, 3). Lifetimes in steps:
  // x 0-4 (an input), t 1-2, u 2-3, y 3-4 (an output). t and y never meet, so they may
  // share bytes; t and u meet at step 2.
  ProgramSpec spec = valid_spec();
  MethodSpec& method = forward(spec);
  method.values = {
      ValueSpec{"x", 1, {2, 2}, 0, -1},
      ValueSpec{"t", 1, {2, 2}, 64, -1},
      ValueSpec{"u", 1, {2, 2}, 128, -1},
      ValueSpec{"y", 1, {2, 2}, 64, -1},
  };
  method.outputs = {3};
  method.instructions = {InstructionSpec{0, {0}, {1}}, InstructionSpec{0, {1}, {2}}, InstructionSpec{0, {2}, {3}}};
  method.arena_size = 192;
  expect_valid(file_of(spec));       // t and y share offset 64
  method.values[1].shape = {2, 16};  // t grows to 128 bytes, over u's at 128
  expect_invalid(spec, "method 'forward': value 1 't' and value 2 'u' share arena bytes while both are live");
}

// ---------------------------------------------------------------------------------------
// The header.

TEST(ProgramValidation, RefusesAFileShorterThanTheHeader) {
  const std::vector<uint8_t> file = builder_file();
  expect_invalid(std::vector<uint8_t>(), "the file has 0 bytes, fewer than the 64-byte header");
  expect_invalid(std::vector<uint8_t>(file.begin(), file.begin() + 63),
                 "the file has 63 bytes, fewer than the 64-byte header");
}

TEST(ProgramValidation, RefusesBadMagic) {
  expect_invalid(patched([](ProgramFileHeader& h) { h.magic[7] = 'X'; }),
                 "not a plugrt program (the magic bytes PLUGRTPG are missing)");
}

TEST(ProgramValidation, RefusesAnotherFormatMajor) {
  expect_invalid(patched([](ProgramFileHeader& h) {
                   h.format_major = 2;
                   h.format_minor = 3;
                 }),
                 "program format 2.3 is not readable by this runtime (it reads 1.x)");
  expect_invalid(patched([](ProgramFileHeader& h) {
                   h.format_major = 0;
                   h.format_minor = 0;
                 }),
                 "program format 0.0 is not readable");
}

// Format 1.1 appended the delegate's blob_names_constants; a 1.0 file, which lacks it,
// still loads and runs.
TEST(ProgramValidation, LoadsFormat10Programs) {
  Result<Program> program = load_bytes(patched([](ProgramFileHeader& h) { h.format_minor = 0; }));
  ASSERT_TRUE(program.is_ok()) << program.status().to_string();
  EXPECT_EQ(program->format_minor(), 0u);
}

TEST(ProgramValidation, AcceptsANewerFormatMinor) {
  expect_valid(patched([](ProgramFileHeader& h) { h.format_minor = kProgramFormatMinor + 7; }));
}

TEST(ProgramValidation, RefusesAHeaderSizeOutOfRange) {
  expect_invalid(patched([](ProgramFileHeader& h) { h.header_size = 63; }), "header size 63 is out of range");
  expect_invalid(patched([](ProgramFileHeader& h) { h.header_size = 0xffffffffu; }),
                 "header size 4294967295 is out of range");
}

TEST(ProgramValidation, AcceptsALargerHeader) {
  // A later writer may extend the header: the flatbuffer then starts after it.
  const ProgramSpec spec = valid_spec();
  const std::vector<uint8_t> flatbuffer = serialize(spec);
  ProgramFileHeader header = make_header(flatbuffer.size(), spec.segment_area_size);
  header.header_size = 128;
  header.flatbuffer_offset = 128;
  header.segments_offset = round_up(128 + flatbuffer.size(), kSegmentAlignment);
  expect_valid(assemble(header, flatbuffer, segment_area(spec)));
}

TEST(ProgramValidation, RefusesUnknownFlags) {
  expect_invalid(patched([](ProgramFileHeader& h) { h.flags = 4; }), "unknown header flags 4");
}

TEST(ProgramValidation, RefusesAFlatbufferInsideTheHeader) {
  expect_invalid(patched([](ProgramFileHeader& h) { h.flatbuffer_offset = 32; }),
                 "the flatbuffer range (offset 32, size");
  // Inside a header that is declared larger than 64 bytes.
  expect_invalid(patched([](ProgramFileHeader& h) { h.header_size = 72; }), "the flatbuffer range (offset 64, size");
}

TEST(ProgramValidation, RefusesAMisalignedFlatbuffer) {
  const ProgramSpec spec = valid_spec();
  const std::vector<uint8_t> flatbuffer = serialize(spec);
  ProgramFileHeader header = make_header(flatbuffer.size(), spec.segment_area_size);
  header.flatbuffer_offset = 68;
  header.segments_offset = round_up(68 + flatbuffer.size(), kSegmentAlignment);
  expect_invalid(assemble(header, flatbuffer, segment_area(spec)), "the flatbuffer range (offset 68, size " +
                                                                       std::to_string(flatbuffer.size()) +
                                                                       ") is misaligned or outside the file");
}

TEST(ProgramValidation, RefusesAFlatbufferOutsideTheFile) {
  const std::vector<uint8_t> file = builder_file();
  expect_invalid(patched([&](ProgramFileHeader& h) { h.flatbuffer_size = file.size(); }),
                 "the flatbuffer range (offset 64, size " + std::to_string(file.size()) +
                     ") is misaligned or outside the file of " + std::to_string(file.size()) + " bytes");
  // Sizes that overflow offset + size.
  expect_invalid(patched([](ProgramFileHeader& h) { h.flatbuffer_size = std::numeric_limits<uint64_t>::max(); }),
                 "the flatbuffer range (offset 64, size 18446744073709551615) is misaligned or outside");
  expect_invalid(patched([](ProgramFileHeader& h) { h.flatbuffer_offset = std::numeric_limits<uint64_t>::max() - 7; }),
                 "the flatbuffer range (offset 18446744073709551608,");
}

TEST(ProgramValidation, RefusesAMisalignedSegmentArea) {
  expect_invalid(patched([](ProgramFileHeader& h) { h.segments_offset += 8; }),
                 ") is misaligned, overlaps the flatbuffer, or is outside the file");
}

TEST(ProgramValidation, RefusesASegmentAreaOverlappingTheFlatbuffer) {
  expect_invalid(patched([](ProgramFileHeader& h) {
                   h.segments_offset = 64;
                   h.segments_size = 64;
                 }),
                 "the segment area (offset 64, size 64) is misaligned, overlaps the flatbuffer");
}

TEST(ProgramValidation, RefusesASegmentAreaOutsideTheFile) {
  const std::vector<uint8_t> file = builder_file();
  const ProgramFileHeader header = header_of(file);
  expect_invalid(patched([](ProgramFileHeader& h) { h.segments_size += 1; }),
                 "the segment area (offset " + std::to_string(header.segments_offset) + ", size " +
                     std::to_string(header.segments_size + 1) + ") is misaligned, overlaps the flatbuffer, " +
                     "or is outside the file of " + std::to_string(file.size()) + " bytes");
  expect_invalid(patched([](ProgramFileHeader& h) { h.segments_size = std::numeric_limits<uint64_t>::max(); }),
                 "size 18446744073709551615) is misaligned, overlaps the flatbuffer, or is outside");
  expect_invalid(patched([](ProgramFileHeader& h) { h.segments_offset = std::numeric_limits<uint64_t>::max() - 63; }),
                 "the segment area (offset 18446744073709551552,");
}

// ---------------------------------------------------------------------------------------
// The flatbuffer.

TEST(ProgramValidation, RefusesAFlatbufferWithoutTheIdentifier) {
  expect_invalid(patched([](ProgramFileHeader& h) { h.flatbuffer_size = 7; }),
                 "the flatbuffer lacks the program identifier PRTP");
  std::vector<uint8_t> file = builder_file();
  file[64 + 4] = 'G';  // the identifier follows the 4-byte root offset
  expect_invalid(file, "the flatbuffer lacks the program identifier PRTP");
}

TEST(ProgramValidation, RefusesAGraphIrBufferInPlaceOfTheProgram) {
  ProgramSpec spec = valid_spec();
  std::vector<uint8_t> flatbuffer = serialize(spec);
  std::memcpy(flatbuffer.data() + 4, "PRTG", 4);
  expect_invalid(assemble(make_header(flatbuffer.size(), spec.segment_area_size), flatbuffer, segment_area(spec)),
                 "the flatbuffer lacks the program identifier PRTP");
}

TEST(ProgramValidation, RefusesATruncatedFlatbuffer) {
  const std::vector<uint8_t> file = builder_file();
  const ProgramFileHeader header = header_of(file);
  for (uint64_t size : {uint64_t{8}, uint64_t{16}, header.flatbuffer_size / 2, header.flatbuffer_size - 8}) {
    SCOPED_TRACE(size);
    expect_invalid(patched([&](ProgramFileHeader& h) { h.flatbuffer_size = size; }),
                   "the flatbuffer fails verification (truncated or corrupt)");
  }
}

TEST(ProgramValidation, RefusesACorruptFlatbuffer) {
  std::vector<uint8_t> file = builder_file();
  const uint32_t root = 0x7ffffff0u;  // the root table offset, far outside the buffer
  std::memcpy(file.data() + 64, &root, sizeof(root));
  expect_invalid(file, "the flatbuffer fails verification (truncated or corrupt)");

  // A required field (the method's name) missing: written with the raw table builder.
  flatbuffers::FlatBufferBuilder fbb;
  program::MethodBuilder method(fbb);
  method.add_arena_size(0);
  auto method_offset = flatbuffers::Offset<program::Method>(method.fbb_.EndTable(method.start_));
  auto root_offset = program::CreateProgram(fbb, fbb.CreateVector(&method_offset, 1));
  program::FinishProgramBuffer(fbb, root_offset);
  std::vector<uint8_t> flatbuffer(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  expect_invalid(assemble(make_header(flatbuffer.size(), 0), flatbuffer, {}),
                 "the flatbuffer fails verification (truncated or corrupt)");
}

TEST(ProgramValidation, RefusesASegmentOutsideTheSegmentArea) {
  ProgramSpec spec = valid_spec();
  spec.segments[1] = SegmentSpec{64, 17};  // one byte past the 80-byte area
  expect_invalid(spec, "segment 1 (offset 64, size 17) is misaligned or outside the segment area of 80 bytes");
  spec.segments[1] = SegmentSpec{128, 0};
  expect_invalid(spec, "segment 1 (offset 128, size 0) is misaligned or outside the segment area of 80 bytes");
  spec.segments[1] = SegmentSpec{64, std::numeric_limits<uint64_t>::max()};
  expect_invalid(spec, "segment 1 (offset 64, size 18446744073709551615) is misaligned or outside");
}

TEST(ProgramValidation, RefusesAMisalignedSegment) {
  ProgramSpec spec = valid_spec();
  spec.segments[0] = SegmentSpec{8, 16};
  expect_invalid(spec, "segment 0 (offset 8, size 16) is misaligned or outside the segment area of 80 bytes");
}

// Found by test/fuzz/program_loader_fuzzer.cc (UBSan: a misaligned Segment read): the
// FlatBuffers verifier checks only the 4-byte alignment of a vector's length.
TEST(ProgramValidation, RefusesAMisalignedSegmentTable) {
  ProgramSpec spec = valid_spec();
  spec.misalign_segment_table = true;
  expect_invalid(spec, "the segment table is misaligned");
  spec.methods.clear();  // checked before anything reads a segment
  expect_invalid(spec, "the segment table is misaligned");
}

TEST(ProgramValidation, RefusesTheFuzzerInputWithAMisalignedSegmentTable) {
  const std::string path = std::string(PLUGRT_PROGRAM_LOADER_CORPUS) + "/crash-misaligned-segment-table.prt";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "cannot read " << path;
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  expect_invalid(file, "the segment table is misaligned");
}

TEST(ProgramValidation, TheFuzzerSeedsLoadAndItsFindingsDoNot) {
  size_t seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PLUGRT_PROGRAM_LOADER_CORPUS)) {
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (name.rfind("crash-", 0) == 0) {
      Result<Program> program = load_bytes(file);
      ASSERT_FALSE(program.is_ok());
      EXPECT_EQ(program.code(), Error::kInvalidProgram);
    } else {
      expect_valid(file);
      ++seeds;
    }
  }
  EXPECT_GE(seeds, 2u);
}

TEST(ProgramValidation, RefusesAMisalignedShape) {
  ProgramSpec spec = valid_spec();
  forward(spec).values[2].misalign_shape = true;
  expect_invalid(spec, "method 'forward': value 2 'y' has a misaligned shape");
}

TEST(ProgramValidation, RefusesAProgramWithoutMethods) {
  ProgramSpec spec = valid_spec();
  spec.methods.clear();
  expect_invalid(spec, "the program has no methods");  // the vector absent
  spec.write_empty_vectors = true;
  expect_invalid(spec, "the program has no methods");  // the vector empty
}

TEST(ProgramValidation, RefusesAnEmptyMethodName) {
  ProgramSpec spec = valid_spec();
  forward(spec).name = "";
  expect_invalid(spec, "method name '' is empty or used twice");
}

TEST(ProgramValidation, RefusesADuplicateMethodName) {
  ProgramSpec spec = valid_spec();
  spec.methods.push_back(spec.methods[0]);
  expect_invalid(spec, "method name 'forward' is empty or used twice");
  spec.methods[1].name = "other";
  expect_valid(file_of(spec));
}

// ---------------------------------------------------------------------------------------
// Values.

TEST(ProgramValidation, RefusesAnArenaLargerThan2To40Bytes) {
  ProgramSpec spec = valid_spec();
  forward(spec).arena_size = kMaxArenaBytes + 1;
  expect_invalid(spec, "method 'forward': arena size 1099511627777 exceeds the limit of 2^40 bytes");
}

TEST(ProgramValidation, RefusesAnUnknownDtype) {
  for (int32_t code : {0, 8, 14, 15, 17, -1, 1000}) {  // 8 string, 14 and 15 complex
    SCOPED_TRACE(code);
    ProgramSpec spec = valid_spec();
    forward(spec).values[2].dtype = code;
    expect_invalid(spec, "method 'forward': value 2 'y' has unknown dtype " + std::to_string(code));
  }
}

TEST(ProgramValidation, RefusesARankAbove8) {
  ProgramSpec spec = valid_spec();
  forward(spec).values[2].shape = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  expect_invalid(spec, "method 'forward': value 2 'y' has rank 9; at most 8 is supported");
  forward(spec).values[2].shape = {1, 1, 1, 1, 2, 1, 1, 2};  // rank 8 is fine
  expect_valid(file_of(spec));
}

TEST(ProgramValidation, RefusesANegativeDimension) {
  ProgramSpec spec = valid_spec();
  forward(spec).values[2].shape = {2, -2};
  expect_invalid(spec, "method 'forward': value 2 'y' has negative dimension -2");
  forward(spec).values[2].shape = {0, std::numeric_limits<int64_t>::min()};
  expect_invalid(spec, "has negative dimension -9223372036854775808");
}

TEST(ProgramValidation, RefusesATensorLargerThan2To40Bytes) {
  ProgramSpec spec = valid_spec();
  forward(spec).values[2].shape = {int64_t{1} << 20, int64_t{1} << 20};  // 2^42 bytes of float32
  expect_invalid(spec, "method 'forward': value 2 'y' is larger than 2^40 bytes");
  forward(spec).values[2].shape = {int64_t{1} << 38, 2};
  expect_invalid(spec, "value 2 'y' is larger than 2^40 bytes");
  forward(spec).values[2].shape = {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max()};
  expect_invalid(spec, "value 2 'y' is larger than 2^40 bytes");
  // Empty, but the strides of its other dimensions would overflow.
  forward(spec).values[2].shape = {0, int64_t{1} << 40, int64_t{1} << 40};
  expect_invalid(spec, "value 2 'y' is larger than 2^40 bytes (zero dimensions aside)");
}

TEST(ProgramValidation, RefusesAValueWithBothAnArenaOffsetAndASegment) {
  ProgramSpec spec = valid_spec();
  forward(spec).values[1].arena_offset = 0;
  expect_invalid(spec, "method 'forward': value 1 'w' must have exactly one of an arena offset and a constant segment");
}

TEST(ProgramValidation, RefusesAValueWithNeitherAnArenaOffsetNorASegment) {
  ProgramSpec spec = valid_spec();
  forward(spec).values[2].arena_offset = -1;
  expect_invalid(spec, "value 2 'y' must have exactly one of an arena offset and a constant segment");
  forward(spec).values[2].arena_offset = -64;  // any negative offset means none
  expect_invalid(spec, "value 2 'y' must have exactly one of an arena offset and a constant segment");
}

TEST(ProgramValidation, AValueNameIsOptionalInMessages) {
  ProgramSpec spec = valid_spec();
  forward(spec).values[2].name = "";
  forward(spec).values[2].arena_offset = -1;
  expect_invalid(spec, "method 'forward': value 2 must have exactly one");
}

TEST(ProgramValidation, RefusesAMisalignedArenaValue) {
  ProgramSpec spec = valid_spec();
  forward(spec).values[2].arena_offset = 32;
  expect_invalid(spec, "value 2 'y' (arena offset 32, 16 bytes) is misaligned or outside the arena of 128 bytes");
}

TEST(ProgramValidation, RefusesAnArenaValueOutsideTheArena) {
  ProgramSpec spec = valid_spec();
  forward(spec).arena_size = 64 + 15;
  expect_invalid(spec, "value 2 'y' (arena offset 64, 16 bytes) is misaligned or outside the arena of 79 bytes");
  forward(spec).arena_size = 128;
  forward(spec).values[2].arena_offset = std::numeric_limits<int64_t>::max() - 63;
  expect_invalid(spec, "value 2 'y' (arena offset 9223372036854775744, 16 bytes) is misaligned or outside");
}

TEST(ProgramValidation, RefusesAConstantSegmentIndexOutOfRange) {
  ProgramSpec spec = valid_spec();
  forward(spec).values[1].segment = 2;
  expect_invalid(spec, "method 'forward': value 1 'w' refers to segment 2 of 2");
  forward(spec).values[1].segment = std::numeric_limits<int32_t>::max();
  expect_invalid(spec, "value 1 'w' refers to segment 2147483647 of 2");
  spec.segments.clear();
  spec.segment_area_size = 0;
  forward(spec).values[1].segment = 0;
  expect_invalid(spec, "value 1 'w' refers to segment 0 of 0");  // no segment table at all
}

TEST(ProgramValidation, RefusesAConstantSegmentOfTheWrongSize) {
  ProgramSpec spec = valid_spec();
  forward(spec).values[1].shape = {2, 3};
  expect_invalid(spec, "value 1 'w' has a segment of 16 bytes; its dtype and shape need 24");
  forward(spec).values[1].shape = {2, 2};
  forward(spec).values[1].dtype = static_cast<int32_t>(DType::kInt64);
  expect_invalid(spec, "value 1 'w' has a segment of 16 bytes; its dtype and shape need 32");
}

// ---------------------------------------------------------------------------------------
// Method inputs and outputs.

TEST(ProgramValidation, RefusesAMethodWithoutOutputs) {
  ProgramSpec spec = valid_spec();
  forward(spec).outputs.clear();
  expect_invalid(spec, "method 'forward': it has no outputs");
  spec.write_empty_vectors = true;
  expect_invalid(spec, "method 'forward': it has no outputs");
}

TEST(ProgramValidation, RefusesAnInputOutOfRange) {
  ProgramSpec spec = valid_spec();
  forward(spec).inputs = {0, 3};
  expect_invalid(spec, "method 'forward': input 1 refers to value 3 of 3");
  forward(spec).inputs = {0xffffffffu};
  expect_invalid(spec, "input 0 refers to value 4294967295 of 3");
}

TEST(ProgramValidation, RefusesAConstantInput) {
  ProgramSpec spec = valid_spec();
  forward(spec).inputs = {0, 1};
  expect_invalid(spec, "method 'forward': input 1 (value 1 'w') is a constant or listed twice");
}

TEST(ProgramValidation, RefusesAnInputListedTwice) {
  ProgramSpec spec = valid_spec();
  forward(spec).inputs = {0, 0};
  expect_invalid(spec, "method 'forward': input 1 (value 0 'x') is a constant or listed twice");
}

TEST(ProgramValidation, RefusesAnOutputOutOfRange) {
  ProgramSpec spec = valid_spec();
  forward(spec).outputs = {2, 7};
  expect_invalid(spec, "method 'forward': output 1 refers to value 7 of 3");
}

TEST(ProgramValidation, RefusesAConstantOutput) {
  ProgramSpec spec = valid_spec();
  forward(spec).outputs = {1};
  expect_invalid(spec, "method 'forward': output 0 (value 1 'w') is a constant");
}

TEST(ProgramValidation, AnInputMayAlsoBeAnOutput) {
  ProgramSpec spec = valid_spec();
  forward(spec).outputs = {2, 0};
  expect_valid(file_of(spec));
}

// ---------------------------------------------------------------------------------------
// Delegates.

TEST(ProgramValidation, RefusesAnInvalidBackendName) {
  for (const char* backend : {"", "XNNPACK", "bad-name", "a b", "with/slash"}) {
    SCOPED_TRACE(backend);
    ProgramSpec spec = valid_spec();
    forward(spec).delegates[0].backend = backend;
    expect_invalid(spec, "method 'forward': delegate 0 names backend '" + std::string(backend) +
                             "', which is not a valid backend name");
  }
  ProgramSpec spec = valid_spec();
  forward(spec).delegates[0].backend = std::string(64, 'a');  // one past the longest name
  expect_invalid(spec, "which is not a valid backend name");
}

TEST(ProgramValidation, RefusesABlobSegmentOutOfRange) {
  ProgramSpec spec = valid_spec();
  forward(spec).delegates[0].blob_segment = 2;
  expect_invalid(spec, "method 'forward': delegate 0 refers to blob segment 2 of 2");
  forward(spec).delegates[0].blob_segment = 0xffffffffu;
  expect_invalid(spec, "delegate 0 refers to blob segment 4294967295 of 2");
}

TEST(ProgramValidation, RefusesAFallbackSegmentOutOfRange) {
  ProgramSpec spec = valid_spec();
  forward(spec).delegates[0].fallback_segment = 2;
  expect_invalid(spec, "method 'forward': delegate 0 refers to fallback segment 2 of 2");
  forward(spec).delegates[0].fallback_segment = -2;
  expect_invalid(spec, "delegate 0 refers to fallback segment -2 of 2");
  forward(spec).delegates[0].fallback_segment = std::numeric_limits<int32_t>::min();
  expect_invalid(spec, "delegate 0 refers to fallback segment -2147483648 of 2");
  forward(spec).delegates[0].fallback_segment = 1;
  expect_valid(file_of(spec));
}

TEST(ProgramValidation, RefusesABlobNamingConstantsWithoutItsGraph) {
  ProgramSpec spec = valid_spec();
  forward(spec).delegates[0].blob_names_constants = true;
  expect_invalid(spec, "method 'forward': delegate 0's blob names constants of its portable graph, but it has none");
  forward(spec).delegates[0].fallback_segment = 1;
  expect_valid(file_of(spec));
}

TEST(ProgramValidation, RefusesAnEmptyCompileSpecKey) {
  ProgramSpec spec = valid_spec();
  forward(spec).delegates[0].compile_specs.push_back(OptionSpec{"", {}});
  expect_invalid(spec, "method 'forward': delegate 0: compile spec 1 has an empty key");
}

// ---------------------------------------------------------------------------------------
// Instructions.

TEST(ProgramValidation, RefusesAnInstructionDelegateOutOfRange) {
  ProgramSpec spec = valid_spec();
  forward(spec).instructions[0].delegate = 1;
  expect_invalid(spec, "method 'forward': instruction 0 refers to delegate 1 of 1");
  forward(spec).delegates.clear();
  forward(spec).instructions[0].delegate = 0;
  expect_invalid(spec, "method 'forward': instruction 0 refers to delegate 0 of 0");
}

TEST(ProgramValidation, RefusesAnInstructionInputOutOfRange) {
  ProgramSpec spec = valid_spec();
  forward(spec).instructions[0].inputs = {0, 1, 3};
  expect_invalid(spec, "method 'forward': instruction 0, input 2 refers to value 3 of 3");
}

TEST(ProgramValidation, RefusesAnInstructionOutputOutOfRange) {
  ProgramSpec spec = valid_spec();
  forward(spec).instructions[0].outputs = {2, 9};
  expect_invalid(spec, "method 'forward': instruction 0, output 1 refers to value 9 of 3");
}

TEST(ProgramValidation, RefusesReadingAValueBeforeItIsWritten) {
  ProgramSpec spec = valid_spec();
  // y is read by the instruction that writes it.
  forward(spec).instructions[0].inputs = {0, 2};
  expect_invalid(spec, "method 'forward': instruction 0 reads value 2 'y' before anything writes it");
  // A second instruction reads what only a later one writes.
  spec = valid_spec();
  MethodSpec& method = forward(spec);
  method.values.push_back(ValueSpec{"t", 1, {2, 2}, 0, -1});
  method.values[0].arena_offset = 128;
  method.arena_size = 192;
  method.instructions = {InstructionSpec{0, {3}, {2}}, InstructionSpec{0, {0, 1}, {3}}};
  expect_invalid(spec, "method 'forward': instruction 0 reads value 3 't' before anything writes it");
}

TEST(ProgramValidation, RefusesWritingAConstant) {
  ProgramSpec spec = valid_spec();
  forward(spec).instructions[0].outputs = {2, 1};
  expect_invalid(spec, "method 'forward': instruction 0 writes value 1 'w', which is a constant or a method input");
}

TEST(ProgramValidation, RefusesWritingAMethodInput) {
  ProgramSpec spec = valid_spec();
  forward(spec).instructions[0].outputs = {0};
  expect_invalid(spec, "method 'forward': instruction 0 writes value 0 'x', which is a constant or a method input");
}

TEST(ProgramValidation, RefusesAnOutputThatIsNeverWritten) {
  ProgramSpec spec = valid_spec();
  forward(spec).instructions.clear();
  expect_invalid(spec, "method 'forward': output 0 (value 2 'y') is never written");
}

TEST(ProgramValidation, RefusesLiveValuesSharingArenaBytes) {
  ProgramSpec spec = valid_spec();
  forward(spec).values[2].arena_offset = 0;  // y on top of x, which is live throughout
  const std::string message = expect_invalid(spec, "share arena bytes while both are live");
  EXPECT_THAT(message, HasSubstr("method 'forward': value "));
  EXPECT_THAT(message, HasSubstr("value 0 'x'"));
  EXPECT_THAT(message, HasSubstr("value 2 'y'"));
  // A partial overlap.
  spec = valid_spec();
  forward(spec).values[0].shape = {2, 16};  // x: 128 bytes at 0, overlapping y at 64
  forward(spec).arena_size = 192;
  expect_invalid(spec, "method 'forward': value 0 'x' and value 2 'y' share arena bytes while both are live");
}

TEST(ProgramValidation, FailuresNameTheMethodTheyAreIn) {
  ProgramSpec spec = valid_spec();
  spec.methods.push_back(spec.methods[0]);
  spec.methods[1].name = "second";
  spec.methods[1].outputs = {1};
  expect_invalid(spec, "method 'second': output 0 (value 1 'w') is a constant");
}

// ---------------------------------------------------------------------------------------
// Corruptions and truncations: never a crash, only kInvalidProgram.

void expect_loads_or_is_invalid(const std::vector<uint8_t>& file) {
  Result<Program> program = load_bytes(file);
  if (!program.is_ok()) {
    EXPECT_EQ(program.code(), Error::kInvalidProgram) << program.status().to_string();
    EXPECT_THAT(program.status().message(), StartsWith(std::string(kOrigin) + ": "));
    return;
  }
  for (const std::string& name : program->method_names()) {
    Result<MethodSummary> summary = program->describe(name);
    EXPECT_TRUE(summary.is_ok()) << summary.status().to_string();
  }
}

TEST(ProgramValidation, SurvivesRandomSingleByteCorruptions) {
  for (const std::vector<uint8_t>& original : {builder_file(), file_of(valid_spec())}) {
    const ProgramFileHeader header = header_of(original);
    // Segment bytes are opaque to the loader; corrupt the header and the flatbuffer.
    const size_t metadata_end = static_cast<size_t>(header.flatbuffer_offset + header.flatbuffer_size);
    std::mt19937 random(20240521);
    std::uniform_int_distribution<size_t> position(0, metadata_end - 1);
    std::uniform_int_distribution<int> delta(1, 255);
    int loaded = 0;
    constexpr int kTrials = 400;
    for (int trial = 0; trial < kTrials; ++trial) {
      std::vector<uint8_t> file = original;
      const size_t at = position(random);
      file[at] = static_cast<uint8_t>(file[at] + delta(random));
      SCOPED_TRACE("byte " + std::to_string(at) + " set to " + std::to_string(file[at]));
      expect_loads_or_is_invalid(file);
      if (load_bytes(file).is_ok()) ++loaded;
    }
    // Most corruptions of a small file hit something the verifier checks.
    EXPECT_LT(loaded, kTrials);
  }
}

TEST(ProgramValidation, SurvivesEveryByteValueAtEveryHeaderAndRootPosition) {
  // Exhaustive over the header and the first bytes of the flatbuffer (root offset,
  // identifier, root vtable).
  const std::vector<uint8_t> original = file_of(valid_spec());
  for (size_t at = 0; at < 64 + 32; ++at) {
    for (int value : {0x00, 0x01, 0x07, 0x08, 0x40, 0x7f, 0x80, 0xff}) {
      std::vector<uint8_t> file = original;
      if (file[at] == value) continue;
      file[at] = static_cast<uint8_t>(value);
      SCOPED_TRACE("byte " + std::to_string(at) + " set to " + std::to_string(value));
      expect_loads_or_is_invalid(file);
    }
  }
}

TEST(ProgramValidation, RefusesEveryTruncation) {
  const std::vector<uint8_t> file = builder_file();
  for (size_t size = 0; size < file.size(); ++size) {
    const std::vector<uint8_t> truncated(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(size));
    Result<Program> program = load_bytes(truncated);
    ASSERT_FALSE(program.is_ok()) << "a truncation to " << size << " bytes loaded";
    ASSERT_EQ(program.code(), Error::kInvalidProgram) << program.status().to_string();
  }
}

// ---------------------------------------------------------------------------------------
// Loading from a path.

class ProgramValidationFileTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::vector<uint8_t>& bytes) { return scratch_.write(name, bytes); }

  testing::ScratchDirectory scratch_{"plugrt_program_validation"};
  const std::string& dir_ = scratch_.path();
};

TEST_F(ProgramValidationFileTest, LoadingAMissingFileIsAnAccessFailureNamingThePath) {
  const std::string path = dir_ + "/does_not_exist.prt";
  Result<Program> mapped = Program::load(path);
  ASSERT_FALSE(mapped.is_ok());
  EXPECT_EQ(mapped.code(), Error::kAccessFailed) << mapped.status().to_string();
  EXPECT_THAT(mapped.status().message(), HasSubstr(path));
  Result<Program> copied = Program::load_copy(path);
  ASSERT_FALSE(copied.is_ok());
  EXPECT_EQ(copied.code(), Error::kAccessFailed) << copied.status().to_string();
  EXPECT_THAT(copied.status().message(), HasSubstr(path));
}

TEST_F(ProgramValidationFileTest, LoadAndLoadCopyAgree) {
  const std::vector<uint8_t> bytes = builder_file();
  const std::string path = write("model.prt", bytes);
  Result<Program> mapped = Program::load(path);
  Result<Program> copied = Program::load_copy(path);
  ASSERT_TRUE(mapped.is_ok()) << mapped.status().to_string();
  ASSERT_TRUE(copied.is_ok()) << copied.status().to_string();
  EXPECT_TRUE(mapped->is_mapped());
  EXPECT_FALSE(copied->is_mapped());
  EXPECT_EQ(mapped->origin(), path);
  EXPECT_EQ(copied->origin(), path);
  EXPECT_EQ(mapped->file_size(), bytes.size());
  EXPECT_EQ(copied->file_size(), bytes.size());
  EXPECT_EQ(mapped->producer(), copied->producer());
  EXPECT_EQ(mapped->num_segments(), copied->num_segments());
  ASSERT_EQ(mapped->method_names(), copied->method_names());
  for (const std::string& name : mapped->method_names()) {
    SCOPED_TRACE(name);
    Result<MethodSummary> a = mapped->describe(name);
    Result<MethodSummary> b = copied->describe(name);
    ASSERT_TRUE(a.is_ok()) << a.status().to_string();
    ASSERT_TRUE(b.is_ok()) << b.status().to_string();
    EXPECT_EQ(a->num_values, b->num_values);
    EXPECT_EQ(a->num_instructions, b->num_instructions);
    EXPECT_EQ(a->arena_size, b->arena_size);
    EXPECT_EQ(a->constant_bytes, b->constant_bytes);
    ASSERT_EQ(a->delegates.size(), b->delegates.size());
    for (size_t d = 0; d < a->delegates.size(); ++d) {
      EXPECT_EQ(a->delegates[d].backend, b->delegates[d].backend);
      EXPECT_EQ(a->delegates[d].blob_size, b->delegates[d].blob_size);
      EXPECT_EQ(a->delegates[d].fallback_size, b->delegates[d].fallback_size);
      EXPECT_EQ(a->delegates[d].compile_spec_keys, b->delegates[d].compile_spec_keys);
    }
  }
}

TEST_F(ProgramValidationFileTest, LoadAndLoadCopyRefuseABadFileAlikeNamingThePath) {
  std::vector<uint8_t> bytes = builder_file();
  bytes.resize(bytes.size() - 1);
  const std::string path = write("truncated.prt", bytes);
  Result<Program> mapped = Program::load(path);
  Result<Program> copied = Program::load_copy(path);
  ASSERT_FALSE(mapped.is_ok());
  ASSERT_FALSE(copied.is_ok());
  EXPECT_EQ(mapped.code(), Error::kInvalidProgram);
  EXPECT_EQ(copied.code(), Error::kInvalidProgram);
  EXPECT_THAT(mapped.status().message(), StartsWith(path + ": the segment area"));
  EXPECT_EQ(mapped.status().message(), copied.status().message());
}

TEST_F(ProgramValidationFileTest, AnEmptyFileIsInvalid) {
  const std::string path = write("empty.prt", {});
  for (bool mapped : {true, false}) {
    Result<Program> program = mapped ? Program::load(path) : Program::load_copy(path);
    ASSERT_FALSE(program.is_ok());
    EXPECT_EQ(program.code(), Error::kInvalidProgram);
    EXPECT_THAT(program.status().message(), HasSubstr(path + ": the file has 0 bytes"));
  }
}

}  // namespace
}  // namespace plugrt
