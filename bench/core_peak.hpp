// The core's multiply-add peak for the GEMM kernel in use: a loop of independent vector
// multiply-adds on registers (no loads, no stores), so the benches can say what fraction of it a
// product reaches. The machines these benches run on change their clock between runs (the same
// 2-core Intel Xeon measured 109 and 132 GFLOP/s with AVX2 an hour apart), and a ratio to a peer is
// only read right beside the peak it ran at.
#pragma once

#include "bench/thread_clock.hpp"
#include "runtime/gemm.hpp"

namespace raspc::bench {

#if defined(__x86_64__)
// 24 multiply-adds a turn into 12 accumulators: more independent chains than the two FMA ports
// times their latency of 4 keep busy, so the loop runs at the ports' rate. All registers start at
// zero (a stale denormal would make every multiply-add a microcode assist) and the loop is the
// assembly's own, so nothing but the multiply-adds and the count runs. REG is ymm or zmm, ZERO the
// instruction that clears one.
#define RASPC_ZERO(REG, ZERO, r) ZERO " %%" REG #r ", %%" REG #r ", %%" REG #r "\n\t"
#define RASPC_MADD(REG, r) "vfmadd231ps %%" REG "14, %%" REG "15, %%" REG #r "\n\t"
#define RASPC_TWELVE(M, ...) \
  M(__VA_ARGS__, 0) M(__VA_ARGS__, 1) M(__VA_ARGS__, 2) M(__VA_ARGS__, 3) M(__VA_ARGS__, 4) M(__VA_ARGS__, 5) \
  M(__VA_ARGS__, 6) M(__VA_ARGS__, 7) M(__VA_ARGS__, 8) M(__VA_ARGS__, 9) M(__VA_ARGS__, 10) M(__VA_ARGS__, 11)
#define RASPC_MADD_TURNS(REG, ZERO, turns)                                                                       \
  __asm__ volatile(RASPC_TWELVE(RASPC_ZERO, REG, ZERO) RASPC_ZERO(REG, ZERO, 14) RASPC_ZERO(REG, ZERO, 15) "1:\n\t" \
                   RASPC_TWELVE(RASPC_MADD, REG) RASPC_TWELVE(RASPC_MADD, REG) "dec %0\n\t"                      \
                   "jnz 1b\n\t"                                                                                  \
                   "vzeroupper\n\t"                                                                              \
                   : "+r"(turns)                                                                                 \
                   :                                                                                             \
                   : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",  \
                     "xmm11", "xmm14", "xmm15")
__attribute__((target("avx2,fma"))) inline void madd_turns_avx2(long turns) { RASPC_MADD_TURNS("ymm", "vxorps", turns); }
__attribute__((target("avx512f"))) inline void madd_turns_avx512(long turns) {
  RASPC_MADD_TURNS("zmm", "vpxord", turns);
}
#undef RASPC_MADD_TURNS
#undef RASPC_TWELVE
#undef RASPC_MADD
#undef RASPC_ZERO
#endif

// GFLOP/s of the kernel's vector multiply-adds on this core now (about `seconds` of CPU time), or 0
// where there is no fused multiply-add to time (the generic kernel).
inline double madd_peak_gflops(GemmIsa isa, double seconds) {
#if defined(__x86_64__)
  if (isa == GemmIsa::Generic) return 0;
  const bool wide = isa == GemmIsa::Avx512;
  const long turns = 1 << 20;
  const double flops_per_turn = 24.0 * 2 * (wide ? 16 : 8);  // 24 multiply-adds of 8 or 16 lanes
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
