// SPDX-License-Identifier: Apache-2.0
#include "calibration.h"

#include <cmath>
#include <set>

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

Result<Calibration> calibrate(const onnx::ModelProto& model, const std::vector<std::string>& tensors,
                              const std::vector<std::string>& compared, const std::vector<Sample>& samples,
                              const QuantizeOptions& options, Registry& registry) {
  std::map<std::string, TensorObserver> observers;
  Calibration calibration;
  const std::set<std::string> kept(compared.begin(), compared.end());
  std::vector<std::string> wanted = tensors;
  wanted.insert(wanted.end(), compared.begin(), compared.end());
  PLUGRT_RETURN_IF_ERROR(run_samples(model, wanted, samples, registry, options.model,
                                     [&](size_t, const std::string& name, Span<const float> v) {
                                       observers[name].observe(v);
                                       if (kept.count(name) != 0)
                                         calibration.reference[name].emplace_back(v.data(), v.data() + v.size());
                                     }));
  if (options.observer != Observer::kMinMax) {
    PLUGRT_RETURN_IF_ERROR(run_samples(
        model, tensors, samples, registry, options.model,
        [&](size_t, const std::string& name, Span<const float> v) { observers[name].observe_histogram(v); }));
  }
  for (const std::string& name : tensors)
    calibration.ranges[name] = observers[name].range(options.observer, options.percentile);
  return calibration;
}

Result<std::map<std::string, TensorError>> measure_error(const onnx::ModelProto& model, const Calibration& calibration,
                                                         const std::vector<Sample>& samples, Registry& registry,
                                                         const std::string& origin) {
  std::vector<std::string> tensors;
  for (const auto& [name, values] : calibration.reference) tensors.push_back(name);
  std::map<std::string, ErrorSums> sums;
  PLUGRT_RETURN_IF_ERROR(run_samples(model, tensors, samples, registry, origin,
                                     [&](size_t s, const std::string& name, Span<const float> v) {
                                       sums[name].add(calibration.reference.at(name).at(s), v);
                                     }));
  std::map<std::string, TensorError> errors;
  for (const auto& [name, s] : sums) errors[name] = s.error();
  return errors;
}

}  // namespace plugrt::quantizer
