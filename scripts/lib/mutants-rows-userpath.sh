# shellcheck shell=bash
# mutants-rows-userpath.sh — rows of scripts/mutants.sh (sourced by it, after the report rows)
# for the user-path fixes of 2026-11-29 (an exploratory review found each as a bug): timing
# repeats cut by a stop, the warm-up's chunks, batches against held-out data, values that are
# 0 in fp32, the Markdown page's escaping, CSV quoting and decimals, predict's pass-through and
# its overflow warning, --save-model onto --init-model. Row format: see scripts/mutants.sh.

# --- the trainer and train's messages (core/trainer.cpp, app/cmd_train.cpp) -----------------
mutant train-partial-repeat core/trainer.cpp '[faults]' \
  'if (rep > 0 && r.interrupted && clocks.back().done() < plan.total) {' \
  'if (false) {' \
  'train: a repeat cut short by a stop counted as a repeat (its partial time in the median)'
mutant train-warmup-one-call core/trainer.cpp '[faults]' \
  'backend.train(n = std::min(chunk, r.warmup_epochs - done), scratch.data() + done);' \
  'backend.train(n = r.warmup_epochs - done, scratch.data() + done);' \
  'train: the warm-up in one call, which a stop cannot cut'
mutant train-overflow-reason app/cmd_train.cpp '[faults]' \
  'if (r.diverged_epoch == 1 && full_batch)' \
  'if (r.diverged_epoch == 1)' \
  'train: a mini-batch run'"'"'s first epoch (updates done) blamed on the initial weights'
mutant train-save-init-model app/cmd_train.cpp '[outputs]' \
  '{"data.csv", cfg.data.csv_resolved}, {"--init-model", a.init_model}});' \
  '{"data.csv", cfg.data.csv_resolved}});' \
  'train: --save-model onto --init-model replaces the starting model'

# --- config and preflight (core/config.cpp, app/preflight.cpp) ------------------------------
mutant config-fp32-zero core/config.cpp '[bad_input]' \
  'if (v < double(std::numeric_limits<float>::min()))' \
  'if (v == 0.0)' \
  'config: an lr or eps of 1e-50 (0 in fp32) accepted'
mutant preflight-batch-heldout app/preflight.cpp '[bad_input]' \
  'const int trained = p.data.n - held_out;' \
  'const int trained = p.data.n;' \
  'preflight: a batch larger than the samples trained on (some held out) accepted'

# --- bench's Markdown page (app/bench_report.cpp) -------------------------------------------
mutant md-escape-pipe app/bench_report.cpp '[report]' \
  'std::string_view("\\|`*_<>[]~&")' \
  'std::string_view("\\`*_<>[]~&")' \
  'bench Markdown: a | in a swept value splits its cell'
mutant md-escape-markup app/bench_report.cpp '[report]' \
  'std::string_view("\\|`*_<>[]~&")' \
  'std::string_view("\\|")' \
  'bench Markdown: a name with <!-- hides the rest of a GitHub page (backticks, *, [ ] read as markup)'
mutant md-escape-control app/bench_report.cpp '[report]' \
  "s += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;" \
  's += c;' \
  'bench Markdown: a newline in the name or a value ends the heading or the row'
mutant bench-warmup-capped app/bench_report.cpp '[report]' \
  'if (lo == asked) return' \
  'if (true) return' \
  'bench header: the warm-up setting shown where train.epochs capped it'

# --- CSV and predict (core/dataset.cpp, app/cmd_predict.cpp) --------------------------------
mutant csv-quote-escape core/dataset.cpp '[csv]' \
  "else if (i + 1 < n && line[i + 1] == '\"') f += line[i++];" \
  'else if (false) f += line[i++];' \
  'CSV: "" inside a quoted field ends it instead of standing for one quote'
mutant csv-unclosed-quote core/dataset.cpp '[csv]' \
  'if (!closed) fail(' \
  'if (false) fail(' \
  'CSV: an unclosed quote (a field with a line break) read as a field'
mutant csv-plain-decimal core/dataset.cpp '[csv]' \
  'if (!plain_decimal(f)) fail(' \
  'if (false) fail(' \
  'CSV: 0x10 read as 16'
mutant predict-verbatim app/cmd_predict.cpp '[predict]' \
  's += line + ",";' \
  'for (const auto& f : split_csv_line(line)) s += f + ",";' \
  'predict: the input'"'"'s fields re-joined unquoted (an id with a comma becomes two columns)'
mutant predict-overflow-warning app/cmd_predict.cpp '[predict]' \
  'if (bad > 0) {' \
  'if (false) {' \
  'predict: nan predictions written without a word'

# --- the measurement audit (2026-11-30): a speed-up only from finished runs, the context
# taken before the runs, spread repeats in train, simulated times marked everywhere, bench's
# samples with a held-out split ----------------------------------------------------------------
mutant audit-speedup-unfinished app/report.cpp '[report]' \
  'if (r->diverged_epoch || r->epochs_timed < r->epochs_requested || r->train_seconds_per_repeat.empty())' \
  'if (r->diverged_epoch)' \
  'train: a speed-up from a GPU run that stopped after 1 of 4 epochs (16x claimed)'
mutant audit-context-now app/report.cpp '[report]' \
  'j["context"] = context.is_object() && !context.empty() ? context : run_context(nullptr);' \
  'j["context"] = run_context(nullptr);' \
  'summary.json: the context (load average) taken after the runs, not the one taken before'
mutant audit-context-date app/report.cpp '[report]' \
  'c["date_utc"] = utc_now();' \
  ';' \
  'train: results without a date'
mutant audit-spread-wide app/report.cpp '[report]' \
  'o["spread_wide"] = run_spread_wide(r);' \
  'o["spread_wide"] = false;' \
  'summary.json: repeats spread 1.8x not flagged'
mutant audit-simulated-row app/report.cpp '[report]' \
  'if (r.simulated) fmt::print(out, "  {:<6} SIMULATED' \
  'if (false) fmt::print(out, "  {:<6} SIMULATED' \
  'console: a simulated GPU'"'"'s timing row without a mark'
mutant audit-sweep-simulated core/sweep_plan.cpp '[sweep]' \
  'if (run.value("simulated", false))' \
  'if (false)' \
  'sweep collect: a simulated GPU'"'"'s train time shown as a measurement'
mutant audit-bench-held-out app/cmd_bench.cpp '[bench]' \
  'p.samples = prep.data.n - validation_samples(prep.data.n, cfg.data.validation_fraction);' \
  'p.samples = prep.data.n;' \
  'bench: a point'"'"'s samples count the held-out part (crossover x-axis 1/(1-f) too large)'

# --- the second user-path review (2026-11-30) ----------------------------------------------
mutant review2-predict-stop app/cmd_predict.cpp '[predict]' \
  'if (stop_requested()) return interrupted(a);' \
  'if (false) return interrupted(a);' \
  'predict: the first Ctrl-C ignored, the old output replaced, exit 0'
mutant review2-usage-prefix app/main.cpp '[bad_input]' \
  '"nntrain: error: {}\nRun' \
  '"nntrain: {}\nRun' \
  'CLI11'"'"'s errors without the documented "nntrain: error: " prefix'
mutant review2-threads-busy kernels/cpu/cpu_fast.cpp '[fast]' \
  'if (chunks == 1) return gather_ahead_ ? 2 : 1;' \
  'if (chunks == 1) return threads_;' \
  'reports: a 16-thread pool that ran batches of 100 samples on 1 thread labelled "16 threads"'
mutant review2-override-merge core/config.cpp '[config]' \
  '(*cur)[key] = merge_patch(cur->contains(key) ? (*cur)[key] : json(), value);' \
  '(*cur)[key] = value;' \
  'overrides: optimizer={"type":"sgd"} resets the file'"'"'s lr to the default without a word'
mutant review2-resume-partial core/sweep_plan.cpp '[sweep]' \
  'if (runs.empty() || !std::all_of(runs.begin(), runs.end(), [](const json& r) { return r.is_object(); })) return false;' \
  'if (false) return false;' \
  'sweep resume: a summary.json whose runs are not runs counted finished, which collect calls failed'
mutant review2-slurm-error app/cmd_sweep.cpp '[slurm]' \
  'std::string("error").rfind(name, 0) == 0);' \
  'false);' \
  'sweep slurm: --slurm-arg=--error=x sends every task'"'"'s stderr to one file (collect loses the reasons)'
mutant review2-slurm-quote app/cmd_sweep_slurm.cpp '[slurm]' \
  's += "#SBATCH " + sbatch_word(arg) + "\n";' \
  's += "#SBATCH " + arg + "\n";' \
  'sweep slurm: --slurm-arg="--comment=a b" written unquoted (sbatch splits it at the space)'
mutant review2-axis-override core/bench_stats.cpp '[sweep]' \
  'bool lost = key == axis.key;' \
  'bool lost = false;' \
  'sweep --grid seed=1,2 seed=5: the override dropped without a word'
mutant review2-value-twice core/bench_stats.cpp '[sweep]' \
  'if (s.values[k] == v)' \
  'if (false)' \
  'sweep --grid seed=1,2,1: two points that are one run'
mutant review2-grid-size app/cmd_sweep.cpp '[sweep]' \
  'if (points > kMaxSweepPoints)' \
  'if (false)' \
  'sweep: a 300,000-point grid planned (2.8 GB of folders) without a word'
mutant review2-amount-rounded core/bench_stats.cpp '[worth]' \
  'const double r = std::stod(fmt::format("{:.3g}", v));' \
  'const double r = v;' \
  'bench: 0.0099996 per 1,000 runs printed "10.0e-3" (the form of the unrounded value)'
mutant review2-ratio-100 core/bench_stats.cpp '[worth]' \
  'if (std::round(f * 10) / 10 < 100)' \
  'if (f < 100)' \
  'bench: a factor of 99.96 printed "100.0" (none from 100)'
mutant review2-tie-column app/bench_report.cpp '[report]' \
  'if (sp == 1) return "equally fast";' \
  ';' \
  'bench: an exact tie reads "GPU 1.00x faster" in the column, "equally fast" in the verdict'
mutant review2-init-model-once app/cmd_sweep.cpp '[sweep]' \
  'if (!a.init_model.empty()) (void)load_model(a.init_model);' \
  ';' \
  'sweep: a missing --init-model blamed on grid point 1'
mutant audit-bench-stamped app/bench_report.cpp '[bench]' \
  'if (const char* stamps = std::getenv("NNTRAIN_RESIDENT_STAMPS"); stamps && *stamps)' \
  'if (const char* stamps = std::getenv("NNTRAIN_RESIDENT_STAMPS"); false && stamps)' \
  'bench: a stamped kernel'"'"'s times (a diagnostic) timed as the path'"'"'s'
mutant review2-axis-parent-override core/bench_stats.cpp '[sweep]' \
  'lost = value.is_object() && sets_path(value, axis.key.substr(key.size() + 1));' \
  'lost = false;' \
  'sweep --grid optimizer.lr=... with optimizer={"lr":0.3}: the override'"'"'s lr dropped without a word'
mutant review2-resume-diverged-both core/sweep_plan.cpp '[sweep]' \
  'r.status = status == "interrupted" ? "interrupted" : status == "diverged" ? "diverged" : "missing";' \
  'r.status = status == "interrupted" ? "interrupted" : "missing";' \
  'sweep collect: a --device both point whose CPU diverged reads missing (exit 5, a resume that runs nothing)'
mutant s33-blame-flag app/cli_flags.cpp '[bad_input]' \
  'if (std::find(flag_keys.begin(), flag_keys.end(), key) == flag_keys.end()) return message;' \
  'if (true) return message;' \
  'train --threads 5000: the error names config /cpu/threads, a key the user never typed'
mutant s33-blame-override app/cli_flags.cpp '[bad_input]' \
  'if (std::find(flag_keys.begin(), flag_keys.end(), key) == flag_keys.end()) return message;' \
  ';' \
  'train cpu.threads=5000 --epochs 3: the error blames --threads, a flag the user never gave'
mutant s33-blame-sweep-point app/cmd_sweep.cpp '[sweep]' \
  'blame_flag(e, a.flag_keys)));' \
  'e.what()));' \
  'sweep --threads 5000: the point'"'"'s error names config /cpu/threads, not the flag'
mutant s33-blame-file-value app/cli_flags.cpp '[bad_input]' \
  'if (dynamic_cast<const ConfigFileError*>(&error)) return message;' \
  ';' \
  'train --threads 4 with cpu.threads 5000 in the file: the error blames --threads for the file'"'"'s value'
mutant s33-cpu-probe-usage app/preflight.cpp '[faults]' \
  'if (d == Device::cpu) throw UsageError(why);' \
  ';' \
  'NNTRAIN_FAST_ISA naming an instruction set the CPU lacks: exit 3 "device unavailable" instead of the documented 2'
mutant s34-env-grid-point app/cmd_sweep.cpp '[errors]' \
  '} catch (const EnvError& e) {' \
  '} catch (const IoError& e) {' \
  'sweep with NNTRAIN_FAST_PHASES=2: the error reads "--grid: point 1 of 2 (seed=1) is invalid", as if the point were wrong'
mutant s34-env-sweep-value app/cmd_bench.cpp '[errors]' \
  '} catch (const EnvError& e) {' \
  '} catch (const IoError& e) {' \
  'bench --sweep with NNTRAIN_FAST_PHASES=2: the error reads "--sweep seed: value 1 of 2 is invalid", as if the value were wrong'

# --- a third review's bugs (2026-11-30): bench's crossover and header, the page's cells, the
# currency, a config twice in a sweep, train's --out folder and resolved config, CSV and JSON
# positions (docs/journal/2026-11-30-review3.md) ----------------------------------------------
mutant s36-crossover-unknown core/bench_stats.cpp '[bench]' \
  'c.unknown_before = k == 0 && valid[0] > 0;' \
  'c.unknown_before = false;' \
  'bench: the GPU diverged at the smallest size, yet "GPU faster at every size tried: the crossover is below this range"'
mutant s36-repeats-swept app/bench_report.cpp '[report]' \
  'if (!r.points.empty() && r.points[0].key == "timing.repeats") {' \
  'if (false) {' \
  'bench --sweep timing.repeats=1,4: the header says 1 repeat per point'
mutant s36-diverged-cells app/bench_report.cpp '[report]' \
  'return run.status() == "ok" ? seconds_text(seconds) : std::string("-");' \
  'return seconds_text(seconds);' \
  'bench: a diverged run'"'"'s partial times in the table beside the word diverged'
mutant s36-seconds-unit app/bench_points.cpp '[sweep][bench]' \
  'if (std::round(s * 1e7) < 1e4) return' \
  'if (s < 1e-3) return' \
  'bench, train: 0.99996 ms printed "1000.0 us"'
mutant s36-currency-markdown core/bench_stats.cpp '[price]' \
  'std::string_view(",\"|\\`*_<>[]~&")' \
  'std::string_view(",\"|")' \
  'bench --currency "<!--": the Markdown page hides the rest of itself'
mutant s36-same-config core/config.cpp '[sweep][errors]' \
  'if (!fresh) return std::make_pair(it->second, k);' \
  ';' \
  'sweep --grid data.grid=5,[5,5]: one run twice'
mutant s36-loss-table-twice app/report.cpp '[report]' \
  'if (ep > 1) rows.push_back(ep);' \
  'rows.push_back(ep);' \
  'train with log_every 1: epoch 1 twice in the loss table'
mutant s36-resolved-provenance core/config.cpp '[outputs]' \
  'if (root.has("nntrain") && !j.at("nntrain").is_object())' \
  'if (false)' \
  'a run'"'"'s config.resolved.json refused as a config ("unknown key nntrain")'
mutant s36-resolved-csv-path app/preflight.cpp '[outputs]' \
  'j["data"]["csv"] = std::filesystem::absolute(cfg.data.csv_resolved).lexically_normal().string();' \
  ';' \
  'config.resolved.json names its CSV relative to the user'"'"'s config, not found from the run folder'
mutant s36-out-input app/preflight.cpp '[outputs]' \
  'if (!path.empty() && same_file(file, path))' \
  'if (false)' \
  'train --out DIR --init-model DIR/model.json: the initial model overwritten'
mutant s36-out-not-regular app/preflight.cpp '[outputs]' \
  'if (::stat(file.c_str(), &st) == 0 && !S_ISREG(st.st_mode))' \
  'if (false)' \
  'train --out DIR with a folder DIR/summary.json: exit 1 after training, not exit 2 before'
mutant s36-stale-gpu-model app/cmd_train.cpp '[outputs]' \
  'if (at == devices.end() || at == devices.begin()) std::filesystem::remove(dir + "/model." + name + ".json");' \
  ';' \
  'train --device cpu into a folder of a --device both run: its model.gpu.json left as if this run'"'"'s'
mutant s36-csv-carriage-return core/dataset.cpp '[data]' \
  'if (const size_t cr = line.find('"'"'\r'"'"'); cr != std::string::npos)' \
  'if (const size_t cr = 0; false)' \
  'CSV: a carriage return inside a cell dropped, "2\r5" read as 25'
mutant s36-json-number-position core/json_reader.cpp '[bad_input]' \
  'in_string = true;' \
  'in_string = false;' \
  'config: 1e400 reported at a string that spells it, lines before the number'
mutant s36-name-too-long core/fileio.cpp '[outputs]' \
  'if (name.size() > 255)' \
  'if (false)' \
  'train --save-model with a 300-byte name: trains, writes the run folder, then exit 1'
mutant s36-init-other-columns app/cmd_train.cpp '[cli]' \
  'if (init_model.empty() || from.inputs.empty() || (from.inputs == data.inputs && from.outputs == data.outputs))' \
  'if (true)' \
  'train --init-model of a model trained on other columns: used silently, its names replaced'
mutant s36-csv-grid-key core/config.cpp '[bad_input]' \
  'if (has_csv && j.contains(key))' \
  'if (false)' \
  'a CSV config with data.grid: "unknown key grid", though grid is a key of generated data'
mutant s36-real-flag-decimal app/cli_flags.cpp '[errors]' \
  'if (text.empty() || end != text.c_str() + text.size() || text.find_first_of("xX") != std::string::npos)' \
  'if (false)' \
  'train --lr 0x10 trains at lr 16; --lr "" is reported as "value 0.0 is out of range"'

# The fourth review (2026-11-30, thirty-seventh session; docs/journal/2026-11-30-review4.md).
mutant s37-stop-while-loading app/cmd_train.cpp '[signal]' \
  'if (stop_requested()) {  // it came while the data loaded' \
  'if (false) {  // it came while the data loaded' \
  'train: SIGTERM while a large CSV loads trains nothing, yet replaces an earlier run'"'"'s model.json in --out'
mutant s37-sweep-stopped-early core/sweep_plan.cpp '[sweep]' \
  '} else if (ended && run_info->at("exit_code") == kExitInterrupted) {' \
  '} else if (false) {' \
  'sweep: a point stopped while its data loaded (exit 130, nothing written) is "failed", not interrupted'
mutant s37-model-flt-max core/model_io.cpp '[faults]' \
  'std::fabs(d) >= 0x1.ffffffp127) r.fail(where, "not a finite float32 number");' \
  'std::fabs(d) > 3.4028234663852886e38) r.fail(where, "not a finite float32 number");' \
  'model.json: a weight of FLT_MAX, as nntrain saves it, refused when read back'
mutant s37-predict-header-shown app/cmd_predict.cpp '[predict]' \
  'for (const auto& n : names) s += (s.empty() ? "" : ", ") + shown(n);' \
  'for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;' \
  'predict: a header'"'"'s ESC or NUL bytes go raw into the error message'
mutant s37-config-nul core/json_reader.cpp '[bad_input]' \
  'if (v.get_ref<const std::string&>().find('"'"'\0'"'"') != std::string::npos)' \
  'if (false)' \
  'config: "data.csv": "a.csv\u0000b" trains on a.csv; an output.dir with a NUL loops on mkdir'
mutant s37-csv-utf16 core/dataset.cpp '[csv]' \
  'if (text.compare(0, 2, "\xFF\xFE") == 0 || text.compare(0, 2, "\xFE\xFF") == 0)' \
  'if (false)' \
  'CSV in UTF-16 (Excel'"'"'s Unicode text): "no column x1" with a header of NULs, not what the file is'
mutant s37-config-is-model core/config.cpp '[bad_input]' \
  'if (const auto f = j.find("format"); f != j.end() && f->is_string())' \
  'if (const auto f = j.find("format"); false)' \
  'a model.json given as --config: "unknown key format", naming no file'
mutant s37-activation-case core/json_reader.cpp '[bad_input]' \
  'if (lower(a) == lower(v)) return a;' \
  'if (false) return a;' \
  'model.json "activation": "ReLU": no "did you mean relu"'
mutant s37-constant-targets core/trainer.cpp '[faults]' \
  'if (var <= 1e-12 * mean_sq) var = mean_sq;' \
  ';' \
  'constant targets: a near-perfect --init-model run "diverged" (exit 4) by rounding'
mutant s37-fast-too-deep app/backend_registry.cpp '[bad_input]' \
  'return env.empty() ? fast_cpu_layers_problem(opt.spec) : env;' \
  'return env;' \
  'fast CPU backend: a 65-layer net writes the run folder, then exit 2'
mutant s37-fast-host-bytes app/preflight.cpp '[errors]' \
  'check_fits_in_memory(training_bytes(cfg.model_spec(), batch, cfg.train.epochs) + backend_bytes +' \
  'check_fits_in_memory(training_bytes(cfg.model_spec(), batch, cfg.train.epochs) + 0 * backend_bytes +' \
  'fast CPU backend: its chunk slots uncounted, a big net admitted, then bad_alloc (exit 1) after the run folder'
mutant s37-model-float-width core/model_io.cpp '[faults]' \
  'return int(r.integer(key, 0, 1, 1 << 20));' \
  'return r.at(key).is_number_integer() ? int(r.integer(key, 0, 1, 1 << 20)) : (r.fail(r.path(key), "expected a positive integer"), 0);' \
  'model.json "in": 2.0 refused, where a config takes 2.0 as 2'
mutant s37-read-file-stream core/fileio.cpp '[signal]' \
  'text += rest.str();' \
  ';' \
  'a CSV that is a pipe or FIFO (no size) read as empty: "empty CSV file"'
