// SPDX-License-Identifier: Apache-2.0
// Runs an ONNX model on calibration samples through plugrt itself: a copy with the wanted
// tensors added as graph outputs, imported and compiled in memory onto the portable
// backend, run once per sample.
#ifndef PLUGRT_TOOLS_QUANTIZER_MODEL_RUNNER_H_
#define PLUGRT_TOOLS_QUANTIZER_MODEL_RUNNER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "calibration_samples.h"
#include "plugrt/method.h"
#include "plugrt/program.h"
#include "plugrt/registry.h"
#include "plugrt/span.h"
#include "plugrt/status.h"

namespace plugrt::quantizer {

/// Called with a sample's index, a tensor's name and its float32 values.
using TensorVisitor = std::function<void(size_t sample, const std::string& name, Span<const float> values)>;

/// The static shape of each value of a model, by name, as plugrt's importer infers it
/// (it folds shape computations ONNX's inference cannot follow).
using ValueShapes = std::map<std::string, std::vector<int64_t>>;

/// The shapes of `model`'s values, its inputs at the shapes of `example`'s arrays.
Result<ValueShapes> value_shapes(const onnx::ModelProto& model, const Sample& example, const std::string& origin);

/// `model` compiled once, run sample by sample.
class ModelRunner {
 public:
  /// Compiles `model` (named `origin` in messages) with `tensors` (float32 values of the
  /// model, of the shapes in `shapes`) as outputs, its inputs at the shapes of
  /// `example`'s arrays. Errors: the import's and the compile's.
  static Result<std::unique_ptr<ModelRunner>> make(const onnx::ModelProto& model,
                                                   const std::vector<std::string>& tensors, const ValueShapes& shapes,
                                                   const Sample& example, Registry& registry,
                                                   const std::string& origin);
  /// Runs sample `index` and visits each of the tensors. Errors: kInvalidArgument naming
  /// the sample's file when an input's dtype or shape does not fit; the run's.
  Status run(const Sample& sample, size_t index, const TensorVisitor& visit);

 private:
  ModelRunner() = default;

  std::string origin_;
  std::set<std::string> wanted_;
  std::optional<Program> program_;
  std::optional<Method> method_;
};

}  // namespace plugrt::quantizer

#endif  // PLUGRT_TOOLS_QUANTIZER_MODEL_RUNNER_H_
