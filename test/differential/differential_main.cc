// SPDX-License-Identifier: Apache-2.0
// plugrt_differential: the differential test's long run. Checks random graphs on each
// named backend against portable, for a number of graphs or a time budget, writes each
// graph that disagrees as an ONNX file, and exits 1 when any did.
//
//   plugrt_differential --backend NAME [--backend NAME...] [--graphs N] [--seconds S]
//                       [--seed FIRST] [--failures DIR] [--plugin FILE...]
//   plugrt_differential --backend NAME... --replay FILE.onnx...
//   plugrt_differential --backend NAME... --list [--graphs N] [--seed FIRST]
//
// --replay checks the given ONNX files (a finding written before, or any float32 model
// of static shapes) instead of random graphs; a file name's ".k<N>" gives the longest
// reduction, which scales the tolerance. --list prints each random graph (what it
// computes, its outputs' bounds) and its verdict.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "differential.h"
#include "random_graph.h"

namespace {

struct Options {
  std::vector<std::string> backends;
  std::vector<std::string> plugins;
  size_t graphs = 1000;
  double seconds = 0;
  uint64_t seed = 1;
  std::string failures = ".";
  std::vector<std::string> replay;
  bool list = false;
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "plugrt_differential: " << problem << "\n"
            << "usage: plugrt_differential --backend NAME... [--graphs N] [--seconds S] [--seed FIRST]\n"
            << "                           [--failures DIR] [--plugin FILE...]\n"
            << "       plugrt_differential --backend NAME... --replay FILE.onnx...\n"
            << "       plugrt_differential --backend NAME... --list [--graphs N] [--seed FIRST]\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--backend")
      options.backends.push_back(value());
    else if (flag == "--plugin")
      options.plugins.push_back(value());
    else if (flag == "--graphs")
      options.graphs = std::stoull(value());
    else if (flag == "--seconds")
      options.seconds = std::stod(value());
    else if (flag == "--seed")
      options.seed = std::stoull(value());
    else if (flag == "--failures")
      options.failures = value();
    else if (flag == "--replay")
      options.replay.push_back(value());
    else if (flag == "--list")
      options.list = true;
    else
      usage("unknown flag " + flag);
  }
  if (options.backends.empty()) usage("name at least one --backend");
  return options;
}

/// Checks each file on `backend`; whether all agreed.
bool replay(plugrt::differential::Checker& checker, const std::string& backend, const std::vector<std::string>& files) {
  bool all_agree = true;
  for (const std::string& path : files) {
    std::ifstream file(path, std::ios::binary);
    const std::vector<uint8_t> onnx((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const plugrt::differential::Verdict verdict =
        checker.check(onnx, plugrt::differential::reduction_length_of(path), backend, 7);
    std::cout << backend << " " << path << ": " << (verdict.agrees() ? "agrees, " : "DISAGREES, ")
              << verdict.to_string(backend) << "\n";
    all_agree &= verdict.agrees();
  }
  return all_agree;
}

/// Prints each graph of `options` and its verdict on `backend`; whether all agreed.
bool list(plugrt::differential::Checker& checker, const std::string& backend, const Options& options) {
  bool all_agree = true;
  for (uint64_t seed = options.seed; seed < options.seed + options.graphs; ++seed) {
    const plugrt::differential::RandomGraph graph = plugrt::differential::generate_graph(seed);
    std::string bounds;
    for (const plugrt::differential::OutputBound& bound : plugrt::differential::output_bounds(graph.onnx)) {
      bounds += bound.quanta >= 0 ? " q" + std::to_string(bound.quanta) : " a" + std::to_string(bound.absolute);
    }
    const plugrt::differential::Verdict verdict =
        checker.check(graph.onnx, graph.reduction_length, backend, static_cast<uint32_t>(seed * 2654435761u));
    std::cout << backend << " seed " << seed << ": " << graph.description << (bounds.empty() ? "" : "\n  bounds")
              << bounds << "\n  " << (verdict.agrees() ? "agrees, " : "DISAGREES, ") << verdict.to_string(backend)
              << "\n";
    all_agree &= verdict.agrees();
  }
  return all_agree;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    options = parse(argc, argv);
  } catch (const std::exception&) {
    usage("a number is malformed");
  }
  if (options.plugins.empty()) options.plugins = {PLUGRT_ONEDNN_PLUGIN_FILE, PLUGRT_XNNPACK_PLUGIN_FILE};
  plugrt::differential::Checker checker(options.plugins);
  bool disagreed = false;
  for (const std::string& backend : options.backends) {
    std::string why;
    if (!checker.available(backend, &why)) {
      std::cerr << backend << ": unavailable (" << why << ")\n";
      return 1;
    }
    if (!options.replay.empty()) {
      disagreed |= !replay(checker, backend, options.replay);
      continue;
    }
    if (options.list) {
      disagreed |= !list(checker, backend, options);
      continue;
    }
    const plugrt::differential::Campaign campaign = plugrt::differential::run_campaign(
        checker, backend, options.seed, options.graphs, options.seconds, options.failures);
    for (const plugrt::differential::Finding& finding : campaign.findings) {
      std::cout << backend << " seed " << finding.seed << ": " << finding.description << "\n  "
                << finding.verdict.to_string(backend) << "\n  written to " << finding.saved_as << "\n";
    }
    std::cout << backend << ": " << campaign.graphs << " graphs (seeds " << options.seed << " to "
              << options.seed + campaign.graphs - 1 << "), " << campaign.graphs_on_backend
              << " with nodes on the backend, " << campaign.findings.size() << " disagreements\n";
    disagreed |= !campaign.findings.empty();
  }
  return disagreed ? 1 : 0;
}
