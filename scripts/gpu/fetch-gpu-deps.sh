#!/usr/bin/env bash
# fetch-gpu-deps.sh — downloads (here, where Debian's mirrors are reachable) the .deb files the
# lent GPU machine needs to build nntrain, into .deps/debs (git-ignored). On the GPU machine,
# scripts/gpu/gpu-check.sh unpacks them with `dpkg -x` into build-gpu-deps/ (never into /) and points
# CMAKE_PREFIX_PATH there. Name `.deps` in the device tool's `carry`.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .deps/debs
cd .deps/debs
pkgs=(libcli11-dev nlohmann-json3-dev libfmt-dev libfmt9 catch2 libopenblas-dev libopenblas-pthread-dev
      libopenblas0 libopenblas0-pthread libgfortran5)
if ! apt-get download "${pkgs[@]}" 2>/dev/null; then
  apt-get update -qq
  apt-get download "${pkgs[@]}"
fi
ls -la
du -sh .
