// SPDX-License-Identifier: Apache-2.0
// Method: loading (resolve, init, fall back), inputs and outputs, and execution.
#include "plugrt/method.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "call_threads.h"
#include "plugrt/backend_options.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/common/symbol_binder.h"
#include "plugrt/graph_constants.h"
#include "plugrt/memory_planner.h"
#include "plugrt/thread_budget.h"
#include "program_data.h"
#include "verification.h"

namespace plugrt {

namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace

/// Everything one instance owns. Held by pointer so that a Method moves cheaply and the
/// DLTensors handed out stay where they are.
struct Method::State {
  /// One instruction, ready to call: its handle and its arguments (inputs, then outputs).
  struct Call {
    DelegateHandle* handle;
    std::vector<const DLTensor*> arguments;
    size_t num_inputs;
    plugrt_execute_flags flags;  // PLUGRT_EXECUTE_PARK_WORKERS when the next call is another backend's
    std::string_view backend;    // into the report
    std::string_view label;      // into the report
    size_t delegate;
  };
  /// The portable fallback blob of each delegate, for an isolated backend that crashes
  /// and for shapes a backend cannot run (`handle`: made for those on first need).
  struct Fallback {
    Span<const uint8_t> blob;
    bool exists = false;
    std::optional<DelegateHandle> handle;
  };

  std::shared_ptr<const internal::ProgramData> program;
  std::shared_ptr<HostEnvironment> environment;
  std::string name;
  LoadReport report;
  std::unique_ptr<std::byte, FreeDeleter> arena;
  std::vector<std::vector<int64_t>> shapes;  // per value; DLTensor::shape points here
  std::vector<DLTensor> tensors;             // per value
  std::vector<uint32_t> inputs, outputs;
  std::vector<TensorSpec> input_specs, output_specs;
  std::vector<DelegateHandle> handles;  // per delegate
  std::vector<Fallback> fallbacks;      // per delegate
  std::vector<Call> calls;              // per instruction
  std::atomic<bool> executing{false};   // a call is running: one at a time
  internal::ThreadChooser threads{1, false};
  size_t cores = 1;         // what the process may run on: the process share's bound
  size_t call_threads = 0;  // the thread count of the call running, or of the last one
  CallStop stop;            // how the call running may be stopped
  std::chrono::nanoseconds timeout{0};

  /// Dimensions that vary (format 1.2): the symbols, bound from the inputs' shapes on
  /// each call, and the values whose dimensions they give.
  struct VaryingValue {
    size_t value;
    std::vector<std::vector<int64_t>> dims;  // per dimension: its words, empty when static
  };
  common::SymbolBinder symbols;
  std::vector<const DLTensor*> input_tensors;  // per input, into `tensors`
  std::vector<VaryingValue> varying;           // every value that varies, inputs aside

  Status fall_back_after_crash(Call& call, const Status& crash);
  Status run_shape_on_fallback(Call& call, const Status& refusal);
  /// A built-in portable handle over `fallback`'s blob; errors say `why` it was needed.
  Result<DelegateHandle> init_fallback(const Fallback& fallback, const Status& why) const;
  /// Runs `call`'s inputs and outputs through `handle`, with the symbols' values, on at
  /// most `call_threads` threads.
  Status execute_call(DelegateHandle& handle, const Call& call) const;
  /// Runs every call in order.
  Status run_calls();
  /// How the call in progress was stopped: "cancelled" or the time limit it passed.
  std::string stop_reason() const;
  Status stopped_before(const Call& call) const;
  /// Binds the symbols from the inputs and sets every varying value's shape.
  Status set_varying_shapes();
  void mark_turn_ends();
  /// The tensors of the first instruction that runs delegate `d`.
  internal::PlannedCall planned_call(const program::Method& method, size_t d) const;
  /// MethodOptions::verify for delegate `d` (handles[d], on its backend): on a
  /// disagreement handles[d] becomes its portable fallback's.
  void verify_delegate(const program::Method& method, size_t d, Span<const uint8_t> blob,
                       Span<const uint8_t> fallback_blob, const MethodOptions& options);
};

Method::Method(std::unique_ptr<State> state) : state_(std::move(state)) {}
Method::Method(Method&&) noexcept = default;
Method& Method::operator=(Method&&) noexcept = default;
Method::~Method() = default;

const char* to_string(PlacementPolicy policy) { return policy == PlacementPolicy::kAuto ? "auto" : "as-compiled"; }

std::string LoadReport::to_string() const {
  std::string text;
  if (!placement_note.empty()) text += "placement auto not used: " + placement_note + "\n";
  if (!placement_measured.empty()) text += "placement auto " + placement_measured + "\n";
  for (const DelegatePlacement& d : delegates) {
    text += d.delegate + " -> " + d.backend + " (" + d.origin + ")";
    if (d.blob_origin != "program") text += ", blob " + d.blob_origin;
    if (d.isolated && !d.fell_back) text += ", isolated";
    if (d.fell_back) text += ", fallback: " + d.reason;
    if (!d.fell_back && !d.verification.empty()) text += ", verification " + d.verification;
    text += "\n";
  }
  return text;
}

namespace {

bool is_allowed(const MethodOptions& options, std::string_view backend) {
  if (options.allowed_backends.empty() || backend == kPortableBackendName) return true;
  for (const std::string& allowed : options.allowed_backends) {
    if (allowed == backend) return true;
  }
  return false;
}

/// The runtime options `backend`'s init gets: the method's, then those addressed to it.
std::vector<plugrt_option> runtime_options_for(const MethodOptions& options, std::string_view backend) {
  std::vector<plugrt_option> all(options.runtime_options.begin(), options.runtime_options.end());
  if (options.backend_options != nullptr) {
    const std::vector<plugrt_option> own = options.backend_options->for_backend(backend);
    all.insert(all.end(), own.begin(), own.end());
  }
  return all;
}

InitOptions init_options(Span<const uint8_t> blob, const std::vector<plugrt_option>& specs,
                         const std::vector<plugrt_option>& runtime_options, const MethodOptions& options) {
  InitOptions init;
  init.blob = blob.data();
  init.blob_size = blob.size();
  init.compile_specs = Span<const plugrt_option>(specs.data(), specs.size());
  init.runtime_options = Span<const plugrt_option>(runtime_options.data(), runtime_options.size());
  init.num_threads = resolve_thread_budget(options.num_threads);
  return init;
}

/// Initialises one delegate on its backend, or on the portable fallback when the
/// backend is missing, not allowed, unavailable or finds the blob incompatible.
Result<DelegateHandle> resolve_delegate(const internal::ProgramData& program, const program::Delegate& delegate,
                                        Registry& registry, const MethodOptions& options,
                                        DelegatePlacement* placement) {
  const std::string backend_name = delegate.backend()->str();
  placement->requested_backend = backend_name;
  placement->blob_size = program.segment(delegate.blob_segment()).size();
  std::vector<plugrt_option> specs;
  if (delegate.compile_specs() != nullptr) {
    for (const program::Option* spec : *delegate.compile_specs()) {
      specs.push_back(plugrt_option{{spec->key()->c_str(), spec->key()->size()},
                                    spec->value() != nullptr ? spec->value()->data() : nullptr,
                                    spec->value() != nullptr ? spec->value()->size() : 0});
    }
  }
  const std::string where = "delegate '" + placement->delegate + "' (backend '" + backend_name + "')";

  // A backend that is not allowed is never looked up, so its plugin is not loaded.
  auto find = [&]() -> Result<RegisteredBackend> {
    if (!is_allowed(options, backend_name)) {
      return Status(Error::kNotSupported, "backend '" + backend_name + "' is not among the allowed backends");
    }
    Result<RegisteredBackend> found = registry.find_backend(backend_name);
    if (!found.is_ok() && backend_name == kPortableBackendName) return builtin_portable_backend();
    return found;
  };
  std::string reason;
  if (Result<RegisteredBackend> backend = find(); !backend.is_ok()) {
    reason = backend.code() == Error::kNotFound ? "backend '" + backend_name + "' is not installed"
                                                : backend.status().message();
  } else if (Availability availability = backend->is_available(); !availability.available) {
    reason = "backend '" + backend_name + "' is unavailable: " + availability.reason;
  } else {
    const std::vector<plugrt_option> runtime_options = runtime_options_for(options, backend_name);
    InitOptions init = init_options(program.segment(delegate.blob_segment()), specs, runtime_options, options);
    // A blob that names constants reads them from its portable graph, where they are stored.
    std::vector<plugrt_named_constant> constants;
    if (delegate.blob_names_constants()) {
      Result<std::vector<plugrt_named_constant>> lent =
          graph_constants(program.segment(static_cast<uint32_t>(delegate.fallback_segment())));
      if (!lent.is_ok()) return lent.status().with_context(where + ": the constants its blob names");
      constants = std::move(lent).value();
      init.constants = Span<const plugrt_named_constant>(constants.data(), constants.size());
    }
    Result<DelegateHandle> handle = backend->init(init);
    if (handle.is_ok()) {
      placement->backend = backend_name;
      placement->origin = backend->plugin().origin;
      placement->isolated = backend->plugin().isolated;
      return handle;
    }
    // Any init failure (an incompatible blob, a crash or hang of an isolated backend, a
    // device error) falls back like an unavailable backend when there is a fallback.
    if (delegate.fallback_segment() < 0) return handle.status().with_context(where);
    reason = handle.status().message();
  }

  // The fallback: the same subgraph as a graph IR blob, on the portable backend.
  if (backend_name == kPortableBackendName) return Status(Error::kDelegateUnavailable, where + ": " + reason);
  if (delegate.fallback_segment() < 0) {
    return Status(Error::kDelegateUnavailable,
                  where + ": " + reason + ", and the program has no portable fallback for it");
  }
  Result<RegisteredBackend> portable = registry.find_backend(kPortableBackendName);
  const RegisteredBackend fallback = portable.is_ok() ? *portable : builtin_portable_backend();
  Span<const uint8_t> fallback_blob = program.segment(static_cast<uint32_t>(delegate.fallback_segment()));
  const std::vector<plugrt_option> fallback_options = runtime_options_for(options, kPortableBackendName);
  Result<DelegateHandle> handle = fallback.init(init_options(fallback_blob, {}, fallback_options, options));
  if (!handle.is_ok()) return handle.status().with_context(where + ": its portable fallback");
  placement->backend = kPortableBackendName;
  placement->origin = fallback.plugin().origin;
  placement->fell_back = true;
  placement->reason = reason;
  return handle;
}

}  // namespace

/// The hand-off: a call whose successor (the first call again after the last, since
/// methods run in a loop) is on another backend ends its backend's turn, so it parks its
/// workers instead of leaving them spinning on the cores the next backend needs.
void Method::State::mark_turn_ends() {
  for (size_t i = 0; i < calls.size(); ++i) {
    const RegisteredBackend& current = calls[i].handle->backend();
    const RegisteredBackend& next = calls[(i + 1) % calls.size()].handle->backend();
    if (current.name() != next.name() || current.plugin().id != next.plugin().id) {
      calls[i].flags |= PLUGRT_EXECUTE_PARK_WORKERS;
    }
  }
}

Result<Method> Method::load(const Program& program, std::string_view name, Registry& registry,
                            const MethodOptions& options) {
  PLUGRT_RETURN_IF_ERROR(program.describe(name));  // kNotFound with the list of methods
  const internal::ProgramData& data = *program.data_;
  const program::Method* method = nullptr;
  for (const program::Method* candidate : *data.root->methods()) {
    if (candidate->name()->string_view() == name) method = candidate;
  }
  std::string placement_note;
  if (options.placement == PlacementPolicy::kAuto) {
    if (options.placer == nullptr) {
      return Status(Error::kInvalidArgument, "placement 'auto' needs a placer (MethodOptions::placer)");
    }
    // A placed method whose check fails (a damaged cache entry, removed by then) is placed
    // once more; one that does not load, or fails twice, leaves the program as compiled.
    for (int attempt = 0; attempt < 2 && placement_note.empty(); ++attempt) {
      Result<PlacedProgram> placed = options.placer->place(program, name, registry, options);
      if (!placed.is_ok()) {
        placement_note = placed.status().message();
        break;
      }
      MethodOptions as_placed = options;
      as_placed.placement = PlacementPolicy::kAsCompiled;
      Result<Method> loaded = load(placed->program, name, registry, as_placed);
      const Status checked = placed->check ? placed->check() : Status::ok();
      if (loaded.is_ok() && checked.is_ok()) {
        LoadReport& report = loaded->state_->report;
        report.placement = to_string(PlacementPolicy::kAuto);
        report.placement_measured = placed->measured;
        for (size_t d = 0; d < report.delegates.size(); ++d) {
          if (d < placed->blob_origins.size()) report.delegates[d].blob_origin = placed->blob_origins[d];
          if (d < placed->placement_reasons.size()) {
            report.delegates[d].placement_reason = placed->placement_reasons[d];
          }
        }
        return loaded;
      }
      const Status why = checked.is_ok() ? loaded.status() : checked;
      options.placer->rejected(*placed, why);
      if (checked.is_ok() || attempt == 1) placement_note = "the placed method did not load: " + why.message();
    }
  }
  auto state = std::make_unique<State>();
  state->program = program.data_;
  state->environment = registry.shared_environment();
  state->name = std::string(name);
  state->report.method = state->name;
  state->report.placement_note = std::move(placement_note);

  // The arena, and a DLTensor for every value (into the arena or a constant segment).
  const size_t arena_size = static_cast<size_t>(align_up(method->arena_size(), kArenaAlignment)) + kArenaAlignment;
  state->arena.reset(static_cast<std::byte*>(std::aligned_alloc(kArenaAlignment, arena_size)));
  if (!state->arena) {
    return Status(Error::kMemoryAllocationFailed, "method '" + state->name + "': cannot allocate its arena of " +
                                                      std::to_string(arena_size) + " bytes");
  }
  const size_t num_values = method->values() != nullptr ? method->values()->size() : 0;
  state->shapes.resize(num_values);
  state->tensors.resize(num_values);
  for (size_t v = 0; v < num_values; ++v) {
    const program::TensorValue& value = *method->values()->Get(static_cast<flatbuffers::uoffset_t>(v));
    if (value.shape() != nullptr) state->shapes[v].assign(value.shape()->begin(), value.shape()->end());
    DLTensor& tensor = state->tensors[v];
    tensor.data = value.segment() >= 0
                      ? const_cast<uint8_t*>(data.segment(static_cast<uint32_t>(value.segment())).data())
                      : static_cast<void*>(state->arena.get() + value.arena_offset());
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int32_t>(state->shapes[v].size());
    tensor.dtype = to_dlpack(static_cast<DType>(value.dtype()));
    tensor.shape = state->shapes[v].data();
    tensor.strides = nullptr;
    tensor.byte_offset = 0;
  }
  if (method->inputs() != nullptr) {
    for (uint32_t v : *method->inputs()) {
      state->inputs.push_back(v);
      state->input_specs.push_back(internal::tensor_spec(*method->values()->Get(v)));
    }
  }
  for (uint32_t v : *method->outputs()) {
    state->outputs.push_back(v);
    state->output_specs.push_back(internal::tensor_spec(*method->values()->Get(v)));
  }
  if (method->symbols() != nullptr && method->symbols()->size() > 0) {
    for (const ir::Symbol* symbol : *method->symbols()) {
      state->symbols.add_symbol(symbol->name()->str(), {symbol->min(), symbol->max()});
    }
    for (size_t k = 0; k < state->inputs.size(); ++k) {
      const TensorSpec& spec = state->input_specs[k];
      state->symbols.add_input(spec.name, spec.shape, spec.dims);
      state->input_tensors.push_back(&state->tensors[state->inputs[k]]);
    }
    for (size_t v = 0; v < num_values; ++v) {
      if (std::find(state->inputs.begin(), state->inputs.end(), v) != state->inputs.end()) continue;
      TensorSpec spec = internal::tensor_spec(*method->values()->Get(static_cast<flatbuffers::uoffset_t>(v)));
      if (spec.varies()) state->varying.push_back(State::VaryingValue{v, std::move(spec.dims)});
    }
  }

  // Delegates: resolve, check, init; or fall back.
  state->report.num_threads = resolve_thread_budget(options.num_threads);
  state->threads = internal::ThreadChooser(state->report.num_threads, options.adapt_threads);
  state->cores = available_cores();
  const size_t num_delegates = method->delegates() != nullptr ? method->delegates()->size() : 0;
  state->report.delegates.resize(num_delegates);
  state->handles.reserve(num_delegates);
  for (size_t d = 0; d < num_delegates; ++d) {
    const program::Delegate& delegate = *method->delegates()->Get(static_cast<flatbuffers::uoffset_t>(d));
    DelegatePlacement& placement = state->report.delegates[d];
    placement.delegate = delegate.name() != nullptr && delegate.name()->size() > 0
                             ? delegate.name()->str()
                             : delegate.backend()->str() + ":" + std::to_string(d);
    Result<DelegateHandle> handle = resolve_delegate(data, delegate, registry, options, &placement);
    if (!handle.is_ok()) return handle.status().with_context("method '" + state->name + "'");
    state->handles.push_back(std::move(handle).value());
    if (options.verify && placement.backend != kPortableBackendName && delegate.fallback_segment() >= 0) {
      state->verify_delegate(*method, d, data.segment(delegate.blob_segment()),
                             data.segment(static_cast<uint32_t>(delegate.fallback_segment())), options);
    }
    State::Fallback fallback;
    if (delegate.fallback_segment() >= 0 && placement.backend != kPortableBackendName) {
      fallback.blob = data.segment(static_cast<uint32_t>(delegate.fallback_segment()));
      fallback.exists = true;
    }
    state->fallbacks.push_back(std::move(fallback));
  }

  // Instructions: argument arrays built once, so execute() only calls.
  const size_t num_instructions = method->instructions() != nullptr ? method->instructions()->size() : 0;
  state->calls.reserve(num_instructions);
  for (const program::Instruction* instruction : *method->instructions()) {
    State::Call call;
    call.handle = &state->handles[instruction->delegate()];
    if (instruction->inputs() != nullptr) {
      for (uint32_t v : *instruction->inputs()) call.arguments.push_back(&state->tensors[v]);
    }
    call.num_inputs = call.arguments.size();
    if (instruction->outputs() != nullptr) {
      for (uint32_t v : *instruction->outputs()) call.arguments.push_back(&state->tensors[v]);
    }
    const DelegatePlacement& placement = state->report.delegates[instruction->delegate()];
    call.backend = placement.backend;
    call.label = placement.delegate;
    call.delegate = instruction->delegate();
    call.flags = 0;
    state->calls.push_back(std::move(call));
  }
  state->mark_turn_ends();
  return Method(std::move(state));
}

const std::string& Method::name() const { return state_->name; }
const LoadReport& Method::report() const { return state_->report; }
size_t Method::num_inputs() const { return state_->inputs.size(); }
size_t Method::num_outputs() const { return state_->outputs.size(); }
const TensorSpec& Method::input_spec(size_t index) const { return state_->input_specs.at(index); }
const TensorSpec& Method::output_spec(size_t index) const { return state_->output_specs.at(index); }
const DLTensor& Method::input(size_t index) const { return state_->tensors[state_->inputs.at(index)]; }
const DLTensor& Method::output(size_t index) const { return state_->tensors[state_->outputs.at(index)]; }

Status Method::set_input(size_t index, const DLTensor& value) {
  if (index >= state_->inputs.size()) {
    return Status(Error::kInvalidArgument, "method '" + state_->name + "' has " +
                                               std::to_string(state_->inputs.size()) + " inputs, not " +
                                               std::to_string(index + 1));
  }
  const TensorSpec& spec = state_->input_specs[index];
  const std::string where = "method '" + state_->name + "', input " + std::to_string(index) + " '" + spec.name + "'";
  if (value.device.device_type != kDLCPU) return Status(Error::kInvalidArgument, where + ": not in CPU memory");
  if (!matches_dlpack(spec.dtype, value.dtype)) {
    return Status(Error::kInvalidArgument, where + ": expected " + std::string(to_string(spec.dtype)) + " data");
  }
  std::vector<int64_t> shape(value.shape, value.shape + std::max(value.ndim, 0));
  if (!spec.varies() && shape != spec.shape) {
    return Status(Error::kInvalidArgument,
                  where + ": expected shape " + shape_text(spec.shape) + ", got " + shape_text(shape));
  }
  if (spec.varies()) {  // each dimension within its bound; the symbols are checked by execute()
    if (shape.size() != spec.shape.size()) {
      return Status(Error::kInvalidArgument, where + ": expected rank " + std::to_string(spec.shape.size()) +
                                                 " (shape up to " + shape_text(spec.shape) + "), got shape " +
                                                 shape_text(shape));
    }
    for (size_t axis = 0; axis < shape.size(); ++axis) {
      const bool fixed = spec.dims[axis].empty();
      if (shape[axis] < 0 || shape[axis] > spec.shape[axis] || (fixed && shape[axis] != spec.shape[axis])) {
        return Status(Error::kInvalidArgument,
                      where + ": dimension " + std::to_string(axis) + " is " + std::to_string(shape[axis]) + "; " +
                          (fixed ? "it is always " : "its bound is ") + std::to_string(spec.shape[axis]) +
                          " (shape up to " + shape_text(spec.shape) + ")");
      }
    }
  }
  if (!is_contiguous(value)) return Status(Error::kInvalidArgument, where + ": not contiguous");
  uint64_t bytes = dtype_size(spec.dtype);
  for (int64_t dim : shape) bytes *= static_cast<uint64_t>(dim);  // at most spec.num_bytes(), checked above
  if (value.data == nullptr && bytes > 0) return Status(Error::kInvalidArgument, where + ": no data");
  DLTensor& target = state_->tensors[state_->inputs[index]];
  if (bytes > 0) std::memcpy(target.data, static_cast<const std::byte*>(value.data) + value.byte_offset, bytes);
  if (spec.varies()) std::copy(shape.begin(), shape.end(), state_->shapes[state_->inputs[index]].begin());
  return Status::ok();
}

// The isolated backend of `call`'s delegate crashed: its inputs are intact (the backend
// only ever saw copies), so the delegate moves to the built-in portable backend (trusted,
// in process) and the call runs again there. Not the hot path: it may allocate.
Result<DelegateHandle> Method::State::init_fallback(const Fallback& fallback, const Status& why) const {
  InitOptions init;
  init.blob = fallback.blob.data();
  init.blob_size = fallback.blob.size();
  init.num_threads = report.num_threads;
  Result<DelegateHandle> handle = builtin_portable_backend().init(init);
  if (!handle.is_ok()) return handle.status().with_context(why.message() + "; its portable fallback");
  return handle;
}

internal::PlannedCall Method::State::planned_call(const program::Method& method, size_t d) const {
  internal::PlannedCall call;
  for (const program::Instruction* instruction : *method.instructions()) {
    if (instruction->delegate() != d) continue;
    if (instruction->inputs() != nullptr) {
      for (uint32_t v : *instruction->inputs()) {
        call.inputs.push_back(&tensors[v]);
        call.constant.push_back(method.values()->Get(v)->segment() >= 0);
      }
    }
    if (instruction->outputs() != nullptr) {
      for (uint32_t v : *instruction->outputs()) call.outputs.push_back(&tensors[v]);
    }
    break;
  }
  return call;
}

void Method::State::verify_delegate(const program::Method& method, size_t d, Span<const uint8_t> blob,
                                    Span<const uint8_t> fallback_blob, const MethodOptions& options) {
  DelegatePlacement& placement = report.delegates[d];
  if (symbols.num_symbols() > 0) {
    placement.verification = "not verified: its dimensions vary";
    return;
  }
  const RegisteredBackend backend = handles[d].backend();
  std::optional<VerificationVerdict> verdict;
  if (options.verdicts != nullptr) verdict = options.verdicts->find_verdict(backend, blob, fallback_blob);
  const bool kept = verdict.has_value();
  std::optional<DelegateHandle> reference;
  if (!verdict || !verdict->agreed) {  // the fallback's handle, to compare with or to run instead
    Result<DelegateHandle> made =
        init_fallback(Fallback{fallback_blob, true, std::nullopt}, Status(Error::kInternal, "verification"));
    if (!made.is_ok()) {
      placement.verification = "not verified: " + made.status().message();
      return;
    }
    reference = std::move(made).value();
  }
  if (!verdict) {
    const internal::PlannedCall call = planned_call(method, d);
    Result<VerificationVerdict> compared = internal::compare_with_reference(handles[d], *reference, call);
    if (!compared.is_ok()) {
      placement.verification = "not verified: " + compared.status().message();
      return;
    }
    verdict = std::move(compared).value();
    if (options.verdicts != nullptr) options.verdicts->keep_verdict(backend, blob, fallback_blob, *verdict);
  }
  placement.verification =
      std::string(verdict->agreed ? "agreed" : "disagreed") + (kept ? " (kept verdict)" : "") + ": " + verdict->detail;
  if (verdict->agreed) return;
  handles[d] = std::move(*reference);
  placement.backend = kPortableBackendName;
  placement.origin = builtin_portable_backend().plugin().origin;
  placement.fell_back = true;
  placement.reason = "verification: " + verdict->detail;
  environment->log(LogLevel::kWarning, "method",
                   "method '" + name + "', delegate '" + placement.delegate +
                       "' runs on its portable fallback: its backend's results differ (" + verdict->detail + ")");
}

Status Method::State::execute_call(DelegateHandle& handle, const Call& call) const {
  return handle.execute(
      Span<const DLTensor* const>(call.arguments.data(), call.num_inputs),
      Span<const DLTensor* const>(call.arguments.data() + call.num_inputs, call.arguments.size() - call.num_inputs),
      call.flags, Span<const int64_t>(symbols.values()), call_threads, stop);
}

Status Method::State::fall_back_after_crash(Call& call, const Status& crash) {
  const Fallback& fallback = fallbacks[call.delegate];
  if (!fallback.exists) return crash;
  DelegatePlacement& placement = report.delegates[call.delegate];
  Result<DelegateHandle> handle = init_fallback(fallback, crash);
  if (!handle.is_ok()) return handle.status();
  handles[call.delegate] = std::move(handle).value();
  fallbacks[call.delegate].exists = false;
  placement.backend = kPortableBackendName;
  placement.origin = builtin_portable_backend().plugin().origin;
  placement.fell_back = true;
  placement.reason = crash.message();
  environment->log(LogLevel::kWarning, "method",
                   "method '" + name + "', delegate '" + placement.delegate +
                       "' runs on its portable fallback from now on: " + crash.message());
  for (Call& other : calls) {
    if (other.delegate == call.delegate) other.backend = placement.backend;  // the string moved
  }
  return execute_call(*call.handle, call);
}

// The backend of `call`'s delegate cannot run this call's shapes (a varying partition
// it lowers per shape; ABI 1.5): this call runs on the portable fallback, kept for such
// shapes, and the next call goes to the backend again.
Status Method::State::run_shape_on_fallback(Call& call, const Status& refusal) {
  Fallback& fallback = fallbacks[call.delegate];
  if (!fallback.exists) return refusal;
  if (!fallback.handle) {
    Result<DelegateHandle> handle = init_fallback(fallback, refusal);
    if (!handle.is_ok()) return handle.status();
    fallback.handle = std::move(handle).value();
    environment->log(LogLevel::kWarning, "method",
                     "method '" + name + "', delegate '" + report.delegates[call.delegate].delegate +
                         "' runs the shapes its backend refuses on its portable fallback: " + refusal.message());
  }
  return execute_call(*fallback.handle, call);
}

Status Method::State::set_varying_shapes() {
  char error[512];
  if (!symbols.bind(input_tensors.data(), input_tensors.size(), error, sizeof(error))) {
    return Status(Error::kInvalidArgument, "method '" + name + "': " + error);
  }
  const int64_t* values = symbols.values().data();
  for (const VaryingValue& value : varying) {
    std::vector<int64_t>& shape = shapes[value.value];
    for (size_t axis = 0; axis < value.dims.size(); ++axis) {
      const std::vector<int64_t>& words = value.dims[axis];
      // Checked when the program loaded: bounded over the symbols' ranges, so it evaluates.
      if (!words.empty()) (void)common::evaluate_dim_expr(words.data(), words.size(), values, &shape[axis]);
    }
  }
  return Status::ok();
}

Status Method::execute() { return execute(ExecuteOptions{}); }

Status Method::execute(const ExecuteOptions& options) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free,
                "the cancel flag is read through the ABI as a uint32_t");
  if (state_->executing.exchange(true, std::memory_order_acquire)) {
    return Status(Error::kInvalidState, "method '" + state_->name +
                                            "' is already executing on another thread: a Method runs one call at a "
                                            "time; load one Method per thread");
  }
  struct Done {
    std::atomic<bool>& flag;
    ~Done() { flag.store(false, std::memory_order_release); }
  } done{state_->executing};
  if (state_->symbols.num_symbols() > 0) PLUGRT_RETURN_IF_ERROR(state_->set_varying_shapes());
  State& state = *state_;
  state.stop = CallStop{reinterpret_cast<const uint32_t*>(options.cancel),
                        options.timeout.count() > 0 ? CallStop::now_ns() + options.timeout.count() : 0};
  state.timeout = options.timeout;
  state.call_threads = internal::CoreShare::take(state.threads.next(), state.cores);
  const auto start = std::chrono::steady_clock::now();
  const Status status = state.run_calls();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  internal::CoreShare::give_back(state.call_threads);
  if (status.is_ok()) {
    state.threads.record(state.call_threads,
                         static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()));
  }
  return status;
}

Status Method::State::run_calls() {
  Profiler* profiler = environment->profiler();
  for (Call& call : calls) {
    if (stop.requested()) return stopped_before(call);
    const uint64_t token = profiler != nullptr ? profiler->begin(call.backend, call.label) : 0;
    Status status = execute_call(*call.handle, call);
    if (profiler != nullptr) profiler->end(token);
    if (status.code() == Error::kDelegateCrashed) status = fall_back_after_crash(call, status);
    if (status.code() == Error::kDelegateInvalidCompatibility && symbols.num_symbols() > 0) {
      status = run_shape_on_fallback(call, status);
    }
    if (status.code() == Error::kCancelled) status = Status(Error::kCancelled, stop_reason() + ": " + status.message());
    if (!status.is_ok())
      return status.with_context("method '" + name + "', delegate '" + std::string(call.label) + "'");
  }
  return Status::ok();
}

std::string Method::State::stop_reason() const {
  if (stop.flag != nullptr && __atomic_load_n(stop.flag, __ATOMIC_RELAXED) != 0) return "cancelled";
  return "passed its time limit of " +
         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()) + " ms";
}

Status Method::State::stopped_before(const Call& call) const {
  return Status(Error::kCancelled,
                "method '" + name + "': " + stop_reason() + " (before delegate '" + std::string(call.label) + "')");
}

size_t Method::last_call_threads() const { return state_->call_threads; }

bool Method::threads_settled() const { return state_->threads.settled(); }

}  // namespace plugrt
