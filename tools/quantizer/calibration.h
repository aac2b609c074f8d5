// SPDX-License-Identifier: Apache-2.0
// Calibration: the float model run on the samples and each activation's range observed.
// Then the error of each quantized node's output: the float and the quantized model run
// side by side, sample by sample (one sample's values held at a time).
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

/// The range of each activation observed, by name.
using Ranges = std::map<std::string, Range>;

/// Observes `tensors` of `model` on `samples` (two passes for percentile and entropy).
Result<Ranges> calibrate(const onnx::ModelProto& model, const std::vector<std::string>& tensors,
                         const std::vector<Sample>& samples, const QuantizeOptions& options, Registry& registry);

/// How far a quantized tensor is from its float reference over the samples.
struct TensorError {
  double relative_l2 = 0;
  double cosine = 1;
};

/// Runs `float_model` and `quantized` on each sample and compares each of `tensors`.
Result<std::map<std::string, TensorError>> measure_error(const onnx::ModelProto& float_model,
                                                         const onnx::ModelProto& quantized,
                                                         const std::vector<std::string>& tensors,
                                                         const std::vector<Sample>& samples,
                                                         const QuantizeOptions& options, Registry& registry);

}  // namespace plugrt::quantizer

#endif  // PLUGRT_TOOLS_QUANTIZER_CALIBRATION_H_
