#!/usr/bin/env python3
"""stamps_summary.py FILE: the resident grid's stamps (NNTRAIN_RESIDENT_STAMPS=FILE, written by
the stamped kernel, kernels/cuda/resident_stamps.cuh) as one table: per phase of a step, the
blocks' least, median and most cycles per step, and the same in ns by each block's own ratio
of %globaltimer ns to %clock64 cycles over its launches' step loops.

A block's row is its thread 0's: the group stage is the block's own work; a grid.sync wait is
what it waited for the slowest block plus the barrier itself, so the least wait is the closest
to the barrier alone; the exchange is thread 0's warp's owned parameters (none in most blocks
of a large grid).
Under GPGPU-Sim %globaltimer is the host's clock: the ns columns are then left out.
Exit 0, or 2 where the file is missing or not the stamps' CSV.
"""
import csv
import statistics
import sys

PHASES = [("group stage", "group_stage_cycles"), ("grid.sync 1 wait", "grid_sync1_cycles"),
          ("exchange", "exchange_cycles"), ("grid.sync 2 wait", "grid_sync2_cycles"),
          ("weight copy", "weight_copy_cycles")]
COLUMNS = [c for _, c in PHASES] + ["steps", "loop_cycles", "loop_ns"]


def main(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        blocks = [{k: int(r[k]) for k in COLUMNS} for r in rows]
    except (OSError, ValueError, TypeError, KeyError) as e:
        print(f"stamps_summary: {path}: {e}", file=sys.stderr)
        return 2
    if not blocks or any(b["steps"] < 1 or b["loop_cycles"] < 1 for b in blocks):
        print(f"stamps_summary: {path}: no blocks, or a block with no step", file=sys.stderr)
        return 2
    ghz = [b["loop_cycles"] / b["loop_ns"] if b["loop_ns"] > 0 else 0.0 for b in blocks]
    real = all(0.2 < g < 5.0 for g in ghz)  # a GPU's SM clock; the simulator's host clock is not
    steps = sorted({b["steps"] for b in blocks})
    print(f"resident grid stamps: {len(blocks)} blocks, {'/'.join(map(str, steps))} steps each ({path})")
    head = f"{'phase':18} {'cycles/step: least':>19} {'median':>8} {'most':>8}"
    print(head + (f"   {'ns/step: least':>15} {'median':>8} {'most':>8}" if real else ""))

    def line(name, per_block):
        cyc = [c / b["steps"] for c, b in zip(per_block, blocks)]
        out = f"{name:18} {min(cyc):19.0f} {statistics.median(cyc):8.0f} {max(cyc):8.0f}"
        if real:
            ns = [c / g for c, g in zip(cyc, ghz)]
            out += f"   {min(ns):15.1f} {statistics.median(ns):8.1f} {max(ns):8.1f}"
        print(out)

    for name, col in PHASES:
        line(name, [b[col] for b in blocks])
    line("step (the sum)", [sum(b[c] for _, c in PHASES) for b in blocks])
    line("step loop / steps", [b["loop_cycles"] for b in blocks])
    if real:
        print(f"SM clock over the launches: {statistics.median(ghz):.3f} GHz (median of the blocks; "
              f"{min(ghz):.3f}-{max(ghz):.3f})")
    else:
        print("%globaltimer is not a GPU's here (the simulator): cycles only")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: stamps_summary.py FILE", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
