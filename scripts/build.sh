#!/usr/bin/env bash
# build.sh — configure and build nntrain (Release) into build/. CUDA is used when nvcc is
# on PATH (or in /usr/local/cuda/bin); otherwise the build is CPU-only and says so.
# C++ and CUDA compiles go through ccache where it is installed (NNTRAIN_CCACHE=0: not), with
# paths relative to the tree: scripts/mutants.sh's and scripts/gpusim-check.sh's builds of
# the same units with the same flags are then cache hits (CI runs all three on one machine),
# and so is every unchanged unit on a machine that ran CI before.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
BUILD_DIR="${BUILD_DIR:-build}"
launcher=(--no-warn-unused-cli -DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_CUDA_COMPILER_LAUNCHER=)
if [[ "${NNTRAIN_CCACHE:-1}" != 0 ]] && command -v ccache >/dev/null 2>&1; then
  launcher=(--no-warn-unused-cli -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  CCACHE_BASEDIR="$(pwd)"
  export CCACHE_BASEDIR CCACHE_NOHASHDIR=1
fi
# shellcheck disable=SC2086  # CMAKE_ARGS is a list of arguments
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "${launcher[@]}" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" --parallel "$(nproc)"
