// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the blob cache's files, read as the runtime reads them. The first
// byte chooses how the rest reaches the cache:
//   bit 0 clear: the bytes are an entry file, as a damaged or hostile one on disk (with
//                the cache's mode, 0600, so that its header and keyed hash are read);
//   bit 0 set:   the bytes are a payload stored through BlobCache::store, so the entry's
//                checks pass and the placed-method reader gets to parse it;
//   bit 1:       the entry is read with find_checking_later (the hash on another thread).
// A payload that is found is parsed as a placed method's entry and its program read
// through. Must never crash or read out of bounds; a bad entry is only ever a miss, and
// a bad payload only kInvalidProgram (or an allocation failure).
#include <stdlib.h>  // mkdtemp
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "placed_entry.h"
#include "plugrt/builtin_backends.h"
#include "plugrt/graph_builder.h"
#include "plugrt/placement/blob_cache.h"
#include "plugrt/program_builder.h"

namespace {

/// The program an entry belongs to: one portable delegate copying its input.
plugrt::Program owner_program() {
  plugrt::GraphBuilder graph;
  const plugrt::ValueId x = graph.add_value("x", plugrt::DType::kFloat32, {4});
  const plugrt::ValueId y = graph.add_value("y", plugrt::DType::kFloat32, {4});
  graph.add_node("Identity", "copy", {x}, {y});
  graph.add_input(x);
  graph.add_output(y);
  plugrt::ProgramBuilder builder;
  plugrt::MethodBuilder& method = builder.add_method("forward");
  const uint32_t in = method.add_value("x", plugrt::DType::kFloat32, {4});
  const uint32_t out = method.add_value("y", plugrt::DType::kFloat32, {4});
  method.add_input(in);
  method.add_output(out);
  method.add_instruction(method.add_delegate("portable:0", plugrt::kPortableBackendName, graph.finish()), {in}, {out});
  plugrt::Result<std::vector<uint8_t>> bytes = builder.finish();
  if (!bytes.is_ok()) std::abort();
  plugrt::Result<plugrt::Program> program = plugrt::Program::from_bytes(*bytes, "owner.prt");
  if (!program.is_ok()) std::abort();
  return *program;
}

std::string& scratch_path() {
  static std::string path;
  return path;
}

/// A directory of this process's own, removed at exit.
std::string scratch_directory() {
  char pattern[] = "/tmp/plugrt_blob_cache_fuzzer_XXXXXX";
  if (::mkdtemp(pattern) == nullptr) std::abort();
  scratch_path() = pattern;
  std::atexit([] {
    std::error_code ignored;
    std::filesystem::remove_all(scratch_path(), ignored);
  });
  return pattern;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string directory = scratch_directory();
  static const plugrt::Program owner = owner_program();
  static const plugrt::ContentHash key = plugrt::content_hash(plugrt::Span<const uint8_t>(data, 0));
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const plugrt::Span<const uint8_t> rest(data + 1, size - 1);

  plugrt::placement::BlobCache cache(directory, 1ull << 30);
  if (mode & 1) {
    if (!cache.store(key, rest).is_ok()) std::abort();  // the directory is this fuzzer's own
  } else {
    std::FILE* file = std::fopen(cache.entry_path(key).c_str(), "wb");
    if (file == nullptr) {  // the blobs/ folder is made by the first store
      if (!cache.store(key, rest).is_ok()) std::abort();
      file = std::fopen(cache.entry_path(key).c_str(), "wb");
      if (file == nullptr) std::abort();
    }
    if (std::fwrite(rest.data(), 1, rest.size(), file) != rest.size()) std::abort();
    std::fclose(file);
    ::chmod(cache.entry_path(key).c_str(), 0600);  // as the cache's own files, so its checks read it
  }

  std::function<plugrt::Status()> check;
  std::optional<plugrt::placement::FoundBlob> found =
      (mode & 2) ? cache.find_checking_later(key, &check) : cache.find(key);
  if (!found) return 0;
  if (check && !check().is_ok()) return 0;
  std::vector<std::string> unavailable;
  plugrt::Result<plugrt::PlacedProgram> placed =
      plugrt::placement::read_placed_entry(found->bytes, found->owner, owner, &unavailable);
  if (!placed.is_ok()) {
    if (placed.code() != plugrt::Error::kInvalidProgram && placed.code() != plugrt::Error::kMemoryAllocationFailed) {
      std::abort();
    }
    return 0;
  }
  for (const std::string& name : placed->program.method_names()) {
    if (!placed->program.describe(name).is_ok()) std::abort();
    (void)placed->program.contents(name);
  }
  return 0;
}
