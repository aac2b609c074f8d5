// SPDX-License-Identifier: Apache-2.0
// Einsum (opset 12 on): any equation of ONNX's grammar, with repeated indices
// (diagonals), a broadcasting ellipsis and an implicit output; float32 (also as a
// GEMM) and every other numeric dtype (the loop, in double for double, float for the
// 16-bit floats, wrapping integer arithmetic).
//
// Every distinct index of the equation is a "label"; each operand reads a label through
// a stride (the sum of its axes' strides when the label repeats, 0 where an ellipsis
// dimension broadcasts). Two-operand equations whose labels are all batch, row, column
// or contracted ones run as a batched GEMM, gathering an operand or scattering the result
// only when it is not already laid out that way. Everything else runs one loop over all
// label values.
#include <algorithm>
#include <array>
#include <cstring>

#include "gemm.h"
#include "kernel_families.h"
#include "plugrt/sdk/einsum.h"
#include "typed.h"

namespace plugrt::portable {

namespace {

constexpr int kMaxLabels = 64;  // 52 letters and the ellipsis' dims fit
constexpr size_t kMaxOperands = 8;
constexpr uint64_t kMaxIterations = uint64_t{1} << 40;

using Strides = std::array<int64_t, kMaxLabels>;

/// Loops over every value of `sizes[0..count)` (the last fastest), keeping an offset
/// per operand; calls body(offsets) at each.
template <size_t N, typename Body>
void for_each_index(int count, const int64_t* sizes, const std::array<const Strides*, N>& strides, size_t operands,
                    Body body) {
  int64_t total = 1;
  for (int l = 0; l < count; ++l) total *= sizes[l];
  if (total == 0) return;
  std::array<int64_t, kMaxLabels> index{};
  std::array<int64_t, N> offsets{};
  for (int64_t i = 0; i < total; ++i) {
    body(offsets);
    for (int l = count - 1; l >= 0; --l) {
      for (size_t k = 0; k < operands; ++k) offsets[k] += (*strides[k])[static_cast<size_t>(l)];
      if (++index[static_cast<size_t>(l)] < sizes[l]) break;
      for (size_t k = 0; k < operands; ++k) offsets[k] -= (*strides[k])[static_cast<size_t>(l)] * sizes[l];
      index[static_cast<size_t>(l)] = 0;
    }
  }
}

/// The parsed equation: labels in loop order (the output's first), their sizes, and each
/// operand's strides over them.
struct Plan {
  int num_labels = 0;
  int num_output_labels = 0;
  std::array<int64_t, kMaxLabels> sizes{};
  std::vector<Strides> input_strides;
  Strides output_strides{};
  int64_t output_count = 0;
};

/// The general case: out[o] = sum over the other labels of the product of the inputs,
/// in Compute<T> (16-bit floats accumulate in float scratch).
template <typename T>
class EinsumLoopKernel final : public Kernel {
 public:
  using Acc = Compute<T>;
  explicit EinsumLoopKernel(Plan plan) : plan_(std::move(plan)) {}

  size_t scratch_bytes() const override {
    return kIsHalf<T> ? static_cast<size_t>(plan_.output_count) * sizeof(Acc) : 0;
  }

  void run(const KernelArgs& args) const override {
    T* out = static_cast<T*>(args.outputs[0]);
    Acc* sums = nullptr;
    if constexpr (kIsHalf<T>) {
      sums = static_cast<Acc*>(args.scratch);
    } else {
      sums = out;
    }
    std::fill_n(sums, plan_.output_count, Acc{0});
    const size_t inputs = plan_.input_strides.size();
    std::array<const T*, kMaxOperands> data{};
    std::array<const Strides*, kMaxOperands + 1> strides{};
    for (size_t k = 0; k < inputs; ++k) {
      data[k] = static_cast<const T*>(args.inputs[k]);
      strides[k] = &plan_.input_strides[k];
    }
    strides[inputs] = &plan_.output_strides;
    for_each_index(plan_.num_labels, plan_.sizes.data(), strides, inputs + 1,
                   [&](const std::array<int64_t, kMaxOperands + 1>& offsets) {
                     if constexpr (std::is_integral_v<T>) {  // wraps around, as ONNX integers do
                       uint64_t product = 1;
                       for (size_t k = 0; k < inputs; ++k) product *= static_cast<uint64_t>(data[k][offsets[k]]);
                       sums[offsets[inputs]] = static_cast<T>(static_cast<uint64_t>(sums[offsets[inputs]]) + product);
                     } else {
                       Acc product = 1;
                       for (size_t k = 0; k < inputs; ++k) product *= load(data[k][offsets[k]]);
                       sums[offsets[inputs]] += product;
                     }
                   });
    if constexpr (kIsHalf<T>) {
      for (int64_t i = 0; i < plan_.output_count; ++i) out[i] = store<T>(sums[i]);
    }
  }

 private:
  Plan plan_;
};

/// One operand of the batched GEMM, as labels in the order the GEMM wants and the
/// operand's strides over them.
struct GemmOperand {
  int count = 0;
  std::array<int64_t, kMaxLabels> sizes{};
  Strides strides{};
  bool direct = false;      // already laid out as the GEMM wants: no gather
  bool transposed = false;  // B only: laid out as [batch, n, k]
  int64_t elements() const {
    int64_t n = 1;
    for (int l = 0; l < count; ++l) n *= sizes[static_cast<size_t>(l)];
    return n;
  }
};

/// out[b] = A[b] (m x k) * B[b] (k x n) for every batch b.
class EinsumGemmKernel final : public Kernel {
 public:
  EinsumGemmKernel(int64_t batch, int64_t m, int64_t n, int64_t k, GemmOperand a, GemmOperand b, GemmOperand c)
      : batch_(batch), m_(m), n_(n), k_(k), a_(a), b_(b), c_(c) {}

  size_t scratch_bytes() const override {
    return static_cast<size_t>((a_.direct ? 0 : a_.elements()) + (b_.direct ? 0 : b_.elements()) +
                               (c_.direct ? 0 : c_.elements())) *
           sizeof(float);
  }

  void run(const KernelArgs& args) const override {
    float* scratch = static_cast<float*>(args.scratch);
    const float* a = gathered(a_, static_cast<const float*>(args.inputs[0]), &scratch);
    const float* b = gathered(b_, static_cast<const float*>(args.inputs[1]), &scratch);
    float* out = static_cast<float*>(args.outputs[0]);
    float* c = c_.direct ? out : scratch;
    std::fill_n(c, batch_ * m_ * n_, 0.0f);
    for (int64_t i = 0; i < batch_; ++i) {
      const MatrixRef b_ref = b_.transposed ? MatrixRef{b + i * k_ * n_, k_, true} : MatrixRef{b + i * k_ * n_, n_};
      gemm_accumulate(m_, n_, k_, 1.0f, {a + i * m_ * k_, k_}, b_ref, c + i * m_ * n_, n_);
    }
    if (!c_.direct) {  // scatter [batch, m, n] into the output's order
      const std::array<const Strides*, 1> strides{&c_.strides};
      int64_t i = 0;
      for_each_index(c_.count, c_.sizes.data(), strides, 1,
                     [&](const std::array<int64_t, 1>& offsets) { out[offsets[0]] = c[i++]; });
    }
  }

 private:
  static const float* gathered(const GemmOperand& operand, const float* data, float** scratch) {
    if (operand.direct) return data;
    float* packed = *scratch;
    *scratch += operand.elements();
    const std::array<const Strides*, 1> strides{&operand.strides};
    int64_t i = 0;
    for_each_index(operand.count, operand.sizes.data(), strides, 1,
                   [&](const std::array<int64_t, 1>& offsets) { packed[i++] = data[offsets[0]]; });
    return packed;
  }

  int64_t batch_, m_, n_, k_;
  GemmOperand a_, b_, c_;
};

// ---- Planning -----------------------------------------------------------------------

/// Builds the plan: labels, sizes, strides, and checks the output's shape.
std::string make_plan(const NodeContext& node, const std::string& equation, Plan* plan, Shape* out_shape) {
  sdk::EinsumEquation parsed;
  if (std::string why = sdk::parse_einsum(equation, &parsed); !why.empty()) return why;
  const std::vector<sdk::EinsumTerm>& terms = parsed.inputs;
  if (terms.size() != node.num_inputs()) {
    return "the equation has " + std::to_string(terms.size()) + " input terms but the node has " +
           std::to_string(node.num_inputs()) + " inputs";
  }
  if (terms.size() > kMaxOperands) return "at most " + std::to_string(kMaxOperands) + " inputs are supported";
  // The ellipsis covers the dims the letters leave; all ellipses broadcast, right-aligned.
  int ellipsis_rank = 0;
  std::vector<int> ranks;
  for (size_t i = 0; i < terms.size(); ++i) {
    const TensorInfo* input = node.input(i);
    if (input == nullptr) return "input " + std::to_string(i) + " is missing";
    if (std::string why = check_dtype("input", i, input, node.input(0)->dtype); !why.empty()) return why;
    const int rank = input->shape.rank - static_cast<int>(terms[i].letters.size());
    if (rank < 0 || (rank > 0 && terms[i].ellipsis_at < 0)) {
      return "term " + std::to_string(i) + " has " + std::to_string(terms[i].letters.size()) + " indices but input " +
             std::to_string(i) + " has shape " + to_string(input->shape);
    }
    ranks.push_back(rank);
    ellipsis_rank = std::max(ellipsis_rank, rank);
  }
  // Labels: ellipsis dims are 0 .. ellipsis_rank - 1, letters follow by first appearance.
  std::string letters;
  for (const sdk::EinsumTerm& term : terms) {
    for (char c : term.letters) {
      if (letters.find(c) == std::string::npos) letters += c;
    }
  }
  const int num_labels = ellipsis_rank + static_cast<int>(letters.size());
  if (num_labels > kMaxLabels) return "the equation has too many indices";
  std::vector<int64_t> size(static_cast<size_t>(num_labels), 1);
  std::vector<bool> sized(static_cast<size_t>(num_labels), false);
  std::vector<std::array<int64_t, kMaxLabels>> strides(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    const Shape& shape = node.input(i)->shape;
    const std::array<int64_t, kMaxRank> contiguous = contiguous_strides(shape);
    strides[i].fill(0);
    const int e = ranks[i];
    for (int axis = 0; axis < shape.rank; ++axis) {
      const int at = terms[i].ellipsis_at;
      int label;
      bool broadcastable = false;
      if (at >= 0 && axis >= at && axis < at + e) {
        label = ellipsis_rank - e + (axis - at);
        broadcastable = true;
      } else {
        const int letter = axis < at || at < 0 ? axis : axis - e;
        label = ellipsis_rank + static_cast<int>(letters.find(terms[i].letters[static_cast<size_t>(letter)]));
      }
      const auto l = static_cast<size_t>(label);
      const int64_t dim = shape[axis];
      if (broadcastable && dim == 1) continue;  // stride 0: broadcasts to any size
      if (sized[l] && size[l] != dim) {
        if (!broadcastable || size[l] != 1) {
          return "index " +
                 (label < ellipsis_rank ? std::string("of the ellipsis")
                                        : "'" + letters.substr(static_cast<size_t>(label - ellipsis_rank), 1) + "'") +
                 " has size " + std::to_string(size[l]) + " in one place and " + std::to_string(dim) + " in input " +
                 std::to_string(i) + " " + to_string(shape);
        }
      }
      size[l] = dim;
      sized[l] = true;
      strides[i][l] += contiguous[static_cast<size_t>(axis)];
    }
  }
  // The output's labels (parse_einsum checked its letters).
  std::vector<int> output;
  const sdk::EinsumTerm& out = parsed.output;
  for (size_t k = 0; k <= out.letters.size(); ++k) {
    if (static_cast<int>(k) == out.ellipsis_at) {
      for (int l = 0; l < ellipsis_rank; ++l) output.push_back(l);
    }
    if (k == out.letters.size()) break;
    output.push_back(ellipsis_rank + static_cast<int>(letters.find(out.letters[k])));
  }
  if (output.size() > static_cast<size_t>(kMaxRank)) return "the output would have rank above 8";
  // Loop order: the output's labels, then the summed ones.
  std::vector<int> order = output;
  for (int l = 0; l < num_labels; ++l) {
    if (std::find(output.begin(), output.end(), l) == output.end()) order.push_back(l);
  }
  // Bound the loop (and any gathered operand) so that no product below overflows.
  uint64_t iterations = 1;
  for (int64_t dim : size) {
    if (dim != 0 && iterations > kMaxIterations / static_cast<uint64_t>(dim)) {
      return "the equation takes more than 2^40 multiply-adds";
    }
    iterations *= static_cast<uint64_t>(dim);
  }
  *out_shape = Shape();
  for (int l : output) out_shape->push_back(size[static_cast<size_t>(l)]);
  const std::array<int64_t, kMaxRank> out_strides = contiguous_strides(*out_shape);
  plan->num_labels = num_labels;
  plan->num_output_labels = static_cast<int>(output.size());
  plan->input_strides.assign(terms.size(), Strides{});
  plan->output_strides.fill(0);
  for (size_t p = 0; p < order.size(); ++p) {
    const auto l = static_cast<size_t>(order[p]);
    plan->sizes[p] = size[l];
    for (size_t i = 0; i < terms.size(); ++i) plan->input_strides[i][p] = strides[i][l];
    if (p < output.size()) plan->output_strides[p] = out_strides[p];
  }
  plan->output_count = out_shape->num_elements();
  return {};
}

// ---- The batched-GEMM form ----------------------------------------------------------

/// Whether `operand`'s strides are those of a contiguous tensor of its sizes.
bool is_contiguous(const GemmOperand& operand) {
  int64_t expected = 1;
  for (int l = operand.count - 1; l >= 0; --l) {
    const auto u = static_cast<size_t>(l);
    if (operand.sizes[u] != 1 && operand.strides[u] != expected) return false;
    expected *= operand.sizes[u];
  }
  return true;
}

/// The GEMM kernel when every label is batch (both inputs and the output), m (A and the
/// output), n (B and the output) or k (both inputs, summed); null otherwise.
Prepared try_gemm(const Plan& plan) {
  if (plan.input_strides.size() != 2) return {};
  std::vector<int> batch, m, n, k;
  for (int p = 0; p < plan.num_labels; ++p) {
    const auto u = static_cast<size_t>(p);
    const bool in_a = plan.input_strides[0][u] != 0, in_b = plan.input_strides[1][u] != 0;
    const bool in_out = p < plan.num_output_labels;
    if (plan.sizes[u] == 1) {  // a size-1 label is wherever it is convenient: treat as batch
      if (in_out) batch.push_back(p);
      continue;
    }
    if (in_a && in_b) {
      (in_out ? batch : k).push_back(p);
    } else if (in_a && in_out) {
      m.push_back(p);
    } else if (in_b && in_out) {
      n.push_back(p);
    } else {
      return {};  // summed within one input, or an output index that broadcasts in both
    }
  }
  auto product = [&plan](const std::vector<int>& labels) {
    int64_t result = 1;
    for (int p : labels) result *= plan.sizes[static_cast<size_t>(p)];
    return result;
  };
  auto operand = [&plan](const std::vector<std::vector<int>>& groups, const Strides& strides) {
    GemmOperand result;
    for (const std::vector<int>& group : groups) {
      for (int p : group) {
        const auto u = static_cast<size_t>(result.count++);
        result.sizes[u] = plan.sizes[static_cast<size_t>(p)];
        result.strides[u] = strides[static_cast<size_t>(p)];
      }
    }
    return result;
  };
  GemmOperand a = operand({batch, m, k}, plan.input_strides[0]);
  a.direct = is_contiguous(a);
  GemmOperand b = operand({batch, k, n}, plan.input_strides[1]);
  b.direct = is_contiguous(b);
  if (!b.direct) {
    GemmOperand b_t = operand({batch, n, k}, plan.input_strides[1]);
    if (is_contiguous(b_t)) {
      b.direct = true;
      b.transposed = true;
    }
  }
  GemmOperand c = operand({batch, m, n}, plan.output_strides);
  c.direct = is_contiguous(c);
  return prepared<EinsumGemmKernel>(product(batch), product(m), product(n), product(k), a, b, c);
}

Prepared prepare_einsum(const NodeContext& node) {
  if (std::string why = check_arity(node, 1, kMaxOperands, 1, 1); !why.empty()) return prepare_error(node, why);
  if (!node.has_attribute("equation")) return prepare_error(node, "the attribute 'equation' is required");
  Plan plan;
  Shape out_shape;
  if (std::string why = make_plan(node, node.attr_string("equation", ""), &plan, &out_shape); !why.empty()) {
    return prepare_error(node, "equation '" + node.attr_string("equation", "") + "': " + why);
  }
  const DType dtype = node.input(0)->dtype;
  if (std::string why = check_output(node, 0, out_shape, dtype); !why.empty()) return prepare_error(node, why);
  return dispatch<kNumericTypes>(node, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      if (Prepared gemm = try_gemm(plan); gemm.kernel != nullptr) return gemm;
    }
    return prepared<EinsumLoopKernel<T>>(std::move(plan));
  });
}

}  // namespace

void add_einsum_kernels(std::vector<KernelEntry>& table) { table.push_back({"Einsum", prepare_einsum}); }

}  // namespace plugrt::portable
