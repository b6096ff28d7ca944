// The core's multiply-add peak for the GEMM kernel in use: a loop of independent vector
// multiply-adds on registers (no loads, no stores), so the benches can say what fraction of it a
// product reaches. The machines these benches run on change their clock between runs (the same
// 2-core Intel Xeon measured 109 and 132 GFLOP/s with AVX2 an hour apart), and a ratio to a peer is
// only read right beside the peak it ran at.
#pragma once

#include <ctime>

#include "runtime/gemm.hpp"

namespace raspc::bench {

inline double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#if defined(__x86_64__)
// 24 multiply-adds a turn into 12 (AVX2) or 24 (AVX-512) accumulators: more independent chains
// than the two FMA ports times their latency of 4 keep busy, so the loop runs at the ports' rate.
// All registers start at zero (a stale denormal would make every multiply-add a microcode assist)
// and the loop is the assembly's own, so nothing but the 24 multiply-adds and the count runs.
__attribute__((target("avx2,fma"))) inline void madd_turns_avx2(long turns) {
#define RASPC_ZERO(r) "vxorps %%ymm" #r ", %%ymm" #r ", %%ymm" #r "\n\t"
#define RASPC_MADD(r) "vfmadd231ps %%ymm14, %%ymm15, %%ymm" #r "\n\t"
  __asm__ volatile(
      RASPC_ZERO(0) RASPC_ZERO(1) RASPC_ZERO(2) RASPC_ZERO(3) RASPC_ZERO(4) RASPC_ZERO(5) RASPC_ZERO(6) RASPC_ZERO(7)
      RASPC_ZERO(8) RASPC_ZERO(9) RASPC_ZERO(10) RASPC_ZERO(11) RASPC_ZERO(14) RASPC_ZERO(15)
      "1:\n\t"
      RASPC_MADD(0) RASPC_MADD(1) RASPC_MADD(2) RASPC_MADD(3) RASPC_MADD(4) RASPC_MADD(5) RASPC_MADD(6) RASPC_MADD(7)
      RASPC_MADD(8) RASPC_MADD(9) RASPC_MADD(10) RASPC_MADD(11) RASPC_MADD(0) RASPC_MADD(1) RASPC_MADD(2)
      RASPC_MADD(3) RASPC_MADD(4) RASPC_MADD(5) RASPC_MADD(6) RASPC_MADD(7) RASPC_MADD(8) RASPC_MADD(9)
      RASPC_MADD(10) RASPC_MADD(11)
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(turns)
      :
      : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm14", "xmm15");
#undef RASPC_MADD
#undef RASPC_ZERO
}
__attribute__((target("avx512f"))) inline void madd_turns_avx512(long turns) {
#define RASPC_ZERO(r) "vpxord %%zmm" #r ", %%zmm" #r ", %%zmm" #r "\n\t"
#define RASPC_MADD(r) "vfmadd231ps %%zmm30, %%zmm31, %%zmm" #r "\n\t"
  __asm__ volatile(
      RASPC_ZERO(0) RASPC_ZERO(1) RASPC_ZERO(2) RASPC_ZERO(3) RASPC_ZERO(4) RASPC_ZERO(5) RASPC_ZERO(6) RASPC_ZERO(7)
      RASPC_ZERO(8) RASPC_ZERO(9) RASPC_ZERO(10) RASPC_ZERO(11) RASPC_ZERO(12) RASPC_ZERO(13) RASPC_ZERO(14)
      RASPC_ZERO(15) RASPC_ZERO(16) RASPC_ZERO(17) RASPC_ZERO(18) RASPC_ZERO(19) RASPC_ZERO(20) RASPC_ZERO(21)
      RASPC_ZERO(22) RASPC_ZERO(23) RASPC_ZERO(30) RASPC_ZERO(31)
      "1:\n\t"
      RASPC_MADD(0) RASPC_MADD(1) RASPC_MADD(2) RASPC_MADD(3) RASPC_MADD(4) RASPC_MADD(5) RASPC_MADD(6) RASPC_MADD(7)
      RASPC_MADD(8) RASPC_MADD(9) RASPC_MADD(10) RASPC_MADD(11) RASPC_MADD(12) RASPC_MADD(13) RASPC_MADD(14)
      RASPC_MADD(15) RASPC_MADD(16) RASPC_MADD(17) RASPC_MADD(18) RASPC_MADD(19) RASPC_MADD(20) RASPC_MADD(21)
      RASPC_MADD(22) RASPC_MADD(23)
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(turns)
      :
      : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23",
        "xmm30", "xmm31");
#undef RASPC_MADD
#undef RASPC_ZERO
}
#endif

// GFLOP/s of the kernel's vector multiply-adds on this core now (about `seconds` of CPU time), or 0
// where there is no fused multiply-add to time (the generic kernel).
inline double madd_peak_gflops(GemmIsa isa, double seconds) {
#if defined(__x86_64__)
  if (isa == GemmIsa::Generic) return 0;
  const bool wide = isa == GemmIsa::Avx512;
  const long turns = 1 << 20;
  const double flops_per_turn = 24.0 * 2 * (wide ? 16 : 8);
  long done = 0;
  const double start = thread_cpu_seconds();
  double spent = 0;
  do {
    if (wide)
      madd_turns_avx512(turns);
    else
      madd_turns_avx2(turns);
    done += turns;
  } while ((spent = thread_cpu_seconds() - start) < seconds);
  return flops_per_turn * double(done) / spent * 1e-9;
#else
  (void)isa;
  (void)seconds;
  return 0;
#endif
}

}  // namespace raspc::bench
