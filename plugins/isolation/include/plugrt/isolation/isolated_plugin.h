// SPDX-License-Identifier: Apache-2.0
// Isolation: running a plugin's backends in a plugrt-backend-host process instead of the
// application's (DESIGN.md, "Isolation"). The host registers proxy backend tables of the
// ordinary ABI type, so the executor calls an isolated backend as it calls any other;
// each delegate handle gets its own process, its blob crosses once at init (a sealed
// memfd) and its tensors through one shared memory region mapped once per handle.
//
// When the process crashes, is killed or misses its time limit, the call returns
// PLUGRT_STATUS_DELEGATE_CRASHED with a message naming the signal or the limit, the
// process is reaped, and the handle stays dead: every later call fails the same way at
// once (no restart). Method re-runs such a call on the partition's portable fallback and
// keeps it there (core/src/method.cc).
#ifndef PLUGRT_ISOLATION_ISOLATED_PLUGIN_H_
#define PLUGRT_ISOLATION_ISOLATED_PLUGIN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plugrt/plugrt_abi.h"
#include "plugrt/registry.h"
#include "plugrt/status.h"

namespace plugrt::isolation {

/// How isolated backends are run: a load option of the plugin loader.
struct IsolationOptions {
  /// Path of the plugrt-backend-host executable (the plugin loader fills in
  /// plugins::default_backend_host() when it is empty).
  std::string backend_host;
  /// Time limit of one execute call, in milliseconds; 0: none. By default a minute: a
  /// call that long is a hang for an on-device model, and an isolated backend that hangs
  /// must not hang the host.
  int execute_timeout_ms = 60000;
  /// Time limit of starting the process and running the plugin's entry, is_available
  /// and init; 0: none.
  int init_timeout_ms = 30000;
  /// The plugin loader's trust options, passed on: the backend host checks the file
  /// again, as the loader does, before loading it.
  bool allow_untrusted_files = false;
  std::string allow_list;
};

/// Crashes, kills and time-outs of one backend's processes, for reports.
struct CrashRecord {
  uint64_t count = 0;
  std::string last;  // the last one's message
};

/// An isolated plugin as the host holds it: what its backend host said it provides and
/// the crashes seen since. Kept alive by the registry record and every handle.
class IsolatedPlugin;

struct IsolatedRegistration {
  PluginId id = 0;
  std::shared_ptr<IsolatedPlugin> plugin;
};

/// Starts a backend host for the plugin file `path`, asks it what the plugin provides
/// (name, version, backends and their is_available answers) and registers proxy tables
/// for them into `registry` with `rank`. Errors name the path: the backend host is
/// missing, refused the file (its own trust and ABI checks), crashed or timed out.
Result<IsolatedRegistration> register_isolated_plugin(Registry& registry, const std::string& path, int64_t rank,
                                                      const IsolationOptions& options);

/// The proxy table of `plugin`'s backend `name` (the one the registry holds), or null.
/// For callers that check a backend through the raw ABI, such as the contract kit.
const plugrt_backend* proxy_table(const IsolatedPlugin& plugin, std::string_view name);

/// Each backend of `plugin` whose processes crashed at least once, with its record.
std::vector<std::pair<std::string, CrashRecord>> crash_records(const IsolatedPlugin& plugin);

/// RegisteredBackend host processes of this process still running or not yet reaped, for tests.
size_t live_backend_hosts();

}  // namespace plugrt::isolation

#endif  // PLUGRT_ISOLATION_ISOLATED_PLUGIN_H_
