// SPDX-License-Identifier: Apache-2.0
#include "src/onednn_delegate.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "onednn_blob_generated.h"
#include "src/blob_format.h"
#include "src/plan_builder.h"
#include "src/quantization_steps.h"
#include "src/recurrent_steps.h"
#include "src/threading.h"

namespace plugrt::onednn {

namespace {

sdk::Status invalid(std::string message) { return sdk::Status(PLUGRT_STATUS_INVALID_PROGRAM, std::move(message)); }

}  // namespace

sdk::Expected<std::unique_ptr<sdk::Delegate>> OnednnDelegate::create(const sdk::InitContext& context) {
  std::unique_ptr<OnednnDelegate> delegate(new OnednnDelegate(context.host));
  PLUGRT_SDK_RETURN_IF_ERROR(delegate->build(context));
  return std::unique_ptr<sdk::Delegate>(std::move(delegate));
}

sdk::Status OnednnDelegate::build(const sdk::InitContext& context) {
  // The header first: a blob of another format or version goes to the fallback.
  PLUGRT_SDK_RETURN_IF_ERROR(kBlobFormat.check_header(context.blob, context.blob_size));
  // Constants are read in place as floats: the flatbuffer must be 4-byte aligned.
  if (reinterpret_cast<uintptr_t>(context.blob) % alignof(float) != 0) {
    return sdk::Status::invalid_argument("the blob is not aligned for float32 data");
  }
  const uint8_t* buffer = context.bytes() + kBlobHeaderSize;
  flatbuffers::Verifier verifier(buffer, context.blob_size - kBlobHeaderSize);
  if (!blob::VerifyBlobBuffer(verifier)) return invalid("the oneDNN blob fails the FlatBuffers verifier");
  keep_onednn_loaded();
  threads_ = resolve_thread_count(context.num_threads);
  blob_ = blob::GetBlob(buffer);
  constants_.assign(context.constants.begin(), context.constants.end());
  PLUGRT_SDK_ASSIGN_OR_RETURN(const int64_t max_bytes, context.runtime_options.get_int("one_thread_plan_max_bytes",
                                                                                       kMaxBytesForOneThreadPlan, 0));
  size_t bytes = context.blob_size;
  for (const plugrt_named_constant& constant : constants_) bytes += constant.size;
  one_thread_plan_refused_ = threads_ <= 1 || bytes > static_cast<uint64_t>(max_bytes);
  try {
    engine_ = dnnl::engine(dnnl::engine::kind::cpu, 0);
    stream_ = dnnl::stream(engine_);
  } catch (const dnnl::error& e) {
    return sdk::Status::incompatible_blob(std::string("oneDNN failed: ") + e.what());
  }
  return make_plan(threads_, &plan_);
}

sdk::Status OnednnDelegate::make_plan(int threads, BoundPlan* bound) {
  try {
    // Primitives size their work split for the threads they will run with.
    ThreadLimit limit(threads);
    bound->plan = build_plan(*blob_, sdk::NamedConstants(constants_.data(), constants_.size()), engine_);
  } catch (const BlobError& e) {
    return invalid(std::string("the oneDNN blob is inconsistent: ") + e.what());
  } catch (const ConstantsMissing& e) {
    return sdk::Status::incompatible_blob(e.what());
  } catch (const PrimitiveError& e) {
    return sdk::Status::incompatible_blob(e.what());
  } catch (const dnnl::error& e) {
    return sdk::Status::incompatible_blob(std::string("oneDNN failed: ") + e.what());
  }
  return bind(bound);
}

/// The arena and the scratchpad, bound once.
sdk::Status OnednnDelegate::bind(BoundPlan* bound) {
  Plan& plan = bound->plan;
  if (plan.arena_size > 0) {
    bound->arena = host_.allocate(plan.arena_size, 64);
    if (bound->arena == nullptr) return sdk::Status::out_of_memory("could not allocate the arena");
  }
  if (plan.scratchpad_size > 0) {
    bound->scratchpad = host_.allocate(plan.scratchpad_size, 64);
    if (bound->scratchpad == nullptr) return sdk::Status::out_of_memory("could not allocate the scratchpad");
  }
  for (Step& step : plan.steps) {
    for (const auto& [arg, memory] : step.args) step.c_args.push_back(dnnl_exec_arg_t{arg, memory.get()});
  }
  try {
    for (auto& [memory, offset] : plan.arena_views) {
      memory.set_data_handle(static_cast<uint8_t*>(bound->arena) + offset);
    }
    for (dnnl::memory& memory : plan.scratchpad_views) memory.set_data_handle(bound->scratchpad);
  } catch (const dnnl::error& e) {
    return sdk::Status::internal(std::string("binding the arena failed: ") + e.what());
  }
  return sdk::Status::ok();
}

void OnednnDelegate::release(BoundPlan* bound) {
  bound->plan = Plan();  // primitives and memories go before the buffers they point into
  host_.deallocate(bound->arena);
  host_.deallocate(bound->scratchpad);
  bound->arena = bound->scratchpad = nullptr;
}

OnednnDelegate::~OnednnDelegate() {
  if (one_thread_plan_) release(one_thread_plan_.get());
  release(&plan_);
}

/// A primitive made for more threads runs on one only as a team of one per parallel
/// region (see run_on_fewer_threads), some 0.2 us each: a handle small enough that this
/// shows gets a plan made for one thread instead, on its first call on one thread. A
/// larger one would keep a second copy of large weights for little gain.
BoundPlan& OnednnDelegate::plan_for(size_t threads) {
  if (threads != 1 || one_thread_plan_refused_) return plan_;
  if (!one_thread_plan_) {
    auto made = std::make_unique<BoundPlan>();
    if (make_plan(1, made.get()).is_ok()) {
      one_thread_plan_ = std::move(made);
    } else {
      release(made.get());
      one_thread_plan_refused_ = true;
      return plan_;
    }
  }
  return *one_thread_plan_;
}

sdk::Expected<void*> OnednnDelegate::check_tensor(const char* role, size_t index, const DLTensor* tensor,
                                                  const External& external) {
  auto refuse = [&](const char* what) {
    return sdk::Status::invalid_argument(std::string(role) + " " + std::to_string(index) + ": " + what);
  };
  if (tensor->data == nullptr) return refuse("the tensor has no data");
  if (tensor->dtype.code != external.dtype.code || tensor->dtype.bits != external.dtype.bits ||
      tensor->dtype.lanes != 1) {
    return refuse(external.dtype.code == kDLFloat ? "the dtype is not float32" : "the dtype differs from the blob's");
  }
  // A scalar crosses as rank 0; the blob holds it as [1].
  const bool scalar = tensor->ndim == 0 && external.dims.size() == 1 && external.dims[0] == 1;
  if (!scalar) {
    if (tensor->ndim < 0 || static_cast<size_t>(tensor->ndim) != external.dims.size()) {
      return refuse("the rank differs from the blob's");
    }
    for (size_t d = 0; d < external.dims.size(); ++d) {
      if (tensor->shape[d] != external.dims[d]) return refuse("the shape differs from the blob's");
    }
    if (tensor->strides != nullptr) {
      int64_t expected = 1;
      for (size_t d = external.dims.size(); d-- > 0;) {
        if (external.dims[d] != 1 && tensor->strides[d] != expected) return refuse("the tensor is not compact");
        expected *= external.dims[d];
      }
    }
  }
  return static_cast<void*>(static_cast<uint8_t*>(tensor->data) + tensor->byte_offset);
}

namespace {

sdk::Status failed_while_running(const dnnl::error& e) {
  return sdk::Status::internal(std::string("oneDNN failed while running: ") + e.what());
}

}  // namespace

sdk::Status OnednnDelegate::execute(const sdk::Arguments& args) {
  const plugrt_execute_args& raw = args.raw();
  const size_t asked = args.num_threads() == 0 ? static_cast<size_t>(threads_)
                                               : std::min(args.num_threads(), static_cast<size_t>(threads_));
  BoundPlan& bound = plan_for(asked);
  Plan& plan = bound.plan;
  PLUGRT_SDK_RETURN_IF_ERROR(args.expect_count(plan.inputs.size(), plan.outputs.size()));
  try {
    // The host's tensors are used in place: every memory viewing an edge points at them.
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      PLUGRT_SDK_ASSIGN_OR_RETURN(void* data, check_tensor("input", i, raw.inputs[i], plan.inputs[i]));
      for (dnnl::memory& memory : plan.inputs[i].views) memory.set_data_handle(data);
    }
    for (size_t o = 0; o < plan.outputs.size(); ++o) {
      PLUGRT_SDK_ASSIGN_OR_RETURN(void* data, check_tensor("output", o, raw.outputs[o], plan.outputs[o]));
      for (dnnl::memory& memory : plan.outputs[o].views) memory.set_data_handle(data);
    }
    // PLUGRT_EXECUTE_PARK_WORKERS needs nothing here: OpenMP's workers spin for the
    // host's bounded time (GOMP_SPINCOUNT, set before libgomp loads) and then sleep.
    if (&bound != &plan_ || asked == static_cast<size_t>(threads_)) {
      ThreadLimit limit(&bound == &plan_ ? threads_ : 1);
      return run_steps(plan, args);
    }
    // Nothing may leave the OpenMP region that runs the steps by an exception.
    struct Run {
      OnednnDelegate* self;
      Plan* plan;
      const sdk::Arguments* args;
      sdk::Status status;
    } run{this, &plan, &args, sdk::Status::ok()};
    run_on_fewer_threads(
        static_cast<int>(asked),
        [](void* context) {
          Run& r = *static_cast<Run*>(context);
          try {
            r.status = r.self->run_steps(*r.plan, *r.args);
          } catch (const dnnl::error& e) {
            r.status = failed_while_running(e);
          }
        },
        &run);
    return run.status;
  } catch (const dnnl::error& e) {
    return failed_while_running(e);
  }
}

namespace {

/// Copies the table rows `step`'s indices name; an index outside [-rows, rows) fails
/// the call before anything is read through it.
sdk::Status gather_step(const Step& step) {
  const int64_t* indices = static_cast<const int64_t*>(step.source.get_data_handle());
  const float* table = static_cast<const float*>(step.table.get_data_handle());
  float* out = static_cast<float*>(step.destination.get_data_handle());
  for (size_t i = 0; i < step.count; ++i) {
    int64_t row = indices[i];
    if (row < -step.rows || row >= step.rows) {
      return sdk::Status::invalid_argument("Gather: index " + std::to_string(row) + " at position " +
                                           std::to_string(i) + " is outside [" + std::to_string(-step.rows) + ", " +
                                           std::to_string(step.rows) + ")");
    }
    if (row < 0) row += step.rows;
    std::memcpy(out + i * step.inner, table + static_cast<size_t>(row) * step.inner, step.inner * sizeof(float));
  }
  return sdk::Status::ok();
}

/// `step`'s destination element by element from the source elements its index maps
/// name, the last axis in a loop of its own.
void indexed_copy_step(const Step& step) {
  const float* in = static_cast<const float*>(step.source.get_data_handle());
  float* out = static_cast<float*>(step.destination.get_data_handle());
  const size_t rank = step.dims.size();
  const int64_t inner = step.dims[rank - 1];
  const int64_t* last_map = step.index_map.data() + step.index_map.size() - static_cast<size_t>(inner);
  std::vector<int64_t> at(rank, 0);  // the output position of the row being written
  for (size_t row = 0; row < step.count / static_cast<size_t>(inner); ++row) {
    int64_t from = 0;
    const int64_t* map = step.index_map.data();
    for (size_t d = 0; d + 1 < rank; ++d) {
      from += map[at[d]] * step.strides[d];
      map += step.dims[d];
    }
    for (int64_t i = 0; i < inner; ++i) *out++ = in[from + last_map[i] * step.strides[rank - 1]] * step.value;
    for (size_t d = rank - 1; d-- > 0;) {  // the next row: an odometer over the outer axes
      if (++at[d] < step.dims[d]) break;
      at[d] = 0;
    }
  }
}

}  // namespace

sdk::Status OnednnDelegate::run_steps(Plan& plan, const sdk::Arguments& args) {
  for (size_t done = 0; done < plan.steps.size(); ++done) {
    Step& step = plan.steps[done];
    if (done > 0 && args.stop_requested()) {
      stream_.wait();
      return sdk::Status(PLUGRT_STATUS_CANCELLED, "stopped after " + std::to_string(done) + " of " +
                                                      std::to_string(plan.steps.size()) +
                                                      " oneDNN steps: the host asked the call to stop");
    }
    switch (step.kind) {
      case Step::Kind::kQuantizeU8:
      case Step::Kind::kQuantizeS8:
      case Step::Kind::kDequantizeU8:
      case Step::Kind::kDequantizeS8:
      case Step::Kind::kAddDequantized: run_quantization_step(step); continue;
      case Step::Kind::kGather:
        if (sdk::Status status = gather_step(step); !status.is_ok()) return status;
        continue;
      case Step::Kind::kIndexedCopy: indexed_copy_step(step); continue;
      case Step::Kind::kRecurrent: run_recurrent_step(step); continue;
      default: break;
    }
    if (step.kind == Step::Kind::kErf) {
      const float* in = static_cast<const float*>(step.source.get_data_handle());
      float* out = static_cast<float*>(step.destination.get_data_handle());
      for (size_t i = 0; i < step.count; ++i) out[i] = std::erf(in[i]);
      continue;
    }
    if (step.kind == Step::Kind::kFill) {
      float* out = static_cast<float*>(step.destination.get_data_handle());
      std::fill(out, out + step.count, step.value);
      continue;
    }
    const dnnl_status_t status = dnnl_primitive_execute(step.primitive.get(), stream_.get(),
                                                        static_cast<int>(step.c_args.size()), step.c_args.data());
    if (status != dnnl_success) {
      return sdk::Status::internal("a oneDNN primitive failed with status " + std::to_string(status));
    }
  }
  stream_.wait();
  return sdk::Status::ok();
}

}  // namespace plugrt::onednn
