// Runs a check once for every instruction set's kernels this CPU runs (runtime/gemm.hpp: the
// product and runtime/vector_ops.hpp's), saying which one it skips rather than passing silently,
// and restores the choice made before.
#pragma once

#include <catch2/catch.hpp>

#include "runtime/gemm.hpp"

namespace raspc::testing {

template <class Check>
void for_each_kernel(Check check) {
  const GemmIsa before = gemm_isa();
  for (GemmIsa isa : {GemmIsa::Generic, GemmIsa::Avx2, GemmIsa::Avx512}) {
    if (!gemm_isa_supported(isa)) {
      WARN("the " << gemm_isa_name(isa) << " kernels are not checked: this CPU cannot run them");
      continue;
    }
    set_gemm_isa(isa);
    INFO("kernels " << gemm_isa_name(isa));
    check();
  }
  set_gemm_isa(before);
}

}  // namespace raspc::testing
