// SPDX-License-Identifier: Apache-2.0
// libFuzzer targets, built twice per backend (test/fuzz/CMakeLists.txt), for the two
// readers every backend owns:
//   <backend>_blob  the input is a delegate blob, handed to `init` as the executor hands
//                   it (64-byte aligned, one thread, no compile specs), then `destroy`;
//   <backend>_aot   (PLUGRT_FUZZ_AOT) the input is a graph IR buffer, handed to
//                   `partition` and `preprocess` as the compiler hands it, and the blob
//                   that preprocess writes goes through `init` and `destroy`. An input
//                   of even size whose constants have distinct names is offered them by
//                   name (ABI 1.4), and a blob that names them gets them at init.
// Each call refuses bad input with a status and never crashes, hangs, or keeps a host
// allocation after destroy.
//
// The backend is the real plugin file, PLUGRT_FUZZ_PLUGIN_FILE, loaded once with dlopen
// (libFuzzer follows coverage into it); PLUGRT_FUZZ_BACKEND names the backend in it.
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string_view>
#include <vector>

#include "fuzz_host.h"
#ifdef PLUGRT_FUZZ_AOT
#include "plugrt/schema/graph_ir_generated.h"
#endif

#if !defined(PLUGRT_FUZZ_PLUGIN_FILE) || !defined(PLUGRT_FUZZ_BACKEND)
#error "the build defines PLUGRT_FUZZ_PLUGIN_FILE and PLUGRT_FUZZ_BACKEND"
#endif

namespace {

plugrt::fuzz::FuzzHost* g_host = nullptr;
const plugrt_backend* g_backend = nullptr;

[[noreturn]] void give_up(const char* what, const char* detail) {
  std::fprintf(stderr, "backend fuzzer: %s: %s\n", what, detail == nullptr ? "" : detail);
  std::exit(1);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Never closed: the backend's code must stay for the whole run.
  void* library = dlopen(PLUGRT_FUZZ_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) give_up("cannot load " PLUGRT_FUZZ_PLUGIN_FILE, dlerror());
  auto entry = reinterpret_cast<plugrt_plugin_entry_fn>(dlsym(library, PLUGRT_PLUGIN_ENTRY_SYMBOL));
  if (entry == nullptr) give_up("no entry function in " PLUGRT_FUZZ_PLUGIN_FILE, dlerror());
  g_host = new plugrt::fuzz::FuzzHost();
  const plugrt_plugin_descriptor* descriptor = nullptr;
  if (entry(&g_host->services, &descriptor) != PLUGRT_STATUS_OK) give_up("the entry function failed", nullptr);
  g_backend = plugrt::fuzz::find_backend(descriptor, PLUGRT_FUZZ_BACKEND, std::strlen(PLUGRT_FUZZ_BACKEND));
  if (g_backend == nullptr) give_up("the plugin has no backend named", PLUGRT_FUZZ_BACKEND);
  char reason[256];
  plugrt_text_buffer buffer{reason, sizeof(reason) - 1, 0};
  if (!g_backend->is_available(g_backend->context, &g_host->services, &buffer)) {
    reason[buffer.size < sizeof(reason) ? buffer.size : sizeof(reason) - 1] = '\0';
    give_up("the backend is not available here", reason);
  }
  return 0;
}

namespace {

void init_and_destroy(const void* blob, size_t blob_size, const std::vector<plugrt_named_constant>& constants = {}) {
  plugrt_init_args args{};
  args.struct_size = PLUGRT_INIT_ARGS_SIZE;
  args.blob = blob;
  args.blob_size = blob_size;
  args.num_threads = 1;
  args.constants = constants.data();
  args.num_constants = constants.size();
  plugrt_delegate_handle handle = nullptr;
  if (g_backend->init(g_backend->context, &g_host->services, &args, &handle) == PLUGRT_STATUS_OK) {
    if (handle == nullptr) std::abort();  // init succeeded without a handle
    g_backend->destroy(handle);
  }
}

#ifdef PLUGRT_FUZZ_AOT
/// The graph's node count, as the compiler passes it to partition: the length of the
/// Graph table's `nodes` vector when the buffer is one, else 0 (a bad buffer must be
/// refused whatever the count says).
size_t count_nodes(const void* data, size_t size) {
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data), size);
  if (!plugrt::ir::VerifyGraphBuffer(verifier)) return 0;
  const plugrt::ir::Graph* graph = plugrt::ir::GetGraph(data);
  return graph->nodes() == nullptr ? 0 : graph->nodes()->size();
}

/// The graph's constants by name, as the host lends them, when their names are distinct
/// and non-empty (the buffer was verified by count_nodes); else none.
std::vector<plugrt_named_constant> named_constants(const void* data) {
  std::vector<plugrt_named_constant> constants;
  const plugrt::ir::Graph* graph = plugrt::ir::GetGraph(data);
  if (graph->values() == nullptr) return constants;
  std::set<std::string_view> names;
  for (const plugrt::ir::Value* value : *graph->values()) {
    if (value->data() == nullptr) continue;
    if (value->name() == nullptr || value->name()->size() == 0 || !names.insert(value->name()->string_view()).second) {
      return {};
    }
    constants.push_back(
        {{value->name()->c_str(), value->name()->size()}, value->data()->data(), value->data()->size()});
  }
  return constants;
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  plugrt::fuzz::AlignedCopy input(data, size);
  if (input.data() == nullptr) return 0;
#ifdef PLUGRT_FUZZ_AOT
  const plugrt_aot_backend* aot = g_backend->aot;
  if (aot == nullptr) return 0;
  std::vector<uint8_t> taken(count_nodes(input.data(), input.size()), 0);
  plugrt_partition_args partition{};
  partition.struct_size = PLUGRT_PARTITION_ARGS_SIZE;
  partition.graph = input.data();
  partition.graph_size = input.size();
  partition.node_taken = taken.data();
  partition.num_nodes = taken.size();
  (void)aot->partition(g_backend->context, &g_host->services, &partition);
  const std::vector<plugrt_named_constant> constants =
      !taken.empty() && size % 2 == 0 ? named_constants(input.data()) : std::vector<plugrt_named_constant>();
  plugrt_preprocess_args preprocess{};
  preprocess.struct_size = PLUGRT_PREPROCESS_ARGS_SIZE;
  preprocess.graph = input.data();
  preprocess.graph_size = input.size();
  preprocess.flags = constants.empty() ? 0 : PLUGRT_PREPROCESS_CONSTANTS_BY_NAME;
  if (aot->preprocess(g_backend->context, &g_host->services, &preprocess) == PLUGRT_STATUS_OK) {
    if (preprocess.blob == nullptr && preprocess.blob_size != 0) std::abort();
    const bool names = (preprocess.blob_flags & PLUGRT_BLOB_NAMES_CONSTANTS) != 0;
    if (names && constants.empty()) std::abort();  // it named constants that were not offered
    init_and_destroy(preprocess.blob, preprocess.blob_size, names ? constants : std::vector<plugrt_named_constant>());
    g_host->services.deallocate(g_host->services.context, preprocess.blob);
  }
#else
  init_and_destroy(input.data(), input.size());
#endif
  if (g_host->live_blocks != 0) std::abort();  // a host allocation outlived its handle
  return 0;
}
