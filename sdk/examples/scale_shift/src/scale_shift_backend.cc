// SPDX-License-Identifier: Apache-2.0
// An example plugrt backend that shows two things the elementwise example does not:
//   - constants by name (ABI 1.4): its blob names the weights the program already stores,
//     instead of copying them, when the host offers them by name;
//   - dimensions that vary (ABI 1.5): it runs graphs whose leading dimensions are symbols,
//     each call at the shapes its inputs have.
// It takes Add and Mul of a float32 value x by a float32 constant c whose shape is the
// trailing dimensions of x (a per-channel scale or shift), and chains of them.
//
// Blob format (little-endian), after the 16-byte sdk::BlobFormat header "PRTSCSH1", version 1:
//   uint32 rank, uint32 inner_rank, int64 inner_dims[inner_rank]   x's rank; c's shape
//   uint32 num_steps, then per step:
//     uint32 op (1 Add, 2 Mul), uint32 kind (0: float32 c[inner] follows; 1: named)
//     named: uint32 name_size, then the name: the host lends that constant at init
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "plugrt/sdk/backend.h"
#include "plugrt/sdk/blob_header.h"
#include "plugrt/sdk/graph_view.h"
#include "plugrt/sdk/per_shape.h"

namespace {

namespace sdk = plugrt::sdk;
using View = sdk::GraphView;

constexpr sdk::BlobFormat kFormat{"PRTSCSH1", "scale_shift", 1, 1};
constexpr uint32_t kMaxRank = 8;
constexpr uint32_t kMaxSteps = 1024;
constexpr int64_t kMaxInner = int64_t{1} << 24;  // elements of one constant

enum Op : uint32_t { kAdd = 1, kMul = 2 };
enum Kind : uint32_t { kInline = 0, kNamed = 1 };

struct Step {
  uint32_t op;
  std::vector<float> c;  // inner elements
};

// ---- Partition: which nodes it takes ---------------------------------------------------

/// Whether dimension `d` of `value` is the same at every call: no expression (a static
/// dimension has no words), or a constant one.
bool is_static_dim(const plugrt::ir::Value& value, size_t d) {
  if (value.dims() == nullptr) return true;
  if (d >= value.dims()->size()) return false;
  const auto* words = value.dims()->Get(static_cast<flatbuffers::uoffset_t>(d))->words();
  if (words == nullptr || words->size() == 0) return true;
  return words->size() == 1 && sdk::dim_word_op(words->Get(0)) == sdk::DimOp::kConstant;
}

int32_t refuse(std::string* why, const char* reason) {
  *why = reason;
  return -1;
}

/// The index of the constant operand of an Add or Mul this backend runs, or -1 with `why`.
int32_t constant_operand(const View& g, const plugrt::ir::Node& node, std::string* why) {
  const std::string op = node.op_type()->str();
  if ((op != "Add" && op != "Mul") || View::num_inputs(node) != 2) return refuse(why, "Add and Mul only");
  const int32_t a = View::input(node, 0), b = View::input(node, 1);
  const int32_t c = g.is_constant(b) ? b : a, x = c == b ? a : b;
  if (!g.is_constant(c) || g.is_constant(x)) return refuse(why, "one operand must be a constant, the other not");
  if (!g.is_float(c) || !g.is_float(x)) return refuse(why, "float32 only");
  const std::vector<int64_t> cs = g.shape(c), xs = g.shape(x);
  if (cs.empty() || cs.size() > xs.size() || xs.size() > kMaxRank) return refuse(why, "c must be x's trailing dims");
  for (size_t i = 0; i < cs.size(); ++i) {
    const size_t d = xs.size() - cs.size() + i;
    if (cs[i] != xs[d] || !is_static_dim(g.value(x), d)) return refuse(why, "c must be x's static trailing dims");
  }
  return c;
}

/// The graph at its symbols' upper bounds (static graphs as they are): what the
/// partition reads of it, the structure and the trailing dimensions, is the same at
/// every size.
sdk::Expected<View> open_at_bounds(const void* graph, size_t size) {
  const std::vector<int64_t> maxima = sdk::symbol_maxima(graph, size);
  return View::open(graph, size, sdk::values_or_null(maxima));
}

// ---- Preprocess: the blob ---------------------------------------------------------------

class Writer {
 public:
  template <typename T>
  void put(T v) {
    bytes(&v, sizeof(v));
  }
  void bytes(const void* p, size_t n) {
    out_.insert(out_.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
  }
  std::vector<uint8_t>& out() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

/// The partition as a chain: node k reads the graph's input (k = 0) or node k-1's output,
/// and the last writes the graph's output. Anything else is left to the portable backend.
sdk::Status check_chain(const View& g) {
  if (g.graph().inputs()->size() != 1 || g.graph().outputs()->size() != 1) {
    return sdk::Status::not_supported("a chain with one input and one output only");
  }
  int32_t last = g.graph().inputs()->Get(0);
  for (size_t n = 0; n < g.num_nodes(); ++n) {
    const plugrt::ir::Node& node = g.node(n);
    std::string why;
    const int32_t c = constant_operand(g, node, &why);
    if (c < 0) return sdk::Status::not_supported(why);
    const int32_t x = View::input(node, 0) == c ? View::input(node, 1) : View::input(node, 0);
    if (x != last) return sdk::Status::not_supported("not a chain: node " + std::to_string(n));
    last = View::output(node, 0);
  }
  if (last != g.graph().outputs()->Get(0)) return sdk::Status::not_supported("the chain does not end in the output");
  return sdk::Status::ok();
}

// ---- Init: reading the blob ---------------------------------------------------------------

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool read(void* out, size_t n) {
    if (n > size_ - at_) return false;
    std::memcpy(out, data_ + at_, n);  // the blob may lie anywhere: never cast into it
    at_ += n;
    return true;
  }
  bool u32(uint32_t* v) { return read(v, sizeof(*v)); }
  size_t left() const { return size_ - at_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = sdk::BlobFormat::kHeaderSize;
};

sdk::Status damaged(const std::string& why) { return sdk::Status::invalid_argument("scale_shift blob: " + why); }

class Chain : public sdk::Delegate {
 public:
  std::vector<int64_t> shape;  // x's: kAnyDim for the leading dimensions, which may vary
  int64_t inner = 1;
  std::vector<Step> steps;

  sdk::Status execute(const sdk::Arguments& args) override {
    PLUGRT_SDK_RETURN_IF_ERROR(args.expect_count(1, 1));
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor x, args.input(0, sdk::kFloat32, shape));
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor y, args.output(0, sdk::kFloat32, x.shape()));
    const float* in = x.data<float>();
    float* out = y.data<float>();
    const int64_t n = x.num_elements();
    for (const Step& step : steps) {
      const float* c = step.c.data();
      for (int64_t i = 0; i < n; ++i) out[i] = step.op == kAdd ? in[i] + c[i % inner] : in[i] * c[i % inner];
      in = out;  // the next step reads this one's result
    }
    return sdk::Status::ok();
  }
};

/// One step's constant: inline in the blob, or lent by the host under its name.
sdk::Status read_constant(Reader& in, const sdk::InitContext& context, int64_t inner, Step* step) {
  uint32_t kind = 0;
  if (!in.u32(&kind) || (kind != kInline && kind != kNamed)) return damaged("a step has no valid constant kind");
  // Bounded by the bytes there (inline) or lent (named) before anything is allocated.
  const size_t bytes = static_cast<size_t>(inner) * sizeof(float);
  if (kind == kInline) {
    if (bytes > in.left()) return damaged("a constant is cut short");
    step->c.resize(static_cast<size_t>(inner));
    in.read(step->c.data(), bytes);
    return sdk::Status::ok();
  }
  uint32_t name_size = 0;
  if (!in.u32(&name_size) || name_size == 0 || name_size > in.left()) return damaged("a constant's name is cut short");
  std::string name(name_size, '\0');
  in.read(name.data(), name_size);
  // A host before ABI 1.4 lends nothing: it then runs the portable fallback instead.
  if (context.constants.empty()) return sdk::Status::incompatible_blob("the blob names constants; the host lends none");
  const plugrt_named_constant* lent = context.constants.find(name);
  if (lent == nullptr || lent->size != bytes)
    return damaged("constant '" + name + "' is not lent with " + std::to_string(bytes) + " bytes");
  step->c.resize(static_cast<size_t>(inner));
  std::memcpy(step->c.data(), lent->data, bytes);  // a copy: lent bytes need not be aligned
  return sdk::Status::ok();
}

sdk::Status read_shape(Reader& in, Chain* chain) {
  uint32_t rank = 0, inner_rank = 0;
  if (!in.u32(&rank) || !in.u32(&inner_rank) || rank > kMaxRank || inner_rank == 0 || inner_rank > rank) {
    return damaged("bad rank");
  }
  chain->shape.assign(rank, sdk::kAnyDim);
  for (uint32_t d = rank - inner_rank; d < rank; ++d) {
    int64_t dim = 0;
    if (!in.read(&dim, sizeof(dim)) || dim < 1 || dim > kMaxInner || chain->inner > kMaxInner / dim) {
      return damaged("bad dimension " + std::to_string(d));
    }
    chain->shape[d] = dim;
    chain->inner *= dim;
  }
  return sdk::Status::ok();
}

class ScaleShiftBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "scale_shift";
  static constexpr char kDescription[] = "example backend: Add and Mul by constants, by name, at varying sizes";
  static constexpr bool kHasAot = true;
  static constexpr plugrt_backend_capabilities kCapabilities = PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS;

  sdk::Status partition(const sdk::PartitionRequest& r) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(const View g, open_at_bounds(r.graph, r.graph_size));
    return sdk::take_nodes(r, g, kName, [&](size_t n) {
      std::string why;
      constant_operand(g, g.node(n), &why);
      return why;
    });
  }

  sdk::Expected<std::vector<uint8_t>> preprocess(const sdk::PreprocessRequest& r) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(const View g, open_at_bounds(r.graph, r.graph_size));
    PLUGRT_SDK_RETURN_IF_ERROR(check_chain(g));
    Writer out;
    out.out().resize(sdk::BlobFormat::kHeaderSize);
    kFormat.write_header(out.out().data());
    std::string why;
    const int32_t first_c = constant_operand(g, g.node(0), &why);
    const std::vector<int64_t> c_shape = g.shape(first_c);
    out.put(static_cast<uint32_t>(g.shape(g.graph().inputs()->Get(0)).size()));
    out.put(static_cast<uint32_t>(c_shape.size()));
    for (int64_t d : c_shape) out.put(d);
    out.put(static_cast<uint32_t>(g.num_nodes()));
    for (size_t n = 0; n < g.num_nodes(); ++n) {
      const int32_t c = constant_operand(g, g.node(n), &why);
      if (g.shape(c) != c_shape) return sdk::Status::not_supported("the chain's constants differ in shape");
      out.put(static_cast<uint32_t>(g.node(n).op_type()->str() == "Add" ? kAdd : kMul));
      const plugrt::ir::Value& value = g.value(c);
      if (r.constants_by_name_offered && value.name() != nullptr && value.name()->size() > 0) {
        out.put(static_cast<uint32_t>(kNamed));  // the program keeps the bytes, once
        out.put(static_cast<uint32_t>(value.name()->size()));
        out.bytes(value.name()->data(), value.name()->size());
        r.name_constants();
      } else {
        const std::vector<float> data = g.floats(c);
        out.put(static_cast<uint32_t>(kInline));
        out.bytes(data.data(), data.size() * sizeof(float));
      }
    }
    return std::move(out.out());
  }

  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext& context) override {
    // Another format or version: incompatible (the host runs the portable fallback).
    PLUGRT_SDK_RETURN_IF_ERROR(kFormat.check_header(context.blob, context.blob_size));
    Reader in(context.bytes(), context.blob_size);
    auto chain = std::make_unique<Chain>();
    PLUGRT_SDK_RETURN_IF_ERROR(read_shape(in, chain.get()));
    uint32_t num_steps = 0;
    if (!in.u32(&num_steps) || num_steps == 0 || num_steps > kMaxSteps) return damaged("bad step count");
    for (uint32_t s = 0; s < num_steps; ++s) {
      Step step{};
      if (!in.u32(&step.op) || (step.op != kAdd && step.op != kMul))
        return damaged("step " + std::to_string(s) + ": bad op");
      PLUGRT_SDK_RETURN_IF_ERROR(read_constant(in, context, chain->inner, &step));
      chain->steps.push_back(std::move(step));
    }
    if (in.left() != 0) return damaged("trailing bytes");
    return std::unique_ptr<sdk::Delegate>(std::move(chain));
  }
};

}  // namespace

PLUGRT_SDK_EXPORT_PLUGIN(scale_shift, "1.0.0", ScaleShiftBackend);
