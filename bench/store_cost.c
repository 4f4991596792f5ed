// store_cost.c — what the non-FMA instructions of the fast backend's AVX2 loops cost next
// to its multiply-adds, on this machine. Each loop runs 12 independent 256-bit FMAs (at two a
// cycle: 6 cycles, the reference) plus one kind of extra instruction, and prints its time per
// iteration in cycles, taking the FMA-only loop as 6 cycles (no clock frequency needed).
// Zen 3 (2026-11-26, docs/journal/2026-11-issue14-cpu-minibatch.md, "Fourteenth round"):
// max, and, compare, shifts, broadcasts from memory and loads came free; each 256- or
// 128-bit vector store cost about one cycle of multiply-adds, a store from a general
// register nothing.
// On a CPU with AVX-512 it also runs 12 independent 512-bit FMAs plus one kind of extra
// instruction, and prints what the extra costs in FMAs' worth of time (the reference loop's
// time per FMA; no clock frequency needed, and the same meaning on a core with one 512-bit
// FMA a cycle, as AMD Zen 4, or two). The forward kernel stores each hidden activation once
// (one 512-bit store per 7 multiply-adds in the reference net):
// docs/journal/2026-11-issue14-cpu-minibatch.md, "Sixteenth round".
//
//   cc -O2 -o /tmp/store_cost bench/store_cost.c && /tmp/store_cost
#include <stdio.h>
#include <time.h>

#if defined(__x86_64__)
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define N 50000000L
// The scratch the loops store to and load from: 64-byte aligned, in L1.
static float scratch[64] __attribute__((aligned(64)));

#define FMA12                                                                                          \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm0\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm1\n\t"                  \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm2\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm3\n\t"                  \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm4\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm5\n\t"                  \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm6\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm7\n\t"                  \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm8\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm9\n\t"                  \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm10\n\t vfmadd231ps %%ymm14, %%ymm15, %%ymm11\n\t"

#define LOOP(extra)                                                                                    \
  do {                                                                                                 \
    long n = N;                                                                                        \
    float* p = scratch;                                                                                \
    __asm__ volatile("vxorps %%xmm12, %%xmm12, %%xmm12\n\t vxorps %%xmm13, %%xmm13, %%xmm13\n\t"       \
                     "vxorps %%xmm14, %%xmm14, %%xmm14\n\t vxorps %%xmm15, %%xmm15, %%xmm15\n"         \
                     "1:\n\t" FMA12 extra "dec %0\n\t jnz 1b\n"                                        \
                     : "+r"(n)                                                                         \
                     : "r"(p)                                                                          \
                     : "memory", "rax", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", \
                       "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");         \
  } while (0)

// The same with 512-bit registers (zmm0-15 only: no -mavx512f needed to assemble them; run
// only where the CPU has AVX-512F).
#define FMA12Z                                                                                         \
  "vfmadd231ps %%zmm14, %%zmm15, %%zmm0\n\t vfmadd231ps %%zmm14, %%zmm15, %%zmm1\n\t"                  \
  "vfmadd231ps %%zmm14, %%zmm15, %%zmm2\n\t vfmadd231ps %%zmm14, %%zmm15, %%zmm3\n\t"                  \
  "vfmadd231ps %%zmm14, %%zmm15, %%zmm4\n\t vfmadd231ps %%zmm14, %%zmm15, %%zmm5\n\t"                  \
  "vfmadd231ps %%zmm14, %%zmm15, %%zmm6\n\t vfmadd231ps %%zmm14, %%zmm15, %%zmm7\n\t"                  \
  "vfmadd231ps %%zmm14, %%zmm15, %%zmm8\n\t vfmadd231ps %%zmm14, %%zmm15, %%zmm9\n\t"                  \
  "vfmadd231ps %%zmm14, %%zmm15, %%zmm10\n\t vfmadd231ps %%zmm14, %%zmm15, %%zmm11\n\t"

#define LOOPZ(extra)                                                                                   \
  do {                                                                                                 \
    long n = N;                                                                                        \
    float* p = scratch;                                                                                \
    __asm__ volatile("vxorps %%xmm12, %%xmm12, %%xmm12\n\t vxorps %%xmm13, %%xmm13, %%xmm13\n\t"       \
                     "vxorps %%xmm14, %%xmm14, %%xmm14\n\t vxorps %%xmm15, %%xmm15, %%xmm15\n"         \
                     "1:\n\t" FMA12Z extra "dec %0\n\t jnz 1b\n\t vzeroupper\n"                       \
                     : "+r"(n)                                                                         \
                     : "r"(p)                                                                          \
                     : "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",   \
                       "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");                  \
  } while (0)

static double run512(int which) {
  const double t0 = now();
  switch (which) {
    case 0: LOOPZ(""); break;
    case 1: LOOPZ("vmaxps %%zmm14, %%zmm12, %%zmm12\n\t vmaxps %%zmm14, %%zmm13, %%zmm13\n\t"); break;
    case 2: LOOPZ("vpmaxsd %%zmm14, %%zmm12, %%zmm12\n\t vpmaxsd %%zmm14, %%zmm13, %%zmm13\n\t"); break;
    case 3: LOOPZ("vbroadcastss (%1), %%zmm12\n\t vbroadcastss 4(%1), %%zmm13\n\t"); break;
    case 4: LOOPZ("vmovaps 64(%1), %%zmm12\n\t vmovaps 128(%1), %%zmm13\n\t"); break;
    case 5: LOOPZ("vmovaps %%zmm12, (%1)\n\t"); break;
    case 6: LOOPZ("vmovaps %%zmm12, (%1)\n\t vmovaps %%zmm13, 64(%1)\n\t"); break;
    case 7: LOOPZ("vmovaps %%ymm12, (%1)\n\t vmovaps %%ymm13, 64(%1)\n\t"); break;
  }
  return now() - t0;
}

static double run(int which) {
  const double t0 = now();
  switch (which) {
    case 0: LOOP(""); break;
    case 1: LOOP("vmaxps %%ymm14, %%ymm12, %%ymm12\n\t vmaxps %%ymm14, %%ymm13, %%ymm13\n\t"); break;
    case 2: LOOP("vcmpltps %%ymm14, %%ymm12, %%ymm12\n\t vandps %%ymm14, %%ymm13, %%ymm13\n\t"); break;
    case 3:
      LOOP("vbroadcastss (%1), %%ymm12\n\t vbroadcastss 4(%1), %%ymm13\n\t vbroadcastss 8(%1), %%ymm12\n\t"
           "vbroadcastss 12(%1), %%ymm13\n\t");
      break;
    case 4: LOOP("vmovaps 64(%1), %%ymm12\n\t vmovaps 96(%1), %%ymm13\n\t"); break;
    case 5: LOOP("vmovaps %%ymm12, (%1)\n\t"); break;
    case 6: LOOP("vmovaps %%ymm12, (%1)\n\t vmovaps %%ymm13, 32(%1)\n\t"); break;
    case 7: LOOP("vmovaps %%xmm12, (%1)\n\t vmovaps %%xmm13, 32(%1)\n\t"); break;
    case 8: LOOP("mov %%rax, (%1)\n\t mov %%rax, 32(%1)\n\t"); break;
  }
  return now() - t0;
}

int main(void) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    puts("store_cost: this CPU has no AVX2 and FMA");
    return 0;
  }
  static const char* names[] = {"12 FMA (reference)",  "+ 2 vmaxps",          "+ vcmpps, vandps",
                                "+ 4 vbroadcastss m32", "+ 2 vector loads",    "+ 1 ymm store",
                                "+ 2 ymm stores",       "+ 2 xmm stores",      "+ 2 general-register stores"};
  const int kinds = (int)(sizeof names / sizeof names[0]);
  double best[16];
  for (int k = 0; k < kinds; ++k) best[k] = 1e9;
  for (int round = 0; round < 3; ++round)  // min of 3, interleaved
    for (int k = 0; k < kinds; ++k) {
      const double t = run(k);
      if (t < best[k]) best[k] = t;
    }
  for (int k = 0; k < kinds; ++k)
    printf("%-28s %5.2f ns  %5.2f cycles per iteration\n", names[k], best[k] / N * 1e9, 6.0 * best[k] / best[0]);
  if (!__builtin_cpu_supports("avx512f")) {
    puts("(no AVX-512F: the 512-bit loops are skipped)");
    return 0;
  }
  static const char* names512[] = {"12 zmm FMA (reference)", "+ 2 vmaxps zmm",     "+ 2 vpmaxsd zmm",
                                   "+ 2 vbroadcastss m32",   "+ 2 zmm loads",      "+ 1 zmm store",
                                   "+ 2 zmm stores",         "+ 2 ymm stores"};
  const int kinds512 = (int)(sizeof names512 / sizeof names512[0]);
  for (int k = 0; k < kinds512; ++k) best[k] = 1e9;
  for (int round = 0; round < 3; ++round)
    for (int k = 0; k < kinds512; ++k) {
      const double t = run512(k);
      if (t < best[k]) best[k] = t;
    }
  puts("512-bit: what the extra instructions cost, in FMAs' worth of time (the reference loop's time per FMA)");
  for (int k = 0; k < kinds512; ++k)
    printf("%-28s %5.2f ns  %+5.2f FMAs per iteration\n", names512[k], best[k] / N * 1e9,
           12.0 * (best[k] / best[0] - 1.0));
  return 0;
}
#else
int main(void) {
  puts("store_cost: x86-64 only");
  return 0;
}
#endif
