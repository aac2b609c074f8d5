#include "src/xnnpack_backend.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include <xnnpack.h>

#include "src/threadpool.h"
#include "src/xnnpack_delegate.h"
#ifdef PLUGRT_XNNPACK_HAVE_AOT
#include "aot/xnnpack_aot.h"
#endif

namespace plugrt::xnnpack {

namespace {

void report(const plugrt_host_services* host, plugrt_status status, const char* message) {
  if (host != nullptr && host->report_error != nullptr) {
    host->report_error(host->context, status, plugrt_string{message, std::strlen(message)});
  }
}

void write_reason(plugrt_text_buffer* reason, const char* text) {
  if (reason == nullptr) return;
  const size_t length = std::strlen(text);
  const size_t written = length < reason->capacity ? length : reason->capacity;
  if (written > 0) std::memcpy(reason->data, text, written);
  reason->size = written;
}

/// Available where XNNPACK initialises: it refuses CPUs that lack the instructions its
/// kernels need. xnn_initialize only probes the CPU (once per process) and allocates no
/// lasting resource, so it is cheap enough to ask here.
bool is_available(void*, const plugrt_host_services*, plugrt_text_buffer* reason) {
  keep_cpuinfo_loaded();
  const xnn_status status = xnn_initialize(nullptr);
  if (status == xnn_status_success) return true;
  char text[160];
  std::snprintf(text, sizeof(text), "xnn_initialize failed with status %d%s", static_cast<int>(status),
                status == xnn_status_unsupported_hardware ? " (this CPU lacks what XNNPACK's kernels need)" : "");
  write_reason(reason, text);
  return false;
}

plugrt_status init(void*, const plugrt_host_services* host, const plugrt_init_args* args,
                   plugrt_delegate_handle* handle) {
  if (host == nullptr || args == nullptr || handle == nullptr || args->struct_size < PLUGRT_INIT_ARGS_SIZE_1_0) {
    report(host, PLUGRT_STATUS_INVALID_ARGUMENT, "init arguments are missing or too old");
    return PLUGRT_STATUS_INVALID_ARGUMENT;
  }
  try {
    XnnpackDelegate* delegate = nullptr;
    const plugrt_status status = XnnpackDelegate::create(host, args, &delegate);
    if (status != PLUGRT_STATUS_OK) return status;
    *handle = reinterpret_cast<plugrt_delegate_handle>(delegate);
    return PLUGRT_STATUS_OK;
  } catch (const std::bad_alloc&) {
    report(host, PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED, "out of memory while building the XNNPACK runtime");
    return PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED;
  } catch (const std::exception& e) {
    report(host, PLUGRT_STATUS_INTERNAL, e.what());
    return PLUGRT_STATUS_INTERNAL;
  }
}

plugrt_status execute(plugrt_delegate_handle handle, const plugrt_execute_args* args) {
  if (handle == nullptr) return PLUGRT_STATUS_DELEGATE_INVALID_HANDLE;
  return reinterpret_cast<XnnpackDelegate*>(handle)->execute(args);
}

void destroy(plugrt_delegate_handle handle) { delete reinterpret_cast<XnnpackDelegate*>(handle); }

constexpr char kDescription[] =
    "XNNPACK (Debian 2022-02 snapshot) float32 CPU kernels, NHWC inside a partition, pthreadpool threads";

#ifdef PLUGRT_XNNPACK_HAVE_AOT
const plugrt_aot_backend kAotTable = {PLUGRT_AOT_BACKEND_SIZE, partition, preprocess};
constexpr const plugrt_aot_backend* kAot = &kAotTable;
#else
constexpr const plugrt_aot_backend* kAot = nullptr;
#endif

const plugrt_backend kBackendTable = {
    PLUGRT_BACKEND_SIZE,
    {kBackendName, sizeof(kBackendName) - 1},
    // No CONCURRENT_EXECUTE: a handle owns one XNNPACK runtime and its I/O buffers, which
    // one call at a time may use. Separate handles run in parallel.
    0,
    nullptr,
    is_available,
    init,
    execute,
    destroy,
    kAot,
    {kDescription, sizeof(kDescription) - 1},
};

const plugrt_backend* const kBackends[] = {&kBackendTable};

}  // namespace

const plugrt_plugin_descriptor* plugin_descriptor(const char* plugin_version) {
  static const plugrt_plugin_descriptor descriptor = {
      PLUGRT_PLUGIN_DESCRIPTOR_SIZE,
      PLUGRT_ABI_MAJOR,
      PLUGRT_ABI_MINOR,
      {kBackendName, sizeof(kBackendName) - 1},
      {plugin_version, std::strlen(plugin_version)},
      kBackends,
      1,
  };
  return &descriptor;
}

}  // namespace plugrt::xnnpack
