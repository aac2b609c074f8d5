// SPDX-License-Identifier: Apache-2.0
#include "src/plan_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "src/concat_in_place.h"
#include "src/recurrent_steps.h"

namespace plugrt::onednn {

namespace {

using blob::Algorithm;
using blob::OpKind;
using dims_t = dnnl::memory::dims;
using desc_t = dnnl::memory::desc;

constexpr size_t kMaxRank = 12;
constexpr size_t kAlignment = 64;
/// The most entries the index maps of one indexed copy may hold (their axes' lengths
/// summed): far more than any real tensor's, few enough to build at init.
constexpr int64_t kMaxIndexMap = int64_t{1} << 24;
/// The largest stride, dilation or pad a blob may give (as lowering checks).
constexpr int64_t kMaxWindow = int64_t{1} << 31;
/// The largest batch whose LSTM or GRU runs as the hand-written step rather than
/// oneDNN's primitive in a plan for one thread: the step reads the recurrent weights once
/// a step for up to 4 rows at a time, where the primitive's GEMMs do better with many
/// rows (a bidirectional 128-unit LSTM of 64 steps: 7.0 against 7.7 ms at a batch of 32,
/// 14.2 against 15.7 at 64). A plan for more threads takes the step at any batch (4.1
/// against 6.2 ms, and 8.4 against 10.1), which gives each direction a thread.
constexpr int64_t kRecurrentStepMaxBatch = 16;

template <typename T>
size_t length(const flatbuffers::Vector<T>* vector) {
  return vector == nullptr ? 0 : vector->size();
}

/// The FlatBuffers verifier checks a vector's length, not its elements' alignment, so a
/// crafted blob could have 8-byte dims and attributes read misaligned.
template <typename T>
bool elements_aligned(const flatbuffers::Vector<T>* vector) {
  return length(vector) == 0 || reinterpret_cast<uintptr_t>(vector->Data()) % alignof(T) == 0;
}

template <typename T>
std::vector<int64_t> longs(const flatbuffers::Vector<T>* vector) {
  std::vector<int64_t> out;
  if (vector != nullptr) out.assign(vector->begin(), vector->end());
  return out;
}

void require(bool condition, const std::string& message) {
  if (!condition) throw BlobError(message);
}

desc_t plain(const dims_t& dims, dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  dims_t strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return desc_t(dims, type, strides);
}

/// Channels (dim 1) innermost: nwc, nhwc or ndhwc.
desc_t channels_last(const dims_t& dims) {
  dims_t strides(dims.size(), 1);
  int64_t stride = dims[1];
  for (size_t d = dims.size(); d-- > 2;) {
    strides[d] = stride;
    stride *= dims[d];
  }
  strides[0] = stride;
  return desc_t(dims, dnnl::memory::data_type::f32, strides);
}

/// The entries of the per-axis index maps of an output of `dims` (checked).
size_t index_map_length(const dims_t& dims) {
  int64_t length = 0;
  for (int64_t d : dims) length += d;
  require(length <= kMaxIndexMap, "an indexed copy's output is too long");
  return static_cast<size_t>(length);
}

desc_t any(const dims_t& dims, dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  return desc_t(dims, type, dnnl::memory::format_tag::any);
}

dnnl::memory::data_type dnnl_type(blob::DataType type) {
  switch (type) {
    case blob::DataType::U8: return dnnl::memory::data_type::u8;
    case blob::DataType::S8: return dnnl::memory::data_type::s8;
    case blob::DataType::S32: return dnnl::memory::data_type::s32;
    default: return dnnl::memory::data_type::f32;
  }
}

size_t element_size(blob::DataType type) {
  if (type == blob::DataType::S64) return 8;
  return type == blob::DataType::U8 || type == blob::DataType::S8 ? 1 : 4;
}

dnnl::algorithm eltwise_algorithm(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::Relu: return dnnl::algorithm::eltwise_relu;
    case Algorithm::Tanh: return dnnl::algorithm::eltwise_tanh;
    case Algorithm::Logistic: return dnnl::algorithm::eltwise_logistic;
    case Algorithm::Exp: return dnnl::algorithm::eltwise_exp;
    case Algorithm::Log: return dnnl::algorithm::eltwise_log;
    case Algorithm::Sqrt: return dnnl::algorithm::eltwise_sqrt;
    case Algorithm::Abs: return dnnl::algorithm::eltwise_abs;
    case Algorithm::Linear: return dnnl::algorithm::eltwise_linear;
    case Algorithm::Clip: return dnnl::algorithm::eltwise_clip;
    case Algorithm::Pow: return dnnl::algorithm::eltwise_pow;
    case Algorithm::GeluErf: return dnnl::algorithm::eltwise_gelu_erf;
    case Algorithm::GeluTanh: return dnnl::algorithm::eltwise_gelu_tanh;
    case Algorithm::HardSwish: return dnnl::algorithm::eltwise_hardswish;
    case Algorithm::Swish: return dnnl::algorithm::eltwise_swish;
    default: throw BlobError(std::string("algorithm ") + blob::EnumNameAlgorithm(algorithm) + " is not element-wise");
  }
}

/// How many of the op's post-ops from `first` on one primitive may take. oneDNN 2.6's
/// JIT kernels keep one element-wise injector per algorithm, built for the first post-op
/// of that algorithm: a later one with other parameters (Mul then Div, both linear;
/// LeakyRelu then Relu) would silently run with the first one's alpha and beta. So a
/// primitive's chain ends before an algorithm repeats; the rest run as steps of their own.
size_t fusable_post_ops(const blob::Op& op, size_t first) {
  const size_t count = length(op.post_ops());
  std::vector<Algorithm> seen;
  size_t i = first;
  for (; i < count; ++i) {
    const blob::PostOp* post = op.post_ops()->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (post->kind() != blob::PostOpKind::Eltwise) continue;
    if (std::find(seen.begin(), seen.end(), post->algorithm()) != seen.end()) break;
    seen.push_back(post->algorithm());
  }
  return i - first;
}

/// Whether oneDNN implements a convolution as im2col + GEMM (its slow general path).
bool is_im2col_gemm(const dnnl::convolution_forward::primitive_desc& pd) {
  const std::string implementation = pd.impl_info_str();
  return implementation.find("gemm") != std::string::npos && implementation.find("brg") == std::string::npos;
}

/// Whether oneDNN fell back to its reference implementation, a plain loop nest meant for
/// checking: a batched matmul with a broadcast binary post-op (an attention mask added to
/// Q.K^T) gets it and runs about 30x slower than the optimised kernel plus a binary step.
bool is_reference(const std::string& implementation) { return implementation.rfind("ref", 0) == 0; }

/// The threads the plan is built for: the OpenMP limit its handle sets around the build
/// (src/threading.h).
int plan_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

dnnl::algorithm binary_algorithm(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::Add: return dnnl::algorithm::binary_add;
    case Algorithm::Sub: return dnnl::algorithm::binary_sub;
    case Algorithm::Mul: return dnnl::algorithm::binary_mul;
    case Algorithm::Div: return dnnl::algorithm::binary_div;
    case Algorithm::Max: return dnnl::algorithm::binary_max;
    case Algorithm::Min: return dnnl::algorithm::binary_min;
    default: throw BlobError(std::string("algorithm ") + blob::EnumNameAlgorithm(algorithm) + " is not binary");
  }
}

/// Whether `small` has `full`'s rank and each of its dims is `full`'s or 1.
bool broadcasts(const dims_t& small, const dims_t& full) {
  if (small.size() != full.size()) return false;
  for (size_t d = 0; d < small.size(); ++d) {
    if (small[d] != full[d] && small[d] != 1) return false;
  }
  return true;
}

int64_t product(const dims_t& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

/// The same element-wise op on plain bytes with fewer dims: axes of size 1 in `full` are
/// dropped and neighbouring axes that `small` broadcasts alike (both kept, or both of
/// size 1) are merged. oneDNN 2.6's optimised binary kernels cover a broadcast operand of
/// [N, 1, S] but not of [1, N, 1, H, W] (swin's window mask on its attention scores, 150x
/// slower on the reference kernel), which is the same computation.
std::pair<dims_t, dims_t> merge_broadcast_axes(const dims_t& full, const dims_t& small) {
  dims_t merged_full, merged_small;
  bool last_broadcast = false;
  for (size_t d = 0; d < full.size(); ++d) {
    if (full[d] == 1) continue;
    const bool broadcast = small[d] == 1;
    if (!merged_full.empty() && broadcast == last_broadcast) {
      merged_full.back() *= full[d];
      merged_small.back() *= small[d];
    } else {
      merged_full.push_back(full[d]);
      merged_small.push_back(small[d]);
    }
    last_broadcast = broadcast;
  }
  if (merged_full.empty()) merged_full = merged_small = {1};
  return {merged_full, merged_small};
}

/// Whether `md` is a dense strided layout without blocks (nchw, nhwc, ...): any view of
/// it by other dims and strides is a plain reorder away.
bool is_strided(const desc_t& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.format_desc.blocking.inner_nblks != 0 || d.extra.flags != 0) return false;
  for (int i = 0; i < d.ndims; ++i) {
    if (d.padded_dims[i] != d.dims[i] || d.padded_offsets[i] != 0) return false;
  }
  return true;
}

/// A dense layout of `dims` with the dims in `md`'s order (outermost: the largest stride).
desc_t strided_like(const desc_t& md, const dims_t& dims) {
  const dnnl_dims_t& strides = md.data.format_desc.blocking.strides;
  std::vector<size_t> order(dims.size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] > strides[b]; });
  dims_t dense(dims.size(), 1);
  int64_t stride = 1;
  for (size_t k = order.size(); k-- > 0;) {
    dense[order[k]] = stride;
    stride *= dims[order[k]];
  }
  return desc_t(dims, dnnl::memory::data_type::f32, dense);
}

class Builder {
 public:
  Builder(const blob::Blob& blob, const sdk::NamedConstants& constants, const dnnl::engine& engine)
      : blob_(blob), constants_(constants), engine_(engine) {}
  Plan build();

 private:
  enum class StorageKind { kArena, kInput, kOutput, kConstant };
  struct Storage {
    StorageKind kind = StorageKind::kArena;
    size_t index = 0;  // external position
    size_t size = 0;
    int64_t first = -1, last = -1;
  };
  struct Value {
    bool defined = false;
    int storage = -1;
    desc_t md;
    dnnl::memory memory;
    std::vector<std::pair<desc_t, dnnl::memory>> converted;
  };

  void verify_tensors();
  void build_op(const blob::Op& op, const std::string& where);
  void build_convolution(const blob::Op& op);
  void build_deconvolution(const blob::Op& op);
  void build_matmul(const blob::Op& op);
  void build_inner_product(const blob::Op& op);
  void build_eltwise(const blob::Op& op);
  void build_binary(const blob::Op& op);
  /// build_binary on fewer dims (merge_broadcast_axes), when that has an optimised
  /// kernel and the operands' shapes do not; false when it has none.
  bool build_merged_binary(const blob::Op& op, dnnl::algorithm algorithm);
  /// A binary primitive on plain [merged_full] and [merged_small] with an optimised
  /// kernel, if oneDNN has one.
  std::optional<dnnl::binary::primitive_desc> merged_binary(dnnl::algorithm algorithm, const dims_t& merged_full,
                                                            const dims_t& merged_small,
                                                            const dnnl::primitive_attr& attr);
  void build_softmax(const blob::Op& op, bool log);
  void build_pooling(const blob::Op& op);
  void build_batch_norm(const blob::Op& op);
  void build_layer_norm(const blob::Op& op);
  void build_concat(const blob::Op& op);
  void build_reorder(const blob::Op& op);
  void build_reshape(const blob::Op& op);
  void build_reduction(const blob::Op& op);
  void build_erf(const blob::Op& op);
  void build_resampling(const blob::Op& op);
  void build_shuffle(const blob::Op& op);
  void build_pad(const blob::Op& op);
  void build_gather(const blob::Op& op);
  /// Writes `y`, `x` padded at `starts`, the pads mirrored without the edge (`reflect`)
  /// or repeating the edge: one indexed copy.
  void add_mirrored_pads(int32_t x, int32_t y, const std::vector<int64_t>& starts, bool reflect);
  /// A slice with a step below 0 on some axis (a flip): one indexed copy.
  void build_backward_slice(int32_t x, int32_t y, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                            float scale);
  /// Writes `y` (defined plain) from `x` through per-axis index maps (Step::kIndexedCopy),
  /// each element times `scale`.
  void add_indexed_copy(int32_t x, int32_t y, std::vector<int64_t> index_map, float scale);
  void build_rnn(const blob::Op& op);
  /// An LSTM or GRU of a small batch as one hand-written step (src/recurrent_steps.h),
  /// its operands checked by build_rnn.
  void build_recurrent_step(const blob::Op& op, const RecurrentShape& shape, const std::vector<int32_t>& outputs);
  void build_quantized_convolution(const blob::Op& op);
  void build_quantized_matmul(const blob::Op& op);
  void build_quantize_linear(const blob::Op& op, bool quantize);
  void read_quantization(const blob::Op& op, bool quantize, bool u8, Step* step);
  /// The requantization of a quantized op on `attr`: its output scales (per tensor, or
  /// per element of dst dim `channel_dim`) and its src and dst zero points, whose values
  /// go into `args` (run-time zero points: oneDNN's int8 kernels take those).
  void set_requantization(const blob::Op& op, int channel_dim, int64_t channels, dnnl::primitive_attr* attr,
                          std::unordered_map<int, dnnl::memory>* args, bool src_zero_point = true);
  /// Residual adds of dequantized values: a DequantizeLinear whose one reader is a
  /// same-shape Add is deferred (defer_dequantize) and the Add made one step that reads
  /// its 8-bit bytes (build_dequantized_add), or the step made after all (undefer).
  void count_readers();
  bool defer_dequantize(const blob::Op& op);
  bool build_dequantized_add(const blob::Op& op);
  void undefer(int32_t t);
  /// A kAddDequantized operand: `t`, or the 8-bit source of the DequantizeLinear deferred
  /// into it, with its scale and zero point.
  void read_add_operand(int32_t t, dnnl::memory* memory, Step::Element* element, float* scale, int32_t* zero_point);
  void plan_memory();

  const blob::Tensor& tensor(int32_t t) const { return *blob_.tensors()->Get(static_cast<flatbuffers::uoffset_t>(t)); }
  /// A constant's data (held by the blob, or named and lent by the host); nullptr for a
  /// value computed at run time.
  const void* constant(int32_t t) const { return constant_data_[static_cast<size_t>(t)]; }
  blob::DataType type(int32_t t) const { return tensor(t).dtype(); }
  dnnl::memory::data_type dnnl_type_of(int32_t t) const { return dnnl_type(type(t)); }
  bool is_constant(int32_t t) const { return constant(t) != nullptr; }
  /// The data of tensor `t` of `elements` elements, checked; nullptr when it has none.
  const void* resolve_constant(size_t t, int64_t elements,
                               const std::unordered_map<std::string_view, const plugrt_named_constant*>& lent);
  const dims_t& dims(int32_t t) const { return dims_[static_cast<size_t>(t)]; }
  int32_t input(const blob::Op& op, size_t i, bool optional = false) const;
  int32_t output(const blob::Op& op) const;

  int new_storage(StorageKind kind, size_t index, size_t size);
  dnnl::memory view(int storage, const desc_t& md, size_t offset = 0);
  /// A memory of `md` over the scratchpad buffer the plan's steps share, one at a time.
  dnnl::memory scratchpad_view(const desc_t& md);
  /// The memory of a value or constant as it is now.
  dnnl::memory current(int32_t t);
  /// The value in format `md`, converted (once) when it is in another.
  dnnl::memory in_format(int32_t t, const desc_t& md);
  dnnl::memory as_plain(int32_t t) { return in_format(t, plain(dims(t))); }
  /// The value as it is now, or plain where its blocked layout is padded: what
  /// element-wise and binary steps read. oneDNN 2.6's went wrong on padded blocked
  /// layouts (differential cases onednn-2890, onednn-119051 and onednn-1010784).
  dnnl::memory unpadded(int32_t t);
  /// `dst`, op output `y` just written, or where its layout is padded, `y` redefined in
  /// the plain layout with a reorder from `dst` to it: what steps after the op run on.
  dnnl::memory unpadded_result(int32_t y, dnnl::memory dst);
  /// A constant reordered (once, now) into `md`.
  dnnl::memory constant_in(int32_t t, const desc_t& md);
  /// Reads constant `t`'s bytes in place as `md` describes them (weights whose ONNX order
  /// is another shape's or a strided view's in oneDNN's terms).
  void read_constant_as(int32_t t, const desc_t& md);
  /// Gives `t` its memory in format `md`.
  dnnl::memory define(int32_t t, const desc_t& md);
  /// Gives `t` the bytes of `source` under its own plain shape (no data moves).
  void alias(int32_t t, int32_t source);
  /// After `t` is written: copies it to the host's output when it lives elsewhere.
  void publish(int32_t t);
  /// `memory`'s bytes seen as `md` (a view of its storage, or of a constant's data).
  dnnl::memory view_of(const dnnl::memory& memory, const desc_t& md);
  /// The same bytes as plain `memory` under `dims` (same element count).
  dnnl::memory reshaped(const dnnl::memory& memory, const dims_t& dims);
  /// A matmul whose weights have no batch: its batch dims folded into M.
  bool build_folded_matmul(const blob::Op& op);
  /// How matmul `op` reads tensor `t` as its operand `which` (0 src, 1 weights, 2 dst):
  /// the tensor's plain layout, or the strided layout of its view, checked.
  desc_t matmul_operand(const blob::Op& op, flatbuffers::uoffset_t which, int32_t t) const;
  /// A convolution's window and weight dims (grouped: [g, O/g, I/g, k...]), checked.
  struct ConvWindow {
    int64_t groups = 1, out_channels = 0;
    dims_t weight_dims;
    std::vector<int64_t> strides, dilations, begin, end;
  };
  ConvWindow conv_window(const blob::Op& op);
  /// The bias of a quantized convolution with its src zero point folded in, where that
  /// is exact (see its definition); empty where it is not.
  std::optional<dnnl::memory> folded_zero_point_bias(const blob::Op& op, const ConvWindow& window);
  dnnl::deconvolution_forward::primitive_desc deconvolution_primitive(const dims_t& xs, const dims_t& weight_dims,
                                                                      const dims_t& ys, const blob::Op& op);
  void add_bias_step(int32_t bias, dnnl::memory dst);

  dnnl::primitive_attr attributes() const;
  void add_step(dnnl::primitive primitive, std::unordered_map<int, dnnl::memory> args, const desc_t& scratchpad);
  void add_reorder(const dnnl::memory& from, const dnnl::memory& to, float scale = 1.0f);
  /// The op's first post-ops on `attr`, with their operands in `args`: `count` of them,
  /// or fewer where one primitive cannot take them all (fusable_post_ops). Returns how
  /// many it set.
  size_t set_post_ops(const blob::Op& op, const dims_t& dst, dnnl::primitive_attr* attr,
                      std::unordered_map<int, dnnl::memory>* args, size_t count = SIZE_MAX);
  /// Runs post-ops `first`... of `op` as steps on `dst`, its output (moved to the plain
  /// layout first where `dst` is padded).
  void add_post_op_steps(const blob::Op& op, dnnl::memory dst, size_t first = 0);

  const blob::Blob& blob_;
  const sdk::NamedConstants& constants_;
  const dnnl::engine& engine_;
  std::vector<const void*> constant_data_;  // per tensor
  std::vector<dims_t> dims_;
  std::vector<Value> values_;
  std::vector<Storage> storages_;
  /// A memory that views a storage, `offset` bytes into it.
  struct View {
    dnnl::memory memory;
    int storage = -1;
    size_t offset = 0;
  };
  std::vector<View> views_;
  /// The view `memory` is, or nullptr (a constant's or a host tensor's own memory).
  const View* find_view(const dnnl::memory& memory) const;
  /// Concatenations whose inputs are written in place (src/concat_in_place.h): each
  /// group's storage, and the members written there so far.
  ConcatGroups concat_groups_;
  std::vector<int> group_storages_;
  std::unordered_set<int32_t> members_written_;
  /// Where member `t` lives in its group's storage: the byte offset.
  size_t member_offset(int32_t t) const;
  /// The concatenation `op` whose output `y` is a prefix of a group: its inputs not
  /// written in place yet are copied there, and `y` views the prefix.
  void build_concat_in_place(const blob::Op& op, int32_t y, size_t group);
  /// The layout member `t` of a concatenation group is written in; an undefined desc for
  /// a tensor of no group.
  desc_t member_layout(int32_t t) const;
  /// In a blob with concatenation groups, the layouts that keep an op from `x` to `y` in
  /// theirs: a blocked `x` read as it is, a member `y` written where its group wants it
  /// (`any` for the other). Undefined descs when neither applies: oneDNN's choice stands.
  std::pair<desc_t, desc_t> group_layouts(int32_t x, int32_t y);
  std::vector<int> readers_;                               // per tensor: ops reading it, +1 if an output
  std::vector<int64_t> last_reader_;                       // per tensor: the last op reading it
  std::unordered_map<int32_t, const blob::Op*> deferred_;  // value -> its deferred DequantizeLinear
  Plan plan_;
};

int32_t Builder::input(const blob::Op& op, size_t i, bool optional) const {
  const int32_t t = i < length(op.inputs()) ? op.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i)) : -1;
  if (t == -1 && optional) return -1;
  require(t >= 0 && static_cast<size_t>(t) < dims_.size(),
          "input " + std::to_string(i) + " is missing or out of range");
  return t;
}

int32_t Builder::output(const blob::Op& op) const {
  require(length(op.outputs()) == 1, "an op has not exactly one output");
  const int32_t t = op.outputs()->Get(0);
  require(t >= 0 && static_cast<size_t>(t) < dims_.size(), "the output is out of range");
  require(!is_constant(t) && tensor(t).external_input() < 0, "the output is a constant or an input");
  require(!values_[static_cast<size_t>(t)].defined, "the output is written twice");
  return t;
}

int Builder::new_storage(StorageKind kind, size_t index, size_t size) {
  Storage storage;
  storage.kind = kind;
  storage.index = index;
  storage.size = size;
  storages_.push_back(storage);
  return static_cast<int>(storages_.size() - 1);
}

dnnl::memory Builder::scratchpad_view(const desc_t& md) {
  dnnl::memory memory(md, engine_, DNNL_MEMORY_NONE);
  plan_.scratchpad_views.push_back(memory);
  plan_.scratchpad_size = std::max(plan_.scratchpad_size, md.get_size());
  return memory;
}

dnnl::memory Builder::view(int storage, const desc_t& md, size_t offset) {
  dnnl::memory memory(md, engine_, DNNL_MEMORY_NONE);
  views_.push_back({memory, storage, offset});
  return memory;
}

const Builder::View* Builder::find_view(const dnnl::memory& memory) const {
  for (const View& view : views_) {
    if (view.memory.get() == memory.get()) return &view;
  }
  return nullptr;
}

dnnl::memory Builder::view_of(const dnnl::memory& memory, const desc_t& md) {
  if (const View* viewed = find_view(memory)) return view(viewed->storage, md, viewed->offset);
  return dnnl::memory(md, engine_, memory.get_data_handle());
}

dnnl::memory Builder::current(int32_t t) {
  Value& value = values_[static_cast<size_t>(t)];
  if (value.defined) return value.memory;
  require(is_constant(t), "tensor " + std::to_string(t) + " is read before it is written");
  // Constants are read in place from the blob or the host's named constants, which both
  // outlive the handle.
  value.md = plain(dims(t), dnnl_type_of(t));
  value.memory = dnnl::memory(value.md, engine_, const_cast<void*>(constant(t)));
  value.defined = true;
  return value.memory;
}

dnnl::memory Builder::in_format(int32_t t, const desc_t& md) {
  dnnl::memory memory = current(t);
  Value& value = values_[static_cast<size_t>(t)];
  if (value.md == md) return memory;
  for (const auto& [format, converted] : value.converted) {
    if (format == md) return converted;
  }
  if (is_constant(t)) return constant_in(t, md);
  dnnl::memory converted = view(new_storage(StorageKind::kArena, 0, md.get_size()), md);
  add_reorder(memory, converted);
  value.converted.emplace_back(md, converted);
  return converted;
}

dnnl::memory Builder::constant_in(int32_t t, const desc_t& md) {
  dnnl::memory source = current(t);
  if (values_[static_cast<size_t>(t)].md == md) return source;
  dnnl::memory reordered(md, engine_);
  dnnl::stream stream(engine_);
  dnnl::reorder(source, reordered).execute(stream, source, reordered);
  stream.wait();
  plan_.constants.push_back(reordered);
  return reordered;
}

void Builder::read_constant_as(int32_t t, const desc_t& md) {
  current(t);  // checks that `t` is a constant
  Value& value = values_[static_cast<size_t>(t)];
  value.md = md;
  value.memory = dnnl::memory(md, engine_, const_cast<void*>(constant(t)));
}

dnnl::memory Builder::define(int32_t t, const desc_t& md) {
  Value& value = values_[static_cast<size_t>(t)];
  const int32_t external = tensor(t).external_output();
  if (const desc_t member = member_layout(t); !member.is_zero() && md == member) {
    value.storage = group_storages_[concat_groups_.members.at(t).group];
    value.md = md;
    value.memory = view(value.storage, md, member_offset(t));
    value.defined = true;
    members_written_.insert(t);
    return value.memory;
  }
  if (external >= 0 && md == plain(dims(t), dnnl_type_of(t))) {
    value.storage = new_storage(StorageKind::kOutput, static_cast<size_t>(external), md.get_size());
  } else {
    value.storage = new_storage(StorageKind::kArena, 0, md.get_size());
  }
  value.md = md;
  value.memory = view(value.storage, md);
  value.defined = true;
  return value.memory;
}

void Builder::alias(int32_t t, int32_t source) {
  require(product(dims(t)) == product(dims(source)), "a reshape changes the element count");
  dnnl::memory from = as_plain(source);
  const desc_t md = plain(dims(t));
  const View* viewed = find_view(from);
  if (tensor(t).external_output() >= 0 || viewed == nullptr) {
    // The host's output must receive the bytes, and a constant has no storage to share.
    define(t, md);
    add_reorder(from, view(values_[static_cast<size_t>(t)].storage, plain(dims(source))));
    publish(t);
    return;
  }
  Value& value = values_[static_cast<size_t>(t)];
  value.storage = viewed->storage;
  value.md = md;
  value.memory = view(viewed->storage, md, viewed->offset);
  value.defined = true;
}

void Builder::publish(int32_t t) {
  const int32_t external = tensor(t).external_output();
  if (external < 0) return;
  Value& value = values_[static_cast<size_t>(t)];
  if (storages_[static_cast<size_t>(value.storage)].kind == StorageKind::kOutput) return;
  const desc_t md = plain(dims(t), dnnl_type_of(t));
  const int storage = new_storage(StorageKind::kOutput, static_cast<size_t>(external), md.get_size());
  add_reorder(value.memory, view(storage, md));
}

dnnl::primitive_attr Builder::attributes() const {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void Builder::add_step(dnnl::primitive primitive, std::unordered_map<int, dnnl::memory> args,
                       const desc_t& scratchpad) {
  if (scratchpad.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = scratchpad_view(scratchpad);
  Step step;
  step.primitive = std::move(primitive);
  step.args = std::move(args);
  plan_.steps.push_back(std::move(step));
}

void Builder::add_reorder(const dnnl::memory& from, const dnnl::memory& to, float scale) {
  dnnl::primitive_attr attr = attributes();
  if (scale != 1.0f) attr.set_output_scales(0, {scale});
  dnnl::reorder::primitive_desc pd(engine_, from.get_desc(), engine_, to.get_desc(), attr);
  add_step(dnnl::reorder(pd), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}, pd.scratchpad_desc());
}

size_t Builder::set_post_ops(const blob::Op& op, const dims_t& dst, dnnl::primitive_attr* attr,
                             std::unordered_map<int, dnnl::memory>* args, size_t count) {
  count = std::min(count, fusable_post_ops(op, 0));
  if (count == 0) return 0;
  dnnl::post_ops post_ops;
  for (flatbuffers::uoffset_t i = 0; i < count; ++i) {
    const blob::PostOp* post = op.post_ops()->Get(i);
    if (post->kind() == blob::PostOpKind::Eltwise) {
      post_ops.append_eltwise(1.0f, eltwise_algorithm(post->algorithm()), post->alpha(), post->beta());
      continue;
    }
    const int32_t operand = post->operand();
    require(operand >= 0 && static_cast<size_t>(operand) < dims_.size(), "a post-op operand is out of range");
    require(broadcasts(dims(operand), dst), "a post-op operand does not broadcast to the result");
    dnnl::memory memory = current(operand);
    post_ops.append_binary(binary_algorithm(post->algorithm()), memory.get_desc());
    (*args)[DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1] = memory;
  }
  attr->set_post_ops(post_ops);
  return count;
}

/// Whether `md` is a blocked layout whose dims are padded (7 channels in nCw16c).
bool is_padded(const desc_t& md) {
  for (int d = 0; d < md.data.ndims; ++d) {
    if (md.data.padded_dims[d] != md.data.dims[d]) return true;
  }
  return false;
}

dnnl::memory Builder::unpadded(int32_t t) {
  dnnl::memory memory = current(t);
  return is_padded(memory.get_desc()) ? as_plain(t) : memory;
}

dnnl::memory Builder::unpadded_result(int32_t y, dnnl::memory dst) {
  if (!is_padded(dst.get_desc())) return dst;
  values_[static_cast<size_t>(y)].defined = false;
  dnnl::memory plain_dst = define(y, plain(dims(y)));
  add_reorder(dst, plain_dst);
  return plain_dst;
}

void Builder::add_post_op_steps(const blob::Op& op, dnnl::memory dst, size_t first) {
  const size_t count = length(op.post_ops());
  if (first < count) dst = unpadded_result(op.outputs()->Get(0), dst);  // checked by output(op)
  const desc_t md = dst.get_desc();
  for (size_t i = first; i < count; ++i) {
    const blob::PostOp* post = op.post_ops()->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (post->kind() == blob::PostOpKind::Eltwise) {
      dnnl::eltwise_forward::primitive_desc pd(
          dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, eltwise_algorithm(post->algorithm()), md,
                                      post->alpha(), post->beta()),
          attributes(), engine_);
      add_step(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc());
      continue;
    }
    const int32_t operand = post->operand();
    require(operand >= 0 && static_cast<size_t>(operand) < dims_.size(), "a post-op operand is out of range");
    // An operand of the result's shape is read in the result's layout, so the step
    // runs on one layout; a broadcast operand is read plain.
    dnnl::memory other = dims(operand) == md.dims() ? in_format(operand, md) : as_plain(operand);
    // Element-wise post-ops right after it ride on this step instead of another pass.
    dnnl::primitive_attr attr = attributes();
    dnnl::post_ops tail;
    const size_t tail_end = i + 1 + fusable_post_ops(op, i + 1);
    size_t next = i + 1;
    for (; next < tail_end; ++next) {
      const blob::PostOp* eltwise = op.post_ops()->Get(static_cast<flatbuffers::uoffset_t>(next));
      if (eltwise->kind() != blob::PostOpKind::Eltwise) break;
      tail.append_eltwise(1.0f, eltwise_algorithm(eltwise->algorithm()), eltwise->alpha(), eltwise->beta());
    }
    if (next > i + 1) attr.set_post_ops(tail);
    const dnnl::algorithm algorithm = binary_algorithm(post->algorithm());
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(algorithm, md, other.get_desc(), md), attr, engine_);
    const auto [merged_full, merged_small] = merge_broadcast_axes(md.dims(), dims(operand));
    std::optional<dnnl::binary::primitive_desc> merged;
    if (is_reference(pd.impl_info_str()) && md == plain(md.dims()) && merged_full.size() < md.dims().size()) {
      merged = merged_binary(algorithm, merged_full, merged_small, attr);
    }
    if (merged) {
      dnnl::memory result = reshaped(dst, merged_full);
      add_step(dnnl::binary(*merged),
               {{DNNL_ARG_SRC_0, result}, {DNNL_ARG_SRC_1, reshaped(other, merged_small)}, {DNNL_ARG_DST, result}},
               merged->scratchpad_desc());
    } else {
      add_step(dnnl::binary(pd), {{DNNL_ARG_SRC_0, dst}, {DNNL_ARG_SRC_1, other}, {DNNL_ARG_DST, dst}},
               pd.scratchpad_desc());
    }
    i = next - 1;
  }
}

// ---- Ops --------------------------------------------------------------------------------------

Builder::ConvWindow Builder::conv_window(const blob::Op& op) {
  const int32_t x = input(op, 0), w = input(op, 1), b = input(op, 2, true);
  const dims_t& xs = dims(x);
  const size_t spatial = xs.size() - 2;
  require(xs.size() >= 3 && xs.size() <= 5 && dims(w).size() == xs.size(), "bad convolution ranks");
  require(is_constant(w) && (b < 0 || is_constant(b)), "the weights or bias are not constant");
  ConvWindow window;
  window.groups = op.groups();
  window.out_channels = dims(w)[0];
  require(window.groups >= 1 && window.out_channels % window.groups == 0 && dims(w)[1] * window.groups == xs[1],
          "bad convolution groups");
  window.strides = longs(op.strides());
  window.dilations = longs(op.dilations());
  window.begin = longs(op.padding_begin());
  window.end = longs(op.padding_end());
  require(window.strides.size() == spatial && window.dilations.size() == spatial && window.begin.size() == spatial &&
              window.end.size() == spatial,
          "the window does not match the spatial dims");
  window.weight_dims = dims(w);
  if (window.groups > 1) {
    window.weight_dims[0] = window.out_channels / window.groups;
    window.weight_dims.insert(window.weight_dims.begin(), window.groups);
  }
  if (b >= 0) require(dims(b) == dims_t{window.out_channels}, "the bias does not have one element per output channel");
  return window;
}

void Builder::build_convolution(const blob::Op& op) {
  const int32_t x = input(op, 0), w = input(op, 1), b = input(op, 2, true), y = output(op);
  const dims_t& xs = dims(x);
  const ConvWindow window = conv_window(op);
  const dims_t& weight_dims = window.weight_dims;
  const std::vector<int64_t>&strides = window.strides, &dilations = window.dilations, &begin = window.begin,
        &end = window.end;
  const desc_t bias_md = b >= 0 ? plain(dims(b)) : desc_t();
  const auto describe = [&](const desc_t& src, const desc_t& dst) {
    const auto forward = dnnl::prop_kind::forward_inference;
    const auto direct = dnnl::algorithm::convolution_direct;
    return b >= 0 ? dnnl::convolution_forward::desc(forward, direct, src, any(weight_dims), bias_md, dst, strides,
                                                    dilations, begin, end)
                  : dnnl::convolution_forward::desc(forward, direct, src, any(weight_dims), dst, strides, dilations,
                                                    begin, end);
  };
  dnnl::convolution_forward::desc desc = describe(any(xs), any(dims(y)));
  std::unordered_map<int, dnnl::memory> args;
  dnnl::primitive_attr attr = attributes();
  const size_t post_op_count = length(op.post_ops());
  size_t fused = set_post_ops(op, dims(y), &attr, &args);
  dnnl::convolution_forward::primitive_desc pd;
  try {
    pd = dnnl::convolution_forward::primitive_desc(desc, attr, engine_);
  } catch (const dnnl::error&) {
    if (fused == 0) throw;
    fused = 0;
    args.clear();
    attr = attributes();
    pd = dnnl::convolution_forward::primitive_desc(desc, attr, engine_);
  }
  if (const auto [src_md, dst_md] = group_layouts(x, y); !src_md.is_zero()) {
    const dnnl::convolution_forward::desc fixed = describe(src_md, dst_md);
    try {
      dnnl::convolution_forward::primitive_desc in_layout(fixed, attr, engine_);
      if (!is_reference(in_layout.impl_info_str()) && !is_im2col_gemm(in_layout)) {
        desc = fixed;
        pd = in_layout;
      }
    } catch (const dnnl::error&) {
    }
  }
  // oneDNN 2.x's direct convolutions take element-wise and per-channel post-ops but
  // not a full-tensor binary one (a residual Add): with it, what is left is an im2col
  // GEMM in plain layout, several times slower. Then fuse only the element-wise
  // post-ops before the first binary one and run the rest as their own steps.
  if (fused > 0 && is_im2col_gemm(pd)) {
    size_t prefix = 0;
    while (prefix < post_op_count &&
           op.post_ops()->Get(static_cast<flatbuffers::uoffset_t>(prefix))->kind() == blob::PostOpKind::Eltwise) {
      ++prefix;
    }
    std::unordered_map<int, dnnl::memory> prefix_args;
    dnnl::primitive_attr prefix_attr = attributes();
    const size_t prefix_fused = set_post_ops(op, dims(y), &prefix_attr, &prefix_args, prefix);
    dnnl::convolution_forward::primitive_desc direct(desc, prefix_attr, engine_);
    if (!is_im2col_gemm(direct)) {
      pd = direct;
      args = std::move(prefix_args);
      fused = prefix_fused;
    }
  }
  // The constant's bytes are ONNX's [O, I/g, k...], which are goihw's when grouped.
  read_constant_as(w, plain(weight_dims));
  args[DNNL_ARG_SRC] = in_format(x, pd.src_desc());
  args[DNNL_ARG_WEIGHTS] = constant_in(w, pd.weights_desc());
  if (b >= 0) args[DNNL_ARG_BIAS] = constant_in(b, pd.bias_desc());
  dnnl::memory dst = define(y, pd.dst_desc());
  args[DNNL_ARG_DST] = dst;
  add_step(dnnl::convolution_forward(pd), std::move(args), pd.scratchpad_desc());
  if (fused < post_op_count) add_post_op_steps(op, dst, fused);
  publish(y);
}

/// ONNX's ConvTranspose weights [I, O/g, k...] as oneDNN's deconvolution reads them:
/// [O, I, k...], or [g, O/g, I/g, k...] when grouped, over the same bytes (strided).
desc_t transposed_weights(const dims_t& onnx, int64_t groups, dims_t* dnnl_dims) {
  const int64_t in_per_group = onnx[0] / groups, out_per_group = onnx[1];
  const dims_t kernel(onnx.begin() + 2, onnx.end());
  dims_t strides(kernel.size(), 1);
  for (size_t d = kernel.size(); d-- > 1;) strides[d - 1] = strides[d] * kernel[d];
  const int64_t taps = product(kernel);
  *dnnl_dims = {out_per_group, in_per_group};
  dims_t outer = {taps, out_per_group * taps};
  if (groups > 1) {
    dnnl_dims->insert(dnnl_dims->begin(), groups);
    outer.insert(outer.begin(), in_per_group * out_per_group * taps);
  }
  dnnl_dims->insert(dnnl_dims->end(), kernel.begin(), kernel.end());
  strides.insert(strides.begin(), outer.begin(), outer.end());
  return desc_t(*dnnl_dims, dnnl::memory::data_type::f32, strides);
}

void Builder::build_deconvolution(const blob::Op& op) {
  const int32_t x = input(op, 0), w = input(op, 1), b = input(op, 2, true), y = output(op);
  const dims_t &xs = dims(x), &ws = dims(w), &ys = dims(y);
  const size_t spatial = xs.size() - 2;
  require(xs.size() >= 3 && xs.size() <= 5 && ws.size() == xs.size() && ys.size() == xs.size(),
          "bad deconvolution ranks");
  require(is_constant(w) && (b < 0 || is_constant(b)), "the weights or bias are not constant");
  const int64_t groups = op.groups();
  require(groups >= 1 && ws[0] == xs[1] && xs[1] % groups == 0 && ys[0] == xs[0] && ys[1] == ws[1] * groups,
          "bad deconvolution groups or channels");
  const std::vector<int64_t> strides = longs(op.strides()), dilations = longs(op.dilations()),
                             begin = longs(op.padding_begin()), end = longs(op.padding_end());
  require(strides.size() == spatial && dilations.size() == spatial && begin.size() == spatial && end.size() == spatial,
          "the window does not match the spatial dims");
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t k = ws[2 + d];
    require(strides[d] >= 1 && strides[d] <= kMaxWindow && dilations[d] >= 0 && dilations[d] < kMaxWindow &&
                std::abs(begin[d]) <= kMaxWindow && std::abs(end[d]) <= kMaxWindow,
            "the window has a value out of range");
    const int64_t out = (xs[2 + d] - 1) * strides[d] + (k - 1) * (dilations[d] + 1) + 1 - begin[d] - end[d];
    require(out == ys[2 + d], "the padding does not give the output's size");
  }
  if (b >= 0) require(dims(b) == dims_t{ys[1]}, "the bias does not have one element per output channel");
  dims_t weight_dims;
  const desc_t onnx_weights = transposed_weights(ws, groups, &weight_dims);
  dnnl::deconvolution_forward::primitive_desc pd = deconvolution_primitive(xs, weight_dims, ys, op);
  read_constant_as(w, onnx_weights);
  std::unordered_map<int, dnnl::memory> args;
  args[DNNL_ARG_SRC] = in_format(x, pd.src_desc());
  args[DNNL_ARG_WEIGHTS] = constant_in(w, pd.weights_desc());
  dnnl::memory dst = define(y, pd.dst_desc());
  args[DNNL_ARG_DST] = dst;
  add_step(dnnl::deconvolution_forward(pd), std::move(args), pd.scratchpad_desc());
  if (b >= 0) {
    dst = unpadded_result(y, dst);
    add_bias_step(b, dst);
  }
  add_post_op_steps(op, dst);
  publish(y);
}

/// oneDNN 2.6's JIT deconvolution runs several times slower with a bias or a post-op
/// (a 2x upsample of 24 channels: 0.5 ms bare, 2.8 ms with its bias, 39 ms with a fused
/// sigmoid) and in a blocked layout with padded channels (one output channel: 0.7 ms in
/// nhwc, 1.9 ms in nChw16c): so it runs bare, channels-last where oneDNN has a kernel for
/// that, and the bias and post-ops follow as steps.
dnnl::deconvolution_forward::primitive_desc Builder::deconvolution_primitive(const dims_t& xs,
                                                                             const dims_t& weight_dims,
                                                                             const dims_t& ys, const blob::Op& op) {
  const auto forward = dnnl::prop_kind::forward_inference;
  const auto direct = dnnl::algorithm::deconvolution_direct;
  const std::vector<int64_t> strides = longs(op.strides()), dilations = longs(op.dilations()),
                             begin = longs(op.padding_begin()), end = longs(op.padding_end());
  auto primitive = [&](const desc_t& src, const desc_t& dst) {
    return dnnl::deconvolution_forward::primitive_desc(
        dnnl::deconvolution_forward::desc(forward, direct, src, any(weight_dims), dst, strides, dilations, begin, end),
        attributes(), engine_);
  };
  try {
    dnnl::deconvolution_forward::primitive_desc channels_last_pd = primitive(channels_last(xs), channels_last(ys));
    if (!is_reference(channels_last_pd.impl_info_str())) return channels_last_pd;
  } catch (const dnnl::error&) {
  }
  return primitive(any(xs), any(ys));
}

/// Adds a per-channel constant to `dst` in place, read as [1, C, 1...].
void Builder::add_bias_step(int32_t bias, dnnl::memory dst) {
  const dims_t& ys = dst.get_desc().dims();
  dims_t bias_dims(ys.size(), 1);
  bias_dims[1] = ys[1];
  dnnl::memory operand(plain(bias_dims), engine_, const_cast<void*>(constant(bias)));
  const desc_t md = dst.get_desc();
  dnnl::binary::primitive_desc pd(dnnl::binary::desc(dnnl::algorithm::binary_add, md, operand.get_desc(), md),
                                  attributes(), engine_);
  add_step(dnnl::binary(pd), {{DNNL_ARG_SRC_0, dst}, {DNNL_ARG_SRC_1, operand}, {DNNL_ARG_DST, dst}},
           pd.scratchpad_desc());
}

dnnl::memory Builder::reshaped(const dnnl::memory& memory, const dims_t& dims) {
  if (const View* viewed = find_view(memory)) return view(viewed->storage, plain(dims), viewed->offset);
  return dnnl::memory(plain(dims), engine_, memory.get_data_handle());  // a constant
}

// [b..., M, K] x [1..., K, N] computes the same as [b... x M, K] x [K, N] on plain
// bytes, and one large matrix product runs much faster than many small ones.
bool Builder::build_folded_matmul(const blob::Op& op) {
  const int32_t a = input(op, 0), b = input(op, 1), bias = input(op, 2, true), y = output(op);
  const dims_t &as = dims(a), &bs = dims(b), &ys = dims(y);
  const size_t rank = as.size();
  if (rank < 3 || bs.size() != rank || ys.size() != rank || !is_constant(b)) return false;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (bs[d] != 1 || as[d] != ys[d]) return false;
  }
  if (as[rank - 1] != bs[rank - 2] || ys[rank - 2] != as[rank - 2] || ys[rank - 1] != bs[rank - 1]) return false;
  const int64_t rows = product(as) / as[rank - 1], k = as[rank - 1], n = bs[rank - 1];
  if (bias >= 0 && (!is_constant(bias) || product(dims(bias)) != n || dims(bias).back() != n)) return false;
  // Operands of the binary post-ops it fuses must be rows or full results to fold.
  const size_t fused = fusable_post_ops(op, 0);
  std::vector<dims_t> operand_dims;
  for (flatbuffers::uoffset_t i = 0; i < fused; ++i) {
    const blob::PostOp* post = op.post_ops()->Get(i);
    // Every post-op but an eltwise one is read as binary below (a kind this reader does
    // not know included), so each has its operand checked here.
    if (post->kind() == blob::PostOpKind::Eltwise) continue;
    const int32_t operand = post->operand();
    if (operand < 0 || static_cast<size_t>(operand) >= dims_.size()) return false;
    if (dims(operand) == ys) {
      operand_dims.push_back({rows, n});
    } else if (product(dims(operand)) == dims(operand).back() && broadcasts(dims(operand), ys)) {
      operand_dims.push_back({1, dims(operand).back()});
    } else {
      return false;
    }
  }
  const dims_t a2 = {rows, k}, b2 = {k, n}, y2 = {rows, n};
  const dnnl::matmul::desc desc = bias >= 0 ? dnnl::matmul::desc(plain(a2), any(b2), plain({1, n}), plain(y2))
                                            : dnnl::matmul::desc(plain(a2), any(b2), plain(y2));
  dnnl::primitive_attr attr = attributes();
  const float scale = op.alpha() == 0.0f ? 1.0f : op.alpha();
  if (scale != 1.0f) attr.set_output_scales(0, {scale});
  std::unordered_map<int, dnnl::memory> args;
  if (fused > 0) {
    dnnl::post_ops post_ops;
    size_t next_operand = 0;
    for (flatbuffers::uoffset_t i = 0; i < fused; ++i) {
      const blob::PostOp* post = op.post_ops()->Get(i);
      if (post->kind() == blob::PostOpKind::Eltwise) {
        post_ops.append_eltwise(1.0f, eltwise_algorithm(post->algorithm()), post->alpha(), post->beta());
        continue;
      }
      dnnl::memory operand = reshaped(as_plain(post->operand()), operand_dims[next_operand++]);
      post_ops.append_binary(binary_algorithm(post->algorithm()), operand.get_desc());
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1] = operand;
    }
    attr.set_post_ops(post_ops);
  }
  dnnl::matmul::primitive_desc pd;
  try {
    pd = dnnl::matmul::primitive_desc(desc, attr, engine_);
  } catch (const dnnl::error&) {
    return false;  // the general form (with separate post-ops if need be)
  }
  read_constant_as(b, plain(b2));
  args[DNNL_ARG_SRC] = reshaped(as_plain(a), a2);
  args[DNNL_ARG_WEIGHTS] = constant_in(b, pd.weights_desc());
  if (bias >= 0) args[DNNL_ARG_BIAS] = dnnl::memory(plain({1, n}), engine_, const_cast<void*>(constant(bias)));
  const dnnl::memory dst = define(y, plain(ys));
  args[DNNL_ARG_DST] = reshaped(dst, y2);
  add_step(dnnl::matmul(pd), std::move(args), pd.scratchpad_desc());
  add_post_op_steps(op, dst, fused);
  publish(y);
  return true;
}

desc_t Builder::matmul_operand(const blob::Op& op, flatbuffers::uoffset_t which, int32_t t) const {
  if (length(op.views()) == 0) return plain(dims(t));
  const blob::OperandView* view = op.views()->Get(which);
  const std::vector<int64_t> view_dims = longs(view->dims()), perm = longs(view->perm());
  require(view_dims.size() >= 2 && view_dims.size() <= kMaxRank && perm.size() == view_dims.size(),
          "a matmul view has a bad rank");
  const int64_t elements = product(dims(t));
  int64_t count = 1;
  for (int64_t d : view_dims) {
    require(d >= 1 && d <= elements / count, "a matmul view does not fit its tensor");
    count *= d;
  }
  require(count == elements, "a matmul view does not fit its tensor");
  dims_t strides(view_dims.size(), 1);
  for (size_t d = view_dims.size(); d-- > 1;) strides[d - 1] = strides[d] * view_dims[d];
  std::vector<bool> seen(perm.size(), false);
  dims_t md_dims, md_strides;
  for (int64_t p : perm) {
    require(p >= 0 && static_cast<size_t>(p) < perm.size() && !seen[static_cast<size_t>(p)],
            "a matmul view's perm is not a permutation");
    seen[static_cast<size_t>(p)] = true;
    md_dims.push_back(view_dims[static_cast<size_t>(p)]);
    md_strides.push_back(strides[static_cast<size_t>(p)]);
  }
  // A dim of 1 is never stepped along, but oneDNN's GEMM checks its stride as a leading
  // dimension (a row of 1 with stride 1 next to a unit-stride column is refused at run
  // time): a batch dim of 1 gets the outermost stride, a matrix dim of 1 the stride
  // that makes the matrix look dense, row-major or transposed.
  const size_t rows = md_dims.size() - 2, columns = md_dims.size() - 1;
  int64_t outermost = 1;
  for (size_t d = 0; d < md_dims.size(); ++d) outermost = std::max(outermost, md_dims[d] * md_strides[d]);
  for (size_t d = 0; d < rows; ++d) {
    if (md_dims[d] == 1) md_strides[d] = outermost;
  }
  if (md_dims[rows] == 1 && md_dims[columns] == 1) {
    md_strides[rows] = md_strides[columns] = 1;
  } else if (md_dims[rows] == 1) {
    md_strides[rows] = md_strides[columns] == 1 ? md_dims[columns] : 1;
  } else if (md_dims[columns] == 1) {
    md_strides[columns] = md_strides[rows] == 1 ? md_dims[rows] : 1;
  }
  return desc_t(md_dims, dnnl::memory::data_type::f32, md_strides);
}

void Builder::build_matmul(const blob::Op& op) {
  const bool viewed = length(op.views()) > 0;
  if (!viewed && build_folded_matmul(op)) return;
  const int32_t a = input(op, 0), b = input(op, 1), bias = input(op, 2, true), y = output(op);
  require(!viewed || length(op.views()) == 3, "a matmul has not three views");
  // With views (an Einsum), each tensor is read and written in place through strides.
  const desc_t a_view = matmul_operand(op, 0, a), b_view = matmul_operand(op, 1, b), y_view = matmul_operand(op, 2, y);
  const dims_t as = a_view.dims(), bs = b_view.dims(), ys = y_view.dims();
  require(as.size() >= 2 && as.size() == bs.size() && ys.size() == as.size(), "bad matmul ranks");
  const size_t rank = as.size();
  require(as[rank - 1] == bs[rank - 2] && ys[rank - 2] == as[rank - 2] && ys[rank - 1] == bs[rank - 1],
          "the matmul shapes do not agree");
  for (size_t d = 0; d + 2 < rank; ++d) {
    require((as[d] == ys[d] || as[d] == 1) && (bs[d] == ys[d] || bs[d] == 1), "the batch dims do not broadcast");
  }
  const bool constant_b = is_constant(b);
  // A bias and binary post-ops are in the result's dims: only where the view writes it
  // in order.
  const bool in_order = y_view == plain(dims(y));
  if (bias >= 0) require(!viewed && is_constant(bias) && broadcasts(dims(bias), ys), "bad matmul bias");
  const float scale = op.alpha() == 0.0f ? 1.0f : op.alpha();
  // The post-ops fuse when oneDNN has an optimised kernel with them: all of them, else the
  // element-wise ones before the first binary one, else none (the rest run as steps).
  const size_t post_op_count = length(op.post_ops());
  size_t eltwise_prefix = 0;
  while (eltwise_prefix < post_op_count &&
         op.post_ops()->Get(static_cast<flatbuffers::uoffset_t>(eltwise_prefix))->kind() == blob::PostOpKind::Eltwise) {
    ++eltwise_prefix;
  }
  std::vector<size_t> candidates;
  if (in_order) candidates.push_back(post_op_count);
  if (eltwise_prefix < post_op_count || !in_order) candidates.push_back(eltwise_prefix);
  if (candidates.back() > 0) candidates.push_back(0);
  // Strided operands oneDNN has only its reference kernel for are copied to plain ones
  // (and the result back) around the fast kernel instead.
  bool copies = false;
  std::unordered_map<int, dnnl::memory> args;
  dnnl::matmul::primitive_desc pd;
  size_t fused = 0;
  for (bool plain_operands : {false, true}) {
    if (plain_operands && (!viewed || !is_reference(pd.impl_info_str()))) break;
    const desc_t a_md = plain_operands ? plain(as) : a_view, y_md = plain_operands ? plain(ys) : y_view;
    const desc_t b_md = constant_b ? any(bs) : plain_operands ? plain(bs) : b_view;
    const dnnl::matmul::desc desc =
        bias >= 0 ? dnnl::matmul::desc(a_md, b_md, plain(dims(bias)), y_md) : dnnl::matmul::desc(a_md, b_md, y_md);
    bool have = false;
    for (size_t count : candidates) {
      std::unordered_map<int, dnnl::memory> candidate_args;
      dnnl::primitive_attr attr = attributes();
      if (scale != 1.0f) attr.set_output_scales(0, {scale});
      const size_t set = set_post_ops(op, ys, &attr, &candidate_args, count);
      dnnl::matmul::primitive_desc candidate;
      try {
        candidate = dnnl::matmul::primitive_desc(desc, attr, engine_);
      } catch (const dnnl::error&) {
        if (count == 0 && !have && !plain_operands) throw;
        continue;
      }
      const bool reference = is_reference(candidate.impl_info_str());
      if ((!have && !plain_operands) || !reference) {
        pd = candidate;
        args = std::move(candidate_args);
        fused = set;
        have = true;
        copies = plain_operands;
      }
      if (!reference) break;
    }
  }
  if (constant_b && viewed) read_constant_as(b, b_view);
  // With `copies`, an operand is read through a plain copy of itself first.
  const auto operand = [&](const dnnl::memory& memory, const dims_t& operand_dims) {
    if (!copies) return memory;
    dnnl::memory copy = view(new_storage(StorageKind::kArena, 0, plain(operand_dims).get_size()), plain(operand_dims));
    add_reorder(memory, copy);
    return copy;
  };
  args[DNNL_ARG_SRC] = operand(viewed ? view_of(as_plain(a), a_view) : as_plain(a), as);
  if (constant_b) {
    args[DNNL_ARG_WEIGHTS] = constant_in(b, pd.weights_desc());
  } else {
    args[DNNL_ARG_WEIGHTS] = operand(viewed ? view_of(as_plain(b), b_view) : as_plain(b), bs);
  }
  if (bias >= 0) args[DNNL_ARG_BIAS] = current(bias);
  dnnl::memory dst = define(y, plain(dims(y)));
  const dnnl::memory y_memory = viewed ? view_of(dst, y_view) : dst;
  dnnl::memory result = y_memory;
  if (copies && !in_order) result = view(new_storage(StorageKind::kArena, 0, plain(ys).get_size()), plain(ys));
  args[DNNL_ARG_DST] = result;
  add_step(dnnl::matmul(pd), std::move(args), pd.scratchpad_desc());
  if (result.get() != y_memory.get()) add_reorder(result, y_memory);
  if (fused < post_op_count) add_post_op_steps(op, dst, fused);
  publish(y);
}

void Builder::build_inner_product(const blob::Op& op) {
  const int32_t x = input(op, 0), w = input(op, 1), b = input(op, 2, true), y = output(op);
  const dims_t &xs = dims(x), &ws = dims(w);
  require(xs.size() == 2 && ws.size() == 2 && ws[1] == xs[1] && dims(y) == dims_t{xs[0], ws[0]},
          "the inner product shapes do not agree");
  require(is_constant(w), "the inner product weights are not constant");
  if (b >= 0) require(is_constant(b) && dims(b) == dims_t{ws[0]}, "bad inner product bias");
  const auto forward = dnnl::prop_kind::forward_inference;
  const dnnl::inner_product_forward::desc desc =
      b >= 0 ? dnnl::inner_product_forward::desc(forward, plain(xs), any(ws), plain(dims(b)), plain(dims(y)))
             : dnnl::inner_product_forward::desc(forward, plain(xs), any(ws), plain(dims(y)));
  std::unordered_map<int, dnnl::memory> args;
  dnnl::primitive_attr attr = attributes();
  size_t fused = set_post_ops(op, dims(y), &attr, &args);
  dnnl::inner_product_forward::primitive_desc pd;
  try {
    pd = dnnl::inner_product_forward::primitive_desc(desc, attr, engine_);
  } catch (const dnnl::error&) {
    if (fused == 0) throw;
    fused = 0;
    args.clear();
    pd = dnnl::inner_product_forward::primitive_desc(desc, attributes(), engine_);
  }
  args[DNNL_ARG_SRC] = as_plain(x);
  args[DNNL_ARG_WEIGHTS] = constant_in(w, pd.weights_desc());
  if (b >= 0) args[DNNL_ARG_BIAS] = current(b);
  dnnl::memory dst = define(y, plain(dims(y)));
  args[DNNL_ARG_DST] = dst;
  add_step(dnnl::inner_product_forward(pd), std::move(args), pd.scratchpad_desc());
  add_post_op_steps(op, dst, fused);
  publish(y);
}

void Builder::build_eltwise(const blob::Op& op) {
  const int32_t x = input(op, 0), y = output(op);
  require(dims(x) == dims(y), "an element-wise op changes the shape");
  dnnl::memory src = unpadded(x);
  const desc_t md = src.get_desc();
  dnnl::eltwise_forward::primitive_desc pd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, eltwise_algorithm(op.algorithm()), md, op.alpha(),
                                  op.beta()),
      attributes(), engine_);
  dnnl::memory dst = define(y, md);
  add_step(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc());
  add_post_op_steps(op, dst);
  publish(y);
}

void Builder::build_binary(const blob::Op& op) {
  const int32_t a = input(op, 0), b = input(op, 1), y = output(op);
  require(dims(a) == dims(y) && broadcasts(dims(b), dims(y)), "the binary op's shapes do not agree");
  const dnnl::algorithm algorithm = binary_algorithm(op.algorithm());
  // Layouts to try, best first, taking the first that has an optimised kernel: the
  // operands as they are; the second in the first's layout (same shape) or plain (a
  // broadcast one: a [1, C, 1, 1] scale left in nhwc against a blocked input has only
  // the reference kernel, 30x slower); both plain, post-ops as their own steps.
  struct Layouts {
    desc_t first, second;
    bool fuse;
  };
  const desc_t current_a = unpadded(a).get_desc(), current_b = unpadded(b).get_desc();
  const std::vector<Layouts> candidates = {
      {current_a, current_b, true},
      {current_a, dims(b) == dims(a) ? current_a : plain(dims(b)), true},
      {plain(dims(a)), plain(dims(b)), false},
  };
  // oneDNN 2.6's binary kernel misreads a broadcast operand of a binary post-op (a
  // [1, C, 1, 1] operand on a [2, C, 1, 1] result takes the wrong channels), so it fuses
  // the post-ops before the first such one; that one and the rest run as steps.
  size_t fusable = 0;
  for (; fusable < length(op.post_ops()); ++fusable) {
    const blob::PostOp* post = op.post_ops()->Get(static_cast<flatbuffers::uoffset_t>(fusable));
    if (post->kind() == blob::PostOpKind::Eltwise) continue;
    if (post->operand() < 0 || static_cast<size_t>(post->operand()) >= dims_.size()) break;  // a step refuses it
    const dims_t& operand = dims(post->operand());
    if (operand != dims(y) && product(operand) != 1) break;
  }
  std::optional<Layouts> chosen;
  dnnl::binary::primitive_desc pd;
  for (const Layouts& layouts : candidates) {
    dnnl::primitive_attr attr = attributes();
    std::unordered_map<int, dnnl::memory> unused;
    if (layouts.fuse) set_post_ops(op, dims(y), &attr, &unused, fusable);
    dnnl::binary::primitive_desc candidate;
    try {
      candidate = dnnl::binary::primitive_desc(
          dnnl::binary::desc(algorithm, layouts.first, layouts.second, layouts.first), attr, engine_);
    } catch (const dnnl::error&) {
      continue;
    }
    const bool reference = is_reference(candidate.impl_info_str());
    if (!chosen || !reference) {
      chosen = layouts;
      pd = candidate;
    }
    if (!reference) break;
  }
  require(chosen.has_value(), "oneDNN has no binary kernel for these operands");
  if (is_reference(pd.impl_info_str()) && build_merged_binary(op, algorithm)) return;
  std::unordered_map<int, dnnl::memory> args;
  dnnl::primitive_attr attr = attributes();
  const size_t fused = chosen->fuse ? set_post_ops(op, dims(y), &attr, &args, fusable) : 0;
  dnnl::memory src0 = in_format(a, chosen->first), src1 = in_format(b, chosen->second);
  dnnl::memory dst = define(y, chosen->first);
  args[DNNL_ARG_SRC_0] = src0;
  args[DNNL_ARG_SRC_1] = src1;
  args[DNNL_ARG_DST] = dst;
  add_step(dnnl::binary(pd), std::move(args), pd.scratchpad_desc());
  add_post_op_steps(op, dst, fused);
  publish(y);
}

std::optional<dnnl::binary::primitive_desc> Builder::merged_binary(dnnl::algorithm algorithm, const dims_t& merged_full,
                                                                   const dims_t& merged_small,
                                                                   const dnnl::primitive_attr& attr) {
  try {
    dnnl::binary::primitive_desc pd(
        dnnl::binary::desc(algorithm, plain(merged_full), plain(merged_small), plain(merged_full)), attr, engine_);
    if (!is_reference(pd.impl_info_str())) return pd;
  } catch (const dnnl::error&) {
  }
  return std::nullopt;
}

bool Builder::build_merged_binary(const blob::Op& op, dnnl::algorithm algorithm) {
  const int32_t a = input(op, 0), b = input(op, 1), y = output(op);
  const auto [merged_a, merged_b] = merge_broadcast_axes(dims(a), dims(b));
  if (merged_a.size() == dims(a).size()) return false;
  const std::optional<dnnl::binary::primitive_desc> pd = merged_binary(algorithm, merged_a, merged_b, attributes());
  if (!pd) return false;
  dnnl::memory dst = define(y, plain(dims(y)));
  add_step(dnnl::binary(*pd),
           {{DNNL_ARG_SRC_0, reshaped(as_plain(a), merged_a)},
            {DNNL_ARG_SRC_1, reshaped(as_plain(b), merged_b)},
            {DNNL_ARG_DST, reshaped(dst, merged_a)}},
           pd->scratchpad_desc());
  add_post_op_steps(op, dst, 0);
  publish(y);
  return true;
}

void Builder::build_softmax(const blob::Op& op, bool log) {
  const int32_t x = input(op, 0), y = output(op);
  require(dims(x) == dims(y), "softmax changes the shape");
  require(op.axis() >= 0 && static_cast<size_t>(op.axis()) < dims(x).size(), "the softmax axis is out of range");
  dnnl::memory src = as_plain(x);
  const desc_t md = src.get_desc();
  dnnl::memory dst = define(y, md);
  if (log) {
    dnnl::logsoftmax_forward::primitive_desc pd(
        dnnl::logsoftmax_forward::desc(dnnl::prop_kind::forward_inference, md, op.axis()), attributes(), engine_);
    add_step(dnnl::logsoftmax_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc());
  } else {
    dnnl::softmax_forward::primitive_desc pd(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, op.axis()), attributes(), engine_);
    add_step(dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc());
  }
  publish(y);
}

void Builder::build_pooling(const blob::Op& op) {
  const int32_t x = input(op, 0), y = output(op);
  const dims_t& xs = dims(x);
  require(xs.size() >= 3 && xs.size() <= 5 && dims(y).size() == xs.size(), "bad pooling ranks");
  const size_t spatial = xs.size() - 2;
  const std::vector<int64_t> kernel = longs(op.kernel()), strides = longs(op.strides()),
                             dilations = longs(op.dilations()), begin = longs(op.padding_begin()),
                             end = longs(op.padding_end());
  require(kernel.size() == spatial && strides.size() == spatial && dilations.size() == spatial &&
              begin.size() == spatial && end.size() == spatial,
          "the window does not match the spatial dims");
  dnnl::algorithm algorithm;
  switch (op.algorithm()) {
    case Algorithm::MaxPool: algorithm = dnnl::algorithm::pooling_max; break;
    case Algorithm::AvgPoolIncludePad: algorithm = dnnl::algorithm::pooling_avg_include_padding; break;
    case Algorithm::AvgPoolExcludePad: algorithm = dnnl::algorithm::pooling_avg_exclude_padding; break;
    default: throw BlobError("bad pooling algorithm");
  }
  dnnl::memory src = current(x);
  const auto describe = [&](const desc_t& dst) {
    return dnnl::pooling_v2_forward::primitive_desc(
        dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, algorithm, src.get_desc(), dst, strides,
                                       kernel, dilations, begin, end),
        attributes(), engine_);
  };
  dnnl::pooling_v2_forward::primitive_desc pd = describe(any(dims(y)));
  // A concatenation group's member is written in the group's layout when a fast kernel
  // does that (src/concat_in_place.h).
  if (const desc_t member = member_layout(y); !member.is_zero() && pd.dst_desc() != member) {
    try {
      dnnl::pooling_v2_forward::primitive_desc in_layout = describe(member);
      if (!is_reference(in_layout.impl_info_str())) pd = in_layout;
    } catch (const dnnl::error&) {
    }
  }
  if (pd.src_desc() != src.get_desc()) src = in_format(x, pd.src_desc());
  dnnl::memory dst = define(y, pd.dst_desc());
  add_step(dnnl::pooling_v2_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc());
  publish(y);
}

void Builder::build_batch_norm(const blob::Op& op) {
  const int32_t x = input(op, 0), y = output(op);
  require(dims(x) == dims(y) && dims(x).size() >= 2, "batch normalization changes the shape");
  const int64_t channels = dims(x)[1];
  int32_t params[4];
  for (size_t i = 0; i < 4; ++i) {
    params[i] = input(op, i + 1);
    require(is_constant(params[i]) && dims(params[i]) == dims_t{channels},
            "batch normalization parameters are not constants of C elements");
  }
  dnnl::memory src = current(x);
  auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  // A Relu right after it rides in the primitive; other element-wise post-ops run after.
  size_t fused = 0;
  if (length(op.post_ops()) > 0) {
    const blob::PostOp* first = op.post_ops()->Get(0);
    require(first->kind() == blob::PostOpKind::Eltwise, "a batch normalization has a binary post-op");
    if (first->algorithm() == Algorithm::Relu && first->alpha() == 0.0f) {
      flags |= dnnl::normalization_flags::fuse_norm_relu;
      fused = 1;
    }
  }
  dnnl::batch_normalization_forward::primitive_desc pd(
      dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_inference, src.get_desc(), op.epsilon(), flags),
      attributes(), engine_);
  dnnl::memory dst = define(y, src.get_desc());
  add_step(dnnl::batch_normalization_forward(pd),
           {{DNNL_ARG_SRC, src},
            {DNNL_ARG_DST, dst},
            {DNNL_ARG_SCALE, current(params[0])},
            {DNNL_ARG_SHIFT, current(params[1])},
            {DNNL_ARG_MEAN, current(params[2])},
            {DNNL_ARG_VARIANCE, current(params[3])}},
           pd.scratchpad_desc());
  add_post_op_steps(op, dst, fused);
  publish(y);
}

void Builder::build_layer_norm(const blob::Op& op) {
  const int32_t x = input(op, 0), scale = input(op, 1, true), shift = input(op, 2, true), y = output(op);
  require(dims(x) == dims(y), "layer normalization changes the shape");
  const dims_t channels = {dims(x).back()};
  auto flags = dnnl::normalization_flags::none;
  if (scale >= 0) {
    require(is_constant(scale) && dims(scale) == channels, "the layer normalization scale does not fit");
    flags |= dnnl::normalization_flags::use_scale;
  }
  if (shift >= 0) {
    require(is_constant(shift) && dims(shift) == channels, "the layer normalization shift does not fit");
    flags |= dnnl::normalization_flags::use_shift;
  }
  dnnl::memory src = as_plain(x);
  dnnl::layer_normalization_forward::primitive_desc pd(
      dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, src.get_desc(), op.epsilon(), flags),
      attributes(), engine_);
  dnnl::memory dst = define(y, src.get_desc());
  std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  if (scale >= 0) args[DNNL_ARG_SCALE] = current(scale);
  if (shift >= 0) args[DNNL_ARG_SHIFT] = current(shift);
  add_step(dnnl::layer_normalization_forward(pd), std::move(args), pd.scratchpad_desc());
  publish(y);
}

size_t Builder::member_offset(int32_t t) const {
  const dims_t& ds = dims(t);
  // nChw16c with a batch of 1: channel c starts block c / 16, each block H x W x 16.
  return static_cast<size_t>(concat_groups_.members.at(t).channel * ds[2] * ds[3]) * sizeof(float);
}

desc_t Builder::member_layout(int32_t t) const {
  return concat_groups_.members.count(t) > 0 ? blocked16(dims(t)) : desc_t();
}

std::pair<desc_t, desc_t> Builder::group_layouts(int32_t x, int32_t y) {
  const desc_t src = current(x).get_desc(), member = member_layout(y);
  const bool blocked_src = !concat_groups_.prefixes.empty() && dims(x).size() == 4 && src == blocked16(dims(x));
  if (!blocked_src && member.is_zero()) return {};
  return {blocked_src ? src : any(dims(x)), member.is_zero() ? any(dims(y)) : member};
}

void Builder::build_concat_in_place(const blob::Op& op, int32_t y, size_t group) {
  const int storage = group_storages_[group];
  int64_t channels = 0;
  for (size_t i = 0; i < op.inputs()->size(); ++i) {
    const int32_t x = input(op, i);
    require(dims(x).size() == 4 && dims(x)[2] == dims(y)[2] && dims(x)[3] == dims(y)[3],
            "a concat input's shape differs");
    channels += dims(x)[1];
    require(concat_groups_.members.count(x) > 0, "a concat input is not in its group");
    if (members_written_.insert(x).second) add_reorder(current(x), view(storage, member_layout(x), member_offset(x)));
  }
  require(channels == dims(y)[1], "the concat inputs do not add up");
  Value& value = values_[static_cast<size_t>(y)];
  value.storage = storage;
  value.md = blocked16(dims(y));
  value.memory = view(storage, value.md);
  value.defined = true;
}

void Builder::build_concat(const blob::Op& op) {
  const int32_t y = output(op);
  require(length(op.inputs()) >= 1 && op.axis() >= 0 && static_cast<size_t>(op.axis()) < dims(y).size(),
          "bad concat inputs or axis");
  if (const auto prefix = concat_groups_.prefixes.find(y); prefix != concat_groups_.prefixes.end()) {
    build_concat_in_place(op, y, prefix->second);
    return;
  }
  std::vector<int32_t> inputs;
  std::vector<desc_t> as_they_are;
  int64_t total = 0;
  for (size_t i = 0; i < op.inputs()->size(); ++i) {
    const int32_t x = input(op, i);
    require(dims(x).size() == dims(y).size(), "a concat input's rank differs");
    for (size_t d = 0; d < dims(y).size(); ++d) {
      if (static_cast<int32_t>(d) != op.axis()) require(dims(x)[d] == dims(y)[d], "a concat input's shape differs");
    }
    total += dims(x)[static_cast<size_t>(op.axis())];
    inputs.push_back(x);
    as_they_are.push_back(current(x).get_desc());
  }
  require(total == dims(y)[static_cast<size_t>(op.axis())], "the concat inputs do not add up");
  // The inputs in the layouts they have (channels-last or blocked convolution results),
  // the result in the layout oneDNN picks for them, so no reorder runs either side: in
  // a DenseNet or SqueezeNet the concat sits between convolutions. Plain when oneDNN
  // has only its reference kernel for that.
  dnnl::concat::primitive_desc pd;
  bool native = false;
  try {
    pd = dnnl::concat::primitive_desc(op.axis(), as_they_are, engine_, attributes());
    native = !is_reference(pd.impl_info_str());
  } catch (const dnnl::error&) {
  }
  if (!native) {
    std::vector<desc_t> plain_sources;
    for (int32_t x : inputs) plain_sources.push_back(plain(dims(x)));
    pd = dnnl::concat::primitive_desc(plain(dims(y)), op.axis(), plain_sources, engine_, attributes());
  }
  std::unordered_map<int, dnnl::memory> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = in_format(inputs[i], pd.src_desc(static_cast<int>(i)));
  }
  args[DNNL_ARG_DST] = define(y, pd.dst_desc());
  add_step(dnnl::concat(pd), std::move(args), pd.scratchpad_desc());
  publish(y);
}

void Builder::build_reorder(const blob::Op& op) {
  const int32_t x = input(op, 0), y = output(op);
  const dims_t &xs = dims(x), &ys = dims(y);
  const std::vector<int64_t> perm = longs(op.perm()), starts = longs(op.starts());
  std::vector<int64_t> steps = longs(op.steps());
  if (steps.empty()) steps.assign(starts.size(), 1);
  const float scale = op.alpha() == 0.0f ? 1.0f : op.alpha();
  require(perm.empty() || starts.empty(), "a reorder both transposes and slices");
  if (!perm.empty()) {
    define(y, plain(ys));
    const int storage = values_[static_cast<size_t>(y)].storage;
    require(perm.size() == xs.size() && ys.size() == xs.size(), "perm does not fit the input");
    std::vector<bool> seen(xs.size(), false);
    dims_t out_strides(ys.size(), 1);
    for (size_t d = ys.size(); d-- > 1;) out_strides[d - 1] = out_strides[d] * ys[d];
    dims_t strides(xs.size(), 0);
    for (size_t j = 0; j < perm.size(); ++j) {
      require(perm[j] >= 0 && static_cast<size_t>(perm[j]) < xs.size() && !seen[static_cast<size_t>(perm[j])],
              "perm is not a permutation");
      seen[static_cast<size_t>(perm[j])] = true;
      require(ys[j] == xs[static_cast<size_t>(perm[j])], "the transposed shape does not fit");
      strides[static_cast<size_t>(perm[j])] = out_strides[j];
    }
    // The output's bytes seen in the input's dim order.
    add_reorder(current(x), view(storage, desc_t(xs, dnnl::memory::data_type::f32, strides)), scale);
  } else if (std::any_of(steps.begin(), steps.end(), [](int64_t step) { return step < 0; })) {
    build_backward_slice(x, y, starts, steps, scale);
    return;
  } else if (!starts.empty()) {
    require(starts.size() == xs.size() && steps.size() == xs.size() && ys.size() == xs.size(),
            "starts or steps does not fit the input");
    for (size_t d = 0; d < xs.size(); ++d) {
      // Written so that no sum overflows: dims are below 2^31, starts are anything.
      require(starts[d] >= 0 && starts[d] < xs[d] && ys[d] >= 1 && steps[d] >= 1 && steps[d] <= xs[d] &&
                  ys[d] - 1 <= (xs[d] - 1 - starts[d]) / steps[d],
              "the slice leaves the input");
    }
    // In the input's layout when it has no blocks (a convolution's nhwc result sliced
    // for the next one, as ShuffleNet does), else plain.
    dnnl::memory source = is_strided(current(x).get_desc()) ? current(x) : as_plain(x);
    dnnl::memory dst = define(y, strided_like(source.get_desc(), ys));
    // The window: the sub-memory at `starts`, each axis's stride times its step.
    desc_t window_md = source.get_desc().submemory_desc(ys, starts);
    for (size_t d = 0; d < xs.size(); ++d) window_md.data.format_desc.blocking.strides[d] *= steps[d];
    add_reorder(view_of(source, window_md), dst, scale);
  } else {
    require(xs == ys, "a copy changes the shape");
    add_reorder(current(x), define(y, plain(ys)), scale);
  }
  publish(y);
}

void Builder::build_backward_slice(int32_t x, int32_t y, const std::vector<int64_t>& starts,
                                   const std::vector<int64_t>& steps, float scale) {
  const dims_t &xs = dims(x), &ys = dims(y);
  require(starts.size() == xs.size() && steps.size() == xs.size() && ys.size() == xs.size(),
          "starts or steps does not fit the input");
  for (size_t d = 0; d < xs.size(); ++d) {  // every index start + i * step within the axis
    require(starts[d] >= 0 && starts[d] < xs[d] && steps[d] != 0 && steps[d] >= -xs[d] && steps[d] <= xs[d] &&
                (steps[d] > 0 ? ys[d] - 1 <= (xs[d] - 1 - starts[d]) / steps[d] : ys[d] - 1 <= starts[d] / -steps[d]),
            "the slice leaves the input");
  }
  std::vector<int64_t> index_map;
  index_map.reserve(index_map_length(ys));
  for (size_t d = 0; d < xs.size(); ++d) {
    for (int64_t i = 0; i < ys[d]; ++i) index_map.push_back(starts[d] + i * steps[d]);
  }
  define(y, plain(ys));
  add_indexed_copy(x, y, std::move(index_map), scale);
  publish(y);
}

void Builder::add_indexed_copy(int32_t x, int32_t y, std::vector<int64_t> index_map, float scale) {
  const dims_t &xs = dims(x), &ys = dims(y);
  require(xs.size() == ys.size() && index_map.size() == index_map_length(ys), "an index map does not fit its output");
  Step step;
  step.kind = Step::Kind::kIndexedCopy;
  step.source = as_plain(x);
  step.destination = values_[static_cast<size_t>(y)].memory;
  step.count = static_cast<size_t>(product(ys));
  step.value = scale;
  step.dims.assign(ys.begin(), ys.end());
  step.strides.assign(xs.size(), 0);
  int64_t stride = 1;
  for (size_t d = xs.size(); d-- > 0;) {
    step.strides[d] = stride;
    stride *= xs[d];
  }
  step.index_map = std::move(index_map);
  plan_.steps.push_back(std::move(step));
}

void Builder::build_reshape(const blob::Op& op) {
  const int32_t x = input(op, 0), y = output(op);
  alias(y, x);
}

void Builder::build_reduction(const blob::Op& op) {
  const int32_t x = input(op, 0), y = output(op);
  require(broadcasts(dims(y), dims(x)), "the reduced shape does not fit the input");
  dnnl::algorithm algorithm;
  switch (op.algorithm()) {
    case Algorithm::ReduceMean: algorithm = dnnl::algorithm::reduction_mean; break;
    case Algorithm::ReduceSum: algorithm = dnnl::algorithm::reduction_sum; break;
    case Algorithm::ReduceMax: algorithm = dnnl::algorithm::reduction_max; break;
    case Algorithm::ReduceMin: algorithm = dnnl::algorithm::reduction_min; break;
    default: throw BlobError("bad reduction algorithm");
  }
  // A mean or max over every spatial dim (a global pool written as x.mean([2, 3])) runs
  // as a pooling in the input's layout: oneDNN's reduction over the innermost dims of a
  // plain tensor is about 40x slower, and the input need not be reordered to plain.
  const dims_t &xs = dims(x), &ys = dims(y);
  const bool over_spatial = xs.size() >= 3 && xs.size() <= 5 && ys[0] == xs[0] && ys[1] == xs[1] &&
                            std::all_of(ys.begin() + 2, ys.end(), [](int64_t d) { return d == 1; });
  if (over_spatial && (algorithm == dnnl::algorithm::reduction_mean || algorithm == dnnl::algorithm::reduction_max)) {
    const dims_t kernel(xs.begin() + 2, xs.end()), ones(xs.size() - 2, 1), zeros(xs.size() - 2, 0);
    const dnnl::algorithm pooling = algorithm == dnnl::algorithm::reduction_mean
                                        ? dnnl::algorithm::pooling_avg_exclude_padding
                                        : dnnl::algorithm::pooling_max;
    dnnl::memory src = current(x);
    dnnl::pooling_v2_forward::primitive_desc pd(
        dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, pooling, src.get_desc(), any(ys), ones,
                                       kernel, zeros, zeros, zeros),
        attributes(), engine_);
    if (pd.src_desc() != src.get_desc()) src = in_format(x, pd.src_desc());
    dnnl::memory dst = define(y, pd.dst_desc());
    add_step(dnnl::pooling_v2_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc());
    publish(y);
    return;
  }
  dnnl::memory src = as_plain(x);
  const desc_t md = plain(ys);
  dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(algorithm, src.get_desc(), md, 0.0f, 0.0f), attributes(),
                                     engine_);
  dnnl::memory dst = define(y, md);
  add_step(dnnl::reduction(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc());
  publish(y);
}

void Builder::build_erf(const blob::Op& op) {
  const int32_t x = input(op, 0), y = output(op);
  require(dims(x) == dims(y), "erf changes the shape");
  Step step;
  step.kind = Step::Kind::kErf;
  step.source = as_plain(x);
  step.destination = define(y, plain(dims(y)));
  step.count = static_cast<size_t>(product(dims(y)));
  plan_.steps.push_back(std::move(step));
  publish(y);
}

void Builder::build_resampling(const blob::Op& op) {
  const int32_t x = input(op, 0), y = output(op);
  const dims_t &xs = dims(x), &ys = dims(y);
  require(xs.size() >= 3 && xs.size() <= 5 && ys.size() == xs.size() && ys[0] == xs[0] && ys[1] == xs[1],
          "bad resampling shapes");
  require(op.algorithm() == Algorithm::None || op.algorithm() == Algorithm::Nearest, "bad resampling algorithm");
  const dnnl::algorithm algorithm =
      op.algorithm() == Algorithm::Nearest ? dnnl::algorithm::resampling_nearest : dnnl::algorithm::resampling_linear;
  // In the input's layout (a convolution's channels-last or blocked result) when oneDNN
  // has an optimised kernel for it, else plain.
  dnnl::resampling_forward::primitive_desc pd;
  for (const desc_t& src : {current(x).get_desc(), plain(xs)}) {
    pd = dnnl::resampling_forward::primitive_desc(
        dnnl::resampling_forward::desc(dnnl::prop_kind::forward_inference, algorithm, src, any(ys)), attributes(),
        engine_);
    if (!is_reference(pd.impl_info_str())) break;
  }
  dnnl::memory src = in_format(x, pd.src_desc());
  dnnl::memory dst = define(y, pd.dst_desc());
  add_step(dnnl::resampling_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc());
  publish(y);
}

// A channel shuffle in the input's layout: oneDNN 2.6 has JIT shuffle kernels for
// blocked layouts only, so in a strided one (plain, nhwc) it is one reorder between two
// views splitting the axis into [groups, C / groups], the output's with the two swapped.
void Builder::build_shuffle(const blob::Op& op) {
  const int32_t x = input(op, 0), y = output(op);
  const dims_t& xs = dims(x);
  require(dims(y) == xs, "a shuffle changes the shape");
  require(op.axis() >= 0 && static_cast<size_t>(op.axis()) < xs.size(), "the shuffle's axis is out of range");
  const size_t axis = static_cast<size_t>(op.axis());
  const int64_t groups = op.groups();
  require(groups >= 1 && groups <= xs[axis] && xs[axis] % groups == 0, "the shuffle's groups do not divide its axis");
  dnnl::memory src = current(x);
  if (!is_strided(src.get_desc())) {
    // oneDNN sees the axis as [C / group_size, group_size] transposed: its group_size
    // is C / groups.
    dnnl::shuffle_forward::primitive_desc pd(
        dnnl::shuffle_forward::desc(dnnl::prop_kind::forward_inference, src.get_desc(), op.axis(), xs[axis] / groups),
        engine_, attributes());
    if (!is_reference(pd.impl_info_str())) {
      dnnl::memory dst = define(y, pd.dst_desc());
      add_step(dnnl::shuffle_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, pd.scratchpad_desc());
      publish(y);
      return;
    }
    src = as_plain(x);
  }
  const desc_t md = src.get_desc();
  dnnl::memory dst = define(y, md);
  const dnnl_dims_t& strides = md.data.format_desc.blocking.strides;
  dims_t split = xs, from(strides, strides + xs.size()), to;
  const int64_t stride = from[axis], inner = xs[axis] / groups;
  split[axis] = inner;
  split.insert(split.begin() + static_cast<std::ptrdiff_t>(axis), groups);
  from.insert(from.begin() + static_cast<std::ptrdiff_t>(axis), inner * stride);
  to = from;
  to[axis] = stride;               // input group i goes to output index j * groups + i
  to[axis + 1] = groups * stride;  // its element j
  add_reorder(view_of(src, desc_t(split, dnnl::memory::data_type::f32, from)),
              view(values_[static_cast<size_t>(y)].storage, desc_t(split, dnnl::memory::data_type::f32, to)));
  publish(y);
}

void Builder::build_pad(const blob::Op& op) {
  const int32_t x = input(op, 0), y = output(op);
  const dims_t &xs = dims(x), &ys = dims(y);
  const std::vector<int64_t> starts = longs(op.starts());
  require(xs.size() == ys.size() && starts.size() == xs.size(), "the pad's ranks do not agree");
  for (size_t d = 0; d < xs.size(); ++d) {
    require(starts[d] >= 0 && starts[d] <= ys[d] - xs[d], "the padded input leaves the output");
  }
  const Algorithm mode = op.algorithm();
  require(mode == Algorithm::None || mode == Algorithm::PadReflect || mode == Algorithm::PadEdge, "bad pad algorithm");
  dnnl::memory dst = define(y, plain(ys));
  if (mode != Algorithm::None) {
    add_mirrored_pads(x, y, starts, mode == Algorithm::PadReflect);
    publish(y);
    return;
  }
  // The whole output takes the pad value, then the input is copied into its window.
  Step fill;
  fill.kind = Step::Kind::kFill;
  fill.destination = dst;
  fill.count = static_cast<size_t>(product(ys));
  fill.value = op.alpha();
  plan_.steps.push_back(std::move(fill));
  const int storage = values_[static_cast<size_t>(y)].storage;
  add_reorder(current(x), view(storage, plain(ys).submemory_desc(xs, starts)));
  publish(y);
}

void Builder::add_mirrored_pads(int32_t x, int32_t y, const std::vector<int64_t>& starts, bool reflect) {
  const dims_t &xs = dims(x), &ys = dims(y);
  // Reflect and edge pads are an index map per axis: output index i of axis d reads the
  // input at map_d(i), mirrored without the edge or clamped to it.
  std::vector<int64_t> index_map;
  index_map.reserve(index_map_length(ys));
  for (size_t d = 0; d < xs.size(); ++d) {
    const int64_t first = starts[d], last = starts[d] + xs[d] - 1;
    require(!reflect || (first < xs[d] && ys[d] - 1 - last < xs[d]), "the reflect pads outgrow the axis");
    for (int64_t i = 0; i < ys[d]; ++i) {
      const int64_t at = i < first ? (reflect ? 2 * first - i : first) : i > last ? (reflect ? 2 * last - i : last) : i;
      index_map.push_back(at - first);
    }
  }
  add_indexed_copy(x, y, std::move(index_map), 1.0f);
}

void Builder::build_gather(const blob::Op& op) {
  const int32_t table = input(op, 0), indices = input(op, 1), y = output(op);
  require(length(op.inputs()) == 2 && is_constant(table) && type(table) == blob::DataType::F32 &&
              type(indices) == blob::DataType::S64 && type(y) == blob::DataType::F32,
          "a gather is not of a float32 constant by int64 indices");
  const dims_t &ts = dims(table), &is = dims(indices), &ys = dims(y);
  dims_t expected = is;
  if (is.size() == 1 && is[0] == 1 && ys.size() + 1 == ts.size()) expected.clear();  // scalar indices
  expected.insert(expected.end(), ts.begin() + 1, ts.end());
  require(ys == expected, "a gather's output does not fit its table and indices");
  Step step;
  step.kind = Step::Kind::kGather;
  step.source = current(indices);
  step.table = current(table);
  step.destination = define(y, plain(ys));
  step.count = static_cast<size_t>(product(is));
  step.inner = static_cast<size_t>(product(ts) / ts[0]);
  step.rows = ts[0];
  plan_.steps.push_back(std::move(step));
  publish(y);
}

void Builder::build_rnn(const blob::Op& op) {
  const Algorithm kind = op.algorithm();
  require(kind == Algorithm::Lstm || kind == Algorithm::Gru || kind == Algorithm::GruLinearBeforeReset,
          "bad recurrent algorithm");
  const bool lstm = kind == Algorithm::Lstm, lbr = kind == Algorithm::GruLinearBeforeReset;
  const int32_t x = input(op, 0), layer_weights = input(op, 1), iter_weights = input(op, 2), bias = input(op, 3);
  const int32_t h0 = input(op, 4, true), c0 = input(op, 5, true);
  require(length(op.outputs()) == (lstm ? 3u : 2u), "a recurrent op has the wrong number of outputs");
  std::vector<int32_t> outputs;
  for (flatbuffers::uoffset_t o = 0; o < op.outputs()->size(); ++o) {
    const int32_t t = op.outputs()->Get(o);
    require(t >= 0 && static_cast<size_t>(t) < dims_.size(), "an output is out of range");
    require(!is_constant(t) && tensor(t).external_input() < 0, "an output is a constant or an input");
    require(!values_[static_cast<size_t>(t)].defined, "an output is written twice");
    outputs.push_back(t);
  }
  const dims_t& xs = dims(x);
  const dims_t& ws = dims(layer_weights);
  require(xs.size() == 3 && ws.size() == 5 && ws[0] == 1 && (ws[1] == 1 || ws[1] == 2) && ws[2] == xs[2] &&
              ws[3] == (lstm ? 4 : 3),
          "the recurrent weights do not fit the input");
  const int64_t directions = ws[1], gates = ws[3], hidden = ws[4], steps = xs[0], batch = xs[1];
  const dims_t state = {1, directions, batch, hidden};
  require(dims(iter_weights) == dims_t{1, directions, hidden, gates, hidden} &&
              dims(bias) == dims_t{1, directions, gates + (lbr ? 1 : 0), hidden} && (h0 < 0 || dims(h0) == state) &&
              (c0 < 0 || (lstm && dims(c0) == state)) &&
              dims(outputs[0]) == dims_t{steps, batch, directions * hidden} && dims(outputs[1]) == state &&
              (!lstm || dims(outputs[2]) == state),
          "the recurrent op's shapes do not agree");
  for (int32_t t : {layer_weights, iter_weights, bias}) require(is_constant(t), "the weights are not constant");
  require(op.axis() >= 0 && op.axis() <= 2 && (op.axis() == 2) == (directions == 2), "bad recurrent direction");
  const dnnl::rnn_direction direction = op.axis() == 0   ? dnnl::rnn_direction::unidirectional_left2right
                                        : op.axis() == 1 ? dnnl::rnn_direction::unidirectional_right2left
                                                         : dnnl::rnn_direction::bidirectional_concat;
  if (batch <= kRecurrentStepMaxBatch || plan_threads() > 1) {
    const auto cell = lstm  ? RecurrentShape::Cell::kLstm
                      : lbr ? RecurrentShape::Cell::kGruResetAfter
                            : RecurrentShape::Cell::kGru;
    build_recurrent_step(op, RecurrentShape{cell, steps, batch, xs[2], hidden, directions, op.axis()}, outputs);
    return;
  }
  const auto inference = dnnl::prop_kind::forward_inference;
  // oneDNN's LSTM takes both initial states or neither (differential seed 1029009: h0
  // alone was refused at init): one given alone is paired with zeros.
  const bool states = h0 >= 0 || c0 >= 0;
  const desc_t src = plain(xs), h0_md = states ? plain(state) : desc_t();
  const desc_t c0_md = lstm && states ? plain(state) : desc_t();
  const desc_t weights_layer = any(ws), weights_iter = any(dims(iter_weights)), bias_md = plain(dims(bias));
  const desc_t dst = plain(dims(outputs[0])), state_md = plain(state);
  std::unordered_map<int, dnnl::memory> args;
  dnnl::primitive primitive;
  desc_t scratchpad, layer_format, iter_format;
  if (lstm) {
    dnnl::lstm_forward::primitive_desc pd(
        dnnl::lstm_forward::desc(inference, direction, src, h0_md, c0_md, weights_layer, weights_iter, bias_md, dst,
                                 state_md, state_md),
        attributes(), engine_);
    primitive = dnnl::lstm_forward(pd);
    scratchpad = pd.scratchpad_desc();
    layer_format = pd.weights_layer_desc();
    iter_format = pd.weights_iter_desc();
  } else if (lbr) {
    dnnl::lbr_gru_forward::primitive_desc pd(
        dnnl::lbr_gru_forward::desc(inference, direction, src, h0_md, weights_layer, weights_iter, bias_md, dst,
                                    state_md),
        attributes(), engine_);
    primitive = dnnl::lbr_gru_forward(pd);
    scratchpad = pd.scratchpad_desc();
    layer_format = pd.weights_layer_desc();
    iter_format = pd.weights_iter_desc();
  } else {
    dnnl::gru_forward::primitive_desc pd(
        dnnl::gru_forward::desc(inference, direction, src, h0_md, weights_layer, weights_iter, bias_md, dst, state_md),
        attributes(), engine_);
    primitive = dnnl::gru_forward(pd);
    scratchpad = pd.scratchpad_desc();
    layer_format = pd.weights_layer_desc();
    iter_format = pd.weights_iter_desc();
  }
  auto zeros = [&]() {
    dnnl::memory memory(state_md, engine_);
    std::memset(memory.get_data_handle(), 0, state_md.get_size());
    plan_.constants.push_back(memory);
    return memory;
  };
  args[DNNL_ARG_SRC_LAYER] = as_plain(x);
  if (states) args[DNNL_ARG_SRC_ITER] = h0 >= 0 ? as_plain(h0) : zeros();
  if (lstm && states) args[DNNL_ARG_SRC_ITER_C] = c0 >= 0 ? as_plain(c0) : zeros();
  args[DNNL_ARG_WEIGHTS_LAYER] = constant_in(layer_weights, layer_format);
  args[DNNL_ARG_WEIGHTS_ITER] = constant_in(iter_weights, iter_format);
  args[DNNL_ARG_BIAS] = current(bias);
  args[DNNL_ARG_DST_LAYER] = define(outputs[0], dst);
  args[DNNL_ARG_DST_ITER] = define(outputs[1], state_md);
  if (lstm) args[DNNL_ARG_DST_ITER_C] = define(outputs[2], state_md);
  add_step(primitive, std::move(args), scratchpad);
  for (int32_t t : outputs) publish(t);
}

void Builder::build_recurrent_step(const blob::Op& op, const RecurrentShape& shape,
                                   const std::vector<int32_t>& outputs) {
  const int32_t x = input(op, 0), h0 = input(op, 4, true), c0 = input(op, 5, true);
  Step step;
  step.kind = Step::Kind::kRecurrent;
  step.recurrent = shape;
  step.args[DNNL_ARG_SRC_LAYER] = as_plain(x);
  if (h0 >= 0) step.args[DNNL_ARG_SRC_ITER] = as_plain(h0);
  if (c0 >= 0) step.args[DNNL_ARG_SRC_ITER_C] = as_plain(c0);
  // The weights packed once, now, into memories the plan keeps.
  auto packed = [&](int32_t t, bool recurrent) {
    dnnl::memory memory(plain({product(dims(t))}), engine_);
    pack_recurrent_weights(static_cast<const float*>(constant(t)), shape, recurrent,
                           static_cast<float*>(memory.get_data_handle()));
    plan_.constants.push_back(memory);
    return memory;
  };
  step.args[DNNL_ARG_WEIGHTS_LAYER] = packed(input(op, 1), false);
  step.args[DNNL_ARG_WEIGHTS_ITER] = packed(input(op, 2), true);
  step.args[DNNL_ARG_BIAS] = current(input(op, 3));
  const int arg[] = {DNNL_ARG_DST_LAYER, DNNL_ARG_DST_ITER, DNNL_ARG_DST_ITER_C};
  for (size_t o = 0; o < outputs.size(); ++o) step.args[arg[o]] = define(outputs[o], plain(dims(outputs[o])));
  step.args[DNNL_ARG_SCRATCHPAD] = scratchpad_view(plain({static_cast<int64_t>(recurrent_scratch_floats(shape))}));
  plan_.steps.push_back(std::move(step));
  for (int32_t t : outputs) publish(t);
}

// ---- Quantized ops --------------------------------------------------------------------------

void Builder::set_requantization(const blob::Op& op, int channel_dim, int64_t channels, dnnl::primitive_attr* attr,
                                 std::unordered_map<int, dnnl::memory>* args, bool src_zero_point) {
  const size_t count = length(op.scales());
  require(count == 1 || (count == static_cast<size_t>(channels) && count > 1),
          "the requantization has not one scale or one per channel");
  std::vector<float> scales(op.scales()->begin(), op.scales()->end());
  attr->set_output_scales(count == 1 ? 0 : 1 << channel_dim, scales);
  // One int32 per zero point, held by the plan (the zero point is the op's, never the
  // host's); none where it is 0.
  auto zero_point = [&](int arg, int32_t value) {
    if (value == 0) return;
    attr->set_zero_points(arg, 0, {DNNL_RUNTIME_S32_VAL});
    dnnl::memory memory(desc_t({1}, dnnl::memory::data_type::s32, dnnl::memory::format_tag::x), engine_);
    *static_cast<int32_t*>(memory.get_data_handle()) = value;
    plan_.constants.push_back(memory);
    (*args)[DNNL_ARG_ATTR_ZERO_POINTS | arg] = memory;
  };
  if (src_zero_point) zero_point(DNNL_ARG_SRC, op.src_zero_point());
  zero_point(DNNL_ARG_DST, op.dst_zero_point());
}

/// Without padding every tap of the window reads src, so sum((x - zx) * w) + bias =
/// sum(x * w) + (bias - zx * sum(w)) per output channel: the src zero point folds into
/// an int32 bias made here, and oneDNN runs the convolution without a run-time zero
/// point, on faster kernels (a quarter less time on mobilenet_v2's 1x1 convolutions).
/// oneDNN converts the accumulator and the bias to float32 before adding them, exactly
/// while both are below 2^24: folded only where that holds for every src (the bound
/// 255 * sum(|w|)) and for the new bias, so the result is the unfolded one.
std::optional<dnnl::memory> Builder::folded_zero_point_bias(const blob::Op& op, const ConvWindow& window) {
  const int32_t w = input(op, 1), b = input(op, 2, true);
  const auto no_pad = [](const std::vector<int64_t>& pads) {
    return std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p <= 0; });
  };
  if (op.src_zero_point() == 0 || !no_pad(window.begin) || !no_pad(window.end)) return std::nullopt;
  const auto out_channels = static_cast<size_t>(window.out_channels);
  const auto per_channel = static_cast<size_t>(product(dims(w)) / window.out_channels);
  const auto* weights = static_cast<const int8_t*>(constant(w));
  constexpr int64_t kExact = int64_t{1} << 24;
  std::vector<int32_t> folded(out_channels);
  for (size_t oc = 0; oc < out_channels; ++oc) {
    int64_t sum = 0, magnitude = 0;
    for (size_t i = oc * per_channel; i < (oc + 1) * per_channel; ++i) {
      sum += weights[i];
      magnitude += weights[i] < 0 ? -weights[i] : weights[i];
    }
    int32_t bias = 0;
    if (b >= 0) std::memcpy(&bias, static_cast<const uint8_t*>(constant(b)) + oc * sizeof bias, sizeof bias);
    const int64_t value = bias - int64_t{op.src_zero_point()} * sum;
    if (255 * magnitude > kExact || value > kExact || value < -kExact) return std::nullopt;
    folded[oc] = static_cast<int32_t>(value);
  }
  dnnl::memory memory(plain({window.out_channels}, dnnl::memory::data_type::s32), engine_);
  std::memcpy(memory.get_data_handle(), folded.data(), folded.size() * sizeof(int32_t));
  plan_.constants.push_back(memory);
  return memory;
}

void Builder::build_quantized_convolution(const blob::Op& op) {
  const int32_t x = input(op, 0), w = input(op, 1), b = input(op, 2, true), y = output(op);
  const dims_t& xs = dims(x);
  require((type(x) == blob::DataType::U8 || type(x) == blob::DataType::S8) && type(w) == blob::DataType::S8 &&
              (b < 0 || type(b) == blob::DataType::S32) &&
              (type(y) == blob::DataType::U8 || type(y) == blob::DataType::S8),
          "a quantized convolution's types are not u8/s8, s8, s32 and u8/s8");
  const ConvWindow window = conv_window(op);
  const dims_t& weight_dims = window.weight_dims;
  const int64_t out_channels = window.out_channels;
  const std::vector<int64_t>&strides = window.strides, &dilations = window.dilations, &begin = window.begin,
        &end = window.end;
  const auto s8 = dnnl::memory::data_type::s8;
  const desc_t src = any(xs, dnnl_type_of(x)), weights_md = any(weight_dims, s8), dst = any(dims(y), dnnl_type_of(y));
  const std::optional<dnnl::memory> folded_bias = folded_zero_point_bias(op, window);
  const bool with_bias = b >= 0 || folded_bias;
  const auto forward = dnnl::prop_kind::forward_inference;
  const dnnl::convolution_forward::desc desc =
      with_bias ? dnnl::convolution_forward::desc(forward, dnnl::algorithm::convolution_direct, src, weights_md,
                                                  plain({out_channels}, dnnl::memory::data_type::s32), dst, strides,
                                                  dilations, begin, end)
                : dnnl::convolution_forward::desc(forward, dnnl::algorithm::convolution_direct, src, weights_md, dst,
                                                  strides, dilations, begin, end);
  std::unordered_map<int, dnnl::memory> args;
  dnnl::primitive_attr attr = attributes();
  set_requantization(op, 1, out_channels, &attr, &args, !folded_bias);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, engine_);
  // The constant's bytes are ONNX's [O, I/g, k...], which are goihw's when grouped.
  read_constant_as(w, plain(weight_dims, s8));
  args[DNNL_ARG_SRC] = in_format(x, pd.src_desc());
  args[DNNL_ARG_WEIGHTS] = constant_in(w, pd.weights_desc());
  if (folded_bias) {
    args[DNNL_ARG_BIAS] = *folded_bias;
  } else if (b >= 0) {
    args[DNNL_ARG_BIAS] = constant_in(b, pd.bias_desc());
  }
  args[DNNL_ARG_DST] = define(y, pd.dst_desc());
  add_step(dnnl::convolution_forward(pd), std::move(args), pd.scratchpad_desc());
  publish(y);
}

void Builder::build_quantized_matmul(const blob::Op& op) {
  const int32_t a = input(op, 0), b = input(op, 1), y = output(op);
  const dims_t &as = dims(a), &bs = dims(b), &ys = dims(y);
  const size_t rank = as.size();
  require(rank >= 2 && rank <= 6 && bs.size() == rank && ys.size() == rank, "bad matmul ranks");
  require(is_constant(b), "the weights are not constant");
  require((type(a) == blob::DataType::U8 || type(a) == blob::DataType::S8) && type(b) == blob::DataType::S8 &&
              (type(y) == blob::DataType::U8 || type(y) == blob::DataType::S8),
          "a quantized matmul's types are not u8/s8, s8 and u8/s8");
  for (size_t d = 0; d + 2 < rank; ++d) require(bs[d] == 1 && ys[d] == as[d], "the weights have batch dims");
  require(as[rank - 1] == bs[rank - 2] && ys[rank - 2] == as[rank - 2] && ys[rank - 1] == bs[rank - 1],
          "bad matmul dims");
  std::unordered_map<int, dnnl::memory> args;
  dnnl::primitive_attr attr = attributes();
  set_requantization(op, static_cast<int>(rank) - 1, ys[rank - 1], &attr, &args);
  const dnnl::matmul::desc desc(plain(as, dnnl_type_of(a)), any(bs, dnnl::memory::data_type::s8),
                                plain(ys, dnnl_type_of(y)));
  dnnl::matmul::primitive_desc pd(desc, attr, engine_);
  args[DNNL_ARG_SRC] = in_format(a, pd.src_desc());
  args[DNNL_ARG_WEIGHTS] = constant_in(b, pd.weights_desc());
  args[DNNL_ARG_DST] = define(y, pd.dst_desc());
  add_step(dnnl::matmul(pd), std::move(args), pd.scratchpad_desc());
  publish(y);
}

/// Whether every byte of `md` holds an element: no padded blocks, no gaps, no extra data.
bool is_dense(const desc_t& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.extra.flags != 0) return false;
  for (int i = 0; i < d.ndims; ++i) {
    if (d.padded_dims[i] != d.dims[i] || d.padded_offsets[i] != 0) return false;
  }
  return md.get_size() == static_cast<size_t>(product(md.dims())) * dnnl::memory::data_type_size(md.data_type());
}

void Builder::build_quantize_linear(const blob::Op& op, bool quantize) {
  const int32_t x = input(op, 0), y = output(op);
  require(dims(x) == dims(y), "a quantization changes the shape");
  const blob::DataType quantized = quantize ? type(y) : type(x);
  require((quantized == blob::DataType::U8 || quantized == blob::DataType::S8) &&
              type(quantize ? x : y) == blob::DataType::F32,
          "a quantization's types are not float32 and u8 or s8");
  const bool u8 = quantized == blob::DataType::U8;
  Step step;
  read_quantization(op, quantize, u8, &step);
  // Per tensor, each element maps alone: the step runs in the input's layout where every
  // byte of it is an element (a convolution's blocked result), else in the plain one.
  // Per axis, in the plain one, where element i's index on the axis is (i / inner) % n.
  desc_t md = current(x).get_desc();
  if (!is_dense(md) || !step.scales.empty()) md = plain(dims(x), dnnl_type_of(x));
  if (!step.scales.empty()) {
    const dims_t& shape = dims(x);
    const auto axis = static_cast<size_t>(op.axis());
    require(op.axis() >= 0 && axis < shape.size() && shape[axis] == static_cast<int64_t>(step.scales.size()),
            "a per-axis quantization's scales do not match its axis");
    const dims_t after(shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, shape.end());
    step.inner = static_cast<size_t>(std::max<int64_t>(product(after), 1));
  }
  step.kind = quantize ? (u8 ? Step::Kind::kQuantizeU8 : Step::Kind::kQuantizeS8)
                       : (u8 ? Step::Kind::kDequantizeU8 : Step::Kind::kDequantizeS8);
  step.source = in_format(x, md);
  dnnl_memory_desc_t out = md.data;
  out.data_type = static_cast<dnnl_data_type_t>(dnnl_type_of(y));
  step.destination = define(y, desc_t(out));
  step.count = static_cast<size_t>(product(dims(y)));
  plan_.steps.push_back(std::move(step));
  publish(y);
}

/// A quantization's scale and zero point into `step`: `value` and `zero_point` per tensor,
/// `scales` and `zero_points` per axis, each scale finite and not 0, each zero point in
/// its type's range.
void Builder::read_quantization(const blob::Op& op, bool quantize, bool u8, Step* step) {
  const flatbuffers::uoffset_t count = length(op.scales());
  const bool per_axis = length(op.zero_points()) > 0;
  require(count >= 1 && (per_axis ? length(op.zero_points()) == count : count == 1),
          "a quantization has not one scale, or one scale and zero point per index of its axis");
  auto check = [&](float scale, int32_t zero_point) {
    require(std::isfinite(scale) && scale != 0.0f, "a quantization's scale is zero or not finite");
    require(u8 ? zero_point >= 0 && zero_point <= 255 : zero_point >= -128 && zero_point <= 127,
            "a quantization's zero point is out of its type's range");
  };
  if (!per_axis) {
    step->value = op.scales()->Get(0);
    step->zero_point = quantize ? op.dst_zero_point() : op.src_zero_point();
    check(step->value, step->zero_point);
    return;
  }
  for (flatbuffers::uoffset_t i = 0; i < count; ++i) {
    check(op.scales()->Get(i), op.zero_points()->Get(i));
    step->scales.push_back(op.scales()->Get(i));
    step->zero_points.push_back(op.zero_points()->Get(i));
  }
}

void Builder::count_readers() {
  readers_.assign(dims_.size(), 0);
  last_reader_.assign(dims_.size(), -1);
  auto read = [&](int32_t t, int64_t n) {
    if (t < 0 || static_cast<size_t>(t) >= dims_.size()) return;
    ++readers_[static_cast<size_t>(t)];
    last_reader_[static_cast<size_t>(t)] = n;
  };
  for (flatbuffers::uoffset_t n = 0; n < blob_.ops()->size(); ++n) {
    const blob::Op& op = *blob_.ops()->Get(n);
    for (flatbuffers::uoffset_t i = 0; i < length(op.inputs()); ++i) read(op.inputs()->Get(i), n);
    for (flatbuffers::uoffset_t i = 0; i < length(op.post_ops()); ++i) read(op.post_ops()->Get(i)->operand(), n);
  }
  for (flatbuffers::uoffset_t k = 0; k < blob_.outputs()->size(); ++k) {
    read(static_cast<int32_t>(blob_.outputs()->Get(k)), -1);
  }
}

/// Whether `op`'s post-ops are none, or one Relu (of slope 0), which a kAddDequantized
/// step applies as oneDNN's eltwise does.
bool relu_or_none(const blob::Op& op) {
  if (length(op.post_ops()) == 0) return true;
  const blob::PostOp* post = op.post_ops()->Get(0);
  return length(op.post_ops()) == 1 && post->kind() == blob::PostOpKind::Eltwise &&
         post->algorithm() == Algorithm::Relu && post->alpha() == 0.0f;
}

/// A per-tensor DequantizeLinear read only by a later Add (with no post-op but a Relu)
/// of two operands and an output of one shape: left for that Add.
bool Builder::defer_dequantize(const blob::Op& op) {
  const int32_t x = input(op, 0), y = output(op);
  const int64_t reader = last_reader_[static_cast<size_t>(y)];
  if (length(op.zero_points()) > 0 || readers_[static_cast<size_t>(y)] != 1 || reader < 0) return false;
  if (type(y) != blob::DataType::F32 || (type(x) != blob::DataType::U8 && type(x) != blob::DataType::S8)) return false;
  const blob::Op& add = *blob_.ops()->Get(static_cast<flatbuffers::uoffset_t>(reader));
  if (add.kind() != OpKind::Binary || add.algorithm() != Algorithm::Add || !relu_or_none(add) ||
      length(add.inputs()) != 2 || length(add.outputs()) != 1) {
    return false;
  }
  for (int32_t t : {add.inputs()->Get(0), add.inputs()->Get(1), add.outputs()->Get(0)}) {
    if (t < 0 || static_cast<size_t>(t) >= dims_.size() || dims(t) != dims(y)) return false;
  }
  deferred_[y] = &op;
  return true;
}

void Builder::undefer(int32_t t) {
  auto found = deferred_.find(t);
  if (found == deferred_.end()) return;
  const blob::Op& op = *found->second;
  deferred_.erase(found);
  build_quantize_linear(op, false);
}

void Builder::read_add_operand(int32_t t, dnnl::memory* memory, Step::Element* element, float* scale,
                               int32_t* zero_point) {
  auto found = deferred_.find(t);
  if (found == deferred_.end()) {
    require(type(t) == blob::DataType::F32, "an Add's operand is not float32");
    *memory = current(t);
    *element = Step::Element::kF32;
    return;
  }
  const int32_t x = input(*found->second, 0);
  const bool u8 = type(x) == blob::DataType::U8;
  Step parameters;
  read_quantization(*found->second, false, u8, &parameters);
  *memory = current(x);
  *element = u8 ? Step::Element::kU8 : Step::Element::kS8;
  *scale = parameters.value;
  *zero_point = parameters.zero_point;
}

/// An Add of one or two deferred DequantizeLinear as one pass over the bytes, where both
/// operands are in one dense layout (a convolution's nhwc, typically): the dequantized
/// values are never written out.
bool Builder::build_dequantized_add(const blob::Op& op) {
  const int32_t a = input(op, 0), b = input(op, 1), y = output(op);
  if (deferred_.count(a) == 0 && deferred_.count(b) == 0) return false;
  require(relu_or_none(op), "a deferred DequantizeLinear's Add has other post-ops");
  Step step;
  step.kind = Step::Kind::kAddDequantized;
  read_add_operand(a, &step.source, &step.element, &step.value, &step.zero_point);
  read_add_operand(b, &step.source2, &step.element2, &step.value2, &step.zero_point2);
  auto as_f32 = [](const desc_t& md) {
    dnnl_memory_desc_t d = md.data;
    d.data_type = dnnl_f32;
    return desc_t(d);
  };
  const desc_t layout = as_f32(step.source.get_desc());
  if (!is_dense(layout) || as_f32(step.source2.get_desc()) != layout || dims(y) != dims(a)) {
    undefer(a);
    undefer(b);
    return false;
  }
  deferred_.erase(a);
  deferred_.erase(b);
  step.relu = length(op.post_ops()) > 0;
  step.destination = define(y, layout);
  step.count = static_cast<size_t>(product(dims(y)));
  plan_.steps.push_back(std::move(step));
  publish(y);
  return true;
}

void Builder::build_op(const blob::Op& op, const std::string& where) {
  try {
    if (op.kind() != OpKind::QuantizedConvolution && op.kind() != OpKind::QuantizedMatMul &&
        op.kind() != OpKind::Quantize && op.kind() != OpKind::Dequantize && op.kind() != OpKind::Gather) {
      // Only the quantized ops and Gather (its indices) read or write tensors of other
      // types than float32; each checks its own.
      for (const auto* list : {op.inputs(), op.outputs()}) {
        for (flatbuffers::uoffset_t i = 0; i < length(list); ++i) {
          const int32_t t = list->Get(i);
          require(t < 0 || static_cast<size_t>(t) >= dims_.size() || type(t) == blob::DataType::F32,
                  "a float32 op reads or writes a tensor of another type");
        }
      }
      for (flatbuffers::uoffset_t i = 0; i < length(op.post_ops()); ++i) {
        const int32_t t = op.post_ops()->Get(i)->operand();
        require(t < 0 || static_cast<size_t>(t) >= dims_.size() || type(t) == blob::DataType::F32,
                "a post-op operand is not float32");
      }
    }
    switch (op.kind()) {
      case OpKind::Convolution: build_convolution(op); break;
      case OpKind::Deconvolution: build_deconvolution(op); break;
      case OpKind::MatMul: build_matmul(op); break;
      case OpKind::InnerProduct: build_inner_product(op); break;
      case OpKind::Eltwise: build_eltwise(op); break;
      case OpKind::Binary:
        if (!build_dequantized_add(op)) build_binary(op);
        break;
      case OpKind::Softmax: build_softmax(op, false); break;
      case OpKind::LogSoftmax: build_softmax(op, true); break;
      case OpKind::Pooling: build_pooling(op); break;
      case OpKind::BatchNorm: build_batch_norm(op); break;
      case OpKind::LayerNorm: build_layer_norm(op); break;
      case OpKind::Concat: build_concat(op); break;
      case OpKind::Reorder: build_reorder(op); break;
      case OpKind::Reshape: build_reshape(op); break;
      case OpKind::Reduction: build_reduction(op); break;
      case OpKind::Erf: build_erf(op); break;
      case OpKind::Resampling: build_resampling(op); break;
      case OpKind::Pad: build_pad(op); break;
      case OpKind::Gather: build_gather(op); break;
      case OpKind::Rnn: build_rnn(op); break;
      case OpKind::Shuffle: build_shuffle(op); break;
      case OpKind::QuantizedConvolution: build_quantized_convolution(op); break;
      case OpKind::QuantizedMatMul: build_quantized_matmul(op); break;
      case OpKind::Quantize: build_quantize_linear(op, true); break;
      case OpKind::Dequantize:
        if (!defer_dequantize(op)) build_quantize_linear(op, false);
        break;
      default: throw BlobError("its kind is unknown to this build");
    }
  } catch (const BlobError& e) {
    throw BlobError(where + ": " + e.what());
  } catch (const dnnl::error& e) {
    throw PrimitiveError(where + ": oneDNN refused it (" + e.what() + ")");
  }
}

const void* Builder::resolve_constant(size_t t, int64_t elements,
                                      const std::unordered_map<std::string_view, const plugrt_named_constant*>& lent) {
  const blob::Tensor& source = tensor(static_cast<int32_t>(t));
  const std::string what = "tensor " + std::to_string(t);
  const bool typed = source.dtype() != blob::DataType::F32;
  const size_t size = static_cast<size_t>(elements) * element_size(source.dtype());
  require(source.data() == nullptr || source.bytes() == nullptr, what + " has both float and typed data");
  if (source.data() != nullptr) {
    require(!typed, what + " has float32 data but another type");
    require(source.constant() == nullptr, what + " has both data and a constant's name");
    require(static_cast<int64_t>(source.data()->size()) == elements, what + " has data of the wrong size");
    return source.data()->data();
  }
  if (source.bytes() != nullptr) {
    require(typed, what + " has typed data but is float32");
    require(source.constant() == nullptr, what + " has both data and a constant's name");
    require(source.bytes()->size() == size, what + " has data of the wrong size");
    require(reinterpret_cast<uintptr_t>(source.bytes()->data()) % element_size(source.dtype()) == 0,
            what + " is not aligned for its type");
    return source.bytes()->data();
  }
  if (source.constant() == nullptr) return nullptr;
  const std::string name = source.constant()->str();
  if (constants_.empty()) {
    throw ConstantsMissing("the blob names constants (\"" + name +
                           "\"...), and the host lent none (a host older than ABI 1.4)");
  }
  auto found = lent.find(name);
  require(found != lent.end(), what + " names constant \"" + name + "\", which the host did not lend");
  const plugrt_named_constant& item = *found->second;
  require(item.size == size, "constant \"" + name + "\" has " + std::to_string(item.size) + " bytes; " + what +
                                 " needs " + std::to_string(size));
  require(item.data != nullptr && reinterpret_cast<uintptr_t>(item.data) % element_size(source.dtype()) == 0,
          "constant \"" + name + "\" is not aligned for its type");
  return item.data;
}

void Builder::verify_tensors() {
  const size_t count = length(blob_.tensors());
  require(count > 0 && length(blob_.ops()) > 0 && length(blob_.outputs()) > 0,
          "the blob has no tensors, ops or outputs");
  for (const blob::Tensor* source : *blob_.tensors()) {
    require(elements_aligned(source->dims()), "the blob has misaligned tensor dims");
  }
  for (const blob::Op* op : *blob_.ops()) {
    require(elements_aligned(op->strides()) && elements_aligned(op->dilations()) &&
                elements_aligned(op->padding_begin()) && elements_aligned(op->padding_end()) &&
                elements_aligned(op->kernel()) && elements_aligned(op->perm()) && elements_aligned(op->starts()) &&
                elements_aligned(op->steps()),
            "the blob has misaligned op attributes");
    for (flatbuffers::uoffset_t i = 0; i < length(op->views()); ++i) {
      require(elements_aligned(op->views()->Get(i)->dims()) && elements_aligned(op->views()->Get(i)->perm()),
              "the blob has misaligned op attributes");
    }
  }
  dims_.resize(count);
  values_.resize(count);
  constant_data_.assign(count, nullptr);
  std::unordered_map<std::string_view, const plugrt_named_constant*> lent;
  for (const plugrt_named_constant& item : constants_)
    lent.emplace(std::string_view(item.name.data, item.name.size), &item);
  for (size_t t = 0; t < count; ++t) {
    const blob::Tensor& source = tensor(static_cast<int32_t>(t));
    const size_t rank = length(source.dims());
    require(rank >= 1 && rank <= kMaxRank, "tensor " + std::to_string(t) + " has rank " + std::to_string(rank));
    int64_t elements = 1;
    for (int64_t d : *source.dims()) {
      require(d >= 1 && d <= (std::numeric_limits<int32_t>::max)() && elements <= (int64_t{1} << 40) / d,
              "tensor " + std::to_string(t) + " has a bad dimension");
      elements *= d;
      dims_[t].push_back(d);
    }
    constant_data_[t] = resolve_constant(t, elements, lent);
    if (constant_data_[t] != nullptr) {
      require(source.external_input() < 0 && source.external_output() < 0, "a constant is an input or output");
    }
    require(source.dtype() != blob::DataType::S64 || source.external_input() >= 0,
            "tensor " + std::to_string(t) + " is int64 but no partition input");
  }
  auto bind = [&](const flatbuffers::Vector<uint32_t>* list, bool is_input, std::vector<External>* out) {
    for (flatbuffers::uoffset_t k = 0; k < length(list); ++k) {
      const uint32_t t = list->Get(k);
      require(t < count, "an input or output is out of range");
      const blob::Tensor& source = tensor(static_cast<int32_t>(t));
      require((is_input ? source.external_input() : source.external_output()) == static_cast<int32_t>(k),
              "the inputs or outputs are inconsistent");
      External external;
      external.dims.assign(dims_[t].begin(), dims_[t].end());
      external.num_elements = static_cast<size_t>(product(dims_[t]));
      external.dtype = source.dtype() == blob::DataType::U8    ? DLDataType{kDLUInt, 8, 1}
                       : source.dtype() == blob::DataType::S8  ? DLDataType{kDLInt, 8, 1}
                       : source.dtype() == blob::DataType::S64 ? DLDataType{kDLInt, 64, 1}
                                                               : DLDataType{kDLFloat, 32, 1};
      require(source.dtype() != blob::DataType::S32, "an input or output is int32");
      require(is_input || source.dtype() != blob::DataType::S64, "an output is int64");
      out->push_back(std::move(external));
    }
  };
  bind(blob_.inputs(), true, &plan_.inputs);
  bind(blob_.outputs(), false, &plan_.outputs);
  for (size_t t = 0; t < count; ++t) {
    const blob::Tensor& source = tensor(static_cast<int32_t>(t));
    require(source.external_input() < static_cast<int32_t>(plan_.inputs.size()) &&
                source.external_output() < static_cast<int32_t>(plan_.outputs.size()) &&
                (source.external_input() < 0 || source.external_output() < 0),
            "tensor " + std::to_string(t) + " claims a bad input or output position");
  }
  for (flatbuffers::uoffset_t k = 0; k < length(blob_.inputs()); ++k) {
    const int32_t t = static_cast<int32_t>(blob_.inputs()->Get(k));
    Value& value = values_[static_cast<size_t>(t)];
    // oneDNN 2.6 has no 64-bit integers: int64 indices are bytes to it (Gather reads them).
    value.md = type(t) == blob::DataType::S64 ? plain({product(dims(t)) * 8}, dnnl::memory::data_type::u8)
                                              : plain(dims(t), dnnl_type_of(t));
    value.storage = new_storage(StorageKind::kInput, k, value.md.get_size());
    value.memory = view(value.storage, value.md);
    value.defined = true;
  }
}

void Builder::plan_memory() {
  // Each storage's first and last step.
  std::unordered_map<dnnl_memory_t, int> storage_of;
  for (const View& view : views_) storage_of[view.memory.get()] = view.storage;
  auto touch = [&](const dnnl::memory& memory, int64_t step) {
    if (!memory) return;  // an operand a step's kind does not have
    auto found = storage_of.find(memory.get());
    if (found == storage_of.end()) return;
    Storage& storage = storages_[static_cast<size_t>(found->second)];
    if (storage.first < 0) storage.first = step;
    storage.last = step;
  };
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const Step& step = plan_.steps[s];
    for (const auto& [arg, memory] : step.args) touch(memory, static_cast<int64_t>(s));
    if (step.kind != Step::Kind::kPrimitive && step.kind != Step::Kind::kFill) {
      touch(step.source, static_cast<int64_t>(s));
    }
    if (step.kind == Step::Kind::kAddDequantized) touch(step.source2, static_cast<int64_t>(s));
    if (step.kind != Step::Kind::kPrimitive) touch(step.destination, static_cast<int64_t>(s));
  }
  // First fit by first use: a block is free again after its last step.
  std::vector<size_t> order;
  for (size_t i = 0; i < storages_.size(); ++i) {
    if (storages_[i].kind == StorageKind::kArena && storages_[i].first >= 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return storages_[a].first < storages_[b].first; });
  std::vector<size_t> offsets(storages_.size(), 0);
  std::vector<size_t> live;  // storages holding arena bytes, by offset
  for (size_t i : order) {
    Storage& storage = storages_[i];
    live.erase(std::remove_if(live.begin(), live.end(), [&](size_t j) { return storages_[j].last < storage.first; }),
               live.end());
    std::sort(live.begin(), live.end(), [&](size_t a, size_t b) { return offsets[a] < offsets[b]; });
    const size_t size = (storage.size + kAlignment - 1) / kAlignment * kAlignment;
    size_t offset = 0;
    for (size_t j : live) {
      if (offsets[j] >= offset + size) break;
      offset = std::max(offset, offsets[j] + (storages_[j].size + kAlignment - 1) / kAlignment * kAlignment);
    }
    offsets[i] = offset;
    live.push_back(i);
    plan_.arena_size = std::max(plan_.arena_size, offset + size);
  }
  for (const auto& [memory, storage, offset] : views_) {
    const Storage& s = storages_[static_cast<size_t>(storage)];
    switch (s.kind) {
      case StorageKind::kArena:
        plan_.arena_views.emplace_back(memory, offsets[static_cast<size_t>(storage)] + offset);
        break;
      case StorageKind::kInput: plan_.inputs[s.index].views.push_back(memory); break;
      case StorageKind::kOutput: plan_.outputs[s.index].views.push_back(memory); break;
      case StorageKind::kConstant: break;
    }
  }
}

Plan Builder::build() {
  verify_tensors();
  concat_groups_ =
      find_concat_groups(blob_, dims_, [&](int32_t t) { return !is_constant(t) && tensor(t).external_input() < 0; });
  for (const dims_t& group : concat_groups_.groups) {
    group_storages_.push_back(new_storage(StorageKind::kArena, 0, blocked16(group).get_size()));
  }
  count_readers();
  for (flatbuffers::uoffset_t n = 0; n < blob_.ops()->size(); ++n) {
    const blob::Op& op = *blob_.ops()->Get(n);
    const std::string where = "op " + std::to_string(n) + " (" + blob::EnumNameOpKind(op.kind()) +
                              (op.name() != nullptr ? ", from '" + op.name()->str() + "'" : std::string()) + ")";
    build_op(op, where);
  }
  for (flatbuffers::uoffset_t k = 0; k < blob_.outputs()->size(); ++k) {
    const int32_t t = static_cast<int32_t>(blob_.outputs()->Get(k));
    require(values_[static_cast<size_t>(t)].defined, "output " + std::to_string(k) + " is never written");
  }
  plan_memory();
  return std::move(plan_);
}

}  // namespace

Plan build_plan(const blob::Blob& blob, const sdk::NamedConstants& constants, const dnnl::engine& engine) {
  return Builder(blob, constants, engine).build();
}

}  // namespace plugrt::onednn
