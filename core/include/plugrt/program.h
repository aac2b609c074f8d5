// SPDX-License-Identifier: Apache-2.0
// Program: a loaded and fully verified program file (.prt).
//
// Loading maps the file (or reads it when it cannot be mapped), checks the header, runs
// the FlatBuffers verifier, then checks every index, offset, size, shape and dtype of
// every method (core/FORMAT.md lists the checks). Loading takes constant time in the
// size of the constant data: segments are used in place, never copied.
// A Program is cheap to copy and immutable; Method instances (method.h) keep what they
// use of it alive, so a Program may be destroyed before its methods.
#ifndef PLUGRT_PROGRAM_H_
#define PLUGRT_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugrt/dtype.h"
#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt {

namespace internal {
struct ProgramData;
}

/// A named tensor of a method, as the file declares it.
struct TensorSpec {
  std::string name;
  DType dtype = DType::kUndefined;
  /// Dimensions; for one that varies, its upper bound.
  std::vector<int64_t> shape;
  /// Format 1.2: per dimension, the words of its expression over the method's symbols
  /// (plugrt/common/dim_expr.h) when it varies, empty when static. Empty for a static value.
  std::vector<std::vector<int64_t>> dims;
  /// Bytes at `shape` (the upper bound for a value whose dimensions vary).
  uint64_t num_bytes() const;
  bool varies() const { return !dims.empty(); }
};

/// One delegate entry of a method, for reports and `plugrt inspect`.
struct DelegateSummary {
  std::string name;
  std::string backend;
  uint64_t blob_size = 0;
  /// 0 when the delegate has no portable fallback.
  uint64_t fallback_size = 0;
  /// The blob names its fallback graph's constants instead of holding copies.
  bool blob_names_constants = false;
  /// The fallback's bytes are stored within the blob's (a varying-shape blob carries
  /// its partition's graph), so the file holds them once.
  bool fallback_within_blob = false;
  std::vector<std::string> compile_spec_keys;
};

/// One delegate's stored bytes and its instruction, as placement at load time reads them.
/// The spans stay valid while the Program (or a copy of it) lives.
struct DelegateContents {
  std::string name;
  std::string backend;
  Span<const uint8_t> blob;
  /// The same subgraph as a graph IR: the blob itself for a portable delegate, else its
  /// fallback; empty when it has none.
  Span<const uint8_t> portable_graph;
  /// Method value indices the delegate reads and writes, in order (its instruction's).
  std::vector<uint32_t> inputs, outputs;
  /// It has compile specs (placement at load time does not carry them to a new blob).
  bool has_compile_specs = false;
  /// The blob names portable_graph's constants instead of holding copies.
  bool blob_names_constants = false;
};

/// What a method is made of: its values, which of them are constants (with their
/// bytes), its inputs and outputs, and its delegates in instruction order.
struct MethodContents {
  std::vector<TensorSpec> values;
  std::vector<Span<const uint8_t>> constants;  ///< per value; empty unless a constant
  std::vector<uint32_t> inputs, outputs;
  std::vector<DelegateContents> delegates;
};

/// A symbol a method's dimensions vary with (format 1.2): an ONNX dim_param and its range.
struct SymbolSpec {
  std::string name;
  int64_t min = 0;
  int64_t max = 0;
};

struct MethodSummary {
  std::string name;
  /// Empty unless its dimensions vary; TensorSpec::dims name these by index.
  std::vector<SymbolSpec> symbols;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<DelegateSummary> delegates;
  size_t num_values = 0;
  size_t num_instructions = 0;
  uint64_t arena_size = 0;
  uint64_t constant_bytes = 0;
};

class Program {
 public:
  /// Maps and verifies the file at `path`. Errors: kAccessFailed (cannot read it),
  /// kInvalidProgram (fails a check; the message names the path and what is wrong).
  [[nodiscard]] static Result<Program> load(const std::string& path);
  /// Like load(), but reads the file into memory instead of mapping it.
  [[nodiscard]] static Result<Program> load_copy(const std::string& path);
  /// Verifies a copy of `bytes`; `origin` names it in messages.
  [[nodiscard]] static Result<Program> from_bytes(Span<const uint8_t> bytes, std::string origin = "<memory>");

  /// Verifies `bytes`, which `owner` keeps alive and unmoved (a part of a mapped file),
  /// and uses them in place. They must be 64-byte aligned (kInvalidArgument otherwise).
  [[nodiscard]] static Result<Program> from_shared(Span<const uint8_t> bytes, std::shared_ptr<const void> owner,
                                                   std::string origin);
  /// The path it was loaded from, or the origin given to from_bytes().
  const std::string& origin() const;
  bool is_mapped() const;
  /// The identity of the file it was loaded from (MappedFile::identity()); empty when it
  /// did not come from a file.
  std::string file_identity() const;
  uint64_t file_size() const;
  uint32_t format_major() const;
  uint32_t format_minor() const;
  std::string producer() const;
  size_t num_segments() const;

  std::vector<std::string> method_names() const;
  /// Errors: kNotFound, listing the methods that exist.
  Result<MethodSummary> describe(std::string_view method) const;
  /// What `method` is made of. Errors: kNotFound; kNotSupported when one delegate runs
  /// in several instructions (compile_graph never writes that).
  Result<MethodContents> contents(std::string_view method) const;

 private:
  friend class Method;
  explicit Program(std::shared_ptr<const internal::ProgramData> data) : data_(std::move(data)) {}
  [[nodiscard]] static Result<Program> verify(std::shared_ptr<internal::ProgramData> data);
  /// kNotFound for method `name`, listing the methods that exist.
  Status not_found(std::string_view name) const;

  std::shared_ptr<const internal::ProgramData> data_;
};

}  // namespace plugrt

#endif  // PLUGRT_PROGRAM_H_
