#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The hardening jobs, run by CI (.ci/run) after scripts/test.sh (see SECURITY.md,
# "Sanitizers and fuzzing"):
#   format  scripts/check-format.sh: clang-format 14 and the SPDX license lines; and
#         scripts/check-layers.sh: each part includes only the layers it may;
#   asan  the whole tree with AddressSanitizer + UndefinedBehaviorSanitizer (plugins
#         included) in build-asan, without UBSan's null and alignment checks (they cost a
#         quarter of its compile time; a null access still faults under ASan, and the
#         fuzz build below keeps both on the code that reads untrusted bytes), and the
#         ctest suite there but for the three tests that install and build out of tree
#         (they check packaging, which scripts/test.sh does; CMakePresets.json), its
#         differential test on PLUGRT_ASAN_DIFFERENTIAL_GRAPHS random graphs per backend
#         (default 1000, half of the plain build's; the long run below checks far more);
#   tsan  with ThreadSanitizer in build-tsan, only what the concurrency tests need, and
#         the tests named *Concurren*, *Thread* or *Stress*, plus the contract kit's
#         concurrency checks on every backend plugin;
#   fuzz  the libFuzzer targets (clang) in build-fuzz, each run for PLUGRT_FUZZ_SECONDS
#         (default 20), PLUGRT_JOBS at a time, each on its corpus in test/fuzz/corpus/
#         (13 targets: about 2.5 minutes on 2 cores);
#   differential  the differential test's long run (test/differential/README.md): random
#         graphs on each fast backend against portable, PLUGRT_DIFFERENTIAL_LONG_GRAPHS
#         (default 40000 a backend, about a quarter of them quantized; each graph runs on two
#         threads and on one, oneDNN also with its plan for two capped: about 2.5 minutes on
#         oneDNN and 1 on XNNPACK on 2 cores), from seed PLUGRT_DIFFERENTIAL_SEED (default
#         1000000, past the seeds ctest checks), with the build scripts/test.sh made; under
#         CI, within what is left of its budget (run_differential).
# The budget, on 2 cores: scripts/test.sh about 16 minutes, then asan about 26 (build 17,
# ctest 9.5), tsan 3.5, fuzz 8 (build 5.5), and the differential run what is left of 53
# minutes, at least 1: about 56 in all. .ci/run took 63 minutes before the fuzz runs, the
# TSan build and the differential run were cut to fit, then 57 with a deadline of 55;
# .ci/run sets the deadline.
# Sanitizer builds keep line tables only (-g1): enough for every report's stack, and a
# third less compile time and half the disk of full debug information.
# Any sanitizer report, test failure or fuzzer crash fails the script. Arguments choose
# parts (default: format asan tsan fuzz). Sanitizer builds use -O1 and skip the benchmarks
# (CMakePresets.json).
set -euo pipefail
cd "$(dirname "$0")/.."

parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(format asan tsan fuzz differential)
jobs="${PLUGRT_JOBS:-2}"
fuzz_seconds="${PLUGRT_FUZZ_SECONDS:-20}"

# UBSan stops at the first report (also compiled in: -fno-sanitize-recover=all); TSan
# turns any report into a failing exit code. A failed allocation must be handled, as in
# production: malloc and nothrow new return null instead of ending the process, and any
# one allocation over 4 GiB fails, as on a small device (AddressSanitizer would otherwise
# write an eighth of it as shadow memory, however little of it is used).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:strict_init_order=1:allocator_may_return_null=1:max_allocation_size_mb=4096}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan-suppressions.txt}"

timings=()
step() {  # step NAME COMMAND...: runs it, records how long it took, returns its status
  local name="$1" start rc=0
  shift
  echo "=== $name"
  start=$(date +%s)
  "$@" || rc=$?
  timings+=("$name: $(($(date +%s) - start)) s$([ $rc -ne 0 ] && echo ", FAILED ($rc)")")
  return $rc
}

install_clang() {
  local missing=()
  for package in clang-14 libclang-rt-14-dev; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

run_asan() {
  step "asan: configure and build" bash -c "cmake --preset asan >/dev/null && cmake --build --preset asan --parallel $jobs" ||
    return 1
  PLUGRT_DIFFERENTIAL_GRAPHS="${PLUGRT_ASAN_DIFFERENTIAL_GRAPHS:-1000}" \
    step "asan: ctest (all tests)" ctest --preset asan --parallel "$jobs"
}

run_tsan() {
  step "tsan: configure" bash -c "cmake --preset tsan >/dev/null" || return 1
  # The binaries the matching tests live in, and the plugins they load. The backend
  # plugins, their suite (its thread tests) and the stress test are built when the tree
  # has them; the backends' own test binaries hold no matching test.
  local targets=(plugrt_plugin_loading_test plugrt_executor_test plugrt_test_plugins
                 plugrt_contract_runner)
  local target
  for target in $(ninja -C build-tsan -t targets all | sed -n 's/^\(plugrt_\(stress_test\|backend_[a-z0-9]*\)\): phony$/\1/p'); do
    targets+=("$target")
  done
  step "tsan: build ${targets[*]}" cmake --build build-tsan --parallel "$jobs" --target "${targets[@]}" || return 1
  local rc=0 plugin
  step "tsan: ctest -R 'Concurren|Thread|Stress'" ctest --preset tsan --parallel "$jobs" --no-tests=error || rc=1
  for plugin in build-tsan/bin/plugins/libplugrt_*.so build-tsan/core/portable/libplugrt_portable.so; do
    step "tsan: contract kit concurrency checks on $(basename "$plugin")" \
      build-tsan/bin/plugrt-contract-test --plugin "$plugin" --gtest_filter='*Concurrent*:*ThreadSafe*' || rc=1
  done
  return $rc
}

# LeakSanitizer's own tracer sometimes crashes while it stops the threads for the leak
# check at exit ("Tracer caught signal 11", then "LeakSanitizer has encountered a fatal
# error"), after a run that found nothing: the artifact it writes is empty. That is a
# failure of the tool, not a finding; any report of a real error keeps the failure.
lsan_tool_failure() {
  grep -q "LeakSanitizer has encountered a fatal error" "$1" &&
    ! grep -q -e "ERROR: AddressSanitizer" -e "ERROR: LeakSanitizer" -e "ERROR: libFuzzer" -e "runtime error:" "$1"
}

# fuzz_one NAME FUZZER: runs one fuzz target for fuzz_seconds on its seeds; its output goes
# to build-fuzz/fuzz/NAME.log. A failure of LeakSanitizer itself, not a finding, gets one
# more run. Returns the run's status.
fuzz_one() {
  local name="$1" fuzzer="$2" corpus="test/fuzz/corpus/$1" scratch="build-fuzz/fuzz/$1" seeds=() rc=0
  mkdir -p "$scratch" build-fuzz/fuzz/artifacts  # new inputs go to scratch, never the corpus
  [ -d "$corpus" ] && seeds+=("$corpus")
  # A backend's ahead-of-time entries read graph IR: they share that corpus.
  case "$name" in *_aot) seeds+=(test/fuzz/corpus/graph_ir) ;; esac
  # The plugin file reader's seeds are this build's own plugin files.
  [ "$name" = plugin_file ] && seeds+=(build-fuzz/test/plugins/files)
  # Bound what is really used (RSS) rather than what is asked. libFuzzer looks for leaks
  # after each input; LeakSanitizer's own check at exit is left out, as its tracer
  # crashes there at times (a crash of the tool, not a finding).
  local run=("$fuzzer" -max_total_time="$fuzz_seconds" -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=1048576
             -print_final_stats=1 -artifact_prefix="build-fuzz/fuzz/artifacts/$name-" "$scratch" "${seeds[@]}")
  ASAN_OPTIONS="$ASAN_OPTIONS:leak_check_at_exit=0" "${run[@]}" > "build-fuzz/fuzz/$name.log" 2>&1 || rc=$?
  if [ $rc -ne 0 ] && lsan_tool_failure "build-fuzz/fuzz/$name.log"; then
    echo "=== fuzz: $name again (LeakSanitizer's own tracer crashed at exit)"
    rc=0
    ASAN_OPTIONS="$ASAN_OPTIONS:leak_check_at_exit=0" "${run[@]}" > "build-fuzz/fuzz/$name.log" 2>&1 || rc=$?
  fi
  return $rc
}

# Each fuzz target runs on one core: $jobs of them run at a time.
run_fuzzers() {
  install_clang || return 1
  step "fuzz: configure and build" bash -c "cmake --preset fuzz >/dev/null && cmake --build --preset fuzz --parallel $jobs" ||
    return 1
  local failed=() fuzzer name names=() start
  start=$(date +%s)
  for fuzzer in build-fuzz/test/fuzz/plugrt_*_fuzzer; do
    name="$(basename "$fuzzer")"
    name="${name#plugrt_}"
    name="${name%_fuzzer}"
    names+=("$name")
    echo "=== fuzz: $name for ${fuzz_seconds} s"
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    (rc=0; fuzz_one "$name" "$fuzzer" || rc=$?; echo $rc > "build-fuzz/fuzz/$name.status") &
  done
  wait
  timings+=("fuzz: ${#names[@]} targets, ${fuzz_seconds} s each, $jobs at a time: $(($(date +%s) - start)) s")
  for name in "${names[@]}"; do
    [ "$(cat "build-fuzz/fuzz/$name.status" 2>/dev/null)" = 0 ] || failed+=("$name")
  done
  # A failing run's report is printed again at the end, where a truncated CI log still shows it.
  if [ ${#failed[@]} -gt 0 ]; then
    for name in "${failed[@]}"; do
      echo "=== fuzz: $name failed; the end of build-fuzz/fuzz/$name.log:" >&2
      sed -E -e '/^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)/d' \
        -e '/^###### Recommended dictionary/,/^###### End of recommended dictionary/d' \
        "build-fuzz/fuzz/$name.log" | tail -n 60 >&2
    done
    echo "fuzzers that crashed: ${failed[*]} (inputs in build-fuzz/fuzz/artifacts/)" >&2
    return 1
  fi
}

# The long differential run stops at its graph count or, when PLUGRT_CI_DEADLINE is set
# (seconds since the epoch; .ci/run sets it), when each backend has had its half of the
# time left before it, and never less than PLUGRT_DIFFERENTIAL_MIN_SECONDS (default 30).
run_differential() {
  local build="${PLUGRT_BUILD_DIR:-build}" graphs="${PLUGRT_DIFFERENTIAL_LONG_GRAPHS:-40000}" backend rc=0
  local runner="$build/test/differential/plugrt_differential" backends=(onednn xnnpack) limit=() i
  local least="${PLUGRT_DIFFERENTIAL_MIN_SECONDS:-30}" seconds=""
  step "differential: build" cmake --build "$build" --parallel "$jobs" --target plugrt_differential_run || return 1
  mkdir -p "$build/differential-failures"
  for i in "${!backends[@]}"; do
    if [ -n "${PLUGRT_CI_DEADLINE:-}" ]; then  # the backends still to run share what is left
      seconds=$(((PLUGRT_CI_DEADLINE - $(date +%s)) / (${#backends[@]} - i)))
      [ "$seconds" -lt "$least" ] && seconds="$least"
      limit=(--seconds "$seconds")
    fi
    step "differential: ${backends[$i]}, $graphs graphs${seconds:+ or $seconds s}" "$runner" \
      --backend "${backends[$i]}" --graphs "$graphs" "${limit[@]}" --seed "${PLUGRT_DIFFERENTIAL_SEED:-1000000}" \
      --failures "$build/differential-failures" || rc=1
  done
  return $rc
}

status=0
for part in "${parts[@]}"; do
  case "$part" in
    format)
      step "format: clang-format and license lines" scripts/check-format.sh || status=1
      step "format: what each part includes (layers)" scripts/check-layers.sh || status=1 ;;
    asan) run_asan || status=1 ;;
    tsan) run_tsan || status=1 ;;
    fuzz) run_fuzzers || status=1 ;;
    differential) run_differential || status=1 ;;
    *) echo "unknown part '$part' (format, asan, tsan, fuzz, differential)" >&2; exit 2 ;;
  esac
done
echo "=== times"
printf '  %s\n' "${timings[@]}"
exit "$status"
