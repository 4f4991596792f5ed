#!/usr/bin/env bash
# sweep_example.sh — a hyperparameter sweep from the shell: learning rates × hidden widths,
# one JSON line per run (JSONL), using `nntrain --json` and its exit codes.
#
#   scripts/sweep_example.sh [OUT.jsonl]          (default: runs/sweep/results.jsonl)
#
# Environment: NNTRAIN (binary, default build/nntrain), CONFIG (configs/peaks.json),
# LRS ("0.01 0.1 1"), WIDTHS ("8 32"), OPTIMIZER (sgd), EPOCHS (200), GRID (20), DEVICE (cpu).
# The defaults are small and include a run that diverges (plain SGD at lr 1 with width 32):
# nntrain exits 4 for it, the sweep records {"exit_code": 4, "status": "diverged", ...}
# and goes on. Exit 2 or 3 (bad config, no device) stops the sweep: every later run would
# fail the same way. The script's exit code is 0 when the sweep completed.
set -uo pipefail
cd "$(dirname "$0")/.."
NNTRAIN=${NNTRAIN:-build/nntrain}
CONFIG=${CONFIG:-configs/peaks.json}
LRS=${LRS:-"0.01 0.1 1"}
WIDTHS=${WIDTHS:-"8 32"}
OPTIMIZER=${OPTIMIZER:-sgd}
EPOCHS=${EPOCHS:-200}
GRID=${GRID:-20}
DEVICE=${DEVICE:-cpu}
OUT=${1:-runs/sweep/results.jsonl}
[[ -x $NNTRAIN ]] || { echo "sweep_example.sh: $NNTRAIN not found; build first (scripts/build.sh)" >&2; exit 1; }
mkdir -p "$(dirname "$OUT")"
runs_dir=$(dirname "$OUT")/runs
tmp="$OUT.tmp"
: >"$tmp"

# One JSON line from a run's summary (stdin) and the sweep's own fields.
summarise() {
  python3 -c '
import json, sys
lr, width, rc, out = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
text = sys.stdin.read()
row = {"lr": lr, "width": width, "exit_code": rc, "output_dir": out}
try:
    run = json.loads(text)["runs"][0]
    row.update({k: run.get(k) for k in ("device", "backend", "status", "epochs", "initial_loss", "final_loss",
                                       "train_seconds", "samples_per_second", "diverged_epoch")})
except (ValueError, KeyError, IndexError):
    row["status"] = "no summary"
print(json.dumps(row))
' "$@"
}

n=0 failed=0
for lr in $LRS; do
  for w in $WIDTHS; do
    dir="$runs_dir/lr${lr}_w${w}"
    rm -rf "$dir"
    summary=$("$NNTRAIN" --config "$CONFIG" --device "$DEVICE" --json --quiet --lr "$lr" --epochs "$EPOCHS" \
              --out "$dir" "data.grid=$GRID" "model.layers=[2,$w,$w,1]" "optimizer.type=$OPTIMIZER")
    rc=$?
    case $rc in
      0) ;;
      4) failed=$((failed + 1)); echo "sweep: lr $lr width $w diverged (exit 4); recorded, going on" >&2 ;;
      2|3) echo "sweep: lr $lr width $w: nntrain exit $rc (usage or device); stopping the sweep" >&2
           rm -f "$tmp"; exit "$rc" ;;
      *) failed=$((failed + 1)); echo "sweep: lr $lr width $w: nntrain exit $rc; recorded, going on" >&2 ;;
    esac
    printf '%s' "$summary" | summarise "$lr" "$w" "$rc" "$dir" >>"$tmp"
    n=$((n + 1))
  done
done
mv "$tmp" "$OUT"
echo "sweep: $n runs ($failed did not finish) -> $OUT" >&2
column_view() {
  python3 -c '
import json, sys
print("%-8s %-6s %-5s %-9s %-12s %-10s" % ("lr", "width", "exit", "status", "final_loss", "seconds"))
for line in open(sys.argv[1]):
    r = json.loads(line)
    fl = r.get("final_loss")
    print("%-8g %-6d %-5d %-9s %-12s %-10s" % (r["lr"], r["width"], r["exit_code"], r.get("status"),
          "-" if fl is None else "%.6g" % fl, "-" if r.get("train_seconds") is None else "%.4f" % r["train_seconds"]))
' "$1"
}
column_view "$OUT"
