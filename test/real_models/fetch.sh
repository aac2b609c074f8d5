#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches the real-model corpus into the build tree and prepares its inputs and ONNX
# Runtime's reference outputs; check_models.py (ctest's plugrt_real_models_test) then
# compiles and runs them with plugrt.
#
#   test/real_models/fetch.sh [WORK_DIR]     (default: ${PLUGRT_BUILD_DIR:-build}/real-models)
#
# 1. Debian packages for the inputs (espeak-ng, sox, python3-numpy, python3-pil,
#    fonts-dejavu-core; nodejs and npm when there is no npm), with apt-get when missing.
# 2. Each npm package of manifest.toml at its exact version: `npm pack` downloads the
#    tarball alone (not the package's dependencies, such as onnxruntime-web, which the
#    corpus does not use), its sha512 integrity is checked against the manifest's, and it
#    is extracted into WORK_DIR/packages/. About 40 MB.
# 3. onnxruntime-node (`npm install --ignore-scripts`, the CPU library it ships; about
#    115 MB to download) into WORK_DIR/ort/.
# 4. prepare.py: the inputs and the reference outputs (a few seconds).
# Each step is skipped when its result is already there, so a second run does nothing.
# Exits 77 when npm cannot reach its registry and something is missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
work="${1:-${PLUGRT_BUILD_DIR:-$repo/build}/real-models}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
python=/usr/bin/python3

say() { echo "real-models: $*"; }

install_debian_packages() {
  local packages=(espeak-ng sox python3-numpy python3-pil fonts-dejavu-core) missing=()
  command -v npm >/dev/null || packages+=(nodejs npm)
  for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]} (apt-get)"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Exits 77 (ctest's skip) when the registry cannot be reached.
require_registry() {
  [ -n "${registry_checked:-}" ] && return 0
  local answer
  local ping=(npm ping --fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-timeout=30000)
  if ! answer="$(cd "$work" && timeout 90 "${ping[@]}" 2>&1)"; then
    say "npm cannot reach its registry, so the corpus cannot be fetched:" \
      "$(echo "$answer" | grep -m 1 -E 'FetchError|npm error' || echo "$answer" | tail -n 1)"
    exit 77
  fi
  registry_checked=1
}

# fetch_package NAME VERSION INTEGRITY DIR: npm pack, check, extract into DIR.
fetch_package() {
  local name="$1" version="$2" integrity="$3" dir="$4"
  if [ "$(cat "$dir/integrity" 2>/dev/null)" = "$integrity" ]; then
    say "$name@$version: already there"
    return 0
  fi
  require_registry
  say "$name@$version: npm pack"
  local tmp
  tmp="$(mktemp -d "$work/pack.XXXXXX")"
  (cd "$tmp" && npm pack --json --silent "$name@$version" >pack.json)
  local got
  got="$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["integrity"])' "$tmp/pack.json")"
  if [ "$got" != "$integrity" ]; then
    say "$name@$version: integrity $got is not the manifest's $integrity" >&2
    rm -rf "$tmp"
    exit 1
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  tar -xzf "$tmp"/*.tgz -C "$dir"
  echo "$integrity" >"$dir/integrity"
  rm -rf "$tmp"
}

fetch_packages() {
  local name version integrity dir
  while read -r name version integrity dir; do
    fetch_package "$name" "$version" "$integrity" "$dir"
  done < <("$python" -c '
import sys; sys.path.insert(0, sys.argv[1]); import corpus
for name, p in corpus.load_manifest()["package"].items():
    print(name, p["version"], p["integrity"], corpus.package_dir(sys.argv[2], name))' "$here" "$work")
}

fetch_onnxruntime() {
  local spec version
  spec="$("$python" -c 'import sys; sys.path.insert(0, sys.argv[1]); import corpus
print(corpus.load_manifest()["check"]["onnxruntime"])' "$here")"
  version="${spec##*@}"
  local installed="$work/ort/node_modules/onnxruntime-node/package.json"
  if [ -f "$installed" ] && grep -q "\"version\": \"$version\"" "$installed"; then
    say "$spec: already there"
    return 0
  fi
  require_registry
  say "$spec: npm install --ignore-scripts"
  mkdir -p "$work/ort"
  (cd "$work/ort" && npm install --prefix "$work/ort" --ignore-scripts --no-audit --no-fund --silent "$spec")
}

install_debian_packages
fetch_packages
fetch_onnxruntime
if "$python" -c 'import sys; sys.path.insert(0, sys.argv[1]); import corpus
sys.exit(0 if corpus.is_prepared(sys.argv[2]) else 1)' "$here" "$work"; then
  say "inputs and reference outputs: already there"
else
  say "inputs and reference outputs: prepare.py"
  "$python" "$here/prepare.py" --work-dir "$work"
fi
say "ready in $work"
