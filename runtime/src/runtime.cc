// SPDX-License-Identifier: Apache-2.0
#include "plugrt/runtime/runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "compiler.h"
#include "plugrt/backend_options.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/common/dim_expr.h"
#include "plugrt/dtype.h"
#include "plugrt/placement/cost_profile.h"
#include "plugrt/placement/load_placer.h"
#include "plugrt/plugins/plugin_trust.h"

namespace plugrt {
namespace {

std::shared_ptr<HostEnvironment> host_environment(bool log) {
  auto environment = std::make_shared<HostEnvironment>();
  if (!log) environment->set_log_sink(nullptr);
  return environment;
}

plugins::SearchPathOptions search_options(const PluginSearchOptions& options) {
  plugins::SearchPathOptions search =
      options.search ? plugins::SearchPathOptions() : plugins::SearchPathOptions::explicit_files_only();
  if (options.search) search.application_directories = options.plugin_dirs;
  search.allow_list = options.allow_list;
  search.allow_untrusted_files = options.allow_untrusted;
  search.isolated_backends = options.isolate;
  search.isolation.execute_timeout_ms = options.execute_timeout_ms;
  search.isolation.init_timeout_ms = options.init_timeout_ms;
  return search;
}

// The loader would refuse every plugin over a list it cannot read; the runtime says so
// up front instead.
Status check_allow_list(const std::string& path) {
  if (path.empty()) return Status::ok();
  Result<plugins::AllowList> list = plugins::AllowList::read(path);
  if (!list.is_ok()) return list.status().with_context("the plugin allow-list");
  return Status::ok();
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// An import that failed for want of an input's shape says how a session gives one.
Status with_shape_hint(const Status& status, const compiler::InputShapeProblem& problem) {
  if (problem.kind != compiler::InputShapeProblem::Kind::kShapeNeeded) return status;
  std::string needed;
  for (const compiler::NeededShape& input : problem.needed)
    needed += (needed.empty() ? "'" : ", '") + input.input + "'";
  return Status(status.code(), status.message() + "; open it with input shapes for " + needed +
                                   " (NAME=D0,D1,...), or bounds for the dimensions that vary (NAME=MIN..MAX)");
}

}  // namespace

bool SessionOptions::add_input_shape(const std::string& text) {
  const size_t equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0) return false;
  std::vector<int64_t> shape;
  std::stringstream list(text.substr(equals + 1));
  for (std::string dim; std::getline(list, dim, ',');) {
    char* end = nullptr;
    const long long value = std::strtoll(dim.c_str(), &end, 10);
    if (dim.empty() || *end != '\0' || value < 0) return false;
    shape.push_back(value);
  }
  input_shapes[text.substr(0, equals)] = std::move(shape);
  return true;
}

bool SessionOptions::add_dim(const std::string& text) {
  const size_t equals = text.rfind('=');
  const size_t dots = text.find("..", equals == std::string::npos ? 0 : equals);
  if (equals == std::string::npos || equals == 0 || dots == std::string::npos) return false;
  const std::string min = text.substr(equals + 1, dots - equals - 1), max = text.substr(dots + 2);
  DimRange range;
  char* end = nullptr;
  range.min = std::strtoll(min.c_str(), &end, 10);
  if (min.empty() || *end != '\0') return false;
  range.max = std::strtoll(max.c_str(), &end, 10);
  if (max.empty() || *end != '\0') return false;
  dims[text.substr(0, equals)] = range;
  return true;
}

Session::Session(std::unique_ptr<Program> program, Method method, std::chrono::milliseconds timeout)
    : program_(std::move(program)), method_(std::move(method)), timeout_(timeout) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

Status Session::run(Span<const DLTensor* const> inputs) {
  // The inputs are copied into the arena the running call reads: one run at a time.
  if (running_->exchange(true, std::memory_order_acquire)) {
    return Status(Error::kInvalidState,
                  "'" + method_.name() + "' is running a call on another thread; open one session per thread");
  }
  cancel_->store(0);
  Status status = run_exclusively(inputs);
  running_->store(false, std::memory_order_release);
  return status;
}

void Session::cancel() {
  if (running_->load(std::memory_order_acquire)) cancel_->store(1);
}

Status Session::run_exclusively(Span<const DLTensor* const> inputs) {
  if (inputs.size() != method_.num_inputs()) {
    return Status(Error::kInvalidArgument, "'" + method_.name() + "' takes " + std::to_string(method_.num_inputs()) +
                                               " inputs; " + std::to_string(inputs.size()) + " were given");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) {
      return Status(Error::kInvalidArgument, "input " + std::to_string(i) + " ('" + input_spec(i).name + "') is null");
    }
    Status status = method_.set_input(i, *inputs[i]);
    if (!status.is_ok()) return status;
  }
  ExecuteOptions options;
  options.timeout = timeout_;
  options.cancel = cancel_.get();
  return method_.execute(options);
}

Status Session::copy_output(size_t index, const DLTensor& destination) const {
  const DLTensor& source = output(index);
  const std::string what = "output " + std::to_string(index) + " ('" + output_spec(index).name + "')";
  if (destination.device.device_type != kDLCPU || !is_contiguous(destination)) {
    return Status(Error::kInvalidArgument, what + ": the destination must be a compact tensor on the CPU");
  }
  if (destination.dtype.code != source.dtype.code || destination.dtype.bits != source.dtype.bits ||
      destination.dtype.lanes != source.dtype.lanes) {
    return Status(Error::kInvalidArgument, what + ": the destination's dtype differs from the output's");
  }
  const bool same_shape =
      destination.ndim == source.ndim && std::equal(source.shape, source.shape + source.ndim, destination.shape);
  if (!same_shape) return Status(Error::kInvalidArgument, what + ": the destination's shape differs from the output's");
  size_t bytes = (static_cast<size_t>(source.dtype.bits) * source.dtype.lanes + 7) / 8;
  for (int axis = 0; axis < source.ndim; ++axis) bytes *= static_cast<size_t>(source.shape[axis]);
  if (bytes > 0) {
    std::memcpy(static_cast<std::byte*>(destination.data) + destination.byte_offset,
                static_cast<const std::byte*>(source.data) + source.byte_offset, bytes);
  }
  return Status::ok();
}

bool dimension_varies(const TensorSpec& spec, size_t axis) {
  if (axis >= spec.dims.size() || spec.dims[axis].empty()) return false;
  const std::vector<int64_t>& words = spec.dims[axis];
  return !(words.size() == 1 && common::dim_word_op(words[0]) == common::DimOp::kConstant);
}

Runtime::Runtime(const RuntimeOptions& options)
    : options_(options), registry_(host_environment(options.log)), loader_(registry_, search_options(options.plugins)) {
  if (options.builtin_backends) {
    Status builtins = register_builtin_backends(registry_);
    (void)builtins;  // the built-in tables are checked by the tests; this cannot fail
  }
  loader_.discover();
}

Runtime::~Runtime() = default;

Result<std::unique_ptr<Runtime>> Runtime::create(const RuntimeOptions& options) {
  Status allow_list = check_allow_list(options.plugins.allow_list);
  if (!allow_list.is_ok()) return allow_list;
  if (options.load.placement != "auto" && options.load.placement != "as-compiled") {
    return Status(Error::kInvalidArgument,
                  "placement '" + options.load.placement + "' is neither 'auto' nor 'as-compiled'");
  }
  std::unique_ptr<Runtime> runtime(new Runtime(options));
  for (const std::string& file : options.plugins.plugin_files) {
    Result<PluginId> loaded = runtime->loader_.load(file);
    if (!loaded.is_ok()) return loaded.status();
  }
  return runtime;
}

Result<std::unique_ptr<Runtime>> Runtime::from_environment() {
  Result<RuntimeOptions> options = RuntimeOptions::from_environment();
  if (!options.is_ok()) return options.status();
  return create(*options);
}

void Runtime::load_all() {
  std::lock_guard<std::mutex> lock(load_mutex_);
  loader_.load_accepted();
}

Result<Session> Runtime::open(const std::string& path, const SessionOptions& options) {
  Result<Program> program = ends_with(path, ".onnx") ? compile_onnx(path, options) : Program::load(path);
  if (!program.is_ok()) return program.status();
  return open(std::move(*program), options);
}

Result<Session> Runtime::open(Program program, const SessionOptions& options) {
  LoadSettings settings = options_.load;
  if (options.threads != 0) settings.threads = options.threads;
  auto owned = std::make_unique<Program>(std::move(program));
  Result<Method> method = load_method(*owned, options.method, settings);
  if (!method.is_ok()) return method.status().with_context(owned->origin());
  return Session(std::move(owned), std::move(*method), options.timeout);
}

Result<Program> Runtime::compile_onnx(const std::string& path, const SessionOptions& options) {
  compiler::ImportOptions import_options;
  import_options.input_shapes = options.input_shapes;
  for (const auto& [name, range] : options.dims) import_options.dims[name] = compiler::DimBounds{range.min, range.max};
  compiler::InputShapeProblem shape_problem;
  import_options.input_shape_problem = &shape_problem;
  compiler::CompileOptions compile_options;
  compile_options.producer = "plugrt runtime";
  placement::CostProfile profile;
  const std::string directory = placement::CostProfile::default_directory();
  if (!directory.empty()) {
    const std::string cpu = placement::CostProfile::this_cpu();
    std::string warning;  // an unreadable profile: placed by the estimate, as without one
    profile = placement::CostProfile::load(placement::CostProfile::file_for(directory, cpu), cpu, &warning);
    compile_options.profile = &profile;
  }
  Result<compiler::CompiledModel> compiled = [&]() -> Result<compiler::CompiledModel> {
    std::lock_guard<std::mutex> lock(load_mutex_);
    // The compiler lists backends by what the registry holds: register every plugin's.
    loader_.load_accepted();
    return compiler::compile_onnx_file(path, registry_, compile_options, import_options);
  }();
  if (!compiled.is_ok()) return with_shape_hint(compiled.status(), shape_problem);
  return Program::from_bytes(Span<const uint8_t>(compiled->program.data(), compiled->program.size()), path);
}

Result<Method> Runtime::load_method(const Program& program, const std::string& method_name,
                                    const LoadSettings& settings) {
  MethodOptions options;
  options.num_threads = settings.threads;
  options.adapt_threads = settings.adapt_threads;
  options.allowed_backends = settings.backends;
  placement::LoadPlacerOptions placer_options;
  if (!settings.cache_dir.empty()) placer_options.cache_directory = settings.cache_dir;
  placer_options.profile_directory = placer_options.cache_directory;
  if (settings.no_cache) placer_options.cache_directory.clear();
  placer_options.measure_seconds = settings.measure_seconds;
  placement::LoadPlacer placer(placer_options);
  if (settings.placement == "auto") {
    options.placement = PlacementPolicy::kAuto;
    options.placer = &placer;
  }
  options.verify = settings.verify;
  if (placer.cache() != nullptr) options.verdicts = &placer;
  BackendOptions backend_options;
  PLUGRT_RETURN_IF_ERROR(backend_options.add_all(settings.backend_options));
  PLUGRT_RETURN_IF_ERROR(backend_options.check_backends(registry_.backend_names()));
  options.backend_options = &backend_options;
  std::lock_guard<std::mutex> lock(load_mutex_);
  return Method::load(program, method_name, registry_, options);
}

}  // namespace plugrt
