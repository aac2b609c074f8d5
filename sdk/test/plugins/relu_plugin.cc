// SPDX-License-Identifier: Apache-2.0
// A small plugin written with the SDK wrapper, compiled once per variant to prove that the
// contract kit catches each way a plugin can break its contract. Its backend "relu" runs
// ReLU on one float32 tensor; the blob is "TESTRELU" and the element count (uint64).
//
// Variants (compile definitions), each broken in exactly one way:
//   VARIANT_LEAK            init takes a second host allocation that destroy never frees
//   VARIANT_CRASH           init crashes on a blob without the right magic
//   VARIANT_PRINTS          execute prints to stdout
//   VARIANT_EXTRA_SYMBOL    exports one more function (built without the version script)
//   VARIANT_THROWS          execute throws (the wrapper must turn it into Internal)
//   VARIANT_WRONG_RESULT    execute lets negative values through (a wrong ReLU)
//   VARIANT_UNAVAILABLE     is_available says no (no device attached)
//   VARIANT_UNWRITTEN       execute writes only the positive elements of its output
//   VARIANT_HANGS           execute never returns (it ignores stop_requested too)
//   VARIANT_EXTRA_THREADS   execute splits its work over 4 threads of its own, whatever
//                           the thread budget init was given
//   VARIANT_READS_PAST_SIZE execute reads num_symbol_values (ABI 1.6) without checking the
//                           args' struct_size, and fails when it is not 0
// And a family that also takes Gemm (ONNX's default attributes, B and an optional bias [N] constant)
// and MatMul (B constant), for the kit's checks against the portable backend:
//   VARIANT_GEMM            computes them right
//   VARIANT_DROP_BIAS       Gemm ignores its bias
//   VARIANT_MATMUL_DRIFT    MatMul's result is 0.2% too large
//   VARIANT_CRASH_IN_GEMM   Gemm's execute dies by SIGSEGV
//   VARIANT_NAMES_CONSTANTS computes them right; offered constants by name, its blob names
//                           B ("TESTGEMN", the header, then B's value name) and init reads
//                           B from the host
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "plugrt/sdk/backend.h"
#include "plugrt/sdk/graph.h"

#if defined(VARIANT_GEMM) || defined(VARIANT_DROP_BIAS) || defined(VARIANT_MATMUL_DRIFT) || \
    defined(VARIANT_CRASH_IN_GEMM) || defined(VARIANT_NAMES_CONSTANTS)
#define TAKES_GEMM 1
#include "plugrt/sdk/graph_view.h"
#endif

namespace {

namespace sdk = plugrt::sdk;

constexpr char kMagic[8] = {'T', 'E', 'S', 'T', 'R', 'E', 'L', 'U'};

#if defined(TAKES_GEMM)
// A Gemm or MatMul blob: "TESTGEMM", then uint64 op (1 Gemm, 2 MatMul), M, K, N and
// has_bias, then B (K x N floats) and the bias (N floats) when it has one.
constexpr char kGemmMagic[8] = {'T', 'E', 'S', 'T', 'G', 'E', 'M', 'M'};
constexpr char kNamedGemmMagic[8] = {'T', 'E', 'S', 'T', 'G', 'E', 'M', 'N'};
constexpr uint64_t kGemm = 1, kMatMul = 2;

class GemmDelegate : public sdk::Delegate {
 public:
  GemmDelegate(uint64_t op, int64_t m, int64_t k, int64_t n, std::vector<float> b, std::vector<float> bias)
      : op_(op), m_(m), k_(k), n_(n), b_(std::move(b)), bias_(std::move(bias)) {}

  sdk::Status execute(const sdk::Arguments& args) override {
    PLUGRT_SDK_RETURN_IF_ERROR(args.expect_count(1, 1));
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor a, args.input(0));
    PLUGRT_SDK_RETURN_IF_ERROR(a.expect_dtype(sdk::kFloat32));
    if (a.num_elements() != m_ * k_) return sdk::Status::invalid_argument("input 0: wrong element count");
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor y, args.output(0, sdk::kFloat32, {m_, n_}));
#if defined(VARIANT_CRASH_IN_GEMM)
    if (op_ == kGemm) {
      std::raise(SIGSEGV);
      std::abort();
    }
#endif
    const float* in = a.data<float>();
    float* out = y.data<float>();
    for (int64_t i = 0; i < m_; ++i) {
      for (int64_t j = 0; j < n_; ++j) {
        float sum = 0;
        for (int64_t p = 0; p < k_; ++p) sum += in[i * k_ + p] * b_[static_cast<size_t>(p * n_ + j)];
#if !defined(VARIANT_DROP_BIAS)
        if (!bias_.empty()) sum += bias_[static_cast<size_t>(j)];
#endif
#if defined(VARIANT_MATMUL_DRIFT)
        if (op_ == kMatMul) sum *= 1.002f;
#endif
        out[i * n_ + j] = sum;
      }
    }
    return sdk::Status::ok();
  }

 private:
  uint64_t op_;
  int64_t m_, k_, n_;
  std::vector<float> b_, bias_;
};

/// Whether node `n` is a Gemm (default attributes; A [M,K] fed; B [K,N] and an optional bias
/// [N] constant) or a MatMul (A [M,K] fed; B [K,N] constant) this backend runs.
bool takes_gemm(const sdk::GraphView& view, size_t n) {
  const plugrt::ir::Node& node = view.node(n);
  const std::string op = node.op_type()->str();
  if (op != "Gemm" && op != "MatMul") return false;
  using View = sdk::GraphView;
  if (View::int_attribute(node, "transA", 0) != 0 || View::int_attribute(node, "transB", 0) != 0 ||
      View::float_attribute(node, "alpha", 1.0f) != 1.0f || View::float_attribute(node, "beta", 1.0f) != 1.0f) {
    return false;
  }
  const size_t inputs = sdk::GraphView::num_inputs(node);
  if (inputs != 2 && !(op == "Gemm" && inputs == 3)) return false;
  const int32_t a = sdk::GraphView::input(node, 0), b = sdk::GraphView::input(node, 1);
  if (!view.is_float(a) || view.is_constant(a) || view.shape(a).size() != 2) return false;
  if (!view.is_float(b) || !view.is_constant(b) || view.shape(b).size() != 2) return false;
  if (view.shape(a)[1] != view.shape(b)[0]) return false;
  if (inputs == 3) {
    const int32_t c = sdk::GraphView::input(node, 2);
    if (!view.is_float(c) || !view.is_constant(c) || view.shape(c) != std::vector<int64_t>{view.shape(b)[1]}) {
      return false;
    }
  }
  return true;
}
#endif

class ReluDelegate : public sdk::Delegate {
 public:
  explicit ReluDelegate(int64_t count) : count_(count) {}
  sdk::HostBuffer leaked_on_purpose;

  sdk::Status execute(const sdk::Arguments& args) override {
#if defined(VARIANT_PRINTS)
    std::printf("relu: executing %lld elements\n", static_cast<long long>(count_));
#endif
#if defined(VARIANT_THROWS)
    throw std::runtime_error("the test device fell over");
#endif
#if defined(VARIANT_READS_PAST_SIZE)
    if (args.raw().num_symbol_values != 0) return sdk::Status::internal("this graph has no symbols");
#endif
    PLUGRT_SDK_RETURN_IF_ERROR(args.expect_count(1, 1));
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor x, args.input(0));
    PLUGRT_SDK_RETURN_IF_ERROR(x.expect_dtype(sdk::kFloat32));
    if (x.num_elements() != count_) return sdk::Status::invalid_argument("input 0: wrong element count");
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor y, args.output(0, sdk::kFloat32, x.shape()));
    const float* in = x.data<float>();
    float* out = y.data<float>();
#if defined(VARIANT_HANGS)
    (void)in;
    (void)out;
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
#elif defined(VARIANT_EXTRA_THREADS)
    std::vector<std::thread> workers;
    for (int64_t w = 0; w < 4; ++w) {
      workers.emplace_back([out, in, w, count = count_] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        for (int64_t i = w; i < count; i += 4) out[i] = in[i] > 0 ? in[i] : 0.0f;
      });
    }
    for (std::thread& worker : workers) worker.join();
#elif defined(VARIANT_WRONG_RESULT)
    for (int64_t i = 0; i < count_; ++i) out[i] = in[i];
#elif defined(VARIANT_UNWRITTEN)
    for (int64_t i = 0; i < count_; ++i) {
      if (in[i] > 0) out[i] = in[i];  // the zeros are never written
    }
#else
    for (int64_t i = 0; i < count_; ++i) out[i] = in[i] > 0 ? in[i] : 0.0f;
#endif
    return sdk::Status::ok();
  }

 private:
  int64_t count_;
};

class ReluBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "relu";
  static constexpr char kDescription[] = "ReLU for the SDK's own tests";
  static constexpr bool kHasAot = true;

#if defined(VARIANT_UNAVAILABLE)
  sdk::Availability is_available(sdk::Host) override { return sdk::Availability::no("no test device is attached"); }
#endif

  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext& c) override {
#if defined(TAKES_GEMM)
    if (c.blob_size >= sizeof(kNamedGemmMagic) && std::memcmp(c.blob, kNamedGemmMagic, sizeof(kNamedGemmMagic)) == 0) {
      return init_named_gemm(c);
    }
    if (c.blob_size >= sizeof(kGemmMagic) && std::memcmp(c.blob, kGemmMagic, sizeof(kGemmMagic)) == 0) {
      uint64_t header[5];  // op, M, K, N, has_bias
      if (c.blob_size < sizeof(kGemmMagic) + sizeof(header)) return sdk::Status::incompatible_blob("short blob");
      std::memcpy(header, c.bytes() + sizeof(kGemmMagic), sizeof(header));
      const uint64_t m = header[1], k = header[2], n = header[3], has_bias = header[4];
      if ((header[0] != kGemm && header[0] != kMatMul) || m == 0 || k == 0 || n == 0 || m > 4096 || k > 4096 ||
          n > 4096 || has_bias > 1 ||
          c.blob_size != sizeof(kGemmMagic) + sizeof(header) + (k * n + has_bias * n) * sizeof(float)) {
        return sdk::Status::incompatible_blob("bad Gemm blob");
      }
      const uint8_t* data = c.bytes() + sizeof(kGemmMagic) + sizeof(header);
      std::vector<float> b(k * n), bias(has_bias * n);
      std::memcpy(b.data(), data, b.size() * sizeof(float));
      if (!bias.empty()) std::memcpy(bias.data(), data + b.size() * sizeof(float), bias.size() * sizeof(float));
      return std::unique_ptr<sdk::Delegate>(
          std::make_unique<GemmDelegate>(header[0], static_cast<int64_t>(m), static_cast<int64_t>(k),
                                         static_cast<int64_t>(n), std::move(b), std::move(bias)));
    }
#endif
    if (c.blob_size < sizeof(kMagic) || std::memcmp(c.blob, kMagic, sizeof(kMagic)) != 0) {
#if defined(VARIANT_CRASH)
      // Trusts the blob: reads a "pointer" out of it.
      const volatile int* pointer = nullptr;
      std::memcpy(&pointer, c.blob, c.blob_size < sizeof(pointer) ? 0 : sizeof(pointer));
      return sdk::Status::internal("unreachable " + std::to_string(*pointer));
#else
      return sdk::Status::incompatible_blob("not a TESTRELU blob");
#endif
    }
    uint64_t count = 0;
    if (c.blob_size != sizeof(kMagic) + sizeof(count)) return sdk::Status::incompatible_blob("wrong blob size");
    std::memcpy(&count, c.bytes() + sizeof(kMagic), sizeof(count));
    if (count > (uint64_t{1} << 30)) return sdk::Status::incompatible_blob("element count out of range");
    auto delegate = std::make_unique<ReluDelegate>(static_cast<int64_t>(count));
#if defined(VARIANT_LEAK)
    PLUGRT_SDK_ASSIGN_OR_RETURN(delegate->leaked_on_purpose, sdk::HostBuffer::allocate(c.host, 256));
    (void)delegate->leaked_on_purpose.release();
#endif
    return delegate;
  }

#if defined(TAKES_GEMM)
  /// A blob that names B: "TESTGEMN", uint64 op, M, K, N, then B's value name; no bias.
  static sdk::Expected<std::unique_ptr<sdk::Delegate>> init_named_gemm(const sdk::InitContext& c) {
    uint64_t header[4];  // op, M, K, N
    if (c.blob_size <= sizeof(kNamedGemmMagic) + sizeof(header)) return sdk::Status::incompatible_blob("short blob");
    std::memcpy(header, c.bytes() + sizeof(kNamedGemmMagic), sizeof(header));
    const uint64_t m = header[1], k = header[2], n = header[3];
    if ((header[0] != kGemm && header[0] != kMatMul) || m == 0 || k == 0 || n == 0 || m > 4096 || k > 4096 ||
        n > 4096) {
      return sdk::Status::incompatible_blob("bad named Gemm blob");
    }
    const size_t at = sizeof(kNamedGemmMagic) + sizeof(header);
    const std::string name(reinterpret_cast<const char*>(c.bytes()) + at, c.blob_size - at);
    const plugrt_named_constant* b = c.constants.find(name);
    if (b == nullptr) return sdk::Status::incompatible_blob("the host lends no constant named '" + name + "'");
    if (b->size != k * n * sizeof(float)) return sdk::Status::incompatible_blob("constant '" + name + "': wrong size");
    std::vector<float> weights(k * n);
    std::memcpy(weights.data(), b->data, b->size);
    return std::unique_ptr<sdk::Delegate>(
        std::make_unique<GemmDelegate>(header[0], static_cast<int64_t>(m), static_cast<int64_t>(k),
                                       static_cast<int64_t>(n), std::move(weights), std::vector<float>()));
  }

  /// The blob of a bias-free Gemm or MatMul that names its B.
  static std::vector<uint8_t> named_gemm_blob(const sdk::PreprocessRequest& r, const sdk::GraphView& view) {
    const plugrt::ir::Node& node = view.node(0);
    const int32_t a = sdk::GraphView::input(node, 0), b = sdk::GraphView::input(node, 1);
    const uint64_t header[4] = {node.op_type()->str() == "Gemm" ? kGemm : kMatMul,
                                static_cast<uint64_t>(view.shape(a)[0]), static_cast<uint64_t>(view.shape(a)[1]),
                                static_cast<uint64_t>(view.shape(b)[1])};
    const std::string name = view.value(b).name()->str();
    std::vector<uint8_t> blob(kNamedGemmMagic, kNamedGemmMagic + sizeof(kNamedGemmMagic));
    blob.resize(sizeof(kNamedGemmMagic) + sizeof(header));
    std::memcpy(blob.data() + sizeof(kNamedGemmMagic), header, sizeof(header));
    blob.insert(blob.end(), name.begin(), name.end());
    r.name_constants();
    return blob;
  }
#endif

  sdk::Status partition(const sdk::PartitionRequest& r) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(const plugrt::ir::Graph* graph, sdk::read_graph(r.graph, r.graph_size));
    for (size_t n = 0; n < r.num_nodes && n < sdk::num_nodes(*graph); ++n) {
      r.node_taken[n] = graph->nodes()->Get(static_cast<flatbuffers::uoffset_t>(n))->op_type()->str() == "Relu";
    }
#if defined(TAKES_GEMM)
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::GraphView view, sdk::GraphView::open(r.graph, r.graph_size));
    for (size_t n = 0; n < r.num_nodes && n < view.num_nodes(); ++n) {
      if (takes_gemm(view, n)) r.node_taken[n] = 1;
    }
#endif
    return sdk::Status::ok();
  }

  sdk::Expected<std::vector<uint8_t>> preprocess(const sdk::PreprocessRequest& r) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(const plugrt::ir::Graph* graph, sdk::read_graph(r.graph, r.graph_size));
#if defined(TAKES_GEMM)
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::GraphView view, sdk::GraphView::open(r.graph, r.graph_size));
    if (view.num_nodes() == 1 && takes_gemm(view, 0)) {
      const plugrt::ir::Node& node = view.node(0);
      const int32_t a = sdk::GraphView::input(node, 0), b = sdk::GraphView::input(node, 1);
      const bool has_bias = sdk::GraphView::num_inputs(node) == 3;
#if defined(VARIANT_NAMES_CONSTANTS)
      if (r.constants_by_name_offered && !has_bias) return named_gemm_blob(r, view);
#endif
      const uint64_t header[5] = {node.op_type()->str() == "Gemm" ? kGemm : kMatMul,
                                  static_cast<uint64_t>(view.shape(a)[0]), static_cast<uint64_t>(view.shape(a)[1]),
                                  static_cast<uint64_t>(view.shape(b)[1]), has_bias ? 1u : 0u};
      std::vector<float> weights = view.floats(b);
      if (has_bias) {
        const std::vector<float> bias = view.floats(sdk::GraphView::input(node, 2));
        weights.insert(weights.end(), bias.begin(), bias.end());
      }
      std::vector<uint8_t> blob(kGemmMagic, kGemmMagic + sizeof(kGemmMagic));
      blob.resize(sizeof(kGemmMagic) + sizeof(header) + weights.size() * sizeof(float));
      std::memcpy(blob.data() + sizeof(kGemmMagic), header, sizeof(header));
      std::memcpy(blob.data() + sizeof(kGemmMagic) + sizeof(header), weights.data(), weights.size() * sizeof(float));
      return blob;
    }
#endif
    if (graph->inputs() == nullptr || graph->inputs()->size() != 1) return sdk::Status::not_supported("one input");
    const plugrt::ir::Value* x = sdk::value_at(*graph, graph->inputs()->Get(0));
    if (x == nullptr) return sdk::Status::invalid_argument("bad input index");
    uint64_t count = 1;
    for (int64_t d : sdk::shape_of(*x)) count *= static_cast<uint64_t>(d);
    std::vector<uint8_t> blob(kMagic, kMagic + sizeof(kMagic));
    blob.resize(sizeof(kMagic) + sizeof(count));
    std::memcpy(blob.data() + sizeof(kMagic), &count, sizeof(count));
    return blob;
  }
};

}  // namespace

#if defined(VARIANT_EXTRA_SYMBOL)
extern "C" __attribute__((visibility("default"))) int vendor_private_helper(int x) { return x + 1; }
#endif

PLUGRT_SDK_EXPORT_PLUGIN(sdk_test_relu, "0.1.0", ReluBackend);
