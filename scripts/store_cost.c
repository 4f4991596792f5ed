// store_cost.c — what the non-FMA instructions of the fast backend's AVX2 loops cost next
// to its multiply-adds, on this machine. Each loop runs 12 independent 256-bit FMAs (at two a
// cycle: 6 cycles, the reference) plus one kind of extra instruction, and prints its time per
// iteration in cycles, taking the FMA-only loop as 6 cycles (no clock frequency needed).
// Zen 3 (2026-11-26, docs/BENCHMARKS.md, "Fourteenth round"): max, and, compare, shifts,
// broadcasts from memory and loads came free; each 256- or 128-bit vector store cost about
// one cycle of multiply-adds, a store from a general register nothing.
//
//   cc -O2 -o /tmp/store_cost scripts/store_cost.c && /tmp/store_cost
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
  return 0;
}
#else
int main(void) {
  puts("store_cost: x86-64 only");
  return 0;
}
#endif
