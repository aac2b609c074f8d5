// SPDX-License-Identifier: Apache-2.0
// plugrt-backend-host: runs one plugin for a host process (DESIGN.md, "Isolation").
//
//   plugrt-backend-host --plugin PATH --parent-pid PID [--allow-untrusted] [--allow-list FILE]
//
// Started by the host with its end of a socket pair as descriptor 3. It loads the plugin
// through the same loader, trust checks and ABI validation as the host, then answers the
// host's requests (plugrt/isolation/protocol.h) until the socket closes. It serves one
// delegate handle at most. It dies with the host (PR_SET_PDEATHSIG), taking its process group
// along, and exits on EOF.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugrt/backend.h"
#include "plugrt/isolation/protocol.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/registry.h"

namespace plugrt::isolation {
namespace {

constexpr int kSocket = 3;
constexpr size_t kMaxText = 4096;

struct Mapping {
  void* data = MAP_FAILED;
  size_t size = 0;
  ~Mapping() {
    if (data != MAP_FAILED) munmap(data, size);
  }
};

class Server {
 public:
  Server(Registry& registry, plugins::PluginLoader& loader, std::string path)
      : registry_(registry), loader_(loader), path_(std::move(path)) {}

  /// Serves requests until the host closes the socket; the process's exit code.
  int serve() {
    for (;;) {
      ReceiveFailure failure;
      Result<Frame> frame = receive_frame(kSocket, ReceiveLimits{true, -1}, &failure);
      if (!frame.is_ok()) return failure == ReceiveFailure::kClosed ? 0 : 2;
      Status sent = handle(*frame);
      if (frame->fd >= 0) close(frame->fd);
      if (!sent.is_ok()) return 2;
    }
  }

 private:
  Status respond(const FrameHeader& request, plugrt_status status, const std::vector<uint8_t>& payload) {
    FrameHeader header = request;
    header.status = status;
    return send_frame(kSocket, header, payload);
  }
  Status respond_status(const FrameHeader& request, const Status& status) {
    PayloadWriter writer;
    if (!status.is_ok()) writer.bytes(status.message().substr(0, kMaxText));
    return respond(request, static_cast<plugrt_status>(status.code()), writer.data());
  }

  Status handle(Frame& frame) {
    switch (static_cast<CallKind>(frame.header.kind)) {
      case CallKind::kDescribe: return describe(frame.header);
      case CallKind::kInit: return respond_status(frame.header, init(frame));
      case CallKind::kExecute: return respond_status(frame.header, execute(frame));
      case CallKind::kDestroy:
        handle_.reset();
        blob_.reset();
        return respond_status(frame.header, Status::ok());
    }
    return respond_status(frame.header, Status(Error::kInvalidArgument, "unknown call kind"));
  }

  Status describe(const FrameHeader& request) {
    Result<PluginId> id = loader_.load(path_);
    if (!id.is_ok()) return respond_status(request, id.status());
    PayloadWriter writer;
    std::vector<BackendInfo> backends;
    for (const BackendInfo& info : registry_.list_backends()) {
      if (info.plugin.id == *id) backends.push_back(info);
    }
    if (backends.empty()) return respond_status(request, Status(Error::kPluginInvalid, "it registered no backends"));
    const PluginInfo& plugin = backends.front().plugin;
    writer.bytes(plugin.name);
    writer.bytes(plugin.version);
    writer.u32(plugin.abi_major);
    writer.u32(plugin.abi_minor);
    writer.u32(static_cast<uint32_t>(backends.size()));
    for (const BackendInfo& info : backends) {
      Result<RegisteredBackend> backend = registry_.find_registered_backend(info.name);
      const Availability availability = backend.is_ok() ? backend->is_available() : Availability{false, "not found"};
      writer.bytes(info.name);
      writer.bytes(info.description);
      writer.u64(info.capabilities);
      writer.u32(availability.available ? 1 : 0);
      writer.bytes(availability.reason.substr(0, kMaxText));
    }
    return respond(request, PLUGRT_STATUS_OK, writer.data());
  }

  static bool read_options(PayloadReader& reader, std::vector<std::string>& storage,
                           std::vector<plugrt_option>& options) {
    uint32_t count = 0;
    if (!reader.u32(&count) || count > 65536) return false;
    for (uint32_t i = 0; i < count; ++i) {
      std::string key, value;
      if (!reader.bytes(&key, kMaxPayloadSize) || !reader.bytes(&value, kMaxPayloadSize)) return false;
      storage.push_back(std::move(key));
      storage.push_back(std::move(value));
    }
    // Pointers are taken once storage has stopped growing.
    for (size_t i = options.size(); i < count; ++i) {
      const std::string& key = storage[storage.size() - 2 * (count - i)];
      const std::string& value = storage[storage.size() - 2 * (count - i) + 1];
      options.push_back(plugrt_option{{key.data(), key.size()}, value.data(), value.size()});
    }
    return true;
  }

  Status init(Frame& frame) {
    if (handle_) return Status(Error::kInvalidState, "this backend host already serves a handle");
    PayloadReader reader(frame.payload);
    std::string name;
    uint64_t num_threads = 0, blob_size = 0, region_size = 0;
    uint32_t num_constants = 0;
    std::vector<std::string> spec_storage, option_storage;
    std::vector<plugrt_option> specs, options;
    if (!reader.bytes(&name, kMaxText) || !reader.u64(&num_threads) || !read_options(reader, spec_storage, specs) ||
        !read_options(reader, option_storage, options) || !reader.u64(&blob_size) || !reader.u64(&region_size) ||
        blob_size > region_size || (region_size > 0) != (frame.fd >= 0) || !reader.u32(&num_constants)) {
      return Status(Error::kInvalidArgument, "malformed init request");
    }
    // The constants the blob names: each a range of the region after the blob.
    constant_names_.assign(num_constants, std::string());
    std::vector<std::pair<uint64_t, uint64_t>> constant_ranges(num_constants);
    for (uint32_t c = 0; c < num_constants; ++c) {
      auto& [offset, size] = constant_ranges[c];
      if (!reader.bytes(&constant_names_[c], kMaxText) || !reader.u64(&offset) || !reader.u64(&size) ||
          offset < blob_size || offset > region_size || size > region_size - offset) {
        return Status(Error::kInvalidArgument, "malformed init request");
      }
    }
    if (!reader.at_end()) return Status(Error::kInvalidArgument, "malformed init request");
    Result<PluginId> id = loader_.load(path_);
    if (!id.is_ok()) return id.status();
    Result<RegisteredBackend> backend = registry_.find_registered_backend(name);
    if (!backend.is_ok()) return backend.status();
    blob_ = std::make_unique<Mapping>();
    if (region_size > 0) {
      blob_->data = mmap(nullptr, region_size, PROT_READ, MAP_SHARED, frame.fd, 0);
      if (blob_->data == MAP_FAILED) {
        return Status(Error::kAccessFailed, std::string("cannot map the blob: ") + strerror(errno));
      }
      blob_->size = region_size;
    }
    const auto* region = static_cast<const uint8_t*>(blob_->data == MAP_FAILED ? nullptr : blob_->data);
    std::vector<plugrt_named_constant> constants;
    for (uint32_t c = 0; c < num_constants; ++c) {
      constants.push_back(plugrt_named_constant{{constant_names_[c].data(), constant_names_[c].size()},
                                                region + constant_ranges[c].first,
                                                static_cast<size_t>(constant_ranges[c].second)});
    }
    InitOptions init_options;
    init_options.blob = region;
    init_options.blob_size = blob_size;
    init_options.constants = Span<const plugrt_named_constant>(constants.data(), constants.size());
    init_options.compile_specs = Span<const plugrt_option>(specs.data(), specs.size());
    init_options.runtime_options = Span<const plugrt_option>(options.data(), options.size());
    init_options.num_threads = num_threads;
    Result<DelegateHandle> handle = backend->init(init_options);
    if (!handle.is_ok()) return handle.status();
    handle_.emplace(std::move(handle).value());
    return Status::ok();
  }

  Status execute(Frame& frame) {
    if (!handle_) return Status(Error::kInvalidState, "execute before a successful init");
    PayloadReader reader(frame.payload);
    uint64_t region_size = 0;
    uint32_t num_inputs = 0, num_outputs = 0;
    if (!reader.u64(&region_size) || !reader.u32(&num_inputs) || !reader.u32(&num_outputs) ||
        uint64_t{num_inputs} + num_outputs > kMaxTensors) {
      return Status(Error::kInvalidArgument, "malformed execute request");
    }
    if (frame.fd >= 0) {
      region_ = std::make_unique<Mapping>();
      region_->data = mmap(nullptr, region_size, PROT_READ | PROT_WRITE, MAP_SHARED, frame.fd, 0);
      if (region_->data == MAP_FAILED) {
        return Status(Error::kAccessFailed, std::string("cannot map the tensors: ") + strerror(errno));
      }
      region_->size = region_size;
    }
    if (!region_ || region_size != region_->size) return Status(Error::kInvalidArgument, "no shared region");
    const size_t count = num_inputs + num_outputs;
    tensors_.resize(count);
    shapes_.resize(count);
    pointers_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      uint32_t ndim = 0, dtype = 0;
      uint64_t offset = 0, bytes = 0;
      if (!reader.u32(&ndim) || ndim > kMaxDimensions || !reader.u32(&dtype)) {
        return Status(Error::kInvalidArgument, "malformed execute request");
      }
      shapes_[i].resize(ndim);
      for (uint32_t d = 0; d < ndim; ++d) reader.i64(&shapes_[i][d]);
      if (!reader.u64(&offset) || !reader.u64(&bytes) || offset > region_->size || bytes > region_->size - offset) {
        return Status(Error::kInvalidArgument, "malformed execute request");
      }
      DLTensor& t = tensors_[i];
      t.data = static_cast<uint8_t*>(region_->data) + offset;
      t.device = {kDLCPU, 0};
      t.ndim = static_cast<int32_t>(ndim);
      t.dtype = {static_cast<uint8_t>(dtype & 0xff), static_cast<uint8_t>((dtype >> 8) & 0xff),
                 static_cast<uint16_t>(dtype >> 16)};
      t.shape = shapes_[i].data();
      t.strides = nullptr;
      t.byte_offset = 0;
      pointers_[i] = &t;
    }
    uint32_t num_symbol_values = 0;
    if (!reader.u32(&num_symbol_values) || num_symbol_values > kMaxSymbolValues) {
      return Status(Error::kInvalidArgument, "malformed execute request");
    }
    symbol_values_.resize(num_symbol_values);
    for (int64_t& value : symbol_values_) {
      if (!reader.i64(&value)) return Status(Error::kInvalidArgument, "malformed execute request");
    }
    if (!reader.at_end()) return Status(Error::kInvalidArgument, "malformed execute request");
    return handle_->execute(Span<const DLTensor* const>(pointers_.data(), num_inputs),
                            Span<const DLTensor* const>(pointers_.data() + num_inputs, num_outputs), 0,
                            Span<const int64_t>(symbol_values_));
  }

  Registry& registry_;
  plugins::PluginLoader& loader_;
  std::string path_;
  std::unique_ptr<Mapping> blob_;            // declared before handle_: unmapped after it is destroyed
  std::vector<std::string> constant_names_;  // lent to the handle with the blob, like it
  std::unique_ptr<Mapping> region_;
  std::optional<DelegateHandle> handle_;
  std::vector<DLTensor> tensors_;
  std::vector<std::vector<int64_t>> shapes_;
  std::vector<int64_t> symbol_values_;
  std::vector<const DLTensor*> pointers_;
};

// SIGTERM from PR_SET_PDEATHSIG: the host is gone, so this process group ends, the plugin's
// descendants with it (kill is async-signal-safe).
void end_own_group(int) { kill(0, SIGKILL); }

int usage(const char* why) {
  std::fprintf(stderr,
               "plugrt-backend-host: %s\n"
               "usage: plugrt-backend-host --plugin PATH --parent-pid PID [--allow-untrusted] "
               "[--allow-list FILE]\n(started by plugrt for an isolated backend, not by hand)\n",
               why);
  return 64;
}

}  // namespace
}  // namespace plugrt::isolation

int main(int argc, char** argv) {
  using namespace plugrt;
  // Inherit nothing but the socket and the standard streams.
  close_range(4, ~0U, 0);
  std::string plugin_path, allow_list;
  long parent = 0;
  bool allow_untrusted = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--plugin" && i + 1 < argc) {
      plugin_path = argv[++i];
    } else if (arg == "--parent-pid" && i + 1 < argc) {
      parent = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--allow-list" && i + 1 < argc) {
      allow_list = argv[++i];
    } else if (arg == "--allow-untrusted") {
      allow_untrusted = true;
    } else {
      return isolation::usage(("unknown argument " + arg).c_str());
    }
  }
  if (plugin_path.empty() || parent <= 0) return isolation::usage("--plugin and --parent-pid are required");
  if (fcntl(isolation::kSocket, F_GETFD) < 0) return isolation::usage("descriptor 3 is not the host's socket");
  // Die with the host, and take every process the plugin started along: the host starts
  // this process as the leader of its own group, so the signal ends the group. If the host
  // is already gone, the parent changed before the signal was set.
  if (getpgrp() == getpid()) {
    signal(SIGTERM, isolation::end_own_group);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
  } else {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // started by hand, in someone else's group
  }
  if (getppid() != static_cast<pid_t>(parent)) return 0;
  signal(SIGPIPE, SIG_IGN);

  Registry registry(HostEnvironment::from_environment());
  plugins::SearchPathOptions options;
  options.use_environment = false;
  options.use_install_directory = false;
  options.use_executable_directory = false;
  options.allow_untrusted_files = allow_untrusted;
  options.allow_list = allow_list;
  plugins::PluginLoader loader(registry, options);
  isolation::Server server(registry, loader, plugin_path);
  return server.serve();
}
