// The float products raspc runs, through each candidate library and raspc's own kernel, one thread:
// what chose runtime/gemm.hpp's implementation (issue "Performance on every CPU").
//   gemm_candidates [SECONDS_PER_FIGURE]        (bench/gemm_candidates.sh runs it, and its AVX2 row)
//
// Every product is out (N,M) = a (N,K) . b (K,M), row-major, float, single thread, operands warm in
// cache (each figure repeats one product). The shapes are the ones raspc multiplies: the batched
// forward of the d64 reference model (64 sequences x 16 tokens = 1,024 rows), verification rounds
// of 544 rows through a compiled model's blocks (dyck3 at 16: n_embd 97, MLP 1,780), one decode
// step (1 row), and 512^3 (the peer comparison's square product).
//
// OpenBLAS, BLIS and oneDNN are opened at run time (dlopen, each with its own symbols: OpenBLAS and
// BLIS both define cblas_sgemm), libxsmm is linked when CMake found it (Debian ships it static).
// A library that is not installed is said and skipped. Install them all with
//   apt-get install libopenblas0-pthread libblis4-openmp libdnnl2 libxsmm-dev
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "bench/thread_clock.hpp"
#include "runtime/gemm.hpp"

#ifdef RASPC_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

namespace {

struct Shape {
  const char* what;
  int N, K, M;
};
const Shape kShapes[] = {
    {"forward qkv", 1024, 64, 192},   {"forward proj", 1024, 64, 64},   {"forward fc", 1024, 64, 256},
    {"forward fc_proj", 1024, 256, 64}, {"verify qkv", 544, 97, 291},   {"verify fc", 544, 97, 1780},
    {"verify fc_proj", 544, 1780, 97},  {"decode qkv", 1, 64, 192},      {"decode fc", 1, 64, 256},
    {"square", 512, 512, 512},
};

// One candidate: sets up for a shape (a JIT compiles its kernel here) and returns the product.
using Product = std::function<void(float* out, const float* a, const float* b)>;
using Prepare = std::function<Product(const Shape&)>;

// cblas_sgemm, row-major, no transposes, beta 0.
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                            int);
Prepare cblas_candidate(CblasSgemm sgemm) {
  return [sgemm](const Shape& s) -> Product {
    return [sgemm, s](float* out, const float* a, const float* b) {
      sgemm(101 /*RowMajor*/, 111 /*NoTrans*/, 111, s.N, s.M, s.K, 1.0f, a, s.K, b, s.M, 0.0f, out, s.M);
    };
  };
}

// dnnl_sgemm: row-major by definition.
using DnnlSgemm = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                          float, float*, int64_t);

void* open_library(const char* file) { return dlopen(file, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND); }

}  // namespace

int main(int argc, char** argv) {
  const double budget = argc > 1 ? std::atof(argv[1]) : 0.5;
  // One thread in every library (set before any is opened: OpenMP and OpenBLAS read them at load).
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  setenv("BLIS_NUM_THREADS", "1", 1);
  Eigen::setNbThreads(1);

  std::vector<std::pair<std::string, Prepare>> candidates;
  candidates.push_back({std::string("raspc ") + raspc::gemm_isa_name(raspc::gemm_isa()), [](const Shape& s) -> Product {
                          return [s](float* out, const float* a, const float* b) {
                            raspc::gemm_nn(out, a, b, s.N, s.K, s.M, false);
                          };
                        }});
  candidates.push_back({"Eigen", [](const Shape& s) -> Product {
                          using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
                          return [s](float* out, const float* a, const float* b) {
                            Eigen::Map<RowMatrix>(out, s.N, s.M).noalias() =
                                Eigen::Map<const RowMatrix>(a, s.N, s.K) * Eigen::Map<const RowMatrix>(b, s.K, s.M);
                          };
                        }});
  std::vector<std::string> missing;
  if (void* lib = open_library("libopenblas.so.0"))
    candidates.push_back({"OpenBLAS", cblas_candidate(CblasSgemm(dlsym(lib, "cblas_sgemm")))});
  else
    missing.push_back("OpenBLAS (libopenblas0)");
  if (void* lib = open_library("libblis.so.4"))
    candidates.push_back({"BLIS", cblas_candidate(CblasSgemm(dlsym(lib, "cblas_sgemm")))});
  else
    missing.push_back("BLIS (libblis4)");
  if (void* lib = open_library("libdnnl.so.2")) {
    const auto sgemm = DnnlSgemm(dlsym(lib, "dnnl_sgemm"));
    candidates.push_back({"oneDNN", [sgemm](const Shape& s) -> Product {
                            return [sgemm, s](float* out, const float* a, const float* b) {
                              sgemm('N', 'N', s.N, s.M, s.K, 1.0f, a, s.K, b, s.M, 0.0f, out, s.M);
                            };
                          }});
  } else {
    missing.push_back("oneDNN (libdnnl2)");
  }
#ifdef RASPC_HAVE_LIBXSMM
  libxsmm_init();
  // libxsmm's JIT kernels are column-major: out^T (M,N) = b^T (M,K) . a^T (K,N), over tiles of at
  // most 64 columns by 64 rows of out (its kernels are made for small tiles; the tile sizes that
  // measured best here), each tile a kernel call with the whole K.
  candidates.push_back({"libxsmm", [](const Shape& s) -> Product {
                          constexpr int kTileM = 64, kTileN = 64;
                          auto kernel = [&](int m, int n) {
                            const float alpha = 1.0f, beta = 0.0f;
                            return libxsmm_smmdispatch(m, n, s.K, &s.M, &s.K, &s.M, &alpha, &beta, nullptr, nullptr);
                          };
                          const int m_tile = s.M < kTileM ? s.M : kTileM, n_tile = s.N < kTileN ? s.N : kTileN;
                          const libxsmm_smmfunction whole = kernel(m_tile, n_tile);
                          const libxsmm_smmfunction m_rest = s.M % m_tile ? kernel(s.M % m_tile, n_tile) : nullptr;
                          const libxsmm_smmfunction n_rest = s.N % n_tile ? kernel(m_tile, s.N % n_tile) : nullptr;
                          const libxsmm_smmfunction both_rest =
                              s.M % m_tile && s.N % n_tile ? kernel(s.M % m_tile, s.N % n_tile) : nullptr;
                          if (!whole) return nullptr;
                          return [=](float* out, const float* a, const float* b) {
                            for (int n = 0; n < s.N; n += n_tile)
                              for (int m = 0; m < s.M; m += m_tile) {
                                const bool last_m = m + m_tile > s.M, last_n = n + n_tile > s.N;
                                const libxsmm_smmfunction f =
                                    last_m ? (last_n ? both_rest : m_rest) : (last_n ? n_rest : whole);
                                f(b + m, a + size_t(n) * s.K, out + size_t(n) * s.M + m);
                              }
                          };
                        }});
#else
  missing.push_back("libxsmm (libxsmm-dev, at build time)");
#endif

  std::printf("gemm_candidates: one thread, %.1f s of CPU time a figure; GFLOP/s (2NKM a product)\n", budget);
  for (const std::string& name : missing) std::printf("not installed: %s\n", name.c_str());
  std::printf("%-16s %5s %5s %5s", "shape", "N", "K", "M");
  for (const auto& [name, prepare] : candidates) std::printf(" %14s", name.c_str());
  std::printf("\n");

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  float sink = 0;
  for (const Shape& s : kShapes) {
    std::vector<float> a(size_t(s.N) * s.K), b(size_t(s.K) * s.M), out(size_t(s.N) * s.M), reference(out.size());
    for (float& x : a) x = u(rng);
    for (float& x : b) x = u(rng);
    raspc::gemm_nn(reference.data(), a.data(), b.data(), s.N, s.K, s.M, false);
    std::printf("%-16s %5d %5d %5d", s.what, s.N, s.K, s.M);
    for (const auto& [name, prepare] : candidates) {
      const Product product = prepare(s);
      if (!product) {
        std::printf(" %14s", "no kernel");
        continue;
      }
      product(out.data(), a.data(), b.data());
      // A candidate that computes something else is no candidate: within float rounding of ours.
      double worst = 0;
      for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, double(std::abs(out[i] - reference[i])));
      if (worst > 1e-3 * s.K) {
        std::printf(" %14s", "WRONG");
        continue;
      }
      long reps = 0;
      const double start = raspc::bench::thread_cpu_seconds();
      double used = 0;
      while ((used = raspc::bench::thread_cpu_seconds() - start) < budget) {
        product(out.data(), a.data(), b.data());
        sink += out[0];
        ++reps;
      }
      std::printf(" %14.1f", 2.0 * s.N * s.K * s.M * reps / used * 1e-9);
    }
    std::printf("\n");
  }
  return sink == 12345.0f ? 1 : 0;
}
