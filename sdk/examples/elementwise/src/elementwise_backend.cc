// SPDX-License-Identifier: Apache-2.0
// The smallest real plugrt backend, written against the SDK alone: element-wise Relu, Add
// and Mul on float32 tensors of equal, static shapes.
//
// It follows the SDK's advice (share/doc/plugrt/sdk/docs/reading_blobs.md): a versioned
// blob header checked first in init, sdk::GraphView in partition and preprocess, and the
// statuses of that page's table: another format or version is Status::incompatible_blob
// (the runtime then runs the portable fallback), a damaged blob Status::invalid_argument.
//
// Blob format (all little-endian):
//   header   the 16-byte sdk::BlobFormat header "PRTELEMW", version 1, then
//            uint32: num_values, num_inputs, num_outputs, num_ops
//   values   num_values x { uint32 rank (<= 8), int64 dims[rank] }
//   inputs   num_inputs x uint32 value index; outputs likewise
//   ops      num_ops x { uint32 opcode (1 Relu, 2 Add, 3 Mul), uint32 a, uint32 b, uint32 out }
// Values that are neither graph inputs nor outputs live in one scratch buffer taken from
// the host's allocator at init.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "plugrt/sdk/backend.h"
#include "plugrt/sdk/blob_header.h"
#include "plugrt/sdk/graph_view.h"

namespace {

namespace sdk = plugrt::sdk;

using View = sdk::GraphView;

// Raise the version whenever a reader of the older one would misread the payload.
constexpr sdk::BlobFormat kFormat{"PRTELEMW", "elementwise", 1, 1};
constexpr uint32_t kMaxRank = 8;
constexpr uint32_t kMaxCount = 1u << 16;            // values, inputs, outputs or ops
constexpr int64_t kMaxElements = int64_t{1} << 28;  // per value

enum Opcode : uint32_t { kRelu = 1, kAdd = 2, kMul = 3 };

int opcode_of(const std::string& op_type) {
  if (op_type == "Relu") return kRelu;
  if (op_type == "Add") return kAdd;
  if (op_type == "Mul") return kMul;
  return 0;
}

struct Op {
  uint32_t code, a, b, out;
};

// ---- Writing and reading the blob ---------------------------------------------------

class Writer {
 public:
  void u32(uint32_t v) { bytes(&v, sizeof(v)); }
  void i64(int64_t v) { bytes(&v, sizeof(v)); }
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
};

class Reader {
 public:
  // Starts after the header, which init checks first.
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool read(void* out, size_t n) {
    if (n > size_ - at_) return false;
    std::memcpy(out, data_ + at_, n);
    at_ += n;
    return true;
  }
  bool u32(uint32_t* v) { return read(v, sizeof(*v)); }
  bool done() const { return at_ == size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = sdk::BlobFormat::kHeaderSize;
};

// ---- The delegate -------------------------------------------------------------------

class Program : public sdk::Delegate {
 public:
  std::vector<std::vector<int64_t>> shapes;
  std::vector<int64_t> counts;
  std::vector<uint32_t> inputs, outputs;
  std::vector<Op> ops;
  std::vector<float*> pointers;  // per value; inputs and outputs bound at each execute
  sdk::HostBuffer scratch;

  sdk::Status execute(const sdk::Arguments& args) override {
    PLUGRT_SDK_RETURN_IF_ERROR(args.expect_count(inputs.size(), outputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
      PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor t, args.input(i, sdk::kFloat32, shapes[inputs[i]]));
      pointers[inputs[i]] = t.data<float>();
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor t, args.output(i, sdk::kFloat32, shapes[outputs[i]]));
      pointers[outputs[i]] = t.data<float>();
    }
    for (const Op& op : ops) {
      const float* a = pointers[op.a];
      const float* b = pointers[op.b];
      float* y = pointers[op.out];
      const int64_t n = counts[op.out];
      switch (op.code) {
        case kRelu:
          for (int64_t i = 0; i < n; ++i) y[i] = a[i] > 0.0f ? a[i] : 0.0f;
          break;
        case kAdd:
          for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
          break;
        default:
          for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
          break;
      }
    }
    return sdk::Status::ok();
  }
};

// This format and version, but damaged: out of range or inconsistent.
sdk::Status bad_blob(const std::string& why) { return sdk::Status::invalid_argument("elementwise blob: " + why); }

class ElementwiseBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "elementwise";
  static constexpr char kDescription[] = "example backend: Relu, Add, Mul on float32 (plugrt SDK)";
  static constexpr bool kHasAot = true;

  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext& context) override {
    // Another format, or a version this build does not read: Status::incompatible_blob.
    PLUGRT_SDK_RETURN_IF_ERROR(kFormat.check_header(context.blob, context.blob_size));
    Reader in(context.bytes(), context.blob_size);
    uint32_t num_values = 0, num_inputs = 0, num_outputs = 0, num_ops = 0;
    if (!in.u32(&num_values) || !in.u32(&num_inputs) || !in.u32(&num_outputs) || !in.u32(&num_ops)) {
      return bad_blob("truncated header");
    }
    if (num_values > kMaxCount || num_inputs > num_values || num_outputs > num_values || num_ops > kMaxCount) {
      return bad_blob("counts out of range");
    }
    auto program = std::make_unique<Program>();
    for (uint32_t v = 0; v < num_values; ++v) {
      uint32_t rank = 0;
      if (!in.u32(&rank) || rank > kMaxRank) return bad_blob("value " + std::to_string(v) + ": bad rank");
      std::vector<int64_t> shape(rank);
      int64_t count = 1;
      for (uint32_t d = 0; d < rank; ++d) {
        if (!in.read(&shape[d], sizeof(int64_t)) || shape[d] < 0 || shape[d] > kMaxElements ||
            (shape[d] > 0 && count > kMaxElements / shape[d])) {
          return bad_blob("value " + std::to_string(v) + ": bad dimension");
        }
        count *= shape[d];
      }
      program->shapes.push_back(std::move(shape));
      program->counts.push_back(count);
    }
    std::vector<uint8_t> role(num_values, 0);  // 1 input, 2 output
    for (uint32_t i = 0; i < num_inputs + num_outputs; ++i) {
      uint32_t id = 0;
      if (!in.u32(&id) || id >= num_values || role[id] != 0) return bad_blob("bad input or output index");
      role[id] = i < num_inputs ? 1 : 2;
      (i < num_inputs ? program->inputs : program->outputs).push_back(id);
    }
    std::vector<bool> written(num_values, false);
    for (uint32_t id : program->inputs) written[id] = true;
    for (uint32_t k = 0; k < num_ops; ++k) {
      Op op{};
      if (!in.u32(&op.code) || !in.u32(&op.a) || !in.u32(&op.b) || !in.u32(&op.out)) return bad_blob("truncated op");
      const bool unary = op.code == kRelu;
      if (op.code < kRelu || op.code > kMul || op.a >= num_values || op.b >= num_values || op.out >= num_values ||
          role[op.out] == 1 || written[op.out] || !written[op.a] || !written[op.b] ||
          program->shapes[op.a] != program->shapes[op.out] ||
          (!unary && program->shapes[op.b] != program->shapes[op.out])) {
        return bad_blob("op " + std::to_string(k) + " is malformed");
      }
      written[op.out] = true;
      program->ops.push_back(op);
    }
    if (!in.done()) return bad_blob("trailing bytes");
    for (uint32_t id : program->outputs) {
      if (!written[id]) return bad_blob("output value " + std::to_string(id) + " is never written");
    }
    // Intermediates share one scratch buffer from the host.
    int64_t scratch_elements = 0;
    for (uint32_t v = 0; v < num_values; ++v) {
      if (role[v] == 0) scratch_elements += program->counts[v];
    }
    PLUGRT_SDK_ASSIGN_OR_RETURN(program->scratch,
                                sdk::HostBuffer::allocate(context.host, static_cast<size_t>(scratch_elements) * 4));
    program->pointers.assign(num_values, nullptr);
    float* next = program->scratch.as<float>();
    for (uint32_t v = 0; v < num_values; ++v) {
      if (role[v] == 0) {
        program->pointers[v] = next;
        next += program->counts[v];
      }
    }
    return std::unique_ptr<sdk::Delegate>(std::move(program));
  }

  sdk::Status partition(const sdk::PartitionRequest& request) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(const View graph, View::open(request.graph, request.graph_size));
    return sdk::take_nodes(request, graph, kName, [&](size_t n) { return why_not(graph, graph.node(n)); });
  }

  sdk::Expected<std::vector<uint8_t>> preprocess(const sdk::PreprocessRequest& request) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(const View graph, View::open(request.graph, request.graph_size));
    Writer out;
    std::vector<uint8_t> header(sdk::BlobFormat::kHeaderSize);
    kFormat.write_header(header.data());
    out.bytes(header.data(), header.size());
    const std::vector<int32_t> inputs = sdk::indices(graph.graph().inputs());
    const std::vector<int32_t> outputs = sdk::indices(graph.graph().outputs());
    const size_t num_values = sdk::num_values(graph.graph());
    out.u32(static_cast<uint32_t>(num_values));
    out.u32(static_cast<uint32_t>(inputs.size()));
    out.u32(static_cast<uint32_t>(outputs.size()));
    out.u32(static_cast<uint32_t>(graph.num_nodes()));
    for (size_t v = 0; v < num_values; ++v) {
      const std::vector<int64_t> shape = graph.shape(static_cast<int32_t>(v));
      out.u32(static_cast<uint32_t>(shape.size()));
      for (int64_t d : shape) out.i64(d);
    }
    for (int32_t id : inputs) out.u32(static_cast<uint32_t>(id));
    for (int32_t id : outputs) out.u32(static_cast<uint32_t>(id));
    for (size_t n = 0; n < graph.num_nodes(); ++n) {
      const plugrt::ir::Node& node = graph.node(n);
      if (const std::string why = why_not(graph, node); !why.empty()) {
        return sdk::Status::not_supported("node " + std::to_string(n) + " (" + node.op_type()->str() + "): " + why);
      }
      out.u32(static_cast<uint32_t>(opcode_of(node.op_type()->str())));
      out.u32(static_cast<uint32_t>(View::input(node, 0)));
      out.u32(static_cast<uint32_t>(View::num_inputs(node) > 1 ? View::input(node, 1) : View::input(node, 0)));
      out.u32(static_cast<uint32_t>(View::output(node, 0)));
    }
    // init checks the rest (index ranges, order, shapes); a blob it refuses is a bug here.
    return out.take();
  }

 private:
  // Why this backend leaves a node; "" for one it runs: Relu, Add or Mul on non-constant
  // float32 values of one static shape.
  static std::string why_not(const View& graph, const plugrt::ir::Node& node) {
    const int code = opcode_of(node.op_type()->str());
    if (code == 0) return "Relu, Add and Mul only";
    if (View::num_outputs(node) != 1 || View::num_inputs(node) != (code == kRelu ? 1u : 2u)) {
      return "one output and its op's inputs only";
    }
    const int32_t out = View::output(node, 0);
    if (!graph.is_float(out) || graph.is_constant(out)) return "float32 only";
    const std::vector<int64_t> shape = graph.shape(out);
    for (size_t i = 0; i < View::num_inputs(node); ++i) {
      const int32_t in = View::input(node, i);
      if (!graph.is_float(in) || graph.is_constant(in)) return "float32 values, no constants";
      if (graph.shape(in) != shape) return "no broadcasting";
    }
    return "";
  }
};

}  // namespace

PLUGRT_SDK_EXPORT_PLUGIN(elementwise, "1.0.0", ElementwiseBackend);
