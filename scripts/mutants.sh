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
# `--list` prints "ID FILE" per mutant (scripts/mutants-slice.sh: CI's rotating slice).
# Environment: MUTANTS_ONLY (comma-separated ids: run just those), MUTANT_TIMEOUT (seconds
# per test run, 300), JOBS (build parallelism per lane, nproc), MUTANT_LANES (lanes: nproc
# up to 4 with ccache, 1 without), MUTANTS_KEEP=1 (keep the scratch folder and print where
# it is).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC="$(pwd)"
JOBS="${JOBS:-$(nproc)}"
MUTANT_TIMEOUT="${MUTANT_TIMEOUT:-300}"
ONLY=",${MUTANTS_ONLY:-},"

ids=() files=() filters=() froms=() tos=() whats=()
# mutant ID FILE TEST-FILTER FROM TO WHAT — FILTER is a Catch2 test spec for nntrain_tests.
mutant() { ids+=("$1"); files+=("$2"); filters+=("$3"); froms+=("$4"); tos+=("$5"); whats+=("$6"); }
# needs[ID]=FLAG: the mutant plants code that runs only on CPUs with that /proc/cpuinfo flag.
declare -A needs=()

# --- the six classes of bugs that once shipped unnoticed (issue 11) ------------------------
mutant fast-partial-tile kernels/cpu/cpu_fast_tile.cpp '[sizes]' \
  's0 < end; s0 += t.T)' \
  's0 + tile_ <= end; s0 += t.T)' \
  'fast backend skips the last partial tile of every chunk'
mutant fast-sgd-last-chunk kernels/cpu/cpu_fast_step.cpp '[sizes]' \
  'for (int c = 0; c < a.chunks; ++c) {' \
  'for (int c = 0; c < a.chunks - 1; ++c) {' \
  'fast backend SGD reduction drops the last chunk'
mutant peaks-cube core/dataset.cpp '[data]' \
  'x / 5 - x * x * x - y * y * y * y * y' \
  'x / 5 - x * x - y * y * y * y * y' \
  'peaks formula: x^3 becomes x^2'
mutant shuffle-seed-reference core/cpu_reference.cpp '[seed]' \
  'make_shuffle_key(uint32_t(plan_.n), opt_.seed, uint64_t(epoch_))' \
  'make_shuffle_key(uint32_t(plan_.n), 1, uint64_t(epoch_))' \
  'reference backend: the shuffle key ignores the seed'
mutant shuffle-seed-trainer core/trainer.cpp '[seed]' \
  'o.seed = cfg.seed;' \
  'o.seed = 1;' \
  'the backends get a fixed shuffle seed whatever the config says'
mutant seed-flag-ignored app/cli_flags.cpp '[seed]' \
  'case Kind::unsigned_integer: value = v.unsigned_integers[i]; break;' \
  'case Kind::unsigned_integer: continue;' \
  'CLI: the --seed flag is parsed but ignored'
mutant init-seed-ignored app/preflight.cpp '[seed]' \
  'init_params(cfg.model_spec(), cfg.model.init, cfg.seed)' \
  'init_params(cfg.model_spec(), cfg.model.init, 1)' \
  'initial weights ignore the seed'
mutant output-activation core/reference_math.hpp '[predict]' \
  'next[o] = act_forward(spec.activation(l), z);' \
  'next[o] = act_forward(spec.hidden, z);' \
  'predict / --write-surface apply the hidden activation to the output layer'
mutant csv-last-row core/dataset.cpp '[csv]' \
  '  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto fields' \
  '  while (std::getline(in, line) && !in.eof()) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto fields' \
  'CSV reader drops a last row without a trailing newline'
mutant csv-line-numbers core/dataset.cpp '[csv]' \
  '    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto fields' \
  '    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++line_no;
    const auto fields' \
  'CSV reader does not count blank lines in its line numbers'

# --- optimiser, loss, activation, batching, chunking, exit codes, config, model file ------
mutant adam-betas-swapped core/optimizer.cpp '[golden]' \
  'return AdamHyper{cfg.lr, cfg.beta1, cfg.beta2, cfg.eps};' \
  'return AdamHyper{cfg.lr, cfg.beta2, cfg.beta1, cfg.eps};' \
  'Adam: beta1 and beta2 swapped'
mutant adam-step-stuck core/optimizer.cpp '[golden]' \
  'step_ = adam_next_step(step_, hyper_);' \
  'step_ = adam_next_step(adam_initial_step(), hyper_);' \
  'Adam: the bias correction stays at step 1'
mutant mse-gradient-factor core/reference_math.hpp '[gradcheck],[golden]' \
  'const T two_over_count = T(2) / (T(count) * T(n_out));' \
  'const T two_over_count = T(1) / (T(count) * T(n_out));' \
  'MSE gradient without its factor 2'
mutant mse-mean-outputs core/reference_math.hpp '[gradcheck]' \
  'return loss / (Acc(count) * Acc(n_out));' \
  'return loss / Acc(count);' \
  'MSE: the mean over samples only, not over outputs'
# The relu derivative of the fused backward through the first layer (grad_backprop_first),
# which every 2-input net such as 2-20-5-1 takes, and the same in mv_block's epilogue (the
# backward into deeper hidden layers, which 2-20-5-1 does not take: that one survived
# [sizes] and is caught by test_fast_cpu.cpp's deeper and wider nets).
mutant relu-backward kernels/cpu/cpu_fast_kernels_backward.inc '[sizes]' \
  '          p = a > vf{} ? p : vf{};
        else if constexpr (ACT != 0)' \
  '          p = a >= vf{} ? p : vf{};
        else if constexpr (ACT != 0)' \
  'fast kernels: relu passes the gradient through units that are off (output 0)'
mutant relu-backward-deep kernels/cpu/cpu_fast_kernels_forward.inc '[fast]~[sizes]' \
  'v = y > vf{} ? v : vf{};' \
  'v = y >= vf{} ? v : vf{};' \
  'fast kernels: the same in the backward into deeper hidden layers'
# The forward's tail (a net of three layers: the loss, the last layer's gradient and the
# delta into the second, in the forward pass): relu', and the padding lanes of a ragged tile.
mutant relu-backward-tail kernels/cpu/cpu_fast_kernels_fused.inc '[sizes]' \
  '      p = a > vf{} ? p : vf{};
    else if constexpr (ACT1 != 0)' \
  '      p = a >= vf{} ? p : vf{};
    else if constexpr (ACT1 != 0)' \
  'fast kernels: the forward tail passes the gradient through second-layer units that are off'
mutant tail-loss-padding kernels/cpu/cpu_fast_kernels_fused.inc '[fast]~[sizes]' \
  'lsum += valid ? diff * diff : vf{};' \
  'lsum += diff * diff;' \
  'fast kernels: the forward tail counts the padding lanes of a ragged tile in the loss'
# The same two in the tail that AVX-512 keeps inside the block loop (kFwdTailPass).
mutant relu-backward-tail-inloop kernels/cpu/cpu_fast_kernels_fused.inc '[kernels]' \
  '            p = a > vf{} ? p : vf{};
          else if constexpr (ACT1 != 0)' \
  '            p = a >= vf{} ? p : vf{};
          else if constexpr (ACT1 != 0)' \
  'fast kernels (AVX-512): the in-loop forward tail passes the gradient through units that are off'
needs[relu-backward-tail-inloop]=avx512f
mutant tail-loss-padding-inloop kernels/cpu/cpu_fast_kernels_fused.inc '[kernels]' \
  'lsum = lsum + (valid ? diff * diff : vf{});' \
  'lsum = lsum + diff * diff;' \
  'fast kernels (AVX-512): the in-loop forward tail counts the padding lanes in the loss'
needs[tail-loss-padding-inloop]=avx512f
# The tail as a pass of its own (ff_tail): the second layer's outputs parked in D's rows, the
# vectors without padding unmasked, the rest masked.
mutant tail-y-rows kernels/cpu/cpu_fast_kernels_fused.inc '[kernels]' \
  'float *H = f.H, *Z = kPass ? f.D : f.Z;' \
  'float *H = f.H, *Z = f.Z;' \
  'fast kernels: the forward leaves the second layer outputs where its tail does not read them'
mutant tail-full-rounds-up kernels/cpu/cpu_fast_kernels_fused.inc '[kernels]' \
  'const int full = (f.count < f.T ? f.count : f.T) / LANES * LANES;' \
  'const int full = (f.count < f.T ? f.count + LANES - 1 : f.T) / LANES * LANES;' \
  'fast kernels: the forward tail takes the partial vector of a ragged tile unmasked'
mutant tail-masked-skip kernels/cpu/cpu_fast_kernels_fused.inc '[kernels]' \
  'for (; c < f.T; c += kAccLanes) ff_tail_vec<OUT, ACT1, true>' \
  'for (c += kAccLanes; c < f.T; c += kAccLanes) ff_tail_vec<OUT, ACT1, true>' \
  'fast kernels: the forward tail skips the first vector that holds padding'
# The same bits on every instruction set (tests/test_fast_isa_bits.cpp): a kernel set that
# multiplies then adds, or whose lanes sum in another order than AVX-512's 16.
mutant generic-fma-unfused kernels/cpu/cpu_fast_generic.cpp '[isa]' \
  '  return vf(_mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi)));' \
  '  return a * b + c;  // two roundings' \
  'generic kernels: multiply-adds rounded twice (the results then differ from AVX-512 and AVX2)'
mutant loss-lanes-width kernels/cpu/cpu_fast_kernels_backward.inc '[isa]' \
  'lsum[h] = lsum[h] + (valid ? diff * diff : zero);' \
  'lsum[0] = lsum[0] + (valid ? diff * diff : zero);' \
  'output delta: the loss summed in the vector width'"'"'s lanes, not 16 (AVX2 and generic differ from AVX-512)'
# The mini-batch input paths: records transposed for shuffled tiles, rows read in place for
# unshuffled ones (test_fast_cpu.cpp runs both against the reference).
mutant gather-transpose kernels/cpu/cpu_fast_kernels_shuffle.inc '[fast]~[sizes]' \
  'const v4 r[4] = {__builtin_shufflevector(t0, t1, 0, 1, 4, 5), __builtin_shufflevector(t0, t1, 2, 3, 6, 7),' \
  'const v4 r[4] = {__builtin_shufflevector(t0, t1, 0, 1, 4, 5), __builtin_shufflevector(t0, t1, 0, 1, 6, 7),' \
  'fast backend: shuffled tiles take two samples second input from the first'
mutant gather-transpose8 kernels/cpu/cpu_fast_kernels_shuffle.inc '[fast]~[sizes]' \
  '__builtin_shufflevector(t0, t1, 2, 3, 10, 11, 6, 7, 14, 15),' \
  '__builtin_shufflevector(t0, t1, 2, 3, 10, 11, 2, 3, 14, 15),' \
  'fast backend: shuffled tiles of 8 records give samples 5 and 6 the second input of samples 1 and 2'
# The VBMI shuffle: its tables are one key's (rebuilt when the key changes), and a piece's
# last partial group of 16 indices is stored masked (never past out[count - 1]).
mutant vbmi-stale-tables kernels/cpu/cpu_fast_shuffle_vbmi.cpp '[partition]' \
  'if (!tab.built || !same_key(tab.key, key)) build_tables(tab, key);' \
  'if (!tab.built) build_tables(tab, key);' \
  'VBMI shuffle: keeps the first key tables for every later epoch'
mutant vbmi-tail-overrun kernels/cpu/cpu_fast_shuffle_vbmi.cpp '[partition]' \
  '      if (rem >= 16)' \
  '      if (rem > 0)' \
  'VBMI shuffle: writes whole groups of 16 indices past the end of a piece'
needs[vbmi-stale-tables]=avx512vbmi
needs[vbmi-tail-overrun]=avx512vbmi
# The grouped shuffle (four vectors' first rounds at once) and AVX2's table-driven packing.
mutant shuffle-group-positions kernels/cpu/cpu_fast_kernels_shuffle.inc '[partition]' \
  'm = append_pending(x[v], lane + uint32_t(j + v * LANES), LANES, key.n, pend, where, m);' \
  'm = append_pending(x[v], lane + uint32_t(j), LANES, key.n, pend, where, m);' \
  'shuffle: a group of first rounds records every vector under the first vector'"'"'s positions'
mutant avx2-leftpack-count kernels/cpu/cpu_fast_avx2.cpp '[partition]' \
  'count[mask] = uint8_t(k);' \
  'count[mask] = uint8_t(k > 0 ? k - 1 : 0);' \
  'AVX2 shuffle: the packing table counts one lane too few, so a value >= n is never walked'
needs[avx2-leftpack-count]=avx2
mutant avx2-lane-sums-tree kernels/cpu/cpu_fast_avx2.cpp '[partition]' \
  '2, 3, 10, 11, 6, 7, 14, 15);' \
  '3, 2, 11, 10, 7, 6, 15, 14);' \
  'AVX2 lane sums: the second level adds s_j + s_j+3 and s_j+1 + s_j+2 (the same sum, another rounding)'
needs[avx2-lane-sums-tree]=avx2
mutant avx2-masked-io kernels/cpu/cpu_fast_avx2.cpp '[fast]' \
  '_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));' \
  '_mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8));' \
  'AVX2 masked loads and stores: a partial vector (the parameters'"'"' last) misses its last lane'
needs[avx2-masked-io]=avx2
mutant avx2-gbp-relu-row kernels/cpu/cpu_fast_avx2.cpp '[kernels]' \
  '(%[dp],%[tb],4), %%ymm14' \
  '(%[dp],%[tb3]), %%ymm14' \
  'AVX2 fused backward columns: the fifth D row is read from the fourth'"'"'s place'
needs[avx2-gbp-relu-row]=avx2
mutant avx2-gbp-relu-mask kernels/cpu/cpu_fast_avx2.cpp '[kernels]' \
  'vcmpps $0x1e, %[zero]' \
  'vcmpps $0x1d, %[zero]' \
  'AVX2 fused backward columns: the relu mask keeps a = 0 (a >= 0 instead of a > 0)'
needs[avx2-gbp-relu-mask]=avx2
mutant avx2-gbp-relu-fresh kernels/cpu/cpu_fast_avx2.cpp '[kernels]' \
  '"je 3f\n\t"' \
  '"jmp 3f\n\t"' \
  'AVX2 fused backward columns: a fresh tile adds to the accumulators'"'"' old values'
needs[avx2-gbp-relu-fresh]=avx2
mutant avx2-gbp-relu-first-mul kernels/cpu/cpu_fast_avx2.cpp '[kernels]' \
  '"vfmadd213ps %[zero], %%ymm14, %%ymm15\n\t"' \
  '"vmulps %%ymm14, %%ymm8, %%ymm15\n\t"' \
  'AVX2 fused backward columns: p starts as w0 d0 (a multiply), not w0 d0 + 0: a -0 where the C++ loop has +0'
needs[avx2-gbp-relu-first-mul]=avx2
# The schedule: a worker that joins a step late must not take a chunk again once the
# parameter blocks have started (their claims reuse the chunks' counters with the next tag).
mutant claim-later-tag kernels/cpu/cpu_fast_step.cpp '[determinism]' \
  'if ((v >> kClaimShift) > tag) return -1;' \
  'if (false) return -1;' \
  'fast backend: a late worker takes chunks again during the reduction'
# Two buffers of parameters (a step on several threads reads one and updates the other).
mutant params-not-swapped kernels/cpu/cpu_fast_step.cpp '[determinism]' \
  '    pin_ ^= 1;' \
  '    (void)pin_;' \
  'fast backend: multi-thread steps update the spare parameters and keep reading the old'
# The pool wakes sleeping workers only when it counts them asleep.
mutant pool-lost-wakeup kernels/cpu/thread_pool.cpp '[pool]' \
  'sleepers_.fetch_add(1, std::memory_order_seq_cst);' \
  '(void)0;' \
  'thread pool: a worker going to sleep is not counted, so no region wakes it again'
# A region ends only once every worker inside it has left (ThreadPool::run).
mutant pool-leave-unwaited kernels/cpu/thread_pool.cpp '[pool]' \
  'p.load(std::memory_order_seq_cst) == inside;' \
  'false;' \
  'thread pool: run() returns while a worker that joined is still running its part'
mutant pool-shared-leave-unwaited kernels/cpu/thread_pool.cpp '[pool]' \
  '(state_.load(std::memory_order_acquire) & kInside) != 0;' \
  'false;' \
  'thread pool: a two-thread region returns while its worker is still running its part'
# The chunks done in a step: only the threads' lines that carry the step's number count.
mutant done-stale-lines kernels/cpu/cpu_fast_step.cpp '[determinism]' \
  'if ((v >> kClaimShift) == a.seq) n += int64_t(v & kClaimMask);' \
  'n += int64_t(v & kClaimMask);' \
  'fast backend: the chunks a thread computed in earlier steps count as done in this one'
# Adam with subnormals flushed (cpu_fast_kernels_adam.inc, k_reduce_adam).
mutant adam-no-flush kernels/cpu/cpu_fast_kernels_adam.inc 'fast kernels: reduce_adam*' \
  'const FlushSubnormals flush(h.eps >= kFlushMinEps);' \
  'const FlushSubnormals flush(false);' \
  "fast backend: Adam's subnormal moments kept (each operation on them on x86's slow path)"
mutant adam-flush-tiny-eps kernels/cpu/cpu_fast_kernels_adam.inc 'fast kernels: reduce_adam*' \
  'const FlushSubnormals flush(h.eps >= kFlushMinEps);' \
  'const FlushSubnormals flush(true);' \
  'fast backend: subnormals flushed in Adam even with a tiny eps (a zero denominator, or one a flushed v dominated)'
mutant adam-ftz-only kernels/cpu/cpu_fast_kernels_adam.inc 'fast kernels: reduce_adam*' \
  '__builtin_ia32_ldmxcsr(saved_ | 0x8040u);' \
  '__builtin_ia32_ldmxcsr(saved_ | 0x8000u);' \
  'fast backend: Adam flushes subnormal results but reads subnormal slot values as they are'
mutant adam-daz-only kernels/cpu/cpu_fast_kernels_adam.inc 'fast kernels: reduce_adam*' \
  '__builtin_ia32_ldmxcsr(saved_ | 0x8040u);' \
  '__builtin_ia32_ldmxcsr(saved_ | 0x0040u);' \
  'fast backend: Adam reads subnormals as zero but still writes subnormal results'
mutant adam-mxcsr-leaks kernels/cpu/cpu_fast_kernels_adam.inc 'fast kernels: reduce_adam*' \
  '    if (on_) __builtin_ia32_ldmxcsr(saved_);' \
  '    (void)saved_;' \
  "fast backend: Adam leaves flush-to-zero on in the caller's MXCSR"
# NNTRAIN_FAST_PHASES's medians (phase_hist.hpp).
mutant phase-hist-octave-only kernels/cpu/phase_hist.hpp '[phases]' \
  'return (e - kSubBits + 1) * kSub + int((v >> (e - kSubBits)) & uint64_t(kSub - 1));' \
  'return (e - kSubBits + 1) * kSub + int((v >> (e - kSubBits)) & uint64_t(kSub / 2 - 1));' \
  'phase histogram: a bit of each value dropped, 16 buckets an octave used of 32'
mutant phase-hist-bucket-low kernels/cpu/phase_hist.hpp '[phases]' \
  'if (seen >= rank) return b < kSub ? double(b) : 0.5 * (low(b) + low(b + 1));' \
  'if (seen >= rank) return b < kSub ? double(b) : low(b + 1);' \
  "phase histogram: a quantile read back as its bucket's upper end"
# The sweep table's times (sweep --collect).
mutant sweep-time-ms app/cmd_sweep_collect.cpp 'sweep local: 6 points*' \
  'return s ? seconds_text(*s) : "";' \
  'return s ? fmt::format("{:.2f} ms", *s * 1e3) : "";' \
  'sweep table: a training time under 1 ms prints as 0.00 ms'
# The pool holds only the threads a step can use (CpuFastBackend's constructor).
mutant pool-idle-workers kernels/cpu/cpu_fast.cpp '[fast]' \
  'std::make_unique<ThreadPool>(chunks_for(plan_.batch) == 1 ? (gather_ahead_ ? 2 : 1) : threads_)' \
  'std::make_unique<ThreadPool>(threads_)' \
  'fast backend: one-chunk batches start every thread asked for, idle workers spinning beside the step'
# (Filtered to the thread-count test: the gathering-ahead test's wait_for_ahead would spin
# until the timeout, with no worker to join.)
mutant pool-no-gatherer kernels/cpu/cpu_fast.cpp 'fast backend starts only the threads its steps can use' \
  '(gather_ahead_ ? 2 : 1) : threads_)' \
  '1 : threads_)' \
  'fast backend: a pool of one thread for one-chunk batches, so no worker gathers ahead'
# Gathering a shuffled one-chunk batch ahead on a second thread (CpuFastBackend::step).
mutant ahead-same-batch kernels/cpu/cpu_fast_step.cpp '[determinism]' \
  'a.next_b = last ? 0 : b + 1;' \
  'a.next_b = last ? 0 : b;' \
  'fast backend: the worker gathers the current batch ahead instead of the next (found by no step)'
mutant ahead-epoch-blind kernels/cpu/cpu_fast_step.cpp '[determinism]' \
  'if (ahead_[i].epoch == epoch_ && ahead_[i].b == b) a.use = i;' \
  'if (ahead_[i].b == b) a.use = i;' \
  'fast backend: a tile gathered ahead for another epoch (before a load()) is used'
mutant ahead-epoch-key kernels/cpu/cpu_fast_step.cpp '[determinism]' \
  'a.next_key = last ? next_key : key;' \
  'a.next_key = key;' \
  "fast backend: the last step gathers the next epoch's first batch with this epoch's key"
mutant unshuffled-in-place kernels/cpu/cpu_fast_tile.cpp '[fast]~[sizes]' \
  '    t.ins[0] = xs_.p + pos0;' \
  '    t.ins[0] = xs_.p + size_t(s0);' \
  'fast backend: unshuffled mini-batches read the first batch inputs every step'
mutant minibatch-last-dropped core/backend.cpp '[batch],[sizes]' \
  'p.batches = (n + p.batch - 1) / p.batch;' \
  'p.batches = n / p.batch;' \
  'batch plan drops the last partial mini-batch'
mutant reference-loss-mean core/cpu_reference.cpp '[sizes]' \
  'losses[e] = float(sum / plan_.batches);' \
  'losses[e] = float(sum / plan_.n);' \
  'reference backend: the epoch loss divided by the sample count instead of the batch count'
mutant epoch-chunk-remainder core/trainer.cpp '[chunks]' \
  'while (done < p.total) {' \
  'while (done + p.chunk <= p.total) {' \
  'training in chunks of log_every epochs skips the remainder'
mutant exit-io-error app/cmd_common.cpp 'exceptions map to the documented exit codes' \
  '  } catch (const IoError& e) {
    fmt::print(stderr, "nntrain: error: {}\n", e.what());
    return kExitInternal;' \
  '  } catch (const IoError& e) {
    fmt::print(stderr, "nntrain: error: {}\n", e.what());
    return kExitUsage;' \
  'exit code: an I/O error exits 2 instead of 1'
mutant exit-diverged app/cmd_train.cpp '[cli][errors]' \
  'r.diverged_epoch, dir);
      return kExitDiverged;' \
  'r.diverged_epoch, dir);
      return kExitInternal;' \
  'exit code: a diverged run exits 1 instead of 4'
mutant config-lr-zero core/config.cpp '[bad_input]' \
  'c.lr = o.number("lr", c.lr, 0.0, 1e6, /*lo_open=*/true);' \
  'c.lr = o.number("lr", c.lr, 0.0, 1e6, /*lo_open=*/false);' \
  'config: a learning rate of 0 is accepted'
mutant model-save-transposed core/model_io.cpp '[model]' \
  'os << (c ? ", " : "") << W[size_t(r) * in + c];' \
  'os << (c ? ", " : "") << W[size_t(c) * out + r];' \
  'model.json: W written column-major'

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
  'if (s == "ok" || s == "diverged") return true;' \
  'if (s == "ok" || s == "diverged" || s == "interrupted") return true;' \
  'sweep: a resume treats an interrupted point as finished (rerunning never completes it: exit 5 forever)'
mutant sweep-stop-after-last core/sweep_plan.cpp 'sweep resume*' \
  'if (r.status == "interrupted" && run_complete(run)) {' \
  'if (false) {' \
  'sweep table: a point whose stop came after its last epoch is "interrupted" (rerun) though its model is whole'
mutant sweep-dup-signal app/cmd_sweep_local.cpp 'sweep local: Ctrl-C*' \
  '} else if (!same_stop_signal(g_first_from, g_first_t, from, t)) {' \
  '} else {' \
  "sweep: the process group's copy of a stop signal (timeout -s INT) counts as a second one and SIGKILLs the points"

# ---------------------------------------------------------------------------------------------
selected() { [[ "$ONLY" == ",," || "$ONLY" == *",$1,"* ]]; }
# How often mutant $1's pattern occurs in file $2.
occurrences() { FROM="${froms[$1]}" perl -0777 -ne '$n = () = /\Q$ENV{FROM}\E/g; print $n' "$2" 2>/dev/null || echo 0; }

# --list: "ID FILE" per mutant, in list order (scripts/mutants-slice.sh chooses from it).
if [[ "${1:-}" == --list ]]; then
  for i in "${!ids[@]}"; do echo "${ids[$i]} ${files[$i]}"; done
  exit 0
fi
# --check: only that every pattern is found exactly once in this tree (seconds, no build;
# a ctest runs it so that source drift shows at once).
if [[ "${1:-}" == --check ]]; then
  bad=0
  for i in "${!ids[@]}"; do
    c=$(occurrences "$i" "$SRC/${files[$i]}")
    if [[ "$c" != 1 ]]; then
      echo "mutants: ERROR: ${ids[$i]}: pattern found $c times in ${files[$i]}"
      bad=1
    fi
  done
  for id in "${!needs[@]}"; do
    if [[ " ${ids[*]} " != *" $id "* ]]; then
      echo "mutants: ERROR: needs[$id]: no mutant of that name"
      bad=1
    fi
  done
  echo "mutants: ${#ids[@]} mutants, $([[ $bad == 0 ]] && echo 'every pattern found once' || echo 'some patterns not found once')"
  exit $((bad * 2))
fi

start=$(date +%s)
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/nntrain-mutants.XXXXXX")"
cleanup() {
  local p
  p=$(jobs -p)
  if [[ -n "$p" ]]; then
    kill $p 2>/dev/null || true
    wait 2>/dev/null || true
  fi
  if [[ "${MUTANTS_KEEP:-0}" != 1 ]]; then rm -rf "$SCRATCH"; fi
}
trap cleanup EXIT
if [[ "${MUTANTS_KEEP:-0}" == 1 ]]; then echo "mutants: scratch copy kept in $SCRATCH"; fi

# Lanes: copies of the tree (lane1, lane2, ...), each with its own build inside, that take
# mutants from one queue. A mutant of one file rebuilds one unit on one core and links: two
# lanes keep two cores busy. More than one lane only through ccache: a lane's first build is
# then the first lane's objects from the cache, and restoring a file after its mutant is a hit.
# Each lane is laid out like the work tree (the build folder inside the copy) so that, with
# CCACHE_BASEDIR, its compile lines are the work tree's build/ ones: scripts/build.sh's
# objects are hits too.
have_ccache=0
command -v ccache >/dev/null 2>&1 && have_ccache=1
if [[ -n "${MUTANT_LANES:-}" ]]; then
  LANES=$MUTANT_LANES
elif ((have_ccache)); then
  LANES=$(nproc)
  ((LANES > 4)) && LANES=4
else
  LANES=1
fi
((LANES >= 1)) || LANES=1
wanted=0
for id in "${ids[@]}"; do selected "$id" && wanted=$((wanted + 1)); done
((LANES > wanted && wanted > 0)) && LANES=$wanted  # (MUTANTS_ONLY=one: no second copy to build)
launcher=()
if ((have_ccache)); then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_NOHASHDIR=1
fi
lane_dir() { echo "$SCRATCH/lane$1"; }
echo "mutants: copying the tree to $SCRATCH/lane1 (load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'))"
mkdir -p "$SCRATCH/lane1" "$SCRATCH/run1" "$SCRATCH/results"
# Tracked and untracked-but-not-ignored files: what a commit of the work tree would hold.
git ls-files -z --cached --others --exclude-standard |
  tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$SCRATCH/lane1"
for ((k = 2; k <= LANES; ++k)); do
  mkdir -p "$SCRATCH/run$k"
  cp -a "$SCRATCH/lane1" "$SCRATCH/lane$k"
done
configure() {  # configure LANE
  local d
  d=$(lane_dir "$1")
  # (Each lane's compile lines relative to its own copy: see above.)
  CCACHE_BASEDIR="$d" cmake -S "$d" -B "$d/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNNTRAIN_WITH_CUDA=OFF \
    -DNNTRAIN_RUNNABLE_ONLY=ON "${launcher[@]}" >/dev/null
}
build() {  # build LANE
  local d
  d=$(lane_dir "$1")
  CCACHE_BASEDIR="$d" cmake --build "$d/build" --parallel "$JOBS" --target nntrain nntrain_tests >"$d/build.log" 2>&1
}
tests_pass() {  # tests_pass LANE FILTER: 0 when every selected test passes
  (cd "$SCRATCH/run$1" && timeout "$MUTANT_TIMEOUT" "$(lane_dir "$1")/build/tests/nntrain_tests" --abort "$2" \
    >"$SCRATCH/run$1/test.log" 2>&1)
}
echo "mutants: building the scratch copy (CPU-only Release$( ((have_ccache)) && echo ', through ccache'))"
configure 1
if ! build 1; then
  tail -n 30 "$SCRATCH/lane1/build.log"
  echo "mutants: ERROR: the unmutated tree does not build"
  exit 2
fi
echo "mutants: built in $(( $(date +%s) - start )) s"
if ((LANES > 1)); then
  for ((k = 2; k <= LANES; ++k)); do
    configure "$k"
    if ! build "$k"; then
      tail -n 30 "$SCRATCH/lane$k/build.log"
      echo "mutants: ERROR: lane $k's copy does not build"
      exit 2
    fi
  done
  echo "mutants: $LANES lanes built in $(( $(date +%s) - start )) s"
fi

# Without a mutant every filter must pass, or a "kill" would mean nothing.
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

# What can be decided without a build (a pattern that drifted, a CPU feature this machine
# lacks) is decided here; the rest goes in the queue.
n=0 killed=0 errors=0 not_run=0
queue=()
cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
for i in "${!ids[@]}"; do
  id="${ids[$i]}"
  selected "$id" || continue
  n=$((n + 1))
  count=$(occurrences "$i" "$SCRATCH/lane1/${files[$i]}")
  if [[ "$count" != 1 ]]; then
    printf 'ERROR     %-24s pattern found %s times in %s (source drifted: update the list)\n' "$id" "$count" \
      "${files[$i]}"
    errors=$((errors + 1))
    continue
  fi
  # A mutant in code that only runs on a CPU feature this machine lacks cannot be killed
  # here (its tests report skipped): it is reported and left out of the count, not SURVIVED.
  feature="${needs[$id]:-}"
  if [[ -n "$feature" && "$cpu_flags" != *" $feature "* ]]; then
    printf 'NOT RUN   %-24s %s  [this CPU has no %s: the planted code cannot run here]\n' "$id" "${whats[$i]}" \
      "$feature"
    n=$((n - 1))
    not_run=$((not_run + 1))
    continue
  fi
  queue+=("$i")
done

# One mutant in lane $1: planted, built, tested, restored. Its line goes to stdout (one write:
# lanes' lines do not mix) and its outcome to results/<index>.
run_mutant() {
  local k=$1 i=$2 id="${ids[$2]}" file t0 outcome
  file="$(lane_dir "$k")/${files[$i]}"
  t0=$(date +%s)
  cp "$file" "$SCRATCH/orig$k"
  FROM="${froms[$i]}" TO="${tos[$i]}" perl -0777 -pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/' "$file"
  if ! build "$k"; then
    outcome=ERROR
    printf 'ERROR     %-24s does not compile (fix the mutant)\n%s\n' "$id" \
      "$(grep -m 3 'error' "$(lane_dir "$k")/build.log" || true)"
  elif tests_pass "$k" "${filters[$i]}"; then
    outcome=SURVIVED
    printf 'SURVIVED  %-24s %s  [%s, %d s]\n' "$id" "${whats[$i]}" "${filters[$i]}" $(( $(date +%s) - t0 ))
  else
    outcome=KILLED
    printf 'KILLED    %-24s %s  [%s, %d s]\n' "$id" "${whats[$i]}" "${filters[$i]}" $(( $(date +%s) - t0 ))
  fi
  cp "$SCRATCH/orig$k" "$file"
  touch "$file"  # newer than the mutant's objects: the next build recompiles it (a ccache hit)
  echo "$outcome" >"$SCRATCH/results/$i"
}
# The queue's next entry (an index into queue), or nothing when it is empty; one lane at a time.
take() {
  local next
  {
    flock 9
    next=$(cat "$SCRATCH/next")
    echo $((next + 1)) >"$SCRATCH/next"
  } 9>"$SCRATCH/next.lock"
  ((next < ${#queue[@]})) && echo "$next"
  return 0
}
lane() {
  local k=$1 q
  while q=$(take) && [[ -n "$q" ]]; do run_mutant "$k" "${queue[$q]}"; done
}
echo 0 >"$SCRATCH/next"
if ((LANES > 1)) && command -v flock >/dev/null 2>&1; then
  pids=()
  for ((k = 1; k <= LANES; ++k)); do
    lane "$k" &
    pids+=($!)
  done
  wait "${pids[@]}" || true  # (a lane that stopped early leaves outcomes missing: counted below)
else
  for i in "${queue[@]}"; do run_mutant 1 "$i"; done
fi
for i in "${queue[@]}"; do
  case "$(cat "$SCRATCH/results/$i" 2>/dev/null || echo LOST)" in
    KILLED) killed=$((killed + 1)) ;;
    SURVIVED) ;;
    ERROR) errors=$((errors + 1)) ;;
    *)
      printf 'ERROR     %-24s no outcome recorded (its lane stopped)\n' "${ids[$i]}"
      errors=$((errors + 1))
      ;;
  esac
done

echo "mutants: $(( $(date +%s) - start )) s in all ($LANES lane$( ((LANES > 1)) && echo s)), load average now $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
echo "mutants: $killed of $n killed$( ((not_run)) && echo " ($not_run not run: this CPU lacks what they need)")"
if (( errors > 0 )); then exit 2; fi
if (( n > 0 && killed * 10 < n * 9 )); then exit 1; fi
exit 0
