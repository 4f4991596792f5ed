# shellcheck shell=bash
# mutant-lanes.sh — the machinery scripts/mutants.sh and scripts/gpu-mutants.sh share, sourced
# by both (one copy, so that a fix to the lanes, the bookkeeping or the report reaches both).
# A script sources this, lists its rows with `mutant ID FILE TEST-FILTER FROM TO WHAT`, sets
# what differs, defines its hooks and ends with `ml_main "$@"`:
#   ML_NAME          the prefix of its lines ("mutants", "gpu-mutants")
#   LANES            lanes wanted (from its own variable: MUTANT_LANES, GPU_MUTANT_LANES)
#   ML_REV           plant in this commit (git archive), not in the work tree, when set
#   ML_WATCH         paths whose uncommitted changes the first line names (empty: all)
#   ML_BUILD_WHAT    what a lane's build is, for the progress line
#   ML_NOT_RUN_WHY   why a NOT RUN mutant could not run, for the last line
#   hooks (defaults below do nothing): ml_prepare (before the scratch folder: may exit),
#   ml_run_dir LANE (fill the lane's run folder), ml_before_queue (baselines; may add tasks
#   other than "mut:INDEX" to `tasks`, which ml_other_task LANE QUEUE-INDEX TASK runs),
#   ml_after_queue (may add to `errors`); required: ml_configure LANE, ml_build LANE (logs in
#   the lane: configure.log, build.log) and ml_test_mutant LANE INDEX T0 (the mutant is
#   planted and built: run its tests, print its one line, set `outcome` to KILLED, SURVIVED,
#   NOTRUN or ERROR).
# Options handled here: --list ("ID FILE" per row), --check (every pattern found exactly once,
# ids unique, no edit a no-op, needs[] names rows; no copy), --apply (every selected row
# planted in a scratch copy by the code a real run uses, checked to change its file, and
# restored; no build). Environment: MUTANTS_ONLY, JOBS, MUTANTS_KEEP, NNTRAIN_CCACHE=0.
SRC="$(pwd)"
JOBS="${JOBS:-$(nproc)}"
ONLY=",${MUTANTS_ONLY:-},"
ML_REV="" ML_WATCH=() ML_BUILD_WHAT="" ML_NOT_RUN_WHY=""

ids=() files=() filters=() froms=() tos=() whats=()
mutant() { ids+=("$1"); files+=("$2"); filters+=("$3"); froms+=("$4"); tos+=("$5"); whats+=("$6"); }
# needs[ID]=FLAG: the row plants code that runs only on CPUs with that /proc/cpuinfo flag.
declare -A needs=()

have_ccache=0
command -v ccache >/dev/null 2>&1 && [[ "${NNTRAIN_CCACHE:-1}" != 0 ]] && have_ccache=1
if ((have_ccache)); then export CCACHE_NOHASHDIR=1; fi

ml_prepare() { :; }
ml_run_dir() { :; }
ml_before_queue() { :; }
ml_other_task() { echo "$ML_NAME: ERROR: unknown task $3" >&2; }
ml_after_queue() { :; }

selected() { [[ "$ONLY" == ",," || "$ONLY" == *",$1,"* ]]; }
# How often row $1's pattern occurs in file $2.
occurrences() { FROM="${froms[$1]}" perl -0777 -ne '$n = () = /\Q$ENV{FROM}\E/g; print $n' "$2" 2>/dev/null || echo 0; }
lane_dir() { echo "$SCRATCH/lane$1"; }
ml_load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'; }
ml_s() { ((LANES > 1)) && echo s; return 0; }
# ml_plant INDEX FILE SAVED: row INDEX's edit made in FILE, the original kept in SAVED; fails
# when the file did not change (the same code path for --apply and a real run).
ml_plant() {
  cp "$2" "$3"
  FROM="${froms[$1]}" TO="${tos[$1]}" perl -0777 -pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$2"
  ! cmp -s "$2" "$3"
}
ml_restore() {  # ml_restore FILE SAVED
  cp "$2" "$1"
  touch "$1"  # newer than the mutant's objects: the next build recompiles it (a ccache hit)
}

ml_check() {  # --check: seconds, no copy, no build (the *_patterns_apply ctests run it)
  local i c bad=0 id
  declare -A seen=()
  for i in "${!ids[@]}"; do
    c=$(occurrences "$i" "$SRC/${files[$i]}")
    if [[ "$c" != 1 ]]; then
      echo "$ML_NAME: ERROR: ${ids[$i]}: pattern found $c times in ${files[$i]}"
      bad=1
    fi
    [[ "${froms[$i]}" == "${tos[$i]}" ]] && { echo "$ML_NAME: ERROR: ${ids[$i]}: its edit changes nothing"; bad=1; }
    [[ -n "${seen[${ids[$i]}]:-}" ]] && { echo "$ML_NAME: ERROR: ${ids[$i]} listed twice"; bad=1; }
    seen[${ids[$i]}]=1
  done
  for id in "${!needs[@]}"; do
    [[ -n "${seen[$id]:-}" ]] || { echo "$ML_NAME: ERROR: needs[$id]: no mutant of that name"; bad=1; }
  done
  echo "$ML_NAME: ${#ids[@]} mutants, $([[ $bad == 0 ]] && echo 'every pattern found once' || echo 'some patterns not found once')"
  exit $((bad * 2))
}

ml_check_only() {  # MUTANTS_ONLY names rows of this list (a misspelt id would run nothing)
  local id
  [[ "$ONLY" == ",," ]] && return 0
  for id in ${MUTANTS_ONLY//,/ }; do
    [[ " ${ids[*]} " == *" $id "* ]] || { echo "$ML_NAME: ERROR: MUTANTS_ONLY names $id, which is not in the list"; exit 2; }
  done
}

kill_tree() {  # kill_tree PID: the process and its descendants (a lane's build or test run)
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
  kill "$1" 2>/dev/null || true
}
ml_cleanup() {
  local p
  for p in $(jobs -p); do kill_tree "$p"; done
  wait 2>/dev/null || true
  [[ "${MUTANTS_KEEP:-0}" == 1 ]] || rm -rf "$SCRATCH"
}
ml_scratch() {
  SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/nntrain-$ML_NAME.XXXXXX")"
  trap ml_cleanup EXIT
  if [[ "${MUTANTS_KEEP:-0}" == 1 ]]; then echo "$ML_NAME: scratch copy kept in $SCRATCH"; fi
  mkdir -p "$SCRATCH/lane1" "$SCRATCH/results"
}

# What is planted in: a commit, or the work tree with a note when it has uncommitted changes.
ml_what() {
  local w
  if [[ -n "$ML_REV" ]]; then
    echo "commit $(git rev-parse --short=12 "$ML_REV^{commit}")"
    return 0
  fi
  w="the work tree at $(git rev-parse --short=12 HEAD 2>/dev/null || echo '?')"
  if [[ -n "$(git status --porcelain -- "${ML_WATCH[@]}" 2>/dev/null)" ]]; then
    w+=" + uncommitted changes"
    ((${#ML_WATCH[@]})) && w+=" in $(printf '%s or ' "${ML_WATCH[@]}" | sed 's/ or $//')"
  fi
  echo "$w"
}
ml_copy_tree() {  # ml_copy_tree DEST
  if [[ -n "$ML_REV" ]]; then
    # A commit, not the work tree (where other changes may be half done).
    git archive "$ML_REV" | tar -xf - -C "$1"
  else
    # Tracked and untracked-but-not-ignored files: what a commit of the work tree would hold.
    git ls-files -z --cached --others --exclude-standard |
      tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$1"
  fi
}

ml_apply() {  # --apply: every selected row planted in a scratch copy, checked, restored
  local i id file c bad=0 n=0
  ml_scratch
  ml_copy_tree "$SCRATCH/lane1"
  for i in "${!ids[@]}"; do
    id="${ids[$i]}"
    selected "$id" || continue
    n=$((n + 1))
    file="$SCRATCH/lane1/${files[$i]}"
    c=$(occurrences "$i" "$file")
    if [[ "$c" != 1 ]]; then
      printf 'ERROR     %-24s pattern found %s times in %s\n' "$id" "$c" "${files[$i]}"
      bad=1
      continue
    fi
    if ! ml_plant "$i" "$file" "$SCRATCH/orig"; then
      printf 'ERROR     %-24s the edit changes nothing in %s\n' "$id" "${files[$i]}"
      bad=1
    fi
    ml_restore "$file" "$SCRATCH/orig"
  done
  echo "$ML_NAME: $n rows, each planted in a copy of $(ml_what) and restored (no build): $([[ $bad == 0 ]] && echo 'every edit applied' || echo 'some edits did not apply')"
  exit $((bad * 2))
}

ml_lanes() {  # the lane count: at least 1, no more than the mutants, 1 without flock
  local id wanted=0
  ((LANES >= 1)) || LANES=1
  for id in "${ids[@]}"; do selected "$id" && wanted=$((wanted + 1)); done
  ((LANES > wanted && wanted > 0)) && LANES=$wanted  # (MUTANTS_ONLY=one: no second copy to build)
  command -v flock >/dev/null 2>&1 || LANES=1
  return 0
}

# Lanes: copies of the tree (lane1, lane2, ...), each with its own build inside, that take
# tasks from one queue. More than one lane pays only through ccache: a lane's first build is
# then the first lane's objects from the cache, and restoring a file after its mutant is a hit.
# Each lane is laid out like the work tree (the build folder inside the copy) so that, with
# CCACHE_BASEDIR, its compile lines are the work tree's: objects built there are hits too.
ml_build_lanes() {
  local k d
  echo "$ML_NAME: $(ml_what), $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(ml_load)"
  echo "$ML_NAME: copying the tree to $SCRATCH ($LANES lane$(ml_s))"
  ml_copy_tree "$SCRATCH/lane1"
  for ((k = 2; k <= LANES; ++k)); do cp -a "$SCRATCH/lane1" "$SCRATCH/lane$k"; done
  for ((k = 1; k <= LANES; ++k)); do
    mkdir -p "$SCRATCH/run$k"
    ml_run_dir "$k"
  done
  echo "$ML_NAME: building the scratch cop$( ((LANES > 1)) && echo ies || echo y) ($ML_BUILD_WHAT$( ((have_ccache)) && echo ', through ccache'))"
  for ((k = 1; k <= LANES; ++k)); do
    d=$(lane_dir "$k")
    if ! ml_configure "$k" || ! ml_build "$k"; then
      tail -n 30 "$d/configure.log" "$d/build.log" 2>/dev/null || true
      if ((k == 1)); then echo "$ML_NAME: ERROR: the unmutated tree does not configure or build"
      else echo "$ML_NAME: ERROR: lane $k's copy does not configure or build"; fi
      exit 2
    fi
    ((k == 1)) && echo "$ML_NAME: built in $(($(date +%s) - start)) s"
  done
  ((LANES > 1)) && echo "$ML_NAME: $LANES lanes built in $(($(date +%s) - start)) s"
  return 0
}

# What can be decided without a build (a pattern that drifted, a CPU feature this machine
# lacks) is decided here, its outcome recorded; the rest goes in the queue.
ml_queue_mutants() {
  local i id count feature cpu_flags
  cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
  for i in "${!ids[@]}"; do
    id="${ids[$i]}"
    selected "$id" || continue
    count=$(occurrences "$i" "$SCRATCH/lane1/${files[$i]}")
    if [[ "$count" != 1 ]]; then
      printf 'ERROR     %-24s pattern found %s times in %s (source drifted: update the list)\n' "$id" "$count" \
        "${files[$i]}"
      echo ERROR >"$SCRATCH/results/m$i"
      continue
    fi
    # A mutant in code that only runs on a CPU feature this machine lacks cannot be killed
    # here (its tests report skipped): it is reported and left out of the count, not SURVIVED.
    feature="${needs[$id]:-}"
    if [[ -n "$feature" && "$cpu_flags" != *" $feature "* ]]; then
      printf 'NOT RUN   %-24s %s  [this CPU has no %s: the planted code cannot run here]\n' "$id" "${whats[$i]}" \
        "$feature"
      echo NOTRUN >"$SCRATCH/results/m$i"
      continue
    fi
    tasks+=("mut:$i")
  done
}

# One mutant in lane $1: planted, built, tested, restored. Its line goes to stdout (one write:
# lanes' lines do not mix) and its outcome to results/m<index>.
ml_run_mutant() {
  local k=$1 i=$2 id="${ids[$2]}" file t0
  outcome=ERROR
  file="$(lane_dir "$k")/${files[$i]}"
  t0=$(date +%s)
  if ! ml_plant "$i" "$file" "$SCRATCH/orig$k"; then
    printf 'ERROR     %-24s the edit changes nothing (fix the mutant)\n' "$id"
  elif ! ml_build "$k"; then
    printf 'ERROR     %-24s does not compile (fix the mutant)\n%s\n' "$id" \
      "$(grep -m 3 'error' "$(lane_dir "$k")/build.log" || true)"
  else
    ml_test_mutant "$k" "$i" "$t0"
  fi
  ml_restore "$file" "$SCRATCH/orig$k"
  echo "$outcome" >"$SCRATCH/results/m$i"
}
# The queue's next entry (an index into tasks), or nothing when it is empty; one lane at a time.
ml_take() {
  local next
  {
    if ((LANES > 1)); then flock 9; fi
    next=$(cat "$SCRATCH/next")
    echo $((next + 1)) >"$SCRATCH/next"
  } 9>"$SCRATCH/next.lock"
  ((next < ${#tasks[@]})) && echo "$next"
  return 0
}
ml_lane() {
  local k=$1 q t
  while q=$(ml_take) && [[ -n "$q" ]]; do
    t=${tasks[$q]}
    case $t in
      mut:*) ml_run_mutant "$k" "${t#mut:}" ;;
      *) ml_other_task "$k" "$q" "$t" ;;
    esac
  done
}
ml_run_queue() {
  local k pids=()
  echo 0 >"$SCRATCH/next"
  if ((LANES > 1)); then
    for ((k = 1; k <= LANES; ++k)); do
      ml_lane "$k" &
      pids+=($!)
    done
    wait "${pids[@]}" || true  # (a lane that stopped early leaves outcomes missing: counted below)
  else
    ml_lane 1
  fi
}

# The tally and the last lines: "NAME: K of N killed" (N leaves out NOT RUN); exit 2 on any
# error, 1 below 90 % killed, else 0.
ml_report() {
  local i
  for i in "${!ids[@]}"; do
    selected "${ids[$i]}" || continue
    n=$((n + 1))
    case "$(cat "$SCRATCH/results/m$i" 2>/dev/null || echo LOST)" in
      KILLED) killed=$((killed + 1)) ;;
      SURVIVED) ;;
      NOTRUN) n=$((n - 1)) not_run=$((not_run + 1)) ;;
      ERROR) errors=$((errors + 1)) ;;
      *)
        printf 'ERROR     %-24s no outcome recorded (its lane stopped)\n' "${ids[$i]}"
        errors=$((errors + 1))
        ;;
    esac
  done
  echo "$ML_NAME: $(($(date +%s) - start)) s in all ($LANES lane$(ml_s)), load average now $(ml_load)"
  echo "$ML_NAME: $killed of $n killed$( ((not_run)) && echo " ($not_run not run: $ML_NOT_RUN_WHY)")"
  ((errors > 0)) && exit 2
  ((n > 0 && killed * 10 < n * 9)) && exit 1
  exit 0
}

ml_main() {
  case "${1:-}" in
    --list)
      for i in "${!ids[@]}"; do echo "${ids[$i]} ${files[$i]}"; done
      exit 0
      ;;
    --check) ml_check ;;
  esac
  ml_check_only
  if [[ "${1:-}" == --apply ]]; then ml_apply; fi
  n=0 killed=0 errors=0 not_run=0 tasks=()
  start=$(date +%s)
  ml_prepare
  ml_lanes
  ml_scratch
  ml_build_lanes
  ml_before_queue
  ml_queue_mutants
  ml_run_queue
  ml_after_queue
  ml_report
}
