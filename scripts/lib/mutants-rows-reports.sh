# shellcheck shell=bash
# mutants-rows-reports.sh — rows of scripts/mutants.sh (sourced by it, after its own rows) for
# the code that turns timings into what users paste: train's summary and console report,
# bench's tables, JSON and Markdown, the cost and time-to-target verdicts, and the initial
# weights. Added on 2026-11-29 (none of these files had a planted bug before). Row format:
# see scripts/mutants.sh. New rows go at the end of this file (the end of the list).

# --- train's summary.json and console (app/report.cpp, core/run_json.cpp) -------------------
mutant report-speedup-inverted app/report.cpp '[report],[summary]' \
  'j["speedup"] = cpu->train_seconds / gpu->train_seconds;' \
  'j["speedup"] = gpu->train_seconds / cpu->train_seconds;' \
  'summary.json: speedup is GPU time / CPU time (a 4x faster GPU reported as 0.25)'
mutant report-simulated-speedup app/report.cpp '[report],[summary]' \
  'if (gpu->simulated) return kSimulatedNote;' \
  'if (false) return kSimulatedNote;' \
  'summary.json: a simulated GPU clock turned into a speed-up'
mutant report-console-direction app/report.cpp '[report],[summary]' \
  'sp >= 1 ? "faster" : "slower");' \
  'sp >= 1 ? "slower" : "faster");' \
  'console: a faster GPU printed as slower'
mutant report-target-measured app/report.cpp '[report],[summary],[worth]' \
  'if (t.measured)' \
  'if (true)' \
  'console: an interpolated time to target printed as measured'
mutant report-repeats-min app/report.cpp '[report],[summary]' \
  'o["train_seconds_min"] = *mn;' \
  'o["train_seconds_min"] = *mx;' \
  'summary.json: train_seconds_min is the slowest repeat'
mutant report-status-ok app/report.cpp '[report],[summary],[faults]' \
  'if (r.status() != "ok") {' \
  'if (false) {' \
  'summary.json: top-level status "ok" though a run diverged or was interrupted'
mutant report-val-epochs app/report.cpp '[summary]' \
  'e % size_t(r.validation_every) == 0;' \
  'e % size_t(r.validation_every) == 1;' \
  'metrics.csv: val_loss written on the epochs that were not evaluated'
mutant report-mflop app/report.cpp '[report],[summary],[cli]' \
  '6.0 * double(cfg.model_spec().macs_per_sample())' \
  '2.0 * double(cfg.model_spec().macs_per_sample())' \
  'console header: MFLOP per epoch counts the forward pass only'
mutant report-last-epoch-row app/report.cpp '[report],[summary],[cli]' \
  'if (rows.back() != n) rows.push_back(n);' \
  ';' \
  'console loss table: the last epoch left out when it is not a multiple of log_every'
mutant json-target-kind core/run_json.cpp '[worth],[report]' \
  'o["seconds_kind"] = t.measured ? "measured" : "interpolated";' \
  'o["seconds_kind"] = "measured";' \
  'summary/bench JSON: an interpolated time to target labelled measured'
mutant json-divergence-kind core/run_json.cpp '[summary],[faults],[bench]' \
  'r.exploded ? "loss_exploded" : r.weights_nonfinite ? "weights_nonfinite" : "loss_nonfinite"' \
  'r.weights_nonfinite ? "weights_nonfinite" : "loss_nonfinite"' \
  'JSON: a loss that exploded (finite) reported as a non-finite loss'

# --- bench's tables, JSON and Markdown (app/bench_report.cpp, app/bench_points.cpp) ---------
mutant bench-speedup-inverted app/bench_report.cpp '[bench],[worth],[report]' \
  'return c > 0 && g > 0 ? c / g : 0.0;' \
  'return c > 0 && g > 0 ? g / c : 0.0;' \
  'bench: speed-up is GPU median / CPU median'
mutant bench-slower-factor app/bench_report.cpp '[bench],[worth],[report]' \
  'fmt::format("GPU {:.2f}× slower", 1 / sp)' \
  'fmt::format("GPU {:.2f}× slower", sp)' \
  'bench: a GPU 2x slower printed as "GPU 0.50x slower"'
mutant bench-uncertain-speedup app/bench_report.cpp '[bench],[worth],[report]' \
  '? " (uncertain)" : ""' \
  '? "" : ""' \
  'bench: the speed-up of a point whose repeats disagree not marked uncertain'
mutant bench-size-order app/bench_report.cpp '[bench],[worth],[report]' \
  'return r.points[size_t(a)].samples < r.points[size_t(b)].samples;' \
  'return a < b;' \
  'bench: a sweep given largest first is not sorted by size before the crossover'
mutant bench-md-failed-median app/bench_report.cpp '[bench],[worth],[report]' \
  'run.status() == "ok" ? seconds_text(st.median) : run.status()' \
  'seconds_text(st.median)' \
  'bench Markdown: a diverged run shows a median time as if it had finished'
mutant bench-md-fence app/bench_report.cpp '[bench],[worth],[report]' \
  "const std::string fence(longest + 1, '\`');" \
  "const std::string fence(1, '\`');" \
  'bench Markdown: a backtick in the command line breaks its code span'
mutant bench-md-gpu-not-run app/bench_report.cpp '[bench],[worth],[report],[nogpu]' \
  'if (c.contains("gpu_not_run"))' \
  'if (false)' \
  'bench Markdown: --device both without a GPU does not say the GPU half was not run'
mutant bench-json-per-epoch app/bench_report.cpp '[bench],[worth],[report]' \
  'o["seconds_per_epoch"] = run.epochs_timed ? s.median / run.epochs_timed : 0.0;' \
  'o["seconds_per_epoch"] = run.epochs_timed ? s.mean / run.epochs_timed : 0.0;' \
  'bench JSON: seconds_per_epoch from the mean of the repeats, not the median the tables show'
mutant bench-both-devices app/bench_report.cpp '[bench],[worth],[report]' \
  'Device::cpu) > 0 &&' \
  'Device::cpu) > 0 ||' \
  'bench: a CPU-only bench reported as a CPU/GPU comparison'
mutant points-failed-median app/bench_points.cpp '[bench],[worth],[report]' \
  'if (!r || r->status() != "ok" || r->train_seconds_per_repeat.empty()) return -1;' \
  'if (!r || r->train_seconds_per_repeat.empty()) return -1;' \
  'bench: a diverged run'"'"'s time used in the speed-up and the crossover'

# --- cost and time-to-target verdicts (app/bench_worth.cpp) --------------------------------
mutant worth-cost-prices app/bench_worth.cpp '[worth],[price]' \
  'return cost_of(r.prices->cpu, cpu_seconds) / cost_of(r.prices->gpu, gpu_seconds);' \
  'return cost_of(r.prices->gpu, cpu_seconds) / cost_of(r.prices->cpu, gpu_seconds);' \
  'bench: the cost ratio prices the CPU time at the GPU price and the reverse'
mutant worth-interpolated-cell app/bench_worth.cpp '[worth]' \
  'return seconds_text(t.seconds) + (t.measured ? "" : " (interpolated)");' \
  'return seconds_text(t.seconds);' \
  'bench Markdown: an interpolated time to target not marked "(interpolated)"'
mutant worth-interpolated-star app/bench_worth.cpp '[worth]' \
  'return seconds_text(t->seconds) + (t->measured ? " " : "*");' \
  'return seconds_text(t->seconds) + " ";' \
  'bench console summary: an interpolated time to target without its *'
mutant worth-interpolated-verdict app/bench_worth.cpp '[worth]' \
  'if (!tc->measured || !tg->measured)' \
  'if (!tc->measured && !tg->measured)' \
  'bench: a target verdict from one interpolated time not marked as such'
mutant worth-only-reached app/bench_worth.cpp '[worth]' \
  'tc->reached ? "cpu" : "gpu"' \
  'tc->reached ? "gpu" : "cpu"' \
  'bench: "only gpu reached" when the CPU did'
mutant worth-cheaper-mark app/bench_worth.cpp '[worth]' \
  'if (r.cost_crossover.faster_from == pos)' \
  'if (r.crossover.faster_from == pos)' \
  'bench Markdown: "GPU cheaper from here" put at the speed crossover'
mutant worth-uncertain-verdict app/bench_worth.cpp '[worth],[report]' \
  'point_uncertainty(p).empty() ? "" : "**uncertain:** "' \
  '""' \
  'bench Markdown: a verdict at a point whose repeats disagree not marked uncertain'
mutant worth-target-speedup app/bench_worth.cpp '[worth]' \
  'point["target_speedup"] = tc > 0 && tg > 0 ? json(tc / tg) : json(nullptr);' \
  'point["target_speedup"] = tc > 0 && tg > 0 ? json(tg / tc) : json(nullptr);' \
  'bench JSON: target_speedup inverted'
mutant worth-target-cost app/bench_worth.cpp '[worth]' \
  'o["to_target"] = t && t->reached ? json(cost_of(price, t->seconds)) : json(nullptr);' \
  'o["to_target"] = t && t->reached ? json(cost_of(price, median)) : json(nullptr);' \
  'bench JSON: the cost to target priced from the whole run'"'"'s time'

# --- bench's plan (app/cmd_bench.cpp) -------------------------------------------------------
mutant bench-default-reps app/cmd_bench.cpp '[bench],[worth]' \
  'if (!a.reps_set) defaults.push_back("timing.repeats=5");' \
  ';' \
  'bench: one repeat per point by default (no median, no spread)'
mutant bench-sweep-flag-clash app/cmd_bench.cpp '[bench],[cli]' \
  'const bool clash = k == sweep.key ||' \
  'const bool clash = false ||' \
  'bench: --sweep train.epochs=... with --epochs N sweeps nothing, silently'
mutant bench-export-same-file app/cmd_bench.cpp '[bench],[outputs],[cli]' \
  'if (!a.export_json.empty() && !a.export_markdown.empty() &&' \
  'if (false &&' \
  'bench: --export-json and --export-markdown on one file: the Markdown overwrites the JSON'

# --- initial weights and the surface (core/mlp.cpp, app/surface.cpp) ------------------------
mutant init-he-limit core/mlp.cpp '[init],[golden]' \
  'std::sqrt(6.0 / fan_in)' \
  'std::sqrt(2.0 / fan_in)' \
  'init: he_uniform bound sqrt(2/fan_in) (the normal variant'"'"'s) instead of sqrt(6/fan_in)'
mutant init-glorot-fan core/mlp.cpp '[init],[golden]' \
  'std::sqrt(6.0 / (fan_in + fan_out))' \
  'std::sqrt(6.0 / (fan_in + fan_in))' \
  'init: glorot_uniform bound ignores fan_out'
mutant surface-prediction app/surface.cpp '[surface],[cli]' \
  'grid.y[size_t(i)], pred[size_t(i)]);' \
  'grid.y[size_t(i)], grid.y[size_t(i)]);' \
  'surface.csv: y_pred is the target (a perfect fit drawn whatever the model)'
