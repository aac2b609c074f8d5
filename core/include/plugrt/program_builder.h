// SPDX-License-Identifier: Apache-2.0
// ProgramBuilder: writes program files (.prt). Used by the compiler and by tests.
//
// It plans each method's memory (arena offsets reused by lifetime, 64-byte aligned),
// stores constants and blobs as 64-byte aligned segments (identical ones once), and
// lays out the file as core/FORMAT.md describes. It refuses what a reader would refuse
// only where the mistake is the builder's caller's (a bad index); the file is checked
// again, fully, whenever it is loaded.
#ifndef PLUGRT_PROGRAM_BUILDER_H_
#define PLUGRT_PROGRAM_BUILDER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugrt/common/dim_expr.h"
#include "plugrt/dtype.h"
#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt {

/// A compile spec as the builder stores it.
struct CompileSpec {
  std::string key;
  std::vector<uint8_t> value;
};

class ProgramBuilder;

/// One method under construction. Values, delegates and instructions are numbered in
/// the order they are added.
class MethodBuilder {
 public:
  /// A tensor whose bytes live in the method's planned arena.
  uint32_t add_value(std::string name, DType dtype, std::vector<int64_t> shape);
  /// A symbol the method's dimensions may vary with (an ONNX dim_param), in [min, max];
  /// the index common::DimExpr::symbol() names it by. The program is then format 1.2.
  size_t add_symbol(std::string name, int64_t min, int64_t max);
  /// An arena tensor whose dimensions may vary: each an expression over the symbols
  /// added before. Its arena range is planned for each dimension's upper bound.
  uint32_t add_dynamic_value(std::string name, DType dtype, std::vector<common::DimExpr> dims);
  /// A constant tensor stored in a segment of the file.
  uint32_t add_constant(std::string name, DType dtype, std::vector<int64_t> shape, Span<const uint8_t> bytes);
  void add_input(uint32_t value) { inputs_.push_back(value); }
  void add_output(uint32_t value) { outputs_.push_back(value); }

  /// A delegate: `blob` for `backend`, and the portable backend's graph IR blob of the
  /// same subgraph as its fallback (empty: none; not needed when backend is "portable").
  /// `blob_names_constants`: the blob reads the fallback graph's constants by name at init
  /// (PLUGRT_BLOB_NAMES_CONSTANTS); it needs a fallback.
  uint32_t add_delegate(std::string name, std::string backend, Span<const uint8_t> blob,
                        std::vector<CompileSpec> compile_specs = {}, Span<const uint8_t> fallback_blob = {},
                        bool blob_names_constants = false);
  /// Runs `delegate` over these values, in the order its blob expects them.
  void add_instruction(uint32_t delegate, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs);

  const std::string& name() const { return name_; }

 private:
  friend class ProgramBuilder;
  struct Value {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    int64_t segment = -1;
    std::vector<common::DimExpr> dims;  // empty for a static value
  };
  struct Symbol {
    std::string name;
    int64_t min, max;
  };
  struct Delegate {
    std::string name, backend;
    uint32_t blob_segment;
    std::vector<CompileSpec> compile_specs;
    int64_t fallback_segment;
    bool blob_names_constants;
  };
  struct Instruction {
    uint32_t delegate;
    std::vector<uint32_t> inputs, outputs;
  };
  MethodBuilder(ProgramBuilder& program, std::string name) : program_(&program), name_(std::move(name)) {}

  ProgramBuilder* program_;
  std::string name_;
  std::vector<Value> values_;
  std::vector<Symbol> symbols_;
  std::vector<uint32_t> inputs_, outputs_;
  std::vector<Delegate> delegates_;
  std::vector<Instruction> instructions_;
};

class ProgramBuilder {
 public:
  ProgramBuilder() = default;
  ProgramBuilder(const ProgramBuilder&) = delete;
  ProgramBuilder& operator=(const ProgramBuilder&) = delete;

  /// A new method; the reference stays valid while the builder lives.
  MethodBuilder& add_method(std::string name);
  void set_producer(std::string producer) { producer_ = std::move(producer); }

  /// Stores `bytes` as a segment, or finds an identical one; returns its index.
  uint32_t add_segment(Span<const uint8_t> bytes);
  /// The same, except that bytes which segment `holder` ends with, from a 64-aligned
  /// offset, are not stored again: the new segment lies within that one (a blob that
  /// carries its partition's graph after a header shares it with the portable fallback).
  uint32_t add_segment_within(uint32_t holder, Span<const uint8_t> bytes);
  size_t num_segments() const { return segments_.size(); }

  /// The whole file. Errors: kInvalidArgument naming the method and the bad index,
  /// dtype or shape.
  Result<std::vector<uint8_t>> finish() const;
  /// finish() written to `path`. Errors: those of finish(), kAccessFailed naming the path.
  Status write(const std::string& path) const;

 private:
  std::vector<std::unique_ptr<MethodBuilder>> methods_;
  /// A segment stored in another's bytes (its own entry in segments_ stays empty).
  struct Within {
    uint32_t holder;
    uint64_t offset;
    uint64_t size;
  };
  std::optional<uint32_t> find_segment(Span<const uint8_t> bytes, uint64_t hash) const;

  std::vector<std::vector<uint8_t>> segments_;
  std::multimap<uint64_t, uint32_t> segment_by_hash_;
  std::map<uint32_t, Within> within_;
  std::string producer_ = "plugrt";
};

}  // namespace plugrt

#endif  // PLUGRT_PROGRAM_BUILDER_H_
