// SPDX-License-Identifier: Apache-2.0
#include "calibration.h"

#include <cmath>

#include "model_runner.h"

namespace plugrt::quantizer {

namespace {

/// Sums over the samples of one tensor's float (f) and quantized (q) values.
struct ErrorSums {
  double diff2 = 0, f2 = 0, q2 = 0, fq = 0;

  void add(const std::vector<float>& f, Span<const float> q) {
    const size_t count = std::min(f.size(), q.size());
    for (size_t i = 0; i < count; ++i) {
      const double a = f[i], b = q.data()[i];
      diff2 += (a - b) * (a - b), f2 += a * a, q2 += b * b, fq += a * b;
    }
  }
  TensorError error() const {
    TensorError e;
    e.relative_l2 = f2 > 0 ? std::sqrt(diff2 / f2) : std::sqrt(diff2);
    e.cosine = f2 > 0 && q2 > 0 ? fq / std::sqrt(f2 * q2) : (diff2 == 0 ? 1.0 : 0.0);
    return e;
  }
};

}  // namespace

Result<Ranges> calibrate(const onnx::ModelProto& model, const std::vector<std::string>& tensors,
                         const std::vector<Sample>& samples, const QuantizeOptions& options, Registry& registry) {
  const Sample& example = samples.front();
  PLUGRT_ASSIGN_OR_RETURN(ValueShapes shapes, value_shapes(model, example, options.model));
  PLUGRT_ASSIGN_OR_RETURN(auto runner, ModelRunner::make(model, tensors, shapes, example, registry, options.model));
  std::map<std::string, TensorObserver> observers;
  const int passes = options.observer == Observer::kMinMax ? 1 : 2;
  for (int pass = 0; pass < passes; ++pass) {
    for (size_t s = 0; s < samples.size(); ++s) {
      PLUGRT_RETURN_IF_ERROR(runner->run(samples[s], s, [&](size_t, const std::string& name, Span<const float> v) {
        pass == 0 ? observers[name].observe(v) : observers[name].observe_histogram(v);
      }));
    }
  }
  Ranges ranges;
  for (const std::string& name : tensors) ranges[name] = observers[name].range(options.observer, options.percentile);
  return ranges;
}

Result<std::map<std::string, TensorError>> measure_error(const onnx::ModelProto& float_model,
                                                         const onnx::ModelProto& quantized,
                                                         const std::vector<std::string>& tensors,
                                                         const std::vector<Sample>& samples,
                                                         const QuantizeOptions& options, Registry& registry) {
  const Sample& example = samples.front();
  PLUGRT_ASSIGN_OR_RETURN(ValueShapes shapes, value_shapes(float_model, example, options.model));
  PLUGRT_ASSIGN_OR_RETURN(auto reference,
                          ModelRunner::make(float_model, tensors, shapes, example, registry, options.model));
  PLUGRT_ASSIGN_OR_RETURN(auto candidate,
                          ModelRunner::make(quantized, tensors, shapes, example, registry, options.output));
  std::map<std::string, std::vector<float>> expected;
  std::map<std::string, ErrorSums> sums;
  for (size_t s = 0; s < samples.size(); ++s) {
    PLUGRT_RETURN_IF_ERROR(reference->run(samples[s], s, [&](size_t, const std::string& name, Span<const float> v) {
      expected[name].assign(v.data(), v.data() + v.size());
    }));
    PLUGRT_RETURN_IF_ERROR(candidate->run(samples[s], s, [&](size_t, const std::string& name, Span<const float> v) {
      sums[name].add(expected[name], v);
    }));
  }
  std::map<std::string, TensorError> errors;
  for (const auto& [name, s] : sums) errors[name] = s.error();
  return errors;
}

}  // namespace plugrt::quantizer
