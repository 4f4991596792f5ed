// fma_peak.c — the machine's fused multiply-add peak, measured (scripts/bench/bench_cpu.sh builds
// and runs it in the same run as the timings it is compared with).
//
//   fma_peak THREADS [REPEATS]  ->  one line: {"threads": T, "gflops": G, "isa": "..."}
//
// Each thread runs independent chains of vector FMAs on the widest vectors the CPU has: 16
// with AVX-512 (32 registers), 12 with AVX2 (16 registers: the 12 chains and the two
// constants fit; 16 chains did not, and the spills to the stack halved the measured peak on
// an AVX2-only machine, 2026-11-25). 12 still covers two FMA pipes of latency 4-5 (8-10
// chains). ~50 ms per repeat at 100 GFLOP/s; the best repeat's wall time over all threads
// counts, 2 flops per lane per FMA. tests/CMakeLists.txt's fma_peak_no_spills checks the
// compiled loops keep every chain in a register (noinline: it finds them by name).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHAINS512 16
#define CHAINS256 12
static long iters = 10000000;
static volatile float sink;

#if defined(__x86_64__)
#include <immintrin.h>
__attribute__((target("avx512f,fma"), noinline)) static void run512(void) {
  __m512 acc[CHAINS512];
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
#pragma GCC unroll 16
  for (int j = 0; j < CHAINS512; ++j) acc[j] = _mm512_set1_ps((float)j);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < CHAINS512; ++j) acc[j] = _mm512_fmadd_ps(acc[j], m, a);
  }
  float s = 0;
  for (int j = 0; j < CHAINS512; ++j) s += _mm512_reduce_add_ps(acc[j]);
  sink = s;
}
__attribute__((target("avx2,fma"), noinline)) static void run256(void) {
  __m256 acc[CHAINS256];
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
#pragma GCC unroll 16
  for (int j = 0; j < CHAINS256; ++j) acc[j] = _mm256_set1_ps((float)j);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < CHAINS256; ++j) acc[j] = _mm256_fmadd_ps(acc[j], m, a);
  }
  float s = 0;
  for (int j = 0; j < CHAINS256; ++j) {
    float v[8];
    _mm256_storeu_ps(v, acc[j]);
    for (int k = 0; k < 8; ++k) s += v[k];
  }
  sink = s;
}
#endif

static int lanes = 0;
static void* worker(void* arg) {
  (void)arg;
#if defined(__x86_64__)
  if (lanes == 16) run512(); else run256();
#endif
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 1;
  const int repeats = argc > 2 ? atoi(argv[2]) : 5;
#if defined(__x86_64__)
  __builtin_cpu_init();
  lanes = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("fma") ? 8 : 0;
#endif
  if (lanes == 0 || threads < 1) {
    fprintf(stderr, "fma_peak: needs x86-64 with FMA and a thread count >= 1\n");
    return 2;
  }
  double best = 1e30;
  pthread_t* t = malloc(sizeof(pthread_t) * (size_t)threads);
  for (int r = 0; r < repeats; ++r) {
    const double t0 = now();
    for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    const double dt = now() - t0;
    if (dt < best) best = dt;
  }
  const double flops = 2.0 * lanes * (lanes == 16 ? CHAINS512 : CHAINS256) * (double)iters * threads;
  printf("{\"threads\": %d, \"gflops\": %.1f, \"isa\": \"%s\"}\n", threads, flops / best / 1e9,
         lanes == 16 ? "avx512" : "avx2");
  free(t);
  return 0;
}
