#!/usr/bin/env bash
# bench_cpu.sh — the CPU benchmark: nntrain's fast backend, its reference backend and
# PyTorch CPU side by side in one run, from the same initial weights, on
#   1. the reference experiment (configs/peaks.json: 40,000 samples, 2→20→5→1 relu,
#      Adam lr 0.08, 2000 full-batch epochs), and
#   2. a wide net, 2→256→256→1 on the same 40,000 samples (a few epochs; no reference run:
#      the plain loops would take minutes per epoch),
# and prints times, ratios and GFLOP/s against the machine's nominal peak; and
#   3. (--minibatch, or --minibatch-only) the mini-batch table: batches 256…4096 of the
#      reference experiment on 1 thread and on all threads, shuffled (the default) and not,
#      GFLOP/s and % of the FMA peak that bench/fma_peak.c measures in the same run;
#      then the kernels' bound on each whole-chunk batch (nntrain_kernel_bound, built next
#      to nntrain: what the kernels alone allow a step, and how close the steps come to it).
#
#   scripts/bench/bench_cpu.sh [--reps N] [--wide-epochs N] [--no-reference] [--blas-sweep]
#                        [--minibatch | --minibatch-only] [--epochs-mb N]
#
# --reps N        repeats of each nntrain fast timing (min and median reported; default 5)
# --wide-epochs N epochs of the wide net per timing (default 3)
# --no-reference  skip the ~22 s reference-backend run
# --blas-sweep    also time hidden widths 64…256 with and without OpenBLAS (the switch point)
# --minibatch     also the mini-batch table (~1 min); --minibatch-only: only it and the
#                 full batch on 1 and all threads (no PyTorch needed)
# --epochs-mb N   epochs per mini-batch timing (default 100; min of --reps in-process repeats)
#
# NNTRAIN=path/to/nntrain times another build (e.g. the previous commit's, for an A/B).
#
# Needs build/nntrain (scripts/build.sh) and Debian's python3-torch (scripts/bootstrap.sh
# --torch): PyTorch runs under /usr/bin/python3, not whatever python3 is first on PATH.
# The machine may be shared: every figure is a min (and median) of repeats, and the load
# average is printed with the results.
set -euo pipefail
cd "$(dirname "$0")/../.."

reps=5
wide_epochs=3
run_reference=1
blas_sweep=0
minibatch=0
epochs_mb=100
while (($#)); do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --wide-epochs) wide_epochs="$2"; shift 2 ;;
    --no-reference) run_reference=0; shift ;;
    --blas-sweep) blas_sweep=1; shift ;;
    --minibatch) minibatch=1; shift ;;
    --minibatch-only) minibatch=2; shift ;;
    --epochs-mb) epochs_mb="$2"; shift 2 ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "bench_cpu.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

NNTRAIN=${NNTRAIN:-./build/nntrain}
PY=/usr/bin/python3
[[ -x $NNTRAIN ]] || { echo "bench_cpu.sh: $NNTRAIN not built (run scripts/build.sh)" >&2; exit 1; }
if ((minibatch < 2)); then
  $PY -c "import torch" 2>/dev/null || { echo "bench_cpu.sh: $PY has no torch (scripts/bootstrap.sh --torch; or --minibatch-only)" >&2; exit 1; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
WIDE="model.layers=[2,256,256,1]"

echo "bench_cpu.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "bench_cpu.sh: nntrain $NNTRAIN, $("$NNTRAIN" --version 2>/dev/null | head -1 || echo unknown) (checkout $(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown))" >&2

if ((minibatch)); then
  # The FMA peak, measured now (1 thread and all), then the mini-batch table.
  cc -O2 -o "$tmp/fma_peak" bench/fma_peak.c -lpthread
  "$tmp/fma_peak" 1 5 >"$tmp/peak_1.json"
  "$tmp/fma_peak" "$(nproc)" 5 >"$tmp/peak_all.json"
  # The kernels alone, hot cache (bench/kernel_bound.cpp): a 256-sample chunk, the reduction
  # and Adam, a core-to-core round trip. Before and after the table, as the FMA loop: each
  # figure is the lower of the two (a bound measured while another tenant held the core came
  # out ~30 % slower than the steps measured next to it, 2026-11-28).
  bound_bin=$(dirname "$NNTRAIN")/nntrain_kernel_bound
  kernel_bound() {  # kernel_bound FILE
    if [[ ! -x $bound_bin ]]; then
      echo "{}" >"$1"
    elif ! "$bound_bin" >"$1"; then
      echo "bench_cpu.sh: $bound_bin failed: no kernels' floor in this run" >&2
      echo "{}" >"$1"
    fi
  }
  kernel_bound "$tmp/bound.json"
  $NNTRAIN --config configs/peaks.json --epochs 0 --save-model "$tmp/init_mb.json" --out "$tmp/init_mb_run" --quiet >/dev/null
  echo "mini-batches (each: $epochs_mb epochs, min of $reps in-process repeats):" >&2
  for th in 1 "$(nproc)"; do
    # Warm-up as long as one repeat: on these VMs a new process's 2-thread steps ran at 1-thread
    # speed for their first ~30-60 ms (5 warm-up epochs did not cover it:
    # docs/journal/2026-11-issue14-cpu-minibatch.md, "Fourth round").
    nnmb() { $NNTRAIN --config configs/peaks.json --device cpu --backend fast --quiet --json --init-model "$tmp/init_mb.json" \
               --threads "$th" timing.repeats="$reps" timing.warmup_epochs="$epochs_mb" "$@"; }
    echo "  $th thread(s): full batch" >&2
    nnmb train.epochs=$((epochs_mb * 4)) >"$tmp/mb_full_$th.json"
    for shuffle in true false; do
      for bs in 256 384 512 1024 2048 4096; do
        echo "  $th thread(s): batch $bs, shuffle $shuffle" >&2
        nnmb train.epochs="$epochs_mb" train.batch_size="$bs" train.shuffle="$shuffle" >"$tmp/mb_${bs}_${shuffle}_$th.json"
      done
    done
  done
  "$tmp/fma_peak" 1 5 >"$tmp/peak_1b.json"
  "$tmp/fma_peak" "$(nproc)" 5 >"$tmp/peak_allb.json"
  kernel_bound "$tmp/bound_b.json"
  $PY - "$tmp" "$(nproc)" "$bound_bin" <<'EOF2'
import json, os, sys
tmp, n, bound_bin = sys.argv[1], sys.argv[2], sys.argv[3]
def load(name):
    with open(os.path.join(tmp, name + ".json")) as f:
        j = json.load(f)
    return j["runs"][0] if "runs" in j else j
def peak(name):
    return json.load(open(os.path.join(tmp, name + ".json")))["gflops"]
# The FMA loop before and after the table: the higher of the two counts (the machine's
# speed drifts on a shared host; the lower bound on efficiency is the honest one).
p1 = max(peak("peak_1"), peak("peak_1b"))
pn = max(peak("peak_all"), peak("peak_allb"))
flops_per_sample = 2.0 * ((2*20 + 20*5 + 5*1) + (2*20 + 20*5 + 5*1) + (20*5 + 5*1))
print(f"## Mini-batches: reference experiment (40,000 samples, 2→20→5→1 relu, Adam), fast backend")
print()
print(f"FMA peak measured in this run (bench/fma_peak.c, the higher of before/after the table): "
      f"1 thread {peak('peak_1'):.0f}/{peak('peak_1b'):.0f} GFLOP/s, {n} threads {peak('peak_all'):.0f}/{peak('peak_allb'):.0f} GFLOP/s")
print()
print(f"| batch | shuffle | 1 thread: µs/step | GFLOP/s | % of peak | {n} threads: µs/step | GFLOP/s | % of peak | {n} vs 1 |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
over = 0.0
rows = [("full", "-")] + [(bs, sh) for sh in ("true", "false") for bs in (256, 384, 512, 1024, 2048, 4096)]
for bs, sh in rows:
    cells = []
    times = []
    for th, pk in (("1", p1), (n, pn)):
        r = load(f"mb_full_{th}" if bs == "full" else f"mb_{bs}_{sh}_{th}")
        t = r.get("train_seconds_min", r["train_seconds"])
        steps = r["epochs"] * (1 if bs == "full" else -(-r["samples"] // bs))
        g = flops_per_sample * r["samples"] * r["epochs"] / t / 1e9
        times.append(t)
        cells += [f"{t / steps * 1e6:.2f}", f"{g:.1f}", f"{100 * g / pk:.0f}"]
        over = max(over, 100 * g / pk)
    print(f"| {bs} | {sh} | " + " | ".join(cells) + f" | {times[0] / times[1]:.2f}× |")
print()
if over > 100:
    # The training loop cannot beat a loop that does nothing but FMAs: the peak is wrong
    # (scripts/bench/check_fma_peak.sh checks one known cause, chains spilled to the stack).
    print(f"**Warning: a step ran at {over:.0f} % of the measured FMA peak. The FMA loop measured "
          f"less than the machine can do, so every % of peak above is too high; do not report them.**")
    print()
r = load(f"mb_1024_true_{n}")
print(f"- fast backend ({n} threads, batch 1024): {r['details']}")
r = load(f"mb_256_true_{n}")
print(f"- fast backend ({n} threads, batch 256): {r['details']}")
print()
# The kernels' bound: a step of C chunks on t threads takes at least ceil(C/t) chunks, plus
# the reduction and Adam of C slots (shared: / t), plus one core-to-core round trip when
# t > 1 (the step must reach the other cores and their slots come back), each measured alone
# with a hot cache. A lower bound on the step, so an upper bound on its % of the peak. Only
# batches cut into whole 256-sample chunks (cpu_fast_partition.hpp: 512, 1024, … are 2, 4, …).
def lower(x, y):  # each figure of two bound runs: the lower (a dict: key by key)
    if isinstance(x, dict):
        return {k: lower(x[k], y[k]) if k in y else x[k] for k in x}
    return min(x, y) if isinstance(x, (int, float)) and isinstance(y, (int, float)) else x
b0 = json.load(open(os.path.join(tmp, "bound.json")))
b1 = json.load(open(os.path.join(tmp, "bound_b.json")))
b = lower(b0, b1) if b0 and b1 else (b0 or b1)
if not b:
    print(f"No kernels' bound: {bound_bin} is not built, or it failed (stderr says which).")
    sys.exit(0)
chunk, adam, rtt = b["chunk_ns"] / 1e3, b["adam_ns"], b.get("round_trip_ns", 0.0) / 1e3
byc = b.get("forward_ns_by_cols", {})
print(f"### The kernels' bound ({b['isa']}, bench/kernel_bound.cpp, hot cache, one core)")
print()
if b0 and b1:
    print(f"(Each figure the lower of two runs, before and after the table: the chunk "
          f"{b0['chunk_ns'] / 1e3:.3f} / {b1['chunk_ns'] / 1e3:.3f} µs.)")
    print()
print(f"A 256-sample chunk {chunk:.3f} µs = {flops_per_sample * 256 / chunk / 1e3:.1f} GFLOP/s, "
      f"{100 * flops_per_sample * 256 / chunk / 1e3 / p1:.0f} % of the 1-thread FMA peak (forward {b['forward_ns'] / 1e3:.3f}"
      + (f" — blocks of 1/2 vectors {byc['1'] / 1e3:.3f}/{byc['2'] / 1e3:.3f}" if '2' in byc else "")
      + f", backward {b['backward_ns'] / 1e3:.3f}, lane sums {b['lanes_ns'] / 1e3:.3f}); reduction and Adam of 1/4/16 slots "
      f"{adam['1'] / 1e3:.3f}/{adam['4'] / 1e3:.3f}/{adam['16'] / 1e3:.3f} µs; core-to-core round trip "
      + (f"{rtt * 1e3:.0f} ns." if "round_trip_ns" in b else "not measured (1 CPU)."))
print()
print(f"| batch | chunks | threads | bound: µs/step | bound: % of peak | measured (unshuffled): % of peak | measured ÷ bound | 75 % of peak needs: µs/step |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
for bs, chunks in ((256, 1), (512, 2), (1024, 4), (2048, 8), (4096, 16)):
    for th, pk in ((1, p1), (int(n), pn))[: 1 if n == "1" else 2]:
        if th > 1 and chunks == 1:
            continue  # (a one-chunk batch runs on the calling thread alone)
        t = min(th, chunks)
        bound = -(-chunks // t) * chunk + adam[str(chunks)] / 1e3 / t + (rtt if t > 1 else 0.0)
        gb = flops_per_sample * bs / bound / 1e3
        # (measured as throughput: 40,000 samples leave a smaller last batch in each epoch)
        r = load(f"mb_{bs}_false_{th}")
        gm = flops_per_sample * r["samples"] * r["epochs"] / r.get("train_seconds_min", r["train_seconds"]) / 1e9
        print(f"| {bs} | {chunks} | {th} | {bound:.2f} | {100 * gb / pk:.0f} | {100 * gm / pk:.0f} | {gm / gb:.2f} | "
              f"{flops_per_sample * bs / (0.75 * pk) / 1e3:.2f} |")
EOF2
  if ((minibatch == 2)); then
    echo "bench_cpu.sh: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    exit 0
  fi
fi

# Initial weights, written once, read by every run.
$NNTRAIN --config configs/peaks.json --epochs 0 --save-model "$tmp/init.json" --out "$tmp/init_run" --quiet >/dev/null
$NNTRAIN --config configs/peaks.json "$WIDE" --epochs 0 --save-model "$tmp/init_wide.json" --out "$tmp/init_wide_run" \
  --quiet >/dev/null

nn() {  # nn NAME ARGS... : one nntrain run, summary JSON to $tmp/NAME.json
  local name=$1; shift
  echo "  nntrain $*" >&2
  $NNTRAIN --config configs/peaks.json --device cpu --quiet --json --out "$tmp/run_$name" "$@" >"$tmp/$name.json"
}
torch_run() {  # torch_run NAME ARGS...
  local name=$1; shift
  echo "  torch_peer.py --device cpu $*" >&2
  $PY scripts/bench/torch_peer.py --device cpu "$@" >"$tmp/$name.json"
}

echo "reference experiment:" >&2
nn fast --backend fast --init-model "$tmp/init.json" timing.repeats="$reps"
nn fast1 --backend fast --threads 1 --init-model "$tmp/init.json" timing.repeats="$reps"
if ((run_reference)); then nn reference --backend reference --init-model "$tmp/init.json"; fi
torch_run torch --model "$tmp/init.json" --grid 200 --epochs 2000 --lr 0.08

echo "wide net 2→256→256→1:" >&2
nn wide_fast --backend fast --init-model "$tmp/init_wide.json" "$WIDE" train.epochs="$wide_epochs" \
  timing.warmup_epochs=1 timing.repeats="$reps"
torch_run wide_torch --model "$tmp/init_wide.json" --grid 200 --epochs "$wide_epochs" --warmup 1 --lr 0.08

if ((blas_sweep)); then
  echo "BLAS switch point (hidden width w: 2→w→w→1, 1 thread, OpenBLAS on / off):" >&2
  for w in 64 96 128 160 192 256; do
    e=$((w >= 128 ? 2 : 10))
    for mode in blas simd; do
      # blas: only the w×w layer through sgemm (min(in, out) >= w); simd: no layer.
      min=$([[ $mode == blas ]] && echo "$w" || echo 1000000)
      NNTRAIN_FAST_BLAS_MIN=$min nn "sweep_${w}_$mode" --backend fast --threads 1 "model.layers=[2,$w,$w,1]" \
        train.epochs=$e timing.warmup_epochs=1 timing.repeats="$reps"
    done
  done
fi

$PY - "$tmp" "$run_reference" "$blas_sweep" <<'EOF'
import json, os, sys
tmp, run_ref, sweep = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
def load(name):
    with open(os.path.join(tmp, name + ".json")) as f:
        j = json.load(f)
    return j["runs"][0] if "runs" in j else j

def matmul_flops(widths, samples):
    # 2 flops per multiply-add: forward W·a, weight gradient δ·aᵀ, and Wᵀ·δ for every layer
    # but the first. Activations, the loss and Adam are not counted (a few % here).
    macs = sum(i * o for i, o in zip(widths, widths[1:]))
    back = macs + sum(i * o for i, o in zip(widths[1:], widths[2:]))
    return 2.0 * samples * (macs + back)

def peak_gflops():
    mhz = 0.0
    flags = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("cpu MHz") and not mhz:
                mhz = float(line.split(":")[1])
            if line.startswith("flags") and not flags:
                flags = line
    lanes = 16 if " avx512f" in flags else 8 if " avx2" in flags else 4
    # 2 FMA pipes per core (Zen 4, Sapphire Rapids Xeon), 2 flops per lane per FMA.
    return os.cpu_count() * 2 * lanes * 2 * mhz / 1e3, mhz, lanes

peak, mhz, lanes = peak_gflops()
fast, torch_ = load("fast"), load("torch")
flops = matmul_flops([2, 20, 5, 1], fast["samples"]) * fast["epochs"]
print(f"## CPU benchmark ({os.cpu_count()} CPUs, {mhz:.0f} MHz nominal, {lanes}-lane FMA: "
      f"nominal peak {peak:.0f} GFLOP/s = CPUs x 2 FMA pipes x {lanes} lanes x 2 flops x clock)")
print()
print(f"Reference experiment: {fast['samples']} samples, 2→20→5→1 relu, {fast['epochs']} full-batch Adam epochs, "
      f"{flops / fast['epochs'] / 1e6:.1f} MFLOP/epoch of multiply-adds")
print()
print("| run | threads | train time | per epoch | GFLOP/s | % of peak | final loss |")
print("|---|---:|---:|---:|---:|---:|---:|")
def row(label, t, threads, epochs, f, loss):
    print(f"| {label} | {threads} | {t:.3f} s | {t / epochs * 1e3:.3f} ms | {f / t / 1e9:.1f} | "
          f"{100 * f / t / 1e9 / peak:.1f} | {loss:.6g} |")
tf_min, tf_med = fast["train_seconds_min"] if "train_seconds_min" in fast else fast["train_seconds"], fast["train_seconds"]
row(f"nntrain fast (min of {len(fast.get('train_seconds_repeats', [0]))})", tf_min, fast["threads"], fast["epochs"], flops, fast["final_loss"])
row("nntrain fast (median)", tf_med, fast["threads"], fast["epochs"], flops, fast["final_loss"])
f1 = load("fast1")
t1_min = f1.get("train_seconds_min", f1["train_seconds"])
row("nntrain fast, 1 thread (min)", t1_min, f1["threads"], f1["epochs"], flops, f1["final_loss"])
if run_ref:
    ref = load("reference")
    row("nntrain reference", ref["train_seconds"], ref["threads"], ref["epochs"], flops, ref["final_loss"])
row(f"PyTorch {torch_['torch']} CPU", torch_["train_seconds"], torch_["threads"], torch_["epochs"], flops, torch_["final_loss"])
print()
print(f"- fast vs PyTorch: **{torch_['train_seconds'] / tf_min:.1f}x** (min), {torch_['train_seconds'] / tf_med:.1f}x (median); "
      f"thread for thread (both 1): {torch_['train_seconds'] / t1_min:.1f}x")
print(f"- fast: 1 → {fast['threads']} threads: {t1_min / tf_min:.2f}x; bit-identical final loss: "
      f"{'yes' if f1['final_loss'] == fast['final_loss'] else 'NO'}")
if run_ref:
    print(f"- fast vs reference: **{ref['train_seconds'] / tf_min:.1f}x** (min); reference vs PyTorch: "
          f"{torch_['train_seconds'] / ref['train_seconds']:.2f}x")
print(f"- initial loss: fast {fast['initial_loss']:.9g}, PyTorch {torch_['initial_loss']:.9g}")

wf, wt = load("wide_fast"), load("wide_torch")
wflops = matmul_flops([2, 256, 256, 1], wf["samples"]) * wf["epochs"]
print()
print(f"Wide net: {wf['samples']} samples, 2→256→256→1 relu, {wf['epochs']} full-batch epochs, "
      f"{wflops / wf['epochs'] / 1e9:.2f} GFLOP/epoch of multiply-adds")
print()
print("| run | threads | per epoch | GFLOP/s | % of peak |")
print("|---|---:|---:|---:|---:|")
wmin = wf.get("train_seconds_min", wf["train_seconds"])
for label, t, th in ((f"nntrain fast (min of {len(wf.get('train_seconds_repeats', [0]))})", wmin, wf["threads"]),
                     ("nntrain fast (median)", wf["train_seconds"], wf["threads"]),
                     (f"PyTorch {wt['torch']} CPU", wt["train_seconds"], wt["threads"])):
    print(f"| {label} | {th} | {t / wf['epochs'] * 1e3:.1f} ms | {wflops / t / 1e9:.1f} | {100 * wflops / t / 1e9 / peak:.1f} |")
print()
print(f"- fast vs PyTorch: **{wt['train_seconds'] / wmin:.1f}x** (min), {wt['train_seconds'] / wf['train_seconds']:.1f}x (median)")
print(f"- fast backend: {wf['details']}")

if sweep:
    print()
    print("BLAS switch point: 2→w→w→1, 40,000 samples, 1 thread, ms per epoch (min of repeats)")
    print()
    print("| hidden width w | OpenBLAS sgemm | SIMD kernels | BLAS / SIMD |")
    print("|---:|---:|---:|---:|")
    for w in (64, 96, 128, 160, 192, 256):
        b, s = load(f"sweep_{w}_blas"), load(f"sweep_{w}_simd")
        tb = b.get("train_seconds_min", b["train_seconds"]) / b["epochs"] * 1e3
        ts = s.get("train_seconds_min", s["train_seconds"]) / s["epochs"] * 1e3
        print(f"| {w} | {tb:.2f} | {ts:.2f} | {tb / ts:.2f} |")
EOF
echo "bench_cpu.sh: load average at the end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
