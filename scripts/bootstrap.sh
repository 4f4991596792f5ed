#!/usr/bin/env bash
# bootstrap.sh — installs what nntrain needs to build and test, from Debian's packages.
# Safe to run twice: it installs only what is missing, and runs apt-get update only then.
#   scripts/bootstrap.sh            build + test dependencies (and matplotlib for the plots)
#   scripts/bootstrap.sh --torch    also python3-torch, for the PyTorch peer benchmarks
set -euo pipefail

pkgs=(cmake ninja-build g++ git ccache libcli11-dev nlohmann-json3-dev libfmt-dev catch2 libopenblas-dev
      python3 python3-numpy python3-matplotlib
      clang-14 libclang-rt-14-dev)  # scripts/ci-hardening.sh: sanitizers and libFuzzer (only Recommended by clang-14)
if [[ "${1:-}" == "--torch" ]]; then pkgs+=(python3-torch); fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "bootstrap: all dependencies present"
  exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "bootstrap: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
