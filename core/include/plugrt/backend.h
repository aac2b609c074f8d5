// SPDX-License-Identifier: Apache-2.0
// RegisteredBackend and DelegateHandle: the host's C++ view of one backend table and of one
// delegate instance. Both keep the plugin that provides them loaded while they live.
#ifndef PLUGRT_BACKEND_H_
#define PLUGRT_BACKEND_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugrt/common/availability.h"
#include "plugrt/plugrt_abi.h"
#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt {

namespace internal {
struct PluginRecord;
struct BackendTable;
}  // namespace internal

using PluginId = uint64_t;

/// Where a plugin came from and what it says about itself.
struct PluginInfo {
  PluginId id = 0;
  std::string name;
  std::string version;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  /// "built-in", or the path of the plugin file.
  std::string origin;
  /// Its backends run in a separate process (a load option; plugrt/isolation/).
  bool isolated = false;
};

/// The answer of a backend's is_available: the type the SDK names sdk::Availability
/// (plugrt/common/), so that it means the same to a backend author and to the host.
using Availability = common::Availability;

/// The init failures of one backend since its plugin was registered, for reports
/// (`plugrt doctor`): how many, and the last one (its code and message).
struct InitFailures {
  uint64_t count = 0;
  Status last;  // ok when count is 0
};

/// What `init` gets. Pointers are borrowed: `blob` must stay valid and unmoved until the
/// handle is destroyed; the option arrays only during the call.
struct InitOptions {
  const void* blob = nullptr;
  size_t blob_size = 0;
  Span<const plugrt_option> compile_specs;
  Span<const plugrt_option> runtime_options;
  size_t num_threads = 0;  // the thread budget; 0: the backend's default
  /// The graph's constants by name, for a blob that names them (ABI 1.4); empty otherwise.
  Span<const plugrt_named_constant> constants;
};

/// A blob preprocess wrote, and what the backend said of it.
struct PreprocessedBlob {
  std::vector<uint8_t> bytes;
  /// PLUGRT_BLOB_NAMES_CONSTANTS: init needs the graph's constants by name.
  bool names_constants = false;
};

class DelegateHandle;

/// One backend of a registered plugin. Cheap to copy; keeps the plugin loaded.
class RegisteredBackend {
 public:
  const std::string& name() const;
  const std::string& description() const;
  const PluginInfo& plugin() const;
  plugrt_backend_capabilities capabilities() const;
  bool can_execute_concurrently() const;
  /// Whether it reads graphs whose dimensions vary (PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS);
  /// partition() and preprocess() give it static graphs only when not.
  bool takes_varying_dimensions() const;
  bool has_aot() const;

  /// Asks the backend whether it can run here, with its reason when not.
  Availability is_available() const;

  /// Ahead of time: which nodes of a graph IR buffer with `num_nodes` nodes this backend
  /// takes (one flag per node). Errors: kNotSupported when it has no ahead-of-time
  /// entries; otherwise the backend's code and message.
  Result<std::vector<bool>> partition(Span<const uint8_t> graph, size_t num_nodes,
                                      Span<const plugrt_option> compile_specs = {}) const;
  /// Ahead of time: the blob this backend's init will read for a graph IR buffer, holding
  /// everything it needs. Errors as for partition().
  Result<std::vector<uint8_t>> preprocess(Span<const uint8_t> graph,
                                          Span<const plugrt_option> compile_specs = {}) const;
  /// The same with PLUGRT_PREPROCESS_* `flags` offered. With
  /// PLUGRT_PREPROCESS_CONSTANTS_BY_NAME the caller promises to keep `graph` and pass its
  /// constants to init (graph_constants()); check first that the graph can lend them.
  /// Errors as for partition(), and kPluginInvalid when the backend says its blob names
  /// constants that were not offered.
  Result<PreprocessedBlob> preprocess(Span<const uint8_t> graph, Span<const plugrt_option> compile_specs,
                                      plugrt_preprocess_flags flags) const;

  /// Creates a delegate instance. Errors carry the backend's code and the message it
  /// reported, prefixed with "backend '<name>' (<origin>): init failed: ". Each failure
  /// is also counted for the registry's listings (BackendInfo::init_failures).
  Result<DelegateHandle> init(const InitOptions& options) const;

 private:
  friend class Registry;
  friend class DelegateHandle;
  RegisteredBackend(std::shared_ptr<const internal::PluginRecord> plugin, const internal::BackendTable* table)
      : plugin_(std::move(plugin)), table_(table) {}
  Status failure(std::string_view call, plugrt_status status) const;

  std::shared_ptr<const internal::PluginRecord> plugin_;
  const internal::BackendTable* table_;
};

/// How one call may be asked to stop early (ABI 1.8: plugrt_execute_args.stop_flag and
/// deadline_ns): a flag another thread may set, and a CLOCK_MONOTONIC deadline in
/// nanoseconds (0: none).
struct CallStop {
  const uint32_t* flag = nullptr;
  int64_t deadline_ns = 0;
  /// Whether the flag is set or the deadline has passed.
  bool requested() const;
  /// CLOCK_MONOTONIC now, in nanoseconds.
  static int64_t now_ns();
};

/// A live delegate instance. Move-only; destroys the plugin's handle when it goes away.
class DelegateHandle {
 public:
  DelegateHandle(DelegateHandle&& other) noexcept;
  DelegateHandle& operator=(DelegateHandle&& other) noexcept;
  DelegateHandle(const DelegateHandle&) = delete;
  DelegateHandle& operator=(const DelegateHandle&) = delete;
  ~DelegateHandle();

  /// Runs the delegate. Allocates nothing on success. Calls on one handle are
  /// serialised unless the backend declares PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE.
  /// `flags` are PLUGRT_EXECUTE_* bits (PLUGRT_EXECUTE_PARK_WORKERS ends the backend's turn).
  /// `symbol_values`: this call's value of each symbol of the handle's graph (ABI 1.6),
  /// empty for a static one. `num_threads`: the most threads this call may keep busy
  /// (ABI 1.7), at most the handle's budget; 0 for the whole budget. `stop`: how the
  /// call may be asked to stop early (ABI 1.8).
  Status execute(Span<const DLTensor* const> inputs, Span<const DLTensor* const> outputs,
                 plugrt_execute_flags flags = 0, Span<const int64_t> symbol_values = {}, size_t num_threads = 0,
                 CallStop stop = {});

  const RegisteredBackend& backend() const { return backend_; }

 private:
  friend class RegisteredBackend;
  DelegateHandle(RegisteredBackend backend, plugrt_delegate_handle handle);
  void reset();

  RegisteredBackend backend_;
  plugrt_delegate_handle handle_ = nullptr;
  std::unique_ptr<std::mutex> serialize_;  // null when the backend allows concurrency
};

}  // namespace plugrt

#endif  // PLUGRT_BACKEND_H_
