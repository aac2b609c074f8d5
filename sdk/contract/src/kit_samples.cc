// SPDX-License-Identifier: Apache-2.0
#include "kit_samples.h"

#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>

#include "kit_backend_options.h"
#include "kit_plugin.h"
#include "plugrt/graph_builder.h"

namespace plugrt::sdk::testing::kit {

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

void poison(OwnedTensor& output) {
  for (int64_t k = 0; k < output.count(); ++k) output.f32()[k] = std::numeric_limits<float>::quiet_NaN();
}

std::string poisoned_hint(float got) {
  return std::isnan(got) ? " (NaN: the kit fills every output with NaN before execute, so this element was never "
                           "written. Fix: execute must write every element of every output)"
                         : "";
}

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

}  // namespace plugrt::sdk::testing::kit
