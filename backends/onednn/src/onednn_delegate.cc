#include "src/onednn_delegate.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "onednn_blob_generated.h"
#include "src/blob_format.h"
#include "src/plan_builder.h"
#include "src/threading.h"

namespace plugrt::onednn {

plugrt_status OnednnDelegate::fail(plugrt_status status, const std::string& message) const {
  if (host_ != nullptr && host_->report_error != nullptr) {
    host_->report_error(host_->context, status, plugrt_string{message.data(), message.size()});
  }
  return status;
}

plugrt_status OnednnDelegate::create(const plugrt_host_services* host, const plugrt_init_args* args,
                                     OnednnDelegate** out) {
  std::unique_ptr<OnednnDelegate> delegate(new OnednnDelegate(host));
  const plugrt_status status = delegate->build(args);
  if (status != PLUGRT_STATUS_OK) return status;
  *out = delegate.release();
  return PLUGRT_STATUS_OK;
}

plugrt_status OnednnDelegate::build(const plugrt_init_args* args) {
  // The header first: a blob of another format or version goes to the fallback.
  if (const sdk::Status header = kBlobFormat.check_header(args->blob, args->blob_size); !header.is_ok()) {
    return fail(header.code(), header.message());
  }
  // Constants are read in place as floats: the flatbuffer must be 4-byte aligned.
  if (reinterpret_cast<uintptr_t>(args->blob) % alignof(float) != 0) {
    return fail(PLUGRT_STATUS_INVALID_ARGUMENT, "the blob is not aligned for float32 data");
  }
  const uint8_t* buffer = static_cast<const uint8_t*>(args->blob) + kBlobHeaderSize;
  flatbuffers::Verifier verifier(buffer, args->blob_size - kBlobHeaderSize);
  if (!blob::VerifyBlobBuffer(verifier)) {
    return fail(PLUGRT_STATUS_INVALID_PROGRAM, "the oneDNN blob fails the FlatBuffers verifier");
  }
  keep_onednn_loaded();
  threads_ = resolve_thread_count(args->num_threads);
  try {
    engine_ = dnnl::engine(dnnl::engine::kind::cpu, 0);
    stream_ = dnnl::stream(engine_);
    // Primitives size their work split for the threads they will run with.
    ThreadLimit limit(threads_);
    plan_ = build_plan(*blob::GetBlob(buffer), engine_);
  } catch (const BlobError& e) {
    return fail(PLUGRT_STATUS_INVALID_PROGRAM, std::string("the oneDNN blob is inconsistent: ") + e.what());
  } catch (const PrimitiveError& e) {
    return fail(PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY, e.what());
  } catch (const dnnl::error& e) {
    return fail(PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY, std::string("oneDNN failed: ") + e.what());
  }

  // The arena and the scratchpad, bound once.
  if (plan_.arena_size > 0) {
    arena_ = host_->allocate(host_->context, plan_.arena_size, 64);
    if (arena_ == nullptr) return fail(PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED, "could not allocate the arena");
  }
  if (plan_.scratchpad_size > 0) {
    scratchpad_ = host_->allocate(host_->context, plan_.scratchpad_size, 64);
    if (scratchpad_ == nullptr) {
      return fail(PLUGRT_STATUS_DELEGATE_MEMORY_ALLOCATION_FAILED, "could not allocate the scratchpad");
    }
  }
  for (Step& step : plan_.steps) {
    for (const auto& [arg, memory] : step.args) step.c_args.push_back(dnnl_exec_arg_t{arg, memory.get()});
  }
  try {
    for (auto& [memory, offset] : plan_.arena_views) memory.set_data_handle(static_cast<uint8_t*>(arena_) + offset);
    for (dnnl::memory& memory : plan_.scratchpad_views) memory.set_data_handle(scratchpad_);
  } catch (const dnnl::error& e) {
    return fail(PLUGRT_STATUS_INTERNAL, std::string("binding the arena failed: ") + e.what());
  }
  return PLUGRT_STATUS_OK;
}

OnednnDelegate::~OnednnDelegate() {
  plan_ = Plan();  // primitives and memories go before the buffers they point into
  if (arena_ != nullptr) host_->deallocate(host_->context, arena_);
  if (scratchpad_ != nullptr) host_->deallocate(host_->context, scratchpad_);
}

bool OnednnDelegate::check_tensor(const char* role, size_t index, const DLTensor* tensor, const External& external,
                                  void** data) const {
  char message[256];
  auto refuse = [&](const char* what) {
    std::snprintf(message, sizeof(message), "%s %zu: %s", role, index, what);
    if (host_->report_error != nullptr) {
      host_->report_error(host_->context, PLUGRT_STATUS_INVALID_ARGUMENT, plugrt_string{message, std::strlen(message)});
    }
    return false;
  };
  if (tensor == nullptr || tensor->data == nullptr) return refuse("the tensor or its data is null");
  if (tensor->device.device_type != kDLCPU) return refuse("the tensor is not in CPU memory");
  if (tensor->dtype.code != kDLFloat || tensor->dtype.bits != 32 || tensor->dtype.lanes != 1) {
    return refuse("the dtype is not float32");
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
  *data = static_cast<uint8_t*>(tensor->data) + tensor->byte_offset;
  return true;
}

plugrt_status OnednnDelegate::execute(const plugrt_execute_args* args) {
  if (args == nullptr || args->struct_size < PLUGRT_EXECUTE_ARGS_SIZE_1_0) {
    return fail(PLUGRT_STATUS_INVALID_ARGUMENT, "execute arguments are missing or too old");
  }
  if (args->num_inputs != plan_.inputs.size() || args->num_outputs != plan_.outputs.size() ||
      (args->num_inputs > 0 && args->inputs == nullptr) || (args->num_outputs > 0 && args->outputs == nullptr)) {
    char message[128];
    std::snprintf(message, sizeof(message), "expected %zu inputs and %zu outputs, got %zu and %zu", plan_.inputs.size(),
                  plan_.outputs.size(), args->num_inputs, args->num_outputs);
    if (host_->report_error != nullptr) {
      host_->report_error(host_->context, PLUGRT_STATUS_INVALID_ARGUMENT, plugrt_string{message, std::strlen(message)});
    }
    return PLUGRT_STATUS_INVALID_ARGUMENT;
  }
  try {
    // The host's tensors are used in place: every memory viewing an edge points at them.
    for (size_t i = 0; i < plan_.inputs.size(); ++i) {
      void* data = nullptr;
      if (!check_tensor("input", i, args->inputs[i], plan_.inputs[i], &data)) return PLUGRT_STATUS_INVALID_ARGUMENT;
      for (dnnl::memory& memory : plan_.inputs[i].views) memory.set_data_handle(data);
    }
    for (size_t o = 0; o < plan_.outputs.size(); ++o) {
      void* data = nullptr;
      if (!check_tensor("output", o, args->outputs[o], plan_.outputs[o], &data)) return PLUGRT_STATUS_INVALID_ARGUMENT;
      for (dnnl::memory& memory : plan_.outputs[o].views) memory.set_data_handle(data);
    }
    ThreadLimit limit(threads_);
    for (Step& step : plan_.steps) {
      if (step.kind == Step::Kind::kErf) {
        const float* in = static_cast<const float*>(step.source.get_data_handle());
        float* out = static_cast<float*>(step.destination.get_data_handle());
        for (size_t i = 0; i < step.count; ++i) out[i] = std::erf(in[i]);
        continue;
      }
      const dnnl_status_t status = dnnl_primitive_execute(step.primitive.get(), stream_.get(),
                                                          static_cast<int>(step.c_args.size()), step.c_args.data());
      if (status != dnnl_success) {
        return fail(PLUGRT_STATUS_INTERNAL, "a oneDNN primitive failed with status " + std::to_string(status));
      }
    }
    stream_.wait();
    if (args->struct_size >= PLUGRT_EXECUTE_ARGS_SIZE_1_2 && (args->flags & PLUGRT_EXECUTE_PARK_WORKERS) != 0) {
      park_workers();
    }
  } catch (const dnnl::error& e) {
    return fail(PLUGRT_STATUS_INTERNAL, std::string("oneDNN failed while running: ") + e.what());
  }
  return PLUGRT_STATUS_OK;
}

}  // namespace plugrt::onednn
