#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks what a reviewer should not have to: every C++ file is formatted as .clang-format
# says (clang-format 14, Debian's clang-format-14, installed with apt-get when missing),
# and every source file carries the SPDX license line (Apache-2.0) in its first two
# lines. Run by CI (.ci/run, through scripts/ci-hardening.sh); to fix the format:
#   git ls-files '*.cc' '*.h' | xargs clang-format-14 -i
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang-format-14 >/dev/null; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends clang-format-14
fi

status=0
if ! git ls-files -z '*.cc' '*.h' | xargs -0 clang-format-14 --dry-run --Werror; then
  echo "check-format: the files above are not formatted as .clang-format says" >&2
  status=1
fi

# Sources, build files and scripts; the backend templates are the author's to license.
missing=()
while IFS= read -r file; do
  head -n 2 "$file" | grep -q "SPDX-License-Identifier: Apache-2.0" || missing+=("$file")
done < <(git ls-files | grep -E '\.(cc|h|py|sh|js|cmake|fbs)$|(^|/)CMakeLists\.txt$|^\.ci/run$|^sdk/cmake/.*\.in$' |
         grep -v -e '^test/fuzz/corpus/' -e '^sdk/templates/')
if [ ${#missing[@]} -gt 0 ]; then
  printf 'check-format: no SPDX-License-Identifier line in %s\n' "${missing[@]}" >&2
  status=1
fi
[ $status -eq 0 ] && echo "check-format: formatting and license lines are in order"
exit $status
