// SPDX-License-Identifier: Apache-2.0
// Backend "echo" (plugin echo): says what options reach it, for the tests of
// `--backend-option NAME.KEY=VALUE`. It takes nothing unless told: its partition takes the
// float32 nodes of the op its compile spec `take` names (Relu or Tanh), one node per
// partition. preprocess keeps its compile spec `greeting` in the blob; init logs (a warning,
// which PLUGRT_LOG shows) "echo: preprocess saw greeting=...; init saw greeting=... and mood=..."
// (compile spec `greeting`, runtime option `mood`), and refuses the blob when the runtime
// option `refuse` is set, with its value as the reason. execute computes the op.
#include <cmath>
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

constexpr sdk::BlobFormat kFormat{"PRTECHO1", "echo", 1, 1};

class EchoDelegate : public sdk::Delegate {
 public:
  explicit EchoDelegate(bool tanh) : tanh_(tanh) {}
  sdk::Status execute(const sdk::Arguments& args) override {
    PLUGRT_SDK_RETURN_IF_ERROR(args.expect_count(1, 1));
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor x, args.input(0));
    PLUGRT_SDK_ASSIGN_OR_RETURN(sdk::Tensor y, args.output(0, sdk::kFloat32, x.shape()));
    PLUGRT_SDK_RETURN_IF_ERROR(x.expect_dtype(sdk::kFloat32));
    const float* in = x.data<float>();
    float* out = y.data<float>();
    for (int64_t i = 0; i < x.num_elements(); ++i) out[i] = tanh_ ? std::tanh(in[i]) : (in[i] > 0 ? in[i] : 0.0f);
    return sdk::Status::ok();
  }

 private:
  bool tanh_;
};

class EchoBackend : public sdk::Backend {
 public:
  static constexpr char kName[] = "echo";
  static constexpr char kDescription[] = "says which options reach it (a test backend)";
  static constexpr bool kHasAot = true;

  sdk::Status partition(const sdk::PartitionRequest& r) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(const View view, View::open(r.graph, r.graph_size));
    const std::string take = r.compile_specs.get_string("take");
    return sdk::take_nodes(r, view, kName, [&](size_t n) -> std::string {
      const plugrt::ir::Node& node = view.node(n);
      if (take.empty() || node.op_type()->str() != take) return "not the op the compile spec 'take' names";
      if (View::num_inputs(node) != 1 || !view.is_float(View::input(node, 0))) return "one float32 input only";
      return "";
    });
  }

  sdk::Expected<std::vector<uint8_t>> preprocess(const sdk::PreprocessRequest& r) override {
    PLUGRT_SDK_ASSIGN_OR_RETURN(const View view, View::open(r.graph, r.graph_size));
    if (view.num_nodes() != 1) return sdk::Status::not_supported("one node per partition");
    const std::string op = view.node(0).op_type()->str();
    if (op != "Relu" && op != "Tanh") return sdk::Status::not_supported(op + " is neither Relu nor Tanh");
    const std::string greeting = r.compile_specs.get_string("greeting");
    std::vector<uint8_t> blob(sdk::BlobFormat::kHeaderSize + 1);
    kFormat.write_header(blob.data());
    blob.back() = op == "Tanh" ? 1 : 0;
    blob.insert(blob.end(), greeting.begin(), greeting.end());
    return blob;
  }

  sdk::Expected<std::unique_ptr<sdk::Delegate>> init(const sdk::InitContext& c) override {
    PLUGRT_SDK_RETURN_IF_ERROR(kFormat.check_header(c.blob, c.blob_size));
    if (c.blob_size < sdk::BlobFormat::kHeaderSize + 1 || c.bytes()[sdk::BlobFormat::kHeaderSize] > 1) {
      return sdk::Status::invalid_argument("echo blob: no op after the header");
    }
    const size_t at = sdk::BlobFormat::kHeaderSize + 1;
    const std::string kept(reinterpret_cast<const char*>(c.bytes()) + at, c.blob_size - at);
    c.host.warning("echo: preprocess saw greeting=" + kept + "; init saw greeting=" +
                   c.compile_specs.get_string("greeting") + " and mood=" + c.runtime_options.get_string("mood"));
    if (c.runtime_options.contains("refuse")) {
      return sdk::Status::incompatible_blob("echo refuses: " + c.runtime_options.get_string("refuse"));
    }
    return std::unique_ptr<sdk::Delegate>(new EchoDelegate(c.bytes()[sdk::BlobFormat::kHeaderSize] == 1));
  }
};

}  // namespace

PLUGRT_SDK_EXPORT_PLUGIN(echo, "1.0.0", EchoBackend);
