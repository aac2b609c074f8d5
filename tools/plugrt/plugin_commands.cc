// SPDX-License-Identifier: Apache-2.0
// `plugrt backends`, `plugrt doctor` and `plugrt inspect`: what plugins there are, which
// were accepted or refused and why, and what one plugin file says about itself.
#include <sys/stat.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "command_runtime.h"
#include "commands.h"
#include "plugrt/method.h"
#include "plugrt/placement/blob_cache.h"
#include "plugrt/plugins/plugin_loader.h"
#include "plugrt/program.h"
#include "plugrt/registry.h"

namespace plugrt::tools {
namespace {

using nlohmann::json;
using plugins::PluginReport;

void add_plugin_options(CLI::App& command, PluginOptions& options) {
  add_plugin_search_options(command, options.search);
  command.add_flag("--json", options.json, "Print machine-readable JSON");
}

std::string abi_text(uint32_t major, uint32_t minor) { return std::to_string(major) + "." + std::to_string(minor); }

void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    std::cout << line << "\n";
  }
}

int fail(const std::string& command, const Status& status) {
  std::cerr << "plugrt " << command << ": " << status.message() << "\n";
  return 1;
}

int run_backends(const PluginOptions& options) {
  Result<std::unique_ptr<Runtime>> runtime = make_runtime(options.search);
  if (!runtime.is_ok()) return fail("backends", runtime.status());
  (*runtime)->load_all();
  Registry& registry = (*runtime)->registry();

  json listed = json::array();
  std::vector<std::vector<std::string>> rows = {{"BACKEND", "PLUGIN", "VERSION", "ABI", "AVAILABLE", "FILE"}};
  for (const BackendInfo& info : registry.list_backends()) {
    json entry = {{"name", info.name},
                  {"description", info.description},
                  {"plugin", info.plugin.name},
                  {"version", info.plugin.version},
                  {"abi", abi_text(info.plugin.abi_major, info.plugin.abi_minor)},
                  {"file", info.plugin.origin},
                  {"has_aot", info.has_aot}};
    std::string available;
    if (info.shadowed_by) {
      entry["shadowed_by"] = *info.shadowed_by;
      available = "shadowed by " + *info.shadowed_by;
    } else if (Result<RegisteredBackend> backend = registry.find_registered_backend(info.name); backend.is_ok()) {
      const Availability availability = backend->is_available();
      entry["available"] = availability.available;
      if (!availability.available) entry["reason"] = availability.reason;
      available = availability.available ? "yes" : "no: " + availability.reason;
    }
    rows.push_back({info.name, info.plugin.name, info.plugin.version, entry["abi"], available, info.plugin.origin});
    listed.push_back(std::move(entry));
  }
  if (options.json) {
    std::cout << json{{"backends", listed}}.dump(2) << "\n";
  } else if (rows.size() == 1) {
    std::cout << "No backends found. `plugrt doctor` shows where plugrt looked and why.\n";
  } else {
    print_table(rows);
  }
  return 0;
}

bool is_directory(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

/// Loads every method of each program, so that the report shows what initialising their
/// delegates here does: where each runs, fallbacks, init failures.
json load_programs(const std::vector<std::string>& paths, Registry& registry) {
  json loaded = json::array();
  for (const std::string& path : paths) {
    json entry = {{"path", path}};
    Result<Program> program = Program::load(path);
    if (!program.is_ok()) {
      entry["error"] = program.status().message();
      loaded.push_back(std::move(entry));
      continue;
    }
    json methods = json::array();
    for (const std::string& name : program->method_names()) {
      Result<Method> method = Method::load(*program, name, registry);
      json m = {{"name", name}};
      if (!method.is_ok()) {
        m["error"] = method.status().message();
      } else {
        m["delegates"] = json::array();
        for (const DelegatePlacement& d : method->report().delegates) {
          m["delegates"].push_back({{"delegate", d.delegate},
                                    {"backend", d.backend},
                                    {"origin", d.origin},
                                    {"fell_back", d.fell_back},
                                    {"isolated", d.isolated},
                                    {"reason", d.reason}});
        }
      }
      methods.push_back(std::move(m));
    }
    entry["methods"] = std::move(methods);
    loaded.push_back(std::move(entry));
  }
  return loaded;
}

json cache_json(const std::string& cache_dir) {
  const std::string root = cache_dir.empty() ? placement::default_cache_directory() : cache_dir;
  if (root.empty()) return json(nullptr);
  const placement::BlobCacheStats stats = placement::BlobCache(root).stats();
  return {{"directory", stats.directory}, {"entries", stats.entries}, {"bytes", stats.bytes},
          {"max_bytes", stats.max_bytes}, {"hits", stats.hits},       {"misses", stats.misses},
          {"rejected", stats.rejected}};
}

int run_doctor(const PluginOptions& options, const std::vector<std::string>& programs, const std::string& cache_dir) {
  Result<std::unique_ptr<Runtime>> made = make_runtime(options.search);
  if (!made.is_ok()) return fail("doctor", made.status());
  Runtime& runtime = **made;
  runtime.load_all();  // a verdict includes what loading the plugin showed
  const json loaded_programs = load_programs(programs, runtime.registry());
  plugins::PluginLoader& loader = runtime.loader();

  json search_path = json::array();
  for (const plugins::SearchDirectory& directory : loader.search_path()) {
    search_path.push_back(
        {{"path", directory.path}, {"source", directory.source}, {"exists", is_directory(directory.path)}});
  }
  json files = json::array();
  for (const PluginReport& report : loader.report()) {
    json entry = {{"path", report.path},
                  {"found_in", report.found_in},
                  {"verdict", report.state == PluginReport::State::kRefused ? "refused" : "accepted"}};
    if (report.state == PluginReport::State::kRefused) {
      entry["reason"] = report.refusal.message();
      entry["error"] = std::string(to_string(report.refusal.code()));
    }
    if (report.metadata) {
      entry["plugin"] = report.metadata->name;
      entry["version"] = report.metadata->version;
      entry["abi"] = abi_text(report.metadata->abi_major, report.metadata->abi_minor);
      entry["backends"] = report.metadata->backends;
    }
    for (const auto& [backend, winner] : report.shadowed_by) {
      entry["shadowed"].push_back({{"backend", backend}, {"by", winner}});
    }
    for (const auto& [backend, failures] : report.init_failures) {
      entry["init_failures"].push_back({{"backend", backend},
                                        {"count", failures.count},
                                        {"error", std::string(to_string(failures.last.code()))},
                                        {"reason", failures.last.message()}});
    }
    if (report.isolated) entry["isolated"] = true;
    for (const auto& [backend, crashes] : report.crashes) {
      entry["crashes"].push_back({{"backend", backend}, {"count", crashes.count}, {"reason", crashes.last}});
    }
    files.push_back(std::move(entry));
  }
  json trust = {{"allow_list", options.search.allow_list.empty() ? json(nullptr) : json(options.search.allow_list)},
                {"ownership_checks", !options.search.allow_untrusted}};
  if (options.json) {
    std::cout << json{{"host_abi", abi_text(PLUGRT_ABI_MAJOR, PLUGRT_ABI_MINOR)},
                      {"search_path", search_path},
                      {"trust", trust},
                      {"programs", loaded_programs},
                      {"blob_cache", cache_json(cache_dir)},
                      {"plugins", files}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << "Host plugin ABI " << abi_text(PLUGRT_ABI_MAJOR, PLUGRT_ABI_MINOR) << ". Search path, in order:\n";
  for (const json& directory : search_path) {
    std::cout << "  " << directory["path"].get<std::string>() << "  (" << directory["source"].get<std::string>()
              << (directory["exists"].get<bool>() ? "" : ", missing") << ")\n";
  }
  std::cout << "Allow-list: "
            << (options.search.allow_list.empty() ? "none (no digest pinning)"
                                                  : options.search.allow_list + " (only the plugins it lists load)")
            << "\nOwnership and permission checks: "
            << (options.search.allow_untrusted ? "off (--allow-untrusted-plugins)" : "on") << "\n";
  if (const json cache = cache_json(cache_dir); cache.is_null()) {
    std::cout << "Blob cache: none (no --cache-dir, PLUGRT_CACHE_DIR, XDG_CACHE_HOME or HOME)\n";
  } else {
    const uint64_t entries = cache["entries"].get<uint64_t>();
    std::cout << "Blob cache: " << cache["directory"].get<std::string>() << ": " << entries
              << (entries == 1 ? " entry, " : " entries, ") << cache["bytes"].get<uint64_t>() << " bytes (cap "
              << cache["max_bytes"].get<uint64_t>() << "); " << cache["hits"].get<uint64_t>() << " hits, "
              << cache["misses"].get<uint64_t>() << " misses, " << cache["rejected"].get<uint64_t>()
              << " damaged entries removed\n";
  }
  std::cout << (files.empty() ? "No plugin files (libplugrt_*.so) found.\n" : "Plugin files:\n");
  for (const json& file : files) {
    std::cout << "  " << file["verdict"].get<std::string>() << "  " << file["path"].get<std::string>() << "\n";
    if (file.contains("plugin")) {
      std::cout << "      plugin " << file["plugin"].get<std::string>() << " " << file["version"].get<std::string>()
                << ", ABI " << file["abi"].get<std::string>() << ", backends:";
      for (const json& backend : file["backends"]) std::cout << " " << backend.get<std::string>();
      std::cout << "\n";
    }
    if (file.contains("reason")) {
      // The reason names the file for callers of the API; here the line above does.
      std::string reason = file["reason"].get<std::string>();
      const std::string prefix = file["path"].get<std::string>() + ": ";
      if (reason.compare(0, prefix.size(), prefix) == 0) reason.erase(0, prefix.size());
      std::cout << "      why: " << reason << "\n";
    }
    if (file.contains("shadowed")) {
      for (const json& shadow : file["shadowed"]) {
        std::cout << "      backend '" << shadow["backend"].get<std::string>() << "' is shadowed by "
                  << shadow["by"].get<std::string>() << "\n";
      }
    }
    if (file.contains("isolated")) std::cout << "      isolated: its backends run in plugrt-backend-host processes\n";
    if (file.contains("crashes")) {
      for (const json& crash : file["crashes"]) {
        const uint64_t count = crash["count"].get<uint64_t>();
        std::cout << "      the process of backend '" << crash["backend"].get<std::string>()
                  << "' crashed or timed out " << count << (count == 1 ? " time" : " times")
                  << ", last: " << crash["reason"].get<std::string>() << "\n";
      }
    }
    if (file.contains("init_failures")) {
      for (const json& failure : file["init_failures"]) {
        const uint64_t count = failure["count"].get<uint64_t>();
        std::cout << "      init of backend '" << failure["backend"].get<std::string>() << "' failed " << count
                  << (count == 1 ? " time" : " times") << ", last: " << failure["reason"].get<std::string>() << "\n";
      }
    }
  }
  for (const json& program : loaded_programs) {
    std::cout << "Program " << program["path"].get<std::string>() << ":\n";
    if (program.contains("error")) std::cout << "  cannot load: " << program["error"].get<std::string>() << "\n";
    if (!program.contains("methods")) continue;
    for (const json& method : program["methods"]) {
      std::cout << "  method " << method["name"].get<std::string>() << ":";
      if (method.contains("error")) {
        std::cout << " cannot load: " << method["error"].get<std::string>() << "\n";
        continue;
      }
      std::cout << "\n";
      for (const json& d : method["delegates"]) {
        std::cout << "    " << d["delegate"].get<std::string>() << " -> " << d["backend"].get<std::string>() << " ("
                  << d["origin"].get<std::string>() << ")";
        if (d["isolated"].get<bool>() && !d["fell_back"].get<bool>()) std::cout << ", isolated";
        if (d["fell_back"].get<bool>()) std::cout << ", fallback: " << d["reason"].get<std::string>();
        std::cout << "\n";
      }
    }
  }
  return 0;
}

int run_inspect(const std::string& path, bool as_json) {
  if (is_program_file(path)) return run_inspect_program(path, as_json);
  // Reads the file only: no plugin code runs.
  Result<plugins::PluginFileInfo> info = plugins::inspect_plugin_file(path);
  if (!info.is_ok()) {
    std::cerr << "plugrt inspect: " << info.status().message() << "\n";
    return 1;
  }
  const plugins::PluginMetadata& metadata = info->metadata;
  const bool compatible = metadata.abi_major == PLUGRT_ABI_MAJOR;
  json out = {{"file", path},
              {"kind", "plugin"},
              {"machine", plugins::ElfImage::machine_name(info->machine)},
              {"plugin", metadata.name},
              {"version", metadata.version},
              {"abi", abi_text(metadata.abi_major, metadata.abi_minor)},
              {"abi_compatible", compatible},
              {"backends", metadata.backends},
              {"has_entry_symbol", info->has_entry_symbol},
              {"exported_symbols", info->exported_symbols},
              {"needed_libraries", info->needed_libraries}};
  if (as_json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << path << "\n"
            << "  plugin            " << metadata.name << " " << metadata.version << "\n"
            << "  built for ABI     " << out["abi"].get<std::string>()
            << (compatible ? " (this host: " : " (INCOMPATIBLE with this host: ")
            << abi_text(PLUGRT_ABI_MAJOR, PLUGRT_ABI_MINOR) << ")\n"
            << "  machine           " << out["machine"].get<std::string>() << "\n"
            << "  backends         ";
  for (const std::string& backend : metadata.backends) std::cout << " " << backend;
  std::cout << "\n  entry symbol      " << (info->has_entry_symbol ? "present" : "MISSING") << "\n  exports          ";
  for (const std::string& symbol : info->exported_symbols) std::cout << " " << symbol;
  std::cout << "\n  needs            ";
  for (const std::string& library : info->needed_libraries) std::cout << " " << library;
  std::cout << "\n";
  return 0;
}

}  // namespace

void add_backends_command(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<PluginOptions>();
  CLI::App* command =
      app.add_subcommand("backends", "List every backend found, with its plugin, version, ABI, file and availability");
  add_plugin_options(*command, *options);
  command->callback([options, &result] { result.exit_code = run_backends(*options); });
}

void add_doctor_command(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<PluginOptions>();
  auto programs = std::make_shared<std::vector<std::string>>();
  auto cache_dir = std::make_shared<std::string>();
  CLI::App* command =
      app.add_subcommand("doctor", "Show the plugin search path and the verdict on every plugin file considered");
  add_plugin_options(*command, *options);
  add_isolation_options(*command, options->search);
  command
      ->add_option("--program", *programs,
                   "Also load every method of this program (repeatable), so that where its delegates run, "
                   "their fallbacks and the backends' init failures are shown")
      ->type_name("FILE");
  command
      ->add_option("--cache-dir", *cache_dir,
                   "The compiled-blob cache to report on (default: $XDG_CACHE_HOME/plugrt, else ~/.cache/plugrt)")
      ->type_name("DIR");
  command->callback(
      [options, programs, cache_dir, &result] { result.exit_code = run_doctor(*options, *programs, *cache_dir); });
}

void add_inspect_command(CLI::App& app, CommandResult& result) {
  auto path = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  CLI::App* command =
      app.add_subcommand("inspect",
                         "Show a plugin file's metadata, exports and dependencies without loading it, or a program's "
                         "methods, inputs, outputs and delegates");
  command->add_option("FILE", *path, "A plugin file (libplugrt_<name>.so) or a program (.prt)")->required();
  command->add_flag("--json", *as_json, "Print machine-readable JSON");
  command->callback([path, as_json, &result] { result.exit_code = run_inspect(*path, *as_json); });
}

}  // namespace plugrt::tools
