// SPDX-License-Identifier: Apache-2.0
// The contract suite. Plugin-wide checks are in PluginContract; per-backend checks in
// BackendContract, instantiated once per backend named in the plugin's metadata.
// Every failure message says what the author should fix.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "host_abi.h"
#include "isolation.h"
#include "kit_backend_options.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/isolation/isolated_plugin.h"
#include "plugrt/plugins/plugin_library.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/plugins/plugin_metadata.h"
#include "plugrt/plugins/search_path.h"
#include "plugrt/registry.h"
#include "plugrt/sdk/testing/contract.h"
#include "plugrt/sdk/testing/mock_host.h"
#include "thread_watch.h"

namespace plugrt::sdk::testing {
namespace {

using ::testing::NiceMock;

// Under AddressSanitizer resident memory grows with every load whatever the plugin does:
// freed memory waits in the sanitizer's quarantine (256 MiB by default) and the shadow of
// each unloaded copy stays mapped. There LeakSanitizer's report at exit is the leak check,
// and the resident-memory bound below is not applied.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kResidentMemoryIsMeaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kResidentMemoryIsMeaningful = false;
#else
constexpr bool kResidentMemoryIsMeaningful = true;
#endif
#else
constexpr bool kResidentMemoryIsMeaningful = true;
#endif

ContractConfig& config() {
  static ContractConfig instance;
  return instance;
}

/// The host the kit plays: this kit's own ABI, or an older minor (--host-abi).
HostAbi host_abi() {
  HostAbi abi;
  if (config().host_abi_minor >= 0) abi.minor = static_cast<uint32_t>(config().host_abi_minor);
  return abi;
}

std::string name_of(plugrt_status s) {
  return std::string(to_string(error_from_abi(s))) + " (" + std::to_string(s) + ")";
}
std::string text(plugrt_string s) { return s.data == nullptr ? std::string() : std::string(s.data, s.size); }

// ---- The plugin, loaded with a given host ---------------------------------------------

struct LoadedPlugin {
  std::shared_ptr<plugins::PluginLibrary> library;
  const plugrt_plugin_descriptor* descriptor = nullptr;
  std::string error;  // set when loading failed

  const plugrt_backend* backend(const std::string& name) const {
    for (size_t i = 0; descriptor != nullptr && i < descriptor->num_backends; ++i) {
      const plugrt_backend* b = descriptor->backends[i];
      if (b != nullptr && text(b->name) == name) return b;
    }
    return nullptr;
  }
};

LoadedPlugin load_plugin(const plugrt_host_services* host) {
  LoadedPlugin plugin;
  Result<std::shared_ptr<plugins::PluginLibrary>> library = plugins::PluginLibrary::open(config().plugin_path);
  if (!library.is_ok()) {
    plugin.error = "dlopen failed: " + library.status().message();
    return plugin;
  }
  plugin.library = library.value();
  auto entry = reinterpret_cast<plugrt_plugin_entry_fn>(plugin.library->symbol(PLUGRT_PLUGIN_ENTRY_SYMBOL));
  if (entry == nullptr) {
    plugin.error = std::string("the plugin does not export ") + PLUGRT_PLUGIN_ENTRY_SYMBOL +
                   ": define it with PLUGRT_SDK_EXPORT_PLUGIN (or PLUGRT_PLUGIN_ENTRY)";
    return plugin;
  }
  plugrt_status status = entry(host, &plugin.descriptor);
  if (status != PLUGRT_STATUS_OK || plugin.descriptor == nullptr) {
    plugin.error = "the entry function failed with " + name_of(status);
    plugin.descriptor = nullptr;
  }
  return plugin;
}

/// Runs a crash-prone check. In process, in a forked child, so a crash is a failure; with
/// --isolate the backend already runs in a process of its own (and a fork would not
/// carry the runtime's process-starting thread), so here.
ChildOutcome run_guarded(const std::function<std::string()>& body) {
  if (!config().isolated) return run_in_child(body);
  ChildOutcome outcome;
  outcome.exited = true;
  outcome.message = body();
  return outcome;
}

/// The plugin registered isolated, as the runtime's loader registers it with --isolate.
struct IsolatedSession {
  Registry registry;
  std::shared_ptr<isolation::IsolatedPlugin> plugin;
  std::string error;  // set when registering failed
};

std::unique_ptr<IsolatedSession> register_isolated() {
  auto session = std::make_unique<IsolatedSession>();
  isolation::IsolationOptions options;
  options.backend_host = plugins::default_backend_host();
  Result<isolation::IsolatedRegistration> registered =
      isolation::register_isolated_plugin(session->registry, config().plugin_path, 0, options);
  if (!registered.is_ok()) {
    session->error = "the plugin does not start isolated: " + registered.status().to_string();
  } else {
    session->plugin = registered->plugin;
  }
  return session;
}

// ---- Tensors ------------------------------------------------------------------------

/// One tensor the kit owns, and its DLTensor view.
struct OwnedTensor {
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  DLTensor tensor{};

  OwnedTensor(DLDataType dtype, std::vector<int64_t> dims) : shape(std::move(dims)) {
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    bytes.assign(static_cast<size_t>(count) * (dtype.bits / 8) + 64, 0);
    tensor.data = bytes.data();
    tensor.device = {kDLCPU, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = dtype;
    tensor.shape = shape.data();
    tensor.strides = nullptr;
    tensor.byte_offset = 0;
  }
  OwnedTensor(const OwnedTensor&) = delete;
  OwnedTensor& operator=(const OwnedTensor&) = delete;
  float* f32() { return reinterpret_cast<float*>(bytes.data()); }
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kI32{kDLInt, 32, 1};

/// Inputs and outputs for one execute call.
struct Call {
  std::vector<std::unique_ptr<OwnedTensor>> inputs, outputs;
  std::vector<const DLTensor*> in_views, out_views;
  plugrt_execute_args args{};

  const plugrt_execute_args* finish() {
    in_views.clear();
    out_views.clear();
    for (auto& t : inputs) in_views.push_back(&t->tensor);
    for (auto& t : outputs) out_views.push_back(&t->tensor);
    play_size(&args, host_abi().execute_args_size());
    args.inputs = in_views.data();
    args.num_inputs = in_views.size();
    args.outputs = out_views.data();
    args.num_outputs = out_views.size();
    return &args;
  }
};

// ---- Sample graphs ----------------------------------------------------------------

/// A small graph, the blob the backend's preprocess made of it, and what it computes.
struct Sample {
  std::string description;
  std::vector<uint8_t> blob;
  bool can_execute = false;  // false for a --blob file: its shapes are unknown
  std::vector<std::vector<int64_t>> input_shapes, output_shapes;
  std::function<float(const std::vector<float>& in)> reference;  // per element
};

struct GraphCase {
  std::string description;
  std::vector<uint8_t> graph;
  std::string node;  // its one node, "node 'Relu_0' (Relu)"
  size_t num_nodes;
  size_t num_inputs;
  std::function<float(const std::vector<float>&)> reference;
};

std::vector<GraphCase> sample_graphs() {
  const std::vector<int64_t> shape = {2, 3};
  std::vector<GraphCase> cases;
  auto unary = [&](const char* op, std::function<float(const std::vector<float>&)> ref) {
    GraphBuilder g;
    ValueId x = g.add_value("x", DType::kFloat32, shape);
    ValueId y = g.add_value("y", DType::kFloat32, shape);
    g.add_node(op, std::string(op) + "_0", {x}, {y});
    g.add_input(x);
    g.add_output(y);
    cases.push_back({std::string(op) + " on float32[2,3]", g.finish(), "node '" + std::string(op) + "_0' (" + op + ")",
                     1, 1, std::move(ref)});
  };
  auto binary = [&](const char* op, std::function<float(const std::vector<float>&)> ref) {
    GraphBuilder g;
    ValueId a = g.add_value("a", DType::kFloat32, shape);
    ValueId b = g.add_value("b", DType::kFloat32, shape);
    ValueId y = g.add_value("y", DType::kFloat32, shape);
    g.add_node(op, std::string(op) + "_0", {a, b}, {y});
    g.add_input(a);
    g.add_input(b);
    g.add_output(y);
    cases.push_back({std::string(op) + " of two float32[2,3]", g.finish(),
                     "node '" + std::string(op) + "_0' (" + op + ")", 1, 2, std::move(ref)});
  };
  unary("Relu", [](const std::vector<float>& v) { return v[0] > 0 ? v[0] : 0.0f; });
  binary("Add", [](const std::vector<float>& v) { return v[0] + v[1]; });
  binary("Mul", [](const std::vector<float>& v) { return v[0] * v[1]; });
  unary("Neg", [](const std::vector<float>& v) { return -v[0]; });
  unary("Sigmoid", [](const std::vector<float>& v) { return 1.0f / (1.0f + std::exp(-v[0])); });
  return cases;
}

/// Why no sample could be made, or the sample; and what the backend's partition said of
/// each sample graph tried.
struct SampleResult {
  std::optional<Sample> sample;
  std::string why_not;
  std::vector<std::string> tried;  // "Relu on float32[2,3]: partition took node 'Relu_0' (Relu)"
};

/// Says which sample a check used and what partition took, so an author sees what was
/// exercised (printed outside any output capture).
void print_sample_use(const std::string& backend, const SampleResult& result) {
  std::cout << "[ SAMPLES  ] backend '" << backend
            << "': " << (result.sample ? "uses " + result.sample->description : "no sample: " + result.why_not) << "\n";
  for (const std::string& line : result.tried) std::cout << "[ SAMPLES  ]   " << line << "\n";
  std::cout << std::flush;
}

SampleResult make_sample(const plugrt_backend* backend, MockHostServices& host) {
  SampleResult result;
  if (!config().blob_path.empty()) {
    std::ifstream in(config().blob_path, std::ios::binary);
    if (!in) {
      result.why_not = "cannot read --blob " + config().blob_path;
      return result;
    }
    Sample sample;
    sample.description = "the blob file " + config().blob_path;
    sample.blob.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    result.sample = std::move(sample);
    return result;
  }
  if (backend->struct_size < PLUGRT_BACKEND_SIZE_1_0 || backend->aot == nullptr) {
    result.why_not = "the backend has no ahead-of-time table (partition/preprocess) and no --blob FILE was given";
    return result;
  }
  // Every sample graph goes to partition, so the author sees what it took of each; the
  // first one taken whole becomes the sample.
  const plugrt_aot_backend* aot = backend->aot;
  std::string tried;
  for (GraphCase& c : sample_graphs()) {
    std::vector<uint8_t> taken(c.num_nodes, 0);
    plugrt_partition_args pargs{};
    pargs.struct_size = PLUGRT_PARTITION_ARGS_SIZE;
    pargs.graph = c.graph.data();
    pargs.graph_size = c.graph.size();
    pargs.node_taken = taken.data();
    pargs.num_nodes = taken.size();
    give_compile_specs(&pargs);
    tried += (tried.empty() ? "" : ", ") + c.description;
    const plugrt_status partitioned = aot->partition(backend->context, host.plugrt_table(), &pargs);
    if (partitioned != PLUGRT_STATUS_OK) {
      result.tried.push_back(c.description + ": partition failed with " + name_of(partitioned));
      continue;
    }
    bool all = true;
    for (uint8_t t : taken) all = all && t == 1;
    result.tried.push_back(c.description + ": partition " + (all ? "took " + c.node : "did not take " + c.node));
    if (!all || result.sample) continue;
    plugrt_preprocess_args args{};
    play_size(&args, host_abi().preprocess_args_size());
    args.graph = c.graph.data();
    args.graph_size = c.graph.size();
    give_compile_specs(&args);
    plugrt_status status = aot->preprocess(backend->context, host.plugrt_table(), &args);
    if (status != PLUGRT_STATUS_OK) {
      result.why_not = "partition took " + c.description + " but preprocess failed with " + name_of(status) + ": " +
                       host.last_error();
      return result;
    }
    Sample sample;
    sample.description = c.description;
    const auto* bytes = static_cast<const uint8_t*>(args.blob);
    sample.blob.assign(bytes, bytes + args.blob_size);
    host.plugrt_table()->deallocate(host.plugrt_table()->context, args.blob);
    sample.can_execute = true;
    sample.input_shapes.assign(c.num_inputs, {2, 3});
    sample.output_shapes.assign(1, {2, 3});
    sample.reference = c.reference;
    result.sample = std::move(sample);
  }
  if (!result.sample) {
    result.why_not = "the backend's partition takes none of the sample graphs (" + tried +
                     "); pass a blob with --blob FILE to run the init/execute checks";
  }
  return result;
}

/// Fills a float32 output with NaN before execute, so that an element the backend never
/// writes cannot pass for a result (a zeroed buffer would pass for every ReLU of a
/// negative input).
void poison(OwnedTensor& output) {
  for (int64_t k = 0; k < output.count(); ++k) output.f32()[k] = std::numeric_limits<float>::quiet_NaN();
}

/// What a wrong element says when it is still the poison.
std::string poisoned_hint(float got) {
  return std::isnan(got) ? " (NaN: the kit fills every output with NaN before execute, so this element was never "
                           "written. Fix: execute must write every element of every output)"
                         : "";
}

/// Inputs with values from -3.5 to 3.5, outputs poisoned.
Call make_call(const Sample& sample) {
  Call call;
  for (size_t i = 0; i < sample.input_shapes.size(); ++i) {
    auto t = std::make_unique<OwnedTensor>(kF32, sample.input_shapes[i]);
    for (int64_t k = 0; k < t->count(); ++k) t->f32()[k] = static_cast<float>((k + 3 * i) % 8) - 3.5f;
    call.inputs.push_back(std::move(t));
  }
  for (const auto& shape : sample.output_shapes) {
    call.outputs.push_back(std::make_unique<OwnedTensor>(kF32, shape));
    poison(*call.outputs.back());
  }
  return call;
}

/// Empty when output 0 holds the reference result.
std::string check_result(const Sample& sample, Call& call) {
  for (int64_t k = 0; k < call.outputs[0]->count(); ++k) {
    std::vector<float> in;
    for (auto& t : call.inputs) in.push_back(t->f32()[k]);
    const float want = sample.reference(in);
    const float got = call.outputs[0]->f32()[k];
    if (!(std::fabs(want - got) <= 1e-5f * (1.0f + std::fabs(want)))) {
      return "output element " + std::to_string(k) + " is " + std::to_string(got) + ", expected " +
             std::to_string(want) + " (" + sample.description + ")" + poisoned_hint(got);
    }
  }
  return "";
}

// ---- Op samples, checked against the portable backend --------------------------------

/// One node of each op kind a backend commonly takes, its weights constant (as a model's
/// are), and the shapes of its inputs and output.
struct OpSample {
  std::string description;
  std::vector<uint8_t> graph;
  std::vector<std::vector<int64_t>> input_shapes;
  std::vector<int64_t> output_shape;
};

/// Values from a fixed seed, from -1 to 1.
std::vector<float> seeded_values(size_t count, uint32_t seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = uniform(random);
  return values;
}

std::vector<OpSample> op_samples() {
  std::vector<OpSample> samples;
  uint32_t seed = 20260901;
  auto count = [](const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return static_cast<size_t>(n);
  };
  // One node: its graph inputs (shapes), its constants (shapes), its output, attributes.
  auto add = [&](const std::string& description, const std::string& op, std::vector<std::vector<int64_t>> inputs,
                 std::vector<std::vector<int64_t>> constants, std::vector<int64_t> output,
                 std::vector<Attribute> attributes = {}) {
    GraphBuilder g;
    std::vector<ValueId> node_inputs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      node_inputs.push_back(g.add_value("x" + std::to_string(i), DType::kFloat32, inputs[i]));
      g.add_input(node_inputs.back());
    }
    for (size_t c = 0; c < constants.size(); ++c) {
      node_inputs.push_back(
          g.add_constant_f32("w" + std::to_string(c), constants[c], seeded_values(count(constants[c]), ++seed)));
    }
    ValueId y = g.add_value("y", DType::kFloat32, output);
    g.add_node(op, op + "_0", node_inputs, {y}, std::move(attributes));
    g.add_output(y);
    samples.push_back({description, g.finish(), std::move(inputs), std::move(output)});
  };
  add("Gemm with bias: float32[3,5] x [5,4] + [4]", "Gemm", {{3, 5}}, {{5, 4}, {4}}, {3, 4});
  add("Gemm, B transposed, with bias: float32[3,6] x [4,6]^T + [4]", "Gemm", {{3, 6}}, {{4, 6}, {4}}, {3, 4},
      {Attribute::Int("transB", 1)});
  add("MatMul: float32[3,8] x [8,5]", "MatMul", {{3, 8}}, {{8, 5}}, {3, 5});
  add("MatMul of two inputs: float32[3,8] x [8,5]", "MatMul", {{3, 8}, {8, 5}}, {}, {3, 5});
  add("Conv 3x3, pads 1, with bias: float32[1,2,5,5] -> [1,3,5,5]", "Conv", {{1, 2, 5, 5}}, {{3, 2, 3, 3}, {3}},
      {1, 3, 5, 5}, {Attribute::Ints("kernel_shape", {3, 3}), Attribute::Ints("pads", {1, 1, 1, 1})});
  add("Conv 1x1, stride 2: float32[1,4,6,6] -> [1,2,3,3]", "Conv", {{1, 4, 6, 6}}, {{2, 4, 1, 1}}, {1, 2, 3, 3},
      {Attribute::Ints("kernel_shape", {1, 1}), Attribute::Ints("strides", {2, 2})});
  add("MaxPool 2x2, stride 2: float32[1,3,4,4] -> [1,3,2,2]", "MaxPool", {{1, 3, 4, 4}}, {}, {1, 3, 2, 2},
      {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})});
  add("AveragePool 2x2, stride 2: float32[1,3,4,4] -> [1,3,2,2]", "AveragePool", {{1, 3, 4, 4}}, {}, {1, 3, 2, 2},
      {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})});
  add("GlobalAveragePool: float32[1,3,4,4] -> [1,3,1,1]", "GlobalAveragePool", {{1, 3, 4, 4}}, {}, {1, 3, 1, 1});
  add("Softmax on the last axis: float32[2,7]", "Softmax", {{2, 7}}, {}, {2, 7}, {Attribute::Int("axis", -1)});
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Neg", "Abs", "Exp"}) {
    add(std::string(op) + " on float32[2,3,4]", op, {{2, 3, 4}}, {}, {2, 3, 4});
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    add(std::string(op) + " of two float32[2,3,4]", op, {{2, 3, 4}, {2, 3, 4}}, {}, {2, 3, 4});
  }
  add("Add with a broadcast constant: float32[2,3,4] + [4]", "Add", {{2, 3, 4}}, {{4}}, {2, 3, 4});
  return samples;
}

/// How close a backend's element must be to the portable backend's: tight enough that a
/// dropped bias or a result off by 0.2% fails, loose enough for another order of summation.
constexpr float kAbsoluteTolerance = 1e-5f;
constexpr float kRelativeTolerance = 1e-4f;

/// Runs `graph` on the built-in portable backend: its output, or why not.
Result<std::vector<float>> portable_result(const OpSample& sample, const std::vector<OwnedTensor*>& inputs) {
  const RegisteredBackend& portable = builtin_portable_backend();
  Result<std::vector<uint8_t>> blob =
      portable.preprocess(Span<const uint8_t>(sample.graph.data(), sample.graph.size()));
  if (!blob.is_ok()) return blob.status();
  InitOptions options;
  options.blob = blob->data();
  options.blob_size = blob->size();
  Result<DelegateHandle> handle = portable.init(options);
  if (!handle.is_ok()) return handle.status();
  OwnedTensor output(kF32, sample.output_shape);
  std::vector<const DLTensor*> in_views, out_views = {&output.tensor};
  for (OwnedTensor* t : inputs) in_views.push_back(&t->tensor);
  Status status = handle->execute(Span<const DLTensor* const>(in_views.data(), in_views.size()),
                                  Span<const DLTensor* const>(out_views.data(), out_views.size()));
  if (!status.is_ok()) return status;
  return std::vector<float>(output.f32(), output.f32() + output.count());
}

plugrt_init_args init_args(const std::vector<uint8_t>& blob) {
  plugrt_init_args args{};
  play_size(&args, host_abi().init_args_size());
  args.blob = blob.empty() ? nullptr : blob.data();
  args.blob_size = blob.size();
  give_init_options(&args);
  return args;
}

// ---- Plugin-wide checks -------------------------------------------------------------

class PluginContract : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<plugins::PluginFileInfo> info = plugins::inspect_plugin_file(config().plugin_path);
    ASSERT_TRUE(info.is_ok()) << info.status().to_string()
                              << "\nFix: build the plugin with plugrt_add_backend() and define its metadata with "
                                 "PLUGRT_SDK_EXPORT_PLUGIN (or PLUGRT_PLUGIN_METADATA).";
    info_ = std::move(info.value());
  }
  plugins::PluginFileInfo info_;
};

TEST_F(PluginContract, AbiVersionIsAcceptedByThisHost) {
  EXPECT_EQ(info_.metadata.abi_major, static_cast<uint32_t>(PLUGRT_ABI_MAJOR))
      << "the plugin was built for ABI " << info_.metadata.abi_major << "." << info_.metadata.abi_minor
      << ", this host speaks " << PLUGRT_ABI_MAJOR << "." << PLUGRT_ABI_MINOR
      << "; rebuild the plugin against this SDK's plugrt_abi.h";
  Registry registry;
  plugins::PluginLoader loader(registry);
  Result<PluginId> id = loader.load(config().plugin_path);
  EXPECT_TRUE(id.is_ok()) << "the runtime's plugin loader refuses the plugin: " << id.status().to_string();
}

TEST_F(PluginContract, MetadataAgreesWithTheEntryFunction) {
  NiceMock<MockHostServices> host;
  LoadedPlugin plugin = load_plugin(host.plugrt_table());
  ASSERT_EQ(plugin.error, "");
  const plugrt_plugin_descriptor& d = *plugin.descriptor;
  ASSERT_GE(d.struct_size, PLUGRT_PLUGIN_DESCRIPTOR_SIZE_1_0) << "the descriptor's struct_size is too small";
  const std::string fix =
      "\nFix: the metadata record and the descriptor must say the same thing; "
      "PLUGRT_SDK_EXPORT_PLUGIN writes both from one list.";
  EXPECT_EQ(text(d.name), info_.metadata.name) << "plugin name differs" << fix;
  EXPECT_EQ(text(d.version), info_.metadata.version) << "plugin version differs" << fix;
  EXPECT_EQ(d.abi_major, info_.metadata.abi_major) << "ABI major differs" << fix;
  EXPECT_EQ(d.abi_minor, info_.metadata.abi_minor) << "ABI minor differs" << fix;
  std::vector<std::string> names;
  for (size_t i = 0; i < d.num_backends; ++i) {
    names.push_back(d.backends[i] == nullptr ? "<NULL>" : text(d.backends[i]->name));
  }
  EXPECT_EQ(names, info_.metadata.backends) << "the backends (names and order) differ" << fix;
}

TEST_F(PluginContract, ExportsOnlyTheEntryAndTheMetadata) {
  for (const std::string& symbol : info_.exported_symbols) {
    EXPECT_TRUE(symbol == PLUGRT_PLUGIN_ENTRY_SYMBOL || symbol == PLUGRT_METADATA_SYMBOL)
        << "the plugin exports '" << symbol << "'. A plugin exports only " << PLUGRT_PLUGIN_ENTRY_SYMBOL << " and "
        << PLUGRT_METADATA_SYMBOL << ", so two plugins can carry conflicting copies of one library."
        << "\nFix: build it with plugrt_add_backend() (hidden visibility and the SDK's version script), "
           "and do not mark other symbols visibility(\"default\").";
  }
}

TEST_F(PluginContract, DoesNotLinkTheRuntime) {
  for (const std::string& needed : info_.needed_libraries) {
    EXPECT_NE(needed.rfind("libplugrt", 0), 0u)
        << "the plugin links '" << needed << "'. A backend links the SDK (headers only), never the runtime: "
        << "one process has exactly one registry.\nFix: remove plugrt::core/plugrt::plugins from its link libraries.";
  }
}

TEST_F(PluginContract, LoadInitDestroyUnload100Times) {
  // The sample blob of each backend, made once, in the parent.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> blobs;
  {
    NiceMock<MockHostServices> host;
    LoadedPlugin plugin = load_plugin(host.plugrt_table());
    ASSERT_EQ(plugin.error, "");
    for (const std::string& name : info_.metadata.backends) {
      const plugrt_backend* backend = plugin.backend(name);
      if (backend == nullptr) continue;
      select_kit_backend(name);
      SampleResult sample = make_sample(backend, host);
      print_sample_use(name, sample);
      if (sample.sample) blobs.emplace_back(name, sample.sample->blob);
    }
  }
  ChildOutcome outcome = run_in_child([&]() -> std::string {
    const long before = resident_kib();
    for (int cycle = 0; cycle < 100; ++cycle) {
      PlainHost host;
      {
        LoadedPlugin plugin = load_plugin(host.table());
        if (!plugin.error.empty()) return "cycle " + std::to_string(cycle) + ": " + plugin.error;
        for (const auto& [name, blob] : blobs) {
          const plugrt_backend* backend = plugin.backend(name);
          if (backend == nullptr) return "backend " + name + " vanished on cycle " + std::to_string(cycle);
          select_kit_backend(name);
          plugrt_init_args args = init_args(blob);
          plugrt_delegate_handle handle = nullptr;
          plugrt_status status = backend->init(backend->context, host.table(), &args, &handle);
          if (status != PLUGRT_STATUS_OK) {
            return name + ": init failed on cycle " + std::to_string(cycle) + " with " + name_of(status);
          }
          backend->destroy(handle);
        }
      }  // unloaded here (dlclose)
      if (host.live_allocations() != 0) {
        return "cycle " + std::to_string(cycle) + ": " + std::to_string(host.live_allocations()) +
               " host allocations were still live after destroy and unload";
      }
    }
    const long growth = resident_kib() - before;
    if (kResidentMemoryIsMeaningful && growth > 64 * 1024) {
      return "resident memory grew by " + std::to_string(growth / 1024) +
             " MiB over 100 load/unload cycles: release what the plugin's static objects hold";
    }
    return "";
  });
  EXPECT_TRUE(outcome.ok()) << "100 load, init, destroy, unload cycles: " << outcome.describe();
}

// ---- Per-backend checks --------------------------------------------------------------

// Each per-backend check runs in a forked child of its own, so that a backend crashing
// or hanging in one check fails that check (with what it had found so far) and the rest
// still run. The child reports every assertion into a pipe as it is made; the parent
// makes the same assertions again, at the same file and line.

struct ResultSink {
  ::testing::TestPartResultArray unused;
};

class PipeReporter : private ResultSink, public ::testing::ScopedFakeTestPartResultReporter {
 public:
  explicit PipeReporter(int fd) : ScopedFakeTestPartResultReporter(INTERCEPT_ALL_THREADS, &unused), fd_(fd) {}

  void ReportTestPartResult(const ::testing::TestPartResult& result) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (result.fatally_failed() || result.skipped()) stopped_ = true;
    const std::string file = result.file_name() == nullptr ? "" : result.file_name();
    const std::string message = result.message() == nullptr ? "" : result.message();
    std::string record(1, static_cast<char>(result.type()));
    auto put = [&](uint32_t n) { record.append(reinterpret_cast<const char*>(&n), sizeof(n)); };
    put(static_cast<uint32_t>(result.line_number()));
    put(static_cast<uint32_t>(file.size()));
    record += file;
    put(static_cast<uint32_t>(message.size()));
    record += message;
    write_all(fd_, record);
  }

  /// A fatal failure or a skip was reported: the check stops there.
  bool stopped() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stopped_;
  }

 private:
  int fd_;
  std::mutex mutex_;
  bool stopped_ = false;
};

/// Makes again, in the parent, the assertions the check's child reported; then says how
/// the child ended when it did not end normally.
void replay_child(const ChildOutcome& outcome, int timeout_seconds) {
  const std::string& bytes = outcome.message;
  size_t at = 0;
  auto get = [&](uint32_t* n) {
    if (at + sizeof(*n) > bytes.size()) return false;
    std::memcpy(n, bytes.data() + at, sizeof(*n));
    at += sizeof(*n);
    return true;
  };
  while (at < bytes.size()) {
    const auto type = static_cast<::testing::TestPartResult::Type>(bytes[at++]);
    uint32_t line = 0, file_size = 0, message_size = 0;
    if (!get(&line) || !get(&file_size) || at + file_size > bytes.size()) break;
    const std::string file = bytes.substr(at, file_size);
    at += file_size;
    if (!get(&message_size) || at + message_size > bytes.size()) break;
    const std::string message = bytes.substr(at, message_size);
    at += message_size;
    if (type == ::testing::TestPartResult::kSuccess) continue;
    GTEST_MESSAGE_AT_(file.empty() ? nullptr : file.c_str(), static_cast<int>(line), message.c_str(), type);
  }
  if (outcome.timed_out) {
    ADD_FAILURE() << "the check did not finish within " << timeout_seconds
                  << " seconds and was killed: a call into the backend hangs (--check-timeout sets the limit)";
  } else if (!outcome.exited) {
    ADD_FAILURE() << "the check " << outcome.describe()
                  << ": the backend crashed the process running it (what the check found before is above)."
                  << "\nFix: a backend must return an error, never crash";
  } else if (outcome.exit_code != 0) {
    ADD_FAILURE() << "the process running the check exited with code " << outcome.exit_code
                  << " before the check finished: the plugin called exit()";
  }
}

class BackendContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    child_ = fork_child();
    if (child_.pid < 0) {
      FAIL() << "fork() failed: the kit runs each check in a child process";
    }
    if (child_.pid > 0) {
      replay_child(wait_for_child(child_, config().check_timeout_seconds), config().check_timeout_seconds);
      ran_in_child_ = true;
      return;
    }
    reporter_ = std::make_unique<PipeReporter>(child_.fd);
    set_up();
    if (reporter_->stopped()) end_child();
  }

  void TearDown() override {
    if (reporter_ != nullptr) end_child();
  }

  /// In the child, when the check is done: what it printed is flushed, what it found
  /// is already in the pipe.
  [[noreturn]] void end_child() {
    reporter_.reset();
    std::cout.flush();
    std::cerr.flush();
    fflush(nullptr);
    close(child_.fd);
    _exit(0);
  }

  void set_up() {
    select_kit_backend(GetParam());
    plugin_ = load_plugin(host_.plugrt_table());
    ASSERT_EQ(plugin_.error, "");
    backend_ = plugin_.backend(GetParam());
    ASSERT_NE(backend_, nullptr) << "the metadata names backend '" << GetParam()
                                 << "' but the entry function does not provide it";
    ASSERT_GE(backend_->struct_size, PLUGRT_BACKEND_SIZE_1_0);
    ASSERT_TRUE(backend_->is_available != nullptr && backend_->init != nullptr && backend_->execute != nullptr &&
                backend_->destroy != nullptr)
        << "is_available, init, execute and destroy are required";
    runtime_ = backend_;
    if (config().isolated) {
      isolated_ = register_isolated();
      ASSERT_EQ(isolated_->error, "");
      runtime_ = isolation::proxy_table(*isolated_->plugin, GetParam());
      ASSERT_NE(runtime_, nullptr) << "the isolated plugin does not provide backend '" << GetParam() << "'";
    }
  }

  /// Skips the test when the backend cannot run here.
  bool available() {
    char reason[256];
    plugrt_text_buffer buffer{reason, sizeof(reason), 0};
    if (runtime_->is_available(runtime_->context, host_.plugrt_table(), &buffer)) return true;
    unavailable_reason_ = std::string(reason, buffer.size);
    return false;
  }

  /// The sample for init/execute, or a skip reason.
  const Sample* sample() {
    if (!sample_) {
      sample_ = make_sample(backend_, host_);
      print_sample_use(GetParam(), *sample_);
    }
    return sample_->sample ? &*sample_->sample : nullptr;
  }

  plugrt_status init(const std::vector<uint8_t>& blob, plugrt_delegate_handle* handle) {
    plugrt_init_args args = init_args(blob);
    return runtime_->init(runtime_->context, host_.plugrt_table(), &args, handle);
  }

  /// Whether the backend's partition takes the one node of `graph`.
  bool takes_its_node(const std::vector<uint8_t>& graph) {
    std::vector<uint8_t> taken(1, 0);
    plugrt_partition_args args{};
    args.struct_size = PLUGRT_PARTITION_ARGS_SIZE;
    args.graph = graph.data();
    args.graph_size = graph.size();
    args.node_taken = taken.data();
    args.num_nodes = 1;
    give_compile_specs(&args);
    return backend_->aot->partition(backend_->context, host_.plugrt_table(), &args) == PLUGRT_STATUS_OK && taken[0];
  }

  /// Runs preprocess with `flags` offered: its status, and on success the blob (copied
  /// out of host memory) and the flags the backend set on it.
  plugrt_status preprocess(const std::vector<uint8_t>& graph, plugrt_preprocess_flags flags, std::vector<uint8_t>* blob,
                           plugrt_blob_flags* blob_flags) {
    plugrt_preprocess_args args{};
    play_size(&args, host_abi().preprocess_args_size());
    args.graph = graph.data();
    args.graph_size = graph.size();
    give_compile_specs(&args);
    if (host_abi().offers_constants_by_name()) args.flags = flags;
    const plugrt_status status = backend_->aot->preprocess(backend_->context, host_.plugrt_table(), &args);
    if (status != PLUGRT_STATUS_OK) return status;
    const auto* bytes = static_cast<const uint8_t*>(args.blob);
    blob->assign(bytes, bytes + args.blob_size);
    host_.plugrt_table()->deallocate(host_.plugrt_table()->context, args.blob);
    *blob_flags = args.blob_flags;
    return status;
  }

  // Declared first: destroyed last, after the plugin that holds its table.
  NiceMock<MockHostServices> host_;
  LoadedPlugin plugin_;
  /// The plugin's own table: partition and preprocess (compile time), in process.
  const plugrt_backend* backend_ = nullptr;
  /// The table run-time calls go to: backend_, or with --isolate the runtime's proxy.
  const plugrt_backend* runtime_ = nullptr;
  std::unique_ptr<IsolatedSession> isolated_;
  std::optional<SampleResult> sample_;
  std::string unavailable_reason_;
  ForkedChild child_;
  std::unique_ptr<PipeReporter> reporter_;  // in the child
  bool ran_in_child_ = false;               // in the parent
};

/// The first line of every per-backend check: in the parent, the check already ran in
/// its child (SetUp) and its findings are reported.
#define RUNS_IN_ITS_CHILD() \
  if (ran_in_child_) return

#define SKIP_UNLESS_AVAILABLE()                                                                                    \
  if (available()) {                                                                                               \
  } else if (config().require_available) {                                                                         \
    FAIL() << "backend '" << GetParam() << "' is unavailable here (--require-available): " << unavailable_reason_; \
  } else                                                                                                           \
    GTEST_SKIP() << "backend '" << GetParam() << "' is unavailable here: " << unavailable_reason_
#define SKIP_UNLESS_SAMPLE(s) \
  const Sample* s = sample(); \
  if (s != nullptr) {         \
  } else                      \
    GTEST_SKIP() << sample_->why_not
#define SKIP_UNLESS_EXECUTABLE(s) \
  SKIP_UNLESS_SAMPLE(s);          \
  if (s->can_execute) {           \
  } else                          \
    GTEST_SKIP() << "execute checks need a sample graph the backend takes, not a --blob file"

TEST_P(BackendContract, IsAvailableIsIdempotentAndThreadSafe) {
  RUNS_IN_ITS_CHILD();
  auto ask = [&](std::string* reason) {
    char data[512];
    plugrt_text_buffer buffer{data, sizeof(data), 0};
    bool answer = runtime_->is_available(runtime_->context, host_.plugrt_table(), &buffer);
    *reason = answer ? "" : std::string(data, std::min(buffer.size, sizeof(data)));
    return answer;
  };
  std::string first_reason;
  const bool first = ask(&first_reason);
  if (!first) {
    EXPECT_FALSE(first_reason.empty()) << "is_available said no without a reason: write why into `reason`";
  }
  for (int i = 0; i < 10; ++i) {
    std::string reason;
    ASSERT_EQ(ask(&reason), first) << "is_available changed its answer on call " << i + 2
                                   << ": it must give the same answer while the plugin stays loaded";
    ASSERT_EQ(reason, first_reason) << "is_available changed its reason";
  }
  std::atomic<int> disagreements{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        std::string reason;
        if (ask(&reason) != first) ++disagreements;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(disagreements.load(), 0) << "is_available answered differently from 8 threads at once: make it "
                                        "thread-safe (no lazy initialisation without a lock or call_once)";
  EXPECT_EQ(host_.live_allocations(), 0) << "is_available left host allocations live: it must not allocate "
                                            "lasting resources";
}

/// Runs init on `blob` in a child and expects an error, not success or a crash.
/// With `must_refuse` false, init may accept the blob (it may still be valid, e.g. when
/// only padding was cut), but must not crash, hang or leak.
void expect_refused(const plugrt_backend* backend, const std::vector<uint8_t>& blob, const std::string& what,
                    bool must_refuse = true) {
  ChildOutcome outcome = run_guarded([&]() -> std::string {
    PlainHost host;
    plugrt_init_args args = init_args(blob);
    plugrt_delegate_handle handle = nullptr;
    plugrt_status status = backend->init(backend->context, host.table(), &args, &handle);
    if (status == PLUGRT_STATUS_DELEGATE_CRASHED) return kIsolatedCrash + host.crash();
    if (status == PLUGRT_STATUS_OK) {
      backend->destroy(handle);
      if (!must_refuse) return host.live_allocations() == 0 ? "" : "destroy left host allocations live";
      return "init accepted " + what + " (" + std::to_string(blob.size()) +
             " bytes). Fix: validate every blob (magic, format version, every size and offset) and "
             "refuse a bad one with DelegateInvalidCompatibility or InvalidProgram";
    }
    if (host.num_errors() == 0) {
      return "init refused " + what + " with " + name_of(status) +
             " but reported no message. Fix: say why through host->report_error (the SDK does it for a Status)";
    }
    if (host.live_allocations() != 0) {
      return "init refused " + what + " but left " + std::to_string(host.live_allocations()) +
             " host allocations live. Fix: release what a failed init allocated";
    }
    return "";
  });
  EXPECT_TRUE(outcome.ok()) << "init on " << what << ": " << outcome.describe()
                            << (outcome.crashed() ? "\nFix: init must never crash on a bad blob; check every size "
                                                    "and offset before reading, and return an error"
                                                  : "");
}

TEST_P(BackendContract, InitRefusesAnEmptyBlob) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  expect_refused(runtime_, {}, "an empty blob");
}

TEST_P(BackendContract, InitRefusesATruncatedBlob) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  SKIP_UNLESS_SAMPLE(s);
  // Cut to half, and to a few bytes: these must be refused. Cut by one byte: that may
  // only remove padding, so init may accept it, but must not crash.
  for (size_t size : {s->blob.size() / 2, size_t{8}, size_t{1}, s->blob.size() - 1}) {
    if (size >= s->blob.size()) continue;
    std::vector<uint8_t> blob(s->blob.begin(), s->blob.begin() + static_cast<std::ptrdiff_t>(size));
    expect_refused(
        runtime_, blob,
        "a blob truncated to " + std::to_string(size) + " of its " + std::to_string(s->blob.size()) + " bytes",
        size + 1 != s->blob.size());
  }
}

TEST_P(BackendContract, InitRefusesARandomBlob) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  std::mt19937 random(20260807);
  for (size_t size : {size_t{16}, size_t{256}, size_t{4096}}) {
    std::vector<uint8_t> blob(size);
    for (uint8_t& b : blob) b = static_cast<uint8_t>(random());
    expect_refused(runtime_, blob, "a random blob");
  }
}

TEST_P(BackendContract, FullCycleOnItsOwnBlob) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  SKIP_UNLESS_SAMPLE(s);
  plugrt_delegate_handle handle = nullptr;
  plugrt_status status = init(s->blob, &handle);
  ASSERT_EQ(status, PLUGRT_STATUS_OK) << "init refused the blob its own preprocess made from " << s->description
                                      << " with " << name_of(status) << ": " << host_.last_error()
                                      << "\nFix: preprocess and init must agree on the blob format";
  ASSERT_NE(handle, nullptr) << "init succeeded but wrote no handle";
  if (s->can_execute) {
    Call call = make_call(*s);
    status = runtime_->execute(handle, call.finish());
    EXPECT_EQ(status, PLUGRT_STATUS_OK) << "execute failed on correct arguments for " << s->description << " with "
                                        << name_of(status) << ": " << host_.last_error();
    if (status == PLUGRT_STATUS_OK) {
      EXPECT_EQ(check_result(*s, call), "") << "execute computed a wrong result";
    }
  }
  runtime_->destroy(handle);
}

// Every op sample the backend's partition takes (Gemm, MatMul, Conv, pooling, Softmax,
// element-wise ops), run on the backend and on the built-in portable backend with the same
// seeded inputs and outputs filled with NaN: every element must agree within
// kAbsoluteTolerance + kRelativeTolerance * |portable's|.
TEST_P(BackendContract, ResultsMatchThePortableBackendOnEveryOpItTakes) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  if (backend_->struct_size < PLUGRT_BACKEND_SIZE_1_0 || backend_->aot == nullptr) {
    GTEST_SKIP() << "the backend has no ahead-of-time table (partition/preprocess) to take the op samples";
  }
  std::vector<std::string> lines;
  size_t taken = 0;
  uint32_t seed = 7;
  for (const OpSample& op : op_samples()) {
    if (!takes_its_node(op.graph)) {
      lines.push_back(op.description + ": not taken");
      continue;
    }
    ++taken;
    std::vector<uint8_t> blob;
    plugrt_blob_flags blob_flags = 0;
    const plugrt_status preprocessed = preprocess(op.graph, 0, &blob, &blob_flags);
    if (preprocessed != PLUGRT_STATUS_OK) {
      ADD_FAILURE() << op.description << ": partition took it but preprocess failed with " << name_of(preprocessed)
                    << ": " << host_.last_error();
      continue;
    }
    plugrt_delegate_handle handle = nullptr;
    const plugrt_status initialized = init(blob, &handle);
    if (initialized != PLUGRT_STATUS_OK) {
      ADD_FAILURE() << op.description << ": init refused the blob its own preprocess made, with "
                    << name_of(initialized) << ": " << host_.last_error();
      continue;
    }
    Call call;
    std::vector<OwnedTensor*> inputs;
    for (const std::vector<int64_t>& shape : op.input_shapes) {
      call.inputs.push_back(std::make_unique<OwnedTensor>(kF32, shape));
      const std::vector<float> values = seeded_values(static_cast<size_t>(call.inputs.back()->count()), ++seed);
      std::copy(values.begin(), values.end(), call.inputs.back()->f32());
      inputs.push_back(call.inputs.back().get());
    }
    call.outputs.push_back(std::make_unique<OwnedTensor>(kF32, op.output_shape));
    poison(*call.outputs[0]);
    const plugrt_status executed = runtime_->execute(handle, call.finish());
    runtime_->destroy(handle);
    if (executed != PLUGRT_STATUS_OK) {
      ADD_FAILURE() << op.description << ": execute failed with " << name_of(executed) << ": " << host_.last_error();
      continue;
    }
    Result<std::vector<float>> want = portable_result(op, inputs);
    if (!want.is_ok()) {
      lines.push_back(op.description + ": taken; not compared (the portable backend: " + want.status().to_string() +
                      ")");
      continue;
    }
    float largest = 0;
    for (size_t k = 0; k < want->size(); ++k) {
      const float got = call.outputs[0]->f32()[k];
      const float difference = std::fabs(got - (*want)[k]);
      const float allowed = kAbsoluteTolerance + kRelativeTolerance * std::fabs((*want)[k]);
      if (!(difference <= allowed)) {
        ADD_FAILURE() << op.description << ": output element " << k << " is " << got << ", the portable backend gives "
                      << (*want)[k] << " (difference " << difference << ", allowed " << allowed << ")"
                      << poisoned_hint(got)
                      << ".\nFix: the backend computes this op wrong; compare it with the ONNX operator's definition";
        largest = std::numeric_limits<float>::infinity();
        break;
      }
      largest = std::max(largest, difference);
    }
    if (std::isfinite(largest)) {
      lines.push_back(op.description + ": taken, agrees with the portable backend (largest difference " +
                      std::to_string(largest) + ")");
    } else {
      lines.push_back(op.description + ": taken, DIFFERS from the portable backend");
    }
  }
  for (const std::string& line : lines) std::cout << "[ OPS      ] backend '" << GetParam() << "': " << line << "\n";
  std::cout << std::flush;
  if (taken == 0) GTEST_SKIP() << "the backend's partition takes none of the kit's op samples";
}

// ABI 1.4: offered a graph's constants by name, a backend may name them in its blob. Then
// init must read them from what the host lends, compute the same result, and refuse the
// blob as incompatible (never crash or run without them) when nothing is lent.
TEST_P(BackendContract, ABlobThatNamesConstantsReadsThemFromTheHost) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  if (backend_->struct_size < PLUGRT_BACKEND_SIZE_1_0 || backend_->aot == nullptr) {
    GTEST_SKIP() << "the backend has no ahead-of-time table to offer constants to";
  }
  if (!host_abi().offers_constants_by_name()) {
    GTEST_SKIP() << "a host of ABI " << host_abi().text() << " offers no constants by name (--host-abi)";
  }
  // y = x + c, c a constant of the same shape.
  const std::vector<int64_t> shape = {2, 3};
  std::vector<float> constant;
  for (int i = 0; i < 6; ++i) constant.push_back(0.25f * static_cast<float>(i) - 0.5f);
  GraphBuilder g;
  ValueId x = g.add_value("x", DType::kFloat32, shape);
  ValueId c = g.add_constant_f32("c", shape, constant);
  ValueId y = g.add_value("y", DType::kFloat32, shape);
  g.add_node("Add", "Add_0", {x, c}, {y});
  g.add_input(x);
  g.add_output(y);
  const std::vector<uint8_t> graph = g.finish();
  if (!takes_its_node(graph)) GTEST_SKIP() << "partition does not take an Add of a float32[2,3] input and constant";
  std::vector<uint8_t> blob;
  plugrt_blob_flags blob_flags = 0;
  const plugrt_status preprocessed = preprocess(graph, PLUGRT_PREPROCESS_CONSTANTS_BY_NAME, &blob, &blob_flags);
  ASSERT_EQ(preprocessed, PLUGRT_STATUS_OK)
      << "preprocess failed with " << name_of(preprocessed) << ": " << host_.last_error();
  if ((blob_flags & PLUGRT_BLOB_NAMES_CONSTANTS) == 0) {
    GTEST_SKIP() << "the blob holds its constants (the backend did not take the offer)";
  }

  Sample sample;  // its inputs and outputs: one float32[2,3] each
  sample.input_shapes = {shape};
  sample.output_shapes = {shape};
  const plugrt_named_constant lent[] = {{{"c", 1}, constant.data(), constant.size() * sizeof(float)}};
  plugrt_init_args init{};
  init.struct_size = PLUGRT_INIT_ARGS_SIZE;
  init.blob = blob.data();
  init.blob_size = blob.size();
  init.constants = lent;
  init.num_constants = 1;
  give_init_options(&init);
  plugrt_delegate_handle handle = nullptr;
  const plugrt_status status = runtime_->init(runtime_->context, host_.plugrt_table(), &init, &handle);
  ASSERT_EQ(status, PLUGRT_STATUS_OK) << "init refused a blob that names constants, with them lent: " << name_of(status)
                                      << ": " << host_.last_error();
  Call call = make_call(sample);
  ASSERT_EQ(runtime_->execute(handle, call.finish()), PLUGRT_STATUS_OK) << host_.last_error();
  for (int64_t k = 0; k < 6; ++k) {
    EXPECT_FLOAT_EQ(call.outputs[0]->f32()[k], call.inputs[0]->f32()[k] + constant[static_cast<size_t>(k)])
        << "element " << k << ": the result does not use the lent constant 'c'";
  }
  runtime_->destroy(handle);

  init.constants = nullptr;
  init.num_constants = 0;
  handle = nullptr;
  const plugrt_status without = runtime_->init(runtime_->context, host_.plugrt_table(), &init, &handle);
  if (without == PLUGRT_STATUS_OK) runtime_->destroy(handle);
  EXPECT_EQ(without, PLUGRT_STATUS_DELEGATE_INVALID_COMPATIBILITY)
      << "init of a blob that names constants, with none lent (a host older than ABI 1.4), returned "
      << name_of(without) << ".\nFix: refuse it with Status::incompatible_blob, so that the host runs the fallback";
}

// ABI 1.5: a backend that says it reads graphs whose dimensions vary
// (PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS) must run one at every shape within its bounds,
// and refuse a call past them with a status, never write past the bound's memory.
TEST_P(BackendContract, AGraphWithSymbolsRunsAtEachCallsShapes) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  if ((backend_->capabilities & PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS) == 0 || backend_->aot == nullptr) {
    GTEST_SKIP() << "the backend takes static graphs only (no PLUGRT_BACKEND_CAP_VARYING_DIMENSIONS)";
  }
  if (!host_abi().gives_graphs_with_symbols()) {
    GTEST_SKIP() << "a host of ABI " << host_abi().text() << " gives no graphs with symbols (--host-abi)";
  }
  // y = Relu(x), x and y float32[2, n] with n in 1..8.
  constexpr int64_t kMax = 8;
  GraphBuilder g;
  const common::DimExpr n = common::DimExpr::symbol(g.add_symbol("n", 1, kMax));
  ValueId x = g.add_dynamic_value("x", DType::kFloat32, {common::DimExpr::constant(2), n});
  ValueId y = g.add_dynamic_value("y", DType::kFloat32, {common::DimExpr::constant(2), n});
  g.add_node("Relu", "Relu_0", {x}, {y});
  g.add_input(x);
  g.add_output(y);
  const std::vector<uint8_t> graph = g.finish();
  if (!takes_its_node(graph)) GTEST_SKIP() << "partition does not take a Relu of float32[2, n], n in 1..8";
  std::vector<uint8_t> blob;
  plugrt_blob_flags blob_flags = 0;
  const plugrt_status preprocessed = preprocess(graph, 0, &blob, &blob_flags);
  ASSERT_EQ(preprocessed, PLUGRT_STATUS_OK)
      << "preprocess failed with " << name_of(preprocessed) << ": " << host_.last_error();
  plugrt_delegate_handle handle = nullptr;
  const plugrt_status status = init(blob, &handle);
  ASSERT_EQ(status, PLUGRT_STATUS_OK) << "init failed with " << name_of(status) << ": " << host_.last_error();
  for (int64_t length : {int64_t{1}, int64_t{5}, kMax, int64_t{5}}) {
    Sample sample;
    sample.input_shapes = {{2, length}};
    sample.output_shapes = {{2, length}};
    Call call = make_call(sample);
    ASSERT_EQ(runtime_->execute(handle, call.finish()), PLUGRT_STATUS_OK)
        << "execute at n = " << length << ": " << host_.last_error();
    for (int64_t k = 0; k < 2 * length; ++k) {
      EXPECT_EQ(call.outputs[0]->f32()[k], std::max(0.0f, call.inputs[0]->f32()[k]))
          << "n = " << length << ", element " << k;
    }
  }
  Sample past;
  past.input_shapes = {{2, kMax + 1}};
  past.output_shapes = {{2, kMax + 1}};
  Call call = make_call(past);
  EXPECT_NE(runtime_->execute(handle, call.finish()), PLUGRT_STATUS_OK)
      << "execute accepted n = " << kMax + 1 << ", past the bound 8 its graph gives";
  runtime_->destroy(handle);
}

TEST_P(BackendContract, DestroyReleasesEveryHostAllocation) {
  RUNS_IN_ITS_CHILD();
  if (config().isolated) {
    GTEST_SKIP() << "isolated, the backend allocates in its backend host process, where the kit's host services "
                    "are not; run the kit without --isolate for this check";
  }
  SKIP_UNLESS_AVAILABLE();
  SKIP_UNLESS_SAMPLE(s);
  const int64_t before = host_.live_allocations();
  std::vector<void*> allocated;
  EXPECT_CALL(host_, allocate(::testing::_, ::testing::_))
      .Times(::testing::AnyNumber())
      .WillRepeatedly([&](size_t size, size_t alignment) {
        void* p = host_.real_allocate(size, alignment);
        allocated.push_back(p);
        return p;
      });
  EXPECT_CALL(host_, deallocate(::testing::_)).Times(::testing::AnyNumber());
  plugrt_delegate_handle handle = nullptr;
  ASSERT_EQ(init(s->blob, &handle), PLUGRT_STATUS_OK) << host_.last_error();
  if (s->can_execute) {
    Call call = make_call(*s);
    EXPECT_EQ(runtime_->execute(handle, call.finish()), PLUGRT_STATUS_OK) << host_.last_error();
  }
  runtime_->destroy(handle);
  ::testing::Mock::VerifyAndClearExpectations(&host_);
  std::string sizes;
  for (size_t size : host_.live_sizes()) sizes += " " + std::to_string(size);
  EXPECT_EQ(host_.live_allocations(), before)
      << host_.live_allocations() - before << " of the " << allocated.size()
      << " allocations made through host->allocate during init and execute were not released by destroy (sizes:"
      << sizes << " bytes).\nFix: destroy must host->deallocate everything the handle allocated";
  EXPECT_EQ(host_.bad_frees(), 0) << "host->deallocate was called with a pointer host->allocate did not return "
                                     "(or one already freed)";
}

/// Runs `call` on one handle in a child and expects InvalidArgument.
void expect_invalid_argument(const plugrt_backend* backend, const Sample& sample, const std::string& what,
                             const std::function<void(Call&)>& spoil) {
  ChildOutcome outcome = run_guarded([&]() -> std::string {
    PlainHost host;
    plugrt_init_args args = init_args(sample.blob);
    plugrt_delegate_handle handle = nullptr;
    if (backend->init(backend->context, host.table(), &args, &handle) != PLUGRT_STATUS_OK) return "init failed";
    Call call = make_call(sample);
    spoil(call);
    plugrt_status status = backend->execute(handle, call.finish());
    backend->destroy(handle);
    if (status == PLUGRT_STATUS_DELEGATE_CRASHED) return kIsolatedCrash + host.crash() + " (execute with " + what + ")";
    if (status != PLUGRT_STATUS_INVALID_ARGUMENT) {
      return "execute with " + what + " returned " + name_of(status) +
             ", expected InvalidArgument (18). Fix: check the count, dtype and shape of every argument "
             "before touching data (plugrt/sdk/tensor.h does it)";
    }
    return "";
  });
  EXPECT_TRUE(outcome.ok()) << outcome.describe();
}

TEST_P(BackendContract, WrongArgumentsAreInvalidArgument) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  SKIP_UNLESS_EXECUTABLE(s);
  expect_invalid_argument(runtime_, *s, "one input too few", [](Call& c) { c.inputs.pop_back(); });
  expect_invalid_argument(runtime_, *s, "one output too many", [](Call& c) {
    c.outputs.push_back(std::make_unique<OwnedTensor>(kF32, c.outputs[0]->shape));
  });
  expect_invalid_argument(runtime_, *s, "an int32 input where float32 is expected",
                          [](Call& c) { c.inputs[0] = std::make_unique<OwnedTensor>(kI32, c.inputs[0]->shape); });
  expect_invalid_argument(runtime_, *s, "an input of the wrong shape ([3, 3] for [2, 3])", [](Call& c) {
    c.inputs[0] = std::make_unique<OwnedTensor>(kF32, std::vector<int64_t>{3, 3});
  });
  expect_invalid_argument(runtime_, *s, "an output of the wrong shape ([2, 4] for [2, 3])", [](Call& c) {
    c.outputs[0] = std::make_unique<OwnedTensor>(kF32, std::vector<int64_t>{2, 4});
  });
}

TEST_P(BackendContract, WritesNothingToStdoutOrStderr) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  std::vector<uint8_t> random_blob(64, 0xA5);
  bool made_sample = false;
  std::string output;
  std::vector<std::string> problems;
  {
    OutputCapture capture;
    char reason[64];
    plugrt_text_buffer buffer{reason, sizeof(reason), 0};
    (void)runtime_->is_available(runtime_->context, host_.plugrt_table(), &buffer);
    plugrt_delegate_handle bad = nullptr;
    if (init(random_blob, &bad) == PLUGRT_STATUS_OK) runtime_->destroy(bad);
    // Made here, inside the capture: partition and preprocess must stay silent too.
    const Sample* s = sample_ ? (sample_->sample ? &*sample_->sample : nullptr) : nullptr;
    if (!sample_) {
      sample_ = make_sample(backend_, host_);
      made_sample = true;
      s = sample_->sample ? &*sample_->sample : nullptr;
    }
    if (s != nullptr) {
      plugrt_delegate_handle handle = nullptr;
      if (init(s->blob, &handle) == PLUGRT_STATUS_OK) {
        if (s->can_execute) {
          Call good = make_call(*s);
          (void)runtime_->execute(handle, good.finish());
          Call wrong = make_call(*s);
          wrong.inputs.pop_back();
          (void)runtime_->execute(handle, wrong.finish());
        }
        runtime_->destroy(handle);
      }
    }
    output = capture.finish();
  }
  if (made_sample) print_sample_use(GetParam(), *sample_);
  EXPECT_EQ(output, "") << "the plugin wrote to stdout or stderr (shown above). A plugin must log through "
                           "host->log and report failures through host->report_error, never print";
}

TEST_P(BackendContract, SeparateHandlesExecuteConcurrently) {
  RUNS_IN_ITS_CHILD();
  SKIP_UNLESS_AVAILABLE();
  SKIP_UNLESS_EXECUTABLE(s);
  constexpr int kThreads = 4;
  const bool shared = (runtime_->capabilities & PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE) != 0;
  std::vector<plugrt_delegate_handle> handles(kThreads, nullptr);
  for (int t = 0; t < kThreads; ++t) {
    if (shared && t > 0) {
      handles[t] = handles[0];
      continue;
    }
    ASSERT_EQ(init(s->blob, &handles[t]), PLUGRT_STATUS_OK) << host_.last_error();
  }
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200 && failures[t].empty(); ++i) {
        Call call = make_call(*s);
        plugrt_status status = runtime_->execute(handles[t], call.finish());
        if (status != PLUGRT_STATUS_OK)
          failures[t] = "execute failed with " + name_of(status);
        else
          failures[t] = check_result(*s, call);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], "") << "thread " << t
                               << (shared ? " (one shared handle: the backend declares "
                                            "PLUGRT_BACKEND_CAP_CONCURRENT_EXECUTE)"
                                          : " (its own handle)")
                               << ". Fix: keep per-call state in the handle, not in globals";
  }
  for (int t = 0; t < kThreads; ++t) {
    if (!shared || t == 0) runtime_->destroy(handles[t]);
  }
}

/// The most threads the process ran at once while a handle made with `budget` executed,
/// the calling thread included and the threads it had before left out: 200 calls or 2
/// seconds, and at least 200 ms, long enough to see workers that live for one call.
/// -1 when the kit cannot count; a failed call is reported.
int threads_while_executing(const plugrt_backend* backend, MockHostServices& host, const Sample& s, size_t budget) {
  const int before = count_threads();
  plugrt_init_args args = init_args(s.blob);
  args.num_threads = budget;
  plugrt_delegate_handle handle = nullptr;
  const plugrt_status initialised = backend->init(backend->context, host.plugrt_table(), &args, &handle);
  EXPECT_EQ(initialised, PLUGRT_STATUS_OK) << "init with num_threads = " << budget << ": " << host.last_error();
  if (initialised != PLUGRT_STATUS_OK || before <= 0) return -1;
  Call call = make_call(s);
  plugrt_status status = PLUGRT_STATUS_OK;
  ThreadWatch watch;
  const auto start = std::chrono::steady_clock::now();
  for (int calls = 0; status == PLUGRT_STATUS_OK; ++calls) {
    const auto elapsed = std::chrono::steady_clock::now() - start;
    if ((calls >= 200 || elapsed >= std::chrono::seconds(2)) && elapsed >= std::chrono::milliseconds(200)) break;
    status = backend->execute(handle, call.finish());
  }
  const int peak = watch.stop();
  backend->destroy(handle);
  EXPECT_EQ(status, PLUGRT_STATUS_OK) << "execute with num_threads = " << budget << " failed with " << name_of(status)
                                      << ": " << host.last_error();
  return peak <= 0 ? -1 : peak - before + 1;
}

// The thread budget: a handle whose init was given num_threads = N runs no more threads
// than that while it executes, the calling thread included, for N = 1 and then 2. The kit
// counts the threads of the check's process (/proc/self/task) all the while.
TEST_P(BackendContract, ExecuteStaysWithinItsThreadBudget) {
  RUNS_IN_ITS_CHILD();
  if (config().isolated) {
    GTEST_SKIP() << "under --isolate the backend runs in another process: run the kit without --isolate "
                    "to check its thread budget";
  }
  SKIP_UNLESS_AVAILABLE();
  SKIP_UNLESS_EXECUTABLE(s);
  for (const size_t budget : {size_t{1}, size_t{2}}) {  // 1 first: a pool made for 2 may outlive its handle
    const int used = threads_while_executing(runtime_, host_, *s, budget);
    ASSERT_GT(used, 0) << "the kit cannot read /proc/self/task to count threads";
    EXPECT_LE(used, static_cast<int>(budget))
        << "given a thread budget of " << budget << " (plugrt_init_args.num_threads), the backend ran " << used
        << " threads at once while executing " << s->description
        << ".\nFix: use at most num_threads threads, the calling thread included (InitContext::num_threads)";
  }
}

std::vector<std::string> backend_names() {
  Result<plugins::PluginFileInfo> info = plugins::inspect_plugin_file(config().plugin_path);
  if (!info.is_ok()) return {};
  return info->metadata.backends;
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BackendContract);
INSTANTIATE_TEST_SUITE_P(Plugin, BackendContract, ::testing::ValuesIn(backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

}  // namespace

int run_contract_tests(const ContractConfig& contract, int argc, char** argv) {
  config() = contract;
  const std::string options_error =
      set_kit_backend_options(contract.compile_specs, contract.runtime_options, backend_names());
  if (!options_error.empty()) {
    std::cerr << "plugrt-contract-test: " << options_error << "\n";
    return 2;
  }
  if (contract.host_abi_minor >= 0) {
    if (contract.isolated) {
      std::cerr << "plugrt-contract-test: --host-abi plays the host in this process; --isolate runs the backends "
                   "in the runtime's backend host, which speaks this ABI: give one of them\n";
      return 2;
    }
    std::cout << "[ HOST ABI ] " << host_abi().describe() << "\n";
  }
  ::testing::InitGoogleMock(&argc, argv);
  if (argc > 1) {  // GoogleTest left what it does not know, e.g. a misspelt --gtest_ flag
    std::cerr << "plugrt-contract-test: unknown argument '" << argv[1] << "' (see --help)\n";
    return 2;
  }
  return RUN_ALL_TESTS();
}

int run_contract_tests(int argc, char** argv) {
  ContractConfig contract;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const std::string& flag, std::string* out) {
      if (arg == flag && i + 1 < argc) {
        *out = argv[++i];
        return true;
      }
      if (arg.rfind(flag + "=", 0) == 0) {
        *out = arg.substr(flag.size() + 1);
        return true;
      }
      return false;
    };
    if (value("--plugin", &contract.plugin_path) || value("--blob", &contract.blob_path)) continue;
    std::string option;
    if (value("--compile-spec", &option)) {
      contract.compile_specs.push_back(option);
      continue;
    }
    if (value("--runtime-option", &option)) {
      contract.runtime_options.push_back(option);
      continue;
    }
    if (arg == "--isolate") {
      contract.isolated = true;
      continue;
    }
    if (arg == "--require-available") {
      contract.require_available = true;
      continue;
    }
    std::string timeout;
    if (value("--check-timeout", &timeout)) {
      char* end = nullptr;
      const long seconds = std::strtol(timeout.c_str(), &end, 10);
      if (end == timeout.c_str() || *end != '\0' || seconds < 1 || seconds > 86400) {
        std::cerr << "plugrt-contract-test: --check-timeout '" << timeout << "' is not a number of seconds\n";
        return 2;
      }
      contract.check_timeout_seconds = static_cast<int>(seconds);
      continue;
    }
    std::string abi;
    if (value("--host-abi", &abi)) {
      HostAbi played;
      if (!parse_host_abi(abi, &played)) {
        std::cerr << "plugrt-contract-test: --host-abi '" << abi << "' is not 1.N with N from 0 to " << PLUGRT_ABI_MINOR
                  << "\n";
        return 2;
      }
      contract.host_abi_minor = static_cast<int>(played.minor);
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      std::cout << "usage: plugrt-contract-test --plugin PATH [--blob FILE] [--isolate] [--require-available]\n"
                   "                            [--check-timeout SECONDS] [--host-abi 1.N] [--compile-spec N.K=V]\n"
                   "                            [--runtime-option N.K=V] [--gtest_filter=...]\n"
                   "Checks that a plugrt plugin keeps the backend contract (see sdk/README.md), its results\n"
                   "included: each op kind its partition takes, against the built-in portable backend, with\n"
                   "outputs filled with NaN before every execute. Each per-backend check runs in a child\n"
                   "process: a crash fails that check, and one running past --check-timeout (default 120\n"
                   "seconds) fails as a hang. With --isolate, its backends run in a plugrt-backend-host\n"
                   "process, as the runtime's --isolate runs them; with --require-available, a backend that\n"
                   "says it is unavailable fails instead of skipping. --host-abi 1.N plays a host of that older\n"
                   "ABI minor: its struct sizes (the bytes past them hold a pattern) and what it offers.\n"
                   "--compile-spec NAME.KEY=VALUE and --runtime-option NAME.KEY=VALUE (repeatable) give backend\n"
                   "NAME that compile spec (partition, preprocess, init) or runtime option (init), as plugrt\n"
                   "compile --backend-option and plugrt run --backend-option do.\n";
      return 0;
    }
    if (arg.rfind("--gtest_", 0) != 0) {  // a typo in a vendor's CI must not pass
      std::cerr << "plugrt-contract-test: unknown argument '" << arg << "' (see --help)\n";
      return 2;
    }
    rest.push_back(argv[i]);
  }
  if (contract.plugin_path.empty()) {
    std::cerr << "plugrt-contract-test: --plugin PATH is required\n";
    return 2;
  }
  int rest_argc = static_cast<int>(rest.size());
  rest.push_back(nullptr);
  return run_contract_tests(contract, rest_argc, rest.data());
}

}  // namespace plugrt::sdk::testing
