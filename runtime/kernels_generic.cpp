// The kernels (runtime/kernel_table.hpp) for any CPU, with the build's own flags: 4-lane vectors of GCC's vector
// extension (SSE2 on any x86-64, NEON on ARM), 4 rows x 2 packets of accumulators. The multiply
// and the add are rounded apart (compiled with -ffp-contract=off, runtime/kernels.cmake).
#include <cstring>

namespace raspc {
namespace {
struct Isa {
  typedef float Vec __attribute__((vector_size(16)));
  static constexpr int kLanes = 4, kRows = 4, kPanel = 2, kWideRows = 4, kWidePanel = 2;
  static Vec load(const float* p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
  static Vec zero() { return Vec{0.0f, 0.0f, 0.0f, 0.0f}; }
  static Vec broadcast(float x) { return Vec{x, x, x, x}; }
  static Vec madd(Vec a, Vec b, Vec c) { return a * b + c; }
  // The first n < 4 lanes (the rest zero on loading, untouched on storing).
  static Vec load_partial(const float* p, int n) {
    Vec v = zero();
    std::memcpy(&v, p, sizeof(float) * size_t(n));
    return v;
  }
  static void store_partial(float* p, Vec v, int n) { std::memcpy(p, &v, sizeof(float) * size_t(n)); }
  static Vec max(Vec a, Vec b) { return a > b ? a : b; }
  static Vec min(Vec a, Vec b) { return a < b ? a : b; }
  static Vec sqrt(Vec v) { return Vec{__builtin_sqrtf(v[0]), __builtin_sqrtf(v[1]), __builtin_sqrtf(v[2]), __builtin_sqrtf(v[3])}; }
  // The lanes' sum and maximum, halving: 4 -> 2 -> 1.
  static float sum_lanes(Vec v) { return (v[0] + v[2]) + (v[1] + v[3]); }
  static float max_lanes(Vec v) {
    const float a = v[0] > v[2] ? v[0] : v[2], b = v[1] > v[3] ? v[1] : v[3];
    return a > b ? a : b;
  }
};
}  // namespace
}  // namespace raspc

#define RASPC_KERNEL_TABLE kernels_generic
#include "runtime/gemm_kernel.hpp"
#include "runtime/vector_kernel.hpp"
