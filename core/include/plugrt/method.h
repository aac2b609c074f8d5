// SPDX-License-Identifier: Apache-2.0
// Method: one runnable instance of a program's method, with its own planned arena and
// its own delegate handles. Instances of one program may run in parallel threads.
//
// Loading resolves each delegate's backend through the registry (which loads its
// plugin on first use when a plugin loader is attached), asks is_available, and calls
// init. When the backend is missing, not allowed, unavailable, or its init fails (an
// incompatible blob, a device error, a crash), that delegate runs on its portable
// fallback instead (without one, the load fails with the backend's message); the
// LoadReport says what runs where and why. Executing allocates nothing and looks
// nothing up: each instruction is one call through the backend's table, with a
// profiling event around it.
#ifndef PLUGRT_METHOD_H_
#define PLUGRT_METHOD_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <dlpack/dlpack.h>

#include "plugrt/backend.h"
#include "plugrt/program.h"
#include "plugrt/registry.h"
#include "plugrt/span.h"
#include "plugrt/status.h"
#include "plugrt/verification.h"

namespace plugrt {

class MethodPlacer;
class BackendOptions;

/// Whose placement a method runs.
enum class PlacementPolicy {
  /// The program's: each delegate on the backend it was compiled for, or its fallback.
  kAsCompiled,
  /// Placed again at load, over the backends present (MethodOptions::placer does it).
  kAuto,
};

/// "as-compiled" or "auto".
const char* to_string(PlacementPolicy policy);

struct MethodOptions {
  /// The method's thread budget: the most threads its backends keep busy at once, the
  /// calling thread included (see plugrt/thread_budget.h). 0: the cores this process may
  /// run on.
  size_t num_threads = 0;
  /// Each call runs on the whole budget or on one thread, whichever the method's recent
  /// calls ran faster on (other work on the cores, another method of the process running
  /// at the same time, a program too small to share); the count not chosen is tried
  /// again now and then. False runs every call on the whole budget.
  bool adapt_threads = true;
  /// Backends this method may use; empty allows every one. "portable" is always allowed.
  std::vector<std::string> allowed_backends;
  /// Passed to every backend's init (key and bytes). Borrowed during load().
  Span<const plugrt_option> runtime_options;
  /// Passed to one backend's init each, after runtime_options: those that name it
  /// (`--backend-option NAME.KEY=VALUE`). Borrowed during load(); null: none.
  const BackendOptions* backend_options = nullptr;
  /// kAuto needs `placer`. When placing again fails, the method loads as compiled and the
  /// report's placement_note says why.
  PlacementPolicy placement = PlacementPolicy::kAsCompiled;
  /// Borrowed during load(). The core has no placer of its own: plugrt::placement's
  /// LoadPlacer (plugrt/placement/load_placer.h) is one.
  MethodPlacer* placer = nullptr;
  /// Runs each delegate not on portable once, at load, on seeded inputs against its
  /// portable fallback, and keeps it on the fallback when they disagree
  /// (plugrt/verification.h). Partitions whose dimensions vary are not verified.
  bool verify = false;
  /// Borrowed during load(): where verdicts are kept, so that each partition is checked
  /// once per blob, backend build and device. Null: checked at every load.
  VerificationStore* verdicts = nullptr;
};

/// Where one delegate of a method runs, and why.
struct DelegatePlacement {
  std::string delegate;           ///< the delegate's label in the program
  std::string requested_backend;  ///< what the program asks for
  std::string backend;            ///< what runs it
  std::string origin;             ///< "built-in" or the plugin file
  bool fell_back = false;
  std::string reason;  ///< why it fell back; empty otherwise
  uint64_t blob_size = 0;
  /// Where its blob came from: "program" (stored in the program), "cache" (the compiled-
  /// blob cache) or "lowered" (its backend's preprocess ran during this load).
  std::string blob_origin = "program";
  /// With placement auto: why its nodes run on this backend.
  std::string placement_reason;
  /// Its backend runs in a separate process (a load option). When that process crashes
  /// or times out during execute(), the call is re-run on the portable fallback, which
  /// runs the delegate from then on: `fell_back` turns true, `reason` says what happened.
  bool isolated = false;
  /// With MethodOptions::verify: what the check found ("agreed: max difference ...",
  /// "agreed (kept verdict): ...", "not verified: ..."); empty when not asked. A delegate
  /// that disagreed runs on its fallback, with `reason` saying so.
  std::string verification;
};

struct LoadReport {
  std::string method;
  std::vector<DelegatePlacement> delegates;
  /// The thread budget every delegate was given.
  size_t num_threads = 0;
  /// The placement that ran: "as-compiled", or "auto" when the method was placed again.
  std::string placement = "as-compiled";
  /// Why placement auto was asked for but the program's placement runs; empty otherwise.
  std::string placement_note;
  /// What placement auto measured on this load to choose between backends ("measured 4
  /// figures in 3.2 ms: Gemm on onednn 9.8 us, ..."); empty when it measured nothing.
  std::string placement_measured;
  /// One line per delegate: "xnnpack:0 -> portable (fallback: backend 'xnnpack' is not installed)".
  std::string to_string() const;
};

/// A program placed again at load time, and how each of its delegates got its blob.
struct PlacedProgram {
  Program program;
  /// Per delegate of the placed method, in order: DelegatePlacement::blob_origin and
  /// placement_reason.
  std::vector<std::string> blob_origins;
  std::vector<std::string> placement_reasons;
  /// The placer's record of where it came from (a cache entry), for rejected().
  std::string source;
  /// When set, a check that may still be running (a cache entry's content hash): the
  /// placed method is loaded meanwhile, but used only when this returns ok.
  std::function<Status()> check;
  /// LoadReport::placement_measured.
  std::string measured;
};

/// Places a program's method again, on the device, over the backends `registry` has.
class MethodPlacer {
 public:
  virtual ~MethodPlacer() = default;
  /// Errors say why the method cannot be placed again (Method::load then runs it as
  /// compiled, and says so).
  virtual Result<PlacedProgram> place(const Program& program, std::string_view method, Registry& registry,
                                      const MethodOptions& options) = 0;
  /// The placed program did not load or failed its check (`why`). After a failed check
  /// Method::load asks place() once more; otherwise it loads the method as compiled.
  virtual void rejected(const PlacedProgram& placed, const Status& why) = 0;
};

/// How one call may be stopped early.
struct ExecuteOptions {
  /// The call's time limit; 0: none. Past it the call stops with kCancelled: at the next
  /// delegate, or within a delegate whose backend checks (ABI 1.8; the portable backend
  /// checks at every iteration of Loop and Scan).
  std::chrono::nanoseconds timeout{0};
  /// Set to nonzero (from any thread) to stop the call the same way; null: none. Must
  /// outlive the call.
  const std::atomic<uint32_t>* cancel = nullptr;
};

class Method {
 public:
  /// Instantiates `name` of `program`, placed as options.placement says. Errors:
  /// kNotFound (no such method); kInvalidArgument (placement auto without a placer); a delegate
  /// that can neither run on its backend nor fall back (no fallback blob, or the
  /// fallback's init fails) gives that error, naming the delegate and the backend.
  [[nodiscard]] static Result<Method> load(const Program& program, std::string_view name, Registry& registry,
                                           const MethodOptions& options = {});

  Method(Method&&) noexcept;
  Method& operator=(Method&&) noexcept;
  Method(const Method&) = delete;
  Method& operator=(const Method&) = delete;
  ~Method();

  const std::string& name() const;
  const LoadReport& report() const;

  size_t num_inputs() const;
  size_t num_outputs() const;
  const TensorSpec& input_spec(size_t index) const;
  const TensorSpec& output_spec(size_t index) const;
  /// A view of input `index` in this instance's arena: write its bytes before execute().
  /// Valid while the Method lives.
  const DLTensor& input(size_t index) const;
  /// A view of output `index`, valid after execute() until the next execute().
  const DLTensor& output(size_t index) const;
  /// Copies `value` into input `index`. Errors: kInvalidArgument naming the input and
  /// what differs (device, dtype, shape, layout).
  Status set_input(size_t index, const DLTensor& value);

  /// Runs every instruction in order. Allocates nothing on success. Errors: the failing
  /// delegate's code, with its label, its backend and the backend's message. After an
  /// error the outputs are unspecified; the method stays usable.
  /// An isolated backend that crashes or times out (kDelegateCrashed) is replaced, within
  /// the call, by the delegate's portable fallback (the built-in portable backend), which
  /// runs it from then on; the report() says so. Without a fallback the call fails with
  /// kDelegateCrashed, and so does every later call of that delegate.
  /// One Method runs one call at a time (its arena holds the call's values): a call made
  /// while another thread's call on the same Method runs fails at once with
  /// kInvalidState, and the running call is not disturbed. Load one Method per thread;
  /// methods of one Program share its weights.
  Status execute();
  /// execute() that stops early, with kCancelled, when `options` say so. The method stays
  /// usable; the outputs of a stopped call are unspecified.
  Status execute(const ExecuteOptions& options);

  /// The threads the last execute() ran on: the budget, or fewer while fewer run this
  /// method faster or other methods of the process hold cores (MethodOptions::adapt_threads).
  size_t last_call_threads() const;
  /// Whether the method has compared its two thread counts once (always true without
  /// adapt_threads). The calls before that include some on one thread that measure it;
  /// later comparisons are rare and short. A benchmark warms up until then.
  bool threads_settled() const;

 private:
  struct State;
  explicit Method(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace plugrt

#endif  // PLUGRT_METHOD_H_
