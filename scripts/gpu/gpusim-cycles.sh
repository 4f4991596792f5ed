#!/usr/bin/env bash
# gpusim-cycles.sh — simulated cycles per kernel of the fused paths, on GPGPU-Sim's
# performance mode (docs/GPU.md, docs/BENCHMARKS.md). A relative measure for comparing
# kernel versions on one config of a Turing-class GPU (SM75, RTX 2060 config), never a time
# for a real GPU; the host's load does not change it.
#
#   scripts/gpu/gpusim-cycles.sh fused|resident [key.path=value ...]
#   scripts/gpu/gpusim-cycles.sh resident-per-epoch [key.path=value ...]
#
# resident runs every epoch of a train() call in one launch: its cycles per epoch are the
# difference between runs with EPOCHS=6 and EPOCHS=2, over 4 (docs/GPU.md);
# `resident-per-epoch` runs both (in parallel) and prints that figure.
#
# Runs `nntrain train --config configs/small_data.json --device gpu --gpu-path PATH
# --epochs ${EPOCHS:-2} timing.warmup_epochs=0 [overrides]` from build-sim/ (build it first:
# scripts/gpusim-check.sh, or the same cmake line) in a scratch folder whose gpgpusim.config
# says -gpgpu_ptx_sim_mode 0, and prints each kernel's gpu_sim_cycle, instruction count and
# IPC. The kernels of the last epoch are the figure to report (the first launch of a graph
# may differ). Env: NNTRAIN_GPGPUSIM_PREFIX (default ~/.cache/nntrain/gpgpusim), BUILD_DIR;
# GPUSIM_SMS=N: a config of N SMs instead of 30 (a scaled-down GPU, to put several groups of
# the resident grid on each SM as 40,000 samples do on an H200's 132); GPUSIM_SHMEM_KB=96:
# 96 KiB of shared memory per SM instead of 64 (three 31 KiB blocks of the exact grid's
# narrow size side by side, as an H200's registers allow; 64 KiB hold two).
set -eo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PREFIX=${NNTRAIN_GPGPUSIM_PREFIX:-$HOME/.cache/nntrain/gpgpusim}
BUILD=${BUILD_DIR:-$ROOT/build-sim}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
if [ $# -lt 1 ] || [ ! -x "$BUILD/nntrain" ] || [ ! -f "$PREFIX/env.sh" ]; then
  echo "usage: $0 fused|resident|resident-per-epoch [key.path=value ...]  (needs $BUILD/nntrain and $PREFIX/env.sh)" >&2
  exit 2
fi
path=$1
shift
if [ "$path" = resident-per-epoch ]; then
  # The train launch is the second resident kernel (the first is the backend's warm-up epoch).
  run() { EPOCHS=$1 "$0" resident "${@:2}" | awk '/^resident/ {n++; if (n == 2) print $2, $3}'; }
  run 2 "$@" >"${TMPDIR:-/tmp}/gpusim-cycles.$$.2" &
  read -r c6 i6 < <(run 6 "$@")
  wait
  read -r c2 i2 <"${TMPDIR:-/tmp}/gpusim-cycles.$$.2"
  rm -f "${TMPDIR:-/tmp}/gpusim-cycles.$$.2"
  if [ -z "$c2" ] || [ -z "$c6" ]; then echo "gpusim-cycles: a resident run failed" >&2; exit 1; fi
  echo "resident launch of 2 epochs: $c2 cycles, $i2 thread-instructions; of 6: $c6, $i6"
  echo "resident per epoch (SIMULATED): $(((c6 - c2) / 4)) cycles, $(((i6 - i2) / 4)) thread-instructions"
  exit 0
fi
RUN=$(mktemp -d "${TMPDIR:-/tmp}/gpusim-cycles.XXXXXX")
trap 'rm -rf "$RUN"' EXIT
cp "$PREFIX"/simcfg/* "$RUN"/
sed -i 's/^-gpgpu_ptx_sim_mode 1/-gpgpu_ptx_sim_mode 0/' "$RUN/gpgpusim.config"
grep -q '^-gpgpu_ptx_sim_mode 0' "$RUN/gpgpusim.config" || echo '-gpgpu_ptx_sim_mode 0' >>"$RUN/gpgpusim.config"
if [ -n "${GPUSIM_SMS:-}" ]; then sed -i "s/^-gpgpu_n_clusters .*/-gpgpu_n_clusters $GPUSIM_SMS/" "$RUN/gpgpusim.config"; fi
if [ -n "${GPUSIM_SHMEM_KB:-}" ]; then
  sed -i -e "s/^-gpgpu_shmem_option .*/-gpgpu_shmem_option 32,64,$GPUSIM_SHMEM_KB/" \
    -e "s/^-gpgpu_shmem_size .*/-gpgpu_shmem_size $((GPUSIM_SHMEM_KB * 1024))/" \
    -e "s/^-gpgpu_shmem_sizeDefault .*/-gpgpu_shmem_sizeDefault $((GPUSIM_SHMEM_KB * 1024))/" \
    -e "s/^-gpgpu_unified_l1d_size .*/-gpgpu_unified_l1d_size $((GPUSIM_SHMEM_KB + 32))/" "$RUN/gpgpusim.config"
fi
# shellcheck disable=SC1091
(cd "$RUN" && set +u && source "$PREFIX/env.sh" &&
  "$BUILD/nntrain" train --config "$ROOT/configs/small_data.json" --device gpu --gpu-path "$path" \
    --epochs "${EPOCHS:-2}" timing.warmup_epochs=0 "$@") >"$RUN/log.txt" 2>&1 || {
  tail -20 "$RUN/log.txt"
  exit 1
}
echo "kernel cycles thread-instructions ipc"
grep -E '^kernel_name|^gpu_sim_cycle|^gpu_sim_insn|^gpu_ipc' "$RUN/log.txt" | paste - - - - |
  while read -r _ _ name _ _ cycles _ _ insn _ _ ipc; do
    short=$(echo "$name" | c++filt | sed -e 's/(anonymous namespace):://g' -e 's/nntrain::cuda:://g' -e 's/(.*//' -e 's/^void //' -e 's/ //g')
    echo "$short $cycles $insn $ipc"
  done
