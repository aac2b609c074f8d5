#include "src/onednn_backend.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include <oneapi/dnnl/dnnl.hpp>

#include "src/onednn_delegate.h"
#include "src/threading.h"
#ifdef PLUGRT_ONEDNN_HAVE_AOT
#include "aot/onednn_aot.h"
#endif

namespace plugrt::onednn {

namespace {

void report(const plugrt_host_services* host, plugrt_status status, const char* message) {
  if (host != nullptr && host->report_error != nullptr) {
    host->report_error(host->context, status, plugrt_string{message, std::strlen(message)});
  }
}

void write_reason(plugrt_text_buffer* reason, const char* text) {
  if (reason == nullptr || reason->data == nullptr) return;
  const size_t length = std::strlen(text);
  const size_t written = length < reason->capacity ? length : reason->capacity;
  if (written > 0) std::memcpy(reason->data, text, written);
  reason->size = written;
}

/// Available where oneDNN can create a CPU engine. That only looks at the CPU (its ISA
/// is detected once per process) and allocates nothing that lasts.
bool is_available(void*, const plugrt_host_services*, plugrt_text_buffer* reason) {
  keep_onednn_loaded();
  try {
    if (dnnl::engine::get_count(dnnl::engine::kind::cpu) == 0) {
      write_reason(reason, "this oneDNN build has no CPU engine");
      return false;
    }
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return true;
  } catch (const dnnl::error& e) {
    char text[200];
    std::snprintf(text, sizeof(text), "oneDNN could not create a CPU engine: %s", e.what());
    write_reason(reason, text);
    return false;
  }
}

plugrt_status init(void*, const plugrt_host_services* host, const plugrt_init_args* args,
                   plugrt_delegate_handle* handle) {
  if (host == nullptr || args == nullptr || handle == nullptr || args->struct_size < PLUGRT_INIT_ARGS_SIZE_1_0 ||
      host->allocate == nullptr || host->deallocate == nullptr) {
    report(host, PLUGRT_STATUS_INVALID_ARGUMENT, "init arguments are missing or too old");
    return PLUGRT_STATUS_INVALID_ARGUMENT;
  }
  try {
    OnednnDelegate* delegate = nullptr;
    const plugrt_status status = OnednnDelegate::create(host, args, &delegate);
    if (status != PLUGRT_STATUS_OK) return status;
    *handle = reinterpret_cast<plugrt_delegate_handle>(delegate);
    return PLUGRT_STATUS_OK;
  } catch (const std::bad_alloc&) {
    report(host, PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED, "out of memory while building the oneDNN primitives");
    return PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED;
  } catch (const std::exception& e) {
    report(host, PLUGRT_STATUS_INTERNAL, e.what());
    return PLUGRT_STATUS_INTERNAL;
  }
}

plugrt_status execute(plugrt_delegate_handle handle, const plugrt_execute_args* args) {
  if (handle == nullptr) return PLUGRT_STATUS_DELEGATE_INVALID_HANDLE;
  return reinterpret_cast<OnednnDelegate*>(handle)->execute(args);
}

void destroy(plugrt_delegate_handle handle) { delete reinterpret_cast<OnednnDelegate*>(handle); }

constexpr char kDescription[] =
    "oneDNN 2.x float32 CPU primitives (convolution, matmul, normalization...), formats chosen per machine, "
    "OpenMP threads capped per handle";

#ifdef PLUGRT_ONEDNN_HAVE_AOT
const plugrt_aot_backend kAotTable = {PLUGRT_AOT_BACKEND_SIZE, partition, preprocess};
constexpr const plugrt_aot_backend* kAot = &kAotTable;
#else
constexpr const plugrt_aot_backend* kAot = nullptr;
#endif

const plugrt_backend kBackendTable = {
    PLUGRT_BACKEND_SIZE,
    {kBackendName, sizeof(kBackendName) - 1},
    // No CONCURRENT_EXECUTE: a handle's arena and stream serve one call at a time.
    // Separate handles run in parallel.
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

}  // namespace plugrt::onednn
