// Helpers of the CPU/CUDA parity tests.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/model.hpp"

namespace raspc::testing {

// The CPU (Eigen, loops) and CUDA (cuBLAS, shuffle-tree reductions) forwards round the same float32
// operations but sum in different orders, so they differ by a few units in the last place of the
// largest terms of each sum, accumulated over at most a few thousand terms and a few layers: the
// error scales with the tensor's magnitude, not each element's (a logit near zero is a difference
// of large terms). 1e-5 of the largest magnitude (at least 1) is far above that rounding noise and
// far below any real difference (a wrong mask, head or bias moves values by 1e-2 or more).
constexpr double kParityTolerance = 1e-5;

inline void require_close(const std::vector<float>& cuda, const std::vector<float>& cpu, const std::string& what) {
  INFO(what);
  REQUIRE(cuda.size() == cpu.size());
  double scale = 1.0;
  for (float value : cpu) scale = std::max(scale, double(std::fabs(value)));
  double worst = 0.0;
  size_t worst_at = 0, non_finite = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (!std::isfinite(cuda[i])) ++non_finite;
    double difference = std::fabs(double(cuda[i]) - double(cpu[i]));
    if (difference > worst) {
      worst = difference;
      worst_at = i;
    }
  }
  INFO("worst at element " << worst_at << " of " << cpu.size() << ": cuda " << (cpu.empty() ? 0.0f : cuda[worst_at])
                           << ", cpu " << (cpu.empty() ? 0.0f : cpu[worst_at]) << ", scale " << scale);
  CHECK(non_finite == 0);
  CHECK(worst <= kParityTolerance * scale);
}

}  // namespace raspc::testing
