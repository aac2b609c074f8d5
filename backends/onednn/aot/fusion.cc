// SPDX-License-Identifier: Apache-2.0
// Post-op fusion over a lowered op list (aot/op_list.h).
#include <cmath>

#include "aot/lowering.h"
#include "aot/op_list.h"

namespace plugrt::onednn {

namespace {

using blob::Algorithm;
using blob::OpKind;

/// Deconvolution takes none: oneDNN 2.6's jit deconvolution with a fused post-op runs up
/// to 50x slower than the bare primitive followed by the post-op as a step of its own.
bool takes_post_ops(OpKind kind) {
  return kind == OpKind::Convolution || kind == OpKind::MatMul || kind == OpKind::InnerProduct ||
         kind == OpKind::Binary;
}

/// A batch normalization takes element-wise post-ops only: init fuses a Relu into the
/// primitive (oneDNN's `fuse_norm_relu`) and runs any other as a step of its own.
bool takes_eltwise_post_ops(OpKind kind) { return takes_post_ops(kind) || kind == OpKind::BatchNorm; }

bool commutative(Algorithm algorithm) {
  return algorithm == Algorithm::Add || algorithm == Algorithm::Mul || algorithm == Algorithm::Max ||
         algorithm == Algorithm::Min;
}

bool has_bias(const Op& op) { return op.inputs.size() >= 3 && op.inputs[2] >= 0; }

/// Whether the op writes its result as the tensor's dims say: no view (an Einsum's matmul
/// may write through a permuted or merged one), or one that changes nothing. Only then do
/// a bias and binary post-ops, in the result's dims, fit the primitive's.
bool writes_in_order(const Op& op, const std::vector<Tensor>& tensors) {
  if (op.views.size() < 3) return true;
  const OperandView& dst = op.views[2];
  if (dst.dims != tensors[static_cast<size_t>(op.outputs[0])].dims) return false;
  for (size_t i = 0; i < dst.perm.size(); ++i) {
    if (dst.perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

/// Whether `operand` holds one value per channel (dim 1) of `out`, broadcast from the
/// right: [C], [C, 1...] or [1, C, 1...].
bool per_channel(const std::vector<int64_t>& operand, const std::vector<int64_t>& out) {
  if (out.size() < 2 || operand.size() > out.size() || operand.size() + 1 < out.size()) return false;
  const size_t shift = out.size() - operand.size();
  for (size_t d = 0; d < operand.size(); ++d) {
    if (operand[d] != (d + shift == 1 ? out[1] : 1)) return false;
  }
  return true;
}

/// Appends an element-wise op to `target`'s post-ops. Two affine maps in a row (Mul then
/// Div by constants, Add then Mul...) become one: a2 * (a1 * x + b1) + b2.
void append_eltwise(Op* target, const Op& op) {
  if (op.algorithm == Algorithm::Linear && !target->post_ops.empty()) {
    PostOp& last = target->post_ops.back();
    if (last.kind == blob::PostOpKind::Eltwise && last.algorithm == Algorithm::Linear) {
      last.beta = op.alpha * last.beta + op.beta;
      last.alpha *= op.alpha;
      return;
    }
  }
  target->post_ops.push_back(PostOp{blob::PostOpKind::Eltwise, op.algorithm, op.alpha, op.beta, -1});
}

/// Multiplies each output channel's weights by its scale: a convolution's weights are
/// [O, I/g, k...], a deconvolution's (ONNX's ConvTranspose) [I, O/g, k...].
void scale_output_channels(const Op& op, const std::vector<float>& scale, Tensor* weights) {
  const size_t rows = static_cast<size_t>(weights->dims[0]), columns = static_cast<size_t>(weights->dims[1]);
  const size_t taps = weights->data.size() / (rows * columns);
  const size_t rows_per_group = rows / static_cast<size_t>(op.groups);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t k = 0; k < columns; ++k) {
      const size_t channel = op.kind == OpKind::Convolution ? r : r / rows_per_group * columns + k;
      float* tap = &weights->data[(r * columns + k) * taps];
      for (size_t i = 0; i < taps; ++i) tap[i] *= scale[channel];
    }
  }
}

/// Folds an inference batch normalization into the convolution or deconvolution before it.
void fold_batch_norm(OpList* list, Op* conv, const Op& norm) {
  const auto& gamma = list->tensors[static_cast<size_t>(norm.inputs[1])].data;
  const auto& beta = list->tensors[static_cast<size_t>(norm.inputs[2])].data;
  const auto& mean = list->tensors[static_cast<size_t>(norm.inputs[3])].data;
  const auto& variance = list->tensors[static_cast<size_t>(norm.inputs[4])].data;
  const size_t channels = gamma.size();
  std::vector<float> bias(channels, 0.0f), scale(channels);
  if (has_bias(*conv)) bias = list->tensors[static_cast<size_t>(conv->inputs[2])].data;
  for (size_t c = 0; c < channels; ++c) {
    scale[c] = gamma[c] / std::sqrt(variance[c] + norm.epsilon);
    bias[c] = (bias[c] - mean[c]) * scale[c] + beta[c];
  }
  scale_output_channels(*conv, scale, &list->tensors[static_cast<size_t>(conv->inputs[1])]);
  Tensor tensor;
  tensor.dims = {static_cast<int64_t>(channels)};
  tensor.data = std::move(bias);
  tensor.constant = true;
  list->tensors.push_back(std::move(tensor));
  const int32_t index = static_cast<int32_t>(list->tensors.size() - 1);
  if (has_bias(*conv)) {
    conv->inputs[2] = index;
  } else {
    conv->inputs.resize(2);
    conv->inputs.push_back(index);
  }
}

}  // namespace

void fuse_post_ops(OpList* list) {
  std::vector<Op>& ops = list->ops;
  std::vector<Tensor>& tensors = list->tensors;
  std::vector<int> readers(tensors.size(), 0);
  for (const Op& op : ops) {
    for (int32_t t : op.inputs) {
      if (t >= 0) ++readers[static_cast<size_t>(t)];
    }
    for (const PostOp& post : op.post_ops) {
      if (post.operand >= 0) ++readers[static_cast<size_t>(post.operand)];
    }
  }
  for (uint32_t t : list->outputs) ++readers[t];
  std::vector<int64_t> producer(tensors.size(), -1);
  std::vector<bool> removed(ops.size(), false);

  // Whether tensor `t` is ready before op `p` runs.
  auto ready_before = [&](int32_t t, int64_t p) {
    return tensors[static_cast<size_t>(t)].constant || producer[static_cast<size_t>(t)] < p;
  };

  for (size_t j = 0; j < ops.size(); ++j) {
    Op& op = ops[j];
    const int32_t out = op.outputs.empty() ? -1 : op.outputs[0];
    bool fused = false;
    if (op.kind == OpKind::Binary && op.algorithm == Algorithm::Add && op.post_ops.empty()) {
      // A constant added per channel after a (de)convolution with neither bias nor
      // post-ops becomes its bias (so a batch normalization after it folds in too).
      for (size_t s = 0; s < 2 && !fused; ++s) {
        const int32_t t = op.inputs[s], other = op.inputs[1 - s];
        const int64_t p = producer[static_cast<size_t>(t)];
        if (p < 0 || readers[static_cast<size_t>(t)] != 1) continue;
        Op& target = ops[static_cast<size_t>(p)];
        const std::vector<int64_t>& dims = tensors[static_cast<size_t>(out)].dims;
        if ((target.kind != OpKind::Convolution && target.kind != OpKind::Deconvolution) || has_bias(target) ||
            !target.post_ops.empty() || tensors[static_cast<size_t>(t)].dims != dims ||
            !tensors[static_cast<size_t>(other)].constant ||
            !per_channel(tensors[static_cast<size_t>(other)].dims, dims)) {
          continue;
        }
        Tensor bias = tensors[static_cast<size_t>(other)];
        bias.dims = {dims[1]};
        tensors.push_back(std::move(bias));
        readers.push_back(1);
        producer.push_back(-1);
        target.inputs.resize(2);
        target.inputs.push_back(static_cast<int32_t>(tensors.size() - 1));
        target.outputs[0] = out;
        producer[static_cast<size_t>(out)] = p;
        --readers[static_cast<size_t>(t)];
        fused = true;
      }
    }
    if (!fused && (op.kind == OpKind::Eltwise || op.kind == OpKind::Binary)) {
      const size_t slots = op.kind == OpKind::Binary && commutative(op.algorithm) ? 2 : 1;
      for (size_t s = 0; s < slots && !fused; ++s) {
        const int32_t t = op.inputs[s];
        const int64_t p = producer[static_cast<size_t>(t)];
        if (p < 0 || readers[static_cast<size_t>(t)] != 1) continue;
        const OpKind target_kind = ops[static_cast<size_t>(p)].kind;
        if (op.kind == OpKind::Eltwise ? !takes_eltwise_post_ops(target_kind) : !takes_post_ops(target_kind)) continue;
        Op& target = ops[static_cast<size_t>(p)];
        if (op.kind == OpKind::Eltwise) {
          append_eltwise(&target, op);
        } else {
          const int32_t other = op.inputs[1 - s];
          if (tensors[static_cast<size_t>(t)].dims != tensors[static_cast<size_t>(out)].dims) continue;
          if (!writes_in_order(target, tensors)) continue;
          if (!ready_before(other, p)) continue;
          const Tensor& operand = tensors[static_cast<size_t>(other)];
          const int64_t n = tensors[static_cast<size_t>(out)].dims.back();
          bool row = operand.constant && operand.dims.back() == n;
          for (size_t d = 0; d + 1 < operand.dims.size(); ++d) row &= operand.dims[d] == 1;
          const bool bias = op.algorithm == Algorithm::Add && row && target.post_ops.empty() && !has_bias(target) &&
                            target.views.empty() &&
                            (target.kind == OpKind::MatMul || target.kind == OpKind::InnerProduct);
          if (bias) {
            Tensor& b = tensors[static_cast<size_t>(other)];
            if (target.kind == OpKind::InnerProduct) b.dims = {n};
            target.inputs.resize(2);
            target.inputs.push_back(other);
          } else {
            target.post_ops.push_back(PostOp{blob::PostOpKind::Binary, op.algorithm, 0, 0, other});
          }
          for (const PostOp& post : op.post_ops) target.post_ops.push_back(post);
        }
        target.outputs[0] = out;
        producer[static_cast<size_t>(out)] = p;
        --readers[static_cast<size_t>(t)];
        fused = true;
      }
    }
    if (!fused && op.kind == OpKind::Eltwise && op.algorithm == Algorithm::Linear && op.beta == 0 && op.alpha != 0) {
      // A scaling after a copy: the copy's output scale (whose 0 the blob reads as 1, so a
      // product with zero stays a step of its own).
      const int32_t t = op.inputs[0];
      const int64_t p = producer[static_cast<size_t>(t)];
      if (p >= 0 && readers[static_cast<size_t>(t)] == 1 && ops[static_cast<size_t>(p)].kind == OpKind::Reorder) {
        ops[static_cast<size_t>(p)].alpha *= op.alpha;
        ops[static_cast<size_t>(p)].outputs[0] = out;
        producer[static_cast<size_t>(out)] = p;
        fused = true;
      }
    }
    if (!fused && op.kind == OpKind::BatchNorm) {
      const int32_t t = op.inputs[0];
      const int64_t p = producer[static_cast<size_t>(t)];
      const OpKind target_kind = p >= 0 ? ops[static_cast<size_t>(p)].kind : OpKind::BatchNorm;
      if (p >= 0 && readers[static_cast<size_t>(t)] == 1 &&
          (target_kind == OpKind::Convolution || target_kind == OpKind::Deconvolution) &&
          ops[static_cast<size_t>(p)].post_ops.empty()) {
        fold_batch_norm(list, &ops[static_cast<size_t>(p)], op);
        readers.push_back(1);
        producer.push_back(-1);
        ops[static_cast<size_t>(p)].outputs[0] = out;
        producer[static_cast<size_t>(out)] = p;
        fused = true;
      }
    }
    if (fused) {
      removed[j] = true;
      continue;
    }
    for (int32_t t : op.outputs) producer[static_cast<size_t>(t)] = static_cast<int64_t>(j);
  }

  // Keep the ops that remain and the tensors they, or the partition's edges, use.
  std::vector<Op> kept;
  for (size_t j = 0; j < ops.size(); ++j) {
    if (!removed[j]) kept.push_back(std::move(ops[j]));
  }
  std::vector<int32_t> remap(tensors.size(), -1);
  std::vector<Tensor> used;
  auto keep = [&](int32_t t) -> int32_t {
    if (t < 0) return t;
    if (remap[static_cast<size_t>(t)] < 0) {
      remap[static_cast<size_t>(t)] = static_cast<int32_t>(used.size());
      used.push_back(std::move(tensors[static_cast<size_t>(t)]));
    }
    return remap[static_cast<size_t>(t)];
  };
  for (uint32_t& t : list->inputs) t = static_cast<uint32_t>(keep(static_cast<int32_t>(t)));
  for (uint32_t& t : list->outputs) t = static_cast<uint32_t>(keep(static_cast<int32_t>(t)));
  for (Op& op : kept) {
    for (int32_t& t : op.inputs) t = keep(t);
    for (int32_t& t : op.outputs) t = keep(t);
    for (PostOp& post : op.post_ops) post.operand = keep(post.operand);
  }
  list->ops = std::move(kept);
  list->tensors = std::move(used);
}

}  // namespace plugrt::onednn
