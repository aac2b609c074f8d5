// SPDX-License-Identifier: Apache-2.0
// A correct but slow backend, "blas" (plugin naive_blas): plain loops for Gemm, MatMul,
// Conv, Add, Mul and Relu on float32, with no blocking, vectorisation or threads. Its name
// sorts before onednn and xnnpack, so it is what a vendor's slower plugin looks like to a
// placer that breaks ties by name: the placement tests show that measuring keeps it off
// what the faster backends run better.
//
// Its blob is "NAIVEBLS" and the partition's graph IR (constants included); init reads
// the graph back and execute interprets it node by node.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "plugrt/sdk/backend.h"
#include "plugrt/sdk/graph_view.h"

namespace {

namespace sdk = plugrt::sdk;
using View = sdk::GraphView;

constexpr char kMagic[8] = {'N', 'A', 'I', 'V', 'E', 'B', 'L', 'S'};

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// Why this backend leaves node `n`; empty when it takes it.
std::string why_not(const View& view, size_t n) {
  const plugrt::ir::Node& node = view.node(n);
  const std::string op = node.op_type()->str();
  for (size_t i = 0; i < View::num_inputs(node); ++i) {
    if (!view.is_float(View::input(node, i))) return "float32 inputs only";
  }
  if (op == "Relu") return "";
  if (op == "Add" || op == "Mul") {
    const std::vector<int64_t> a = view.shape(View::input(node, 0)), b = view.shape(View::input(node, 1));
    if (a == b || count(b) == 1) return "";
    if (b.size() <= a.size() && std::equal(b.begin(), b.end(), a.end() - static_cast<std::ptrdiff_t>(b.size()))) {
      return "";
    }
    return "broadcasts other than a trailing block";
  }
  if (op == "Gemm" || op == "MatMul") {
    const int32_t b = View::input(node, 1);
    if (view.shape(View::input(node, 0)).size() != 2 || !view.is_constant(b) || view.shape(b).size() != 2) {
      return "a 2-D input times 2-D constant weights only";
    }
    if (op == "MatMul") return "";
    if (View::int_attribute(node, "transA", 0) != 0 || View::float_attribute(node, "alpha", 1) != 1 ||
        View::float_attribute(node, "beta", 1) != 1) {
      return "transA, alpha and beta at their defaults only";
    }
    if (View::num_inputs(node) == 3) {
      const int32_t c = View::input(node, 2);
      const int64_t n_out = view.shape(b)[View::int_attribute(node, "transB", 0) != 0 ? 0 : 1];
      if (!view.is_constant(c) || count(view.shape(c)) != n_out) return "a constant bias of N elements only";
    }
    return "";
  }
  if (op == "Conv") {
    const int32_t x = View::input(node, 0), w = View::input(node, 1);
    if (view.shape(x).size() != 4 || !view.is_constant(w) ||
        (View::num_inputs(node) == 3 && !view.is_constant(View::input(node, 2)))) {
      return "2-D convolutions with constant weights only";
    }
    if (View::int_attribute(node, "group", 1) != 1) return "group 1 only";
    for (int64_t d : View::ints_attribute(node, "dilations", {1, 1})) {
      if (d != 1) return "no dilation";
    }
    if (View::string_attribute(node, "auto_pad", "NOTSET") != "NOTSET") return "explicit pads only";
    return "";
  }
  return "not one of Gemm, MatMul, Conv, Add, Mul, Relu";
}

/// Runs one partition graph: every value kept as floats, nodes in order.
class NaiveDelegate : public sdk::Delegate {
 public:
  NaiveDelegate(std::vector<uint8_t> graph, View view) : graph_(std::move(graph)), view_(std::move(view)) {}

  sdk::Status execute(const sdk::Arguments& args) override {
    const plugrt::ir::Graph& graph = view_.graph();
    PLUGRT_SDK_RETURN_IF_ERROR(args.expect_count(graph.inputs()->size(), graph.outputs()->size()));
    values_.assign(sdk::num_values(graph), {});
    for (size_t i = 0; i < graph.inputs()->size(); ++i) {
      PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor x, args.input(i));
      PLUGRT_SDK_RETURN_IF_ERROR(x.expect_dtype(sdk::kFloat32));
      const int32_t v = graph.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (x.num_elements() != count(view_.shape(v))) return sdk::Status::invalid_argument("input: wrong size");
      values_[static_cast<size_t>(v)].assign(x.data<float>(), x.data<float>() + x.num_elements());
    }
    for (size_t n = 0; n < view_.num_nodes(); ++n) run(view_.node(n));
    for (size_t i = 0; i < graph.outputs()->size(); ++i) {
      const int32_t v = graph.outputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
      PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor y, args.output(i, sdk::kFloat32, view_.shape(v)));
      const std::vector<float>& value = get(v);
      std::memcpy(y.data<float>(), value.data(), value.size() * sizeof(float));
    }
    return sdk::Status::ok();
  }

 private:
  const std::vector<float>& get(int32_t v) {
    std::vector<float>& value = values_[static_cast<size_t>(v)];
    if (value.empty() && view_.is_constant(v)) value = view_.floats(v);
    return value;
  }
  std::vector<float>& out(const plugrt::ir::Node& node) {
    const int32_t y = View::output(node, 0);
    values_[static_cast<size_t>(y)].assign(static_cast<size_t>(count(view_.shape(y))), 0.0f);
    return values_[static_cast<size_t>(y)];
  }

  void run(const plugrt::ir::Node& node) {
    const std::string op = node.op_type()->str();
    const std::vector<float>& a = get(View::input(node, 0));
    if (op == "Relu") {
      std::vector<float>& y = out(node);
      for (size_t i = 0; i < y.size(); ++i) y[i] = a[i] > 0 ? a[i] : 0.0f;
    } else if (op == "Add" || op == "Mul") {
      const std::vector<float>& b = get(View::input(node, 1));
      std::vector<float>& y = out(node);
      for (size_t i = 0; i < y.size(); ++i) y[i] = op == "Add" ? a[i] + b[i % b.size()] : a[i] * b[i % b.size()];
    } else if (op == "Gemm" || op == "MatMul") {
      gemm(node, a);
    } else {
      conv(node, a);
    }
  }

  void gemm(const plugrt::ir::Node& node, const std::vector<float>& a) {
    const std::vector<int64_t> a_shape = view_.shape(View::input(node, 0));
    const std::vector<int64_t> b_shape = view_.shape(View::input(node, 1));
    const std::vector<float>& b = get(View::input(node, 1));
    const bool trans_b = View::int_attribute(node, "transB", 0) != 0;
    const int64_t m = a_shape[0], k = a_shape[1], n = trans_b ? b_shape[0] : b_shape[1];
    const std::vector<float>* bias = View::num_inputs(node) == 3 ? &get(View::input(node, 2)) : nullptr;
    std::vector<float>& y = out(node);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float sum = bias != nullptr ? (*bias)[static_cast<size_t>(j)] : 0.0f;
        for (int64_t p = 0; p < k; ++p) {
          sum += a[static_cast<size_t>(i * k + p)] * b[static_cast<size_t>(trans_b ? j * k + p : p * n + j)];
        }
        y[static_cast<size_t>(i * n + j)] = sum;
      }
    }
  }

  void conv(const plugrt::ir::Node& node, const std::vector<float>& x) {
    const std::vector<int64_t> xs = view_.shape(View::input(node, 0)), ws = view_.shape(View::input(node, 1));
    const std::vector<int64_t> ys = view_.shape(View::output(node, 0));
    const std::vector<float>& w = get(View::input(node, 1));
    const std::vector<float>* bias = View::num_inputs(node) == 3 ? &get(View::input(node, 2)) : nullptr;
    const std::vector<int64_t> strides = View::ints_attribute(node, "strides", {1, 1});
    const std::vector<int64_t> pads = View::ints_attribute(node, "pads", {0, 0, 0, 0});
    std::vector<float>& y = out(node);
    const int64_t c_in = xs[1], h_in = xs[2], w_in = xs[3], kh = ws[2], kw = ws[3];
    for (int64_t b = 0; b < ys[0]; ++b) {
      for (int64_t o = 0; o < ys[1]; ++o) {
        for (int64_t r = 0; r < ys[2]; ++r) {
          for (int64_t c = 0; c < ys[3]; ++c) {
            float sum = bias != nullptr ? (*bias)[static_cast<size_t>(o)] : 0.0f;
            for (int64_t i = 0; i < c_in; ++i) {
              for (int64_t u = 0; u < kh; ++u) {
                for (int64_t v = 0; v < kw; ++v) {
                  const int64_t h = r * strides[0] - pads[0] + u, col = c * strides[1] - pads[1] + v;
                  if (h < 0 || h >= h_in || col < 0 || col >= w_in) continue;
                  sum += x[static_cast<size_t>(((b * c_in + i) * h_in + h) * w_in + col)] *
                         w[static_cast<size_t>(((o * c_in + i) * kh + u) * kw + v)];
                }
              }
            }
            y[static_cast<size_t>(((b * ys[1] + o) * ys[2] + r) * ys[3] + c)] = sum;
          }
        }
      }
    }
  }

  std::vector<uint8_t> graph_;  // the view reads it
  View view_;
  std::vector<std::vector<float>> values_;
};

class NaiveBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "blas";
  static constexpr char kDescription[] = "Plain loops (a slow backend for the placement tests)";
  static constexpr bool kHasAot = true;

  sdk::Status partition(const sdk::PartitionRequest& r) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(View view, View::open(r.graph, r.graph_size));
    return sdk::take_nodes(r, view, kName, [&](size_t n) { return why_not(view, n); });
  }

  sdk::Expected<std::vector<uint8_t>> preprocess(const sdk::PreprocessRequest& r) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(View view, View::open(r.graph, r.graph_size));
    for (size_t n = 0; n < view.num_nodes(); ++n) {
      if (const std::string why = why_not(view, n); !why.empty()) return sdk::Status::not_supported(why);
    }
    std::vector<uint8_t> blob(kMagic, kMagic + sizeof(kMagic));
    blob.insert(blob.end(), static_cast<const uint8_t*>(r.graph), static_cast<const uint8_t*>(r.graph) + r.graph_size);
    return blob;
  }

  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext& c) override {
    if (c.blob_size < sizeof(kMagic) || std::memcmp(c.blob, kMagic, sizeof(kMagic)) != 0) {
      return sdk::Status::incompatible_blob("not a NAIVEBLS blob");
    }
    std::vector<uint8_t> graph(c.bytes() + sizeof(kMagic), c.bytes() + c.blob_size);
    PLUGRT_SDK_ASSIGN_OR_RETURN(View view, View::open(graph.data(), graph.size()));
    for (size_t n = 0; n < view.num_nodes(); ++n) {
      if (!why_not(view, n).empty()) return sdk::Status::incompatible_blob("the blob holds a node it cannot run");
    }
    return std::unique_ptr<sdk::Delegate>(std::make_unique<NaiveDelegate>(std::move(graph), std::move(view)));
  }
};

}  // namespace

PLUGRT_SDK_EXPORT_PLUGIN(naive_blas, "1.0.0", NaiveBackend);
