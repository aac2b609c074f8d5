// SPDX-License-Identifier: Apache-2.0
// The kit's --model mode with what a model may ask of it: dimensions kept symbolic
// (--dim), and constants offered by name (a blob that names them gets them at init).
// The MatMul model and its arrays are written here, as ONNX protobuf and .npy bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kit_run.h"

namespace {

using ::plugrt::kit_test::model;
using ::plugrt::kit_test::run_kit;
using ::plugrt::kit_test::RunResult;
using ::plugrt::kit_test::test_plugin;
using ::testing::HasSubstr;

// ---- Protobuf and .npy, by hand ---------------------------------------------------------

std::string varint(uint64_t value) {
  std::string bytes;
  do {
    bytes += static_cast<char>((value & 0x7f) | (value > 0x7f ? 0x80 : 0));
    value >>= 7;
  } while (value != 0);
  return bytes;
}

std::string bytes_field(int number, const std::string& bytes) {
  return varint(static_cast<uint64_t>(number) << 3 | 2) + varint(bytes.size()) + bytes;
}

std::string float_bytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

/// An ONNX ValueInfoProto: a float tensor of static shape.
std::string float_value_info(const std::string& name, const std::vector<int64_t>& dims) {
  std::string shape;
  for (int64_t d : dims) shape += bytes_field(1, varint(1 << 3) + varint(static_cast<uint64_t>(d)));
  const std::string tensor_type = varint(1 << 3) + varint(1) + bytes_field(2, shape);  // elem_type FLOAT
  return bytes_field(1, name) + bytes_field(2, bytes_field(1, tensor_type));
}

/// y = x @ w, x float32[2,3] an input, w float32[3,4] an initializer; ONNX IR 8, opset 13.
std::string matmul_model(const std::vector<float>& w) {
  const std::string node = bytes_field(1, "x") + bytes_field(1, "w") + bytes_field(2, "y") +
                           bytes_field(3, "MatMul_0") + bytes_field(4, "MatMul");
  const std::string weights = varint(1 << 3) + varint(3) + varint(1 << 3) + varint(4) + varint(2 << 3) + varint(1) +
                              bytes_field(8, "w") + bytes_field(9, float_bytes(w));
  const std::string graph = bytes_field(1, node) + bytes_field(2, "matmul") + bytes_field(5, weights) +
                            bytes_field(11, float_value_info("x", {2, 3})) +
                            bytes_field(12, float_value_info("y", {2, 4}));
  return varint(1 << 3) + varint(8) + bytes_field(7, graph) + bytes_field(8, varint(2 << 3) + varint(13));
}

/// A version 1.0 .npy file of float32 values.
std::string npy(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ", ";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  const uint16_t size = static_cast<uint16_t>(header.size());
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(size & 0xff) + static_cast<char>(size >> 8) + header +
         float_bytes(values);
}

/// A directory of files that goes away with it.
class TempFiles {
 public:
  TempFiles() {
    std::string pattern = ::testing::TempDir() + "plugrt_kit_model_XXXXXX";
    dir_ = mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  ~TempFiles() {
    for (const std::string& path : written_) std::remove(path.c_str());
    if (!dir_.empty()) rmdir(dir_.c_str());
  }
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    written_.push_back(path);
    return path;
  }

 private:
  std::string dir_;
  std::vector<std::string> written_;
};

// ---- The tests --------------------------------------------------------------------------

TEST(ContractKitModel, ABlobThatNamesItsConstantsGetsThemFromTheProgram) {
  const std::vector<float> x = {1, -2, 3, 0.5f, 4, -1}, w = {1, 2, 3, 4, -1, 0, 1, 2, 0.5f, 0.25f, -2, 1};
  std::vector<float> y(8, 0.0f);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (int p = 0; p < 3; ++p)
        y[static_cast<size_t>(i * 4 + j)] += x[static_cast<size_t>(i * 3 + p)] * w[static_cast<size_t>(p * 4 + j)];
    }
  }
  TempFiles files;
  const std::string onnx = files.write("matmul.onnx", matmul_model(w));
  const std::string in = files.write("x.npy", npy({2, 3}, x)), out = files.write("y.npy", npy({2, 4}, y));
  RunResult r =
      run_kit(test_plugin("sdk_names_constants"), "--model " + onnx + " --input x=" + in + " --expect y=" + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("names its constants (the program lends them at init)"));
  EXPECT_THAT(r.output, HasSubstr("output 'y': matches"));
}

TEST(ContractKitModel, ADimensionKeptSymbolicRunsAtTheInputsSize) {
  RunResult r = run_kit(PORTABLE_PLUGIN, "--model " + model("varying_conv1d.onnx") + " --dim len=1..64 --input input=" +
                                             model("varying_conv1d.1x8x7.input.npy") +
                                             " --expect output=" + model("varying_conv1d.1x8x7.output.npy"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("kept symbolic: len=1..64"));
  EXPECT_THAT(r.output, HasSubstr("output 'output': matches"));
}

TEST(ContractKitModel, ADimensionGivenOneValueIsKeptSymbolicAtThatValue) {
  RunResult r = run_kit(PORTABLE_PLUGIN, "--model " + model("varying_conv1d.onnx") +
                                             " --dim len=7 --input input=" + model("varying_conv1d.1x8x7.input.npy") +
                                             " --expect output=" + model("varying_conv1d.1x8x7.output.npy"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("kept symbolic: len=7..7"));
  EXPECT_THAT(r.output, HasSubstr("output 'output': matches"));
}

TEST(ContractKitModel, ABadDimIsAUsageErrorAndAnUnknownOneIsNamed) {
  const std::string args = "--model " + model("varying_conv1d.onnx") +
                           " --input input=" + model("varying_conv1d.1x8x7.input.npy") +
                           " --expect output=" + model("varying_conv1d.1x8x7.output.npy");
  RunResult malformed = run_kit(PORTABLE_PLUGIN, args + " --dim len");
  EXPECT_EQ(malformed.exit_code, 2) << malformed.output;
  EXPECT_THAT(malformed.output, HasSubstr("--dim 'len' is not NAME=MIN..MAX or NAME=VALUE"));
  RunResult unknown = run_kit(PORTABLE_PLUGIN, args + " --dim length=1..8");
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_THAT(unknown.output, HasSubstr("--dim: no input of the model has a dimension named 'length'"));
}

}  // namespace
