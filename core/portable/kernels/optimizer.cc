// SPDX-License-Identifier: Apache-2.0
// One update step of the optimizers of ai.onnx.preview.training (the importer names them
// "ai.onnx.preview.training.<op>"): Adagrad, Adam and Momentum (standard or nesterov),
// float32 and double, computed in double as ONNX's reference does. Inputs: the learning
// rate R (a float scalar), the step count T (an int64 scalar), then n tensors X, their
// gradients G and the optimizer's state (Adagrad: H; Momentum: V; Adam: V then H); the
// outputs are the new X, then the new state, in the same groups.
#include <cmath>

#include "kernel_families.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

enum class Optimizer { kAdagrad, kAdam, kMomentum, kNesterov };

struct OptimizerConfig {
  Optimizer kind = Optimizer::kAdagrad;
  double norm_coefficient = 0.0, norm_coefficient_post = 0.0;
  double decay_factor = 0.0, epsilon = 1e-6;  // Adagrad, Adam (epsilon)
  double alpha = 0.9, beta = 0.999;           // Adam, Momentum
};

/// The per-element state of one update: x, g and up to two state values in; new x
/// and state out.
struct Element {
  double x, g, v, h;
};

Element update(const OptimizerConfig& c, double r, int64_t t, Element e) {
  const double g = c.norm_coefficient * e.x + e.g;
  switch (c.kind) {
    case Optimizer::kAdagrad: {
      const double rate = r / (1.0 + static_cast<double>(t) * c.decay_factor);
      e.h += g * g;
      e.x -= rate * g / (std::sqrt(e.h) + c.epsilon);
      return e;
    }
    case Optimizer::kAdam: {
      e.v = c.alpha * e.v + (1.0 - c.alpha) * g;
      e.h = c.beta * e.h + (1.0 - c.beta) * g * g;
      const auto steps = static_cast<double>(t);
      const double rate = t > 0 ? r * std::sqrt(1.0 - std::pow(c.beta, steps)) / (1.0 - std::pow(c.alpha, steps)) : r;
      e.x = (1.0 - c.norm_coefficient_post) * (e.x - rate * (e.v / (std::sqrt(e.h) + c.epsilon)));
      return e;
    }
    case Optimizer::kMomentum:
    case Optimizer::kNesterov: {
      const double beta = t > 0 ? c.beta : 1.0;
      e.v = c.alpha * e.v + beta * g;
      e.x -= c.kind == Optimizer::kMomentum ? r * e.v : r * (g + c.alpha * e.v);
      return e;
    }
  }
  return e;
}

/// How many state tensors per X the optimizer keeps.
int64_t state_count(Optimizer kind) { return kind == Optimizer::kAdam ? 2 : 1; }

template <typename T>
class OptimizerKernel final : public Kernel {
 public:
  OptimizerKernel(const OptimizerConfig& c, std::vector<int64_t> sizes) : c_(c), sizes_(std::move(sizes)) {}

  void run(const KernelArgs& args) const override {
    const double r = static_cast<double>(load(*static_cast<const T*>(args.inputs[0])));
    const int64_t t = *static_cast<const int64_t*>(args.inputs[1]);
    const auto n = static_cast<int64_t>(sizes_.size());
    const bool adam = c_.kind == Optimizer::kAdam;
    for (int64_t i = 0; i < n; ++i) {
      const T* x = input(args, 2 + i);
      const T* g = input(args, 2 + n + i);
      const T* s1 = input(args, 2 + 2 * n + i);
      const T* s2 = adam ? input(args, 2 + 3 * n + i) : nullptr;
      T* x_new = output(args, i);
      T* s1_new = output(args, n + i);
      T* s2_new = adam ? output(args, 2 * n + i) : nullptr;
      for (int64_t k = 0; k < sizes_[static_cast<size_t>(i)]; ++k) {
        Element e{load(x[k]), load(g[k]), load(s1[k]), adam ? load(s2[k]) : load(s1[k])};
        e = update(c_, r, t, e);
        x_new[k] = store<T>(e.x);
        s1_new[k] = store<T>(c_.kind == Optimizer::kAdagrad ? e.h : e.v);
        if (adam) s2_new[k] = store<T>(e.h);
      }
    }
  }

 private:
  static const T* input(const KernelArgs& args, int64_t i) {
    return static_cast<const T*>(args.inputs[static_cast<size_t>(i)]);
  }
  static T* output(const KernelArgs& args, int64_t i) { return static_cast<T*>(args.outputs[static_cast<size_t>(i)]); }

  OptimizerConfig c_;
  std::vector<int64_t> sizes_;  // elements of each X
};

std::string read_optimizer_config(const NodeContext& node, Optimizer kind, OptimizerConfig* c) {
  c->kind = kind;
  c->norm_coefficient = node.attr_float("norm_coefficient", 0.0f);
  c->epsilon = node.attr_float("epsilon", 1e-6f);
  if (kind == Optimizer::kAdagrad) c->decay_factor = node.attr_float("decay_factor", 0.0f);
  if (kind == Optimizer::kAdam) {
    c->alpha = node.attr_float("alpha", 0.9f);
    c->beta = node.attr_float("beta", 0.999f);
    c->norm_coefficient_post = node.attr_float("norm_coefficient_post", 0.0f);
  }
  if (kind == Optimizer::kMomentum) {
    if (!node.has_attribute("alpha") || !node.has_attribute("beta") || !node.has_attribute("norm_coefficient")) {
      return "alpha, beta and norm_coefficient are required";
    }
    c->alpha = node.attr_float("alpha", 0.0f);
    c->beta = node.attr_float("beta", 0.0f);
    const std::string mode = node.attr_string("mode", "standard");
    if (mode != "standard" && mode != "nesterov") return "mode '" + mode + "' is not standard or nesterov";
    if (mode == "nesterov") c->kind = Optimizer::kNesterov;
  }
  return {};
}

/// Checks R, T and the groups of tensors; `sizes` gets each X's element count.
std::string check_optimizer_io(const NodeContext& node, Optimizer kind, std::vector<int64_t>* sizes) {
  const int64_t groups = 2 + state_count(kind);  // X, G and the state
  const auto tensors = static_cast<int64_t>(node.num_inputs()) - 2;
  if (tensors < groups || tensors % groups != 0) return "expected R, T, then X, G and state tensors in equal numbers";
  const int64_t n = tensors / groups;
  if (static_cast<int64_t>(node.num_outputs()) != n * (groups - 1)) {
    return "expected " + std::to_string(n * (groups - 1)) + " outputs";
  }
  const TensorInfo& r = *node.input(0);
  if (r.num_elements() != 1) return "R must be a scalar";
  if (node.input(1)->dtype != DType::kInt64 || node.input(1)->num_elements() != 1) return "T must be an int64 scalar";
  for (int64_t i = 0; i < n; ++i) {
    const TensorInfo& x = *node.input(static_cast<size_t>(2 + i));
    for (int64_t group = 1; group < groups; ++group) {
      const TensorInfo* other = node.input(static_cast<size_t>(2 + group * n + i));
      if (other == nullptr || other->shape != x.shape || other->dtype != r.dtype || x.dtype != r.dtype) {
        return "X, G and the state of tensor " + std::to_string(i) + " must have one shape, and R's dtype";
      }
    }
    for (int64_t group = 0; group + 1 < groups; ++group) {
      if (std::string why = check_output(node, static_cast<size_t>(group * n + i), x.shape, x.dtype); !why.empty()) {
        return why;
      }
    }
    sizes->push_back(x.num_elements());
  }
  return {};
}

Prepared prepare_optimizer(const NodeContext& node, Optimizer kind) {
  OptimizerConfig c;
  if (std::string why = read_optimizer_config(node, kind, &c); !why.empty()) return prepare_error(node, why);
  std::vector<int64_t> sizes;
  if (std::string why = check_optimizer_io(node, kind, &sizes); !why.empty()) return prepare_error(node, why);
  return dispatch<kFloat32Only | kDoubleType>(node, node.input(0)->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return prepared<OptimizerKernel<T>>(c, std::move(sizes));
  });
}

Prepared prepare_adagrad(const NodeContext& node) { return prepare_optimizer(node, Optimizer::kAdagrad); }
Prepared prepare_adam(const NodeContext& node) { return prepare_optimizer(node, Optimizer::kAdam); }
Prepared prepare_momentum(const NodeContext& node) { return prepare_optimizer(node, Optimizer::kMomentum); }

}  // namespace

void add_optimizer_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"ai.onnx.preview.training.Adagrad", prepare_adagrad});
  table.push_back({"ai.onnx.preview.training.Adam", prepare_adam});
  table.push_back({"ai.onnx.preview.training.Momentum", prepare_momentum});
}

}  // namespace plugrt::portable
