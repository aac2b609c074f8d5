// SPDX-License-Identifier: Apache-2.0
// Recurrent kernels, float32: RNN, GRU and LSTM (opsets 7 to 17).
//
// One kernel runs all three. For each direction it first multiplies every time step's
// input by W at once (one GEMM over seq * batch rows), then walks the steps: one small
// GEMM of the previous hidden state by R per step, then the gates elementwise. W and R
// are transposed into scratch first, so both GEMMs read their B operand row by row.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "gemm.h"
#include "kernel_families.h"

namespace plugrt::portable {

namespace {

enum class CellKind { kRnn, kGru, kLstm };

constexpr uint64_t kMaxScratchFloats = (uint64_t{1} << 40) / sizeof(float);

// ---- Activations --------------------------------------------------------------------

/// One of the activation functions the recurrent ops name, with its alpha and beta.
struct Activation {
  enum class Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  };
  Kind kind = Kind::kTanh;
  float alpha = 0, beta = 0;

  /// x = f(clip(x)) over n values; clip <= 0 means no clipping.
  void apply(float* x, int64_t n, float clip) const {
    if (clip > 0) {
      for (int64_t i = 0; i < n; ++i) x[i] = std::min(clip, std::max(-clip, x[i]));
    }
    switch (kind) {
      case Kind::kRelu:
        for (int64_t i = 0; i < n; ++i) x[i] = std::max(0.0f, x[i]);
        break;
      case Kind::kTanh:
        for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
        break;
      case Kind::kSigmoid:
        for (int64_t i = 0; i < n; ++i) x[i] = 1.0f / (1.0f + std::exp(-x[i]));
        break;
      case Kind::kAffine:
        for (int64_t i = 0; i < n; ++i) x[i] = alpha * x[i] + beta;
        break;
      case Kind::kLeakyRelu:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : alpha * x[i];
        break;
      case Kind::kThresholdedRelu:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] > alpha ? x[i] : 0.0f;
        break;
      case Kind::kScaledTanh:
        for (int64_t i = 0; i < n; ++i) x[i] = alpha * std::tanh(beta * x[i]);
        break;
      case Kind::kHardSigmoid:
        for (int64_t i = 0; i < n; ++i) x[i] = std::min(1.0f, std::max(0.0f, alpha * x[i] + beta));
        break;
      case Kind::kElu:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : alpha * std::expm1(x[i]);
        break;
      case Kind::kSoftsign:
        for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::fabs(x[i]));
        break;
      case Kind::kSoftplus:
        for (int64_t i = 0; i < n; ++i) x[i] = std::log1p(std::exp(x[i]));
        break;
    }
  }
};

struct ActivationSpec {
  const char* name;
  Activation::Kind kind;
  int params;         // how many of alpha, beta it takes
  float alpha, beta;  // the defaults of the ONNX operators of the same name
};

constexpr ActivationSpec kActivations[] = {
    {"Relu", Activation::Kind::kRelu, 0, 0, 0},
    {"Tanh", Activation::Kind::kTanh, 0, 0, 0},
    {"Sigmoid", Activation::Kind::kSigmoid, 0, 0, 0},
    {"Affine", Activation::Kind::kAffine, 2, 1.0f, 0.0f},
    {"LeakyRelu", Activation::Kind::kLeakyRelu, 1, 0.01f, 0},
    {"ThresholdedRelu", Activation::Kind::kThresholdedRelu, 1, 1.0f, 0},
    {"ScaledTanh", Activation::Kind::kScaledTanh, 2, 1.0f, 1.0f},
    {"HardSigmoid", Activation::Kind::kHardSigmoid, 2, 0.2f, 0.5f},
    {"Elu", Activation::Kind::kElu, 1, 1.0f, 0},
    {"Softsign", Activation::Kind::kSoftsign, 0, 0, 0},
    {"Softplus", Activation::Kind::kSoftplus, 0, 0, 0},
};

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

/// The `activations` attribute: the importer carries a list of strings as one string,
/// its items joined by commas.
std::vector<std::string> split_names(const std::string& joined) {
  std::vector<std::string> names;
  if (joined.empty()) return names;
  size_t begin = 0;
  for (size_t comma = joined.find(',');; comma = joined.find(',', begin)) {
    names.push_back(joined.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return names;
}

/// Reads `activations`, `activation_alpha` and `activation_beta` into one Activation per
/// function per direction. Alphas and betas are consumed in order by the functions that
/// take them; a function beyond the end of the lists takes its operator's default.
std::string read_activations(const NodeContext& node, size_t per_direction, int directions,
                             const std::vector<const char*>& defaults, std::vector<Activation>* out) {
  std::vector<std::string> names = split_names(node.attr_string("activations", ""));
  const size_t count = per_direction * static_cast<size_t>(directions);
  if (names.empty()) {
    for (int d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (names.size() == per_direction && directions == 2) {
    // Some exporters give one direction's list for both.
    names.insert(names.end(), names.begin(), names.end());
  } else if (names.size() == 2 * per_direction && directions == 1) {
    // RNN's schema default is ["Tanh", "Tanh"] (both directions) whatever the direction.
    names.resize(per_direction);
  }
  if (names.size() != count) {
    return "activations lists " + std::to_string(names.size()) + " functions; " + std::to_string(count) +
           " are needed (" + std::to_string(per_direction) + " per direction)";
  }
  const std::vector<float> alphas = node.attr_floats("activation_alpha");
  const std::vector<float> betas = node.attr_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    const ActivationSpec* spec = nullptr;
    for (const ActivationSpec& candidate : kActivations) {
      if (equals_ignoring_case(name, candidate.name)) spec = &candidate;
    }
    if (spec == nullptr) return "activation '" + name + "' is not one the recurrent ops define";
    Activation activation{spec->kind, spec->alpha, spec->beta};
    if (spec->params >= 1 && next_alpha < alphas.size()) activation.alpha = alphas[next_alpha++];
    if (spec->params >= 2 && next_beta < betas.size()) activation.beta = betas[next_beta++];
    out->push_back(activation);
  }
  return {};
}

// ---- The kernel ---------------------------------------------------------------------

struct RecurrentConfig {
  CellKind cell = CellKind::kRnn;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int directions = 1;
  bool reverse = false;      // one direction, run backwards
  bool batch_major = false;  // layout 1: X, Y, Y_h, Y_c have batch first
  bool linear_before_reset = false;
  bool input_forget = false;
  float clip = 0;                          // <= 0: none
  std::vector<Activation> activations;     // per direction: f (and g, h)
  size_t num_inputs = 0, num_outputs = 0;  // as the node has them
  int64_t gates() const { return cell == CellKind::kRnn ? 1 : cell == CellKind::kGru ? 3 : 4; }
};

/// Inputs: X, W, R, B, sequence_lens, initial_h, (LSTM) initial_c, P.
/// Outputs: Y, Y_h, (LSTM) Y_c; any may be absent.
class RecurrentKernel final : public Kernel {
 public:
  explicit RecurrentKernel(RecurrentConfig config) : c_(std::move(config)) {
    const int64_t gh = c_.gates() * c_.hidden;
    // Scratch, in floats: W^T, R^T, X*W for every step, the step's gates, h, c, and r*h (GRU).
    w_t_ = 0;
    r_t_ = w_t_ + c_.input * gh;
    xw_ = r_t_ + c_.hidden * gh;
    step_ = xw_ + c_.seq * c_.batch * gh;
    h_ = step_ + c_.batch * gh;
    cell_ = h_ + c_.batch * c_.hidden;
    reset_h_ = cell_ + c_.batch * c_.hidden;
    total_ = reset_h_ + c_.batch * c_.hidden;
  }

  size_t scratch_bytes() const override { return static_cast<size_t>(total_) * sizeof(float); }

  void run(const KernelArgs& args) const override {
    float* scratch = static_cast<float*>(args.scratch);
    const int64_t hidden = c_.hidden;
    float* y = output(args, 0);
    if (y != nullptr) std::fill_n(y, c_.seq * c_.directions * c_.batch * hidden, 0.0f);
    for (int d = 0; d < c_.directions; ++d) {
      run_direction(args, d, c_.reverse || d == 1, scratch);
      float* h = scratch + h_;
      float* cell = scratch + cell_;
      for (int64_t b = 0; b < c_.batch; ++b) {
        for (size_t k = 1; k < 3; ++k) {
          float* out = output(args, k);
          if (out == nullptr) continue;
          std::memcpy(out + state_offset(d, b), (k == 1 ? h : cell) + b * hidden,
                      static_cast<size_t>(hidden) * sizeof(float));
        }
      }
    }
  }

 private:
  /// Input or output k, null when absent or beyond the node's count.
  const void* input(const KernelArgs& args, size_t k) const { return k < c_.num_inputs ? args.inputs[k] : nullptr; }
  float* output(const KernelArgs& args, size_t k) const {
    return k < c_.num_outputs ? static_cast<float*>(args.outputs[k]) : nullptr;
  }

  /// Offset of (direction, batch) in initial_h, initial_c, Y_h and Y_c.
  int64_t state_offset(int d, int64_t b) const {
    return (c_.batch_major ? b * c_.directions + d : d * c_.batch + b) * c_.hidden;
  }
  /// Row of time step t, batch b in X (and in the X*W scratch).
  int64_t x_row(int64_t t, int64_t b) const { return c_.batch_major ? b * c_.seq + t : t * c_.batch + b; }
  /// Offset of (t, d, b) in Y.
  int64_t y_offset(int64_t t, int d, int64_t b) const {
    return (c_.batch_major ? (b * c_.seq + t) * c_.directions + d : (t * c_.directions + d) * c_.batch + b) * c_.hidden;
  }

  static void transpose(const float* src, int64_t rows, int64_t cols, float* dst) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t col = 0; col < cols; ++col) dst[col * rows + r] = src[r * cols + col];
    }
  }

  void run_direction(const KernelArgs& args, int d, bool backwards, float* scratch) const {
    const int64_t hidden = c_.hidden, gh = c_.gates() * hidden, batch = c_.batch;
    const float* x = static_cast<const float*>(input(args, 0));
    const float* w = static_cast<const float*>(input(args, 1)) + d * gh * c_.input;
    const float* r = static_cast<const float*>(input(args, 2)) + d * gh * hidden;
    const float* bias = static_cast<const float*>(input(args, 3));
    if (bias != nullptr) bias += d * 2 * gh;
    const int32_t* lengths = static_cast<const int32_t*>(input(args, 4));
    const float* initial_h = static_cast<const float*>(input(args, 5));
    const bool lstm = c_.cell == CellKind::kLstm;
    const float* initial_c = lstm ? static_cast<const float*>(input(args, 6)) : nullptr;
    const float* peephole = lstm ? static_cast<const float*>(input(args, 7)) : nullptr;
    if (peephole != nullptr) peephole += d * 3 * hidden;
    float* y = output(args, 0);
    float* w_t = scratch + w_t_;
    float* r_t = scratch + r_t_;
    float* xw = scratch + xw_;
    float* step = scratch + step_;
    float* h = scratch + h_;
    float* cell = scratch + cell_;
    float* reset_h = scratch + reset_h_;
    const Activation* act = c_.activations.data() + d * (lstm ? 3 : c_.cell == CellKind::kGru ? 2 : 1);

    transpose(w, gh, c_.input, w_t);
    transpose(r, gh, hidden, r_t);
    // X*W^T + Wb for every step at once.
    const int64_t rows = c_.seq * batch;
    for (int64_t i = 0; i < rows; ++i) {
      if (bias != nullptr) {
        std::memcpy(xw + i * gh, bias, static_cast<size_t>(gh) * sizeof(float));
      } else {
        std::fill_n(xw + i * gh, gh, 0.0f);
      }
    }
    gemm_accumulate(rows, gh, c_.input, 1.0f, {x, c_.input}, {w_t, gh}, xw, gh);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t k = 0; k < hidden; ++k) {
        h[b * hidden + k] = initial_h != nullptr ? initial_h[state_offset(d, b) + k] : 0.0f;
        cell[b * hidden + k] = initial_c != nullptr ? initial_c[state_offset(d, b) + k] : 0.0f;
      }
    }
    const float* r_bias = bias != nullptr ? bias + gh : nullptr;
    // GRU without linear_before_reset multiplies r * h by R_h itself: the step GEMM
    // covers only the z and r gates then.
    const bool split_h = c_.cell == CellKind::kGru && !c_.linear_before_reset;
    const int64_t step_cols = split_h ? 2 * hidden : gh;
    for (int64_t s = 0; s < c_.seq; ++s) {
      for (int64_t b = 0; b < batch; ++b) {
        float* row = step + b * gh;
        if (r_bias != nullptr) {
          std::memcpy(row, r_bias, static_cast<size_t>(gh) * sizeof(float));
        } else {
          std::fill_n(row, gh, 0.0f);
        }
      }
      gemm_accumulate(batch, step_cols, hidden, 1.0f, {h, hidden}, {r_t, gh}, step, gh);
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t length =
            lengths != nullptr ? std::min<int64_t>(c_.seq, std::max<int32_t>(0, lengths[b])) : c_.seq;
        if (s >= length) continue;  // this sequence has ended: its state stays
        const int64_t t = backwards ? length - 1 - s : s;
        const float* in = xw + x_row(t, b) * gh;
        float* g = step + b * gh;
        float* hb = h + b * hidden;
        float* cb = cell + b * hidden;
        switch (c_.cell) {
          case CellKind::kRnn:
            for (int64_t k = 0; k < hidden; ++k) hb[k] = g[k] + in[k];
            act[0].apply(hb, hidden, c_.clip);
            break;
          case CellKind::kGru: gru_step(in, g, hb, reset_h + b * hidden, r_t, r_bias, act); break;
          case CellKind::kLstm: lstm_step(in, g, hb, cb, peephole, act); break;
        }
        if (y != nullptr) std::memcpy(y + y_offset(t, d, b), hb, static_cast<size_t>(hidden) * sizeof(float));
      }
    }
  }

  /// Gates z, r, h. `g` holds h_prev * R^T + Rb (only z and r when split_h), `in` X*W^T + Wb.
  void gru_step(const float* in, float* g, float* h, float* reset_h, const float* r_t, const float* r_bias,
                const Activation* act) const {
    const int64_t hidden = c_.hidden, gh = 3 * hidden;
    float* z = g;
    float* r = g + hidden;
    float* hh = g + 2 * hidden;
    for (int64_t k = 0; k < 2 * hidden; ++k) g[k] += in[k];
    act[0].apply(g, 2 * hidden, c_.clip);  // z and r
    if (c_.linear_before_reset) {
      for (int64_t k = 0; k < hidden; ++k) hh[k] = in[2 * hidden + k] + r[k] * hh[k];
    } else {
      for (int64_t k = 0; k < hidden; ++k) {
        reset_h[k] = r[k] * h[k];
        hh[k] = in[2 * hidden + k] + (r_bias != nullptr ? r_bias[2 * hidden + k] : 0.0f);
      }
      gemm_accumulate(1, hidden, hidden, 1.0f, {reset_h, hidden}, {r_t + 2 * hidden, gh}, hh, hidden);
    }
    act[1].apply(hh, hidden, c_.clip);
    for (int64_t k = 0; k < hidden; ++k) h[k] = (1.0f - z[k]) * hh[k] + z[k] * h[k];
  }

  /// Gates i, o, f, c; peepholes i, o, f.
  void lstm_step(const float* in, float* g, float* h, float* cell, const float* peephole, const Activation* act) const {
    const int64_t hidden = c_.hidden;
    float* i = g;
    float* o = g + hidden;
    float* f = g + 2 * hidden;
    float* cand = g + 3 * hidden;
    for (int64_t k = 0; k < 4 * hidden; ++k) g[k] += in[k];
    if (peephole != nullptr) {
      for (int64_t k = 0; k < hidden; ++k) {
        i[k] += peephole[k] * cell[k];
        f[k] += peephole[2 * hidden + k] * cell[k];
      }
    }
    act[0].apply(i, hidden, c_.clip);
    if (c_.input_forget) {
      for (int64_t k = 0; k < hidden; ++k) f[k] = 1.0f - i[k];
    } else {
      act[0].apply(f, hidden, c_.clip);
    }
    act[1].apply(cand, hidden, c_.clip);
    for (int64_t k = 0; k < hidden; ++k) cell[k] = f[k] * cell[k] + i[k] * cand[k];
    if (peephole != nullptr) {
      for (int64_t k = 0; k < hidden; ++k) o[k] += peephole[hidden + k] * cell[k];
    }
    act[0].apply(o, hidden, c_.clip);
    for (int64_t k = 0; k < hidden; ++k) h[k] = cell[k];
    act[2].apply(h, hidden, 0);  // h(C): the cell state is not clipped
    for (int64_t k = 0; k < hidden; ++k) h[k] *= o[k];
  }

  RecurrentConfig c_;
  int64_t w_t_, r_t_, xw_, step_, h_, cell_, reset_h_, total_;  // scratch offsets in floats
};

// ---- Preparing ----------------------------------------------------------------------

std::string check_shape(const char* name, const TensorInfo* info, const Shape& expected) {
  if (info == nullptr || info->shape == expected) return {};
  return std::string(name) + " has shape " + to_string(info->shape) + "; expected " + to_string(expected);
}

Prepared prepare_recurrent(const NodeContext& node, CellKind cell) {
  const bool lstm = cell == CellKind::kLstm;
  const size_t max_inputs = lstm ? 8 : 6;
  const size_t max_outputs = lstm ? 3 : 2;
  if (std::string why = check_arity(node, 3, max_inputs, 0, max_outputs); !why.empty()) {
    return prepare_error(node, why);
  }
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    const DType want = i == 4 ? DType::kInt32 : DType::kFloat32;
    if (std::string why = check_dtype("input", i, node.input(i), want); !why.empty()) {
      return prepare_error(node, why);
    }
  }
  RecurrentConfig c;
  c.cell = cell;
  const std::string direction = node.attr_string("direction", "forward");
  if (direction == "bidirectional") {
    c.directions = 2;
  } else if (direction == "reverse") {
    c.reverse = true;
  } else if (direction != "forward") {
    return prepare_error(node, "direction '" + direction + "' is not forward, reverse or bidirectional");
  }
  const int64_t layout = node.opset() >= 14 ? node.attr_int("layout", 0) : 0;
  if (layout != 0 && layout != 1) return prepare_error(node, "layout must be 0 or 1");
  c.batch_major = layout == 1;
  c.clip = node.has_attribute("clip") ? node.attr_float("clip", 0) : 0;
  if (node.has_attribute("clip") && !(c.clip > 0)) return prepare_error(node, "clip must be positive");
  c.linear_before_reset = cell == CellKind::kGru && node.attr_int("linear_before_reset", 0) != 0;
  c.input_forget = lstm && node.attr_int("input_forget", 0) != 0;

  const Shape& x = node.input(0)->shape;
  if (x.rank != 3) return prepare_error(node, "X must be 3-D; got " + to_string(x));
  c.seq = c.batch_major ? x[1] : x[0];
  c.batch = c.batch_major ? x[0] : x[1];
  c.input = x[2];
  const Shape& r = node.input(2)->shape;
  if (r.rank != 3) return prepare_error(node, "R must be 3-D; got " + to_string(r));
  c.hidden = r[2];
  if (node.has_attribute("hidden_size") && node.attr_int("hidden_size", 0) != c.hidden) {
    return prepare_error(
        node, "hidden_size " + std::to_string(node.attr_int("hidden_size", 0)) + " does not match R " + to_string(r));
  }
  if (c.hidden <= 0) return prepare_error(node, "hidden_size must be positive");
  const int64_t gh = c.gates() * c.hidden;
  const int64_t dirs = c.directions;
  const auto state = [&]() { return c.batch_major ? Shape{c.batch, dirs, c.hidden} : Shape{dirs, c.batch, c.hidden}; };
  std::string why = check_shape("W", node.input(1), Shape{dirs, gh, c.input});
  if (why.empty()) why = check_shape("R", node.input(2), Shape{dirs, gh, c.hidden});
  if (why.empty()) why = check_shape("B", node.input(3), Shape{dirs, 2 * gh});
  if (why.empty()) why = check_shape("sequence_lens", node.input(4), Shape{c.batch});
  if (why.empty()) why = check_shape("initial_h", node.input(5), state());
  if (why.empty() && lstm) why = check_shape("initial_c", node.input(6), state());
  if (why.empty() && lstm) why = check_shape("P", node.input(7), Shape{dirs, 3 * c.hidden});
  if (!why.empty()) return prepare_error(node, why);

  const Shape y = c.batch_major ? Shape{c.batch, c.seq, dirs, c.hidden} : Shape{c.seq, dirs, c.batch, c.hidden};
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    if (node.output(i) == nullptr) continue;
    if (std::string bad = check_output(node, i, i == 0 ? y : state(), DType::kFloat32); !bad.empty()) {
      return prepare_error(node, bad);
    }
  }
  std::vector<const char*> defaults = {"Tanh"};
  if (cell == CellKind::kGru) defaults = {"Sigmoid", "Tanh"};
  if (lstm) defaults = {"Sigmoid", "Tanh", "Tanh"};
  if (std::string bad = read_activations(node, defaults.size(), c.directions, defaults, &c.activations); !bad.empty()) {
    return prepare_error(node, bad);
  }
  // The scratch holds seq * batch * gates * hidden floats (X*W) and the transposed
  // weights: bound it so that its size cannot overflow.
  uint64_t floats = 0;
  for (const std::array<int64_t, 3>& part :
       {std::array<int64_t, 3>{c.seq, c.batch, gh}, std::array<int64_t, 3>{c.input + c.hidden + c.batch, gh, 1},
        std::array<int64_t, 3>{3 * c.batch, c.hidden, 1}}) {
    uint64_t product = 1;
    for (int64_t factor : part) {
      if (factor != 0 && product > kMaxScratchFloats / static_cast<uint64_t>(factor)) {
        return prepare_error(node, "needs more than 2^40 bytes of scratch memory");
      }
      product *= static_cast<uint64_t>(factor);
    }
    floats += product;
  }
  if (floats > kMaxScratchFloats) return prepare_error(node, "needs more than 2^40 bytes of scratch memory");
  c.num_inputs = node.num_inputs();
  c.num_outputs = node.num_outputs();
  return prepared<RecurrentKernel>(std::move(c));
}

Prepared prepare_rnn(const NodeContext& node) { return prepare_recurrent(node, CellKind::kRnn); }
Prepared prepare_gru(const NodeContext& node) { return prepare_recurrent(node, CellKind::kGru); }
Prepared prepare_lstm(const NodeContext& node) { return prepare_recurrent(node, CellKind::kLstm); }

}  // namespace

void add_recurrent_kernels(std::vector<KernelEntry>& table) {
  table.push_back({"GRU", prepare_gru});
  table.push_back({"LSTM", prepare_lstm});
  table.push_back({"RNN", prepare_rnn});
}

}  // namespace plugrt::portable
