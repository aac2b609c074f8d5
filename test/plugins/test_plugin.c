/* A small, real plugin written against the bare C ABI, compiled once per test variant.
 *
 * Its backend adds a constant to a float32 tensor: the blob is one little-endian float
 * (the offset), execute writes out[i] = in[i] + offset + private_value(), where
 * private_value() is a function every variant defines under the same symbol name with
 * its own result (PRIVATE_VALUE), to prove that plugins' private symbols never collide.
 *
 * Compile definitions:
 *   PLUGIN_NAME, BACKEND_NAME  string literals (required)
 *   PRIVATE_VALUE              float added by execute (default 0)
 *   VARIANT_<X>                makes the plugin broken in exactly one way; see below;
 *                              VARIANT_PROBE instead logs (at info level) the thread budget
 *                              init gets and the flags of every execute call;
 *                              VARIANT_MARKER creates the file $PLUGRT_TEST_MARKER names
 *                              when it is loaded, proof that its code ran.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plugrt/sdk/plugin_export.h"

#if defined(VARIANT_MARKER)
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* Runs as the file is mapped, before any check of its entry could refuse it. */
__attribute__((constructor)) static void leave_marker(void) {
  const char* path = getenv("PLUGRT_TEST_MARKER");
  if (path == NULL || path[0] == '\0') return;
  const int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
}
#endif

#ifndef PRIVATE_VALUE
#define PRIVATE_VALUE 0.0f
#endif

/* The ABI version this plugin claims, and the backend table size it hands over. */
#if defined(VARIANT_ABI_MAJOR_2)
#define CLAIMED_MAJOR 2
#else
#define CLAIMED_MAJOR PLUGRT_ABI_MAJOR
#endif
#if defined(VARIANT_OLDER_MINOR)
#define CLAIMED_MINOR 0
#define BACKEND_TABLE_SIZE PLUGRT_BACKEND_SIZE_1_0
#elif defined(VARIANT_NEWER_MINOR)
#define CLAIMED_MINOR (PLUGRT_ABI_MINOR + 1)
#define BACKEND_TABLE_SIZE sizeof(future_backend)
#elif defined(VARIANT_SMALL_STRUCT)
#define CLAIMED_MINOR PLUGRT_ABI_MINOR
#define BACKEND_TABLE_SIZE 8
#else
#define CLAIMED_MINOR PLUGRT_ABI_MINOR
#define BACKEND_TABLE_SIZE sizeof(plugrt_backend)
#endif

#if defined(VARIANT_METADATA_MISMATCH)
#define METADATA_BACKEND_NAME "not_" BACKEND_NAME
#else
#define METADATA_BACKEND_NAME BACKEND_NAME
#endif

/* A table from a future minor: today's layout plus one appended field. */
typedef struct future_backend {
  plugrt_backend base;
  void (*appended_in_a_later_minor)(void);
} future_backend;

/* Same symbol name in every variant, different value: private to each plugin. */
float plugrt_test_private_value(void);
float plugrt_test_private_value(void) { return PRIVATE_VALUE; }

typedef struct offset_handle {
  const plugrt_host_services* host;
  float offset;
} offset_handle;

static plugrt_status fail(const plugrt_host_services* host, plugrt_status status, const char* message) {
  plugrt_string text = {message, strlen(message)};
  host->report_error(host->context, status, text);
  return status;
}

#if defined(VARIANT_PROBE)
static void probe_log(const plugrt_host_services* host, const char* text) {
  plugrt_string line = {text, strlen(text)};
  host->log(host->context, PLUGRT_LOG_INFO, line);
}
#endif

static void write_reason(plugrt_text_buffer* buffer, const char* reason) {
  if (buffer == NULL) return;
  size_t size = strlen(reason);
  if (size > buffer->capacity) size = buffer->capacity;
  if (size > 0) memcpy(buffer->data, reason, size);
  buffer->size = size;
}

static bool offset_is_available(void* context, const plugrt_host_services* host, plugrt_text_buffer* reason) {
  (void)context;
  (void)host;
#if defined(VARIANT_UNAVAILABLE)
  write_reason(reason, "no test accelerator is attached");
  return false;
#else
  (void)write_reason;
  (void)reason;
  return true;
#endif
}

static plugrt_status offset_init(void* context, const plugrt_host_services* host, const plugrt_init_args* args,
                                 plugrt_delegate_handle* handle) {
  (void)context;
#if defined(VARIANT_INIT_FAILS)
  (void)args;
  (void)handle;
  return fail(host, PLUGRT_STATUS_DELEGATE_UNAVAILABLE, "the test device stopped responding");
#else
  if (args->blob_size != sizeof(float)) {
    return fail(host, PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY, "blob must be exactly one float32 offset");
  }
  offset_handle* h = (offset_handle*)host->allocate(host->context, sizeof(*h), 16);
  if (h == NULL) return fail(host, PLUGRT_STATUS_MEMORY_ALLOCATION_FAILED, "out of memory");
  h->host = host;
  memcpy(&h->offset, args->blob, sizeof(float));
#if defined(VARIANT_PROBE)
  char line[64];
  snprintf(line, sizeof(line), "init num_threads=%zu", args->num_threads);
  probe_log(host, line);
#endif
  *handle = (plugrt_delegate_handle)h;
  return PLUGRT_STATUS_OK;
#endif
}

/* External linkage (hidden in a plugin build) so a static build can call it directly. */
plugrt_status plugrt_test_offset_execute(plugrt_delegate_handle handle, const plugrt_execute_args* args);
plugrt_status plugrt_test_offset_execute(plugrt_delegate_handle handle, const plugrt_execute_args* args) {
  const offset_handle* h = (const offset_handle*)handle;
#if defined(VARIANT_PROBE)
  char line[64];
  if (args->struct_size >= PLUGRT_EXECUTE_ARGS_SIZE_1_2) {
    snprintf(line, sizeof(line), "execute flags=%llu", (unsigned long long)args->flags);
  } else {
    snprintf(line, sizeof(line), "execute flags=absent");
  }
  probe_log(h->host, line);
  if (args->struct_size >= PLUGRT_EXECUTE_ARGS_SIZE_1_7) {
    snprintf(line, sizeof(line), "call threads=%zu", args->num_threads);
    probe_log(h->host, line);
  }
#endif
  if (args->num_inputs != 1 || args->num_outputs != 1) {
    return fail(h->host, PLUGRT_STATUS_INVALID_ARGUMENT, "expects one input and one output");
  }
  const DLTensor* in = args->inputs[0];
  const DLTensor* out = args->outputs[0];
  if (in->dtype.code != kDLFloat || in->dtype.bits != 32 || in->dtype.lanes != 1 || out->dtype.code != kDLFloat ||
      out->dtype.bits != 32 || out->dtype.lanes != 1) {
    return fail(h->host, PLUGRT_STATUS_INVALID_ARGUMENT, "tensors must be float32");
  }
  if (in->ndim != out->ndim || in->strides != NULL || out->strides != NULL) {
    return fail(h->host, PLUGRT_STATUS_INVALID_ARGUMENT, "tensors must be dense, of equal rank");
  }
  size_t count = 1;
  for (int32_t d = 0; d < in->ndim; ++d) {
    if (in->shape[d] != out->shape[d] || in->shape[d] < 0) {
      return fail(h->host, PLUGRT_STATUS_INVALID_ARGUMENT, "input and output shapes differ");
    }
    count *= (size_t)in->shape[d];
  }
  const float* src = (const float*)((const char*)in->data + in->byte_offset);
  float* dst = (float*)((char*)out->data + out->byte_offset);
  const float add = h->offset + plugrt_test_private_value();
  for (size_t i = 0; i < count; ++i) dst[i] = src[i] + add;
  return PLUGRT_STATUS_OK;
}

static void offset_destroy(plugrt_delegate_handle handle) {
  offset_handle* h = (offset_handle*)handle;
  h->host->deallocate(h->host->context, h);
}

static const future_backend kBackend = {
    {
        BACKEND_TABLE_SIZE,
        PLUGRT_LITERAL(BACKEND_NAME),
        PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE,
        NULL,
        offset_is_available,
        offset_init,
#if defined(VARIANT_NULL_EXECUTE)
        NULL,
#else
        plugrt_test_offset_execute,
#endif
        offset_destroy,
        NULL,
        PLUGRT_LITERAL("adds a constant; a plugrt test plugin"),
    },
    NULL,
};

static const plugrt_backend* const kBackends[] = {&kBackend.base};

/* Unused only in the variant with no entry function. */
__attribute__((unused)) static const plugrt_plugin_descriptor kDescriptor = {
    sizeof(plugrt_plugin_descriptor),
    CLAIMED_MAJOR,
    CLAIMED_MINOR,
    PLUGRT_LITERAL(PLUGIN_NAME),
    PLUGRT_LITERAL("1.0.0"),
    kBackends,
    1,
};

#if !defined(PLUGRT_STATIC_PLUGIN)
/* Written out rather than with PLUGRT_PLUGIN_METADATA, to claim other ABI versions. */
PLUGRT_EXPORT __attribute__((section(PLUGRT_METADATA_SECTION), used, aligned(8)))
const plugrt_plugin_metadata plugrt_metadata = {{'P', 'L', 'U', 'G', 'R', 'T', 'M', 'D'},
                                                (uint32_t)sizeof(plugrt_plugin_metadata),
                                                PLUGRT_METADATA_VERSION,
                                                CLAIMED_MAJOR,
                                                CLAIMED_MINOR,
                                                PLUGIN_NAME,
                                                "1.0.0",
                                                1,
                                                0,
                                                METADATA_BACKEND_NAME};
#endif

#if defined(VARIANT_NO_ENTRY)
/* No entry function at all: only the metadata. */
#elif defined(VARIANT_ABI_MAJOR_2)
PLUGRT_EXPORT plugrt_status plugrt_plugin_entry_v2(const plugrt_host_services* host,
                                                   const plugrt_plugin_descriptor** descriptor);
PLUGRT_EXPORT plugrt_status plugrt_plugin_entry_v2(const plugrt_host_services* host,
                                                   const plugrt_plugin_descriptor** descriptor) {
  (void)host;
  *descriptor = &kDescriptor;
  return PLUGRT_STATUS_OK;
}
#else
PLUGRT_PLUGIN_ENTRY(test_plugin) {
#if defined(VARIANT_ENTRY_FAILS)
  (void)descriptor;
  return fail(host, PLUGRT_STATUS_NOT_SUPPORTED, "the test licence file is missing");
#else
  (void)host;
  *descriptor = &kDescriptor;
  return PLUGRT_STATUS_OK;
#endif
}
#endif
