// SPDX-License-Identifier: Apache-2.0
// A header-only C++ wrapper over the C API (plugrt/plugrt_c.h): owning handles, errors
// as plugrt::api::Error exceptions carrying the runtime's message. Links only libplugrt.so.
//
//   plugrt::api::Runtime runtime;                       // PLUGRT_* variables, defaults
//   plugrt::api::Session session = runtime.open("model.prt");
//   session.run({&input});                              // DLTensor inputs, in order
//   const DLTensor& y = session.output(0);              // valid until the next run
#ifndef PLUGRT_PLUGRT_HPP_
#define PLUGRT_PLUGRT_HPP_

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "plugrt/plugrt_c.h"

namespace plugrt::api {

/// A failed call: code() is a plugrt_error_code (or a backend's plugrt_status).
class Error : public std::runtime_error {
 public:
  Error(int32_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int32_t code() const { return code_; }

 private:
  int32_t code_;
};

/// Throws the error, freeing it, when there is one.
inline void check(plugrt_error* error) {
  if (error == nullptr) return;
  const int32_t code = plugrt_error_code_of(error);
  std::string message = plugrt_error_message(error);
  plugrt_error_free(error);
  throw Error(code, message);
}

/// One input or output: its name, dtype and shape (upper bounds where `varies`).
struct TensorInfo {
  std::string name;
  DLDataType dtype{};
  std::vector<int64_t> shape;
  std::vector<bool> varies;
};

/// A tensor read from a .npy file, owned.
class Tensor {
 public:
  static Tensor read_npy(const std::string& path) {
    plugrt_tensor* tensor = nullptr;
    check(plugrt_tensor_read_npy(path.c_str(), &tensor));
    return Tensor(tensor);
  }
  Tensor(Tensor&& other) noexcept : tensor_(std::exchange(other.tensor_, nullptr)) {}
  Tensor& operator=(Tensor&& other) noexcept {
    std::swap(tensor_, other.tensor_);
    return *this;
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() { plugrt_tensor_free(tensor_); }
  const DLTensor& dltensor() const { return *plugrt_tensor_dltensor(tensor_); }

 private:
  explicit Tensor(plugrt_tensor* tensor) : tensor_(tensor) {}
  plugrt_tensor* tensor_;
};

/// Writes a compact CPU tensor to `path` as a .npy file.
inline void write_npy(const std::string& path, const DLTensor& tensor) {
  check(plugrt_tensor_write_npy(path.c_str(), &tensor));
}

class Session {
 public:
  explicit Session(plugrt_session* session) : session_(session) {}
  Session(Session&& other) noexcept : session_(std::exchange(other.session_, nullptr)) {}
  Session& operator=(Session&& other) noexcept {
    std::swap(session_, other.session_);
    return *this;
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { plugrt_session_destroy(session_); }

  size_t num_inputs() const { return plugrt_session_num_inputs(session_); }
  size_t num_outputs() const { return plugrt_session_num_outputs(session_); }
  TensorInfo input_info(size_t index) const { return info(index, plugrt_session_input_info); }
  TensorInfo output_info(size_t index) const { return info(index, plugrt_session_output_info); }
  size_t input_index(const std::string& name) const {
    size_t index = 0;
    check(plugrt_session_input_index(session_, name.c_str(), &index));
    return index;
  }

  /// Runs on `inputs`, one per input in order.
  void run(const std::vector<const DLTensor*>& inputs) {
    check(plugrt_session_run(session_, inputs.data(), inputs.size()));
  }
  /// Stops the run in progress on another thread (it throws Error, PLUGRT_C_CANCELLED).
  void cancel() { plugrt_session_cancel(session_); }
  /// Output `index` of the last run, owned by the session until its next run.
  const DLTensor& output(size_t index) const {
    const DLTensor* tensor = nullptr;
    check(plugrt_session_output(session_, index, &tensor));
    return *tensor;
  }
  /// Copies output `index` into the caller's tensor (same dtype and shape).
  void copy_output(size_t index, DLTensor& destination) const {
    check(plugrt_session_copy_output(session_, index, &destination));
  }
  /// The load report: where each part runs and why, as JSON.
  std::string report_json() const { return plugrt_session_report_json(session_); }

  plugrt_session* handle() const { return session_; }

 private:
  using InfoCall = plugrt_error* (*)(const plugrt_session*, size_t, plugrt_tensor_info*);
  TensorInfo info(size_t index, InfoCall call) const {
    plugrt_tensor_info raw{};
    check(call(session_, index, &raw));
    TensorInfo result{raw.name, raw.dtype, std::vector<int64_t>(raw.shape, raw.shape + raw.ndim), {}};
    for (int32_t axis = 0; axis < raw.ndim; ++axis) result.varies.push_back(raw.varies[axis] != 0);
    return result;
  }
  plugrt_session* session_;
};

/// How one model opens (plugrt_session_options).
struct OpenOptions {
  std::string method;                     ///< empty: "forward"
  uint32_t num_threads = 0;               ///< 0: the runtime's
  std::vector<std::string> input_shapes;  ///< ONNX: "NAME=D0,D1,..." each
  std::vector<std::string> dims;          ///< ONNX: "NAME=MIN..MAX" each
  uint32_t execute_timeout_ms = 0;        ///< each run's time limit; 0: none
};

class Runtime {
 public:
  /// The defaults and the PLUGRT_* variables.
  Runtime() : Runtime(nullptr) {}
  /// `options` from plugrt_runtime_options_init(), changed; nullptr: the defaults.
  explicit Runtime(const plugrt_runtime_options* options) { check(plugrt_runtime_create(options, &runtime_)); }
  Runtime(Runtime&& other) noexcept : runtime_(std::exchange(other.runtime_, nullptr)) {}
  Runtime& operator=(Runtime&& other) noexcept {
    std::swap(runtime_, other.runtime_);
    return *this;
  }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime() { plugrt_runtime_destroy(runtime_); }

  /// A .prt program, or an ONNX model compiled in memory.
  Session open(const std::string& path) { return open(path, OpenOptions{}); }
  Session open(const std::string& path, const OpenOptions& options) {
    std::vector<const char*> shapes, dims;
    for (const std::string& text : options.input_shapes) shapes.push_back(text.c_str());
    for (const std::string& text : options.dims) dims.push_back(text.c_str());
    shapes.push_back(nullptr);
    dims.push_back(nullptr);
    plugrt_session_options raw;
    plugrt_session_options_init(&raw);
    raw.method = options.method.empty() ? nullptr : options.method.c_str();
    raw.num_threads = options.num_threads;
    raw.input_shapes = shapes.data();
    raw.dims = dims.data();
    raw.execute_timeout_ms = options.execute_timeout_ms;
    plugrt_session* session = nullptr;
    check(plugrt_session_open_with_options(runtime_, path.c_str(), &raw, &session));
    return Session(session);
  }

  plugrt_runtime* handle() const { return runtime_; }

 private:
  plugrt_runtime* runtime_ = nullptr;
};

}  // namespace plugrt::api

#endif  // PLUGRT_PLUGRT_HPP_
