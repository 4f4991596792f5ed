#!/usr/bin/env bash
# run-reference.sh — fresh machine to the reference experiment (docs/DESIGN.md §1) on the CPU.
# Extra arguments go to nntrain, e.g. `scripts/run-reference.sh --device both`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build.sh
exec ./build/nntrain --config configs/peaks.json --device cpu "$@"
