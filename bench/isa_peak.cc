// The CPU's arithmetic peak per instruction set, measured: fp32 FMA (AVX-512, AVX2) and the
// bf16 dot product (AVX512_BF16's vdpbf16ps), each as 12 independent accumulator chains
// (enough to hide the latency), on 1 thread and on N threads at once. It tells whether a
// route can win on arithmetic on this CPU: on the 2-core Xeon of session 34, vdpbf16ps ran
// at half the FLOP rate of fp32 FMA, so bf16 engines cannot beat fp32 ones on compute-bound
// layers there (docs/benchmarks.md, session 34).
//   g++ -O2 -pthread bench/isa_peak.cc -o /tmp/isa_peak && /tmp/isa_peak [THREADS]
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr long kIters = 20000000;  // of 12 instructions each
constexpr int kChains = 12;

__attribute__((target("avx512f"))) float Fma512() {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1e-9f * static_cast<float>(i));
  const __m512 x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(0.9999999f);
  for (long n = 0; n < kIters; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
  }
  alignas(64) float v[16];
  float s = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm512_store_ps(v, acc[i]);
    for (float f : v) s += f;
  }
  return s;
}

__attribute__((target("avx2,fma"))) float Fma256() {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(1e-9f * static_cast<float>(i));
  const __m256 x = _mm256_set1_ps(1.0000001f), y = _mm256_set1_ps(0.9999999f);
  for (long n = 0; n < kIters; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
  }
  alignas(32) float v[8];
  float s = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm256_store_ps(v, acc[i]);
    for (float f : v) s += f;
  }
  return s;
}

__attribute__((target("avx512f,avx512bf16,avx512bw,avx512vl"))) float Dp512Bf16() {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_setzero_ps();
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80);  // bf16 1.0
  for (long n = 0; n < kIters; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, a);
  }
  alignas(64) float v[16];
  float s = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm512_store_ps(v, acc[i]);
    for (float f : v) s += f;
  }
  return s;
}

// GFLOP/s of `fn` (flops_per_instr per instruction) run on `threads` threads at once, summed.
double Rate(float (*fn)(), double flops_per_instr, int threads) {
  std::vector<std::thread> pool;
  std::vector<float> sink(threads);
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sink[t] = fn(); });
  for (auto& th : pool) th.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  volatile float keep = sink[0];
  (void)keep;
  return threads * static_cast<double>(kIters) * kChains * flops_per_instr / s / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  char* end = nullptr;
  const long threads = argc > 1 ? std::strtol(argv[1], &end, 10) : 2;
  if (argc > 2 || (argc > 1 && (*end != '\0' || threads < 1 || threads > 1024))) {
    std::fprintf(stderr, "usage: isa_peak [THREADS]  (THREADS: 1 to 1024, default 2; got '%s')\n",
                 argc > 1 ? argv[1] : "");
    return 2;
  }
  struct Probe {
    const char* name;
    bool available;
    float (*fn)();
    double flops;
  };
  const Probe probes[] = {
      {"fp32 FMA, AVX-512 (vfmadd zmm)", __builtin_cpu_supports("avx512f") != 0, Fma512, 32},
      {"fp32 FMA, AVX2 (vfmadd ymm)", __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), Fma256, 16},
      {"bf16 dot, AVX512_BF16 (vdpbf16ps zmm)",
       __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl"),
       Dp512Bf16, 64},
  };
  std::printf("%-40s %14s %14s\n", "GFLOP/s", "1 thread", (std::to_string(threads) + " threads").c_str());
  for (const Probe& p : probes) {
    if (!p.available) {
      std::printf("%-40s %14s\n", p.name, "not on this CPU");
      continue;
    }
    const double one = Rate(p.fn, p.flops, 1);
    const double all = Rate(p.fn, p.flops, static_cast<int>(threads));
    std::printf("%-40s %14.1f %14.1f\n", p.name, one, all);
  }
  return 0;
}
