#!/usr/bin/env bash
# test.sh — fresh machine to passing tests: install dependencies, build, run every test.
# GPU tests report "skipped: no CUDA device" where there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure --parallel "$(nproc)" --no-tests=error
