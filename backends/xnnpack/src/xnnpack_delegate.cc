// SPDX-License-Identifier: Apache-2.0
#include "src/xnnpack_delegate.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "src/blob_format.h"
#include "src/layout.h"
#include "src/threadpool.h"
#include "xnnpack_blob_generated.h"

namespace plugrt::xnnpack {

namespace {

using blob::NodeKind;

const char* xnn_status_name(xnn_status status) {
  switch (status) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
  }
  return "unknown status";
}

/// What a failed XNNPACK call means for the host. A blob this XNNPACK refuses to build
/// is reported as incompatible, so the partition still runs on its portable fallback.
sdk::Status from_xnn(xnn_status status, const std::string& what) {
  const std::string message = what + ": " + xnn_status_name(status);
  return status == xnn_status_out_of_memory ? sdk::Status::out_of_memory(message)
                                            : sdk::Status::incompatible_blob(message);
}

sdk::Status invalid(std::string message) { return sdk::Status(PLUGRT_STATUS_INVALID_PROGRAM, std::move(message)); }

const char* kind_name(NodeKind kind) { return blob::EnumNameNodeKind(kind); }

template <typename T>
size_t length(const flatbuffers::Vector<T>* vector) {
  return vector == nullptr ? 0 : vector->size();
}

/// The most a blob's tensors may take at run time: a program's bound on an arena.
constexpr uint64_t kMaxRuntimeBytes = uint64_t{1} << 40;

template <typename T>
bool elements_aligned(const flatbuffers::Vector<T>* vector) {
  return length(vector) == 0 || reinterpret_cast<uintptr_t>(vector->Data()) % alignof(T) == 0;
}

/// The size of one element of `datatype`, or 0 for a type this build does not know.
size_t element_size(blob::DataType datatype) {
  switch (datatype) {
    case blob::DataType::Float32:
    case blob::DataType::QInt32:
    case blob::DataType::QCInt32: return 4;
    case blob::DataType::QInt8:
    case blob::DataType::QUInt8:
    case blob::DataType::QCInt8: return 1;
  }
  return 0;
}

/// Whether a tensor holds static data (float32 `data`, or the quantized types' bytes).
bool has_static_data(const blob::Tensor& tensor) {
  return tensor.data() != nullptr || tensor.quantized_data() != nullptr;
}

/// The FlatBuffers verifier checks the alignment of a vector's length, not of its
/// elements: a crafted blob can misalign the 8-byte elements read below, and the int32
/// static data XNNPACK reads.
bool eight_byte_vectors_aligned(const blob::Blob& root) {
  for (flatbuffers::uoffset_t t = 0; t < length(root.tensors()); ++t) {
    const blob::Tensor* tensor = root.tensors()->Get(t);
    if (!elements_aligned(tensor->dims()) || !elements_aligned(tensor->host_dims())) return false;
    if (tensor->quantized_data() != nullptr &&
        reinterpret_cast<uintptr_t>(tensor->quantized_data()->Data()) % alignof(int32_t) != 0) {
      return false;
    }
  }
  for (flatbuffers::uoffset_t n = 0; n < length(root.nodes()); ++n) {
    const blob::Node* node = root.nodes()->Get(n);
    if (!elements_aligned(node->pre_paddings()) || !elements_aligned(node->post_paddings()) ||
        !elements_aligned(node->new_shape())) {
      return false;
    }
  }
  return true;
}

std::vector<uint64_t> dims_of(const blob::Blob& root, uint32_t tensor) {
  const auto* dims = root.tensors()->Get(tensor)->dims();
  return std::vector<uint64_t>(dims->begin(), dims->end());
}

/// Whether a deconvolution's filter, bias and output have the dims its parameters give.
/// XNNPACK's define call checks ranks only, and its operator writes the output it
/// computes from the parameters, whatever the tensor holds. Indices and the window's
/// lengths are checked by the caller.
bool deconvolution_consistent(const blob::Blob& root, const blob::Node& node) {
  constexpr uint64_t kMax = 65535, kMaxDim = uint64_t{1} << 31;
  const auto* adjustment = node.adjustment();
  if (adjustment == nullptr || adjustment->size() != 2 || length(node.inputs()) != 3) return false;
  const std::vector<uint64_t> x = dims_of(root, node.inputs()->Get(0));
  const std::vector<uint64_t> filter = dims_of(root, node.inputs()->Get(1));
  const std::vector<uint64_t> bias = dims_of(root, node.inputs()->Get(2));
  const std::vector<uint64_t> y = dims_of(root, node.outputs()->Get(0));
  const uint64_t groups = node.groups(), group_in = node.group_input_channels();
  const uint64_t group_out = node.group_output_channels();
  if (x.size() != 4 || y.size() != 4 || groups == 0 || groups > kMax || group_in > kMaxDim || group_out > kMaxDim) {
    return false;
  }
  const uint64_t kh = node.kernel()->Get(0), kw = node.kernel()->Get(1);
  if (filter != std::vector<uint64_t>{groups * group_out, kh, kw, group_in} ||
      bias != std::vector<uint64_t>{groups * group_out} || x[3] != groups * group_in || y[0] != x[0] ||
      y[3] != groups * group_out) {
    return false;
  }
  for (flatbuffers::uoffset_t i = 0; i < 2; ++i) {
    const uint64_t in = x[1 + i], kernel = node.kernel()->Get(i), stride = node.strides()->Get(i);
    const uint64_t dilation = node.dilations()->Get(i), adjust = adjustment->Get(i);
    const uint64_t pads = uint64_t{node.padding()->Get(i == 0 ? 0 : 3)} + node.padding()->Get(i == 0 ? 2 : 1);
    if (in == 0 || in > kMaxDim || kernel == 0 || kernel > kMax || stride == 0 || stride > kMax || dilation == 0 ||
        dilation > kMax || adjust >= stride) {
      return false;
    }
    const uint64_t full = stride * (in - 1) + adjust + (kernel - 1) * dilation + 1;
    // An output shorter than the stride overflows XNNPACK's subconvolution sizes.
    if (full <= pads || y[1 + i] != full - pads || y[1 + i] < stride) return false;
  }
  return true;
}

/// Whether a convolution's (or depthwise convolution's) filter, bias and output have the
/// dims its parameters give. XNNPACK reads the filter by the window the node states, not
/// by the filter tensor's dims: a blob whose kernel outgrows its filter made the 2022
/// snapshot read past the weights (found by the fuzzer on a quantized blob). Indices
/// and the window's lengths are checked by the caller.
bool convolution_consistent(const blob::Blob& root, const blob::Node& node, bool depthwise) {
  constexpr uint64_t kMax = 65535, kMaxDim = uint64_t{1} << 31;
  const std::vector<uint64_t> x = dims_of(root, node.inputs()->Get(0));
  const std::vector<uint64_t> filter = dims_of(root, node.inputs()->Get(1));
  const std::vector<uint64_t> bias = dims_of(root, node.inputs()->Get(2));
  const std::vector<uint64_t> y = dims_of(root, node.outputs()->Get(0));
  if (x.size() != 4 || y.size() != 4 || y[0] != x[0]) return false;
  const uint64_t kh = node.kernel()->Get(0), kw = node.kernel()->Get(1);
  uint64_t out_channels = 0;
  if (depthwise) {
    const uint64_t multiplier = node.depth_multiplier();
    if (multiplier == 0 || multiplier > kMax || x[3] > kMaxDim) return false;
    out_channels = x[3] * multiplier;
    if (filter != std::vector<uint64_t>{1, kh, kw, out_channels}) return false;
  } else {
    const uint64_t groups = node.groups(), group_in = node.group_input_channels();
    const uint64_t group_out = node.group_output_channels();
    if (groups == 0 || groups > kMax || group_in > kMaxDim || group_out > kMaxDim) return false;
    out_channels = groups * group_out;
    if (filter != std::vector<uint64_t>{out_channels, kh, kw, group_in} || x[3] != groups * group_in) return false;
  }
  if (bias != std::vector<uint64_t>{out_channels} || y[3] != out_channels) return false;
  for (flatbuffers::uoffset_t i = 0; i < 2; ++i) {
    const uint64_t in = x[1 + i], kernel = node.kernel()->Get(i), stride = node.strides()->Get(i);
    const uint64_t dilation = node.dilations()->Get(i);
    const uint64_t pads = uint64_t{node.padding()->Get(i == 0 ? 0 : 3)} + node.padding()->Get(i == 0 ? 2 : 1);
    if (in == 0 || in > kMaxDim || kernel == 0 || kernel > kMax || stride == 0 || stride > kMax || dilation == 0 ||
        dilation > kMax) {
      return false;
    }
    const uint64_t window = (kernel - 1) * dilation + 1;
    if (in + pads < window || y[1 + i] != (in + pads - window) / stride + 1) return false;
  }
  return true;
}

/// Whether a convert node goes between float32 and an 8-bit type, either way: the only
/// pairs the lowering writes, and XNNPACK's 2022 snapshot takes some other pairs on trust.
bool convert_types(const blob::Blob& root, const blob::Node& node) {
  auto is_8bit = [](blob::DataType t) { return t == blob::DataType::QInt8 || t == blob::DataType::QUInt8; };
  const blob::DataType in = root.tensors()->Get(node.inputs()->Get(0))->datatype();
  const blob::DataType out = root.tensors()->Get(node.outputs()->Get(0))->datatype();
  return (in == blob::DataType::Float32 && is_8bit(out)) || (is_8bit(in) && out == blob::DataType::Float32);
}

/// Whether a node's output has the shape its inputs give, for the element-wise and
/// reshaping kinds. XNNPACK's define calls do not check it, and the 2022 snapshot then
/// crashes setting the runtime up. Indices are checked by the caller.
bool output_shape_consistent(const blob::Blob& root, const blob::Node& node) {
  const std::vector<uint64_t> out = dims_of(root, node.outputs()->Get(0));
  const std::vector<uint64_t> a = dims_of(root, node.inputs()->Get(0));
  switch (node.kind()) {
    case NodeKind::Add:
    case NodeKind::Subtract:
    case NodeKind::Multiply:
    case NodeKind::Divide: {  // NumPy broadcasting, aligned at the last dimension
      const std::vector<uint64_t> b = dims_of(root, node.inputs()->Get(1));
      if (out.size() != std::max(a.size(), b.size())) return false;
      for (size_t k = 0; k < out.size(); ++k) {
        const uint64_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
        const uint64_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
        if ((da != db && da != 1 && db != 1) || out[out.size() - 1 - k] != std::max(da, db)) return false;
      }
      return true;
    }
    case NodeKind::Clamp:
    case NodeKind::Sigmoid:
    case NodeKind::HardSwish:
    case NodeKind::LeakyRelu:
    case NodeKind::Softmax: return out == a;
    case NodeKind::Convert: return out == a && convert_types(root, node);
    case NodeKind::Reshape: {
      const auto* shape = node.new_shape();
      if (shape == nullptr || !std::equal(out.begin(), out.end(), shape->begin(), shape->end())) return false;
      uint64_t n_in = 1, n_out = 1;  // each count was bounded when its tensor was read
      for (uint64_t d : a) n_in *= d;
      for (uint64_t d : out) n_out *= d;
      return n_in == n_out;
    }
    case NodeKind::GlobalAveragePooling2d:
      return a.size() == 4 && out.size() == 4 && out[0] == a[0] && out[1] == 1 && out[2] == 1 && out[3] == a[3];
    case NodeKind::Deconvolution2d: return deconvolution_consistent(root, node);
    case NodeKind::Convolution2d: return convolution_consistent(root, node, false);
    case NodeKind::DepthwiseConvolution2d: return convolution_consistent(root, node, true);
    default:  // fully connected, windowed pooling and padding: XNNPACK checks them
      return true;
  }
}

}  // namespace

sdk::Expected<std::unique_ptr<sdk::Delegate>> XnnpackDelegate::create(const sdk::InitContext& context) {
  std::unique_ptr<XnnpackDelegate> delegate(new XnnpackDelegate(context.host));
  PLUGRT_SDK_ASSIGN_OR_RETURN(const blob::Blob* root, delegate->open_blob(context));

  DefinedTensors tensors;
  Subgraph subgraph;
  // Each phase relies on what the ones before it checked: the tensors, then the
  // externals' indices, then the dataflow, before XNNPACK sees a node.
  PLUGRT_SDK_RETURN_IF_ERROR(new_subgraph(*root, &subgraph));
  PLUGRT_SDK_RETURN_IF_ERROR(delegate->define_tensors(*root, subgraph.get(), &tensors));
  PLUGRT_SDK_RETURN_IF_ERROR(delegate->bind_externals(*root, tensors));
  PLUGRT_SDK_RETURN_IF_ERROR(check_dataflow(*root));
  PLUGRT_SDK_RETURN_IF_ERROR(define_nodes(*root, tensors.ids, subgraph.get()));
  PLUGRT_SDK_RETURN_IF_ERROR(delegate->create_runtime(subgraph.get(), tensors.runtime_bytes, context.num_threads));
  delegate->root_ = root;
  return std::unique_ptr<sdk::Delegate>(std::move(delegate));
}

sdk::Status XnnpackDelegate::new_subgraph(const blob::Blob& root, Subgraph* subgraph) {
  xnn_subgraph_t raw_subgraph = nullptr;
  const xnn_status status =
      xnn_create_subgraph(static_cast<uint32_t>(length(root.inputs()) + length(root.outputs())), 0, &raw_subgraph);
  if (status != xnn_status_success) return from_xnn(status, "xnn_create_subgraph failed");
  subgraph->reset(raw_subgraph);
  return sdk::Status::ok();
}

sdk::Status XnnpackDelegate::define_nodes(const blob::Blob& root, const std::vector<uint32_t>& ids,
                                          xnn_subgraph_t subgraph) {
  for (size_t n = 0; n < root.nodes()->size(); ++n) PLUGRT_SDK_RETURN_IF_ERROR(define_node(root, n, ids, subgraph));
  return sdk::Status::ok();
}

/// The blob's tensors and nodes defined again, in a new subgraph, for a blob create()
/// has checked. Every value gets the same id as the first time.
sdk::Status XnnpackDelegate::define_subgraph(DefinedTensors* tensors, Subgraph* subgraph) const {
  PLUGRT_SDK_RETURN_IF_ERROR(new_subgraph(*root_, subgraph));
  PLUGRT_SDK_RETURN_IF_ERROR(define_tensors(*root_, subgraph->get(), tensors));
  return define_nodes(*root_, tensors->ids, subgraph->get());
}

/// The header first (a blob of another format or version goes to the fallback), then the
/// flatbuffer, verified.
sdk::Expected<const blob::Blob*> XnnpackDelegate::open_blob(const sdk::InitContext& context) {
  PLUGRT_SDK_RETURN_IF_ERROR(kBlobFormat.check_header(context.blob, context.blob_size));
  keep_cpuinfo_loaded();
  const xnn_status initialized = xnn_initialize(nullptr);
  if (initialized != xnn_status_success) {
    return sdk::Status::unavailable(std::string("xnn_initialize failed: ") + xnn_status_name(initialized));
  }

  // XNNPACK reads the static data in place for as long as the runtime lives; the host
  // keeps the blob unmoved until destroy. Floats need an aligned blob: copy it otherwise.
  const uint8_t* bytes = context.bytes();
  if (reinterpret_cast<uintptr_t>(bytes) % 16 != 0) {
    blob_copy_ = host_.allocate(context.blob_size, 64);
    if (blob_copy_ == nullptr) return sdk::Status::out_of_memory("could not copy the blob");
    std::memcpy(blob_copy_, bytes, context.blob_size);
    bytes = static_cast<const uint8_t*>(blob_copy_);
  }
  const uint8_t* buffer = bytes + kBlobHeaderSize;
  flatbuffers::Verifier verifier(buffer, context.blob_size - kBlobHeaderSize);
  if (!blob::VerifyBlobBuffer(verifier)) return invalid("the XNNPACK blob fails the FlatBuffers verifier");
  const blob::Blob* root = blob::GetBlob(buffer);
  if (!eight_byte_vectors_aligned(*root)) return invalid("the XNNPACK blob has misaligned 8-byte vectors");
  if (length(root->tensors()) == 0 || length(root->outputs()) == 0 || length(root->nodes()) == 0) {
    return invalid("the XNNPACK blob has no tensors, nodes or outputs");
  }
  return root;
}

/// Defines every blob tensor as an XNNPACK value. `runtime_bytes` adds up those XNNPACK
/// and the I/O buffers allocate at init (all but the static ones), bounded like a
/// program's arena.
sdk::Status XnnpackDelegate::define_tensors(const blob::Blob& root, xnn_subgraph_t subgraph,
                                            DefinedTensors* tensors) const {
  const size_t num_tensors = length(root.tensors());
  const size_t num_inputs = length(root.inputs());
  const size_t num_outputs = length(root.outputs());
  tensors->ids.assign(num_tensors, XNN_INVALID_VALUE_ID);
  tensors->counts.assign(num_tensors, 0);
  // Each external id names one XNNPACK value: two tensors claiming it would be one value
  // with two writers, which XNNPACK asserts against (found by the blob fuzzer).
  std::vector<bool> external_taken(num_inputs + num_outputs, false);
  for (size_t t = 0; t < num_tensors; ++t) {
    const blob::Tensor* tensor = root.tensors()->Get(static_cast<flatbuffers::uoffset_t>(t));
    const std::string where = "XNNPACK blob tensor " + std::to_string(t);
    const size_t rank = length(tensor->dims());
    if (rank == 0 || rank > XNN_MAX_TENSOR_DIMS) return invalid(where + " has rank " + std::to_string(rank));
    size_t dims[XNN_MAX_TENSOR_DIMS];
    size_t count = 1;
    for (size_t d = 0; d < rank; ++d) {
      const uint64_t dim = tensor->dims()->Get(static_cast<flatbuffers::uoffset_t>(d));
      if (dim == 0 || dim > (std::numeric_limits<uint32_t>::max)() || count > (SIZE_MAX / 8) / dim) {
        return invalid(where + " has a bad dimension");
      }
      dims[d] = static_cast<size_t>(dim);
      count *= dims[d];
    }
    tensors->counts[t] = count;
    const blob::DataType datatype = tensor->datatype();
    const size_t size = element_size(datatype);
    if (size == 0) return sdk::Status::incompatible_blob(where + " has a type this build does not know");
    const bool quantized = datatype != blob::DataType::Float32;
    const bool is_static = has_static_data(*tensor);
    if (!is_static) {
      // Values computed at run time: float32, or 8-bit with one scale and zero point.
      if (datatype != blob::DataType::Float32 && datatype != blob::DataType::QInt8 &&
          datatype != blob::DataType::QUInt8) {
        return invalid(where + " is a run-time value of a type XNNPACK computes no value in");
      }
      tensors->runtime_bytes += count * size + XNN_EXTRA_BYTES;
      if (tensors->runtime_bytes > kMaxRuntimeBytes)
        return invalid("the XNNPACK blob's tensors need more than 2^40 bytes");
    }
    if (tensor->data() != nullptr && (quantized || tensor->data()->size() != count))
      return invalid(where + " has data of the wrong size");
    if (tensor->quantized_data() != nullptr && (!quantized || tensor->quantized_data()->size() != count * size))
      return invalid(where + " has data of the wrong size");
    const bool channelwise = datatype == blob::DataType::QCInt8 || datatype == blob::DataType::QCInt32;
    // XNNPACK reads one scale per index of the channel dimension, and keeps the pointer.
    if (channelwise &&
        (tensor->channel_dim() >= rank || length(tensor->channel_scales()) != dims[tensor->channel_dim()]))
      return invalid(where + " has the wrong number of channel scales");
    uint32_t external_id = XNN_INVALID_VALUE_ID;
    uint32_t flags = 0;
    if (tensor->external_input() >= 0) {
      if (static_cast<size_t>(tensor->external_input()) >= num_inputs || tensor->external_output() >= 0 || is_static) {
        return invalid(where + " is a bad input");
      }
      external_id = static_cast<uint32_t>(tensor->external_input());
      flags = XNN_VALUE_FLAG_EXTERNAL_INPUT;
    } else if (tensor->external_output() >= 0) {
      if (static_cast<size_t>(tensor->external_output()) >= num_outputs || is_static) {
        return invalid(where + " is a bad output");
      }
      external_id = static_cast<uint32_t>(num_inputs + static_cast<size_t>(tensor->external_output()));
      flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
    }
    if (external_id != XNN_INVALID_VALUE_ID) {
      if (external_taken[external_id]) {
        return invalid(where + " is the partition's " +
                       (flags == XNN_VALUE_FLAG_EXTERNAL_INPUT ? "input " : "output ") +
                       std::to_string(flags == XNN_VALUE_FLAG_EXTERNAL_INPUT ? external_id : external_id - num_inputs) +
                       ", which another tensor already is");
      }
      external_taken[external_id] = true;
    }
    if (quantized && (datatype == blob::DataType::QInt32 || channelwise) && !is_static)
      return invalid(where + " is a bias or a weight computed at run time");
    const void* data = tensor->data() != nullptr ? static_cast<const void*>(tensor->data()->data())
                       : tensor->quantized_data() != nullptr
                           ? static_cast<const void*>(tensor->quantized_data()->data())
                           : nullptr;
    xnn_status status;
    switch (datatype) {
      case blob::DataType::Float32:
        status = xnn_define_tensor_value(subgraph, xnn_datatype_fp32, rank, dims, data, external_id, flags,
                                         &tensors->ids[t]);
        break;
      case blob::DataType::QCInt8:
      case blob::DataType::QCInt32:
        status = xnn_define_channelwise_quantized_tensor_value(
            subgraph, datatype == blob::DataType::QCInt8 ? xnn_datatype_qcint8 : xnn_datatype_qcint32,
            tensor->channel_scales()->data(), rank, tensor->channel_dim(), dims, data, external_id, flags,
            &tensors->ids[t]);
        break;
      default:
        status = xnn_define_quantized_tensor_value(subgraph,
                                                   datatype == blob::DataType::QInt8    ? xnn_datatype_qint8
                                                   : datatype == blob::DataType::QUInt8 ? xnn_datatype_quint8
                                                                                        : xnn_datatype_qint32,
                                                   tensor->zero_point(), tensor->scale(), rank, dims, data, external_id,
                                                   flags, &tensors->ids[t]);
        break;
    }
    if (status != xnn_status_success) {
      return from_xnn(status, "xnn_define_tensor_value failed for tensor " + std::to_string(t));
    }
  }
  return sdk::Status::ok();
}

/// The partition's inputs and outputs, and their edge conversions.
sdk::Status XnnpackDelegate::bind_externals(const blob::Blob& root, const DefinedTensors& tensors) {
  const size_t num_tensors = length(root.tensors());
  auto bind = [&](const flatbuffers::Vector<uint32_t>* list, bool is_input, std::vector<External>* out) -> bool {
    for (flatbuffers::uoffset_t k = 0; k < length(list); ++k) {
      const uint32_t t = list->Get(k);
      if (t >= num_tensors) return false;
      const blob::Tensor* tensor = root.tensors()->Get(t);
      if ((is_input ? tensor->external_input() : tensor->external_output()) != static_cast<int32_t>(k)) return false;
      External external;
      external.xnn_id = tensors.ids[t];
      external.num_elements = tensors.counts[t];
      // float32, int8 or uint8: checked when the tensor was defined
      const blob::DataType datatype = tensor->datatype();
      if (tensor->host_uint8() && datatype != blob::DataType::QInt8) return false;
      external.flip_sign = tensor->host_uint8();
      external.dtype_code = datatype == blob::DataType::Float32                          ? kDLFloat
                            : datatype == blob::DataType::QInt8 && !tensor->host_uint8() ? kDLInt
                                                                                         : kDLUInt;
      external.element_size = element_size(datatype);
      size_t host_count = 1;
      for (flatbuffers::uoffset_t d = 0; d < length(tensor->host_dims()); ++d) {
        const int64_t dim = tensor->host_dims()->Get(d);
        if (dim <= 0) return false;
        external.host_dims.push_back(dim);
        host_count *= static_cast<size_t>(dim);
      }
      if (external.host_dims.empty() || host_count != external.num_elements) return false;
      external.transpose = tensor->transpose_at_edge();
      if (external.transpose) {
        if (external.host_dims.size() != 4 || length(tensor->dims()) != 4) return false;
        const auto& h = external.host_dims;
        const auto* x = tensor->dims();
        if (x->Get(0) != static_cast<uint64_t>(h[0]) || x->Get(1) != static_cast<uint64_t>(h[2]) ||
            x->Get(2) != static_cast<uint64_t>(h[3]) || x->Get(3) != static_cast<uint64_t>(h[1])) {
          return false;
        }
        external.batch = static_cast<size_t>(h[0]);
        external.channels = static_cast<size_t>(h[1]);
        external.spatial = static_cast<size_t>(h[2] * h[3]);
      }
      out->push_back(std::move(external));
    }
    return true;
  };
  if (!bind(root.inputs(), true, &inputs_) || !bind(root.outputs(), false, &outputs_)) {
    return invalid("the XNNPACK blob's inputs or outputs are inconsistent");
  }
  return sdk::Status::ok();
}

/// XNNPACK asserts, rather than checks, that the subgraph is well formed: every value is
/// written by at most one node, never a static or an external input, and read only once
/// written. And it gives memory only to values something reads: a node whose output is
/// neither read by a later node nor a partition output would write through a null
/// pointer. Both are checked here, in execution order.
sdk::Status XnnpackDelegate::check_dataflow(const blob::Blob& root) {
  const size_t num_tensors = length(root.tensors());
  std::vector<bool> defined(num_tensors, false);
  for (size_t t = 0; t < num_tensors; ++t) {
    const blob::Tensor* tensor = root.tensors()->Get(static_cast<flatbuffers::uoffset_t>(t));
    defined[t] = has_static_data(*tensor) || tensor->external_input() >= 0;
  }
  std::vector<bool> read(num_tensors, false);
  for (flatbuffers::uoffset_t n = 0; n < root.nodes()->size(); ++n) {
    const blob::Node* node = root.nodes()->Get(n);
    const std::string where = "XNNPACK blob node " + std::to_string(n);
    for (flatbuffers::uoffset_t i = 0; i < length(node->inputs()); ++i) {
      const uint32_t t = node->inputs()->Get(i);
      if (t >= num_tensors) continue;  // refused when the node is defined, with its name
      if (!defined[t]) return invalid(where + " reads tensor " + std::to_string(t) + " before any node writes it");
      read[t] = true;
    }
    for (flatbuffers::uoffset_t i = 0; i < length(node->outputs()); ++i) {
      const uint32_t t = node->outputs()->Get(i);
      if (t >= num_tensors) continue;
      if (defined[t]) return invalid(where + " writes tensor " + std::to_string(t) + ", which is already defined");
      defined[t] = true;
    }
  }
  for (flatbuffers::uoffset_t k = 0; k < length(root.outputs()); ++k) {
    const uint32_t t = root.outputs()->Get(k);
    if (t >= num_tensors || !defined[t]) {
      return invalid("XNNPACK blob output " + std::to_string(k) + " is written by no node");
    }
  }
  for (flatbuffers::uoffset_t n = 0; n < root.nodes()->size(); ++n) {
    const blob::Node* node = root.nodes()->Get(n);
    for (flatbuffers::uoffset_t i = 0; i < length(node->outputs()); ++i) {
      const uint32_t t = node->outputs()->Get(i);
      if (t < num_tensors && !read[t] && root.tensors()->Get(t)->external_output() < 0) {
        return invalid("XNNPACK blob node " + std::to_string(n) + " writes tensor " + std::to_string(t) +
                       ", which nothing reads");
      }
    }
  }
  return sdk::Status::ok();
}

/// Defines one blob node, after checking what XNNPACK's define calls take on trust.
sdk::Status XnnpackDelegate::define_node(const blob::Blob& root, size_t index, const std::vector<uint32_t>& ids,
                                         xnn_subgraph_t subgraph) {
  const size_t num_tensors = length(root.tensors());
  const blob::Node* node = root.nodes()->Get(static_cast<flatbuffers::uoffset_t>(index));
  const std::string where = "XNNPACK blob node " + std::to_string(index) + " (" + kind_name(node->kind()) +
                            (node->name() != nullptr ? ", from '" + node->name()->str() + "'" : std::string()) + ")";
  uint32_t in[3] = {XNN_INVALID_VALUE_ID, XNN_INVALID_VALUE_ID, XNN_INVALID_VALUE_ID};
  const size_t num_in = length(node->inputs());
  if (num_in == 0 || num_in > 3 || length(node->outputs()) != 1) return invalid(where + " has bad inputs or outputs");
  for (flatbuffers::uoffset_t i = 0; i < num_in; ++i) {
    if (node->inputs()->Get(i) >= num_tensors) return invalid(where + " has a bad input");
    in[i] = ids[node->inputs()->Get(i)];
  }
  if (node->outputs()->Get(0) >= num_tensors) return invalid(where + " has a bad output");
  const uint32_t y = ids[node->outputs()->Get(0)];
  const float lo = node->output_min();
  const float hi = node->output_max();
  auto pair = [&](const flatbuffers::Vector<uint32_t>* v, uint32_t* a, uint32_t* b) {
    if (length(v) != 2) return false;
    *a = v->Get(0);
    *b = v->Get(1);
    return true;
  };
  uint32_t pad[4] = {0, 0, 0, 0};
  uint32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  const NodeKind kind = node->kind();
  const bool spatial = kind == NodeKind::Convolution2d || kind == NodeKind::DepthwiseConvolution2d ||
                       kind == NodeKind::Deconvolution2d || kind == NodeKind::MaxPooling2d ||
                       kind == NodeKind::AveragePooling2d;
  if (spatial) {
    if (length(node->padding()) != 4 || !pair(node->kernel(), &kh, &kw) || !pair(node->strides(), &sh, &sw) ||
        !pair(node->dilations(), &dh, &dw)) {
      return invalid(where + " lacks its window");
    }
    for (flatbuffers::uoffset_t i = 0; i < 4; ++i) pad[i] = node->padding()->Get(i);
  }
  const size_t needed_inputs =
      kind == NodeKind::Convolution2d || kind == NodeKind::DepthwiseConvolution2d ||
              kind == NodeKind::Deconvolution2d || kind == NodeKind::FullyConnected
          ? 3
      : kind == NodeKind::Add || kind == NodeKind::Subtract || kind == NodeKind::Multiply || kind == NodeKind::Divide
          ? 2
          : 1;
  if (num_in != needed_inputs) return invalid(where + " has the wrong number of inputs");
  if (!output_shape_consistent(root, *node)) return invalid(where + " has an output of the wrong shape or type");
  xnn_status status = xnn_status_success;
  switch (kind) {
    case NodeKind::Convolution2d:
      status = xnn_define_convolution_2d(subgraph, pad[0], pad[1], pad[2], pad[3], kh, kw, sh, sw, dh, dw,
                                         node->groups(), node->group_input_channels(), node->group_output_channels(),
                                         lo, hi, in[0], in[1], in[2], y, 0);
      break;
    case NodeKind::DepthwiseConvolution2d: {
      const uint32_t x = node->inputs()->Get(0);
      if (length(root.tensors()->Get(x)->dims()) != 4) return invalid(where + " reads a non-4-D input");
      const size_t channels = root.tensors()->Get(x)->dims()->Get(3);
      status =
          xnn_define_depthwise_convolution_2d(subgraph, pad[0], pad[1], pad[2], pad[3], kh, kw, sh, sw, dh, dw,
                                              node->depth_multiplier(), channels, lo, hi, in[0], in[1], in[2], y, 0);
      break;
    }
    case NodeKind::Deconvolution2d:
      // output_shape_consistent checked the adjustment: two values, each below its stride.
      status = xnn_define_deconvolution_2d(subgraph, pad[0], pad[1], pad[2], pad[3], node->adjustment()->Get(0),
                                           node->adjustment()->Get(1), kh, kw, sh, sw, dh, dw, node->groups(),
                                           node->group_input_channels(), node->group_output_channels(), lo, hi, in[0],
                                           in[1], in[2], y, 0);
      break;
    case NodeKind::FullyConnected:
      status = xnn_define_fully_connected(subgraph, lo, hi, in[0], in[1], in[2], y, 0);
      break;
    case NodeKind::Add: status = xnn_define_add2(subgraph, lo, hi, in[0], in[1], y, 0); break;
    case NodeKind::Subtract: status = xnn_define_subtract(subgraph, lo, hi, in[0], in[1], y, 0); break;
    case NodeKind::Multiply: status = xnn_define_multiply2(subgraph, lo, hi, in[0], in[1], y, 0); break;
    case NodeKind::Divide: status = xnn_define_divide(subgraph, lo, hi, in[0], in[1], y, 0); break;
    case NodeKind::Clamp: status = xnn_define_clamp(subgraph, lo, hi, in[0], y, 0); break;
    case NodeKind::Sigmoid: status = xnn_define_sigmoid(subgraph, in[0], y, 0); break;
    case NodeKind::HardSwish: status = xnn_define_hardswish(subgraph, in[0], y, 0); break;
    case NodeKind::LeakyRelu: status = xnn_define_leaky_relu(subgraph, node->alpha(), in[0], y, 0); break;
    case NodeKind::Softmax: status = xnn_define_softmax(subgraph, in[0], y, 0); break;
    case NodeKind::Convert: status = xnn_define_convert(subgraph, in[0], y, 0); break;
    case NodeKind::MaxPooling2d:
      status = xnn_define_max_pooling_2d(subgraph, pad[0], pad[1], pad[2], pad[3], kh, kw, sh, sw, dh, dw, lo, hi,
                                         in[0], y, 0);
      break;
    case NodeKind::AveragePooling2d:
      status =
          xnn_define_average_pooling_2d(subgraph, pad[0], pad[1], pad[2], pad[3], kh, kw, sh, sw, lo, hi, in[0], y, 0);
      break;
    case NodeKind::GlobalAveragePooling2d:
      status = xnn_define_global_average_pooling_2d(subgraph, lo, hi, in[0], y, 0);
      break;
    case NodeKind::ConstantPad: {
      const size_t rank = length(node->pre_paddings());
      if (rank == 0 || rank > XNN_MAX_TENSOR_DIMS || length(node->post_paddings()) != rank) {
        return invalid(where + " has bad paddings");
      }
      size_t pre[XNN_MAX_TENSOR_DIMS], post[XNN_MAX_TENSOR_DIMS];
      for (flatbuffers::uoffset_t d = 0; d < rank; ++d) {
        pre[d] = node->pre_paddings()->Get(d);
        post[d] = node->post_paddings()->Get(d);
      }
      status = xnn_define_static_constant_pad(subgraph, pre, post, node->padding_value(), in[0], y, 0);
      break;
    }
    case NodeKind::Reshape: {
      const size_t rank = length(node->new_shape());
      if (rank == 0 || rank > XNN_MAX_TENSOR_DIMS) return invalid(where + " has a bad shape");
      size_t shape[XNN_MAX_TENSOR_DIMS];
      for (flatbuffers::uoffset_t d = 0; d < rank; ++d) shape[d] = node->new_shape()->Get(d);
      status = xnn_define_static_reshape(subgraph, rank, shape, in[0], y, 0);
      break;
    }
    default: return sdk::Status::incompatible_blob(where + " has a kind this build does not know");
  }
  if (status != xnn_status_success) return from_xnn(status, "XNNPACK refused to define " + where);
  return sdk::Status::ok();
}

/// The runtime, on the shared pool, set up once on buffers that live as long as it.
sdk::Status XnnpackDelegate::create_runtime(xnn_subgraph_t subgraph, uint64_t runtime_bytes, size_t num_threads) {
  // XNNPACK (the 2022 snapshot) does not check every allocation it makes for a runtime
  // and crashes when one fails: refuse here, cleanly, when that much memory is not there.
  if (void* probe = std::malloc(static_cast<size_t>(runtime_bytes))) {
    std::free(probe);
  } else {
    return sdk::Status::out_of_memory("cannot allocate the " + std::to_string(runtime_bytes) +
                                      " bytes the XNNPACK runtime needs");
  }
  threadpool_ = acquire_threadpool(resolve_thread_count(num_threads));
  const xnn_status status = xnn_create_runtime_v2(subgraph, threadpool_, 0, &runtime_);
  if (status != xnn_status_success) return from_xnn(status, "xnn_create_runtime_v2 failed");

  for (std::vector<External>* list : {&inputs_, &outputs_}) {
    for (External& external : *list) {
      external.buffer = host_.allocate(external.num_elements * external.element_size + XNN_EXTRA_BYTES, 64);
      if (external.buffer == nullptr) return sdk::Status::out_of_memory("could not allocate the XNNPACK I/O buffers");
    }
  }
  return set_up(runtime_);
}

/// Points `runtime`'s external values at the I/O buffers.
sdk::Status XnnpackDelegate::set_up(xnn_runtime_t runtime) const {
  std::vector<xnn_external_value> externals;
  for (const std::vector<External>* list : {&inputs_, &outputs_}) {
    for (const External& external : *list) externals.push_back(xnn_external_value{external.xnn_id, external.buffer});
  }
  const xnn_status status = xnn_setup_runtime(runtime, externals.size(), externals.data());
  if (status != xnn_status_success) return from_xnn(status, "xnn_setup_runtime failed");
  return sdk::Status::ok();
}

/// The runtime for a call on `threads` threads. XNNPACK gives a runtime its pool when it
/// is made, so a call the host gives one thread runs on a second runtime without a pool,
/// made on the first such call (its packed weights are a second copy) and kept. When it
/// cannot be made, calls stay on the pool.
xnn_runtime_t XnnpackDelegate::runtime_for(size_t threads) {
  if (threads != 1 || threadpool_ == nullptr || one_thread_refused_) return runtime_;
  if (one_thread_runtime_ == nullptr) {
    DefinedTensors tensors;
    Subgraph subgraph;
    xnn_runtime_t made = nullptr;
    one_thread_refused_ = !define_subgraph(&tensors, &subgraph).is_ok() ||
                          xnn_create_runtime_v2(subgraph.get(), nullptr, 0, &made) != xnn_status_success;
    if (made != nullptr && (one_thread_refused_ || !set_up(made).is_ok())) {
      xnn_delete_runtime(made);
      made = nullptr;
      one_thread_refused_ = true;
    }
    one_thread_runtime_ = made;
  }
  return one_thread_runtime_ != nullptr ? one_thread_runtime_ : runtime_;
}

XnnpackDelegate::~XnnpackDelegate() {
  if (one_thread_runtime_ != nullptr) xnn_delete_runtime(one_thread_runtime_);
  if (runtime_ != nullptr) xnn_delete_runtime(runtime_);
  release_threadpool(threadpool_);
  for (std::vector<External>* list : {&inputs_, &outputs_}) {
    for (External& external : *list) host_.deallocate(external.buffer);
  }
  host_.deallocate(blob_copy_);
}

sdk::Status XnnpackDelegate::check_tensor(const char* role, size_t index, const DLTensor* tensor,
                                          const External& external) const {
  auto refuse = [&](const char* what) {
    return sdk::Status::invalid_argument(std::string(role) + " " + std::to_string(index) + ": " + what);
  };
  if (tensor->data == nullptr) return refuse("the tensor has no data");
  const uint8_t code = external.dtype_code;
  if (tensor->dtype.code != code || tensor->dtype.bits != external.element_size * 8 || tensor->dtype.lanes != 1) {
    return refuse(code == kDLFloat ? "the dtype is not float32"
                  : code == kDLInt ? "the dtype is not int8"
                                   : "the dtype is not uint8");
  }
  if (static_cast<size_t>(tensor->ndim) != external.host_dims.size()) return refuse("the rank differs from the blob's");
  for (size_t d = 0; d < external.host_dims.size(); ++d) {
    if (tensor->shape[d] != external.host_dims[d]) return refuse("the shape differs from the blob's");
  }
  if (tensor->strides != nullptr) {
    int64_t expected = 1;
    for (size_t d = external.host_dims.size(); d-- > 0;) {
      if (external.host_dims[d] != 1 && tensor->strides[d] != expected) return refuse("the tensor is not compact");
      expected *= external.host_dims[d];
    }
  }
  return sdk::Status::ok();
}

template <typename T>
T* data_of(const DLTensor* tensor) {
  return reinterpret_cast<T*>(static_cast<uint8_t*>(tensor->data) + tensor->byte_offset);
}

namespace {

/// uint8 <-> int8 of the same real values: v - 128, the top bit flipped.
void flip_sign(uint8_t* data, size_t count) {
  for (size_t i = 0; i < count; ++i) data[i] ^= 0x80u;
}

}  // namespace

sdk::Status XnnpackDelegate::execute(const sdk::Arguments& args) {
  const plugrt_execute_args& raw = args.raw();
  PLUGRT_SDK_RETURN_IF_ERROR(args.expect_count(inputs_.size(), outputs_.size()));
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const External& external = inputs_[i];
    PLUGRT_SDK_RETURN_IF_ERROR(check_tensor("input", i, raw.inputs[i], external));
    if (!external.transpose) {
      std::memcpy(external.buffer, data_of<const uint8_t>(raw.inputs[i]),
                  external.num_elements * external.element_size);
    } else if (external.element_size == 1) {
      nchw_to_nhwc(data_of<const uint8_t>(raw.inputs[i]), static_cast<uint8_t*>(external.buffer), external.batch,
                   external.channels, external.spatial);
    } else {
      nchw_to_nhwc(data_of<const float>(raw.inputs[i]), static_cast<float*>(external.buffer), external.batch,
                   external.channels, external.spatial);
    }
    if (external.flip_sign) flip_sign(static_cast<uint8_t*>(external.buffer), external.num_elements);
  }
  for (size_t o = 0; o < outputs_.size(); ++o) {
    PLUGRT_SDK_RETURN_IF_ERROR(check_tensor("output", o, raw.outputs[o], outputs_[o]));
  }
  xnn_runtime_t runtime = runtime_for(args.num_threads());
  const xnn_status status = xnn_invoke_runtime(runtime);
  // Every call on the pool ends with its workers asleep: left spinning, each would hold
  // a core for tens of milliseconds after the call (a method called every few
  // milliseconds would keep a core busy between its calls), a core that the next
  // backend, another method or another process needs. So a hand-off to another backend
  // (PLUGRT_EXECUTE_PARK_WORKERS) needs nothing more. XNN_FLAG_YIELD_WORKERS cannot do
  // this: in the XNNPACK this builds with, a runtime made with it still left the worker
  // spinning after a call (ThePoolsWorkersSleepAfterACall).
  if (runtime == runtime_) park_workers(threadpool_);  // no pool: it does nothing
  if (status != xnn_status_success) {
    return sdk::Status::internal(std::string("xnn_invoke_runtime failed: ") + xnn_status_name(status));
  }
  for (size_t o = 0; o < outputs_.size(); ++o) {
    const External& external = outputs_[o];
    if (!external.transpose) {
      std::memcpy(data_of<uint8_t>(raw.outputs[o]), external.buffer, external.num_elements * external.element_size);
    } else if (external.element_size == 1) {
      nhwc_to_nchw(static_cast<const uint8_t*>(external.buffer), data_of<uint8_t>(raw.outputs[o]), external.batch,
                   external.channels, external.spatial);
    } else {
      nhwc_to_nchw(static_cast<const float*>(external.buffer), data_of<float>(raw.outputs[o]), external.batch,
                   external.channels, external.spatial);
    }
    if (external.flip_sign) flip_sign(data_of<uint8_t>(raw.outputs[o]), external.num_elements);
  }
  return sdk::Status::ok();
}

}  // namespace plugrt::xnnpack
