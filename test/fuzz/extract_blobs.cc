// SPDX-License-Identifier: Apache-2.0
// plugrt_fuzz_extract_blobs PROGRAM.prt OUT_DIR: writes every delegate blob of a program
// to OUT_DIR/<backend>_blob/ and every portable fallback to OUT_DIR/portable_blob/, named
// <program>.<delegate>.bin. The fuzz targets' seeds are made this way from programs
// compiled from models/ (test/fuzz/make_seeds.sh); the file is checked by the real loader
// first, so only blobs of a valid program are written.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "plugrt/program.h"
#include "plugrt/program_format.h"
#include "plugrt/schema/program_generated.h"

namespace {

bool write_file(const std::filesystem::path& path, const uint8_t* data, size_t size) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(out);
}

std::string safe_name(std::string name) {
  for (char& c : name) {
    if (c == ':' || c == '/') c = '_';
  }
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PROGRAM.prt OUT_DIR\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  plugrt::Result<plugrt::Program> program =
      plugrt::Program::from_bytes(plugrt::Span<const uint8_t>(bytes.data(), bytes.size()), argv[1]);
  if (!program.is_ok()) {
    std::fprintf(stderr, "%s\n", program.status().to_string().c_str());
    return 1;
  }
  // Verified above, so the offsets below are in bounds.
  plugrt::ProgramFileHeader header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  const auto* root = plugrt::program::GetProgram(bytes.data() + header.flatbuffer_offset);
  const uint8_t* segments = bytes.data() + header.segments_offset;
  const std::string stem = std::filesystem::path(argv[1]).stem().string();
  const std::filesystem::path out_dir(argv[2]);
  auto segment = [&](uint32_t index, const std::string& dir, const std::string& name) {
    const plugrt::program::Segment* s = root->segments()->Get(index);
    return write_file(out_dir / dir / (stem + "." + safe_name(name) + ".bin"), segments + s->offset(), s->size());
  };
  for (const plugrt::program::Method* method : *root->methods()) {
    if (method->delegates() == nullptr) continue;
    for (const plugrt::program::Delegate* delegate : *method->delegates()) {
      const std::string name = delegate->name() == nullptr ? "delegate" : delegate->name()->str();
      if (!segment(delegate->blob_segment(), delegate->backend()->str() + "_blob", name)) return 1;
      if (delegate->fallback_segment() >= 0 &&
          !segment(static_cast<uint32_t>(delegate->fallback_segment()), "portable_blob", name + ".fallback")) {
        return 1;
      }
    }
  }
  return 0;
}
