// SPDX-License-Identifier: Apache-2.0
// Calibration: the float model run on the samples, each activation's range observed, and
// the float values of the quantized nodes' outputs kept to measure the error against.
// Then the same for the quantized model: the error of each quantized node's output.
#ifndef PLUGRT_TOOLS_QUANTIZER_CALIBRATION_H_
#define PLUGRT_TOOLS_QUANTIZER_CALIBRATION_H_

#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "calibration_samples.h"
#include "observers.h"
#include "plugrt/registry.h"

namespace plugrt::quantizer {

struct Calibration {
  std::map<std::string, Range> ranges;
  /// Per tensor compared, its float values per sample.
  std::map<std::string, std::vector<std::vector<float>>> reference;
};

/// Observes `tensors` of `model` on `samples` (two passes for percentile and entropy) and
/// keeps the float values of `compared`.
Result<Calibration> calibrate(const onnx::ModelProto& model, const std::vector<std::string>& tensors,
                              const std::vector<std::string>& compared, const std::vector<Sample>& samples,
                              const QuantizeOptions& options, Registry& registry);

/// How far a quantized tensor is from its float reference over the samples.
struct TensorError {
  double relative_l2 = 0;
  double cosine = 1;
};

/// Runs the quantized `model` and compares each tensor of `reference` with it.
Result<std::map<std::string, TensorError>> measure_error(const onnx::ModelProto& model, const Calibration& calibration,
                                                         const std::vector<Sample>& samples, Registry& registry,
                                                         const std::string& origin);

}  // namespace plugrt::quantizer

#endif  // PLUGRT_TOOLS_QUANTIZER_CALIBRATION_H_
