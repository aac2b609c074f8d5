// SPDX-License-Identifier: Apache-2.0
#include "differential.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "compiler.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/method.h"
#include "plugrt/program.h"
#include "random_graph.h"

namespace plugrt::differential {

namespace {

using Outputs = std::vector<std::vector<float>>;

/// An output's elements as floats (uint8 and int8 ones exactly).
std::vector<float> read_output(const DLTensor& tensor, const TensorSpec& spec) {
  const size_t count = spec.num_bytes() / (spec.dtype == DType::kFloat32 ? sizeof(float) : 1);
  if (spec.dtype == DType::kUInt8) {
    const auto* data = static_cast<const uint8_t*>(tensor.data);
    return std::vector<float>(data, data + count);
  }
  if (spec.dtype == DType::kInt8) {
    const auto* data = static_cast<const int8_t*>(tensor.data);
    return std::vector<float>(data, data + count);
  }
  const auto* data = static_cast<const float*>(tensor.data);
  return std::vector<float>(data, data + count);
}

/// Fills an output before a call, so that a call that writes nothing cannot pass on the
/// last one's values: NaN for float, 0x5a for 8-bit values (portable would have to
/// write 90 or 0x5a everywhere for an unwritten output to pass).
void poison(const DLTensor& tensor, const TensorSpec& spec) {
  if (spec.dtype != DType::kFloat32) {
    std::memset(tensor.data, 0x5a, spec.num_bytes());
    return;
  }
  float* data = static_cast<float*>(tensor.data);
  std::fill(data, data + spec.num_bytes() / sizeof(float), std::nanf(""));
}

/// Compiles for `backend` alone, every node it takes on it (the rest on portable).
Result<compiler::CompiledModel> compile_for(Registry& registry, Span<const uint8_t> graph, const std::string& backend) {
  compiler::CompileOptions options;
  options.backends = {backend};
  options.placement = compiler::PlacementRule::kFirstTaker;
  return compiler::compile_graph(graph, registry, options);
}

/// Loads a program on a budget of `threads` and runs it on inputs uniform in [-2, 2)
/// drawn from `seed` until a call has run on the whole budget and, for a budget above
/// one, a call on one thread (the method's thread chooser measures both counts on its
/// first calls, in either order), so that a backend's handles are checked on every count
/// a call may get. The outputs: the budget's call, then one thread's.
Result<std::vector<Outputs>> run(Registry& registry, const std::vector<uint8_t>& bytes, uint32_t seed, size_t threads,
                                 Span<const plugrt_option> runtime_options = {}) {
  Result<Program> program = Program::from_bytes(bytes, "differential.prt");
  if (!program.is_ok()) return program.status();
  MethodOptions options;
  options.num_threads = threads;
  options.runtime_options = runtime_options;
  Result<Method> method = Method::load(*program, "forward", registry, options);
  if (!method.is_ok()) return method.status();
  for (const DelegatePlacement& delegate : method->report().delegates) {
    if (delegate.fell_back) {
      return Status(Error::kInternal, "delegate " + delegate.delegate + " fell back: " + delegate.reason);
    }
  }
  std::mt19937 generator(seed);
  std::vector<std::vector<float>> inputs(method->num_inputs());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& spec = method->input_spec(i);
    inputs[i].resize(spec.num_bytes() / sizeof(float));
    for (float& value : inputs[i]) value = static_cast<float>(generator() >> 8) * 0x1p-22f - 2.0f;
    std::vector<int64_t> shape = spec.shape;
    DLTensor tensor{
        inputs[i].data(), {kDLCPU, 0}, static_cast<int32_t>(shape.size()), {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
    PLUGRT_RETURN_IF_ERROR(method->set_input(i, tensor));
  }
  std::vector<Outputs> runs(threads == 1 ? 1 : 2);  // [0]: the budget's, [1]: one thread's
  std::vector<bool> done(runs.size(), false);
  for (size_t call = 0; call < 16; ++call) {
    // Outputs poisoned first: a call that writes nothing must not pass on the last one's.
    for (size_t o = 0; o < method->num_outputs(); ++o) poison(method->output(o), method->output_spec(o));
    PLUGRT_RETURN_IF_ERROR(method->execute());
    const size_t which = method->last_call_threads() == threads ? 0 : 1;
    if (which >= runs.size() || done[which]) continue;
    for (size_t o = 0; o < method->num_outputs(); ++o) {
      runs[which].push_back(read_output(method->output(o), method->output_spec(o)));
    }
    done[which] = true;
    if (std::find(done.begin(), done.end(), false) == done.end()) return runs;
  }
  return Status(Error::kInternal, "the method's first 16 calls did not run on both the budget and one thread");
}

/// The largest |a - b| of two 8-bit outputs (as floats), infinity when the sizes differ.
double quanta_difference(const std::vector<float>& actual, const std::vector<float>& expected) {
  if (actual.size() != expected.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) worst = std::max(worst, std::fabs(double(actual[i]) - expected[i]));
  return worst;
}

/// Keeps (difference, tolerance) in `verdict` when it is further from its bound (in
/// difference / tolerance) than what the verdict holds.
void keep_worst(Verdict* verdict, double difference, double tolerance, bool in_quanta) {
  auto ratio = [](double d, double t) { return t > 0 ? d / t : d > 0 ? std::numeric_limits<double>::infinity() : 0.0; };
  if (ratio(difference, tolerance) <= ratio(verdict->difference, verdict->tolerance)) return;
  verdict->difference = difference, verdict->tolerance = tolerance, verdict->in_quanta = in_quanta;
}

/// Compares every output of `actual` with `expected`, each by its bound, into `verdict`.
void compare(const Outputs& actual, const Outputs& expected, const std::vector<OutputBound>& bounds,
             double float_tolerance, Verdict* verdict) {
  for (size_t o = 0; o < actual.size(); ++o) {
    const OutputBound bound = o < bounds.size() ? bounds[o] : OutputBound{};
    if (bound.quanta >= 0) {
      keep_worst(verdict, quanta_difference(actual[o], expected[o]), double(bound.quanta), true);
    } else {
      keep_worst(verdict, relative_difference(actual[o], expected[o], bound.absolute), float_tolerance, false);
    }
  }
}

size_t nodes_on(const compiler::CompileSummary& summary, const std::string& backend) {
  size_t nodes = 0;
  for (const compiler::PartitionSummary& partition : summary.partitions) {
    if (partition.backend == backend) nodes += partition.num_nodes;
  }
  return nodes;
}

}  // namespace

std::string Verdict::to_string(const std::string& backend) const {
  if (!error.empty()) return error;
  std::ostringstream text;
  text << "max difference " << difference << (in_quanta ? " quanta" : "") << " (tolerance " << tolerance << "), "
       << nodes_on_backend << " nodes on " << backend;
  return text.str();
}

double tolerance_for(int64_t reduction_length) {
  return 5e-5 * (4.0 + std::sqrt(static_cast<double>(std::max<int64_t>(reduction_length, 1))));
}

double relative_difference(const std::vector<float>& actual, const std::vector<float>& expected, double absolute) {
  if (actual.size() != expected.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], b = expected[i];
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) return std::numeric_limits<double>::infinity();
      continue;
    }
    if (a == b) continue;  // equal infinities too
    worst = std::max(worst, std::max(0.0, std::fabs(a - b) - absolute) / std::max(1.0, std::fabs(b)));
  }
  return worst;
}

std::vector<OutputBound> output_bounds(const std::vector<uint8_t>& onnx) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(onnx.data(), static_cast<int>(onnx.size()))) return {};
  for (const onnx::StringStringEntryProto& entry : model.metadata_props()) {
    if (entry.key() != kOutputBoundsKey) continue;
    std::vector<OutputBound> bounds;
    std::istringstream words(entry.value());
    for (std::string word; words >> word;) {
      OutputBound& bound = bounds.emplace_back();
      char* end = nullptr;
      const double value = std::strtod(word.c_str() + 1, &end);
      if (word.size() < 2 || *end != '\0' || !(value >= 0) || (word[0] != 'q' && word[0] != 'a')) return {};
      if (word[0] == 'q') bound.quanta = static_cast<int64_t>(value);
      if (word[0] == 'a') bound.absolute = value;
    }
    return bounds;
  }
  return {};
}

Checker::Checker(const std::vector<std::string>& plugin_files) {
  (void)register_builtin_backends(registry_);
  loader_ = std::make_unique<plugins::PluginLoader>(registry_, plugins::SearchPathOptions::explicit_files_only());
  for (const std::string& file : plugin_files) (void)loader_->load(file);
}

Checker::~Checker() = default;

bool Checker::available(const std::string& backend, std::string* why) {
  Result<RegisteredBackend> found = registry_.find_backend(backend);
  if (!found.is_ok()) {
    *why = found.status().to_string();
    return false;
  }
  const Availability availability = found->is_available();
  *why = availability.reason;
  return availability.available;
}

Verdict Checker::check(const std::vector<uint8_t>& onnx, int64_t reduction_length, const std::string& backend,
                       uint32_t input_seed) {
  Verdict verdict;
  verdict.tolerance = tolerance_for(reduction_length);
  Result<compiler::ImportedModel> imported = compiler::import_onnx_bytes(onnx, "random graph");
  if (!imported.is_ok()) {
    verdict.error = "import: " + imported.status().to_string();
    return verdict;
  }
  Result<compiler::CompiledModel> fast = compile_for(registry_, imported->graph, backend);
  Result<compiler::CompiledModel> reference = compile_for(registry_, imported->graph, "portable");
  if (!fast.is_ok() || !reference.is_ok()) {
    verdict.error = "compile: " + (fast.is_ok() ? reference : fast).status().to_string();
    return verdict;
  }
  verdict.nodes_on_backend = nodes_on(fast->summary, backend);
  // The backend on two threads, and on one with the handles it made for two; oneDNN on
  // one thread also with its plan for two, capped (it makes a plan for one otherwise).
  Result<std::vector<Outputs>> actual = run(registry_, fast->program, input_seed, 2);
  Result<std::vector<Outputs>> expected = run(registry_, reference->program, input_seed, 1);
  if (actual.is_ok() && backend == "onednn") {
    static constexpr char kKey[] = "one_thread_plan_max_bytes";  // oneDNN's
    const plugrt_option no_second_plan{{kKey, sizeof(kKey) - 1}, "0", 1};
    Result<std::vector<Outputs>> capped =
        run(registry_, fast->program, input_seed, 2, Span<const plugrt_option>(&no_second_plan, 1));
    if (!capped.is_ok()) {
      verdict.error = "run with oneDNN's plan capped: " + capped.status().to_string();
      return verdict;
    }
    actual->push_back(capped->back());
  }
  if (!actual.is_ok() || !expected.is_ok()) {
    verdict.error = "run: " + (actual.is_ok() ? expected : actual).status().to_string();
    return verdict;
  }
  const Outputs& reference_outputs = expected->front();
  const std::vector<OutputBound> bounds = output_bounds(onnx);
  for (const Outputs& outputs : *actual) {
    if (outputs.size() != reference_outputs.size()) {
      verdict.error = "the programs have different numbers of outputs";
      return verdict;
    }
    compare(outputs, reference_outputs, bounds, tolerance_for(reduction_length), &verdict);
  }
  return verdict;
}

Campaign run_campaign(Checker& checker, const std::string& backend, uint64_t first_seed, size_t count, double seconds,
                      const std::string& failures_dir) {
  const auto start = std::chrono::steady_clock::now();
  Campaign campaign;
  for (uint64_t seed = first_seed; campaign.graphs < count; ++seed) {
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
    if (seconds > 0 && spent.count() > seconds) break;
    const RandomGraph graph = generate_graph(seed);
    // The graph is saved before it runs and removed when it agrees, so a graph that
    // crashes the process is left behind to replay.
    std::string saved_as;
    if (!failures_dir.empty()) {
      const std::string path = failures_dir + "/" + backend + "-" + std::to_string(seed) + ".k" +
                               std::to_string(graph.reduction_length) + ".onnx";
      std::ofstream file(path, std::ios::binary);
      file.write(reinterpret_cast<const char*>(graph.onnx.data()), static_cast<std::streamsize>(graph.onnx.size()));
      if (file.flush()) saved_as = path;
    }
    const Verdict verdict =
        checker.check(graph.onnx, graph.reduction_length, backend, static_cast<uint32_t>(seed * 2654435761u));
    ++campaign.graphs;
    if (verdict.nodes_on_backend > 0) ++campaign.graphs_on_backend;
    if (verdict.agrees()) {
      if (!saved_as.empty()) std::remove(saved_as.c_str());
      continue;
    }
    campaign.findings.push_back(Finding{seed, graph.description, verdict, saved_as});
  }
  return campaign;
}

int64_t reduction_length_of(const std::string& file_name) {
  const size_t at = file_name.rfind(".k");
  if (at == std::string::npos) return 1;
  try {
    return std::max<int64_t>(1, std::stoll(file_name.substr(at + 2)));
  } catch (const std::exception&) {
    return 1;
  }
}

}  // namespace plugrt::differential
