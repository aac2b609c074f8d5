// SPDX-License-Identifier: Apache-2.0
/// \file plugin_export.h
/// Macros that give a plugin its two exported symbols: the metadata record (in the
/// ELF section the host reads without loading the plugin) and the entry function.
/// Usable from C99 and C++.
///
///   PLUGRT_PLUGIN_METADATA("mylib", "1.0.0", 2, "alpha\0beta");
///   PLUGRT_PLUGIN_ENTRY(mylib) {   // parameters: host, descriptor
///     *descriptor = &my_descriptor;
///     return PLUGRT_STATUS_OK;
///   }
///
/// The same source builds either way:
///   - as a plugin (the default): the entry is the exported PLUGRT_PLUGIN_ENTRY_SYMBOL;
///   - linked into an application, with PLUGRT_STATIC_PLUGIN defined: the entry is
///     `plugrt_static_entry_<id>` and no metadata is emitted. The application hands that
///     function to the registry, which registers it through the same ABI table.
#ifndef PLUGRT_SDK_PLUGIN_EXPORT_H_
#define PLUGRT_SDK_PLUGIN_EXPORT_H_

#include "plugrt/plugrt_abi.h"

#if !defined(__GNUC__)
#error "plugrt plugins need a GCC-compatible compiler (ELF visibility and sections)"
#endif

#ifdef __cplusplus
#define PLUGRT_EXTERN_C extern "C"
#else
#define PLUGRT_EXTERN_C
#endif

#define PLUGRT_EXPORT __attribute__((visibility("default")))

#ifdef PLUGRT_STATIC_PLUGIN

#define PLUGRT_PLUGIN_METADATA(name, version, num_backends, backend_names) \
  PLUGRT_EXTERN_C int plugrt_static_plugin_has_no_metadata_
#define PLUGRT_PLUGIN_ENTRY(id)                                              \
  PLUGRT_EXTERN_C plugrt_status PLUGRT_ABI_CONCAT(plugrt_static_entry_, id)( \
      const plugrt_host_services* host, const plugrt_plugin_descriptor** descriptor)

#else  // a plugin

/// Defines the plugin's metadata record. `name` and `version` are string literals
/// (at most 63 and 31 characters); `backend_names` is one literal holding the
/// `num_backends` names separated by "\0", in the order the descriptor lists them.
#define PLUGRT_PLUGIN_METADATA(name, version, num_backends, backend_names)                          \
  PLUGRT_EXTERN_C PLUGRT_EXPORT __attribute__((section(PLUGRT_METADATA_SECTION), used, aligned(8))) \
  const plugrt_plugin_metadata plugrt_metadata = {{'P', 'L', 'U', 'G', 'R', 'T', 'M', 'D'},         \
                                                  (uint32_t)sizeof(plugrt_plugin_metadata),         \
                                                  PLUGRT_METADATA_VERSION,                          \
                                                  PLUGRT_ABI_MAJOR,                                 \
                                                  PLUGRT_ABI_MINOR,                                 \
                                                  name,                                             \
                                                  version,                                          \
                                                  num_backends,                                     \
                                                  0,                                                \
                                                  backend_names}

/// Opens the definition of the entry function; its parameters are named `host` and
/// `descriptor`.
#define PLUGRT_PLUGIN_ENTRY(id)                                                                          \
  PLUGRT_EXTERN_C PLUGRT_EXPORT plugrt_status PLUGRT_PLUGIN_ENTRY_NAME(const plugrt_host_services* host, \
                                                                       const plugrt_plugin_descriptor** descriptor)

#endif  // PLUGRT_STATIC_PLUGIN

/// A plugrt_string from a string literal.
#define PLUGRT_LITERAL(text) \
  { (text), sizeof(text) - 1 }

#endif  // PLUGRT_SDK_PLUGIN_EXPORT_H_
