// SPDX-License-Identifier: Apache-2.0
// Post-training quantization of an ONNX model into standard QDQ ONNX
// (QuantizeLinear/DequantizeLinear pairs), the form the importer's QDQ pass
// (tools/compiler/onnx_qdq.cc) turns into QLinearConv and QLinearMatMul, and that other
// runtimes read too. Static: weights int8 symmetric per output channel, biases int32 at
// x_scale * w_scale, activations per tensor at ranges observed on calibration samples run
// through plugrt's portable backend. Dynamic: MatMul and Gemm weights int8 per channel,
// activations quantized at run time (DynamicQuantizeLinear + MatMulInteger).
#ifndef PLUGRT_TOOLS_QUANTIZER_QUANTIZER_H_
#define PLUGRT_TOOLS_QUANTIZER_QUANTIZER_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "plugrt/registry.h"
#include "plugrt/status.h"

namespace plugrt::quantizer {

/// How an activation's range is taken from the values seen on the calibration set.
enum class Observer {
  kMinMax,      ///< the smallest and largest value
  kPercentile,  ///< |x| clipped at a percentile of its histogram
  kEntropy,     ///< the clipping threshold of least KL divergence (TensorRT's calibration)
};

struct QuantizeOptions {
  std::string model;              ///< the float ONNX model
  std::string output;             ///< where the QDQ model is written
  std::string calibrate;          ///< DIR/*.npy (one input) or DIR/<sample>/<input>.npy
  bool dynamic = false;           ///< dynamic quantization: no calibration
  bool int8_activations = false;  ///< int8 activations instead of uint8 (both asymmetric)
  Observer observer = Observer::kMinMax;
  double percentile = 99.99;      ///< kPercentile: the percentile of |x| kept
  std::set<std::string> exclude;  ///< node names left float
  /// A node whose output's relative L2 error on the calibration set is above this is
  /// left float; <= 0: none is.
  double tolerance = 0;
};

/// One node considered for quantization.
struct NodeReport {
  std::string node;  ///< the node's name (or its first output when it has none)
  std::string op_type;
  std::string output;  ///< the tensor compared
  bool quantized = false;
  std::string reason;      ///< why it stays float, when it does
  double relative_l2 = 0;  ///< ||q - f|| / ||f|| over the calibration set
  double cosine = 1;
};

/// How far one of the model's own (float32) outputs moved, over the calibration set.
struct OutputReport {
  std::string output;
  double relative_l2 = 0;
  double cosine = 1;
};

struct QuantizeReport {
  std::vector<NodeReport> nodes;
  std::vector<OutputReport> outputs;  ///< measured when there are samples
  size_t samples = 0;
};

/// Quantizes options.model into options.output; `registry` needs the portable backend
/// (calibration runs there). Errors name the file and the reason: kAccessFailed (a file
/// cannot be read or written), kInvalidArgument (no calibration directory or samples, an
/// input name or shape that does not match the model, a malformed model), kNotSupported
/// (a model the quantizer cannot write: an opset below 13).
Result<QuantizeReport> quantize_model(const QuantizeOptions& options, Registry& registry);

/// The report as text, one line per node.
std::string report_text(const QuantizeReport& report);

}  // namespace plugrt::quantizer

#endif  // PLUGRT_TOOLS_QUANTIZER_QUANTIZER_H_
