/* SPDX-License-Identifier: Apache-2.0 */
/* The C API for applications: open a model (.prt or .onnx), inspect its inputs and
 * outputs, run it on DLPack tensors. Exported by libplugrt.so.
 *
 * Conventions:
 * - Every call that can fail returns a plugrt_error*: NULL on success, otherwise an
 *   error the caller frees with plugrt_error_free(). Nothing throws, nothing aborts.
 * - Objects are opaque handles, destroyed by their _destroy function (NULL is fine).
 * - Options structs start with struct_size: set it to sizeof the struct you compiled
 *   against (the _init functions do). A library newer than the header reads only the
 *   fields that size covers; an older one ignores fields it does not know only if they
 *   hold their defaults, and refuses the struct otherwise.
 * - Versioning: PLUGRT_C_API_VERSION_MAJOR changes only when a call or a struct's
 *   existing fields change meaning; it is in every symbol's version node (PLUGRT_C_1).
 *   plugrt_c_api_version() says which version the library is.
 * - Thread safety: a plugrt_runtime may be used from any number of threads at once.
 *   A plugrt_session runs one call at a time: plugrt_session_run from a second thread
 *   while one runs returns PLUGRT_C_INVALID_STATE; open one session per thread instead
 *   (sessions of one runtime share plugins, and the weights of one file once mapped).
 *   The functions that only read a session (counts, tensor info, outputs, report) may be
 *   called from any thread while no run is in progress on it. */
#ifndef PLUGRT_PLUGRT_C_H_
#define PLUGRT_PLUGRT_C_H_

#include <stddef.h>
#include <stdint.h>

#include "dlpack/dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PLUGRT_C_API_VERSION_MAJOR 1
#define PLUGRT_C_API_VERSION_MINOR 0

#if defined(__GNUC__)
#define PLUGRT_C_EXPORT __attribute__((visibility("default")))
#else
#define PLUGRT_C_EXPORT
#endif

/* (major << 16) | minor of the library. Thread-safe. */
PLUGRT_C_EXPORT uint32_t plugrt_c_api_version(void);

/* ---- Errors ---- */

/* The same codes as the plugin ABI's plugrt_status (plugrt/plugrt_abi.h). */
typedef enum {
  PLUGRT_C_OK = 0x00,
  PLUGRT_C_INTERNAL = 0x01,
  PLUGRT_C_INVALID_STATE = 0x02,
  PLUGRT_C_CANCELLED = 0x03,
  PLUGRT_C_NOT_SUPPORTED = 0x10,
  PLUGRT_C_INVALID_ARGUMENT = 0x12,
  PLUGRT_C_NOT_FOUND = 0x20,
  PLUGRT_C_MEMORY_ALLOCATION_FAILED = 0x21,
  PLUGRT_C_ACCESS_FAILED = 0x22,
  PLUGRT_C_INVALID_PROGRAM = 0x23,
  PLUGRT_C_DELEGATE_INVALID_COMPATIBILITY = 0x30,
  PLUGRT_C_DELEGATE_MEMORY_ALLOCATION_FAILED = 0x31,
  PLUGRT_C_DELEGATE_INVALID_HANDLE = 0x32,
  PLUGRT_C_DELEGATE_UNAVAILABLE = 0x33,
  PLUGRT_C_DELEGATE_CRASHED = 0x34,
  PLUGRT_C_PLUGIN_INVALID = 0x40,
  PLUGRT_C_PLUGIN_ABI_MISMATCH = 0x41
} plugrt_error_code;

typedef struct plugrt_error plugrt_error;

PLUGRT_C_EXPORT int32_t plugrt_error_code_of(const plugrt_error* error);
/* The code and what failed and why, naming the file, input or backend (valid until the
 * error is freed). An error belongs to the caller that got it: no other thread sees it. */
PLUGRT_C_EXPORT const char* plugrt_error_message(const plugrt_error* error);
PLUGRT_C_EXPORT void plugrt_error_free(plugrt_error* error);

/* ---- Runtime ---- */

typedef struct plugrt_runtime plugrt_runtime;

typedef struct {
  size_t struct_size;
  /* Start from the PLUGRT_* variables (plugrt/runtime/runtime_options.h lists them);
   * 0: from the defaults only. Default 1. */
  int32_t use_environment;
  /* Directories searched for plugins first; NULL-terminated, or NULL for none. */
  const char* const* plugin_dirs;
  /* A file of SHA-256 digests: only the plugins it lists may load. NULL: keep. */
  const char* plugin_allow_list;
  /* "auto" or "as-compiled"; NULL: keep (auto by default). */
  const char* placement;
  /* The blob cache's directory; NULL: keep. */
  const char* cache_dir;
  /* The thread budget of each session; 0: keep (the cores this process may run on). */
  uint32_t num_threads;
  /* Only these backends may run (comma-separated); NULL: any. */
  const char* backends;
} plugrt_runtime_options;

/* Fills the defaults in, struct_size included. */
PLUGRT_C_EXPORT void plugrt_runtime_options_init(plugrt_runtime_options* options);

/* options may be NULL (the defaults). Reads every plugin's metadata; runs no plugin code.
 * Thread-safe: each call makes its own runtime. */
PLUGRT_C_EXPORT plugrt_error* plugrt_runtime_create(const plugrt_runtime_options* options, plugrt_runtime** runtime);
/* Every session of the runtime must be destroyed first; no other call on it may run. */
PLUGRT_C_EXPORT void plugrt_runtime_destroy(plugrt_runtime* runtime);

/* ---- Sessions ---- */

typedef struct plugrt_session plugrt_session;

/* Opens `path`: a .prt program, or an ONNX model (.onnx) compiled in memory.
 * Thread-safe: threads may open sessions of one runtime at once (loading is serialised). */
PLUGRT_C_EXPORT plugrt_error* plugrt_session_open(plugrt_runtime* runtime, const char* path, plugrt_session** session);

typedef struct {
  size_t struct_size;
  /* The program's method to run; NULL: "forward". */
  const char* method;
  /* This session's thread budget; 0: the runtime's. */
  uint32_t num_threads;
  /* ONNX models: shapes for inputs the model leaves open, "NAME=D0,D1,..." each
   * (`plugrt compile --input-shape`); NULL-terminated, or NULL for none. */
  const char* const* input_shapes;
  /* ONNX models: bounds of dimensions that stay symbolic, "NAME=MIN..MAX" each
   * (`plugrt compile --dim`); NULL-terminated, or NULL for none. */
  const char* const* dims;
  /* Each run's time limit in milliseconds; 0: none. Past it the run stops with
   * PLUGRT_C_CANCELLED (within a backend that checks, else before its next part). */
  uint32_t execute_timeout_ms;
} plugrt_session_options;

/* Fills the defaults in, struct_size included. */
PLUGRT_C_EXPORT void plugrt_session_options_init(plugrt_session_options* options);
/* plugrt_session_open with options; `options` may be NULL (the defaults). */
PLUGRT_C_EXPORT plugrt_error* plugrt_session_open_with_options(plugrt_runtime* runtime, const char* path,
                                                               const plugrt_session_options* options,
                                                               plugrt_session** session);
PLUGRT_C_EXPORT void plugrt_session_destroy(plugrt_session* session);

PLUGRT_C_EXPORT size_t plugrt_session_num_inputs(const plugrt_session* session);
PLUGRT_C_EXPORT size_t plugrt_session_num_outputs(const plugrt_session* session);

typedef struct {
  size_t struct_size;
  const char* name;
  DLDataType dtype;
  int32_t ndim;
  /* ndim dimensions; where one varies, its upper bound. */
  const int64_t* shape;
  /* ndim flags: nonzero where the dimension varies from call to call. */
  const uint8_t* varies;
} plugrt_tensor_info;

/* Input or output `index`; the pointers stay valid while the session lives. These reads,
 * and the counts above, may run on any thread, also while the session runs. */
PLUGRT_C_EXPORT plugrt_error* plugrt_session_input_info(const plugrt_session* session, size_t index,
                                                        plugrt_tensor_info* info);
PLUGRT_C_EXPORT plugrt_error* plugrt_session_output_info(const plugrt_session* session, size_t index,
                                                         plugrt_tensor_info* info);

/* Copies the inputs (num_inputs tensors, in order, on the CPU, compact row-major) in and
 * runs. A dimension that varies takes the size of the tensor given. */
PLUGRT_C_EXPORT plugrt_error* plugrt_session_run(plugrt_session* session, const DLTensor* const* inputs,
                                                 size_t num_inputs);

/* Stops the run in progress on this session, if any: it returns PLUGRT_C_CANCELLED. A run
 * started later is not affected. Thread-safe: meant to be called from another thread. */
PLUGRT_C_EXPORT void plugrt_session_cancel(plugrt_session* session);

/* Output `index` of the last run, owned by the session: valid until its next run. Not
 * while a run is in progress on another thread. */
PLUGRT_C_EXPORT plugrt_error* plugrt_session_output(const plugrt_session* session, size_t index,
                                                    const DLTensor** output);
/* Copies output `index` into `destination`, which the caller owns: same dtype and shape,
 * compact row-major, on the CPU. */
PLUGRT_C_EXPORT plugrt_error* plugrt_session_copy_output(const plugrt_session* session, size_t index,
                                                         DLTensor* destination);

/* The index of the input named `name`; PLUGRT_C_NOT_FOUND, listing the names, if none. */
PLUGRT_C_EXPORT plugrt_error* plugrt_session_input_index(const plugrt_session* session, const char* name,
                                                         size_t* index);

/* Where each part of the model runs and why, as a JSON object (the load report).
 * Valid while the session lives. */
PLUGRT_C_EXPORT const char* plugrt_session_report_json(const plugrt_session* session);

/* ---- Tensors in .npy files (the format `plugrt run` reads and writes) ---- */

typedef struct plugrt_tensor plugrt_tensor;

/* Reads a .npy file (C order, little-endian, a dtype plugrt has) into a tensor on the
 * CPU that the caller frees with plugrt_tensor_free(). */
PLUGRT_C_EXPORT plugrt_error* plugrt_tensor_read_npy(const char* path, plugrt_tensor** tensor);
/* A view of the tensor, valid until it is freed. The tensor functions are thread-safe
 * (each tensor used by one thread at a time). */
PLUGRT_C_EXPORT const DLTensor* plugrt_tensor_dltensor(const plugrt_tensor* tensor);
PLUGRT_C_EXPORT void plugrt_tensor_free(plugrt_tensor* tensor);
/* Writes a compact CPU tensor to `path` as a .npy file. */
PLUGRT_C_EXPORT plugrt_error* plugrt_tensor_write_npy(const char* path, const DLTensor* tensor);

#ifdef __cplusplus
}
#endif

#endif /* PLUGRT_PLUGRT_C_H_ */
