// SPDX-License-Identifier: Apache-2.0
#include "verification.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>

namespace plugrt::internal {

namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<std::byte, FreeDeleter>;

size_t tensor_bytes(const DLTensor& tensor) {
  size_t bytes = (static_cast<size_t>(tensor.dtype.bits) * tensor.dtype.lanes + 7) / 8;
  for (int32_t d = 0; d < tensor.ndim; ++d) bytes *= static_cast<size_t>(std::max<int64_t>(tensor.shape[d], 0));
  return bytes;
}

/// A tensor of `like`'s shape and type over a buffer of its own, 64-byte aligned.
DLTensor own_copy(const DLTensor& like, std::vector<Buffer>* buffers) {
  const size_t bytes = tensor_bytes(like);
  buffers->emplace_back(static_cast<std::byte*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64)));
  DLTensor tensor = like;
  tensor.data = buffers->back().get();
  tensor.byte_offset = 0;
  tensor.strides = nullptr;
  return tensor;
}

/// Floats uniform in [-2, 2); every other type zero.
void fill_seeded(DLTensor& tensor, std::mt19937& generator) {
  const size_t bytes = tensor_bytes(tensor);
  std::memset(tensor.data, 0, bytes);
  if (tensor.dtype.code != kDLFloat) return;
  const size_t count = bytes / (tensor.dtype.bits / 8);
  for (size_t i = 0; i < count; ++i) {
    const double value = static_cast<double>(generator() >> 8) * 0x1p-22 - 2.0;
    if (tensor.dtype.bits == 32) static_cast<float*>(tensor.data)[i] = static_cast<float>(value);
    if (tensor.dtype.bits == 64) static_cast<double*>(tensor.data)[i] = value;
    // float16: zero bytes are +0, a valid input
  }
}

double element(const DLTensor& tensor, size_t i) {
  return tensor.dtype.bits == 64 ? static_cast<const double*>(tensor.data)[i]
                                 : static_cast<double>(static_cast<const float*>(tensor.data)[i]);
}

/// |actual - expected| over max(1, max |expected|); infinity when one side has a NaN
/// where the other has not.
double difference(const DLTensor& actual, const DLTensor& expected) {
  const size_t count = tensor_bytes(expected) / (expected.dtype.bits / 8);
  double scale = 1, worst = 0;
  for (size_t i = 0; i < count; ++i) {
    const double b = element(expected, i);
    if (std::isfinite(b)) scale = std::max(scale, std::fabs(b));
  }
  for (size_t i = 0; i < count; ++i) {
    const double a = element(actual, i), b = element(expected, i);
    if (std::isnan(a) != std::isnan(b)) return INFINITY;
    if (std::isnan(a) || a == b) continue;
    worst = std::max(worst, std::fabs(a - b) / scale);
  }
  return worst;
}

bool compared_as_numbers(const DLTensor& tensor) {
  return tensor.dtype.code == kDLFloat && (tensor.dtype.bits == 32 || tensor.dtype.bits == 64) &&
         tensor.dtype.lanes == 1;
}

}  // namespace

Result<VerificationVerdict> compare_with_reference(DelegateHandle& backend, DelegateHandle& reference,
                                                   const PlannedCall& call) {
  std::vector<Buffer> buffers;
  std::vector<DLTensor> inputs, actual, expected;
  inputs.reserve(call.inputs.size());
  std::mt19937 generator(20261126);
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (call.constant[i]) {
      inputs.push_back(*call.inputs[i]);
      continue;
    }
    inputs.push_back(own_copy(*call.inputs[i], &buffers));
    fill_seeded(inputs.back(), generator);
  }
  actual.reserve(call.outputs.size());
  expected.reserve(call.outputs.size());
  for (const DLTensor* output : call.outputs) {
    actual.push_back(own_copy(*output, &buffers));
    expected.push_back(own_copy(*output, &buffers));
    std::memset(actual.back().data, 0xff, tensor_bytes(*output));  // NaN in every float type
    std::memset(expected.back().data, 0xff, tensor_bytes(*output));
  }
  auto pointers = [](std::vector<DLTensor>& tensors) {
    std::vector<const DLTensor*> list;
    for (const DLTensor& tensor : tensors) list.push_back(&tensor);
    return list;
  };
  const std::vector<const DLTensor*> in = pointers(inputs), out_actual = pointers(actual),
                                     out_expected = pointers(expected);
  const plugrt_execute_flags flags = PLUGRT_EXECUTE_PARK_WORKERS;
  const Status ran = backend.execute(in, out_actual, flags);
  if (!ran.is_ok()) return VerificationVerdict{false, "its backend failed on seeded inputs: " + ran.message()};
  const Status reference_ran = reference.execute(in, out_expected, flags);
  if (!reference_ran.is_ok()) return reference_ran.with_context("its portable fallback");

  double worst = 0;
  for (size_t o = 0; o < actual.size(); ++o) {
    if (compared_as_numbers(actual[o])) {
      worst = std::max(worst, difference(actual[o], expected[o]));
    } else if (std::memcmp(actual[o].data, expected[o].data, tensor_bytes(actual[o])) != 0) {
      return VerificationVerdict{false, "output " + std::to_string(o) + " differs from its portable fallback's"};
    }
  }
  std::ostringstream detail;
  detail << "max difference " << worst << " from its portable fallback (tolerance " << kVerificationTolerance << ")";
  return VerificationVerdict{worst <= kVerificationTolerance, detail.str()};
}

}  // namespace plugrt::internal
