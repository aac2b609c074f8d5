// SPDX-License-Identifier: Apache-2.0
// Files of the cache directory (blob cache, cost profiles, verdicts): data this user
// owns, in directories of mode 0700 that nobody else can change, written as new files of
// mode 0600 (O_EXCL, O_NOFOLLOW, a random name) renamed into place, read without
// following links.
#ifndef PLUGRT_PLACEMENT_SRC_PRIVATE_FILES_H_
#define PLUGRT_PLACEMENT_SRC_PRIVATE_FILES_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "plugrt/span.h"
#include "plugrt/status.h"
#include "plugrt/trusted_path.h"

namespace plugrt::placement {

/// Makes `directory` and its missing parents with mode 0700, each only inside a directory
/// that is trusted (plugrt/trusted_path.h), checks that it and every directory above it
/// are trusted, and narrows it to 0700 when others may read it. Errors (kAccessFailed) say
/// why the directory cannot hold the cache.
Status prepare_private_directory(const std::string& directory);

/// Writes `parts` one after another to a new file of mode 0600 beside `path`, then renames
/// it to `path`. Errors: kAccessFailed naming the file.
Status write_private_file(const std::string& path, const std::vector<Span<const uint8_t>>& parts);

/// Opens `path` for reading without following a link; refused (kAccessFailed) when it is
/// not a regular file of this user that only this user can read or write.
Result<FileDescriptor> open_private_file(const std::string& path);

/// The cache's secret key, `<directory>/key` (32 random bytes, mode 0600), made on first
/// use; several processes making it at once agree on one.
Result<std::array<uint8_t, 32>> cache_key(const std::string& directory);

}  // namespace plugrt::placement

#endif  // PLUGRT_PLACEMENT_SRC_PRIVATE_FILES_H_
