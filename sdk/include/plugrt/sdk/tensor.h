// SPDX-License-Identifier: Apache-2.0
/// \file tensor.h
/// Checked views of the DLTensor arguments of execute.
///
///   PLUGRT_SDK_RETURN_IF_ERROR(args.expect_count(2, 1));
///   PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor a, args.input(0, sdk::kFloat32, {2, 3}));
///   PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor out, args.output(0, sdk::kFloat32, a.shape()));
///   float* y = out.data<float>();
///
/// Every check fails with InvalidArgument and a message that names the argument, what
/// was expected and what came ("input 1: dtype is int32, expected float32"). The views
/// only accept dense, CPU-addressable tensors (no strides, or strides that are compact).
#ifndef PLUGRT_SDK_TENSOR_H_
#define PLUGRT_SDK_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <initializer_list>
#include <string>
#include <vector>

#include "plugrt/plugrt_abi.h"
#include "plugrt/sdk/status.h"

namespace plugrt::sdk {

inline constexpr DLDataType kFloat32{kDLFloat, 32, 1};
inline constexpr DLDataType kFloat16{kDLFloat, 16, 1};
inline constexpr DLDataType kInt64{kDLInt, 64, 1};
inline constexpr DLDataType kInt32{kDLInt, 32, 1};
inline constexpr DLDataType kInt8{kDLInt, 8, 1};
inline constexpr DLDataType kUInt8{kDLUInt, 8, 1};

/// Any size in a shape pattern.
inline constexpr int64_t kAnyDim = -1;

inline bool operator==(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
inline bool operator!=(DLDataType a, DLDataType b) { return !(a == b); }

/// "float32", "int64", "uint8x4", ...
inline std::string dtype_name(DLDataType t) {
  std::string code = t.code == kDLFloat    ? "float"
                     : t.code == kDLInt    ? "int"
                     : t.code == kDLUInt   ? "uint"
                     : t.code == kDLBfloat ? "bfloat"
                                           : "code" + std::to_string(t.code) + "_";
  std::string name = code + std::to_string(t.bits);
  if (t.lanes != 1) name += "x" + std::to_string(t.lanes);
  return name;
}

/// "[2, 3]".
inline std::string shape_text(const int64_t* shape, size_t rank) {
  std::string text = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i > 0) text += ", ";
    text += shape[i] == kAnyDim ? std::string("?") : std::to_string(shape[i]);
  }
  return text + "]";
}

/// A checked, borrowed view of one DLTensor: valid during the execute call.
class Tensor {
 public:
  /// Checks that `tensor` is usable at all: not NULL, on the CPU, a rank from 0 to 32, no
  /// negative size, an element count that does not overflow, data present when it has
  /// elements, compact strides. `what` names it in messages ("input 0").
  static Expected<Tensor> view(const DLTensor* tensor, std::string what) {
    if (tensor == nullptr) return Status::invalid_argument(what + " is NULL");
    if (tensor->device.device_type != kDLCPU && tensor->device.device_type != kDLCUDAHost) {
      return Status::invalid_argument(what + " is on device type " + std::to_string(tensor->device.device_type) +
                                      ", expected the CPU");
    }
    if (tensor->ndim < 0 || tensor->ndim > 32) {
      return Status::invalid_argument(what + " has rank " + std::to_string(tensor->ndim));
    }
    if (tensor->ndim > 0 && tensor->shape == nullptr) return Status::invalid_argument(what + " has no shape");
    int64_t count = 1;
    for (int32_t d = 0; d < tensor->ndim; ++d) {
      const int64_t size = tensor->shape[d];
      if (size < 0) return Status::invalid_argument(what + " has a negative size in dimension " + std::to_string(d));
      if (size != 0 && count > INT64_MAX / size) return Status::invalid_argument(what + ": element count overflows");
      count *= size;
    }
    if (tensor->strides != nullptr) {
      int64_t expected = 1;
      for (int32_t d = tensor->ndim - 1; d >= 0; --d) {
        if (tensor->shape[d] != 1 && tensor->strides[d] != expected) {
          return Status::invalid_argument(what + " is not dense (strided tensors are not supported)");
        }
        expected *= tensor->shape[d];
      }
    }
    if (count > 0 && tensor->data == nullptr) return Status::invalid_argument(what + " has no data");
    return Tensor(tensor, std::move(what), count);
  }

  const DLTensor& raw() const { return *tensor_; }
  const std::string& what() const { return what_; }
  DLDataType dtype() const { return tensor_->dtype; }
  int rank() const { return tensor_->ndim; }
  int64_t dim(int i) const { return tensor_->shape[i]; }
  std::vector<int64_t> shape() const { return {tensor_->shape, tensor_->shape + tensor_->ndim}; }
  int64_t num_elements() const { return count_; }
  size_t num_bytes() const {
    return static_cast<size_t>(count_) * ((tensor_->dtype.bits * tensor_->dtype.lanes + 7) / 8);
  }

  /// The first element, with byte_offset applied. Check the dtype before reading.
  template <typename T>
  T* data() const {
    return reinterpret_cast<T*>(static_cast<char*>(tensor_->data) + tensor_->byte_offset);
  }

  Status expect_dtype(DLDataType dtype) const {
    if (tensor_->dtype == dtype) return Status::ok();
    return Status::invalid_argument(what_ + ": dtype is " + dtype_name(tensor_->dtype) + ", expected " +
                                    dtype_name(dtype));
  }
  Status expect_rank(int rank) const {
    if (tensor_->ndim == rank) return Status::ok();
    return Status::invalid_argument(what_ + ": rank is " + std::to_string(tensor_->ndim) + ", expected " +
                                    std::to_string(rank));
  }
  /// Exactly this shape; kAnyDim matches any size.
  Status expect_shape(const std::vector<int64_t>& shape) const {
    bool same = static_cast<size_t>(tensor_->ndim) == shape.size();
    for (size_t d = 0; same && d < shape.size(); ++d) {
      same = shape[d] == kAnyDim || shape[d] == tensor_->shape[d];
    }
    if (same) return Status::ok();
    return Status::invalid_argument(what_ + ": shape is " + shape_text(tensor_->shape, tensor_->ndim) + ", expected " +
                                    shape_text(shape.data(), shape.size()));
  }
  Status expect_shape(std::initializer_list<int64_t> shape) const { return expect_shape(std::vector<int64_t>(shape)); }

 private:
  Tensor(const DLTensor* tensor, std::string what, int64_t count)
      : tensor_(tensor), what_(std::move(what)), count_(count) {}
  const DLTensor* tensor_;
  std::string what_;
  int64_t count_;
};

/// The arguments of one execute call.
class Arguments {
 public:
  explicit Arguments(const plugrt_execute_args* args) : args_(args) {}

  size_t num_inputs() const { return args_->num_inputs; }
  size_t num_outputs() const { return args_->num_outputs; }
  const plugrt_execute_args& raw() const { return *args_; }

  /// The call's PLUGRT_EXECUTE_* flags; 0 from a host older than ABI 1.2, whose args end
  /// before the field.
  plugrt_execute_flags flags() const { return args_->struct_size >= PLUGRT_EXECUTE_ARGS_SIZE_1_2 ? args_->flags : 0; }
  /// The host's next call goes to another backend: park worker threads before returning
  /// (see PLUGRT_EXECUTE_PARK_WORKERS).
  bool park_workers() const { return (flags() & PLUGRT_EXECUTE_PARK_WORKERS) != 0; }
  /// The values the call gives the graph's symbols, one per symbol (ABI 1.6); null, with
  /// a count of 0, for a static graph or from an older host.
  const int64_t* symbol_values() const {
    return args_->struct_size >= PLUGRT_EXECUTE_ARGS_SIZE_1_6 ? args_->symbol_values : nullptr;
  }
  size_t num_symbol_values() const { return symbol_values() != nullptr ? args_->num_symbol_values : 0; }
  /// The most threads this call may keep busy (ABI 1.7), at most the handle's budget;
  /// 0, and from an older host, means the whole budget.
  size_t num_threads() const { return args_->struct_size >= PLUGRT_EXECUTE_ARGS_SIZE_1_7 ? args_->num_threads : 0; }
  /// Whether the host asked this call to stop (ABI 1.8): its stop flag is set, or its
  /// deadline has passed. Check it between steps that may take long, and return
  /// PLUGRT_STATUS_CANCELLED when it is true. False from an older host.
  bool stop_requested() const {
    if (args_->struct_size < PLUGRT_EXECUTE_ARGS_SIZE_1_8) return false;
    if (args_->stop_flag != nullptr && __atomic_load_n(args_->stop_flag, __ATOMIC_RELAXED) != 0) return true;
    if (args_->deadline_ns == 0) return false;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec >= args_->deadline_ns;
  }

  /// Exactly this many inputs and outputs.
  Status expect_count(size_t inputs, size_t outputs) const {
    if (args_->num_inputs == inputs && args_->num_outputs == outputs) return Status::ok();
    return Status::invalid_argument("expected " + std::to_string(inputs) + " inputs and " + std::to_string(outputs) +
                                    " outputs, got " + std::to_string(args_->num_inputs) + " and " +
                                    std::to_string(args_->num_outputs));
  }

  /// Input `i`, checked to be a usable tensor.
  Expected<Tensor> input(size_t i) const { return at(args_->inputs, args_->num_inputs, i, "input "); }
  Expected<Tensor> output(size_t i) const { return at(args_->outputs, args_->num_outputs, i, "output "); }
  /// Input `i` with this dtype and shape (kAnyDim for any size).
  Expected<Tensor> input(size_t i, DLDataType dtype, const std::vector<int64_t>& shape) const {
    return checked(input(i), dtype, shape);
  }
  Expected<Tensor> output(size_t i, DLDataType dtype, const std::vector<int64_t>& shape) const {
    return checked(output(i), dtype, shape);
  }

 private:
  static Expected<Tensor> at(const DLTensor* const* list, size_t count, size_t i, const char* kind) {
    const std::string what = kind + std::to_string(i);
    if (i >= count) return Status::invalid_argument(what + " is missing: only " + std::to_string(count) + " given");
    if (list == nullptr) return Status::invalid_argument("the " + std::string(kind) + "list is NULL");
    return Tensor::view(list[i], what);
  }
  static Expected<Tensor> checked(Expected<Tensor> tensor, DLDataType dtype, const std::vector<int64_t>& shape) {
    if (!tensor.is_ok()) return tensor;
    PLUGRT_SDK_RETURN_IF_ERROR(tensor->expect_dtype(dtype));
    PLUGRT_SDK_RETURN_IF_ERROR(tensor->expect_shape(shape));
    return tensor;
  }
  const plugrt_execute_args* args_;
};

}  // namespace plugrt::sdk

#endif  // PLUGRT_SDK_TENSOR_H_
