// SPDX-License-Identifier: Apache-2.0
// Writing an op list as the blob init reads (schema/onednn_blob.fbs).
#include <algorithm>
#include <cstring>

#include "aot/lowering.h"
#include "aot/op_list.h"
#include "src/blob_format.h"

namespace plugrt::onednn {

namespace {

/// The oldest format version that reads `list`: 10 with a Pad in reflect or edge mode, a
/// Gather or a slice with a negative step, 9
/// with a matmul that reads its tensors through views (an Einsum), 8 with a per-axis QuantizeLinear or
/// DequantizeLinear, 7 with a per-tensor one, 6 with a quantized op, 5 with a channel shuffle or a nearest
/// resampling, 4 with a deconvolution, else 3, so an older plugin still takes the blobs
/// that need nothing newer.
uint32_t blob_version(const OpList& list) {
  for (const Op& op : list.ops) {
    const bool backwards = std::any_of(op.steps.begin(), op.steps.end(), [](int64_t step) { return step < 0; });
    if ((op.kind == blob::OpKind::Pad && op.algorithm != blob::Algorithm::None) || op.kind == blob::OpKind::Gather ||
        backwards) {
      return 10;
    }
  }
  for (const Op& op : list.ops) {
    if (!op.views.empty()) return 9;
  }
  for (const Op& op : list.ops) {
    if (!op.zero_points.empty()) return 8;
  }
  for (const Op& op : list.ops) {
    if (op.kind == blob::OpKind::Quantize || op.kind == blob::OpKind::Dequantize) return 7;
  }
  for (const Op& op : list.ops) {
    if (op.kind == blob::OpKind::QuantizedConvolution || op.kind == blob::OpKind::QuantizedMatMul) return 6;
  }
  uint32_t version = 3;
  for (const Op& op : list.ops) {
    if (op.kind == blob::OpKind::Shuffle ||
        (op.kind == blob::OpKind::Resampling && op.algorithm == blob::Algorithm::Nearest)) {
      return 5;
    }
    if (op.kind == blob::OpKind::Deconvolution) version = 4;
  }
  return version;
}

}  // namespace

std::vector<uint8_t> write_blob(const OpList& list) {
  flatbuffers::FlatBufferBuilder builder(1024);
  std::vector<flatbuffers::Offset<blob::Tensor>> tensors;
  for (const Tensor& tensor : list.tensors) {
    auto dims = builder.CreateVector(tensor.dims);
    const bool named = tensor.constant && !tensor.constant_name.empty();
    const bool typed = tensor.dtype != blob::DataType::F32;
    flatbuffers::Offset<flatbuffers::Vector<float>> data;
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> bytes;
    flatbuffers::Offset<flatbuffers::String> name;
    if (named) {
      name = builder.CreateString(tensor.constant_name);
    } else if (tensor.constant && typed) {
      builder.ForceVectorAlignment(tensor.bytes.size(), sizeof(uint8_t), 64);
      bytes = builder.CreateVector(tensor.bytes);
    } else if (tensor.constant) {
      builder.ForceVectorAlignment(tensor.data.size(), sizeof(float), 64);
      data = builder.CreateVector(tensor.data);
    }
    blob::TensorBuilder tb(builder);
    tb.add_dims(dims);
    if (named) tb.add_constant(name);
    if (tensor.constant && !named) (typed ? tb.add_bytes(bytes) : tb.add_data(data));
    if (typed) tb.add_dtype(tensor.dtype);
    tb.add_external_input(tensor.external_input);
    tb.add_external_output(tensor.external_output);
    tensors.push_back(tb.Finish());
  }
  std::vector<flatbuffers::Offset<blob::Op>> ops;
  for (const Op& op : list.ops) {
    std::vector<flatbuffers::Offset<blob::PostOp>> posts;
    for (const PostOp& post : op.post_ops) {
      posts.push_back(blob::CreatePostOp(builder, post.kind, post.algorithm, post.alpha, post.beta, post.operand));
    }
    auto inputs = builder.CreateVector(op.inputs);
    auto outputs = builder.CreateVector(op.outputs);
    auto strides = builder.CreateVector(op.strides);
    auto dilations = builder.CreateVector(op.dilations);
    auto begin = builder.CreateVector(op.padding_begin);
    auto end = builder.CreateVector(op.padding_end);
    auto kernel = builder.CreateVector(op.kernel);
    auto perm = builder.CreateVector(op.perm);
    auto starts = builder.CreateVector(op.starts);
    auto steps = builder.CreateVector(op.steps);
    auto post_ops = builder.CreateVector(posts);
    auto name = builder.CreateString(op.name);
    flatbuffers::Offset<flatbuffers::Vector<float>> scales;
    if (!op.scales.empty()) scales = builder.CreateVector(op.scales);
    flatbuffers::Offset<flatbuffers::Vector<int32_t>> zero_points;
    if (!op.zero_points.empty()) zero_points = builder.CreateVector(op.zero_points);
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<blob::OperandView>>> views;
    if (!op.views.empty()) {
      std::vector<flatbuffers::Offset<blob::OperandView>> each;
      for (const OperandView& view : op.views) {
        each.push_back(
            blob::CreateOperandView(builder, builder.CreateVector(view.dims), builder.CreateVector(view.perm)));
      }
      views = builder.CreateVector(each);
    }
    blob::OpBuilder ob(builder);
    ob.add_kind(op.kind);
    ob.add_algorithm(op.algorithm);
    ob.add_inputs(inputs);
    ob.add_outputs(outputs);
    ob.add_alpha(op.alpha);
    ob.add_beta(op.beta);
    ob.add_strides(strides);
    ob.add_dilations(dilations);
    ob.add_padding_begin(begin);
    ob.add_padding_end(end);
    ob.add_kernel(kernel);
    ob.add_groups(op.groups);
    ob.add_axis(op.axis);
    ob.add_epsilon(op.epsilon);
    ob.add_perm(perm);
    ob.add_starts(starts);
    ob.add_steps(steps);
    ob.add_post_ops(post_ops);
    ob.add_name(name);
    if (!op.scales.empty()) {
      ob.add_scales(scales);
      ob.add_src_zero_point(op.src_zero_point);
      ob.add_dst_zero_point(op.dst_zero_point);
    }
    if (!op.zero_points.empty()) ob.add_zero_points(zero_points);
    if (!op.views.empty()) ob.add_views(views);
    ops.push_back(ob.Finish());
  }
  auto tensor_vector = builder.CreateVector(tensors);
  auto op_vector = builder.CreateVector(ops);
  auto input_vector = builder.CreateVector(list.inputs);
  auto output_vector = builder.CreateVector(list.outputs);
  builder.Finish(blob::CreateBlob(builder, tensor_vector, op_vector, input_vector, output_vector),
                 blob::BlobIdentifier());

  std::vector<uint8_t> out(kBlobHeaderSize + builder.GetSize());
  kBlobFormat.write_header(out.data(), blob_version(list));
  std::memcpy(out.data() + kBlobHeaderSize, builder.GetBufferPointer(), builder.GetSize());
  return out;
}

bool Lowering::name_constants() {
  bool named = false;
  for (Tensor& tensor : list_.tensors) {
    const bool typed = tensor.dtype != blob::DataType::F32;
    const size_t size = typed ? tensor.bytes.size() : tensor.data.size() * sizeof(float);
    if (!tensor.constant || !graph_.valid(tensor.source) || size == 0) continue;
    const ir::Value& value = graph_.value(tensor.source);
    const auto* bytes = value.data();
    const void* ours = typed ? static_cast<const void*>(tensor.bytes.data()) : tensor.data.data();
    if (value.name() == nullptr || value.name()->size() == 0 || bytes == nullptr || bytes->size() != size ||
        std::memcmp(bytes->data(), ours, size) != 0) {
      continue;  // changed on the way (or nameless): the blob keeps its own copy
    }
    tensor.constant_name = value.name()->str();
    named = true;
  }
  return named;
}

std::vector<uint8_t> Lowering::finish(std::string* error) {
  const ir::Graph& graph = graph_.graph();
  auto mark = [&](const flatbuffers::Vector<int32_t>* values, bool is_input) -> bool {
    if (values == nullptr) return true;
    for (flatbuffers::uoffset_t k = 0; k < values->size(); ++k) {
      const int32_t value = values->Get(k);
      auto found = value_tensor_.find(value);
      if (found == value_tensor_.end()) {
        *error = std::string("graph ") + (is_input ? "input" : "output") + " " + std::to_string(k) +
                 " is not read or written by any lowered node";
        return false;
      }
      Tensor& tensor = list_.tensors[static_cast<size_t>(found->second)];
      if (tensor.external_input != -1 || tensor.external_output != -1) {
        *error = "value " + std::to_string(value) + " is listed twice among the graph's inputs and outputs";
        return false;
      }
      (is_input ? tensor.external_input : tensor.external_output) = static_cast<int32_t>(k);
      (is_input ? list_.inputs : list_.outputs).push_back(static_cast<uint32_t>(found->second));
    }
    return true;
  };
  if (!mark(graph.inputs(), true) || !mark(graph.outputs(), false)) return {};
  if (list_.outputs.empty() || list_.ops.empty()) {
    *error = "the partition has no nodes or no outputs";
    return {};
  }
  fuse_post_ops(&list_);
  if (name_constants_) names_constants_ = name_constants();
  return write_blob(list_);
}

}  // namespace plugrt::onednn
