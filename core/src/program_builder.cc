// SPDX-License-Identifier: Apache-2.0
#include "plugrt/program_builder.h"

#include <cstdio>
#include <cstring>
#include <memory>

#include "plugrt/content_hash.h"
#include "plugrt/memory_planner.h"
#include "plugrt/program_format.h"
#include "plugrt/schema/program_generated.h"

namespace plugrt {

namespace {

/// The byte size of a tensor; false when a dimension is negative or the size is too large.
bool tensor_bytes(DType dtype, const std::vector<int64_t>& shape, uint64_t* bytes) {
  uint64_t total = dtype_size(dtype);
  if (total == 0 || shape.size() > static_cast<size_t>(kMaxTensorRank)) return false;
  for (int64_t dim : shape) {
    if (dim < 0) return false;
    if (dim != 0 && total > kMaxTensorBytes / static_cast<uint64_t>(dim)) return false;
    total *= static_cast<uint64_t>(dim);
  }
  *bytes = total;
  return true;
}

}  // namespace

uint32_t MethodBuilder::add_value(std::string name, DType dtype, std::vector<int64_t> shape) {
  values_.push_back(Value{std::move(name), dtype, std::move(shape), -1, {}});
  return static_cast<uint32_t>(values_.size() - 1);
}

size_t MethodBuilder::add_symbol(std::string name, int64_t min, int64_t max) {
  symbols_.push_back(Symbol{std::move(name), min, max});
  return symbols_.size() - 1;
}

uint32_t MethodBuilder::add_dynamic_value(std::string name, DType dtype, std::vector<common::DimExpr> dims) {
  std::vector<common::DimRange> ranges;
  for (const Symbol& symbol : symbols_) ranges.push_back({symbol.min, symbol.max});
  bool varies = false;
  std::vector<int64_t> bounds = common::dim_upper_bounds(dims, ranges, &varies);
  values_.push_back(Value{std::move(name), dtype, std::move(bounds), -1, {}});
  if (varies) values_.back().dims = std::move(dims);
  return static_cast<uint32_t>(values_.size() - 1);
}

uint32_t MethodBuilder::add_constant(std::string name, DType dtype, std::vector<int64_t> shape,
                                     Span<const uint8_t> bytes) {
  const uint32_t segment = program_->add_segment(bytes);
  values_.push_back(Value{std::move(name), dtype, std::move(shape), segment, {}});
  return static_cast<uint32_t>(values_.size() - 1);
}

uint32_t MethodBuilder::add_delegate(std::string name, std::string backend, Span<const uint8_t> blob,
                                     std::vector<CompileSpec> compile_specs, Span<const uint8_t> fallback_blob,
                                     bool blob_names_constants) {
  const uint32_t blob_segment = program_->add_segment(blob);
  const int64_t fallback = fallback_blob.empty() ? -1 : program_->add_segment_within(blob_segment, fallback_blob);
  delegates_.push_back(Delegate{std::move(name), std::move(backend), blob_segment, std::move(compile_specs), fallback,
                                blob_names_constants});
  return static_cast<uint32_t>(delegates_.size() - 1);
}

void MethodBuilder::add_instruction(uint32_t delegate, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs) {
  instructions_.push_back(Instruction{delegate, std::move(inputs), std::move(outputs)});
}

MethodBuilder& ProgramBuilder::add_method(std::string name) {
  methods_.push_back(std::unique_ptr<MethodBuilder>(new MethodBuilder(*this, std::move(name))));
  return *methods_.back();
}

std::optional<uint32_t> ProgramBuilder::find_segment(Span<const uint8_t> bytes, uint64_t hash) const {
  // Candidate duplicates by hash, then compared.
  auto [begin, end] = segment_by_hash_.equal_range(hash);
  for (auto it = begin; it != end; ++it) {
    const std::vector<uint8_t>& existing = segments_[it->second];
    if (existing.size() == bytes.size() &&
        (bytes.empty() || std::memcmp(existing.data(), bytes.data(), bytes.size()) == 0)) {
      return it->second;
    }
  }
  return std::nullopt;
}

uint32_t ProgramBuilder::add_segment_within(uint32_t holder, Span<const uint8_t> bytes) {
  const std::vector<uint8_t>& outer = segments_.at(holder);
  if (bytes.empty() || within_.count(holder) != 0 || outer.size() < bytes.size()) return add_segment(bytes);
  const uint64_t offset = outer.size() - bytes.size();
  if (offset % kSegmentAlignment != 0 || std::memcmp(outer.data() + offset, bytes.data(), bytes.size()) != 0) {
    return add_segment(bytes);
  }
  if (std::optional<uint32_t> same = find_segment(bytes, content_hash(bytes).low)) return *same;
  segments_.emplace_back();
  const uint32_t index = static_cast<uint32_t>(segments_.size() - 1);
  within_[index] = Within{holder, offset, bytes.size()};
  return index;
}

uint32_t ProgramBuilder::add_segment(Span<const uint8_t> bytes) {
  const uint64_t hash = content_hash(bytes).low;
  if (std::optional<uint32_t> same = find_segment(bytes, hash)) return *same;
  segments_.emplace_back(bytes.begin(), bytes.end());
  const uint32_t index = static_cast<uint32_t>(segments_.size() - 1);
  segment_by_hash_.emplace(hash, index);
  return index;
}

namespace {

Status invalid(const MethodBuilder& method, const std::string& what) {
  return Status(Error::kInvalidArgument, "method '" + method.name() + "': " + what);
}

}  // namespace

Result<std::vector<uint8_t>> ProgramBuilder::finish() const {
  flatbuffers::FlatBufferBuilder fbb(4096);
  std::vector<flatbuffers::Offset<program::Method>> methods;
  for (const std::unique_ptr<MethodBuilder>& method_ptr : methods_) {
    const MethodBuilder& method = *method_ptr;
    const size_t num_values = method.values_.size();
    auto check_value = [&](uint32_t v, const std::string& where) -> Status {
      if (v >= num_values) {
        return invalid(method, where + " refers to value " + std::to_string(v) + " of " + std::to_string(num_values));
      }
      return Status::ok();
    };
    // Lifetimes in steps: inputs and outputs live throughout (step 0 to n + 1), so that
    // callers may read their inputs after a run; instruction i is step i + 1.
    const uint32_t num_steps = static_cast<uint32_t>(method.instructions_.size());
    std::vector<BufferLifetime> lifetimes(num_values);
    std::vector<bool> defined(num_values, false);
    for (uint32_t v : method.inputs_) {
      PLUGRT_RETURN_IF_ERROR(check_value(v, "an input"));
      lifetimes[v].first_step = 0;
      lifetimes[v].last_step = num_steps + 1;
      defined[v] = true;
    }
    for (uint32_t step = 0; step < num_steps; ++step) {
      const MethodBuilder::Instruction& instruction = method.instructions_[step];
      const std::string where = "instruction " + std::to_string(step);
      if (instruction.delegate >= method.delegates_.size()) {
        return invalid(method, where + " refers to delegate " + std::to_string(instruction.delegate));
      }
      for (uint32_t v : instruction.inputs) {
        PLUGRT_RETURN_IF_ERROR(check_value(v, where));
        lifetimes[v].last_step = std::max(lifetimes[v].last_step, step + 1);
      }
      for (uint32_t v : instruction.outputs) {
        PLUGRT_RETURN_IF_ERROR(check_value(v, where));
        if (!defined[v]) lifetimes[v].first_step = step + 1;
        lifetimes[v].last_step = std::max(lifetimes[v].last_step, step + 1);
        defined[v] = true;
      }
    }
    for (uint32_t v : method.outputs_) {
      PLUGRT_RETURN_IF_ERROR(check_value(v, "an output"));
      lifetimes[v].last_step = num_steps + 1;
    }
    std::vector<size_t> planned;
    std::vector<BufferLifetime> planned_lifetimes;
    for (size_t v = 0; v < num_values; ++v) {
      const MethodBuilder::Value& value = method.values_[v];
      uint64_t bytes = 0;
      if (!tensor_bytes(value.dtype, value.shape, &bytes)) {
        return invalid(method, "value " + std::to_string(v) + " '" + value.name + "' has an unknown dtype, " +
                                   "a negative dimension, or is too large");
      }
      if (value.segment >= 0) {
        if (segments_[static_cast<size_t>(value.segment)].size() != bytes) {
          return invalid(method, "constant " + std::to_string(v) + " '" + value.name + "' has " +
                                     std::to_string(segments_[static_cast<size_t>(value.segment)].size()) +
                                     " bytes; its dtype and shape need " + std::to_string(bytes));
        }
        continue;
      }
      lifetimes[v].size = bytes;
      planned.push_back(v);
      planned_lifetimes.push_back(lifetimes[v]);
    }
    const MemoryPlan plan = plan_memory(planned_lifetimes, kArenaAlignment);
    std::vector<int64_t> arena_offsets(num_values, -1);
    for (size_t k = 0; k < planned.size(); ++k) arena_offsets[planned[k]] = static_cast<int64_t>(plan.offsets[k]);

    std::vector<flatbuffers::Offset<program::TensorValue>> values;
    for (size_t v = 0; v < num_values; ++v) {
      const MethodBuilder::Value& value = method.values_[v];
      flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<ir::Dim>>> dims;
      if (!value.dims.empty()) {
        std::vector<flatbuffers::Offset<ir::Dim>> entries;
        for (const common::DimExpr& dim : value.dims) {
          entries.push_back(ir::CreateDim(fbb, dim.is_constant() ? 0 : fbb.CreateVector(dim.words())));
        }
        dims = fbb.CreateVector(entries);
      }
      values.push_back(program::CreateTensorValue(fbb, fbb.CreateString(value.name),
                                                  static_cast<ir::DType>(value.dtype), fbb.CreateVector(value.shape),
                                                  arena_offsets[v], static_cast<int32_t>(value.segment), dims));
    }
    std::vector<flatbuffers::Offset<program::Delegate>> delegates;
    for (const MethodBuilder::Delegate& delegate : method.delegates_) {
      std::vector<flatbuffers::Offset<program::Option>> specs;
      for (const CompileSpec& spec : delegate.compile_specs) {
        specs.push_back(program::CreateOption(fbb, fbb.CreateString(spec.key), fbb.CreateVector(spec.value)));
      }
      delegates.push_back(program::CreateDelegate(
          fbb, fbb.CreateString(delegate.name), fbb.CreateString(delegate.backend), delegate.blob_segment,
          fbb.CreateVector(specs), static_cast<int32_t>(delegate.fallback_segment), delegate.blob_names_constants));
    }
    std::vector<flatbuffers::Offset<program::Instruction>> instructions;
    for (const MethodBuilder::Instruction& instruction : method.instructions_) {
      instructions.push_back(program::CreateInstruction(fbb, instruction.delegate, fbb.CreateVector(instruction.inputs),
                                                        fbb.CreateVector(instruction.outputs)));
    }
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<ir::Symbol>>> symbols;
    if (!method.symbols_.empty()) {
      std::vector<flatbuffers::Offset<ir::Symbol>> entries;
      for (const MethodBuilder::Symbol& symbol : method.symbols_) {
        entries.push_back(ir::CreateSymbol(fbb, fbb.CreateString(symbol.name), symbol.min, symbol.max));
      }
      symbols = fbb.CreateVector(entries);
    }
    methods.push_back(program::CreateMethod(fbb, fbb.CreateString(method.name()), fbb.CreateVector(values),
                                            fbb.CreateVector(method.inputs_), fbb.CreateVector(method.outputs_),
                                            fbb.CreateVector(delegates), fbb.CreateVector(instructions),
                                            plan.arena_size, symbols));
  }

  // Segments are laid out back to back, each at a multiple of kSegmentAlignment; one
  // within another takes its place there.
  std::vector<program::Segment> segment_table;
  uint64_t segments_size = 0;
  for (const std::vector<uint8_t>& segment : segments_) {
    segments_size = align_up(segments_size, kSegmentAlignment);
    segment_table.emplace_back(segments_size, segment.size());
    segments_size += segment.size();
  }
  for (const auto& [index, within] : within_) {
    segment_table[index] = program::Segment(segment_table[within.holder].offset() + within.offset, within.size);
  }
  auto root = program::CreateProgram(fbb, fbb.CreateVector(methods), fbb.CreateVectorOfStructs(segment_table),
                                     fbb.CreateString(producer_));
  program::FinishProgramBuffer(fbb, root);

  ProgramFileHeader header{};
  std::memcpy(header.magic, kProgramMagic, sizeof(header.magic));
  header.format_major = kProgramFormatMajor;
  // 1.2 only where it is needed (symbols), so older 1.x readers keep reading the rest.
  bool any_symbols = false;
  for (const auto& method : methods_) any_symbols = any_symbols || !method->symbols_.empty();
  header.format_minor = any_symbols ? kProgramFormatMinor : 1;
  header.header_size = sizeof(ProgramFileHeader);
  header.flatbuffer_offset = sizeof(ProgramFileHeader);
  header.flatbuffer_size = fbb.GetSize();
  header.segments_offset = align_up(header.flatbuffer_offset + header.flatbuffer_size, kSegmentAlignment);
  header.segments_size = segments_size;

  std::vector<uint8_t> file(header.segments_offset + segments_size, 0);
  std::memcpy(file.data(), &header, sizeof(header));
  std::memcpy(file.data() + header.flatbuffer_offset, fbb.GetBufferPointer(), fbb.GetSize());
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (!segments_[i].empty()) {
      std::memcpy(file.data() + header.segments_offset + segment_table[i].offset(), segments_[i].data(),
                  segments_[i].size());
    }
  }
  return file;
}

Status ProgramBuilder::write(const std::string& path) const {
  PLUGRT_ASSIGN_OR_RETURN(std::vector<uint8_t> file, finish());
  std::unique_ptr<FILE, int (*)(FILE*)> out(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!out) return Status(Error::kAccessFailed, path + ": cannot open for writing: " + std::strerror(errno));
  if (std::fwrite(file.data(), 1, file.size(), out.get()) != file.size() || std::fflush(out.get()) != 0) {
    return Status(Error::kAccessFailed, path + ": write failed: " + std::strerror(errno));
  }
  return Status::ok();
}

}  // namespace plugrt
