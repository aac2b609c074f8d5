// SPDX-License-Identifier: Apache-2.0
/// \file backend.h
/// The C++ way to write a plugrt backend: derive from plugrt::sdk::Backend, return a
/// plugrt::sdk::Delegate from init, and export the classes with PLUGRT_SDK_EXPORT_PLUGIN.
///
///   class ReluBackend : public plugrt::sdk::Backend {
///    public:
///     static constexpr char kName[] = "my_relu";                 // required, [a-z0-9_]
///     static constexpr char kDescription[] = "ReLU on float32";  // optional
///     sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext& c) override;
///   };
///   PLUGRT_SDK_EXPORT_PLUGIN(my_plugin, "1.0.0", ReluBackend);
///
/// The export macro writes the C ABI for you: the entry function
/// (plugrt_plugin_entry_v<MAJOR>), the descriptor and one backend table per class, and the
/// metadata record in the ELF section the host reads without running the plugin. Every
/// call crosses one adapter that
///   - turns a failing Status into its code, after reporting its message through the
///     host's report_error (the host keeps it, with the plugin's name, for the caller);
///   - catches every exception (none ever crosses the boundary): std::bad_alloc becomes
///     PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED, any other PLUGRT_STATUS_INTERNAL,
///     reporting what();
///   - refuses NULL or too-small argument structs with InvalidArgument;
///   - refuses, before execute, a tensor on a device the backend does not run on
///     (kDeviceType, the CPU unless the class says otherwise).
///
/// An on-device build may leave the ahead-of-time half out: define PLUGRT_SDK_NO_AOT
/// (`plugrt_add_backend(... NO_AOT)` does) and the plugin hands the host no AOT table,
/// whatever kHasAot says; guard partition and preprocess with `#if PLUGRT_SDK_HAS_AOT`
/// to leave their code and dependencies out too.
///
/// Classes are default-constructed once per load of the plugin, on the first call of the
/// entry function, and destroyed when the plugin is unloaded. Several threads may call
/// one backend object at once (is_available, init, partition, preprocess); keep it
/// stateless or lock. A Delegate is one handle: the host calls execute on it from one
/// thread at a time unless the class sets kCapabilities to
/// PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE.
///
/// This header includes only the ABI header and the SDK's own; it never needs the runtime.
#ifndef PLUGRT_SDK_BACKEND_H_
#define PLUGRT_SDK_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "plugrt/plugrt_abi.h"
#include "plugrt/sdk/availability.h"
#include "plugrt/sdk/host.h"
#include "plugrt/sdk/options.h"
#include "plugrt/sdk/plugin_export.h"
#include "plugrt/sdk/status.h"
#include "plugrt/sdk/tensor.h"

/// 1 when this build includes the ahead-of-time half (partition, preprocess), 0 in an
/// on-device build that defines PLUGRT_SDK_NO_AOT.
#ifdef PLUGRT_SDK_NO_AOT
#define PLUGRT_SDK_HAS_AOT 0
#else
#define PLUGRT_SDK_HAS_AOT 1
#endif

namespace plugrt::sdk {

/// The constants a host lends init by name (ABI 1.4), for a blob whose preprocess named
/// them (PreprocessRequest::name_constants). Their bytes stay valid and unmoved until the
/// delegate is destroyed, like the blob; the list itself only during init.
class NamedConstants {
 public:
  NamedConstants() = default;
  NamedConstants(const plugrt_named_constant* items, size_t count) : items_(items), count_(count) {}
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const plugrt_named_constant* begin() const { return items_; }
  const plugrt_named_constant* end() const { return items_ + count_; }
  /// The constant called `name`, or nullptr. A linear search: index them once for many.
  const plugrt_named_constant* find(std::string_view name) const {
    for (const plugrt_named_constant& item : *this) {
      if (std::string_view(item.name.data, item.name.size) == name) return &item;
    }
    return nullptr;
  }

 private:
  const plugrt_named_constant* items_ = nullptr;
  size_t count_ = 0;
};

/// What init gets. `blob` stays valid and unmoved until the delegate is destroyed (it
/// usually lies in a mapped program file), so a delegate may keep pointers into it. The
/// options are valid during init only: copy what you keep.
struct InitContext {
  Host host;
  const void* blob = nullptr;
  size_t blob_size = 0;
  Options compile_specs;
  Options runtime_options;
  /// The method's thread budget (the calling thread included); 0 from a host older than
  /// ABI 1.2: the backend's own default. Park workers when Arguments::park_workers() says.
  size_t num_threads = 0;
  /// The graph's constants by name when the blob names them; empty from a host older than
  /// ABI 1.4, which a blob that names constants refuses with Status::incompatible_blob.
  NamedConstants constants;
  const uint8_t* bytes() const { return static_cast<const uint8_t*>(blob); }
};

/// Ahead of time: which nodes of a graph (a graph IR flatbuffer, see plugrt/sdk/graph.h)
/// this backend takes. Set node_taken[i] to 1 for each node i it takes; it comes zeroed.
struct PartitionRequest {
  Host host;
  const void* graph = nullptr;
  size_t graph_size = 0;
  Options compile_specs;
  uint8_t* node_taken = nullptr;
  size_t num_nodes = 0;
};

/// Ahead of time: one partition (a standalone graph IR flatbuffer) to lower to a blob.
struct PreprocessRequest {
  Host host;
  const void* graph = nullptr;
  size_t graph_size = 0;
  Options compile_specs;
  /// ABI 1.4: the host offers the graph's constants to init by name
  /// (PLUGRT_PREPROCESS_CONSTANTS_BY_NAME; each under its value name, non-empty and
  /// unique). A backend that takes the offer leaves the constants it uses as stored out
  /// of its blob, names them there, and calls name_constants().
  bool constants_by_name_offered = false;
  /// Says that the blob names constants (PLUGRT_BLOB_NAMES_CONSTANTS). Only after an offer.
  void name_constants() const {
    if (constants_by_name_offered && blob_flags_ != nullptr) *blob_flags_ |= PLUGRT_BLOB_NAMES_CONSTANTS;
  }
  /// Where name_constants() writes: the host's out field (set by the adapter).
  plugrt_blob_flags* blob_flags_ = nullptr;
  /// Set only by sdk::PerShapeDelegate (per_shape.h), never by the host: lower the graph,
  /// whose dimensions vary, at these symbol values (one per symbol) into a static blob:
  /// `GraphView::open(graph, graph_size, symbol_values)`.
  const int64_t* symbol_values = nullptr;
};

/// One delegate instance: what init built from one blob. Destroyed by the host through
/// Backend::destroy; release everything it holds in its destructor.
class Delegate {
 public:
  virtual ~Delegate() = default;
  /// Runs once on the host's tensors. Check every argument (see tensor.h) and return
  /// InvalidArgument for a wrong count, dtype or shape. Should not allocate on the heap.
  virtual Status execute(const Arguments& args) = 0;
};

/// The base of a backend. Derived classes define `static constexpr char kName[]` and may
/// define `kDescription` (text for listings), `kCapabilities` (PLUGRT_BACKEND_CAP_*),
/// `kHasAot = true` when they override partition and preprocess, and `kDeviceType` when
/// their tensors live on another device than the CPU.
class Backend {
 public:
  static constexpr char kDescription[] = "";
  static constexpr plugrt_backend_capabilities kCapabilities = 0;
  static constexpr bool kHasAot = false;
  /// The device every tensor of execute must be on; the adapter refuses others. kDLCPU
  /// also accepts host memory pinned for an accelerator (kDLCUDAHost, kDLROCMHost).
  static constexpr DLDeviceType kDeviceType = kDLCPU;

  virtual ~Backend() = default;

  /// Whether the backend can run here. Cheap: never initialise a device here. The answer
  /// must not change while the plugin stays loaded. Default: available.
  virtual Availability is_available(Host host) {
    (void)host;
    return Availability::yes();
  }

  /// Builds a delegate from a blob this backend's preprocess wrote. Refuse a blob you
  /// cannot read with Status::incompatible_blob (another format version: the host falls
  /// back to the portable backend) or InvalidArgument/InvalidProgram (a damaged one).
  /// Never trust the blob: validate every size and offset before reading.
  virtual Expected<std::unique_ptr<Delegate>> init(const InitContext& context) = 0;

  /// Runs a delegate. Default: delegate.execute(args).
  virtual Status execute(Delegate& delegate, const Arguments& args) { return delegate.execute(args); }

  // Optional: `using DelegateType = MyDelegate;` (a final class) in a backend whose init
  // makes only MyDelegates, and which keeps the default execute above, lets the adapter
  // call MyDelegate::execute without a virtual call, so the compiler can inline it: a few
  // nanoseconds per call. init checks each delegate it gets against it.

  /// Releases a delegate. Default: deletes it. Must not fail.
  virtual void destroy(std::unique_ptr<Delegate> delegate) { delegate.reset(); }

  /// Ahead of time (with kHasAot): marks the nodes this backend takes.
  virtual Status partition(const PartitionRequest& request) {
    (void)request;
    return Status::not_supported("this backend has no partition");
  }
  /// Ahead of time (with kHasAot): lowers one partition to the blob init reads.
  virtual Expected<std::vector<uint8_t>> preprocess(const PreprocessRequest& request) {
    (void)request;
    return Status::not_supported("this backend has no preprocess");
  }
};

namespace internal {

// ---- Compile-time checks of names, and the metadata record ----------------------------

constexpr size_t length(const char* text) {
  size_t n = 0;
  while (text[n] != '\0') ++n;
  return n;
}

constexpr bool is_valid_name(const char* name) {
  const size_t n = length(name);
  if (n == 0 || n > PLUGRT_METADATA_NAME_CAPACITY - 1) return false;
  for (size_t i = 0; i < n; ++i) {
    const char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

constexpr bool same_text(const char* a, const char* b) {
  size_t i = 0;
  while (a[i] != '\0' && a[i] == b[i]) ++i;
  return a[i] == b[i];
}

template <typename... Bs>
constexpr bool names_are_valid() {
  return (is_valid_name(Bs::kName) && ...);
}

template <typename... Bs>
constexpr bool names_are_distinct() {
  const char* names[] = {Bs::kName...};
  for (size_t i = 0; i < sizeof...(Bs); ++i) {
    for (size_t j = i + 1; j < sizeof...(Bs); ++j) {
      if (same_text(names[i], names[j])) return false;
    }
  }
  return true;
}

template <typename... Bs>
constexpr bool names_fit() {
  size_t total = 0;
  for (const char* name : {Bs::kName...}) total += length(name) + 1;
  return total <= PLUGRT_METADATA_BACKENDS_CAPACITY;
}

template <typename... Bs>
constexpr plugrt_plugin_metadata make_metadata(const char* plugin_name, const char* version) {
  plugrt_plugin_metadata m{};
  const char magic[] = PLUGRT_METADATA_MAGIC;
  for (size_t i = 0; i < 8; ++i) m.magic[i] = magic[i];
  m.metadata_size = static_cast<uint32_t>(sizeof(plugrt_plugin_metadata));
  m.metadata_version = PLUGRT_METADATA_VERSION;
  m.abi_major = PLUGRT_ABI_MAJOR;
  m.abi_minor = PLUGRT_ABI_MINOR;
  for (size_t i = 0; i < length(plugin_name) && i + 1 < PLUGRT_METADATA_NAME_CAPACITY; ++i) {
    m.plugin_name[i] = plugin_name[i];
  }
  for (size_t i = 0; i < length(version) && i + 1 < PLUGRT_METADATA_VERSION_CAPACITY; ++i) {
    m.plugin_version[i] = version[i];
  }
  m.num_backends = static_cast<uint32_t>(sizeof...(Bs));
  size_t at = 0;
  for (const char* name : {Bs::kName...}) {
    for (size_t i = 0; i < length(name) && at + 1 < PLUGRT_METADATA_BACKENDS_CAPACITY; ++i) {
      m.backend_names[at++] = name[i];
    }
    ++at;  // the NUL after each name (already zero)
  }
  return m;
}

// ---- The adapter from the C table to the classes --------------------------------------

/// What a plugrt_delegate_handle points at.
struct HandleBox {
  Backend* backend;
  Host host;
  std::unique_ptr<Delegate> delegate;
};

inline void write_text(plugrt_text_buffer* buffer, std::string_view text) {
  if (buffer == nullptr) return;
  const size_t size = text.size() < buffer->capacity ? text.size() : buffer->capacity;
  if (size > 0 && buffer->data != nullptr) std::memcpy(buffer->data, text.data(), size);
  buffer->size = buffer->data == nullptr ? 0 : size;
}

/// Reports an exception that escaped a call as PLUGRT_STATUS_INTERNAL; `what` is NULL for
/// one that is not a std::exception. Never throws: without memory for the message it
/// reports a static one.
inline void report_exception(Host host, const char* call, const char* what) noexcept {
  try {
    const std::string message = what != nullptr
                                    ? std::string(call) + " threw an exception: " + what
                                    : std::string(call) + " threw an exception that is not a std::exception";
    host.report_error(PLUGRT_STATUS_INTERNAL, message);
  } catch (...) {
    host.report_error(PLUGRT_STATUS_INTERNAL, std::string_view("exception"));
  }
}

/// Runs `body` (returning a Status) so that nothing escapes: a failing Status is reported
/// and its code returned; an exception becomes PLUGRT_STATUS_INTERNAL with its message.
template <typename Body>
plugrt_status guarded(Host host, const char* call, Body&& body) noexcept {
  try {
    Status status = body();
    if (status.is_ok()) return PLUGRT_STATUS_OK;
    host.report_error(status.code(), status.message());
    return status.code();
  } catch (const std::bad_alloc&) {
    // Nothing is allocated here: the message is static.
    host.report_error(PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED, std::string_view("out of memory"));
    return PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED;
  } catch (const std::exception& e) {
    report_exception(host, call, e.what());
  } catch (...) {
    report_exception(host, call, nullptr);
  }
  return PLUGRT_STATUS_INTERNAL;
}

/// Whether a tensor on `device` may be handed to a backend that runs on `expected`.
constexpr bool device_matches(DLDeviceType expected, DLDevice device) {
  if (device.device_type == expected) return true;
  return expected == kDLCPU && (device.device_type == kDLCUDAHost || device.device_type == kDLROCMHost);
}

/// Whether every tensor of `list` is there and on `expected`.
inline bool all_on_device(DLDeviceType expected, const DLTensor* const* list, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (list[i] == nullptr || !device_matches(expected, list[i]->device)) return false;
  }
  return true;
}

/// Whether execute's arguments may be handed to the backend: the struct, its lists, and
/// every tensor on the backend's device. Builds no Status: this is every call's path.
inline bool arguments_usable(DLDeviceType expected, const plugrt_execute_args* args) {
  return args != nullptr && args->struct_size >= PLUGRT_EXECUTE_ARGS_SIZE_1_0 &&
         (args->num_inputs == 0 || args->inputs != nullptr) && (args->num_outputs == 0 || args->outputs != nullptr) &&
         all_on_device(expected, args->inputs, args->num_inputs) &&
         all_on_device(expected, args->outputs, args->num_outputs);
}

/// Why arguments_usable() refused execute's arguments; out of line, off the hot path.
[[gnu::cold, gnu::noinline]] inline Status refuse_arguments(DLDeviceType expected, const plugrt_execute_args* args) {
  if (args == nullptr || args->struct_size < PLUGRT_EXECUTE_ARGS_SIZE_1_0) {
    return Status::invalid_argument("execute: missing or too small plugrt_execute_args");
  }
  if ((args->num_inputs > 0 && args->inputs == nullptr) || (args->num_outputs > 0 && args->outputs == nullptr)) {
    return Status::invalid_argument("execute: a tensor list is NULL");
  }
  for (const auto& [list, count, kind] : {std::tuple{args->inputs, args->num_inputs, "input "},
                                          std::tuple{args->outputs, args->num_outputs, "output "}}) {
    for (size_t i = 0; i < count; ++i) {
      const std::string what = kind + std::to_string(i);
      if (list[i] == nullptr) return Status::invalid_argument(what + " is NULL");
      if (!device_matches(expected, list[i]->device)) {
        return Status::invalid_argument(what + " is on device type " + std::to_string(list[i]->device.device_type) +
                                        ", this backend runs on device type " + std::to_string(expected));
      }
    }
  }
  return Status::internal("execute: its arguments were refused for no reason found");
}

/// B::DelegateType when B declares one and keeps Backend's default execute, else void.
template <typename B, typename = void>
struct KnownDelegate {
  using type = void;
};
template <typename B>
struct KnownDelegate<B, std::void_t<typename B::DelegateType>> {
  static_assert(std::is_base_of_v<Delegate, typename B::DelegateType>, "DelegateType derives from sdk::Delegate");
  static_assert(std::is_final_v<typename B::DelegateType>, "DelegateType is a final class");
  // Overriding Backend::execute changes the type of &B::execute: then it is what runs.
  using type =
      std::conditional_t<std::is_same_v<decltype(&B::execute), Status (Backend::*)(Delegate&, const Arguments&)>,
                         typename B::DelegateType, void>;
};

template <typename B>
struct Adapter {
  using D = typename KnownDelegate<B>::type;
  static B* self(void* context) { return static_cast<B*>(context); }

  static bool is_available(void* context, const plugrt_host_services* host, plugrt_text_buffer* reason) noexcept {
    try {
      Availability answer = self(context)->is_available(Host(host));
      if (!answer.available) write_text(reason, answer.reason);
      return answer.available;
    } catch (const std::exception& e) {
      write_text(reason, e.what());
    } catch (...) {
      write_text(reason, "is_available threw an exception");
    }
    return false;
  }

  static plugrt_status init(void* context, const plugrt_host_services* host, const plugrt_init_args* args,
                            plugrt_delegate_handle* handle) noexcept {
    return guarded(Host(host), "init", [&]() -> Status {
      if (args == nullptr || args->struct_size < PLUGRT_INIT_ARGS_SIZE_1_0 || handle == nullptr) {
        return Status::invalid_argument("init: missing or too small plugrt_init_args");
      }
      if (args->blob == nullptr && args->blob_size != 0) {
        return Status::invalid_argument("init: blob is NULL but blob_size is " + std::to_string(args->blob_size));
      }
      const bool has_constants = args->struct_size >= PLUGRT_INIT_ARGS_SIZE_1_4 && args->num_constants > 0;
      if (has_constants && args->constants == nullptr) return Status::invalid_argument("init: constants is NULL");
      InitContext init_context{Host(host),
                               args->blob,
                               args->blob_size,
                               Options(args->compile_specs, args->num_compile_specs, "compile spec"),
                               Options(args->runtime_options, args->num_runtime_options, "runtime option"),
                               args->num_threads,
                               has_constants ? NamedConstants(args->constants, args->num_constants) : NamedConstants()};
      Expected<std::unique_ptr<Delegate>> delegate = self(context)->init(init_context);
      if (!delegate.is_ok()) return delegate.status();
      if (*delegate == nullptr) return Status::internal("init returned no delegate");
      if constexpr (!std::is_void_v<D>) {
        const Delegate& made = **delegate;  // (typeid of a named reference: no side effects)
        if (typeid(made) != typeid(D)) return Status::internal("init made a delegate other than its DelegateType");
      }
      auto box = std::make_unique<HandleBox>(HandleBox{self(context), Host(host), std::move(*delegate)});
      *handle = reinterpret_cast<plugrt_delegate_handle>(box.release());
      return Status::ok();
    });
  }

  static plugrt_status execute(plugrt_delegate_handle handle, const plugrt_execute_args* args) noexcept {
    if (handle == nullptr) return PLUGRT_STATUS_DELEGATE_INVALID_HANDLE;
    HandleBox* box = reinterpret_cast<HandleBox*>(handle);
    return guarded(box->host, "execute", [&]() -> Status {
      if (__builtin_expect(!arguments_usable(B::kDeviceType, args), 0)) return refuse_arguments(B::kDeviceType, args);
      // The backend object is exactly a B (BackendSlot<B>), and with a DelegateType the
      // delegate exactly a D (checked at init): the qualified calls skip the virtual
      // dispatch and let the execute that runs inline here.
      if constexpr (!std::is_void_v<D>) {
        return static_cast<D&>(*box->delegate).D::execute(Arguments(args));
      } else {
        return static_cast<B*>(box->backend)->B::execute(*box->delegate, Arguments(args));
      }
    });
  }

  static void destroy(plugrt_delegate_handle handle) noexcept {
    if (handle == nullptr) return;
    std::unique_ptr<HandleBox> box(reinterpret_cast<HandleBox*>(handle));
    try {
      box->backend->destroy(std::move(box->delegate));
    } catch (const std::exception& e) {
      box->host.error(std::string("destroy threw an exception: ") + e.what());
    } catch (...) {
      box->host.error("destroy threw an exception");
    }
  }

  static plugrt_status partition(void* context, const plugrt_host_services* host,
                                 plugrt_partition_args* args) noexcept {
    return guarded(Host(host), "partition", [&]() -> Status {
      if (args == nullptr || args->struct_size < PLUGRT_PARTITION_ARGS_SIZE_1_0) {
        return Status::invalid_argument("partition: missing or too small plugrt_partition_args");
      }
      if (args->num_nodes > 0 && args->node_taken == nullptr) {
        return Status::invalid_argument("partition: node_taken is NULL");
      }
      return self(context)->partition(PartitionRequest{
          Host(host), args->graph, args->graph_size,
          Options(args->compile_specs, args->num_compile_specs, "compile spec"), args->node_taken, args->num_nodes});
    });
  }

  static plugrt_status preprocess(void* context, const plugrt_host_services* host,
                                  plugrt_preprocess_args* args) noexcept {
    return guarded(Host(host), "preprocess", [&]() -> Status {
      if (args == nullptr || args->struct_size < PLUGRT_PREPROCESS_ARGS_SIZE_1_0) {
        return Status::invalid_argument("preprocess: missing or too small plugrt_preprocess_args");
      }
      // A 1.4 host offers flags and takes the blob's; an older one does neither.
      const bool has_flags = args->struct_size >= PLUGRT_PREPROCESS_ARGS_SIZE_1_4;
      PreprocessRequest request{Host(host), args->graph, args->graph_size,
                                Options(args->compile_specs, args->num_compile_specs, "compile spec")};
      plugrt_blob_flags blob_flags = 0;
      request.constants_by_name_offered = has_flags && (args->flags & PLUGRT_PREPROCESS_CONSTANTS_BY_NAME) != 0;
      request.blob_flags_ = &blob_flags;
      Expected<std::vector<uint8_t>> blob = self(context)->preprocess(request);
      if (!blob.is_ok()) return blob.status();
      PLUGRT_SDK_ASSIGN_OR_RETURN(HostBuffer buffer,
                                  HostBuffer::allocate(Host(host), blob->size() == 0 ? 1 : blob->size()));
      if (!blob->empty()) std::memcpy(buffer.data(), blob->data(), blob->size());
      args->blob_size = blob->size();
      args->blob = buffer.release();
      if (has_flags) args->blob_flags = blob_flags;
      return Status::ok();
    });
  }
};

/// One backend class's object and tables, made on first use (one per load of the plugin).
template <typename B>
struct BackendSlot {
  B instance;
  plugrt_aot_backend aot{PLUGRT_AOT_BACKEND_SIZE, Adapter<B>::partition, Adapter<B>::preprocess};
  plugrt_backend table{PLUGRT_BACKEND_SIZE,
                       plugrt_string{B::kName, length(B::kName)},
                       B::kCapabilities,
                       &instance,
                       Adapter<B>::is_available,
                       Adapter<B>::init,
                       Adapter<B>::execute,
                       Adapter<B>::destroy,
                       B::kHasAot&& PLUGRT_SDK_HAS_AOT ? &aot : nullptr,
                       plugrt_string{B::kDescription, length(B::kDescription)}};
};

template <typename B>
const plugrt_backend* backend_table() {
  static_assert(std::is_base_of_v<Backend, B>, "a backend class derives from plugrt::sdk::Backend");
  static BackendSlot<B> slot;
  return &slot.table;
}

template <typename... Bs>
plugrt_status entry(const char* plugin_name, const char* version, const plugrt_host_services* host,
                    const plugrt_plugin_descriptor** descriptor) noexcept {
  return guarded(Host(host), "the plugin entry", [&]() -> Status {
    if (descriptor == nullptr) return Status::invalid_argument("descriptor is NULL");
    static const plugrt_backend* const backends[] = {backend_table<Bs>()...};
    static const plugrt_plugin_descriptor plugin = {PLUGRT_PLUGIN_DESCRIPTOR_SIZE,
                                                    PLUGRT_ABI_MAJOR,
                                                    PLUGRT_ABI_MINOR,
                                                    plugrt_string{plugin_name, length(plugin_name)},
                                                    plugrt_string{version, length(version)},
                                                    backends,
                                                    sizeof...(Bs)};
    *descriptor = &plugin;
    return Status::ok();
  });
}

}  // namespace internal
}  // namespace plugrt::sdk

#ifdef PLUGRT_STATIC_PLUGIN
#define PLUGRT_SDK_METADATA_(id, version, ...)
#else
#define PLUGRT_SDK_METADATA_(id, version, ...)                                                 \
  namespace {                                                                                  \
  constexpr plugrt_plugin_metadata plugrt_sdk_metadata_##id =                                  \
      ::plugrt::sdk::internal::make_metadata<__VA_ARGS__>(#id, version);                       \
  }                                                                                            \
  extern "C" PLUGRT_EXPORT __attribute__((section(PLUGRT_METADATA_SECTION), used, aligned(8))) \
  const plugrt_plugin_metadata plugrt_metadata = plugrt_sdk_metadata_##id;
#endif

/// Exports a plugin called `id` (an identifier of [a-z0-9_], also its name), version
/// `version` (a string literal of at most 31 characters), providing one backend per
/// class listed. Use it once, at global scope, in one source file of the plugin. With
/// PLUGRT_STATIC_PLUGIN defined, it defines `plugrt_static_entry_<id>` for an application
/// to register instead, and no metadata.
#define PLUGRT_SDK_EXPORT_PLUGIN(id, version, ...)                                                                     \
  static_assert(::plugrt::sdk::internal::is_valid_name(#id), "the plugin id must be 1 to 63 characters of [a-z0-9_]"); \
  static_assert(sizeof(version) <= PLUGRT_METADATA_VERSION_CAPACITY && sizeof(version) > 1,                            \
                "the version must be 1 to 31 characters");                                                             \
  static_assert(::plugrt::sdk::internal::names_are_valid<__VA_ARGS__>(),                                               \
                "each backend's kName must be 1 to 63 characters of [a-z0-9_]");                                       \
  static_assert(::plugrt::sdk::internal::names_are_distinct<__VA_ARGS__>(), "two backend classes share a kName");      \
  static_assert(::plugrt::sdk::internal::names_fit<__VA_ARGS__>(),                                                     \
                "the backend names take more than 512 bytes of metadata");                                             \
  PLUGRT_SDK_METADATA_(id, version, __VA_ARGS__)                                                                       \
  PLUGRT_PLUGIN_ENTRY(id) { return ::plugrt::sdk::internal::entry<__VA_ARGS__>(#id, version, host, descriptor); }

#endif  // PLUGRT_SDK_BACKEND_H_
