#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The layer check: every quoted #include of a part names a header of a layer that part may
# use, so the drawing in README.md ("Layout") holds in the code, not only in CMake (where
# plugrt::abi's include path, core/include, would let anything in). Run by CI with the
# format check (scripts/ci-hardening.sh, part "format"). Prints file:line for each include
# that breaks the table below and fails; a header of plugrt/ that no part owns fails too,
# so the table stays complete.
#
# The drawing: abi < common < core < plugins, placement < runtime < tools, with the SDK
# beside the core on common alone (the portable backend, built into the core, is written on
# the SDK), and backends on the SDK alone.
#
# Which part a file belongs to (in REPLY): the first pattern that matches its path.
part_of() {
  case "$1" in
    common/*) REPLY=common ;;
    core/portable/*) REPLY=portable ;;
    core/*) REPLY=core ;;
    sdk/test/plugins/*) REPLY=backends ;;        # the SDK's test plugins are backends
    sdk/contract/* | sdk/test/*) REPLY=kit ;;    # the contract kit: hosts the plugin under test
    sdk/*) REPLY=sdk ;;
    plugins/test/fixtures/*) REPLY=backends ;;   # plugin files for the loader's tests
    plugins/*) REPLY=plugins ;;                  # plugins/isolation included
    placement/*) REPLY=placement ;;
    runtime/test/*) REPLY=runtime-tests ;;
    runtime/*) REPLY=runtime ;;
    tools/*) REPLY=tools ;;
    backends/*/test/*) REPLY=backend-tests ;;
    backends/*) REPLY=backends ;;
    test/plugins/*) REPLY=backends ;;            # the test plugins, one per way to be broken
    test/*) REPLY=test ;;
    bench/*) REPLY=bench ;;
    examples/* | python/*) REPLY=apps ;;
    *) REPLY=none ;;
  esac
}

# What each part may include (its own layer always; "*": anything).
declare -A may_use=(
  [common]="abi common"
  [core]="abi common core portable"                   # portable: builtin_backends.cc registers it
  [portable]="abi common sdk core portable"           # core: its header-only dtype.h, half_float.h, ...
  [sdk]="abi common sdk"
  [kit]="abi common sdk kit core plugins"
  [plugins]="abi common core plugins"
  [placement]="abi common core placement"
  [runtime]="abi common core plugins placement runtime"
  [runtime-tests]="abi common core plugins placement runtime tools"  # models compiled for the tests
  [tools]="abi common core sdk kit plugins placement runtime tools"   # sdk: new-backend's templates
  [backends]="abi common sdk backends"
  [backend-tests]="abi common sdk kit core plugins placement backends test"  # the plugin hosted
  [test]="*"
  [bench]="*"
  [apps]="runtime"                                    # the runtime's public headers
  [none]="*"
)

# Includes the table does not allow yet, each with why; the check names any other.
declare -A known=(
  # Runtime::open of an .onnx file compiles it through tools/compiler (Runtime::compile_onnx),
  # so the runtime links ONNX; the design keeps ONNX a dependency of tools/ alone.
  ["runtime/src/runtime.cc compiler.h"]=1
  # plugrt_tensor_read_npy and _write_npy use the .npy reader of `plugrt run`.
  ["runtime/src/c_api.cc npy.h"]=1
)

set -euo pipefail
cd "$(dirname "$0")/.."

# Which layer a "plugrt/..." header is: the part whose include directory holds it.
include_roots=(common/include:common core/include:core sdk/include:sdk sdk/contract/include:kit
               plugins/include:plugins plugins/isolation/include:plugins placement/include:placement
               runtime/include:runtime)
# Generated headers (build tree) and the layer each belongs to.
declare -A generated=(
  [plugrt/schema/graph_ir_generated.h]=common   # the graph IR, read through plugrt/common/graph_ir.h
  [plugrt/schema/program_generated.h]=core      # the program format
  [plugrt/sdk/templates.h]=sdk                  # sdk/templates/, for `plugrt new-backend`
)

declare -A exists=()
declare -A by_name=()  # file name -> the paths that end in it
while IFS= read -r path; do
  exists["$path"]=1
  by_name["${path##*/}"]+="$path "
done < <(git ls-files --cached --others --exclude-standard)

layer_of_plugrt_header() {  # in REPLY
  local header="$1" entry
  REPLY=unknown
  if [ "$header" = plugrt/plugrt_abi.h ]; then
    REPLY=abi
  elif [ -n "${generated[$header]:-}" ]; then
    REPLY="${generated[$header]}"
  else
    for entry in "${include_roots[@]}"; do
      if [ -n "${exists[${entry%%:*}/$header]:-}" ]; then
        REPLY="${entry##*:}"
        break
      fi
    done
  fi
}

normalize() {  # in REPLY: a/b/../c -> a/c, a/./b -> a/b
  local IFS=/ segment
  local -a out=()
  for segment in $1; do
    case "$segment" in
      . | "") ;;
      ..) [ ${#out[@]} -gt 0 ] && unset 'out[${#out[@]}-1]' ;;
      *) out+=("$segment") ;;
    esac
  done
  REPLY="${out[*]}"
}

allows() {  # allows PART LAYER
  local allowed=" ${may_use[$1]} "
  [[ "$allowed" == *" * "* || "$1" == "$2" || "$allowed" == *" $2 "* ]]
}

violations=0
checked=0
while IFS= read -r line; do
  file="${line%%:*}"
  rest="${line#*:}"
  number="${rest%%:*}"
  [[ "${rest#*:}" =~ \"([^\"]*)\" ]] || continue
  header="${BASH_REMATCH[1]}"
  part_of "$file"
  part="$REPLY"
  checked=$((checked + 1))
  if [[ "$header" == plugrt/* ]]; then
    layer_of_plugrt_header "$header"
    layer="$REPLY"
    if [ "$layer" = unknown ]; then
      echo "$file:$number: \"$header\" is no part's header (check-layers.sh: include_roots, generated)" >&2
      violations=$((violations + 1))
      continue
    fi
    candidates=("$layer")
  else
    # A header beside the file, or found by its include path: the part that holds it.
    normalize "${file%/*}/$header"
    if [ -n "${exists[$REPLY]:-}" ]; then
      part_of "$REPLY"
      candidates=("$REPLY")
    else
      candidates=()
      for path in ${by_name[${header##*/}]:-}; do
        if [[ "$path" == */"$header" || "$path" == "$header" ]]; then
          part_of "$path"
          candidates+=("$REPLY")
        fi
      done
      [ ${#candidates[@]} -eq 0 ] && continue  # generated, or a system header in quotes
    fi
  fi
  ok=0
  for layer in "${candidates[@]}"; do
    allows "$part" "$layer" && ok=1 && break
  done
  [ $ok -eq 1 ] && continue
  [ -n "${known["$file $header"]:-}" ] && continue
  echo "$file:$number: $part may not include \"$header\" (${candidates[0]})" >&2
  violations=$((violations + 1))
done < <(git grep --untracked -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' -- \
           '*.h' '*.hpp' '*.c' '*.cc' '*.cpp' 'sdk/templates/*.in' ':!test/fuzz/corpus')

if [ $violations -gt 0 ]; then
  echo "check-layers: $violations include(s) above break the layer table (scripts/check-layers.sh)" >&2
  exit 1
fi
echo "check-layers: $checked quoted includes follow the layer table"
