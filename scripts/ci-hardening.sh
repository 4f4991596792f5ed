#!/usr/bin/env bash
# ci-hardening.sh — the hardening checks CI runs after scripts/test.sh (CPU-only builds, each
# in its own folder so the normal build/ is untouched):
#   (a) the whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer
#       (NNTRAIN_SANITIZE=ON), run with halt_on_error and leak detection;
#   (b) the whole test suite built with ThreadSanitizer (NNTRAIN_TSAN=ON): the fast backend's
#       thread pool, chunk claiming and reductions run with 1, 2 and 3 threads in-process, and
#       every CLI test runs the (sanitized) binary on all cores;
#   (c) the libFuzzer targets (NNTRAIN_FUZZ=ON, clang): config parser and CSV reader, each
#       for FUZZ_SECONDS (default 60) from the seed corpora configs/ and data/, the two at
#       the same time (one core each: the same fuzzing as one after the other, in half the
#       wall time).
# All three build with line tables only (-gline-tables-only: a report's stack still names
# file and line; full debug info made a kernel unit's compile ~10 % slower). (a) and (b) compile the
# kernel units this CPU cannot run (AVX-512 ones on a CPU without it) at -O0, uninstrumented
# (NNTRAIN_RUNNABLE_ONLY): their code never runs here. kernels/cpu/CMakeLists.txt says which
# UBSan checks the kernel units leave out, and why: with them, their instrumented compiles
# were the longest steps of CI.
# C++ compiles go through ccache where installed (NNTRAIN_CCACHE=0: not), paths relative to
# the tree, as scripts/build.sh: on a machine that ran CI before, an unchanged unit is a hit.
# Each step prints its seconds and the load average (CI's time is the sum of these).
# Exits non-zero on any sanitizer report, failing test or fuzzer finding. A finding's input
# is saved as build-fuzz/findings/<target>/crash-* (reproduce: run the target on that file).
# Environment: FUZZ_SECONDS (60), JOBS (2), CXX_CLANG (clang++-14 or clang++), SKIP_ASAN=1,
# SKIP_TSAN=1, SKIP_FUZZ=1, ASAN_BUILD_DIR (build-asan), TSAN_BUILD_DIR (build-tsan),
# FUZZ_BUILD_DIR (build-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
JOBS="${JOBS:-2}"
ASAN_BUILD_DIR="${ASAN_BUILD_DIR:-build-asan}"
FUZZ_BUILD_DIR="${FUZZ_BUILD_DIR:-build-fuzz}"
TSAN_BUILD_DIR="${TSAN_BUILD_DIR:-build-tsan}"
# RelWithDebInfo with line tables instead of full debug info (above).
LINES=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG")
CXX_CLANG="${CXX_CLANG:-$(command -v clang++-14 || command -v clang++ || true)}"
LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=)
if [[ "${NNTRAIN_CCACHE:-1}" != 0 ]] && command -v ccache >/dev/null 2>&1; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  CCACHE_BASEDIR="$(pwd)"
  export CCACHE_BASEDIR CCACHE_NOHASHDIR=1
fi
t_step=$SECONDS
# Tests that run no code of ours a sanitizer instruments (source greps, the disassembly check,
# the FMA loop's compile, the Python plots; the nntrain runs of the last are other tests'
# too): scripts/test.sh has run them; here they only cost time (~25 s of ASan's ~200).
NOT_SANITIZED='^(isa_isolation|fma_peak_no_spills|layers_point_down|mutant_patterns_apply|plot_scripts_write_pngs)$'
took() {  # took WHAT: the seconds since the last call, and the load
  echo "-- ci-hardening: $1 took $((SECONDS - t_step)) s (load $(cut -d' ' -f1 /proc/loadavg))"
  t_step=$SECONDS
}
if [[ -z "$CXX_CLANG" ]]; then
  echo "ci-hardening: clang++ not found (scripts/bootstrap.sh installs clang-14)" >&2
  exit 1
fi

# Every report is fatal; leaks are reported; UBSan prints where.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:exitcode=86"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=87"
export LSAN_OPTIONS="exitcode=88"

if [[ "${SKIP_ASAN:-0}" != 1 ]]; then
  echo "== ci-hardening: ASan+UBSan test suite ($ASAN_BUILD_DIR, $CXX_CLANG)"
  cmake -S . -B "$ASAN_BUILD_DIR" -G Ninja -DNNTRAIN_WITH_CUDA=OFF -DNNTRAIN_SANITIZE=ON \
    -DNNTRAIN_RUNNABLE_ONLY=ON "${LINES[@]}" "${LAUNCHER[@]}" -DCMAKE_CXX_COMPILER="$CXX_CLANG" >/dev/null
  cmake --build "$ASAN_BUILD_DIR" --parallel "$JOBS"
  took "ASan+UBSan build"
  # The tests run the (sanitized) nntrain binary as a child: a report there gives exit
  # 86/87/88, which no test accepts, so it fails the test that ran it.
  ctest --test-dir "$ASAN_BUILD_DIR" --output-on-failure --parallel "$JOBS" --no-tests=error -E "$NOT_SANITIZED"
  took "ASan+UBSan tests"
fi

if [[ "${SKIP_TSAN:-0}" != 1 ]]; then
  echo "== ci-hardening: ThreadSanitizer test suite ($TSAN_BUILD_DIR, $CXX_CLANG)"
  cmake -S . -B "$TSAN_BUILD_DIR" -G Ninja -DNNTRAIN_WITH_CUDA=OFF -DNNTRAIN_TSAN=ON \
    -DNNTRAIN_RUNNABLE_ONLY=ON "${LINES[@]}" "${LAUNCHER[@]}" -DCMAKE_CXX_COMPILER="$CXX_CLANG" >/dev/null
  cmake --build "$TSAN_BUILD_DIR" --parallel "$JOBS"
  took "TSan build"
  # A report aborts the test (in-process) or gives exit 89 (the binary as a child), which no
  # test accepts.
  TSAN_OPTIONS="halt_on_error=1:exitcode=89:second_deadlock_stack=1" \
    ctest --test-dir "$TSAN_BUILD_DIR" --output-on-failure --parallel "$JOBS" --no-tests=error -E "$NOT_SANITIZED"
  took "TSan tests"
fi

if [[ "${SKIP_FUZZ:-0}" != 1 ]]; then
  echo "== ci-hardening: libFuzzer targets, ${FUZZ_SECONDS}s each ($FUZZ_BUILD_DIR)"
  cmake -S . -B "$FUZZ_BUILD_DIR" -G Ninja -DNNTRAIN_WITH_CUDA=OFF -DNNTRAIN_FUZZ=ON -DNNTRAIN_BUILD_TESTS=OFF \
    "${LINES[@]}" "${LAUNCHER[@]}" -DCMAKE_CXX_COMPILER="$CXX_CLANG" >/dev/null
  cmake --build "$FUZZ_BUILD_DIR" --parallel "$JOBS" --target nntrain_fuzz_config nntrain_fuzz_csv
  took "fuzz build"
  status=0
  declare -A fuzz_pid=()
  for target in config csv; do
    seeds=configs
    [[ "$target" == csv ]] && seeds=data
    work="$FUZZ_BUILD_DIR/corpus/$target"
    findings="$FUZZ_BUILD_DIR/findings/$target"
    mkdir -p "$work" "$findings"
    echo "-- fuzz_$target (seeds: $seeds/)"
    # New inputs go to $work (kept between runs, so coverage accumulates); seeds are read only.
    "$FUZZ_BUILD_DIR/tests/fuzz/nntrain_fuzz_$target" -max_total_time="$FUZZ_SECONDS" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" "$work" "$seeds" \
      >"$findings/log.txt" 2>&1 &
    fuzz_pid[$target]=$!
  done
  for target in config csv; do
    findings="$FUZZ_BUILD_DIR/findings/$target"
    if ! wait "${fuzz_pid[$target]}"; then
      echo "ci-hardening: fuzz_$target found a problem; last lines of $findings/log.txt:" >&2
      tail -n 40 "$findings/log.txt" >&2
      status=1
    else
      grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" "$findings/log.txt" || true
    fi
  done
  took "fuzzing (both targets at once)"
  if ((status != 0)); then exit "$status"; fi
fi
echo "== ci-hardening: all checks passed"
