// SPDX-License-Identifier: Apache-2.0
// `plugrt new-backend NAME [--out DIR]`: writes a backend folder that builds against the
// plugrt SDK, loads, and passes the contract kit as generated. The files come from
// sdk/templates/ (embedded at build time).
#include <sys/stat.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "plugrt/names.h"
#include "plugrt/sdk/templates.h"

namespace plugrt::tools {
namespace {

struct NewBackendOptions {
  std::string name;
  std::string out;
  bool force = false;
};

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// "my_npu" -> "MyNpu"; a leading digit gets a "B" in front ("2d" -> "B2d").
std::string class_name(const std::string& name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "B" + out;
  return out;
}

int run_new_backend(const NewBackendOptions& options) {
  namespace fs = std::filesystem;
  const std::string& name = options.name;
  if (!is_valid_name(name) || std::isdigit(static_cast<unsigned char>(name[0]))) {
    std::cerr << "plugrt new-backend: '" << name
              << "' is not a valid backend name: 1 to 63 characters of [a-z0-9_], not starting with a digit\n";
    return 2;
  }
  const fs::path dir = options.out.empty() ? fs::path(name) : fs::path(options.out);
  std::error_code error;
  if (fs::exists(dir, error) && !fs::is_empty(dir, error) && !options.force) {
    std::cerr << "plugrt new-backend: " << dir.string() << " exists and is not empty (use --force to write into it)\n";
    return 1;
  }
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string magic = upper.substr(0, 8);
  magic.resize(8, '_');
  auto fill = [&](const char* text) {
    std::string out = replace_all(text, "@NAME@", name);
    out = replace_all(out, "@UPPER@", upper);
    out = replace_all(out, "@CLASS@", class_name(name));
    return replace_all(out, "@MAGIC@", magic);
  };
  const std::vector<std::pair<std::string, const char*>> files = {
      {"CMakeLists.txt", templates::k_CMakeLists_txt},
      {"src/" + name + "_backend.cc", templates::k_backend_cc},
      {"test/CMakeLists.txt", templates::k_test_CMakeLists_txt},
      {"README.md", templates::k_README_md},
      {"setup.md", templates::k_setup_md},
      {"COMPATIBILITY.md", templates::k_COMPATIBILITY_md},
      {"third-party/README.md", templates::k_third_party_README_md},
  };
  for (const auto& [relative, text] : files) {
    const fs::path path = dir / relative;
    fs::create_directories(path.parent_path(), error);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << fill(text);
    if (!out) {
      std::cerr << "plugrt new-backend: cannot write " << path.string() << "\n";
      return 1;
    }
    std::cout << "created " << path.string() << "\n";
  }
  std::cout << "\nNext:\n"
            << "  cmake -S " << dir.string() << " -B " << (dir / "build").string()
            << " -DCMAKE_PREFIX_PATH=<plugrt prefix>\n"
            << "  cmake --build " << (dir / "build").string() << "\n"
            << "  ctest --test-dir " << (dir / "build").string() << " --output-on-failure   # the contract kit\n";
  return 0;
}

}  // namespace

void add_new_backend_command(CLI::App& app, CommandResult& result) {
  auto options = std::make_shared<NewBackendOptions>();
  CLI::App* command = app.add_subcommand(
      "new-backend", "Create a backend folder that builds with the plugrt SDK and passes the contract kit");
  command->add_option("name", options->name, "Backend name: [a-z0-9_], e.g. my_npu")->required();
  command->add_option("--out", options->out, "Folder to create (default: ./NAME)");
  command->add_flag("--force", options->force, "Write into an existing, non-empty folder");
  command->callback([options, &result] { result.exit_code = run_new_backend(*options); });
}

}  // namespace plugrt::tools
