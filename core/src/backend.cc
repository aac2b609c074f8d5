// SPDX-License-Identifier: Apache-2.0
#include "plugrt/backend.h"

#include <algorithm>
#include <ctime>

#include "plugin_record.h"
#include "plugrt/common/graph_ir.h"

namespace plugrt {
namespace {

constexpr size_t kReasonCapacity = 512;

}  // namespace

const std::string& RegisteredBackend::name() const { return table_->name; }
const std::string& RegisteredBackend::description() const { return table_->description; }
const PluginInfo& RegisteredBackend::plugin() const { return plugin_->info; }
plugrt_backend_capabilities RegisteredBackend::capabilities() const { return table_->capabilities; }
bool RegisteredBackend::can_execute_concurrently() const {
  return (table_->capabilities & PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE) != 0;
}
bool RegisteredBackend::has_aot() const { return table_->partition != nullptr; }
bool RegisteredBackend::takes_varying_dimensions() const {
  return (table_->capabilities & PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS) != 0;
}

Status RegisteredBackend::failure(std::string_view call, plugrt_status status) const {
  std::string message =
      "backend '" + table_->name + "' (" + plugin_->info.origin + "): " + std::string(call) + " failed";
  Error code = error_from_abi(status);
  if (std::optional<ReportedError> reported = take_reported_error()) {
    message += ": " + reported->message;
  } else {
    message += " with " + std::string(to_string(code)) + " and reported no reason";
  }
  if (code == Error::kOk) code = Error::kInternal;  // a failure dressed as success
  return Status(code, std::move(message));
}

Availability RegisteredBackend::is_available() const {
  char reason[kReasonCapacity];
  plugrt_text_buffer buffer{reason, sizeof(reason), 0};
  Availability availability;
  availability.available = table_->is_available(table_->context, plugin_->host->table(), &buffer);
  if (!availability.available) {
    availability.reason.assign(reason, std::min(buffer.size, sizeof(reason)));
    if (availability.reason.empty()) availability.reason = "the backend gave no reason";
  }
  return availability;
}

Result<std::vector<bool>> RegisteredBackend::partition(Span<const uint8_t> graph, size_t num_nodes,
                                                       Span<const plugrt_option> compile_specs) const {
  if (table_->partition == nullptr) {
    return Status(Error::kNotSupported, "backend '" + table_->name + "' (" + plugin_->info.origin +
                                            ") has no ahead-of-time entries (partition, preprocess)");
  }
  std::vector<uint8_t> taken(num_nodes, 0);
  // Static graphs only, unless the backend says it reads dimensions that vary.
  if (!takes_varying_dimensions() && common::has_symbols(graph.data(), graph.size()))
    return std::vector<bool>(num_nodes, false);
  plugrt_partition_args args{sizeof(args),         graph.data(), graph.size(), compile_specs.data(),
                             compile_specs.size(), taken.data(), num_nodes};
  clear_reported_error();
  const plugrt_status status = table_->partition(table_->context, plugin_->host->table(), &args);
  if (status != PLUGRT_STATUS_OK) return failure("partition", status);
  return std::vector<bool>(taken.begin(), taken.end());
}

Result<std::vector<uint8_t>> RegisteredBackend::preprocess(Span<const uint8_t> graph,
                                                           Span<const plugrt_option> compile_specs) const {
  PLUGRT_ASSIGN_OR_RETURN(PreprocessedBlob blob, preprocess(graph, compile_specs, 0));
  return std::move(blob.bytes);
}

Result<PreprocessedBlob> RegisteredBackend::preprocess(Span<const uint8_t> graph,
                                                       Span<const plugrt_option> compile_specs,
                                                       plugrt_preprocess_flags flags) const {
  if (table_->preprocess == nullptr) {
    return Status(Error::kNotSupported, "backend '" + table_->name + "' (" + plugin_->info.origin +
                                            ") has no ahead-of-time entries (partition, preprocess)");
  }
  if (!takes_varying_dimensions() && common::has_symbols(graph.data(), graph.size())) {
    return Status(Error::kNotSupported, "backend '" + table_->name + "' (" + plugin_->info.origin +
                                            ") takes static graphs only; this one has dimensions that vary "
                                            "(PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS, ABI 1.5)");
  }
  plugrt_preprocess_args args{
      sizeof(args), graph.data(), graph.size(), compile_specs.data(), compile_specs.size(), nullptr, 0, flags, 0};
  clear_reported_error();
  const plugrt_status status = table_->preprocess(table_->context, plugin_->host->table(), &args);
  const plugrt_host_services* host = plugin_->host->table();
  if (status != PLUGRT_STATUS_OK) {
    if (args.blob != nullptr) host->deallocate(host->context, args.blob);
    return failure("preprocess", status);
  }
  if (args.blob == nullptr && args.blob_size > 0) {
    return Status(Error::kInternal, "backend '" + table_->name + "' (" + plugin_->info.origin +
                                        "): preprocess succeeded but returned no blob");
  }
  const auto* bytes = static_cast<const uint8_t*>(args.blob);
  PreprocessedBlob blob{std::vector<uint8_t>(bytes, bytes + args.blob_size),
                        (args.blob_flags & PLUGRT_BLOB_NAMES_CONSTANTS) != 0};
  if (args.blob != nullptr) host->deallocate(host->context, args.blob);
  if (blob.names_constants && (flags & PLUGRT_PREPROCESS_CONSTANTS_BY_NAME) == 0) {
    return Status(Error::kPluginInvalid, "backend '" + table_->name + "' (" + plugin_->info.origin +
                                             "): preprocess says its blob names constants, which were not offered");
  }
  return blob;
}

Result<DelegateHandle> RegisteredBackend::init(const InitOptions& options) const {
  plugrt_init_args args{};
  args.struct_size = sizeof(args);
  args.blob = options.blob;
  args.blob_size = options.blob_size;
  args.compile_specs = options.compile_specs.data();
  args.num_compile_specs = options.compile_specs.size();
  args.runtime_options = options.runtime_options.data();
  args.num_runtime_options = options.runtime_options.size();
  args.num_threads = options.num_threads;
  args.constants = options.constants.data();
  args.num_constants = options.constants.size();

  clear_reported_error();  // a stale report must not explain this call
  plugrt_delegate_handle handle = nullptr;
  const plugrt_status status = table_->init(table_->context, plugin_->host->table(), &args, &handle);
  if (status != PLUGRT_STATUS_OK || handle == nullptr) {
    Status failed = status != PLUGRT_STATUS_OK ? failure("init", status)
                                               : Status(Error::kDelegateInvalidHandle,
                                                        "backend '" + table_->name + "' (" + plugin_->info.origin +
                                                            "): init succeeded but returned a NULL handle");
    plugin_->record_init_failure(table_->name, failed);
    return failed;
  }
  return DelegateHandle(*this, handle);
}

DelegateHandle::DelegateHandle(RegisteredBackend backend, plugrt_delegate_handle handle)
    : backend_(std::move(backend)), handle_(handle) {
  if (!backend_.can_execute_concurrently()) serialize_ = std::make_unique<std::mutex>();
}

DelegateHandle::DelegateHandle(DelegateHandle&& other) noexcept
    : backend_(other.backend_), handle_(other.handle_), serialize_(std::move(other.serialize_)) {
  other.handle_ = nullptr;
}

DelegateHandle& DelegateHandle::operator=(DelegateHandle&& other) noexcept {
  if (this != &other) {
    reset();
    backend_ = other.backend_;
    handle_ = other.handle_;
    serialize_ = std::move(other.serialize_);
    other.handle_ = nullptr;
  }
  return *this;
}

DelegateHandle::~DelegateHandle() { reset(); }

void DelegateHandle::reset() {
  if (handle_ != nullptr) backend_.table_->destroy(handle_);
  handle_ = nullptr;
}

bool CallStop::requested() const {
  if (flag != nullptr && __atomic_load_n(flag, __ATOMIC_RELAXED) != 0) return true;
  return deadline_ns != 0 && now_ns() >= deadline_ns;
}

int64_t CallStop::now_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

Status DelegateHandle::execute(Span<const DLTensor* const> inputs, Span<const DLTensor* const> outputs,
                               plugrt_execute_flags flags, Span<const int64_t> symbol_values, size_t num_threads,
                               CallStop stop) {
  if (handle_ == nullptr) {
    return Status(Error::kDelegateInvalidHandle, "execute on a moved-from or destroyed handle");
  }
  const plugrt_execute_args args{sizeof(plugrt_execute_args),
                                 inputs.data(),
                                 inputs.size(),
                                 outputs.data(),
                                 outputs.size(),
                                 flags,
                                 symbol_values.empty() ? nullptr : symbol_values.data(),
                                 symbol_values.size(),
                                 num_threads,
                                 stop.flag,
                                 stop.deadline_ns};
  // A report left by an earlier call that succeeded must not explain a failure here.
  clear_reported_error();
  plugrt_status status;
  if (serialize_ == nullptr) {
    status = backend_.table_->execute(handle_, &args);
  } else {
    std::lock_guard<std::mutex> lock(*serialize_);
    status = backend_.table_->execute(handle_, &args);
  }
  if (status == PLUGRT_STATUS_OK) return Status::ok();
  return backend_.failure("execute", status);
}

}  // namespace plugrt
