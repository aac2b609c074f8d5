// SPDX-License-Identifier: Apache-2.0
#include "program_session.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "text.h"

namespace plugrt::tools {

namespace {

void fill_random(const TensorSpec& spec, std::mt19937_64& engine, std::vector<uint8_t>* bytes) {
  const size_t count = static_cast<size_t>(spec.num_bytes() / std::max<size_t>(dtype_size(spec.dtype), 1));
  bytes->resize(static_cast<size_t>(spec.num_bytes()));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> digit(0, 9);
  for (size_t i = 0; i < count; ++i) {
    switch (spec.dtype) {
      case DType::kFloat32: {
        const float value = uniform(engine);
        std::memcpy(bytes->data() + i * 4, &value, 4);
        break;
      }
      case DType::kInt64: {
        const int64_t value = digit(engine);
        std::memcpy(bytes->data() + i * 8, &value, 8);
        break;
      }
      case DType::kInt32: {
        const int32_t value = digit(engine);
        std::memcpy(bytes->data() + i * 4, &value, 4);
        break;
      }
      case DType::kBool: (*bytes)[i] = static_cast<uint8_t>(digit(engine) % 2); break;
      default: (*bytes)[i * dtype_size(spec.dtype)] = static_cast<uint8_t>(digit(engine)); break;
    }
  }
}

}  // namespace

Status fill_inputs(Method& method, const std::vector<std::string>& input_files, uint64_t seed) {
  std::map<std::string, std::string> files;
  for (const std::string& argument : input_files) {
    const size_t equals = argument.find('=');
    if (equals == std::string::npos || equals == 0) {
      return Status(Error::kInvalidArgument, "--input '" + argument + "' is not NAME=FILE.npy");
    }
    files[argument.substr(0, equals)] = argument.substr(equals + 1);
  }
  std::mt19937_64 engine(seed);
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    const TensorSpec& spec = method.input_spec(i);
    NpyArray array;
    auto file = files.find(spec.name);
    if (file != files.end()) {
      PLUGRT_ASSIGN_OR_RETURN(array, read_npy(file->second));
      // An input whose dimensions vary takes any shape within its bounds: set_input checks it.
      if (array.dtype != spec.dtype || (array.shape != spec.shape && !spec.varies())) {
        return Status(Error::kInvalidArgument, file->second + ": input '" + spec.name + "' needs " +
                                                   std::string(to_string(spec.dtype)) + " " + shape_text(spec.shape) +
                                                   ", the file holds " + std::string(to_string(array.dtype)) + " " +
                                                   shape_text(array.shape));
      }
      files.erase(file);
    } else {
      array.dtype = spec.dtype;
      array.shape = spec.shape;
      fill_random(spec, engine, &array.data);
    }
    PLUGRT_RETURN_IF_ERROR(method.set_input(i, dltensor_view(array)));
  }
  if (!files.empty()) {
    std::string names;
    for (size_t i = 0; i < method.num_inputs(); ++i) names += (i ? ", " : "") + method.input_spec(i).name;
    return Status(Error::kNotFound,
                  "the program has no input '" + files.begin()->first + "' (its inputs: " + names + ")");
  }
  return Status::ok();
}

NpyArray output_array(const Method& method, size_t index) {
  const TensorSpec& spec = method.output_spec(index);
  const DLTensor& tensor = method.output(index);
  NpyArray array;
  array.dtype = spec.dtype;
  array.shape.assign(tensor.shape, tensor.shape + tensor.ndim);  // this run's (a dimension may vary)
  size_t bytes = dtype_size(spec.dtype);
  for (int64_t dim : array.shape) bytes *= static_cast<size_t>(dim);
  const auto* data = static_cast<const uint8_t*>(tensor.data);
  array.data.assign(data, data + bytes);
  return array;
}

double max_abs_difference(const NpyArray& a, const NpyArray& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.data.size() != b.data.size()) {
    return std::numeric_limits<double>::infinity();
  }
  if (a.dtype != DType::kFloat32) return a.data == b.data ? 0.0 : std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i + 4 <= a.data.size(); i += 4) {
    float x, y;
    std::memcpy(&x, a.data.data() + i, 4);
    std::memcpy(&y, b.data.data() + i, 4);
    if (std::isnan(x) != std::isnan(y)) return std::numeric_limits<double>::infinity();
    if (!std::isnan(x)) worst = std::max(worst, static_cast<double>(std::fabs(x - y)));
  }
  return worst;
}

}  // namespace plugrt::tools
