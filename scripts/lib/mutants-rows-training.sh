# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # needs[] is mutant-lanes.sh's associative array, read there
# mutants-rows-training.sh — the first rows of scripts/mutants.sh (sourced by it, in list
# order: scripts/mutants-slice.sh's rotation follows that order): issue 11's six classes and
# the training path (the fast backend's kernels, schedule and pool, optimiser, loss, batching,
# chunking, exit codes, config, model file). Kept apart so that neither file passes 500 lines;
# new rows go at the end of the list (scripts/lib/mutants-rows-reports.sh, sourced last). Row
# format: see scripts/mutants.sh.

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
  'if (end == std::string::npos) end = t_.size();' \
  'if (end == std::string::npos) return false;' \
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
  '"(%[dp],%[tb],4)", "ymm4"' \
  '"(%[dp],%[tb3])", "ymm4"' \
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
  'std::make_unique<ThreadPool>(chunks_for(plan_.batch) == 1 ? (gather_ahead_ ? 2 : 1) : threads_,' \
  'std::make_unique<ThreadPool>(threads_,' \
  'fast backend: one-chunk batches start every thread asked for, idle workers spinning beside the step'
# (Filtered to the thread-count test: the gathering-ahead test's wait_for_ahead would spin
# until the timeout, with no worker to join.)
mutant pool-no-gatherer kernels/cpu/cpu_fast.cpp 'fast backend starts only the threads its steps can use' \
  '(gather_ahead_ ? 2 : 1) : threads_,' \
  '1 : threads_,' \
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
# Tiles of whole 16-sample vectors (kTileQuantum, 2026-11-30): the kernels with blocks of
# several vectors end a tile that is not a whole number of blocks in blocks of one.
mutant tile-end-blocks kernels/cpu/cpu_fast_kernels_forward.inc '[fast],[isa],[kernels]' \
  'if (c < T) mv_block<R, BACK, ACT, 1>(M, rs, ks, init, K, In, ldin, Out, T, r0, Dv, c);' \
  ';' \
  'fast kernels: an AVX-512 tile of 112 samples leaves its last 48 columns uncomputed (blocks of 4 vectors)'
mutant tile-end-wide-forward kernels/cpu/cpu_fast_kernels_fused.inc '[fast],[isa],[kernels]' \
  'const bool wide = a.cols >= 2 && a.T % (kFwdColsMax * LANES) == 0;' \
  'const bool wide = a.cols >= 2;' \
  'fast kernels: the fused forward in blocks of 2 vectors runs past a tile of an odd number of vectors'
