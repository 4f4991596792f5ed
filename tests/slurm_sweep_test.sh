#!/usr/bin/env bash
# slurm_sweep_test.sh NNTRAIN SOURCE_DIR — `nntrain sweep --launcher slurm` against a real
# one-node Slurm: scripts/slurm-local.sh installs (once) and starts it, the test submits the
# 6-point acceptance sweep (lr x widths, one point diverging) as a job array, waits for it,
# collects it and checks the table: 5 ok + 1 diverged, exit code 4, every row run by Slurm;
# then a sweep cancelled mid-run (scancel) and resumed by the command collect prints: ok.
#
# Exit 77 (CTest: skipped) with the reason where Slurm cannot run here (not root, packages
# not installable); any other problem is a failure with a message saying which step. Daemons
# this test started are stopped at the end, so a second run starts from the same state.
set -uo pipefail
NNTRAIN=${1:?usage: slurm_sweep_test.sh NNTRAIN SOURCE_DIR}
SRC=${2:?usage: slurm_sweep_test.sh NNTRAIN SOURCE_DIR}
JOB_LIMIT=${SLURM_TEST_JOB_SECONDS:-180}
SLURM_LOCAL="$SRC/scripts/slurm-local.sh"
fail() { echo "slurm_sweep_test: FAIL: $*" >&2; exit 1; }

t0=$SECONDS
started_here=0
"$SLURM_LOCAL" status 2>/dev/null || started_here=1
timeout 300 "$SLURM_LOCAL" start
rc=$?
case $rc in
  0) ;;
  77) echo "slurm_sweep_test: SKIPPED: the local Slurm cannot run here (reason above)" >&2; exit 77 ;;
  124) fail "scripts/slurm-local.sh start did not finish within 300 s" ;;
  *) fail "scripts/slurm-local.sh start failed (exit $rc): the local Slurm did not come up" ;;
esac
echo "slurm_sweep_test: local Slurm up after $((SECONDS - t0)) s" >&2
eval "$("$SLURM_LOCAL" env)"

work=$(mktemp -d /tmp/nntrain-slurm-test.XXXXXX)
job=""
cleanup() {
  [[ -n $job ]] && scancel "$job" 2>/dev/null
  rm -rf "$work"
  ((started_here)) && "$SLURM_LOCAL" stop
}
trap cleanup EXIT
out="$work/sweep"

cd "$SRC" || fail "cannot cd to $SRC"
# The acceptance sweep of tests/test_sweep.cpp (which says why exactly one point diverges).
job=$("$NNTRAIN" sweep --config configs/peaks.json --quiet data.grid=10 train.epochs=300 timing.warmup_epochs=0 \
        --grid optimizer.lr=0.01,0.1,1 --grid 'model.layers=[2,4,1],[2,64,64,64,1]' \
        --launcher slurm --jobs 2 --slurm-arg=--time=5 --out "$out") || fail "sweep --launcher slurm did not submit"
[[ $job =~ ^[0-9]+$ ]] || fail "sweep --launcher slurm printed \"$job\", not a job id"
grep -q -- '--array=0-5%2' "$out/sweep.sbatch" || fail "the batch script has no --array=0-5%2"

# wait_job JOB: until Slurm no longer lists it (ran, failed or cancelled).
wait_job() {
  local t1=$SECONDS
  while [[ -n $(squeue -h -j "$1" 2>/dev/null) ]]; do
    if ((SECONDS - t1 > JOB_LIMIT)); then
      squeue -j "$1" >&2
      fail "job $1 still queued or running after $JOB_LIMIT s"
    fi
    sleep 1
  done
  echo "slurm_sweep_test: job $1 ended after about $((SECONDS - t1)) s" >&2
}
wait_job "$job"
submitted=$job
job=""

"$NNTRAIN" sweep --collect "$out"
rc=$?
[[ $rc == 4 ]] || { tail -n 5 "$out"/points/*/train.log >&2; fail "collect exit code $rc, expected 4 (all finished, one diverged)"; }
n_ok=$(grep -c ',ok,cpu,' "$out/results.csv")
n_div=$(grep -c ',diverged,cpu,' "$out/results.csv")
n_slurm=$(grep -c ',slurm,' "$out/results.csv")
[[ $n_ok == 5 && $n_div == 1 ]] || fail "expected 5 ok + 1 diverged rows, got $n_ok ok + $n_div diverged"
[[ $n_slurm == 6 ]] || fail "expected all 6 rows run by Slurm (timing \"slurm\"), got $n_slurm"
grep -q "\"array_job_id\": \"$submitted\"" "$out/points/000/sweep-run.json" ||
  fail "point 0's sweep-run.json does not name array job $submitted"
echo "slurm_sweep_test: the acceptance sweep: 5 ok + 1 diverged, collected" >&2

# Resume after an interrupt (issue 46): four points of ~5 s, two at once, cancelled while the
# first two run (scancel: Slurm sends them SIGTERM, they stop after their chunk in flight and
# write "interrupted"; the two still pending never start), collected (exit 5, with the command
# to run them), then that command: only the points without a result are submitted again, and
# the sweep ends ok.
out2="$work/resume"
job=$("$NNTRAIN" sweep --config configs/peaks.json --quiet data.grid=20 'model.layers=[2,64,64,1]' \
        train.epochs=20000 train.log_every=50 timing.warmup_epochs=0 --threads 1 --grid seed=1,2,3,4 \
        --launcher slurm --jobs 2 --slurm-arg=--time=5 --out "$out2") || fail "the resume sweep did not submit"
t1=$SECONDS
until [[ -e $out2/points/000/sweep-run.json && -e $out2/points/001/sweep-run.json ]]; do
  ((SECONDS - t1 < JOB_LIMIT)) || fail "job $job: points 0 and 1 did not start within $JOB_LIMIT s"
  sleep 0.2
done
scancel "$job" || fail "scancel $job failed"
wait_job "$job"
job=""
"$NNTRAIN" sweep --collect "$out2" >"$work/collect1.out" 2>"$work/collect1.err"
rc=$?
[[ $rc == 5 ]] || { cat "$work/collect1.out" >&2; fail "collect after scancel: exit $rc, expected 5 (points without a result)"; }
n_int=$(grep -c ',interrupted,cpu,' "$out2/results.csv")
[[ $n_int -ge 1 ]] || { cat "$work/collect1.out" >&2; fail "no point was interrupted by the cancel"; }
resume=$(sed -n 's/^.*to run them: //p' "$work/collect1.err")
[[ -n $resume ]] || { cat "$work/collect1.err" >&2; fail "collect printed no command to resume"; }
job=$(bash -c "$resume") || fail "the resume command ($resume) did not submit"
[[ $job =~ ^[0-9]+$ ]] || fail "the resume command printed \"$job\", not a job id"
wait_job "$job"
job=""
"$NNTRAIN" sweep --collect "$out2" >"$work/collect2.out" 2>&1
rc=$?
[[ $rc == 0 ]] || { cat "$work/collect2.out" >&2; tail -n 3 "$out2"/points/*/train.log >&2; fail "collect after the resume: exit $rc, expected 0"; }
[[ $(grep -c ',ok,cpu,' "$out2/results.csv") == 4 ]] || fail "after the resume: not 4 ok rows"
for p in 000 001 002 003; do
  [[ -s $out2/points/$p/model.json ]] || fail "after the resume: point $p has no model.json"
done
echo "slurm_sweep_test: resume: $n_int interrupted by scancel, all 4 ok after the printed command" >&2
echo "slurm_sweep_test: PASS ($((SECONDS - t0)) s in all)" >&2
