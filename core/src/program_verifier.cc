// SPDX-License-Identifier: Apache-2.0
#include "program_verifier.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plugrt/common/dim_expr.h"
#include "plugrt/dtype.h"
#include "plugrt/names.h"

namespace plugrt::internal {

namespace {

using flatbuffers::uoffset_t;

/// Collects the first failure; `fail` returns false so checks read as `return fail(...)`.
class Checker {
 public:
  bool fail(std::string what) {
    if (message_.empty()) message_ = std::move(what);
    return false;
  }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

/// a + b <= limit, without overflow.
bool fits(uint64_t a, uint64_t b, uint64_t limit) { return a <= limit && b <= limit - a; }

template <typename T>
size_t count(const flatbuffers::Vector<T>* vector) {
  return vector != nullptr ? vector->size() : 0;
}

bool check_header(const ProgramData& data, ProgramFileHeader* header, Checker& c) {
  const uint64_t file_size = data.bytes.size();
  if (file_size >= sizeof(kProgramMagic) && std::memcmp(data.bytes.data(), kProgramMagic, sizeof(kProgramMagic)) != 0) {
    return c.fail("not a plugrt program (the magic bytes PLUGRTPG are missing)");
  }
  if (file_size < sizeof(ProgramFileHeader)) {
    return c.fail("the file has " + std::to_string(file_size) + " bytes, fewer than the 64-byte header");
  }
  std::memcpy(header, data.bytes.data(), sizeof(ProgramFileHeader));
  if (std::memcmp(header->magic, kProgramMagic, sizeof(kProgramMagic)) != 0) {
    return c.fail("not a plugrt program (the magic bytes PLUGRTPG are missing)");
  }
  if (header->format_major != kProgramFormatMajor) {
    return c.fail("program format " + std::to_string(header->format_major) + "." +
                  std::to_string(header->format_minor) + " is not readable by this runtime (it reads " +
                  std::to_string(kProgramFormatMajor) + ".x)");
  }
  if (header->header_size < sizeof(ProgramFileHeader) || header->header_size > file_size) {
    return c.fail("header size " + std::to_string(header->header_size) + " is out of range");
  }
  if (header->flags != 0) return c.fail("unknown header flags " + std::to_string(header->flags));
  if (header->flatbuffer_offset < header->header_size || header->flatbuffer_offset % 8 != 0 ||
      !fits(header->flatbuffer_offset, header->flatbuffer_size, file_size)) {
    return c.fail("the flatbuffer range (offset " + std::to_string(header->flatbuffer_offset) + ", size " +
                  std::to_string(header->flatbuffer_size) + ") is misaligned or outside the file of " +
                  std::to_string(file_size) + " bytes");
  }
  if (header->segments_offset % kSegmentAlignment != 0 ||
      header->segments_offset < header->flatbuffer_offset + header->flatbuffer_size ||
      !fits(header->segments_offset, header->segments_size, file_size)) {
    return c.fail("the segment area (offset " + std::to_string(header->segments_offset) + ", size " +
                  std::to_string(header->segments_size) + ") is misaligned, overlaps the flatbuffer, or is " +
                  "outside the file of " + std::to_string(file_size) + " bytes");
  }
  return true;
}

/// Whether `vector`'s elements start at a multiple of `alignment`. The FlatBuffers
/// verifier checks only the 4-byte alignment of a vector's length, so a crafted file may
/// put 8-byte elements (Segment, a shape's dimensions) where reading them is undefined.
template <typename T>
bool elements_aligned(const flatbuffers::Vector<T>* vector, size_t alignment) {
  return vector == nullptr || vector->size() == 0 || reinterpret_cast<uintptr_t>(vector->Data()) % alignment == 0;
}

bool check_segments(const program::Program& root, uint64_t area_size, Checker& c) {
  if (!elements_aligned(root.segments(), alignof(program::Segment))) {
    return c.fail("the segment table is misaligned");
  }
  for (size_t i = 0; i < count(root.segments()); ++i) {
    const program::Segment* segment = root.segments()->Get(static_cast<uoffset_t>(i));
    if (segment->offset() % kSegmentAlignment != 0 || !fits(segment->offset(), segment->size(), area_size)) {
      return c.fail("segment " + std::to_string(i) + " (offset " + std::to_string(segment->offset()) + ", size " +
                    std::to_string(segment->size()) + ") is misaligned or outside the segment area of " +
                    std::to_string(area_size) + " bytes");
    }
  }
  return true;
}

/// Checks one method. `where` prefixes messages ("method 'forward'").
class MethodChecker {
 public:
  MethodChecker(const program::Program& root, const program::Method& method, Checker& c)
      : root_(root), method_(method), c_(c), where_("method '" + method.name()->str() + "'") {}

  bool check() {
    num_values_ = count(method_.values());
    if (method_.arena_size() > kMaxArenaBytes) {
      return fail("arena size " + std::to_string(method_.arena_size()) + " exceeds the limit of 2^40 bytes");
    }
    bytes_.assign(num_values_, 0);
    if (!check_symbols()) return false;
    for (size_t v = 0; v < num_values_; ++v) {
      if (!check_value(v) || !check_dims(v)) return false;
    }
    return check_io() && check_symbols_are_input_sizes() && check_delegates() && check_instructions() &&
           check_arena_overlaps();
  }

 private:
  bool fail(const std::string& what) { return c_.fail(where_ + ": " + what); }

  std::string value_name(size_t v) const {
    const program::TensorValue* value = method_.values()->Get(static_cast<uoffset_t>(v));
    std::string text = "value " + std::to_string(v);
    if (value->name() != nullptr && value->name()->size() > 0) text += " '" + value->name()->str() + "'";
    return text;
  }

  const program::TensorValue& value(size_t v) const { return *method_.values()->Get(static_cast<uoffset_t>(v)); }
  bool is_constant(size_t v) const { return value(v).segment() >= 0; }

  bool check_value(size_t v) {
    const program::TensorValue& tensor = value(v);
    const int32_t code = static_cast<int32_t>(tensor.dtype());
    if (!is_known_dtype(code)) return fail(value_name(v) + " has unknown dtype " + std::to_string(code));
    uint64_t bytes = dtype_size(static_cast<DType>(code));
    if (!elements_aligned(tensor.shape(), alignof(int64_t))) return fail(value_name(v) + " has a misaligned shape");
    if (count(tensor.shape()) > static_cast<size_t>(kMaxTensorRank)) {
      return fail(value_name(v) + " has rank " + std::to_string(count(tensor.shape())) + "; at most " +
                  std::to_string(kMaxTensorRank) + " is supported");
    }
    // The product of the nonzero dimensions is bounded too, so that a backend computing
    // strides or partial products of a shape with a 0 in it cannot overflow.
    uint64_t nonzero_bytes = bytes;
    for (size_t axis = 0; axis < count(tensor.shape()); ++axis) {
      const int64_t dim = tensor.shape()->Get(static_cast<uoffset_t>(axis));
      if (dim < 0) return fail(value_name(v) + " has negative dimension " + std::to_string(dim));
      if (dim != 0 && nonzero_bytes > kMaxTensorBytes / static_cast<uint64_t>(dim)) {
        return fail(value_name(v) + " is larger than 2^40 bytes (zero dimensions aside)");
      }
      if (dim != 0) nonzero_bytes *= static_cast<uint64_t>(dim);
      bytes *= static_cast<uint64_t>(dim);
    }
    bytes_[v] = bytes;
    const bool in_arena = tensor.arena_offset() >= 0;
    const bool constant = tensor.segment() >= 0;
    if (in_arena == constant) {
      return fail(value_name(v) + " must have exactly one of an arena offset and a constant segment");
    }
    if (in_arena) {
      const uint64_t offset = static_cast<uint64_t>(tensor.arena_offset());
      if (offset % kArenaAlignment != 0 || !fits(offset, bytes, method_.arena_size())) {
        return fail(value_name(v) + " (arena offset " + std::to_string(offset) + ", " + std::to_string(bytes) +
                    " bytes) is misaligned or outside the arena of " + std::to_string(method_.arena_size()) + " bytes");
      }
      return true;
    }
    const size_t segment = static_cast<size_t>(tensor.segment());
    if (segment >= count(root_.segments())) {
      return fail(value_name(v) + " refers to segment " + std::to_string(segment) + " of " +
                  std::to_string(count(root_.segments())));
    }
    const uint64_t size = root_.segments()->Get(static_cast<uoffset_t>(segment))->size();
    if (size != bytes) {
      return fail(value_name(v) + " has a segment of " + std::to_string(size) + " bytes; its dtype and shape need " +
                  std::to_string(bytes));
    }
    return true;
  }

  // Format 1.2: the symbols' ranges, each within [0, 2^40].
  bool check_symbols() {
    symbol_ranges_.clear();
    for (size_t k = 0; k < count(method_.symbols()); ++k) {
      const ir::Symbol* symbol = method_.symbols()->Get(static_cast<uoffset_t>(k));
      if (symbol->min() < 0 || symbol->min() > symbol->max() || symbol->max() > (int64_t{1} << 40)) {
        return fail("symbol " + std::to_string(k) + " ('" + symbol->name()->str() + "') has the range [" +
                    std::to_string(symbol->min()) + ", " + std::to_string(symbol->max()) + "]");
      }
      symbol_ranges_.push_back({symbol->min(), symbol->max()});
    }
    return true;
  }

  // Format 1.2: a value's dimensions that vary, each within [0, its bound].
  bool check_dims(size_t v) {
    const program::TensorValue& tensor = value(v);
    if (tensor.dims() == nullptr) return true;
    if (is_constant(v)) return fail(value_name(v) + " is a constant with dimensions that vary");
    if (count(tensor.dims()) != count(tensor.shape())) {
      return fail(value_name(v) + " has " + std::to_string(count(tensor.dims())) + " dimension expressions for rank " +
                  std::to_string(count(tensor.shape())));
    }
    for (size_t axis = 0; axis < count(tensor.dims()); ++axis) {
      const auto* words = tensor.dims()->Get(static_cast<uoffset_t>(axis))->words();
      if (count(words) == 0) continue;
      const std::string what = value_name(v) + " dimension " + std::to_string(axis);
      if (!elements_aligned(words, alignof(int64_t))) return fail(what + " is misaligned");
      const int64_t bound = tensor.shape()->Get(static_cast<uoffset_t>(axis));
      if (std::string why = common::check_dim_within(words->data(), words->size(), symbol_ranges_, bound);
          !why.empty()) {
        return fail(what + why);
      }
    }
    return true;
  }

  // Each symbol is the size of a method input's dimension whose expression is the symbol
  // alone, so the inputs' shapes give its value on every run.
  bool check_symbols_are_input_sizes() {
    std::vector<bool> given(symbol_ranges_.size(), false);
    for (size_t k = 0; k < count(method_.inputs()); ++k) {
      const program::TensorValue& tensor = value(method_.inputs()->Get(static_cast<uoffset_t>(k)));
      for (size_t axis = 0; axis < count(tensor.dims()); ++axis) {
        const auto* words = tensor.dims()->Get(static_cast<uoffset_t>(axis))->words();
        const int64_t symbol = words != nullptr ? common::sole_symbol(words->data(), words->size()) : -1;
        if (symbol >= 0) given[static_cast<size_t>(symbol)] = true;
      }
    }
    for (size_t k = 0; k < given.size(); ++k) {
      if (!given[k]) {
        return fail("symbol " + std::to_string(k) + " ('" +
                    method_.symbols()->Get(static_cast<uoffset_t>(k))->name()->str() +
                    "') is not the size of any input's dimension");
      }
    }
    return true;
  }

  bool check_index(uint32_t v, const std::string& what) {
    if (v >= num_values_) {
      return fail(what + " refers to value " + std::to_string(v) + " of " + std::to_string(num_values_));
    }
    return true;
  }

  bool check_io() {
    if (count(method_.outputs()) == 0) return fail("it has no outputs");
    defined_.assign(num_values_, false);
    is_input_.assign(num_values_, false);
    for (size_t v = 0; v < num_values_; ++v) defined_[v] = is_constant(v);
    for (size_t k = 0; k < count(method_.inputs()); ++k) {
      const uint32_t v = method_.inputs()->Get(static_cast<uoffset_t>(k));
      if (!check_index(v, "input " + std::to_string(k))) return false;
      if (is_constant(v) || is_input_[v]) {
        return fail("input " + std::to_string(k) + " (" + value_name(v) + ") is a constant or listed twice");
      }
      is_input_[v] = true;
      defined_[v] = true;
    }
    for (size_t k = 0; k < count(method_.outputs()); ++k) {
      const uint32_t v = method_.outputs()->Get(static_cast<uoffset_t>(k));
      if (!check_index(v, "output " + std::to_string(k))) return false;
      if (is_constant(v)) return fail("output " + std::to_string(k) + " (" + value_name(v) + ") is a constant");
    }
    return true;
  }

  bool check_delegates() {
    const size_t num_segments = count(root_.segments());
    for (size_t d = 0; d < count(method_.delegates()); ++d) {
      const program::Delegate* delegate = method_.delegates()->Get(static_cast<uoffset_t>(d));
      const std::string what = "delegate " + std::to_string(d);
      if (!is_valid_name(delegate->backend()->string_view())) {
        return fail(what + " names backend '" + delegate->backend()->str() + "', which is not a valid backend name");
      }
      if (delegate->blob_segment() >= num_segments) {
        return fail(what + " refers to blob segment " + std::to_string(delegate->blob_segment()) + " of " +
                    std::to_string(num_segments));
      }
      const int32_t fallback = delegate->fallback_segment();
      if (fallback < -1 || (fallback >= 0 && static_cast<size_t>(fallback) >= num_segments)) {
        return fail(what + " refers to fallback segment " + std::to_string(fallback) + " of " +
                    std::to_string(num_segments));
      }
      if (delegate->blob_names_constants() && fallback < 0) {
        return fail(what + "'s blob names constants of its portable graph, but it has none");
      }
      for (size_t s = 0; s < count(delegate->compile_specs()); ++s) {
        if (delegate->compile_specs()->Get(static_cast<uoffset_t>(s))->key()->size() == 0) {
          return fail(what + ": compile spec " + std::to_string(s) + " has an empty key");
        }
      }
    }
    return true;
  }

  // Instructions run in order: each reads only values defined before it, and writes
  // only planned values that are not method inputs.
  bool check_instructions() {
    const size_t num_steps = count(method_.instructions());
    first_step_.assign(num_values_, 0);
    last_step_.assign(num_values_, 0);
    for (size_t v = 0; v < num_values_; ++v) {
      if (is_input_[v]) last_step_[v] = num_steps + 1;
    }
    for (size_t step = 0; step < num_steps; ++step) {
      const program::Instruction* instruction = method_.instructions()->Get(static_cast<uoffset_t>(step));
      const std::string what = "instruction " + std::to_string(step);
      if (instruction->delegate() >= count(method_.delegates())) {
        return fail(what + " refers to delegate " + std::to_string(instruction->delegate()) + " of " +
                    std::to_string(count(method_.delegates())));
      }
      for (size_t k = 0; k < count(instruction->inputs()); ++k) {
        const uint32_t v = instruction->inputs()->Get(static_cast<uoffset_t>(k));
        if (!check_index(v, what + ", input " + std::to_string(k))) return false;
        if (!defined_[v]) return fail(what + " reads " + value_name(v) + " before anything writes it");
        last_step_[v] = std::max(last_step_[v], step + 1);
      }
      for (size_t k = 0; k < count(instruction->outputs()); ++k) {
        const uint32_t v = instruction->outputs()->Get(static_cast<uoffset_t>(k));
        if (!check_index(v, what + ", output " + std::to_string(k))) return false;
        if (is_constant(v) || is_input_[v]) {
          return fail(what + " writes " + value_name(v) + ", which is a constant or a method input");
        }
        if (!defined_[v]) first_step_[v] = step + 1;
        defined_[v] = true;
        last_step_[v] = std::max(last_step_[v], step + 1);
      }
    }
    for (size_t k = 0; k < count(method_.outputs()); ++k) {
      const uint32_t v = method_.outputs()->Get(static_cast<uoffset_t>(k));
      if (!defined_[v]) return fail("output " + std::to_string(k) + " (" + value_name(v) + ") is never written");
      last_step_[v] = num_steps + 1;
    }
    return true;
  }

  /// Planned values live at the same time must not share arena bytes. A sweep over the
  /// steps: the values live at one step never share bytes, so a value that starts needs
  /// checking only against its neighbours by offset among them. Near linear; comparing
  /// the pairs that share bytes at some time was quadratic in a program whose values
  /// reuse a few offsets (thousands of partitions).
  bool check_arena_overlaps() {
    std::vector<size_t> planned;
    for (size_t v = 0; v < num_values_; ++v) {
      if (!is_constant(v) && bytes_[v] > 0) planned.push_back(v);
    }
    std::stable_sort(planned.begin(), planned.end(),
                     [&](size_t a, size_t b) { return first_step_[a] < first_step_[b]; });
    auto offset = [&](size_t v) { return static_cast<uint64_t>(value(v).arena_offset()); };
    auto shared = [&](size_t low, size_t high) {
      return fail(value_name(low) + " and " + value_name(high) + " share arena bytes while both are live");
    };
    std::map<uint64_t, size_t> live;  // by offset
    std::priority_queue<std::pair<size_t, size_t>, std::vector<std::pair<size_t, size_t>>, std::greater<>> ending;
    for (size_t v : planned) {
      for (; !ending.empty() && ending.top().first < first_step_[v]; ending.pop())
        live.erase(offset(ending.top().second));
      const auto next = live.lower_bound(offset(v));
      if (next != live.end() && next->first < offset(v) + bytes_[v]) return shared(v, next->second);
      if (next != live.begin()) {
        const size_t before = std::prev(next)->second;
        if (offset(before) + bytes_[before] > offset(v)) return shared(before, v);
      }
      live.emplace(offset(v), v);
      ending.emplace(last_step_[v], v);
    }
    return true;
  }

  const program::Program& root_;
  const program::Method& method_;
  Checker& c_;
  std::string where_;
  size_t num_values_ = 0;
  std::vector<common::DimRange> symbol_ranges_;
  std::vector<uint64_t> bytes_;
  std::vector<bool> defined_, is_input_;
  std::vector<size_t> first_step_, last_step_;
};

}  // namespace

Status verify_program(ProgramData& data) {
  Checker c;
  auto error = [&]() { return Status(Error::kInvalidProgram, data.origin + ": " + c.message()); };
  ProgramFileHeader header{};
  if (!check_header(data, &header, c)) return error();

  const uint8_t* flatbuffer = data.bytes.data() + header.flatbuffer_offset;
  const size_t flatbuffer_size = static_cast<size_t>(header.flatbuffer_size);
  if (flatbuffer_size < 8 || !program::ProgramBufferHasIdentifier(flatbuffer)) {
    c.fail("the flatbuffer lacks the program identifier PRTP");
    return error();
  }
  flatbuffers::Verifier verifier(flatbuffer, flatbuffer_size);
  if (!program::VerifyProgramBuffer(verifier)) {
    c.fail("the flatbuffer fails verification (truncated or corrupt)");
    return error();
  }
  const program::Program& root = *program::GetProgram(flatbuffer);
  if (!check_segments(root, header.segments_size, c)) return error();
  if (count(root.methods()) == 0) {
    c.fail("the program has no methods");
    return error();
  }
  std::set<std::string_view> names;
  for (const program::Method* method : *root.methods()) {
    if (method->name()->size() == 0 || !names.insert(method->name()->string_view()).second) {
      c.fail("method name '" + method->name()->str() + "' is empty or used twice");
      return error();
    }
    MethodChecker checker(root, *method, c);
    if (!checker.check()) return error();
  }
  data.header = header;
  data.root = &root;
  data.segments = data.bytes.data() + header.segments_offset;
  return Status::ok();
}

}  // namespace plugrt::internal
