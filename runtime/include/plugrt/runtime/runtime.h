// SPDX-License-Identifier: Apache-2.0
// The runtime an application (or the `plugrt` command) builds once: the built-in
// backends, the plugins of the search path (read, not yet loaded: a plugin loads when a
// backend of its is first needed), trust, isolation, placement at load and the blob
// cache. It opens models as sessions: a .prt program, or an ONNX model compiled in
// memory by the same compiler as `plugrt compile`.
#ifndef PLUGRT_RUNTIME_RUNTIME_H_
#define PLUGRT_RUNTIME_RUNTIME_H_

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugrt/method.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "plugrt/registry.h"
#include "plugrt/runtime/runtime_options.h"
#include "plugrt/status.h"

namespace plugrt {

/// Whether dimension `axis` of `spec` varies from call to call (its upper bound is
/// spec.shape[axis]).
bool dimension_varies(const TensorSpec& spec, size_t axis);

/// How one model opens, beyond the runtime's settings.
struct SessionOptions {
  /// The program's method to run.
  std::string method = "forward";
  /// The thread budget of this session; 0: the runtime's (RuntimeOptions::load.threads).
  size_t threads = 0;
  /// Each run's time limit; 0: none. Past it the run stops with kCancelled
  /// (Method::execute(ExecuteOptions)).
  std::chrono::milliseconds timeout{0};
  /// ONNX models only: static shapes for inputs whose dimensions the model leaves open,
  /// by input name (`plugrt compile --input-shape`).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// ONNX models only: bounds of symbolic dimensions that stay symbolic, by name
  /// (`plugrt compile --dim`): the session takes any size within them at each run.
  struct DimRange {
    int64_t min = 0;
    int64_t max = 0;
  };
  std::map<std::string, DimRange> dims;

  /// Adds "NAME=D0,D1,..." to input_shapes, or "NAME=MIN..MAX" to dims; false when the
  /// text is not of that form (the flags of `plugrt compile` use the same forms).
  bool add_input_shape(const std::string& text);
  bool add_dim(const std::string& text);
};

/// One method of one model, loaded and ready to run. Runs one call at a time (a call
/// from a second thread while one runs fails with kInvalidState); open one session per
/// thread that runs the model. Movable.
class Session {
 public:
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  const Program& program() const { return *program_; }
  Method& method() { return method_; }
  const Method& method() const { return method_; }
  /// Where each part runs and why.
  const LoadReport& report() const { return method_.report(); }

  /// The inputs and outputs: names, dtypes, shapes (upper bounds where they vary).
  size_t num_inputs() const { return method_.num_inputs(); }
  size_t num_outputs() const { return method_.num_outputs(); }
  const TensorSpec& input_spec(size_t index) const { return method_.input_spec(index); }
  const TensorSpec& output_spec(size_t index) const { return method_.output_spec(index); }

  /// Copies `inputs` (one per input, in order) in and runs. Errors name the input or
  /// the part that failed; kInvalidState when another thread's run on this session is
  /// in progress (that run is not disturbed).
  Status run(Span<const DLTensor* const> inputs);
  /// Stops the run in progress on another thread, if any: it returns kCancelled. A run
  /// started later is not affected. Thread-safe.
  void cancel();

  /// Output `index` of the last run, valid until the next run.
  const DLTensor& output(size_t index) const { return method_.output(index); }
  /// Copies output `index` of the last run into `destination` (the caller's: on the CPU,
  /// compact, of its dtype and shape). Errors name the output and what differs.
  Status copy_output(size_t index, const DLTensor& destination) const;

 private:
  friend class Runtime;
  Session(std::unique_ptr<Program> program, Method method, std::chrono::milliseconds timeout);
  Status run_exclusively(Span<const DLTensor* const> inputs);
  std::unique_ptr<Program> program_;  // declared first: it outlives the method
  Method method_;
  std::chrono::milliseconds timeout_;
  // Heap-held so that a Session can move.
  std::unique_ptr<std::atomic<bool>> running_ = std::make_unique<std::atomic<bool>>(false);
  std::unique_ptr<std::atomic<uint32_t>> cancel_ = std::make_unique<std::atomic<uint32_t>>(0);
};

class Runtime {
 public:
  /// Builds the registry, reads every plugin file's metadata on the search path (no
  /// plugin code runs). Errors: an allow-list that cannot be read or is malformed.
  static Result<std::unique_ptr<Runtime>> create(const RuntimeOptions& options);
  /// create(RuntimeOptions::from_environment()).
  static Result<std::unique_ptr<Runtime>> from_environment();

  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime();

  const RuntimeOptions& options() const { return options_; }
  Registry& registry() { return registry_; }
  plugins::PluginLoader& loader() { return loader_; }
  /// Loads every accepted plugin, so that all their backends are registered.
  void load_all();

  /// Opens `path`: a .prt program, or an ONNX model (by its .onnx suffix) compiled for
  /// the backends here, with the cost profile of this machine when there is one. Errors
  /// name the file. Thread-safe: sessions may be opened from several threads.
  Result<Session> open(const std::string& path, const SessionOptions& options = {});
  /// Opens a program already in memory.
  Result<Session> open(Program program, const SessionOptions& options = {});

  /// Loads `method_name` of `program` as `settings` say. With placement auto the placer
  /// considers every backend of the plugins found (and so loads them).
  Result<Method> load_method(const Program& program, const std::string& method_name, const LoadSettings& settings);

 private:
  explicit Runtime(const RuntimeOptions& options);
  Result<Program> compile_onnx(const std::string& path, const SessionOptions& options);

  RuntimeOptions options_;
  Registry registry_;
  plugins::PluginLoader loader_;
  std::mutex load_mutex_;  // loading and compiling change the registry's plugins
};

}  // namespace plugrt

#endif  // PLUGRT_RUNTIME_RUNTIME_H_
