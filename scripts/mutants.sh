#!/usr/bin/env bash
# mutants.sh — does the test suite catch real bugs? Plants each deliberate bug of the list
# below, one at a time, in a scratch copy of the source tree (outside the work tree, which is
# never touched), rebuilds incrementally, runs the tests that should catch it, and reports
# KILLED (a test failed) or SURVIVED (all passed), or NOT RUN where it plants code that needs
# a CPU feature this machine lacks (needs[ID] below; left out of N). Ends with the line
#   mutants: K of N killed
# Exit status: 0 when K >= 90 % of N; 1 below that; 2 when a mutant could not be planted
# (its pattern is not found exactly once: the source drifted, fix the list) or did not
# compile, or when the tests fail without any mutant.
#
# Each mutant is a literal text replacement that must match exactly once in its file. The
# scratch build is CPU-only Release through ccache when installed (scripts/bootstrap.sh
# installs it; a file restored after its mutant is then a cache hit, and so is every object
# scripts/build.sh compiled the same way), a test-only build (NNTRAIN_RUNNABLE_ONLY): on a CPU
# without AVX-512, the AVX-512 kernel units, whose code cannot run here, are compiled at -O0,
# which saves ~1 minute per mutant of cpu_fast_kernels.inc. With ccache, mutants run in
# parallel lanes (one copy and build each, one queue): a mutant of one file recompiles one
# unit on one core, so one lane left the second core of a 2-core machine mostly idle.
#
# `scripts/mutants.sh --check` only checks that every pattern is found once (no build);
# `--apply` plants every row in a scratch copy and restores it, checking that each edit
# changed its file (no build); `--list` prints "ID FILE" per mutant (scripts/mutants-slice.sh:
# CI's rotating slice). The lanes, planting and report are scripts/lib/mutant-lanes.sh's,
# shared with scripts/gpu-mutants.sh; this file holds the rows and the CPU build and tests.
# Environment: MUTANTS_ONLY (comma-separated ids: run just those), MUTANT_TIMEOUT (seconds
# per test run, 300), JOBS (build parallelism per lane, nproc), MUTANT_LANES (lanes: nproc
# up to 4 with ccache, 1 without), MUTANTS_KEEP=1 (keep the scratch folder and print where
# it is), NNTRAIN_CCACHE=0 (no ccache).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/mutant-lanes.sh
source scripts/lib/mutant-lanes.sh  # the lanes, planting, bookkeeping and report: one copy for both
ML_NAME=mutants
MUTANT_TIMEOUT="${MUTANT_TIMEOUT:-300}"

# mutant ID FILE TEST-FILTER FROM TO WHAT — FILTER is a Catch2 test spec for nntrain_tests.
# needs[ID]=FLAG: the mutant plants code that runs only on CPUs with that /proc/cpuinfo flag.

# The first rows (issue 11's six classes, the training path): scripts/lib/mutants-rows-training.sh.
# shellcheck source=scripts/lib/mutants-rows-training.sh
source scripts/lib/mutants-rows-training.sh

# --- found by the audits of 2026-11-26 (reports, error paths) -------------------------------
mutant rate-diverged-epochs core/trainer.hpp '[worth]' \
  'double seconds_per_epoch() const { return epochs_timed ? train_seconds / epochs_timed : 0.0; }' \
  'double seconds_per_epoch() const { return epochs_done ? train_seconds / epochs_done : 0.0; }' \
  'a run that diverged inside a chunk: its time per epoch divided by the epochs before the NaN'
mutant crossover-same-size core/bench_stats.cpp '[bench],[worth]' \
  'c.slower_before = k > 0 ? valid[k - 1] : -1;' \
  'c.slower_before = -1;' \
  'crossover: a GPU loss at a point of the same data size reported as "faster at every size"'
mutant sweep-target-kind core/sweep_plan.cpp '[sweep]' \
  'r.target_kind = text_at(&r.target, "seconds_kind");' \
  'r.target_kind = "measured";' \
  'sweep results: an interpolated time to target shown as measured'
mutant sweep-timing-jobs core/sweep_plan.cpp '[sweep]' \
  'const int n = at_once > 0 ? at_once : jobs;' \
  'const int n = jobs;' \
  'sweep table: a point no other point ran beside labelled concurrent:N (its --jobs)'
mutant sweep-timing-closed core/sweep_plan.cpp '[sweep]' \
  'if (o->start <= t && t < o->end) ++n;' \
  'if (o->start <= t && t <= o->end) ++n;' \
  'sweep table: a point that started as another ended counted as running beside it'
mutant sweep-timing-host core/sweep_plan.cpp '[sweep]' \
  'if (&o != &me_run && o.span.host == me.host && (o.span.start < me.end || o.span.start == me.start) &&' \
  'if (&o != &me_run && (o.span.start < me.end || o.span.start == me.start) &&' \
  'sweep table: points on another machine counted as running beside a point'
mutant sweep-timing-earlier core/sweep_plan.cpp '[sweep]' \
  'for (const json& e : run_infos[i]->at("earlier_runs"))' \
  'for (const json& e : json::array())' \
  'sweep table: the runs a rerun point made before (killed, failed) not counted beside the points they ran with'
mutant sweep-open-run-kept app/cmd_sweep_local.cpp '[sweep]' \
  'for (size_t i = 0; i < plan.size(); ++i) close_open_run(plan, i);' \
  '' \
  'sweep: a point killed with its launcher counted as running beside every point of the next launcher'
mutant sweep-rerun-open-end app/cmd_sweep_local.cpp '[sweep]' \
  'run["finished_unix"] = before.contains("finished_unix") ? before.at("finished_unix") : json(unix_seconds());' \
  'if (before.contains("finished_unix")) run["finished_unix"] = before.at("finished_unix");' \
  'sweep: a killed attempt rerun by hand counted as running beside its own rerun and everything after'
mutant json-duplicate-keys core/json_reader.cpp '[bad_input]' \
  'if (std::find(top.keys.begin(), top.keys.end(), key) != top.keys.end()) {' \
  'if (false) {' \
  'config: a key given twice in one object is dropped silently'
mutant output-folder-missing core/fileio.cpp '[bad_input]' \
  'if (!fs::is_directory(parent, ec))
    throw UsageError(what + ": folder "' \
  'if (!fs::is_directory(parent, ec) && fs::exists(parent, ec))
    throw UsageError(what + ": folder "' \
  '--save-model into a missing folder: accepted, the run trains, then fails to write'
mutant flag-unsigned-wrap app/cli_flags.cpp '[bad_input]' \
  'if (non_negative && negative) return' \
  'if (false && negative) return' \
  'CLI: --seed -1 wraps to 2^64 - 1 before the range check'
mutant csv-control-bytes core/errors.hpp '[bad_input]' \
  'if (u < 0x20 || u == 0x7f)' \
  'if (u < 0x01)' \
  'CSV errors: control bytes (ESC) echoed raw to the terminal'
mutant csv-float-range core/dataset.cpp '[bad_input]' \
  'if (std::fabs(v) >= 0x1.ffffffp127) fail(' \
  'if (std::fabs(v) > 0x1.fffffep127 * 1.0000001) fail(' \
  'CSV: a value that rounds to infinity in float32 is accepted'
mutant range-bound core/config.cpp '[bad_input]' \
  'std::fabs(c.range_lo) > kMaxRange || std::fabs(c.range_hi) > kMaxRange)' \
  'false)' \
  'config: data.range of +-1e308 accepted (NaN data, a run that "diverges" at epoch 1)'
mutant mistyped-command app/main.cpp '[cli]' \
  'std::find(commands.begin(), commands.end(), argv[1]) != commands.end())' \
  'true)' \
  'CLI: a mistyped command reported as a missing --config'

# --- found by the audits of 2026-11-26 (sweep launchers, tests that could not see a bug) -----
mutant sweep-no-lock app/cmd_sweep_local.cpp '[sweep]' \
  'if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {' \
  'if (false) {' \
  'sweep: a second launcher runs points another launcher (or its orphans) still run'
mutant sweep-sighup app/cmd_sweep_local.cpp '[sweep]' \
  'for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {' \
  'for (const int sig : {SIGINT, SIGTERM}) {' \
  'sweep: a lost terminal (SIGHUP) kills the launcher and orphans its points'
mutant sweep-job-name app/cmd_sweep_slurm.cpp '[slurm]' \
  "s += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';" \
  's += c;' \
  'sweep: the config name goes into #SBATCH --job-name unescaped (a newline injects a line)'
mutant sweep-slurm-dir app/cmd_sweep.cpp '[slurm]' \
  'check_slurm_dir(fs::absolute(out).lexically_normal().string());' \
  ';' \
  'sweep: a folder with a space goes into #SBATCH --output and breaks submission'
mutant both-keeps-missing-gpu app/preflight.cpp '[nogpu]' \
  'cfg.device = DeviceChoice::cpu;' \
  ';' \
  'no-GPU path: --device both on a machine without a usable GPU is exit 3, not the CPU half'
mutant no-gpu-hint app/preflight.cpp '[nogpu]' \
  '(d == Device::gpu ? std::string("; ") + kCpuHalfHint : "")' \
  'std::string()' \
  'no-GPU path: exit 3 without the hint that --device cpu runs the CPU half'
mutant no-driver-words core/gpu_info.hpp '[nogpu]' \
  'if (!libcuda_loadable) return' \
  'if (libcuda_loadable) return' \
  'no-GPU path: a machine without a driver is told its driver is too old'
mutant sweep-alloc-threads app/cmd_sweep_local.cpp '[slurm]' \
  'if (jobs > 1) return std::max(1, (cpus > 0 ? cpus : hardware_threads()) / jobs);' \
  'if (jobs > 1 && cpus == 0) return std::max(1, hardware_threads() / jobs);' \
  'sweep: --jobs N inside a Slurm allocation gives every point all its CPUs'
mutant config-output-act core/config.cpp '[config],[init]' \
  'c.output_activation = activation_at(m, "output_activation", c.output_activation);' \
  '(void)activation_at(m, "output_activation", c.output_activation);' \
  'config: model.output_activation is read and dropped'
mutant config-beta2 core/config.cpp '[config]' \
  'c.beta2 = o.number("beta2", c.beta2, 0.0, 0.999999999);' \
  '(void)o.number("beta2", c.beta2, 0.0, 0.999999999);' \
  'config: optimizer.beta2 is read and dropped'
mutant model-loss-last-epoch core/trainer.cpp '[summary]' \
  'r.model_loss = Evaluator(&backend).loss(r.final_params, r.eval_seconds);' \
  'r.model_loss = r.losses.empty() ? 0.0 : r.losses.back();' \
  'the trained model'"'"'s loss is the last epoch'"'"'s (before the last update) again (issue 44)'
mutant validation-split-seed core/dataset.cpp '[summary]' \
  'Rng rng(seed ^ 0x76616c6964617465ULL);' \
  'Rng rng(0x76616c6964617465ULL);' \
  'the held-out validation rows ignore the seed'
mutant options-shuffle core/trainer.cpp '[config]' \
  'o.shuffle = cfg.train.shuffle;' \
  'o.shuffle = true;' \
  'train.shuffle=false never reaches the backends'
mutant init-scheme app/preflight.cpp '[init]' \
  'p.init = init_params(cfg.model_spec(), cfg.model.init, cfg.seed);' \
  'p.init = init_params(cfg.model_spec(), Init::glorot_uniform, cfg.seed);' \
  'model.init is ignored: every run starts from glorot_uniform'
mutant isa-list-avx512 kernels/cpu/cpu_fast.cpp '[isa]' \
  '    v.push_back("avx512");' \
  '    (void)0;' \
  'the AVX-512 kernels drop out of the list every fast test loops over'
needs[isa-list-avx512]=avx512f
mutant blas-not-loaded kernels/cpu/cpu_fast.cpp '[blas]' \
  'blas_lib_ = load_openblas();' \
  'blas_lib_ = nullptr;' \
  'OpenBLAS never used: wide layers silently on the SIMD kernels'

# --- outputs that never clobber, predict by column name (issues 44, 46) ----------------------
mutant writer-replaces-link core/fileio.cpp '[outputs]' \
  'if (::rename(tmpl.c_str(), real.c_str()) != 0) {' \
  'if (::rename(tmpl.c_str(), path.c_str()) != 0) {' \
  'atomic write: the temporary renamed over the symlink, replacing the link with a file'
mutant writer-no-follow core/fileio.cpp '[outputs]' \
  'if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;' \
  'if (true) break;' \
  'atomic write: symbolic links not followed (the link replaced, its target left old)'
mutant writer-device-ok core/fileio.cpp '[outputs]' \
  'return kind.empty() ? "" : "is " + kind + ", not a regular file";' \
  'return "";' \
  'an output that is a device or FIFO (/dev/stdout) is replaced by a regular file'
mutant writer-link-folder core/fileio.cpp '[outputs]' \
  'const fs::path target(real);
  const std::string what = option' \
  'const fs::path target(file);
  const std::string what = option' \
  'output check: a dangling link checks its own folder, not its target'"'"'s: fails after the work'
mutant writer-dash-file core/fileio.cpp '[outputs]' \
  'if (path != "-") return write_file_atomic(path, content);' \
  'return write_file_atomic(path, content);' \
  '--output -: a file named "-" instead of stdout'
mutant predict-same-file app/cmd_predict.cpp '[outputs]' \
  'check_output_not_input(a.output, "--output", {{"--input", a.input}, {"--model", a.model}});' \
  '' \
  'predict --output equal to --input overwrites the input'
mutant predict-by-position app/cmd_predict.cpp '[predict]' \
  'const Params p = load_model(a.model, &names);' \
  'const Params p = load_model(a.model);' \
  'predict maps columns by position despite the names model.json records'
mutant predict-drops-passthrough app/cmd_predict.cpp '[predict]' \
  'output_csv(text, a.input, header, out, n_out)' \
  'output_csv(text, a.input, cols, out, n_out)' \
  'predict names only the input columns: an id column is lost from the header'
mutant predict-default-count app/cmd_predict.cpp '[predict]' \
  'cols.assign(header.begin(), header.begin() + std::min<std::ptrdiff_t>(n_in, std::ptrdiff_t(header.size())));' \
  'cols.assign(header.begin(), header.begin() + std::min<std::ptrdiff_t>(n_in + 1, std::ptrdiff_t(header.size())));' \
  'predict with an old model: an off-by-one in the default column count (x1,x2,y refused)'
mutant model-names-unwritten core/model_io.cpp '[predict]' \
  'write_names(os, "inputs", names.inputs, p.spec.widths.front());' \
  '(void)names;' \
  'model.json: the data'"'"'s input names not recorded'
mutant tanh-coef-sign core/nnmath.hpp '[activation]' \
  'p = add(mul(p, z), cst<V>(-3.33332819422e-1f));' \
  'p = add(mul(p, z), cst<V>(3.33332819422e-1f));' \
  'tanh: the x^3 coefficient of the small-|x| polynomial with the wrong sign'
mutant tanh-clamp-early core/nnmath.hpp '[activation]' \
  'ax > cst<V>(10.0f) ? cst<V>(10.0f) : ax;' \
  'ax > cst<V>(4.0f) ? cst<V>(4.0f) : ax;' \
  'tanh: |x| clamped at 4, where tanh has not yet reached 1 in float'
mutant exp-reduction-half core/nnmath.hpp '[activation]' \
  'sub(sub(u, mul(k, cst<V>(0.693359375f))), mul(k, cst<V>(-2.12194440e-4f)));' \
  'sub(u, mul(k, cst<V>(0.693359375f)));' \
  'exp (tanh, sigmoid): the second part of ln 2 left out of the range reduction'
mutant fused-curved-first-raw kernels/cpu/cpu_fast_kernels_fused.inc '[kernels]' \
  'vstore(f.H + size_t(k) * f.T + c + j * LANES, act_vec(ACT0, h[j]));' \
  'vstore(f.H + size_t(k) * f.T + c + j * LANES, h[j]);' \
  'fast kernels: the fused forward leaves a tanh/sigmoid first layer raw'
mutant forward-tanh-raw kernels/cpu/cpu_fast_kernels_forward.inc '[kernels]' \
  'case 2: mv_rows_t<false, 2>(M, rs, ks, init, K, In, ldin, Out, rows, T, Dv); break;' \
  'case 2: mv_rows_t<false, 0>(M, rs, ks, init, K, In, ldin, Out, rows, T, Dv); break;' \
  'fast kernels: forward (mv_rows) leaves a tanh layer raw'
mutant fused-curved-second-linear kernels/cpu/cpu_fast_kernels_fused.inc '[kernels]' \
  'ff_third<OUT, X, ACT0, ACT0, C>(third, tail, f);' \
  'ff_third<OUT, X, ACT0, 0, C>(third, tail, f);' \
  'fast kernels: the fused forward drops a tanh/sigmoid second layer (and its derivative in the tail)'
mutant fused-tail-tanh-deriv kernels/cpu/cpu_fast_kernels_fused.inc '[kernels]' \
  '      p = p * deriv_vec(ACT1, a);
    vstore(D + size_t(q) * T + c, p);' \
  '      p = p * deriv_vec(ACT1 == 2 ? 3 : ACT1, a);
    vstore(D + size_t(q) * T + c, p);' \
  'fast kernels (AVX2, generic): the forward tail takes sigmoid'"'"'s derivative for tanh'

# --- state that must be reset when a backend is loaded again (issue 46, class 1) -----------
mutant load-keeps-epoch-reference core/cpu_reference.cpp '[backends_run]' \
  '    optim_.reset();
    epoch_ = 0;' \
  '    optim_.reset();' \
  'reference backend: load() keeps the shuffle epoch (warm-up shifts every shuffle after it)'
mutant load-keeps-epoch-fast kernels/cpu/cpu_fast.cpp '[backends_run]' \
  '  optim_.reset();
  epoch_ = 0;' \
  '  optim_.reset();' \
  'fast backend: load() keeps the shuffle epoch (warm-up shifts every shuffle after it)'
mutant load-keeps-adam-step core/optimizer.cpp '[backends_run]' \
  'step_ = adam_initial_step();' \
  '(void)0;' \
  "Adam: reset() keeps the step count (a re-loaded run's bias correction starts late)"
# Sweep interrupts and resume (issue 44 item 7, issue 46 class 2).
mutant sweep-resume-interrupted core/sweep_plan.cpp 'sweep resume*,sweep local: every interrupted*' \
  'if (s == "diverged") return true;' \
  'if (s == "diverged" || s == "interrupted") return true;' \
  'sweep: a resume treats an interrupted point as finished (rerunning never completes it: exit 5 forever)'
mutant sweep-stop-after-last core/sweep_plan.cpp 'sweep resume*' \
  'if (r.status == "interrupted" && run_complete(run)) {' \
  'if (false) {' \
  'sweep table: a point whose stop came after its last epoch is "interrupted" (rerun) though its model is whole'
mutant sweep-dup-signal app/cmd_sweep_local.cpp 'sweep local: Ctrl-C*' \
  '} else if (!same_stop_signal(g_first_from, g_first_t, from, t)) {' \
  '} else {' \
  "sweep: the process group's copy of a stop signal (timeout -s INT) counts as a second one and SIGKILLs the points"

# The report, bench, verdict and init rows (added 2026-11-29): scripts/lib/mutants-rows-reports.sh.
# shellcheck source=scripts/lib/mutants-rows-reports.sh
source scripts/lib/mutants-rows-reports.sh
# The user-path rows (added 2026-11-29, an exploratory review's bugs): scripts/lib/mutants-rows-userpath.sh.
# shellcheck source=scripts/lib/mutants-rows-userpath.sh
source scripts/lib/mutants-rows-userpath.sh

# ---------------------------------------------------------------------------------------------
# What differs from gpu-mutants.sh: a CPU-only Release build of nntrain_tests, whose filters
# run first without any mutant, one after another in lane 1.
if [[ -n "${MUTANT_LANES:-}" ]]; then
  LANES=$MUTANT_LANES
elif ((have_ccache)); then
  LANES=$(nproc)
  ((LANES > 4)) && LANES=4
else
  LANES=1
fi
ML_BUILD_WHAT="CPU-only Release"
ML_NOT_RUN_WHY="this CPU lacks what they need"
launcher=()
((have_ccache)) && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

ml_configure() {  # ml_configure LANE (each lane's compile lines relative to its own copy)
  local d
  d=$(lane_dir "$1")
  CCACHE_BASEDIR="$d" cmake -S "$d" -B "$d/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNNTRAIN_WITH_CUDA=OFF \
    -DNNTRAIN_RUNNABLE_ONLY=ON "${launcher[@]}" >"$d/configure.log" 2>&1
}
ml_build() {  # ml_build LANE
  local d
  d=$(lane_dir "$1")
  CCACHE_BASEDIR="$d" cmake --build "$d/build" --parallel "$JOBS" --target nntrain nntrain_tests >"$d/build.log" 2>&1
}
tests_pass() {  # tests_pass LANE FILTER: 0 when every selected test passes
  (cd "$SCRATCH/run$1" && timeout "$MUTANT_TIMEOUT" "$(lane_dir "$1")/build/tests/nntrain_tests" --abort "$2" \
    >"$SCRATCH/run$1/test.log" 2>&1)
}
# Without a mutant every filter must pass, or a "kill" would mean nothing.
ml_before_queue() {
  local i f
  declare -A baseline=()
  for i in "${!ids[@]}"; do
    selected "${ids[$i]}" || continue
    f="${filters[$i]}"
    [[ -n "${baseline[$f]:-}" ]] && continue
    if ! tests_pass 1 "$f"; then
      tail -n 30 "$SCRATCH/run1/test.log"
      echo "mutants: ERROR: tests '$f' fail without any mutant"
      exit 2
    fi
    baseline[$f]=ok
  done
}
ml_test_mutant() {  # ml_test_mutant LANE INDEX T0
  if tests_pass "$1" "${filters[$2]}"; then outcome=SURVIVED; else outcome=KILLED; fi
  printf '%-9s %-24s %s  [%s, %d s]\n' "$outcome" "${ids[$2]}" "${whats[$2]}" "${filters[$2]}" $(($(date +%s) - $3))
}
ml_main "$@"
