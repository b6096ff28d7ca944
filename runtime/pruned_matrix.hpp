// A weight matrix held sparse when few enough of its entries are nonzero, shared by the CPU
// backend's pruned forward and the verification forward (runtime/verification_backend.*).
#pragma once

#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "runtime/cpu_backend.hpp"

namespace raspc {

// A weight matrix (rows, cols), row-major, held sparse when few enough of its entries are nonzero
// for Eigen's dense-by-sparse product to beat its GEMM: at 1-3% nonzeros it took 0.2-0.7 of the
// GEMM's time (B*T = 8320 rows, 143..4352 columns), at 14% 2.5 times as long.
struct PrunedMatrix {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using SparseRows = Eigen::SparseMatrix<float, Eigen::RowMajor>;

  const float* dense = nullptr;  // the values when they live outside (set), else storage's
  std::vector<float> storage;    // the values when they are a gathered copy (set_copy)
  SparseRows sparse;
  bool is_sparse = false;

  void set(const float* values, int rows, int cols) {
    dense = values;
    size_t nonzero = 0;
    for (size_t i = 0; i < size_t(rows) * cols; ++i) nonzero += values[i] != 0.0f;
    is_sparse = double(nonzero) <= 0.04 * double(rows) * cols;
    if (is_sparse) sparse = Eigen::Map<const RowMatrix>(values, rows, cols).sparseView();
  }
  void set_copy(std::vector<float> values, int rows, int cols) {
    storage = std::move(values);
    set(storage.data(), rows, cols);
    dense = nullptr;  // storage.data(), looked up at each use: a copy of this matrix has its own
  }
  const float* values() const { return dense ? dense : storage.data(); }
  // out (N,cols) = in (N,rows) . this + bias (cols); bias may be null.
  void multiply(float* out, const float* in, const float* bias, int N, int rows, int cols) const {
    if (!is_sparse) {
      matmul_forward(out, in, values(), bias, N, rows, cols);
      return;
    }
    Eigen::Map<RowMatrix> y(out, N, cols);
    y.noalias() = Eigen::Map<const RowMatrix>(in, N, rows) * sparse;
    if (bias) y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias, cols);
  }
};

}  // namespace raspc
