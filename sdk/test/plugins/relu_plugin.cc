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
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "plugrt/sdk/backend.h"
#include "plugrt/sdk/graph.h"

namespace {

namespace sdk = plugrt::sdk;

constexpr char kMagic[8] = {'T', 'E', 'S', 'T', 'R', 'E', 'L', 'U'};

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
    PLUGRT_SDK_RETURN_IF_ERROR(args.expect_count(1, 1));
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor x, args.input(0));
    PLUGRT_SDK_RETURN_IF_ERROR(x.expect_dtype(sdk::kFloat32));
    if (x.num_elements() != count_) return sdk::Status::invalid_argument("input 0: wrong element count");
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor y, args.output(0, sdk::kFloat32, x.shape()));
    const float* in = x.data<float>();
    float* out = y.data<float>();
#if defined(VARIANT_WRONG_RESULT)
    for (int64_t i = 0; i < count_; ++i) out[i] = in[i];
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

  sdk::Status partition(const sdk::PartitionRequest& r) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(const plugrt::ir::Graph* graph, sdk::read_graph(r.graph, r.graph_size));
    for (size_t n = 0; n < r.num_nodes && n < sdk::num_nodes(*graph); ++n) {
      r.node_taken[n] = graph->nodes()->Get(static_cast<flatbuffers::uoffset_t>(n))->op_type()->str() == "Relu";
    }
    return sdk::Status::ok();
  }

  sdk::Expected<std::vector<uint8_t>> preprocess(const sdk::PreprocessRequest& r) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(const plugrt::ir::Graph* graph, sdk::read_graph(r.graph, r.graph_size));
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
