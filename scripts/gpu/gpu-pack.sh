#!/usr/bin/env bash
# gpu-pack.sh — builds nntrain for the lent GPU machine here (sm_$ARCH, Release, in build-gpu/)
# and puts what scripts/gpu/gpu-check.sh and gpu-profile.sh need into .devrun/ (git-ignored): nntrain,
# nntrain_gpu_tests, nntrain_kernel_bound, nntrain_region_cost, nntrain_grid_barrier, and the
# shared libraries they need that a CUDA machine image lacks
# (libfmt; cuBLAS comes from the machine's toolkit). Device time is short, so the device
# builds nothing: carry .devrun and run  NNTRAIN_PREBUILT=.devrun scripts/gpu/gpu-check.sh  there.
# The machine's driver must support this nvcc's CUDA version (it says so at the first call).
set -euo pipefail
cd "$(dirname "$0")/../.."
ARCH=${ARCH:-90}
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCH" >/dev/null
cmake --build build-gpu --parallel "$(nproc)" --target nntrain nntrain_gpu_tests nntrain_kernel_bound nntrain_region_cost \
  nntrain_grid_barrier
rm -rf .devrun
mkdir -p .devrun/lib
cp build-gpu/nntrain build-gpu/tests/nntrain_gpu_tests build-gpu/nntrain_kernel_bound build-gpu/nntrain_region_cost \
  build-gpu/nntrain_grid_barrier .devrun/
strip .devrun/nntrain .devrun/nntrain_gpu_tests .devrun/nntrain_kernel_bound .devrun/nntrain_region_cost \
  .devrun/nntrain_grid_barrier
# Libraries outside glibc, libstdc++/libgcc and CUDA: copied (resolving the links).
ldd build-gpu/nntrain build-gpu/tests/nntrain_gpu_tests | awk '/=> \// {print $1, $3}' | sort -u |
  while read -r name path; do
    case $name in
      libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|libstdc++.so*|libgcc_s.so*|ld-linux*) ;;
      libcublas*|libcudart*|libcuda.so*) ;;
      *) cp -L "$path" ".devrun/lib/$name" ;;
    esac
  done
echo "built $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs' || echo '+changes') for sm_$ARCH," \
     "$(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/CUDA \1/p'), $(date -u '+%Y-%m-%d %H:%M UTC')" >.devrun/BUILT
ls -la .devrun .devrun/lib
du -sh .devrun
