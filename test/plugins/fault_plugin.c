/* A test plugin that fails on request, written against the bare C ABI.
 *
 * Backend "faulty" computes what the "offset" test backend does (the blob is one float32
 * offset; execute writes out[i] = in[i] + offset), and fails where its options say.
 * Each option is looked up first in the runtime options, then in the compile specs;
 * values are text (not NUL-terminated):
 *   init_error          init fails with DELEGATE_UNAVAILABLE and reports this text
 *   init_incompatible   init fails with DELEGATE_INVALID_COMPATIBILITY, reporting this text
 *   init_internal       init fails with INTERNAL (a bug or device error), reporting this text
 *   execute_fails_every N (decimal): execute calls N, 2N, 3N... on a handle fail with
 *                       INTERNAL, after scribbling NaN over the output
 *   execute_silent      (any value) those failures report no message
 *   report_on_success   execute reports this text as an error, then returns OK
 *   execute_sleep_ms N  (decimal) every execute call first sleeps N milliseconds
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "plugrt/sdk/plugin_export.h"

typedef struct faulty_handle {
  const plugrt_host_services* host;
  float offset;
  uint64_t fails_every; /* 0: never */
  bool silent;
  char report_on_success[128];
  size_t report_on_success_size;
  uint64_t calls; /* the host serialises calls on a handle (no concurrency capability) */
  uint64_t sleep_ms;
} faulty_handle;

static plugrt_status fail(const plugrt_host_services* host, plugrt_status status,
                          const char* message, size_t size) {
  plugrt_string text = {message, size};
  host->report_error(host->context, status, text);
  return status;
}

/* The option called `key`, runtime options first; NULL when absent. */
static const plugrt_option* find_option(const plugrt_init_args* args, const char* key) {
  const size_t key_size = strlen(key);
  const plugrt_option* lists[2] = {args->runtime_options, args->compile_specs};
  const size_t sizes[2] = {args->num_runtime_options, args->num_compile_specs};
  for (int l = 0; l < 2; ++l) {
    for (size_t i = 0; i < sizes[l]; ++i) {
      const plugrt_option* option = &lists[l][i];
      if (option->key.size == key_size && memcmp(option->key.data, key, key_size) == 0) {
        return option;
      }
    }
  }
  return NULL;
}

static uint64_t parse_count(const plugrt_option* option) {
  uint64_t value = 0;
  const char* text = (const char*)option->value;
  for (size_t i = 0; i < option->value_size && text[i] >= '0' && text[i] <= '9'; ++i) {
    value = value * 10 + (uint64_t)(text[i] - '0');
  }
  return value;
}

static bool faulty_is_available(void* context, const plugrt_host_services* host,
                                plugrt_text_buffer* reason) {
  (void)context;
  (void)host;
  (void)reason;
  return true;
}

static plugrt_status faulty_init(void* context, const plugrt_host_services* host,
                                 const plugrt_init_args* args, plugrt_delegate_handle* handle) {
  (void)context;
  const plugrt_option* option = find_option(args, "init_error");
  if (option != NULL) {
    return fail(host, PLUGRT_STATUS_DELEGATE_UNAVAILABLE, (const char*)option->value,
                option->value_size);
  }
  option = find_option(args, "init_internal");
  if (option != NULL) {
    return fail(host, PLUGRT_STATUS_INTERNAL, (const char*)option->value, option->value_size);
  }
  option = find_option(args, "init_incompatible");
  if (option != NULL) {
    return fail(host, PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY, (const char*)option->value,
                option->value_size);
  }
  if (args->blob_size != sizeof(float)) {
    static const char kMessage[] = "blob must be exactly one float32 offset";
    return fail(host, PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY, kMessage, sizeof(kMessage) - 1);
  }
  faulty_handle* h = (faulty_handle*)host->allocate(host->context, sizeof(*h), 16);
  if (h == NULL) {
    static const char kMessage[] = "out of memory";
    return fail(host, PLUGRT_STATUS_MEMORY_ALLOCATION_FAILED, kMessage, sizeof(kMessage) - 1);
  }
  memset(h, 0, sizeof(*h));
  h->host = host;
  memcpy(&h->offset, args->blob, sizeof(float));
  option = find_option(args, "execute_fails_every");
  if (option != NULL) h->fails_every = parse_count(option);
  h->silent = find_option(args, "execute_silent") != NULL;
  option = find_option(args, "execute_sleep_ms");
  if (option != NULL) h->sleep_ms = parse_count(option);
  option = find_option(args, "report_on_success");
  if (option != NULL) {
    size_t size = option->value_size;
    if (size > sizeof(h->report_on_success)) size = sizeof(h->report_on_success);
    memcpy(h->report_on_success, option->value, size);
    h->report_on_success_size = size;
  }
  *handle = (plugrt_delegate_handle)h;
  return PLUGRT_STATUS_OK;
}

static plugrt_status faulty_execute(plugrt_delegate_handle handle, const plugrt_execute_args* args) {
  faulty_handle* h = (faulty_handle*)handle;
  if (args->num_inputs != 1 || args->num_outputs != 1) {
    static const char kMessage[] = "expects one input and one output";
    return fail(h->host, PLUGRT_STATUS_INVALID_ARGUMENT, kMessage, sizeof(kMessage) - 1);
  }
  const DLTensor* in = args->inputs[0];
  const DLTensor* out = args->outputs[0];
  size_t count = 1;
  for (int32_t d = 0; d < in->ndim; ++d) count *= (size_t)in->shape[d];
  const float* src = (const float*)((const char*)in->data + in->byte_offset);
  float* dst = (float*)((char*)out->data + out->byte_offset);

  if (h->sleep_ms > 0) {
    struct timespec pause = {(time_t)(h->sleep_ms / 1000), (long)(h->sleep_ms % 1000) * 1000000L};
    while (nanosleep(&pause, &pause) != 0) {
    }
  }
  const uint64_t call = ++h->calls;
  if (h->fails_every != 0 && call % h->fails_every == 0) {
    for (size_t i = 0; i < count; ++i) dst[i] = NAN; /* a half-done output */
    if (h->silent) return PLUGRT_STATUS_INTERNAL;
    char message[96];
    const int size = snprintf(message, sizeof(message), "execute call %llu failed on purpose",
                              (unsigned long long)call);
    return fail(h->host, PLUGRT_STATUS_INTERNAL, message, size > 0 ? (size_t)size : 0);
  }
  for (size_t i = 0; i < count; ++i) dst[i] = src[i] + h->offset;
  if (h->report_on_success_size > 0) {
    fail(h->host, PLUGRT_STATUS_INTERNAL, h->report_on_success, h->report_on_success_size);
  }
  return PLUGRT_STATUS_OK;
}

static void faulty_destroy(plugrt_delegate_handle handle) {
  faulty_handle* h = (faulty_handle*)handle;
  h->host->deallocate(h->host->context, h);
}

static const plugrt_backend kBackend = {
    sizeof(plugrt_backend),
    PLUGRT_LITERAL("faulty"),
    0, /* calls on one handle are serialised by the host */
    NULL,
    faulty_is_available,
    faulty_init,
    faulty_execute,
    faulty_destroy,
    NULL,
    PLUGRT_LITERAL("adds a constant and fails on request; a plugrt test plugin"),
};

static const plugrt_backend* const kBackends[] = {&kBackend};

static const plugrt_plugin_descriptor kDescriptor = {
    sizeof(plugrt_plugin_descriptor),
    PLUGRT_ABI_MAJOR,
    PLUGRT_ABI_MINOR,
    PLUGRT_LITERAL("faulty"),
    PLUGRT_LITERAL("1.0.0"),
    kBackends,
    1,
};

PLUGRT_PLUGIN_METADATA("faulty", "1.0.0", 1, "faulty");

PLUGRT_PLUGIN_ENTRY(faulty) {
  (void)host;
  *descriptor = &kDescriptor;
  return PLUGRT_STATUS_OK;
}
