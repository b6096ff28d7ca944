// The dispatch of runtime/gemm.hpp: which compiled kernels run (runtime/kernel_table.hpp, the
// product's and runtime/vector_ops.hpp's), and the three products over them.
#include "runtime/gemm.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "runtime/kernel_table.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

namespace {
namespace gemm_dispatch {

bool cpu_has(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::Generic:
      return true;
    case GemmIsa::Avx2:
#if defined(__x86_64__) || defined(_M_X64)
      // libgcc's check includes the operating system's saving of the wider registers (XCR0).
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
      return false;
#endif
    case GemmIsa::Avx512:
#if defined(__x86_64__) || defined(_M_X64)
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
      return false;
#endif
  }
  return false;
}

const kernel_detail::KernelTable& kernels_of(GemmIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (isa == GemmIsa::Avx512) return kernel_detail::kernels_avx512;
  if (isa == GemmIsa::Avx2) return kernel_detail::kernels_avx2;
#else
  (void)isa;
#endif
  return kernel_detail::kernels_generic;
}

// RASPC_MAX_ISA's cap; Avx512 (no cap) when it is unset or not one of the names.
GemmIsa cap_from_environment() {
  const char* text = std::getenv("RASPC_MAX_ISA");
  if (!text || !*text) return GemmIsa::Avx512;
  for (GemmIsa isa : {GemmIsa::Avx512, GemmIsa::Avx2, GemmIsa::Generic})
    if (std::string(text) == gemm_isa_name(isa)) return isa;
  // The first product may run on a worker thread, where an exception would end the process: the
  // command line refuses the value up front (gemm_environment_problem); a library user is told once.
  std::fprintf(stderr, "warning: %s; it is ignored.\n", gemm_environment_problem().c_str());
  return GemmIsa::Avx512;
}

GemmIsa best_isa() {
  const GemmIsa cap = cap_from_environment();
  for (GemmIsa isa : {GemmIsa::Avx512, GemmIsa::Avx2})
    if (int(isa) <= int(cap) && cpu_has(isa)) return isa;
  return GemmIsa::Generic;
}

// The kernel in use: set_gemm_isa's choice (an atomic: it may change while other threads read it),
// else the best one, chosen once at the first product.
std::atomic<int> chosen{-1};

GemmIsa current() {
  const int isa = chosen.load(std::memory_order_relaxed);
  if (isa >= 0) return GemmIsa(isa);
  static const GemmIsa best = best_isa();
  return best;
}

// to (cols, rows) = from (rows, cols)^T, from's rows ld apart, into a buffer of the calling
// thread's that only grows. An exact copy: the product after it is the kernel's on any layout.
const float* transposed(const float* from, int rows, int cols, int ld) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  thread_local std::vector<float> buffer;
  if (buffer.size() < size_t(rows) * cols) buffer.resize(size_t(rows) * cols);
  Eigen::Map<RowMajor>(buffer.data(), cols, rows) =
      Eigen::Map<const RowMajor, 0, Eigen::OuterStride<>>(from, rows, cols, Eigen::OuterStride<>(ld)).transpose();
  return buffer.data();
}

}  // namespace gemm_dispatch
}  // namespace

const char* gemm_isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::Avx512:
      return "avx512";
    case GemmIsa::Avx2:
      return "avx2";
    case GemmIsa::Generic:
      break;
  }
  return "generic";
}

std::string gemm_environment_problem() {
  const char* text = std::getenv("RASPC_MAX_ISA");
  if (!text || !*text) return "";
  for (GemmIsa isa : {GemmIsa::Avx512, GemmIsa::Avx2, GemmIsa::Generic})
    if (std::string(text) == gemm_isa_name(isa)) return "";
  return std::string("RASPC_MAX_ISA is '") + text + "', which is not one of avx512, avx2 or generic";
}

const kernel_detail::KernelTable& kernel_detail::kernels() { return gemm_dispatch::kernels_of(gemm_isa()); }

bool gemm_isa_supported(GemmIsa isa) { return gemm_dispatch::cpu_has(isa); }

GemmIsa gemm_isa() { return gemm_dispatch::current(); }

void set_gemm_isa(GemmIsa isa) {
  if (!gemm_isa_supported(isa))
    throw UserError(std::string("error: this CPU cannot run the ") + gemm_isa_name(isa) + " kernel.");
  gemm_dispatch::chosen.store(int(isa), std::memory_order_relaxed);
}

void gemm_nn(float* out, const float* a, const float* b, int N, int K, int M, bool accumulate, const float* bias) {
  kernel_detail::kernels().product(out, M, a, K, 1, b, M, N, K, M, accumulate, bias);
}

void gemm_nt(float* out, const float* d, const float* w, int N, int M, int K) {
  gemm_strided_nt(out, K, d, M, w, M, N, M, K);
}

void gemm_tn(float* out, const float* a, const float* d, int N, int K, int M) {
  kernel_detail::kernels().product(out, M, a, 1, K, d, M, K, N, M, true, nullptr);
}

void gemm_strided(float* out, int ldo, const float* a, int lda, const float* b, int ldb, int N, int K, int M,
                  bool accumulate) {
  kernel_detail::kernels().product(out, ldo, a, lda, 1, b, ldb, N, K, M, accumulate, nullptr);
}

void gemm_strided_nt(float* out, int ldo, const float* a, int lda, const float* b, int ldb, int N, int K, int M) {
  kernel_detail::kernels().product(out, ldo, a, lda, 1, gemm_dispatch::transposed(b, M, K, ldb), M, N, K, M, false,
                                   nullptr);
}

void gemm_strided_tn(float* out, int ldo, const float* a, int lda, const float* b, int ldb, int N, int K, int M,
                     bool accumulate) {
  kernel_detail::kernels().product(out, ldo, a, 1, lda, b, ldb, N, K, M, accumulate, nullptr);
}

}  // namespace raspc
