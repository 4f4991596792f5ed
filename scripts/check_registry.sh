#!/usr/bin/env bash
# check_registry.sh — app/ reaches the devices only through the backend registry
# (app/backend_registry.hpp): no file in app/ but backend_registry.{hpp,cpp} includes a
# header of kernels/cpu/ or kernels/cuda/. Run by CTest (app_uses_registry); prints each
# violation and exits 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
for f in app/*; do
  [[ -f $f ]] || continue
  case ${f##*/} in backend_registry.hpp | backend_registry.cpp) continue ;; esac
  while IFS= read -r inc; do
    for d in kernels/cpu kernels/cuda; do
      if [[ -f $d/$inc || -f $d/${inc##*/} && $inc == */* ]]; then
        echo "check_registry: $f includes \"$inc\" from $d/; ask the backend registry (app/backend_registry.hpp) instead" >&2
        bad=1
      fi
    done
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^">]*\)[">].*/\1/p' "$f")
done
if ((bad)); then exit 1; fi
echo "check_registry: app/ includes kernels/ headers only in backend_registry.{hpp,cpp}"
