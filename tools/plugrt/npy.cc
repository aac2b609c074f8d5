// SPDX-License-Identifier: Apache-2.0
#include "npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>

namespace plugrt::tools {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct DescrEntry {
  const char* descr;
  DType dtype;
};
// Every dtype a program computes. bfloat16 has no NumPy type: it is written as two raw
// bytes per element ('|V2', what NumPy saves of an ml_dtypes bfloat16 array).
constexpr DescrEntry kDescrs[] = {{"<f4", DType::kFloat32},  {"<f2", DType::kFloat16}, {"<f8", DType::kDouble},
                                  {"|V2", DType::kBFloat16}, {"<i8", DType::kInt64},   {"<i4", DType::kInt32},
                                  {"<i2", DType::kInt16},    {"|i1", DType::kInt8},    {"<u8", DType::kUInt64},
                                  {"<u4", DType::kUInt32},   {"<u2", DType::kUInt16},  {"|u1", DType::kUInt8},
                                  {"|b1", DType::kBool}};

Status invalid(const std::string& path, const std::string& why) {
  return Status(Error::kInvalidArgument, path + ": " + why);
}

}  // namespace

Result<NpyArray> read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Error::kAccessFailed, path + ": cannot open: " + std::strerror(errno));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) return invalid(path, "not a .npy file");
  const uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_length = 0, header_start = 0;
  if (major == 1) {
    header_length = static_cast<uint8_t>(bytes[8]) | static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8;
    header_start = 10;
  } else if ((major == 2 || major == 3) && bytes.size() >= 12) {
    for (int i = 0; i < 4; ++i) header_length |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    return invalid(path, ".npy format version " + std::to_string(major) + " is not supported");
  }
  if (header_length > bytes.size() - header_start) return invalid(path, "the .npy header is truncated");
  const std::string header(bytes.data() + header_start, header_length);

  std::smatch match;
  if (!std::regex_search(header, match, std::regex("'descr'\\s*:\\s*'([^']*)'"))) {
    return invalid(path, "the .npy header has no descr");
  }
  NpyArray array;
  for (const DescrEntry& entry : kDescrs) {
    if (match[1] == entry.descr) array.dtype = entry.dtype;
  }
  if (array.dtype == DType::kUndefined) {
    return invalid(path, "dtype '" + match[1].str() +
                             "' is not one plugrt reads (float32, float16, int64, int32, "
                             "int8, uint8, bool, little-endian)");
  }
  if (std::regex_search(header, std::regex("'fortran_order'\\s*:\\s*True"))) {
    return invalid(path, "Fortran-ordered arrays are not supported; save with np.ascontiguousarray");
  }
  if (!std::regex_search(header, match, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)"))) {
    return invalid(path, "the .npy header has no shape");
  }
  const std::string dims = match[1];
  const std::regex number("\\d+");
  for (std::sregex_iterator it(dims.begin(), dims.end(), number), end; it != end; ++it) {
    array.shape.push_back(std::stoll(it->str()));
  }
  uint64_t count = 1;
  for (int64_t dim : array.shape) count *= static_cast<uint64_t>(dim);
  const uint64_t data_bytes = count * dtype_size(array.dtype);
  const size_t data_start = header_start + header_length;
  if (bytes.size() - data_start != data_bytes) {
    return invalid(path, "holds " + std::to_string(bytes.size() - data_start) + " bytes of data; its shape needs " +
                             std::to_string(data_bytes));
  }
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
  return array;
}

Status write_npy(const std::string& path, const NpyArray& array) {
  const char* descr = nullptr;
  for (const DescrEntry& entry : kDescrs) {
    if (entry.dtype == array.dtype) descr = entry.descr;
  }
  if (descr == nullptr) return Status(Error::kInvalidArgument, path + ": no .npy dtype for this tensor");
  std::string shape = "(";
  for (int64_t dim : array.shape) shape += std::to_string(dim) + ",";
  if (array.shape.size() > 1) shape.pop_back();
  shape += ")";
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so that the data starts at a multiple of 64, ending with a newline.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write(kMagic, 6);
  const char version[2] = {1, 0};
  out.write(version, 2);
  const char length[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(length, 2);
  out << header;
  out.write(reinterpret_cast<const char*>(array.data.data()), static_cast<std::streamsize>(array.data.size()));
  out.close();
  if (!out) return Status(Error::kAccessFailed, path + ": cannot write: " + std::strerror(errno));
  return Status::ok();
}

}  // namespace plugrt::tools
