// SPDX-License-Identifier: Apache-2.0
/// \file plugrt_abi.h
/// The plugrt plugin ABI: the only thing that crosses a plugin's .so boundary.
///
/// A plugin is a shared object that exports two symbols:
///   - `plugrt_plugin_entry_v<MAJOR>` (see PLUGRT_PLUGIN_ENTRY_SYMBOL), a function that
///     receives the host's services and hands back a plugin descriptor, and
///   - `plugrt_metadata`, a plain-data record (a plugrt_plugin_metadata) placed in the
///     ELF section PLUGRT_METADATA_SECTION, so a host can list and inspect the plugin
///     without running any of its code.
///
/// Everything here is C99 with fixed-width types. No C++ type, exception or RTTI crosses.
///
/// Layout rules (read these before changing anything):
///   - Every struct that crosses, except the frozen value types plugrt_string,
///     plugrt_option, plugrt_text_buffer and plugrt_named_constant, starts with `size_t struct_size`,
///     set by the side that fills it in. A reader accepts any size at least as large as
///     the 1.0 layout, reads only the fields that fit in that size, and reads the fields a
///     smaller size lacks as absent (zero); the host also refuses a plugin's struct of
///     over 64 KiB as garbage. One exception: a backend table must be at least as large
///     as the layout of the minor its plugin's descriptor declares (a plugin that claims
///     1.1 hands over a 1.1 table).
///   - Fields and functions are only ever appended, each block labelled with the minor
///     version that added it. A slot is never reordered, resized or reused.
///   - Strings cross as plugrt_string (pointer + size); NUL termination is never relied on.
///   - Out-parameters come last and are marked `out`.
///
/// Version rules:
///   - MINOR bump: a field or function appended to a struct, a new enum constant, a new
///     capability bit. Old plugins keep working on a new host and new plugins on an old
///     host, because each side reads only what the other side's struct_size covers.
///   - MAJOR bump: anything else (a field removed, reordered or retyped, a changed
///     meaning, a changed function signature). The entry symbol carries the major, so a
///     host never calls a plugin built for another major; it refuses it by its metadata.
///   The changelog is ABI_CHANGELOG.md (installed with the SDK in share/doc/plugrt/sdk/);
///   a change to this header updates it.

#ifndef PLUGRT_PLUGRT_ABI_H_
#define PLUGRT_PLUGRT_ABI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---- Version ----------------------------------------------------------------

/// The ABI version this header describes.
#define PLUGRT_ABI_MAJOR 1
#define PLUGRT_ABI_MINOR 8

#define PLUGRT_ABI_STRINGIFY_(x) #x
#define PLUGRT_ABI_STRINGIFY(x) PLUGRT_ABI_STRINGIFY_(x)
#define PLUGRT_ABI_CONCAT_(a, b) a##b
#define PLUGRT_ABI_CONCAT(a, b) PLUGRT_ABI_CONCAT_(a, b)

/// The name of the entry function a plugin exports. It carries the ABI major, so a
/// plugin built for another major is recognised by its symbol and never mis-called.
#define PLUGRT_PLUGIN_ENTRY_NAME PLUGRT_ABI_CONCAT(plugrt_plugin_entry_v, PLUGRT_ABI_MAJOR)
#define PLUGRT_PLUGIN_ENTRY_SYMBOL "plugrt_plugin_entry_v" PLUGRT_ABI_STRINGIFY(PLUGRT_ABI_MAJOR)

/// The size of a struct up to and including `field`: the value of `struct_size` for the
/// layout that ends at that field.
#define PLUGRT_STRUCT_SIZE(type, field) (offsetof(type, field) + sizeof(((type*)0)->field))

// ---- Errors -----------------------------------------------------------------

/// A status code. 0 is success; codes are grouped in ranges by area. The C++ enum
/// plugrt::Error has the same values; plugrt/sdk/status_name.h names them.
typedef int32_t plugrt_status;

enum {
  PLUGRT_STATUS_OK = 0x00,

  // System: something went wrong inside the runtime or the plugin.
  PLUGRT_STATUS_INTERNAL = 0x01,       ///< A bug or an unexpected failure.
  PLUGRT_STATUS_INVALID_STATE = 0x02,  ///< The call is not allowed in the current state.
  /// The call stopped early: the host asked it to (plugrt_execute_args.stop_flag) or its
  /// time limit passed (deadline_ns). Added in 1.8.
  PLUGRT_STATUS_CANCELLED = 0x03,

  // Logic: the caller asked for something wrong or unsupported.
  PLUGRT_STATUS_NOT_SUPPORTED = 0x10,     ///< Valid request, not supported here.
  PLUGRT_STATUS_INVALID_ARGUMENT = 0x12,  ///< An argument is malformed (count, dtype, shape...).

  // Resource: something the call needs is missing or broken.
  PLUGRT_STATUS_NOT_FOUND = 0x20,                 ///< A named thing does not exist.
  PLUGRT_STATUS_MEMORY_ALLOCATION_FAILED = 0x21,  ///< An allocation failed.
  PLUGRT_STATUS_ACCESS_FAILED = 0x22,             ///< A file could not be read or mapped.
  PLUGRT_STATUS_INVALID_PROGRAM = 0x23,           ///< A program file failed validation.

  // Delegate: reported by or about a backend.
  PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY = 0x30,  ///< The blob is not one init can read.
  PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED = 0x31,
  PLUGRT_STATUS_DELEGATE_INVALID_HANDLE = 0x32,  ///< A handle is unknown or already destroyed.
  PLUGRT_STATUS_DELEGATE_UNAVAILABLE = 0x33,     ///< The backend cannot run here (no device...).
  /// Added in 1.3. The isolated process running the backend crashed, was killed or
  /// exceeded its time limit; the host reports it, a plugin never returns it.
  PLUGRT_STATUS_DELEGATE_CRASHED = 0x34,

  // Plugin: a plugin file or its tables are unusable.
  PLUGRT_STATUS_PLUGIN_INVALID = 0x40,       ///< Not a plugin, or its tables are malformed.
  PLUGRT_STATUS_PLUGIN_ABI_MISMATCH = 0x41,  ///< Built for an ABI major this host lacks.
};

// ---- Value types (frozen layouts: no struct_size) ------------------------------

/// A string that crosses the boundary: `size` bytes at `data`, not necessarily
/// NUL-terminated. `data` may be NULL only when `size` is 0.
typedef struct plugrt_string {
  const char* data;
  size_t size;
} plugrt_string;

/// A named option: a compile spec (written by the compiler into the program) or a
/// runtime option (given by the application). `value` is `value_size` raw bytes whose
/// meaning the backend defines; text values are not NUL-terminated.
typedef struct plugrt_option {
  plugrt_string key;
  const void* value;
  size_t value_size;
} plugrt_option;

/// A caller-owned buffer a callee writes text into. The callee writes at most
/// `capacity` bytes at `data` and sets `size` (out) to the number written; text that
/// does not fit is truncated. `data` may be NULL when `capacity` is 0.
typedef struct plugrt_text_buffer {
  char* data;
  size_t capacity;
  size_t size;  // out
} plugrt_text_buffer;

/// A constant tensor the host lends a backend by name (added in 1.4): `size` bytes at
/// `data`, little-endian elements in row-major order, exactly as the graph IR stores the
/// constant `name` (see plugrt_preprocess_args.flags). Read-only.
typedef struct plugrt_named_constant {
  plugrt_string name;
  const void* data;
  size_t size;
} plugrt_named_constant;

// ---- Host services ------------------------------------------------------------

/// Log severities for plugrt_host_services.log.
typedef int32_t plugrt_log_level;
enum {
  PLUGRT_LOG_DEBUG = 0,
  PLUGRT_LOG_INFO = 1,
  PLUGRT_LOG_WARNING = 2,
  PLUGRT_LOG_ERROR = 3,
};

/// What the host lends a plugin. The host fills one table per plugin, so everything the
/// plugin logs or reports is attributed to it.
///
/// Lifetime: the table passed to the entry function stays valid until the plugin is
/// unloaded; the table passed to `init` stays valid until that handle is destroyed.
/// Every function is thread-safe and may be called from any thread.
typedef struct plugrt_host_services {
  size_t struct_size;
  /// The ABI version the host was built with.
  uint32_t abi_major;
  uint32_t abi_minor;
  /// Host-owned; pass it back unchanged as the first argument of every function below.
  void* context;

  /// Allocates `size` bytes aligned to `alignment` (a power of two, at most 4096).
  /// Returns NULL on failure. Memory is released with `deallocate`.
  void* (*allocate)(void* context, size_t size, size_t alignment);
  /// Releases memory from `allocate`. `ptr` may be NULL.
  void (*deallocate)(void* context, void* ptr);

  /// Writes one log line. The plugin must not write to stdout or stderr itself.
  void (*log)(void* context, plugrt_log_level level, plugrt_string message);

  /// Opens a profiling event and returns a token for `profile_end`; 0 means the host
  /// is not recording (calling `profile_end(0)` is then a no-op).
  uint64_t (*profile_begin)(void* context, plugrt_string event_name);
  void (*profile_end)(void* context, uint64_t token);

  /// Explains the failure a plugin is about to return. The host keeps the message, with
  /// the plugin's name attached, as the reason for the failing call on this thread.
  void (*report_error)(void* context, plugrt_status status, plugrt_string message);
} plugrt_host_services;

#define PLUGRT_HOST_SERVICES_SIZE_1_0 PLUGRT_STRUCT_SIZE(plugrt_host_services, report_error)
#define PLUGRT_HOST_SERVICES_SIZE PLUGRT_HOST_SERVICES_SIZE_1_0

// ---- Backend calls' arguments --------------------------------------------------

/// A delegate instance created by `init`: one lowered part of one program.
typedef struct plugrt_delegate_handle_impl* plugrt_delegate_handle;

/// Arguments of plugrt_backend.init. Filled by the host.
typedef struct plugrt_init_args {
  size_t struct_size;
  /// The processed blob that this backend's `preprocess` wrote. Read-only; stays valid
  /// and unmoved until `destroy` returns for the handle (it usually lies in a mapped
  /// program file), so a backend may use it in place without copying.
  const void* blob;
  size_t blob_size;
  /// Compile specs stored in the program with this blob. Valid only during `init`.
  const plugrt_option* compile_specs;
  size_t num_compile_specs;
  /// Runtime options from the application. Valid only during `init`.
  const plugrt_option* runtime_options;
  size_t num_runtime_options;
  /// The method's thread budget: the most threads this handle may keep busy at once,
  /// the calling thread included. The backends of one method run one after another,
  /// each within the whole budget (see PLUGRT_EXECUTE_PARK_WORKERS). A host from 1.2 on
  /// always sets it (by default to the cores the process may run on); 0, from an older
  /// host, means the backend's own default.
  size_t num_threads;

  // -- Added in 1.4 --
  /// The constants of the partition's graph, by name, for a blob whose `preprocess` set
  /// PLUGRT_BLOB_NAMES_CONSTANTS; otherwise none. The array is valid only during `init`;
  /// the names and bytes it points to stay valid and unmoved until `destroy` returns for
  /// the handle, like the blob. Read them only when struct_size covers them: a blob that
  /// names constants and gets none (an older host) is refused with
  /// DELEGATE_INVALID_COMPATIBILITY, so the host falls back.
  const plugrt_named_constant* constants;
  size_t num_constants;
} plugrt_init_args;

#define PLUGRT_INIT_ARGS_SIZE_1_0 PLUGRT_STRUCT_SIZE(plugrt_init_args, num_threads)
#define PLUGRT_INIT_ARGS_SIZE_1_4 PLUGRT_STRUCT_SIZE(plugrt_init_args, num_constants)
#define PLUGRT_INIT_ARGS_SIZE PLUGRT_INIT_ARGS_SIZE_1_4

/// Flags of one execute call (plugrt_execute_args.flags). Added in 1.2.
typedef uint64_t plugrt_execute_flags;
/// Hand-off: this call ends the backend's turn on the method's threads, because the
/// host's next call goes to another backend (or to this one only after the others). Before
/// returning, the backend puts its worker threads to sleep (no spin-waiting), so that
/// they do not take the cores the next backend runs on. Without it, workers may keep
/// spinning for the backend's next call. A backend without worker threads ignores it.
#define PLUGRT_EXECUTE_PARK_WORKERS ((uint64_t)1 << 0)

/// Arguments of plugrt_backend.execute. Filled by the host. Every tensor is a view the
/// host owns: inputs are read-only; outputs have their shapes set and their memory
/// allocated by the host, and the backend writes their data. All pointers are valid only
/// during the call.
typedef struct plugrt_execute_args {
  size_t struct_size;
  const DLTensor* const* inputs;
  size_t num_inputs;
  const DLTensor* const* outputs;
  size_t num_outputs;

  // -- Added in 1.2 --
  /// PLUGRT_EXECUTE_* bits. Read it only when struct_size covers it (a 1.1 host does not
  /// send it: then no flag is set). Unknown bits are ignored.
  plugrt_execute_flags flags;

  // -- Added in 1.6 --
  /// The values this call gives the symbols of the handle's graph (graph IR version 2),
  /// one per symbol in the graph's order, each within its range: the method's symbols,
  /// which plugrt's compiler copies into every partition graph in the same order. Null
  /// (and num_symbol_values 0) for a static graph, and from a host before 1.6: read them
  /// only when struct_size covers them. They let a backend run a partition whose inputs
  /// do not give every symbol (one starting after a strided convolution sees only
  /// expressions of the length); the input and output shapes agree with them.
  const int64_t* symbol_values;
  size_t num_symbol_values;

  // -- Added in 1.7 --
  /// The most threads this call may keep busy, the calling thread included: from 1 up to
  /// the handle's budget (plugrt_init_args.num_threads). The host lowers it while fewer
  /// threads run the method faster: when other work holds the cores, when another method
  /// of the process runs at the same time, or for a partition too small to share. The
  /// backend runs the call within it, with no result changed; one that cannot change
  /// its thread count from call to call may use its budget. 0 (and from a host before
  /// 1.7: read it only when struct_size covers it) means the whole budget.
  size_t num_threads;

  // -- Added in 1.8 --
  /// How the host asks the call to stop early. When stop_flag is not null the host may
  /// set *stop_flag to nonzero from another thread at any time during the call: read it
  /// with a relaxed atomic load (__atomic_load_n(stop_flag, __ATOMIC_RELAXED)). When
  /// deadline_ns is nonzero, the call should stop once CLOCK_MONOTONIC passes it
  /// (nanoseconds). A backend that can stop checks both between steps that may take long
  /// (a loop's iterations, a long sequence of kernels) and returns PLUGRT_STATUS_CANCELLED;
  /// one that cannot ignores them, and the host stops before its next delegate. Null and
  /// 0 (and from a host before 1.8: read them only when struct_size covers them): none.
  const uint32_t* stop_flag;
  int64_t deadline_ns;
} plugrt_execute_args;

#define PLUGRT_EXECUTE_ARGS_SIZE_1_0 PLUGRT_STRUCT_SIZE(plugrt_execute_args, num_outputs)
#define PLUGRT_EXECUTE_ARGS_SIZE_1_2 PLUGRT_STRUCT_SIZE(plugrt_execute_args, flags)
#define PLUGRT_EXECUTE_ARGS_SIZE_1_6 PLUGRT_STRUCT_SIZE(plugrt_execute_args, num_symbol_values)
#define PLUGRT_EXECUTE_ARGS_SIZE_1_7 PLUGRT_STRUCT_SIZE(plugrt_execute_args, num_threads)
#define PLUGRT_EXECUTE_ARGS_SIZE_1_8 PLUGRT_STRUCT_SIZE(plugrt_execute_args, deadline_ns)
#define PLUGRT_EXECUTE_ARGS_SIZE PLUGRT_EXECUTE_ARGS_SIZE_1_8

// ---- Ahead-of-time table ----------------------------------------------------------

/// Arguments of plugrt_aot_backend.partition. Filled by the host.
typedef struct plugrt_partition_args {
  size_t struct_size;
  /// The whole graph, a graph IR flatbuffer (plugrt/schema/graph_ir.fbs). Valid during the call.
  const void* graph;
  size_t graph_size;
  const plugrt_option* compile_specs;
  size_t num_compile_specs;
  /// One flag per node of the graph, in node order, zeroed by the host: the backend
  /// sets the flag of each node it takes to 1.
  uint8_t* node_taken;  // out
  size_t num_nodes;
} plugrt_partition_args;

#define PLUGRT_PARTITION_ARGS_SIZE_1_0 PLUGRT_STRUCT_SIZE(plugrt_partition_args, num_nodes)
#define PLUGRT_PARTITION_ARGS_SIZE PLUGRT_PARTITION_ARGS_SIZE_1_0

/// Flags of a preprocess call from the host (plugrt_preprocess_args.flags). Added in 1.4.
typedef uint64_t plugrt_preprocess_flags;
/// Constants by name: the host keeps this partition's graph with the blob and hands its
/// constants to `init` (plugrt_init_args.constants), each under its graph IR value name,
/// which is non-empty and unique among the graph's constants. The backend may then leave
/// out of its blob the constants it uses as the graph stores them, and name them instead,
/// so the program stores each weight once. A constant the backend needs in another
/// layout it may still embed, repacked.
#define PLUGRT_PREPROCESS_CONSTANTS_BY_NAME ((uint64_t)1 << 0)

/// What a backend says of the blob its preprocess wrote (plugrt_preprocess_args.blob_flags).
/// Added in 1.4.
typedef uint64_t plugrt_blob_flags;
/// The blob names constants of the graph instead of holding them: its init needs
/// plugrt_init_args.constants. Set only when the host offered
/// PLUGRT_PREPROCESS_CONSTANTS_BY_NAME; without it the blob embeds what it needs.
#define PLUGRT_BLOB_NAMES_CONSTANTS ((uint64_t)1 << 0)

/// Arguments of plugrt_aot_backend.preprocess. Filled by the host, except the blob.
typedef struct plugrt_preprocess_args {
  size_t struct_size;
  /// One partition as a standalone graph IR flatbuffer. Valid during the call.
  const void* graph;
  size_t graph_size;
  const plugrt_option* compile_specs;
  size_t num_compile_specs;
  /// The blob that this backend's `init` will read, allocated with the host's
  /// `allocate`; the host takes ownership and releases it with `deallocate`.
  void* blob;        // out
  size_t blob_size;  // out

  // -- Added in 1.4 --
  /// PLUGRT_PREPROCESS_* bits. Read it only when struct_size covers it (an older host
  /// offers nothing). Unknown bits are ignored.
  plugrt_preprocess_flags flags;
  /// PLUGRT_BLOB_* bits about the blob written, zeroed by the host (an older plugin
  /// leaves them so). A plugin writes it only when struct_size covers it.
  plugrt_blob_flags blob_flags;  // out
} plugrt_preprocess_args;

#define PLUGRT_PREPROCESS_ARGS_SIZE_1_0 PLUGRT_STRUCT_SIZE(plugrt_preprocess_args, blob_size)
#define PLUGRT_PREPROCESS_ARGS_SIZE_1_4 PLUGRT_STRUCT_SIZE(plugrt_preprocess_args, blob_flags)
#define PLUGRT_PREPROCESS_ARGS_SIZE PLUGRT_PREPROCESS_ARGS_SIZE_1_4

/// The optional ahead-of-time half of a backend, kept apart so an on-device build can
/// leave it out. Owning both ends of the blob format in one .so keeps them in step.
typedef struct plugrt_aot_backend {
  size_t struct_size;
  /// Marks the nodes of a graph this backend takes. Must not modify anything else.
  plugrt_status (*partition)(void* backend_context, const plugrt_host_services* host, plugrt_partition_args* args);
  /// Lowers one partition to this backend's blob.
  plugrt_status (*preprocess)(void* backend_context, const plugrt_host_services* host, plugrt_preprocess_args* args);
} plugrt_aot_backend;

#define PLUGRT_AOT_BACKEND_SIZE_1_0 PLUGRT_STRUCT_SIZE(plugrt_aot_backend, preprocess)
#define PLUGRT_AOT_BACKEND_SIZE PLUGRT_AOT_BACKEND_SIZE_1_0

// ---- Backend table --------------------------------------------------------------

/// Capability bits of a backend.
typedef uint64_t plugrt_backend_capabilities;
/// One handle may be executed from several threads at once. Without it the host
/// serialises the calls on each handle (separate handles always may run in parallel).
#define PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE ((uint64_t)1 << 0)
/// (1.5) The backend reads graph IR version 2, whose dimensions may vary within bounds
/// (plugrt/schema/graph_ir.fbs: Graph.symbols, Value.dims). Only such a backend is given a graph
/// with symbols: `partition` then says, node by node, what it takes with dimensions
/// that vary; `preprocess` receives the bounds in the graph, and a blob it writes from
/// one receives each call's actual shapes in `execute`'s DLTensor views. Without it
/// (every plugin built before 1.5) the host gives the backend static graphs only: a
/// graph with symbols takes none of its nodes, without a call. Such a handle's `execute`
/// may return PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY for a call whose shapes it
/// cannot run (one it lowers per shape); the host then runs that call on the partition's
/// portable fallback, and gives the next call to the backend again.
#define PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS ((uint64_t)1 << 1)

/// One backend a plugin provides. Owned by the plugin; valid until it is unloaded.
typedef struct plugrt_backend {
  size_t struct_size;
  /// Unique name, 1 to 63 characters of [a-z0-9_], e.g. "xnnpack".
  plugrt_string name;
  plugrt_backend_capabilities capabilities;
  /// Plugin-owned; passed back as the first argument of is_available, init and the AOT
  /// functions.
  void* context;

  /// Says whether the backend can run on this machine. Cheap: must not initialise a
  /// device or allocate lasting resources. When it returns false it writes the reason to
  /// `reason` (may be NULL). Thread-safe; the answer does not change while the plugin
  /// stays loaded. Required.
  bool (*is_available)(void* backend_context, const plugrt_host_services* host, plugrt_text_buffer* reason);

  /// Creates a delegate instance from a processed blob. Device work belongs here, not in
  /// execute. Returns DELEGATE_INVALID_COMPATIBILITY for a blob it cannot read (another
  /// format version), so the host falls back; other failures are reported through
  /// `host->report_error`. On success writes `handle` (never NULL). Required.
  plugrt_status (*init)(void* backend_context, const plugrt_host_services* host, const plugrt_init_args* args,
                        plugrt_delegate_handle* handle);  // out

  /// Runs the delegate once. Should not allocate on the heap. Required.
  plugrt_status (*execute)(plugrt_delegate_handle handle, const plugrt_execute_args* args);

  /// Releases a handle and everything it holds. Never fails. Required.
  void (*destroy)(plugrt_delegate_handle handle);

  /// The ahead-of-time table, or NULL when this build has none.
  const plugrt_aot_backend* aot;

  // -- Added in 1.1 --
  /// One line for listings: the library and version underneath, the device family.
  plugrt_string description;
} plugrt_backend;

#define PLUGRT_BACKEND_SIZE_1_0 PLUGRT_STRUCT_SIZE(plugrt_backend, aot)
#define PLUGRT_BACKEND_SIZE_1_1 PLUGRT_STRUCT_SIZE(plugrt_backend, description)
#define PLUGRT_BACKEND_SIZE PLUGRT_BACKEND_SIZE_1_1

// ---- Plugin descriptor and entry point --------------------------------------------

/// What a plugin's entry function hands back. Owned by the plugin; valid until it is
/// unloaded.
typedef struct plugrt_plugin_descriptor {
  size_t struct_size;
  /// The ABI version the plugin was built with (PLUGRT_ABI_MAJOR/MINOR of its header).
  uint32_t abi_major;
  uint32_t abi_minor;
  /// Plugin name (same rules as a backend name) and version ("1.4.2").
  plugrt_string name;
  plugrt_string version;
  /// The backends it provides; at least one.
  const plugrt_backend* const* backends;
  size_t num_backends;
} plugrt_plugin_descriptor;

#define PLUGRT_PLUGIN_DESCRIPTOR_SIZE_1_0 PLUGRT_STRUCT_SIZE(plugrt_plugin_descriptor, num_backends)
#define PLUGRT_PLUGIN_DESCRIPTOR_SIZE PLUGRT_PLUGIN_DESCRIPTOR_SIZE_1_0

/// The entry function, exported as PLUGRT_PLUGIN_ENTRY_SYMBOL. Called once per load,
/// before anything else. `host` stays valid until the plugin is unloaded. On success
/// writes `descriptor`; on failure reports why through `host->report_error`.
typedef plugrt_status (*plugrt_plugin_entry_fn)(const plugrt_host_services* host,
                                                const plugrt_plugin_descriptor** descriptor);

// ---- Metadata (read without running plugin code) -----------------------------------

/// The ELF section and the exported symbol that hold a plugin's plugrt_plugin_metadata.
/// Their names and the record's layout do not depend on the ABI major, so any host can
/// read which major a plugin was built for.
#define PLUGRT_METADATA_SECTION ".plugrt_metadata"
#define PLUGRT_METADATA_SYMBOL "plugrt_metadata"
#define PLUGRT_METADATA_MAGIC "PLUGRTMD"  // 8 bytes, stored without a NUL
#define PLUGRT_METADATA_VERSION 1

#define PLUGRT_METADATA_NAME_CAPACITY 64
#define PLUGRT_METADATA_VERSION_CAPACITY 32
#define PLUGRT_METADATA_BACKENDS_CAPACITY 512

/// Plain data, no pointers (a pointer would need a relocation, that is, code loading).
/// Text fields are NUL-terminated and NUL-padded.
typedef struct plugrt_plugin_metadata {
  char magic[8];              ///< PLUGRT_METADATA_MAGIC
  uint32_t metadata_size;     ///< sizeof(plugrt_plugin_metadata) as the plugin was built
  uint32_t metadata_version;  ///< PLUGRT_METADATA_VERSION
  uint32_t abi_major;
  uint32_t abi_minor;
  char plugin_name[PLUGRT_METADATA_NAME_CAPACITY];
  char plugin_version[PLUGRT_METADATA_VERSION_CAPACITY];
  uint32_t num_backends;
  uint32_t reserved;  ///< 0
  /// `num_backends` names, each followed by one NUL, back to back.
  char backend_names[PLUGRT_METADATA_BACKENDS_CAPACITY];
} plugrt_plugin_metadata;

#ifdef __cplusplus
}  // extern "C"

// A field appended without moving the size constants fails here, not in the field.
static_assert(sizeof(plugrt_host_services) == PLUGRT_HOST_SERVICES_SIZE, "update the size");
static_assert(sizeof(plugrt_init_args) == PLUGRT_INIT_ARGS_SIZE, "update the size");
static_assert(sizeof(plugrt_execute_args) == PLUGRT_EXECUTE_ARGS_SIZE, "update the size");
static_assert(sizeof(plugrt_partition_args) == PLUGRT_PARTITION_ARGS_SIZE, "update the size");
static_assert(sizeof(plugrt_preprocess_args) == PLUGRT_PREPROCESS_ARGS_SIZE, "update the size");
static_assert(sizeof(plugrt_aot_backend) == PLUGRT_AOT_BACKEND_SIZE, "update the size");
static_assert(sizeof(plugrt_backend) == PLUGRT_BACKEND_SIZE, "update the size");
static_assert(sizeof(plugrt_plugin_descriptor) == PLUGRT_PLUGIN_DESCRIPTOR_SIZE, "update the size");
static_assert(sizeof(plugrt_plugin_metadata) == 8 + 4 * 4 + 64 + 32 + 4 * 2 + 512, "the metadata layout is frozen");
#endif  // __cplusplus

#endif  // PLUGRT_PLUGRT_ABI_H_
