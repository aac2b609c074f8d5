// SPDX-License-Identifier: Apache-2.0
// The C API (plugrt/plugrt_c.h) over plugrt::Runtime and plugrt::Session: handles,
// errors as values, and no exception crossing the boundary.
#include "plugrt/plugrt_c.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "npy.h"
#include "plugrt/dtype.h"
#include "plugrt/runtime/report_json.h"
#include "plugrt/runtime/runtime.h"

struct plugrt_error {
  int32_t code;
  std::string message;
};

struct plugrt_tensor {
  plugrt::tools::NpyArray array;
  DLTensor view;
};

struct plugrt_runtime {
  std::unique_ptr<plugrt::Runtime> runtime;
};

/// What the C API hands out about one tensor of a session, kept with it.
struct TensorInfoStorage {
  std::vector<int64_t> shape;
  std::vector<uint8_t> varies;
};

struct plugrt_session {
  plugrt::Session session;
  std::vector<TensorInfoStorage> inputs, outputs;
  std::string report_json;
};

constexpr bool same_code(plugrt_error_code code, int status) { return static_cast<int>(code) == status; }
static_assert(same_code(PLUGRT_C_INVALID_ARGUMENT, PLUGRT_STATUS_INVALID_ARGUMENT) &&
                  same_code(PLUGRT_C_INVALID_PROGRAM, PLUGRT_STATUS_INVALID_PROGRAM) &&
                  same_code(PLUGRT_C_CANCELLED, PLUGRT_STATUS_CANCELLED) &&
                  same_code(PLUGRT_C_DELEGATE_CRASHED, PLUGRT_STATUS_DELEGATE_CRASHED) &&
                  same_code(PLUGRT_C_PLUGIN_ABI_MISMATCH, PLUGRT_STATUS_PLUGIN_ABI_MISMATCH),
              "the C API's codes are the ABI's");

namespace {

/// The error to return; nullptr when even that cannot be allocated is impossible to
/// report, so a static one stands in.
plugrt_error* make_error(int32_t code, std::string message) noexcept {
  static plugrt_error out_of_memory{PLUGRT_C_MEMORY_ALLOCATION_FAILED, std::string()};
  try {
    return new plugrt_error{code, std::move(message)};
  } catch (...) {
    return &out_of_memory;
  }
}

plugrt_error* from_status(const plugrt::Status& status) {
  if (status.is_ok()) return nullptr;
  return make_error(static_cast<int32_t>(status.code()), status.message());
}

plugrt_error* invalid_argument(const char* call, const std::string& why) {
  return make_error(PLUGRT_C_INVALID_ARGUMENT, std::string(call) + ": " + why);
}

/// Runs `body` (returning a plugrt_error*) so that no exception leaves the library.
template <typename Body>
plugrt_error* guarded(const char* call, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return make_error(PLUGRT_C_MEMORY_ALLOCATION_FAILED, std::string(call) + ": out of memory");
  } catch (const std::exception& e) {
    return make_error(PLUGRT_C_INTERNAL, std::string(call) + ": " + e.what());
  } catch (...) {
    return make_error(PLUGRT_C_INTERNAL, std::string(call) + ": an unknown exception");
  }
}

/// The caller's options struct `given` (of this library's type Options), read up to its
/// struct_size over the defaults in `*options`; an error when it is newer than this
/// library and sets a field this library does not know.
template <typename Options>
plugrt_error* read_struct(const char* call, const Options* given, Options* options) {
  if (given == nullptr) return nullptr;
  if (given->struct_size < sizeof(size_t)) return invalid_argument(call, "struct_size is 0");
  const size_t known = sizeof(Options);
  std::memcpy(options, given, std::min(given->struct_size, known));
  const auto* bytes = reinterpret_cast<const unsigned char*>(given);
  for (size_t i = known; i < given->struct_size; ++i) {
    if (bytes[i] != 0) {
      return make_error(PLUGRT_C_NOT_SUPPORTED, std::string(call) + ": the options set a field this library (C API " +
                                                    std::to_string(PLUGRT_C_API_VERSION_MAJOR) + "." +
                                                    std::to_string(PLUGRT_C_API_VERSION_MINOR) +
                                                    ") does not know, at byte " + std::to_string(i));
    }
  }
  options->struct_size = known;
  return nullptr;
}

plugrt_error* apply_options(const plugrt_runtime_options& given, plugrt::RuntimeOptions* options) {
  if (given.use_environment != 0) {
    plugrt::Result<plugrt::RuntimeOptions> from_environment = plugrt::RuntimeOptions::from_environment();
    if (!from_environment.is_ok()) return from_status(from_environment.status());
    *options = std::move(*from_environment);
  }
  if (given.plugin_dirs != nullptr) {
    for (const char* const* dir = given.plugin_dirs; *dir != nullptr; ++dir)
      options->plugins.plugin_dirs.push_back(*dir);
  }
  if (given.plugin_allow_list != nullptr) options->plugins.allow_list = given.plugin_allow_list;
  if (given.placement != nullptr) options->load.placement = given.placement;
  if (given.cache_dir != nullptr) options->load.cache_dir = given.cache_dir;
  if (given.num_threads != 0) options->load.threads = given.num_threads;
  if (given.backends != nullptr) {
    std::string list(given.backends);
    for (size_t start = 0; start <= list.size();) {
      const size_t comma = std::min(list.find(',', start), list.size());
      if (comma > start) options->load.backends.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return nullptr;
}

plugrt_error* session_options(const plugrt_session_options& given, plugrt::SessionOptions* options) {
  if (given.method != nullptr) options->method = given.method;
  options->threads = given.num_threads;
  options->timeout = std::chrono::milliseconds(given.execute_timeout_ms);
  for (const char* const* text = given.input_shapes; text != nullptr && *text != nullptr; ++text) {
    if (!options->add_input_shape(*text)) {
      return invalid_argument("plugrt_session_open", std::string("input shape '") + *text + "' is not NAME=D0,D1,...");
    }
  }
  for (const char* const* text = given.dims; text != nullptr && *text != nullptr; ++text) {
    if (!options->add_dim(*text)) {
      return invalid_argument("plugrt_session_open",
                              std::string("dimension bounds '") + *text + "' are not NAME=MIN..MAX");
    }
  }
  return nullptr;
}

std::vector<TensorInfoStorage> info_storage(const plugrt::Session& session, bool inputs) {
  std::vector<TensorInfoStorage> all(inputs ? session.num_inputs() : session.num_outputs());
  for (size_t i = 0; i < all.size(); ++i) {
    const plugrt::TensorSpec& spec = inputs ? session.input_spec(i) : session.output_spec(i);
    all[i].shape = spec.shape;
    all[i].varies.assign(spec.shape.size(), 0);
    for (size_t axis = 0; axis < spec.shape.size(); ++axis) all[i].varies[axis] = plugrt::dimension_varies(spec, axis);
  }
  return all;
}

plugrt_error* tensor_info(const plugrt_session* session, size_t index, bool input, plugrt_tensor_info* info) {
  const char* call = input ? "plugrt_session_input_info" : "plugrt_session_output_info";
  if (session == nullptr || info == nullptr) return invalid_argument(call, "session and info must not be null");
  const std::vector<TensorInfoStorage>& all = input ? session->inputs : session->outputs;
  if (index >= all.size()) {
    return make_error(PLUGRT_C_NOT_FOUND,
                      std::string(call) + ": index " + std::to_string(index) + " of " + std::to_string(all.size()));
  }
  const plugrt::TensorSpec& spec = input ? session->session.input_spec(index) : session->session.output_spec(index);
  info->struct_size = sizeof(plugrt_tensor_info);
  info->name = spec.name.c_str();
  info->dtype = plugrt::to_dlpack(spec.dtype);
  info->ndim = static_cast<int32_t>(all[index].shape.size());
  info->shape = all[index].shape.data();
  info->varies = all[index].varies.data();
  return nullptr;
}

plugrt_error* output_index(const plugrt_session* session, size_t index, const char* call) {
  if (session == nullptr) return invalid_argument(call, "the session is null");
  if (index >= session->session.num_outputs()) {
    return make_error(PLUGRT_C_NOT_FOUND, std::string(call) + ": output " + std::to_string(index) + " of " +
                                              std::to_string(session->session.num_outputs()));
  }
  return nullptr;
}

/// The plugrt dtype of a DLPack one; kUndefined when plugrt has none.
plugrt::DType dtype_of(DLDataType type) {
  for (int32_t code = 1; code < 32; ++code) {
    const auto dtype = static_cast<plugrt::DType>(code);
    if (plugrt::is_known_dtype(code) && plugrt::matches_dlpack(dtype, type)) return dtype;
  }
  return plugrt::DType::kUndefined;
}

}  // namespace

extern "C" {

uint32_t plugrt_c_api_version(void) { return (PLUGRT_C_API_VERSION_MAJOR << 16) | PLUGRT_C_API_VERSION_MINOR; }

int32_t plugrt_error_code_of(const plugrt_error* error) { return error == nullptr ? PLUGRT_C_OK : error->code; }

const char* plugrt_error_message(const plugrt_error* error) {
  if (error == nullptr) return "";
  return error->message.empty() ? "out of memory" : error->message.c_str();
}

void plugrt_error_free(plugrt_error* error) {
  if (error != nullptr && !(error->code == PLUGRT_C_MEMORY_ALLOCATION_FAILED && error->message.empty())) delete error;
}

void plugrt_runtime_options_init(plugrt_runtime_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->use_environment = 1;
}

plugrt_error* plugrt_runtime_create(const plugrt_runtime_options* given, plugrt_runtime** runtime) {
  return guarded("plugrt_runtime_create", [&]() -> plugrt_error* {
    if (runtime == nullptr) return invalid_argument("plugrt_runtime_create", "runtime must not be null");
    *runtime = nullptr;
    plugrt_runtime_options read;
    plugrt_runtime_options_init(&read);
    if (plugrt_error* error = read_struct("plugrt_runtime_create", given, &read)) return error;
    plugrt::RuntimeOptions options;
    if (plugrt_error* error = apply_options(read, &options)) return error;
    plugrt::Result<std::unique_ptr<plugrt::Runtime>> created = plugrt::Runtime::create(options);
    if (!created.is_ok()) return from_status(created.status());
    *runtime = new plugrt_runtime{std::move(*created)};
    return nullptr;
  });
}

void plugrt_runtime_destroy(plugrt_runtime* runtime) { delete runtime; }

plugrt_error* plugrt_session_open(plugrt_runtime* runtime, const char* path, plugrt_session** session) {
  return plugrt_session_open_with_options(runtime, path, nullptr, session);
}

void plugrt_session_options_init(plugrt_session_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
}

plugrt_error* plugrt_session_open_with_options(plugrt_runtime* runtime, const char* path,
                                               const plugrt_session_options* given, plugrt_session** session) {
  return guarded("plugrt_session_open", [&]() -> plugrt_error* {
    if (runtime == nullptr || path == nullptr || session == nullptr) {
      return invalid_argument("plugrt_session_open", "runtime, path and session must not be null");
    }
    *session = nullptr;
    plugrt_session_options read;
    plugrt_session_options_init(&read);
    if (plugrt_error* error = read_struct("plugrt_session_open", given, &read)) return error;
    plugrt::SessionOptions options;
    if (plugrt_error* error = session_options(read, &options)) return error;
    plugrt::Result<plugrt::Session> opened = runtime->runtime->open(path, options);
    if (!opened.is_ok()) return from_status(opened.status());
    auto made = std::unique_ptr<plugrt_session>(new plugrt_session{std::move(*opened), {}, {}, {}});
    made->inputs = info_storage(made->session, true);
    made->outputs = info_storage(made->session, false);
    made->report_json = plugrt::report_json(made->session.report()).dump();
    *session = made.release();
    return nullptr;
  });
}

void plugrt_session_destroy(plugrt_session* session) { delete session; }

size_t plugrt_session_num_inputs(const plugrt_session* session) {
  return session == nullptr ? 0 : session->session.num_inputs();
}

size_t plugrt_session_num_outputs(const plugrt_session* session) {
  return session == nullptr ? 0 : session->session.num_outputs();
}

plugrt_error* plugrt_session_input_info(const plugrt_session* session, size_t index, plugrt_tensor_info* info) {
  return guarded("plugrt_session_input_info", [&] { return tensor_info(session, index, true, info); });
}

plugrt_error* plugrt_session_output_info(const plugrt_session* session, size_t index, plugrt_tensor_info* info) {
  return guarded("plugrt_session_output_info", [&] { return tensor_info(session, index, false, info); });
}

plugrt_error* plugrt_session_run(plugrt_session* session, const DLTensor* const* inputs, size_t num_inputs) {
  return guarded("plugrt_session_run", [&]() -> plugrt_error* {
    if (session == nullptr) return invalid_argument("plugrt_session_run", "the session is null");
    if (inputs == nullptr && num_inputs != 0) return invalid_argument("plugrt_session_run", "inputs is null");
    return from_status(session->session.run(plugrt::Span<const DLTensor* const>(inputs, num_inputs)));
  });
}

void plugrt_session_cancel(plugrt_session* session) {
  if (session != nullptr) session->session.cancel();
}

plugrt_error* plugrt_session_output(const plugrt_session* session, size_t index, const DLTensor** output) {
  return guarded("plugrt_session_output", [&]() -> plugrt_error* {
    if (plugrt_error* error = output_index(session, index, "plugrt_session_output")) return error;
    if (output == nullptr) return invalid_argument("plugrt_session_output", "output must not be null");
    *output = &session->session.output(index);
    return nullptr;
  });
}

plugrt_error* plugrt_session_copy_output(const plugrt_session* session, size_t index, DLTensor* destination) {
  return guarded("plugrt_session_copy_output", [&]() -> plugrt_error* {
    if (plugrt_error* error = output_index(session, index, "plugrt_session_copy_output")) return error;
    if (destination == nullptr || destination->data == nullptr) {
      return invalid_argument("plugrt_session_copy_output", "the destination tensor has no data");
    }
    return from_status(session->session.copy_output(index, *destination));
  });
}

plugrt_error* plugrt_session_input_index(const plugrt_session* session, const char* name, size_t* index) {
  return guarded("plugrt_session_input_index", [&]() -> plugrt_error* {
    if (session == nullptr || name == nullptr || index == nullptr) {
      return invalid_argument("plugrt_session_input_index", "session, name and index must not be null");
    }
    std::string names;
    for (size_t i = 0; i < session->session.num_inputs(); ++i) {
      const std::string& input = session->session.input_spec(i).name;
      if (input == name) {
        *index = i;
        return nullptr;
      }
      names += (i == 0 ? "'" : ", '") + input + "'";
    }
    return make_error(PLUGRT_C_NOT_FOUND, std::string("no input is named '") + name + "'; the inputs are " + names);
  });
}

const char* plugrt_session_report_json(const plugrt_session* session) {
  return session == nullptr ? "{}" : session->report_json.c_str();
}

plugrt_error* plugrt_tensor_read_npy(const char* path, plugrt_tensor** tensor) {
  return guarded("plugrt_tensor_read_npy", [&]() -> plugrt_error* {
    if (path == nullptr || tensor == nullptr) return invalid_argument("plugrt_tensor_read_npy", "null argument");
    *tensor = nullptr;
    plugrt::Result<plugrt::tools::NpyArray> array = plugrt::tools::read_npy(path);
    if (!array.is_ok()) return from_status(array.status());
    auto made = std::make_unique<plugrt_tensor>();
    made->array = std::move(*array);
    made->view = plugrt::tools::dltensor_view(made->array);
    *tensor = made.release();
    return nullptr;
  });
}

const DLTensor* plugrt_tensor_dltensor(const plugrt_tensor* tensor) {
  return tensor == nullptr ? nullptr : &tensor->view;
}

void plugrt_tensor_free(plugrt_tensor* tensor) { delete tensor; }

plugrt_error* plugrt_tensor_write_npy(const char* path, const DLTensor* tensor) {
  return guarded("plugrt_tensor_write_npy", [&]() -> plugrt_error* {
    if (path == nullptr || tensor == nullptr) return invalid_argument("plugrt_tensor_write_npy", "null argument");
    if (tensor->device.device_type != kDLCPU || !plugrt::is_contiguous(*tensor) || tensor->ndim < 0) {
      return invalid_argument("plugrt_tensor_write_npy", std::string(path) + ": not a compact tensor on the CPU");
    }
    plugrt::tools::NpyArray array;
    array.dtype = dtype_of(tensor->dtype);
    if (array.dtype == plugrt::DType::kUndefined) {
      return make_error(PLUGRT_C_NOT_SUPPORTED,
                        std::string("plugrt_tensor_write_npy: ") + path + ": the tensor's dtype has no .npy form here");
    }
    array.shape.assign(tensor->shape, tensor->shape + tensor->ndim);
    size_t bytes = plugrt::dtype_size(array.dtype);
    for (int64_t dim : array.shape) bytes *= static_cast<size_t>(dim);
    const auto* data = static_cast<const uint8_t*>(tensor->data) + tensor->byte_offset;
    array.data.assign(data, data + bytes);
    return from_status(plugrt::tools::write_npy(path, array));
  });
}

}  // extern "C"
