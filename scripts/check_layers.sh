#!/usr/bin/env bash
# check_layers.sh — the folders' arrows point down (docs/ARCHITECTURE.md): app/ may include
# anything; core/ only core/ (and the generated build_info.hpp); kernels/cpu/ and
# kernels/cuda/ only their own folder and core/. Also: no file in app/, core/ or kernels/
# over 500 lines. Run by CTest (layers_point_down); prints each violation and exits 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
check() {  # check FOLDER ALLOWED_FOLDER...
  local dir=$1; shift
  local f inc ok a
  for f in "$dir"/*; do
    [[ -f $f ]] || continue
    while IFS= read -r inc; do
      ok=0
      [[ $inc == build_info.hpp ]] && ok=1
      for a in "$@"; do [[ -f $a/$inc ]] && ok=1; done
      if ((ok == 0)); then
        echo "check_layers: $f includes \"$inc\", which is not in: $*" >&2
        bad=1
      fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
  done
}
check core core
check kernels/cpu kernels/cpu core
check kernels/cuda kernels/cuda core
while IFS= read -r f; do
  n=$(wc -l < "$f")
  if ((n > 500)); then echo "check_layers: $f has $n lines (keep app/, core/ and kernels/ files under 500)" >&2; bad=1; fi
done < <(find app core kernels -type f | sort)
if ((bad)); then exit 1; fi
echo "check_layers: core includes only core; kernels/cpu and kernels/cuda only themselves and core; app/, core/ and kernels/ files under 500 lines"
