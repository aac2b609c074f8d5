// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a plugin file's bytes through everything plugrt reads before it
// decides to dlopen: the ELF image (sections, dynamic symbols, DT_NEEDED) and the
// metadata record. Must never crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>

#include "plugrt/plugins/elf_image.h"
#include "plugrt/plugins/plugin_metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using plugrt::plugins::ElfImage;
  plugrt::Result<ElfImage> image = ElfImage::parse(plugrt::Span<const uint8_t>(data, size));
  if (!image.is_ok()) return 0;
  (void)image->exports(PLUGRT_PLUGIN_ENTRY_SYMBOL);
  (void)image->needed_libraries();
  (void)plugrt::plugins::read_plugin_metadata(*image);
  return 0;
}
