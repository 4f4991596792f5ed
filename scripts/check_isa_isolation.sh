#!/usr/bin/env bash
# check_isa_isolation.sh BINARY — fails if any function outside the fast backend's per-ISA
# kernel namespaces uses AVX/AVX-512 registers. The per-ISA units are compiled with -mavx2 /
# -mavx512f (the VBMI shuffle's with -mavx512vbmi too); if one of them instantiated an inline
# function shared with baseline code, the linker could keep the AVX-512 copy and the binary
# would crash on a CPU without it (docs/ARCHITECTURE.md, "Runtime ISA dispatch"). Run by ctest.
set -euo pipefail
bin=${1:?usage: check_isa_isolation.sh BINARY}
command -v objdump >/dev/null || { echo "check_isa_isolation.sh: objdump not found (binutils)" >&2; exit 1; }
leaks=$(objdump -d --no-show-raw-insn -C "$bin" |
  awk '/^[0-9a-f]+ <.*>:$/ {fn = $0} /%zmm|%ymm/ { if (!(fn in seen)) { seen[fn] = 1; print fn } }' |
  grep -v -e 'nntrain::fast::isa_avx512::' -e 'nntrain::fast::isa_avx512_vbmi::' -e 'nntrain::fast::isa_avx2::' ||
  true)
if [[ -n $leaks ]]; then
  echo "check_isa_isolation.sh: AVX/AVX-512 code outside the per-ISA kernels in $bin:" >&2
  echo "$leaks" >&2
  exit 1
fi
kernels=$(objdump -d --no-show-raw-insn -C "$bin" | grep -c '^[0-9a-f]* <nntrain::fast::isa_avx512::' || true)
echo "check_isa_isolation.sh: ok ($kernels AVX-512 kernel functions, none elsewhere)"
