// SPDX-License-Identifier: Apache-2.0
// `plugrt inspect PROGRAM.prt`: a program's methods, inputs, outputs, delegates and
// sizes, read and verified without running anything.
#include <cstring>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "plugrt/common/dim_expr.h"
#include "plugrt/program.h"
#include "plugrt/program_format.h"
#include "text.h"

namespace plugrt::tools {

namespace {

using json = nlohmann::json;

/// "[n, 4]" for a shape whose first dimension is the symbol n, else the static shape.
std::string dims_text(const TensorSpec& spec, const std::vector<std::string>& symbols);

json tensor_json(const TensorSpec& spec, const std::vector<std::string>& symbols) {
  json entry = {{"name", spec.name}, {"dtype", std::string(to_string(spec.dtype))}, {"shape", spec.shape}};
  if (spec.varies()) entry["dims"] = dims_text(spec, symbols);  // `shape` then holds the bounds
  return entry;
}

std::vector<std::string> symbol_names(const MethodSummary& summary) {
  std::vector<std::string> names;
  for (const SymbolSpec& symbol : summary.symbols) names.push_back(symbol.name);
  return names;
}

std::string dims_text(const TensorSpec& spec, const std::vector<std::string>& symbols) {
  if (!spec.varies()) return shape_text(spec.shape);
  std::string text = "[";
  for (size_t axis = 0; axis < spec.shape.size(); ++axis) {
    if (axis > 0) text += ", ";
    const std::vector<int64_t>& words = spec.dims[axis];
    text += words.empty() ? std::to_string(spec.shape[axis]) : common::DimExpr::from_words(words).to_string(symbols);
  }
  return text + "]";
}

void print_tensors(const char* label, const std::vector<TensorSpec>& tensors, const std::vector<std::string>& symbols) {
  for (const TensorSpec& spec : tensors) {
    std::cout << "    " << label << " " << spec.name << ": " << to_string(spec.dtype) << " "
              << dims_text(spec, symbols);
    if (spec.varies()) std::cout << " (up to " << shape_text(spec.shape) << ")";
    std::cout << "\n";
  }
}

}  // namespace

bool is_program_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[sizeof(kProgramMagic)] = {};
  return in.read(magic, sizeof(magic)) && std::memcmp(magic, kProgramMagic, sizeof(magic)) == 0;
}

int run_inspect_program(const std::string& path, bool as_json) {
  Result<Program> program = Program::load(path);
  if (!program.is_ok()) {
    std::cerr << "plugrt inspect: " << program.status().message() << "\n";
    return 1;
  }
  json out = {{"file", path},
              {"kind", "program"},
              {"format", std::to_string(program->format_major()) + "." + std::to_string(program->format_minor())},
              {"producer", program->producer()},
              {"file_size", program->file_size()},
              {"segments", program->num_segments()},
              {"methods", json::array()}};
  for (const std::string& name : program->method_names()) {
    MethodSummary summary = program->describe(name).value();
    json method = {{"name", summary.name},
                   {"inputs", json::array()},
                   {"outputs", json::array()},
                   {"delegates", json::array()},
                   {"instructions", summary.num_instructions},
                   {"values", summary.num_values},
                   {"arena_bytes", summary.arena_size},
                   {"constant_bytes", summary.constant_bytes}};
    for (const TensorSpec& spec : summary.inputs) method["inputs"].push_back(tensor_json(spec, symbol_names(summary)));
    for (const TensorSpec& spec : summary.outputs) {
      method["outputs"].push_back(tensor_json(spec, symbol_names(summary)));
    }
    for (const SymbolSpec& symbol : summary.symbols) {
      method["symbols"].push_back({{"name", symbol.name}, {"min", symbol.min}, {"max", symbol.max}});
    }
    for (const DelegateSummary& d : summary.delegates) {
      method["delegates"].push_back({{"name", d.name},
                                     {"backend", d.backend},
                                     {"blob_bytes", d.blob_size},
                                     {"fallback_bytes", d.fallback_size},
                                     {"blob_names_constants", d.blob_names_constants},
                                     {"fallback_within_blob", d.fallback_within_blob},
                                     {"compile_specs", d.compile_spec_keys}});
    }
    out["methods"].push_back(method);
  }
  if (as_json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << path << "\n"
            << "  program format    " << out["format"].get<std::string>() << ", written by " << program->producer()
            << "\n"
            << "  size              " << program->file_size() << " bytes, " << program->num_segments() << " segments\n";
  for (const std::string& name : program->method_names()) {
    MethodSummary summary = program->describe(name).value();
    std::cout << "  method " << summary.name << ": " << summary.num_instructions << " instructions, arena "
              << summary.arena_size << " bytes, constants " << summary.constant_bytes << " bytes\n";
    for (const SymbolSpec& symbol : summary.symbols) {
      std::cout << "    symbol " << symbol.name << ": " << symbol.min << ".." << symbol.max << "\n";
    }
    print_tensors("input ", summary.inputs, symbol_names(summary));
    print_tensors("output", summary.outputs, symbol_names(summary));
    for (const DelegateSummary& d : summary.delegates) {
      std::cout << "    delegate " << d.name << " -> " << d.backend << ": blob " << d.blob_size << " bytes, "
                << (d.fallback_size > 0 ? "portable fallback " + std::to_string(d.fallback_size) + " bytes"
                                        : std::string("no fallback"))
                << (d.blob_names_constants ? " (holds the weights the blob names)" : "")
                << (d.fallback_within_blob ? " (stored within the blob)" : "") << "\n";
    }
  }
  return 0;
}

}  // namespace plugrt::tools
