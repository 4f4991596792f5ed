#!/usr/bin/env bash
# bench_threads.sh — the fast CPU backend across thread counts, one build or two side by side
# (an A/B of a change that should matter on big machines, run on the machine that has them).
#
#   scripts/bench/bench_threads.sh [--threads 1,2,4,8,16] [--batches full,4096,1024,4096s]
#                            [--epochs N] [--reps N] [--rounds N] [--pin] [--out DIR]
#                            NNTRAIN [NNTRAIN_B]
#
# The reference experiment (configs/peaks.json, 40,000 samples, 2→20→5→1, Adam) from the same
# initial weights; a batch is `full`, a size (unshuffled rows) or a size with `s` (shuffled).
# Each cell (batch, threads) is timed as the minimum of --reps in-process repeats (default 3)
# of --epochs epochs (default 300; the full batch 4× that), after as long a warm-up. Every
# round (default 3) runs each cell with A then B, the next round B then A, so that a drift of
# the machine falls on both. Threads default to 1, 2, 4, … up to the CPU count, and it.
# Where nntrain_region_cost sits beside a binary (bench/region_cost.cpp), its cost of one
# parallel region is timed in each round too (REGIONS regions a timing, default 20,000). --pin runs each cell of t threads on CPUs
# 1 … t (taskset; 0 … t-1 when t is the CPU count), so that A and B run on the same cores: for
# telling a change from the host's placement noise, not for the figures users would see.
# Prints µs per step, every round, the median, and B ÷ A of the medians; the raw figures go to
# DIR/threads.jsonl (default: a temporary folder, removed). The load average is printed
# before and after. A measurement tool: it asserts nothing about the figures.
set -euo pipefail
cd "$(dirname "$0")/../.."

threads="" batches="full,4096,1024" epochs=300 reps=3 rounds=3 out="" pin=0
while (($#)); do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --pin) pin=1; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    -*) echo "bench_threads.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
(($# >= 1 && $# <= 2)) || { echo "usage: scripts/bench/bench_threads.sh [options] NNTRAIN [NNTRAIN_B]" >&2; exit 2; }
bins=("$@")
for b in "${bins[@]}"; do [[ -x $b ]] || { echo "bench_threads.sh: $b is not an executable" >&2; exit 2; }; done
if [[ -z $threads ]]; then
  n=$(nproc) t=1 threads=""
  while ((t < n)); do threads+="$t,"; t=$((t * 2)); done
  threads+="$n"
fi
if [[ -z $out ]]; then out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; else mkdir -p "$out"; fi
IFS=, read -r -a T <<<"$threads"
IFS=, read -r -a B <<<"$batches"
multi=""  # the thread counts above 1 (nntrain_region_cost's)
for t in "${T[@]}"; do ((t > 1)) && multi+="${multi:+,}$t"; done

echo "bench_threads.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!bins[@]}"; do echo "  $([ "$i" = 0 ] && echo A || echo B): ${bins[$i]} ($("${bins[$i]}" --version 2>/dev/null | head -1))"; done
"${bins[0]}" --config configs/peaks.json --epochs 0 --save-model "$out/init.json" --out "$out/init_run" --quiet >/dev/null

: >"$out/threads.jsonl"
for ((r = 1; r <= rounds; r++)); do
  order=(0 1)
  ((r % 2 == 0)) && order=(1 0)
  for i in "${order[@]}"; do
    ((i < ${#bins[@]})) || continue
    bin=${bins[$i]}
    region=$(dirname "$bin")/nntrain_region_cost
    if [[ -x $region && -n $multi ]]; then
      "$region" --threads "$multi" --reps 3 --regions "${REGIONS:-20000}" | sed "s/^{/{\"round\": $r, \"bin\": $i, \"kind\": \"region\", /" >>"$out/threads.jsonl"
    fi
    for b in "${B[@]}"; do
      args=() e=$epochs
      case $b in
        full) e=$((epochs * 4)) ;;
        *s) args=(train.batch_size="${b%s}" train.shuffle=true) ;;
        *) args=(train.batch_size="$b" train.shuffle=false) ;;
      esac
      for th in "${T[@]}"; do
        pinned=()
        if ((pin)); then
          first=$((th < $(nproc) ? 1 : 0))
          pinned=(taskset -c "$first-$((first + th - 1))")
        fi
        j=$("${pinned[@]}" "$bin" --config configs/peaks.json --device cpu --backend fast --quiet --json --init-model "$out/init.json" \
              --out "$out/run" --threads "$th" train.epochs="$e" timing.repeats="$reps" timing.warmup_epochs="$e" "${args[@]}")
        python3 -c 'import json,sys; j=json.loads(sys.argv[1]); r=j["runs"][0] if "runs" in j else j
steps=r["epochs"]*(-(-40000//int(sys.argv[5])) if sys.argv[5]!="0" else 1)
print(json.dumps({"round":int(sys.argv[2]),"bin":int(sys.argv[3]),"kind":"train","batch":sys.argv[4],"threads":int(sys.argv[6]),"busy":r["threads"],
  "us_per_step":1e6*min(r.get("train_seconds_repeats",[r["train_seconds"]]))/steps,"final_loss":r["final_loss"],"details":r.get("details","")}))' \
          "$j" "$r" "$i" "$b" "$( [[ $b == full ]] && echo 0 || echo "${b%s}")" "$th" >>"$out/threads.jsonl"
      done
    done
  done
  echo "  round $r done ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
done
echo "bench_threads.sh: done, load average $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$out/threads.jsonl" "${#bins[@]}" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
nb = int(sys.argv[2])
def cells(kind, key):
    out = {}
    for r in rows:
        if r["kind"] == kind:
            out.setdefault(key(r), {}).setdefault(r["bin"], []).append(r)
    return out
def line(label, per_bin, field):
    parts, med = [label], []
    for b in range(nb):
        v = [x[field] for x in sorted(per_bin.get(b, []), key=lambda x: x["round"])]
        parts.append(" / ".join(f"{x:.2f}" for x in v) if v else "-")
        med.append(statistics.median(v) if v else None)
        parts.append(f"{med[-1]:.2f}" if v else "-")
    if nb == 2 and med[0] and med[1]:
        parts.append(f"{med[1] / med[0]:.3f}")
    print("| " + " | ".join(parts) + " |")
hdr = ["A, rounds", "A median"] + (["B, rounds", "B median", "B ÷ A"] if nb == 2 else [])
train = cells("train", lambda r: (r["batch"], r["threads"]))
for batch in dict.fromkeys(k[0] for k in train):
    print(f"\nbatch {batch}: µs per step (min of the in-process repeats)\n")
    print("| threads | " + " | ".join(hdr) + " |")
    print("|---:|" + "---|" * len(hdr))
    one = {}
    for (b, t), per_bin in sorted(((k, v) for k, v in train.items() if k[0] == batch), key=lambda kv: kv[0][1]):
        line(str(t), per_bin, "us_per_step")
    losses = {round(r["final_loss"], 12) for r in rows if r["kind"] == "train" and r["batch"] == batch}
    print(f"\nfinal losses of batch {batch} over every thread count, build and round: "
          + ("one value, bit for bit the same" if len(losses) == 1 else f"{len(losses)} different values: {sorted(losses)}"))
region = cells("region", lambda r: r["threads"])
for field, what in (("step_ns", "a step-like region (each thread reports, thread 0 waits for all)"),
                    ("empty_ns", "an empty region")):
    if not region:
        break
    print(f"\nnntrain_region_cost, {what}: ns (min of 3)\n")
    print("| threads | " + " | ".join(hdr) + " |")
    print("|---:|" + "---|" * len(hdr))
    for t, per_bin in sorted(region.items()):
        line(str(t), per_bin, field)
EOF
