/* A test plugin that crashes, hangs or overruns its output on request, for the isolation
 * tests: it is only ever loaded isolated, in plugrt-backend-host processes.
 *
 * Backend "crashy" computes what the "offset" test backend does (the blob is one float32
 * offset; execute writes out[i] = in[i] + offset). Options, looked up in the runtime
 * options, then in the compile specs; values are decimal text:
 *   init_crash       init dies: 1 by SIGSEGV, 2 by abort() (SIGABRT)
 *   init_hang        (any value) init never returns
 *   crash_on_call N  execute call N on a handle dies by SIGSEGV
 *   abort_on_call N  execute call N on a handle calls abort()
 *   hang_on_call N   execute call N on a handle never returns
 *   overrun_bytes N  every execute writes N bytes past the end of its output
 *   fork_crash_on_call N  execute call N forks a child that sleeps for ever holding every
 *                    descriptor (the host's socket too), then dies by SIGSEGV
 *   fork_hang_on_call N   the same, then never returns
 *   fork_pid_file PATH    where those calls write the child's pid (decimal text)
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugrt/sdk/plugin_export.h"

typedef struct crashy_handle {
  const plugrt_host_services* host;
  float offset;
  uint64_t crash_on, abort_on, hang_on, overrun, fork_crash_on, fork_hang_on;
  char fork_pid_file[256];
  uint64_t calls; /* the host serialises calls on a handle (no concurrency capability) */
} crashy_handle;

static const plugrt_option* find_option(const plugrt_init_args* args, const char* key) {
  const size_t key_size = strlen(key);
  const plugrt_option* lists[2] = {args->runtime_options, args->compile_specs};
  const size_t sizes[2] = {args->num_runtime_options, args->num_compile_specs};
  for (int l = 0; l < 2; ++l) {
    for (size_t i = 0; i < sizes[l]; ++i) {
      const plugrt_option* option = &lists[l][i];
      if (option->key.size == key_size && memcmp(option->key.data, key, key_size) == 0) return option;
    }
  }
  return NULL;
}

static uint64_t count_option(const plugrt_init_args* args, const char* key) {
  const plugrt_option* option = find_option(args, key);
  uint64_t value = 0;
  if (option == NULL) return 0;
  const char* text = (const char*)option->value;
  for (size_t i = 0; i < option->value_size && text[i] >= '0' && text[i] <= '9'; ++i) {
    value = value * 10 + (uint64_t)(text[i] - '0');
  }
  return value;
}

/* Copies a text option into `out` (NUL-terminated; empty when absent or too long). */
static void text_option(const plugrt_init_args* args, const char* key, char* out, size_t size) {
  const plugrt_option* option = find_option(args, key);
  out[0] = '\0';
  if (option == NULL || option->value_size >= size) return;
  memcpy(out, option->value, option->value_size);
  out[option->value_size] = '\0';
}

/* Starts a child that outlives this process unless its group is ended; writes its pid. */
static void fork_sleeper(const crashy_handle* h) {
  const pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  const int fd = open(h->fork_pid_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  char text[32];
  const int length = snprintf(text, sizeof(text), "%d\n", (int)child);
  if (write(fd, text, (size_t)length) != length) abort();
  close(fd);
}

static void hang(void) {
  for (;;) pause();
}

static void die(uint64_t how) {
  if (how == 2) abort();
  raise(SIGSEGV);
  abort(); /* a SIGSEGV handler that returned */
}

static bool crashy_is_available(void* context, const plugrt_host_services* host, plugrt_text_buffer* reason) {
  (void)context;
  (void)host;
  (void)reason;
  return true;
}

static plugrt_status crashy_init(void* context, const plugrt_host_services* host, const plugrt_init_args* args,
                                 plugrt_delegate_handle* handle) {
  (void)context;
  const uint64_t init_crash = count_option(args, "init_crash");
  if (init_crash != 0) die(init_crash);
  if (find_option(args, "init_hang") != NULL) hang();
  if (args->blob_size != sizeof(float)) {
    static const char kMessage[] = "blob must be exactly one float32 offset";
    plugrt_string text = {kMessage, sizeof(kMessage) - 1};
    host->report_error(host->context, PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY, text);
    return PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY;
  }
  crashy_handle* h = (crashy_handle*)host->allocate(host->context, sizeof(*h), 16);
  if (h == NULL) return PLUGRT_STATUS_MEMORY_ALLOCATION_FAILED;
  memset(h, 0, sizeof(*h));
  h->host = host;
  memcpy(&h->offset, args->blob, sizeof(float));
  h->crash_on = count_option(args, "crash_on_call");
  h->abort_on = count_option(args, "abort_on_call");
  h->hang_on = count_option(args, "hang_on_call");
  h->overrun = count_option(args, "overrun_bytes");
  h->fork_crash_on = count_option(args, "fork_crash_on_call");
  h->fork_hang_on = count_option(args, "fork_hang_on_call");
  text_option(args, "fork_pid_file", h->fork_pid_file, sizeof(h->fork_pid_file));
  *handle = (plugrt_delegate_handle)h;
  return PLUGRT_STATUS_OK;
}

static plugrt_status crashy_execute(plugrt_delegate_handle handle, const plugrt_execute_args* args) {
  crashy_handle* h = (crashy_handle*)handle;
  if (args->num_inputs != 1 || args->num_outputs != 1) return PLUGRT_STATUS_INVALID_ARGUMENT;
  const uint64_t call = ++h->calls;
  if (call == h->crash_on) die(1);
  if (call == h->abort_on) die(2);
  if (call == h->hang_on) hang();
  if (call == h->fork_crash_on || call == h->fork_hang_on) {
    fork_sleeper(h);
    if (call == h->fork_crash_on) die(1);
    hang();
  }
  const DLTensor* in = args->inputs[0];
  const DLTensor* out = args->outputs[0];
  size_t count = 1;
  for (int32_t d = 0; d < in->ndim; ++d) count *= (size_t)in->shape[d];
  const float* src = (const float*)((const char*)in->data + in->byte_offset);
  float* dst = (float*)((char*)out->data + out->byte_offset);
  for (size_t i = 0; i < count; ++i) dst[i] = src[i] + h->offset;
  /* Past the end: what a buggy kernel does to the memory after its output. */
  memset((char*)(dst + count), 0x5a, (size_t)h->overrun);
  return PLUGRT_STATUS_OK;
}

static void crashy_destroy(plugrt_delegate_handle handle) {
  crashy_handle* h = (crashy_handle*)handle;
  h->host->deallocate(h->host->context, h);
}

static const plugrt_backend kBackend = {
    sizeof(plugrt_backend),
    PLUGRT_LITERAL("crashy"),
    0,
    NULL,
    crashy_is_available,
    crashy_init,
    crashy_execute,
    crashy_destroy,
    NULL,
    PLUGRT_LITERAL("adds a constant, crashes or hangs on request; a plugrt test plugin"),
};

static const plugrt_backend* const kBackends[] = {&kBackend};

static const plugrt_plugin_descriptor kDescriptor = {
    sizeof(plugrt_plugin_descriptor), PLUGRT_ABI_MAJOR, PLUGRT_ABI_MINOR, PLUGRT_LITERAL("crashy"),
    PLUGRT_LITERAL("1.0.0"),          kBackends,        1,
};

PLUGRT_PLUGIN_METADATA("crashy", "1.0.0", 1, "crashy");

PLUGRT_PLUGIN_ENTRY(crashy) {
  (void)host;
  *descriptor = &kDescriptor;
  return PLUGRT_STATUS_OK;
}
