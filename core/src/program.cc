// SPDX-License-Identifier: Apache-2.0
#include "plugrt/program.h"

#include <cstring>

#include "plugrt/builtin_backends.h"
#include "program_data.h"
#include "program_verifier.h"

namespace plugrt {

uint64_t TensorSpec::num_bytes() const {
  uint64_t bytes = dtype_size(dtype);
  for (int64_t dim : shape) bytes *= static_cast<uint64_t>(dim);
  return bytes;
}

Result<Program> Program::verify(std::shared_ptr<internal::ProgramData> data) {
  PLUGRT_RETURN_IF_ERROR(internal::verify_program(*data));
  return Program(std::move(data));
}

Result<Program> Program::load(const std::string& path) {
  PLUGRT_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  auto data = std::make_shared<internal::ProgramData>();
  data->origin = path;
  data->file.emplace(std::move(file));
  data->bytes = data->file->bytes();
  return verify(std::move(data));
}

Result<Program> Program::load_copy(const std::string& path) {
  PLUGRT_ASSIGN_OR_RETURN(MappedFile file, MappedFile::read(path));
  auto data = std::make_shared<internal::ProgramData>();
  data->origin = path;
  data->file.emplace(std::move(file));
  data->bytes = data->file->bytes();
  return verify(std::move(data));
}

Result<Program> Program::from_bytes(Span<const uint8_t> bytes, std::string origin) {
  auto data = std::make_shared<internal::ProgramData>();
  data->origin = std::move(origin);
  const size_t alignment = MappedFile::kBufferAlignment;
  const size_t capacity = (bytes.size() / alignment + 1) * alignment;
  data->copy.reset(static_cast<uint8_t*>(std::aligned_alloc(alignment, capacity)));
  if (!data->copy) {
    return Status(Error::kMemoryAllocationFailed,
                  data->origin + ": cannot allocate " + std::to_string(capacity) + " bytes for the program");
  }
  if (!bytes.empty()) std::memcpy(data->copy.get(), bytes.data(), bytes.size());
  data->bytes = Span<const uint8_t>(data->copy.get(), bytes.size());
  return verify(std::move(data));
}

Result<Program> Program::from_shared(Span<const uint8_t> bytes, std::shared_ptr<const void> owner, std::string origin) {
  if (reinterpret_cast<uintptr_t>(bytes.data()) % MappedFile::kBufferAlignment != 0) {
    return Status(Error::kInvalidArgument, origin + ": the program's bytes are not 64-byte aligned");
  }
  auto data = std::make_shared<internal::ProgramData>();
  data->origin = std::move(origin);
  data->owner = std::move(owner);
  data->bytes = bytes;
  return verify(std::move(data));
}

const std::string& Program::origin() const { return data_->origin; }
bool Program::is_mapped() const { return data_->file.has_value() && data_->file->is_mapped(); }
std::string Program::file_identity() const { return data_->file ? data_->file->identity() : std::string(); }
uint64_t Program::file_size() const { return data_->bytes.size(); }
uint32_t Program::format_major() const { return data_->header.format_major; }
uint32_t Program::format_minor() const { return data_->header.format_minor; }
std::string Program::producer() const {
  return data_->root->producer() != nullptr ? data_->root->producer()->str() : std::string();
}
size_t Program::num_segments() const {
  return data_->root->segments() != nullptr ? data_->root->segments()->size() : 0;
}

std::vector<std::string> Program::method_names() const {
  std::vector<std::string> names;
  for (const program::Method* method : *data_->root->methods()) names.push_back(method->name()->str());
  return names;
}

Result<MethodSummary> Program::describe(std::string_view name) const {
  for (const program::Method* method : *data_->root->methods()) {
    if (method->name()->string_view() != name) continue;
    MethodSummary summary;
    summary.name = method->name()->str();
    summary.num_values = method->values() != nullptr ? method->values()->size() : 0;
    summary.num_instructions = method->instructions() != nullptr ? method->instructions()->size() : 0;
    summary.arena_size = method->arena_size();
    if (method->symbols() != nullptr) {
      for (const ir::Symbol* symbol : *method->symbols()) {
        summary.symbols.push_back({symbol->name()->str(), symbol->min(), symbol->max()});
      }
    }
    if (method->inputs() != nullptr) {
      for (uint32_t v : *method->inputs()) summary.inputs.push_back(internal::tensor_spec(*method->values()->Get(v)));
    }
    for (uint32_t v : *method->outputs()) summary.outputs.push_back(internal::tensor_spec(*method->values()->Get(v)));
    if (method->values() != nullptr) {
      for (const program::TensorValue* value : *method->values()) {
        if (value->segment() >= 0) summary.constant_bytes += internal::tensor_spec(*value).num_bytes();
      }
    }
    if (method->delegates() != nullptr) {
      for (const program::Delegate* delegate : *method->delegates()) {
        DelegateSummary d;
        d.name = delegate->name() != nullptr ? delegate->name()->str() : std::string();
        d.backend = delegate->backend()->str();
        const Span<const uint8_t> blob = data_->segment(delegate->blob_segment());
        d.blob_size = blob.size();
        if (delegate->fallback_segment() >= 0) {
          const Span<const uint8_t> fallback = data_->segment(static_cast<uint32_t>(delegate->fallback_segment()));
          d.fallback_size = fallback.size();
          d.fallback_within_blob =
              fallback.data() > blob.data() && fallback.data() + fallback.size() <= blob.data() + blob.size();
        }
        d.blob_names_constants = delegate->blob_names_constants();
        if (delegate->compile_specs() != nullptr) {
          for (const program::Option* spec : *delegate->compile_specs())
            d.compile_spec_keys.push_back(spec->key()->str());
        }
        summary.delegates.push_back(std::move(d));
      }
    }
    return summary;
  }
  return not_found(name);
}

Status Program::not_found(std::string_view name) const {
  std::string known;
  for (const std::string& method : method_names()) known += (known.empty() ? "" : ", ") + method;
  return Status(Error::kNotFound,
                data_->origin + ": no method '" + std::string(name) + "' (the program has: " + known + ")");
}

Result<MethodContents> Program::contents(std::string_view name) const {
  const program::Method* method = nullptr;
  for (const program::Method* candidate : *data_->root->methods()) {
    if (candidate->name()->string_view() == name) method = candidate;
  }
  if (method == nullptr) return not_found(name);
  MethodContents contents;
  if (method->values() != nullptr) {
    for (const program::TensorValue* value : *method->values()) {
      contents.values.push_back(internal::tensor_spec(*value));
      contents.constants.push_back(value->segment() >= 0 ? data_->segment(static_cast<uint32_t>(value->segment()))
                                                         : Span<const uint8_t>());
    }
  }
  if (method->inputs() != nullptr) contents.inputs.assign(method->inputs()->begin(), method->inputs()->end());
  contents.outputs.assign(method->outputs()->begin(), method->outputs()->end());
  const size_t num_delegates = method->delegates() != nullptr ? method->delegates()->size() : 0;
  std::vector<bool> seen(num_delegates, false);
  if (method->instructions() != nullptr) {
    for (const program::Instruction* instruction : *method->instructions()) {
      const program::Delegate& delegate = *method->delegates()->Get(instruction->delegate());
      if (seen[instruction->delegate()]) {
        return Status(Error::kNotSupported, data_->origin + ": method '" + std::string(name) + "': delegate " +
                                                std::to_string(instruction->delegate()) +
                                                " runs in more than one instruction");
      }
      seen[instruction->delegate()] = true;
      DelegateContents d;
      d.name = delegate.name() != nullptr ? delegate.name()->str() : std::string();
      d.backend = delegate.backend()->str();
      d.blob = data_->segment(delegate.blob_segment());
      if (delegate.backend()->string_view() == kPortableBackendName) {
        d.portable_graph = d.blob;
      } else if (delegate.fallback_segment() >= 0) {
        d.portable_graph = data_->segment(static_cast<uint32_t>(delegate.fallback_segment()));
      }
      if (instruction->inputs() != nullptr)
        d.inputs.assign(instruction->inputs()->begin(), instruction->inputs()->end());
      if (instruction->outputs() != nullptr) {
        d.outputs.assign(instruction->outputs()->begin(), instruction->outputs()->end());
      }
      d.has_compile_specs = delegate.compile_specs() != nullptr && delegate.compile_specs()->size() > 0;
      d.blob_names_constants = delegate.blob_names_constants();
      contents.delegates.push_back(std::move(d));
    }
  }
  return contents;
}

}  // namespace plugrt
