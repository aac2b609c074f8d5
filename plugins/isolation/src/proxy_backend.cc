// SPDX-License-Identifier: Apache-2.0
// The proxy backend table: init starts a backend host and hands it the blob; execute
// copies the inputs into the handle's shared memory region, asks the backend host to
// run, checks the guard bytes after each output and copies the outputs back.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "backend_host_process.h"
#include "isolated_plugin_internal.h"
#include "plugrt/dtype.h"

namespace plugrt::isolation {
namespace {

constexpr size_t kSlotAlignment = 64;
// Written after every output slot and checked after each call: a backend that writes
// past its output is caught even when the write stays inside the region.
constexpr size_t kGuardSize = 64;
constexpr uint8_t kGuardByte = 0xA5;
constexpr size_t kMaxMessage = 4096;

size_t align_up(size_t value, size_t alignment) { return (value + alignment - 1) / alignment * alignment; }

plugrt_status report(const plugrt_host_services* host, plugrt_status status, const std::string& message) {
  host->report_error(host->context, status, plugrt_string{message.data(), message.size()});
  return status;
}

/// A memfd of `size` bytes, to be sealed (seal()) before the backend host sees it.
int create_memfd(const char* name, size_t size) {
  const int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/// Once sealed, neither side can shrink or grow it, so the host's mapping can never turn
/// into SIGBUS because of the backend host; a blob is also sealed against writes.
bool seal(int fd, bool writes) {
  int seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
  if (writes) seals |= F_SEAL_WRITE;
  return fcntl(fd, F_ADD_SEALS, seals) == 0;
}

struct ProxyHandle {
  ProxyHandle(ProxyBackend* b, const plugrt_host_services* h, std::unique_ptr<BackendHostProcess> p)
      : backend(b), host(h), process(std::move(p)) {}
  ProxyHandle(const ProxyHandle&) = delete;
  ProxyHandle& operator=(const ProxyHandle&) = delete;

  ProxyBackend* backend;
  const plugrt_host_services* host;
  std::unique_ptr<BackendHostProcess> process;
  // The shared region, mapped once and reused while every call's tensors fit.
  void* region = MAP_FAILED;
  size_t region_size = 0;
  int pending_region_fd = -1;   // a new region the backend host has not received yet
  std::vector<size_t> offsets;  // per tensor of the last call: inputs, then outputs
  PayloadWriter request;        // reused, so a call allocates nothing once warm
  Frame response;

  ~ProxyHandle() {
    if (region != MAP_FAILED) munmap(region, region_size);
    if (pending_region_fd >= 0) close(pending_region_fd);
  }

  plugrt_status crashed(const Status& status) {
    backend->plugin->record_crash(backend->name, status.message());
    return report(host, PLUGRT_STATUS_DELEGATE_CRASHED, status.message());
  }

  /// Makes sure the region holds `size` bytes.
  plugrt_status ensure_region(size_t size) {
    if (size <= region_size && region != MAP_FAILED) return PLUGRT_STATUS_OK;
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t new_size = align_up(size, page);
    const int fd = create_memfd("plugrt-tensors", new_size);
    void* mapped =
        fd >= 0 && seal(fd, false) ? mmap(nullptr, new_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (mapped == MAP_FAILED) {
      const std::string why = strerror(errno);
      if (fd >= 0) close(fd);
      return report(host, PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED,
                    "cannot create a shared memory region of " + std::to_string(new_size) + " bytes: " + why);
    }
    if (region != MAP_FAILED) munmap(region, region_size);
    if (pending_region_fd >= 0) close(pending_region_fd);
    region = mapped;
    region_size = new_size;
    pending_region_fd = fd;
    return PLUGRT_STATUS_OK;
  }
};

size_t tensor_bytes(const DLTensor& t) {
  size_t count = 1;
  for (int32_t d = 0; d < t.ndim; ++d) count *= static_cast<size_t>(t.shape[d]);
  return count * ((static_cast<size_t>(t.dtype.bits) * t.dtype.lanes + 7) / 8);
}

bool proxy_is_available(void* context, const plugrt_host_services* host, plugrt_text_buffer* reason) {
  (void)host;
  const auto* backend = static_cast<const ProxyBackend*>(context);
  if (!backend->available && reason != nullptr && reason->data != nullptr) {
    reason->size = std::min(reason->capacity, backend->unavailable_reason.size());
    std::memcpy(reason->data, backend->unavailable_reason.data(), reason->size);
  }
  return backend->available;
}

/// Where the constants of an init start in the memfd that carries them.
constexpr size_t kConstantAlignment = 64;

/// One range of init's memfd: `size` bytes from `data` written at `offset`.
struct InitPiece {
  const void* data;
  size_t size;
  size_t offset;
};

bool write_at(int fd, const InitPiece& piece) {
  size_t written = 0;
  while (written < piece.size) {
    const ssize_t n = pwrite(fd, static_cast<const char*>(piece.data) + written, piece.size - written,
                             static_cast<off_t>(piece.offset + written));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

void write_options(PayloadWriter& writer, const plugrt_option* options, size_t count) {
  writer.u32(static_cast<uint32_t>(count));
  for (size_t i = 0; i < count; ++i) {
    writer.bytes(std::string_view(options[i].key.data, options[i].key.size));
    writer.bytes(std::string_view(static_cast<const char*>(options[i].value), options[i].value_size));
  }
}

plugrt_status proxy_init(void* context, const plugrt_host_services* host, const plugrt_init_args* args,
                         plugrt_delegate_handle* handle_out) {
  auto* backend = static_cast<ProxyBackend*>(context);
  const IsolatedPlugin& plugin = *backend->plugin;
  Result<std::unique_ptr<BackendHostProcess>> process = BackendHostProcess::start(plugin.path, plugin.options);
  if (!process.is_ok()) return report(host, PLUGRT_STATUS_DELEGATE_UNAVAILABLE, process.status().message());

  // The blob and the constants it names cross once, in a sealed memfd the backend host
  // maps read-only: the blob at 0, each constant after it at a 64-aligned offset.
  const bool has_constants = args->struct_size >= PLUGRT_INIT_ARGS_SIZE_1_4 && args->num_constants > 0;
  std::vector<InitPiece> pieces{{args->blob, args->blob_size, 0}};
  size_t region_size = args->blob_size;
  for (size_t c = 0; has_constants && c < args->num_constants; ++c) {
    const size_t offset = (region_size + kConstantAlignment - 1) / kConstantAlignment * kConstantAlignment;
    pieces.push_back({args->constants[c].data, args->constants[c].size, offset});
    region_size = offset + args->constants[c].size;
  }
  int blob_fd = -1;
  if (region_size > 0) {
    blob_fd = create_memfd("plugrt-blob", region_size);
    bool written = blob_fd >= 0;
    for (const InitPiece& piece : pieces) written = written && write_at(blob_fd, piece);
    if (!written || !seal(blob_fd, true)) {
      const std::string why = strerror(errno);
      if (blob_fd >= 0) close(blob_fd);
      return report(host, PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED,
                    "cannot pass the " + std::to_string(region_size) + "-byte blob and constants to the isolated " +
                        "process: " + why);
    }
  }
  PayloadWriter request;
  request.bytes(backend->name);
  request.u64(args->num_threads);
  write_options(request, args->compile_specs, args->num_compile_specs);
  write_options(request, args->runtime_options, args->num_runtime_options);
  request.u64(args->blob_size);
  request.u64(region_size);
  request.u32(static_cast<uint32_t>(pieces.size() - 1));
  for (size_t c = 1; c < pieces.size(); ++c) {
    request.bytes(std::string_view(args->constants[c - 1].name.data, args->constants[c - 1].name.size));
    request.u64(pieces[c].offset);
    request.u64(pieces[c].size);
  }
  if (request.data().size() > kMaxPayloadSize) {
    if (blob_fd >= 0) close(blob_fd);
    return report(host, PLUGRT_STATUS_INVALID_ARGUMENT,
                  "the compile specs, runtime options and constant names are too large (" +
                      std::to_string(request.data().size()) + " bytes) to pass to an isolated backend");
  }
  Frame response;
  Status status = (*process)->call(CallKind::kInit, request.data(), blob_fd, plugin.options.init_timeout_ms,
                                   "--init-timeout-ms", &response);
  if (blob_fd >= 0) close(blob_fd);
  if (!status.is_ok()) {
    backend->plugin->record_crash(backend->name, "init: " + status.message());
    return report(host, PLUGRT_STATUS_DELEGATE_CRASHED, status.message());
  }
  if (response.header.status != PLUGRT_STATUS_OK) {
    PayloadReader reader(response.payload);
    std::string message;
    if (!reader.bytes(&message, kMaxMessage)) message = "the isolated backend reported no reason";
    return report(host, response.header.status, message);
  }
  auto* handle = new ProxyHandle(backend, host, std::move(process).value());
  *handle_out = reinterpret_cast<plugrt_delegate_handle>(handle);
  return PLUGRT_STATUS_OK;
}

plugrt_status proxy_execute(plugrt_delegate_handle opaque, const plugrt_execute_args* args) {
  auto* h = reinterpret_cast<ProxyHandle*>(opaque);
  if (h->process->dead()) {
    return report(h->host, PLUGRT_STATUS_DELEGATE_CRASHED, h->process->death() + " (earlier; it is not restarted)");
  }
  const size_t num_tensors = args->num_inputs + args->num_outputs;
  if (num_tensors > kMaxTensors) {
    return report(h->host, PLUGRT_STATUS_INVALID_ARGUMENT, "too many tensors for an isolated call");
  }
  const bool has_symbols = args->struct_size >= PLUGRT_EXECUTE_ARGS_SIZE_1_6 && args->symbol_values != nullptr;
  const size_t num_symbol_values = has_symbols ? args->num_symbol_values : 0;
  if (num_symbol_values > kMaxSymbolValues) {
    return report(h->host, PLUGRT_STATUS_INVALID_ARGUMENT, "too many symbol values for an isolated call");
  }
  // Layout: every tensor in its own aligned slot, each output followed by its guard.
  h->offsets.resize(num_tensors);
  size_t size = 0;
  for (size_t i = 0; i < num_tensors; ++i) {
    const DLTensor& t = i < args->num_inputs ? *args->inputs[i] : *args->outputs[i - args->num_inputs];
    if (!is_contiguous(t) || t.ndim < 0 || static_cast<uint32_t>(t.ndim) > kMaxDimensions) {
      return report(h->host, PLUGRT_STATUS_NOT_SUPPORTED,
                    "an isolated backend takes only contiguous tensors of at most 16 dimensions");
    }
    h->offsets[i] = size;
    size = align_up(size + tensor_bytes(t) + (i >= args->num_inputs ? kGuardSize : 0), kSlotAlignment);
  }
  if (plugrt_status s = h->ensure_region(std::max<size_t>(size, 1)); s != PLUGRT_STATUS_OK) return s;
  auto* base = static_cast<uint8_t*>(h->region);

  PayloadWriter& request = h->request;
  request.data().clear();
  request.u64(h->region_size);
  request.u32(static_cast<uint32_t>(args->num_inputs));
  request.u32(static_cast<uint32_t>(args->num_outputs));
  for (size_t i = 0; i < num_tensors; ++i) {
    const bool is_input = i < args->num_inputs;
    const DLTensor& t = is_input ? *args->inputs[i] : *args->outputs[i - args->num_inputs];
    const size_t bytes = tensor_bytes(t);
    request.u32(static_cast<uint32_t>(t.ndim));
    request.u32(t.dtype.code | (uint32_t{t.dtype.bits} << 8) | (uint32_t{t.dtype.lanes} << 16));
    for (int32_t d = 0; d < t.ndim; ++d) request.i64(t.shape[d]);
    request.u64(h->offsets[i]);
    request.u64(bytes);
    if (is_input) {
      std::memcpy(base + h->offsets[i], static_cast<const uint8_t*>(t.data) + t.byte_offset, bytes);
    } else {
      std::memset(base + h->offsets[i] + bytes, kGuardByte, kGuardSize);
    }
  }
  request.u32(static_cast<uint32_t>(num_symbol_values));
  for (size_t s = 0; s < num_symbol_values; ++s) request.i64(args->symbol_values[s]);
  const int region_fd = h->pending_region_fd;
  Status status =
      h->process->call(CallKind::kExecute, request.data(), region_fd, h->backend->plugin->options.execute_timeout_ms,
                       "--execute-timeout-ms", &h->response);
  if (region_fd >= 0) {
    close(region_fd);  // the backend host has its own mapping now, or is gone
    h->pending_region_fd = -1;
  }
  if (!status.is_ok()) return h->crashed(status);
  if (h->response.header.status != PLUGRT_STATUS_OK) {
    PayloadReader reader(h->response.payload);
    std::string message;
    if (!reader.bytes(&message, kMaxMessage)) message = "the isolated backend reported no reason";
    return report(h->host, h->response.header.status, message);
  }
  for (size_t o = 0; o < args->num_outputs; ++o) {
    const DLTensor& t = *args->outputs[o];
    const size_t bytes = tensor_bytes(t);
    const uint8_t* slot = base + h->offsets[args->num_inputs + o];
    for (size_t g = 0; g < kGuardSize; ++g) {
      if (slot[bytes + g] != kGuardByte) {
        // Memory it does not own was written: the process is not to be trusted again.
        h->process->stop("it wrote past the end of output " + std::to_string(o) + " (" + std::to_string(bytes) +
                         " bytes) and its isolated process (pid " + std::to_string(h->process->pid()) + ") was killed");
        return h->crashed(Status(Error::kDelegateCrashed, h->process->death()));
      }
    }
  }
  for (size_t o = 0; o < args->num_outputs; ++o) {
    const DLTensor& t = *args->outputs[o];
    std::memcpy(static_cast<uint8_t*>(t.data) + t.byte_offset, base + h->offsets[args->num_inputs + o],
                tensor_bytes(t));
  }
  return PLUGRT_STATUS_OK;
}

void proxy_destroy(plugrt_delegate_handle opaque) {
  auto* h = reinterpret_cast<ProxyHandle*>(opaque);
  if (!h->process->dead()) {
    Frame ignored;
    (void)h->process->call(CallKind::kDestroy, {}, -1, 1000, "the destroy time limit", &ignored);
  }
  delete h;  // closes the socket and reaps the process
}

}  // namespace

void fill_proxy_table(ProxyBackend* backend) {
  plugrt_backend& t = backend->table;
  t.struct_size = sizeof(t);
  t.name = {backend->name.data(), backend->name.size()};
  t.capabilities = backend->capabilities;
  t.context = backend;
  t.is_available = proxy_is_available;
  t.init = proxy_init;
  t.execute = proxy_execute;
  t.destroy = proxy_destroy;
  t.aot = nullptr;  // isolation is a runtime matter: compile with the plugin in process
  t.description = {backend->description.data(), backend->description.size()};
}

}  // namespace plugrt::isolation
