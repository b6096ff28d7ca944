// The forward the compiler's verification runs (compiler/verify.cpp): the same logits as the dense
// CPU forward, up to float rounding, at a fraction of its cost on a compiled model.
//
// A compiled model is about 1% nonzero, and the nonzeros sit in blocks: a head's query and key
// read a few one-hot dimensions and use a few of its d_head dimensions; its value carries a few
// more; an MLP unit reads a few dimensions and writes a few. So each product of the forward is
// replaced by the product of its nonzero block: the input's columns that meet a nonzero weight,
// times the weight's rows and columns that hold one, scattered back into the residual stream.
// Attention runs over the head dimensions whose query and key columns (weights or bias) are both
// nonzero, and carries only the value dimensions that the output projection reads. What is left
// out is exactly the terms that are products with a zero weight, so the result differs from the
// dense forward only in the order of its sums (tests/compiler/test_verification_backend.cpp checks
// the logits of every program in programs/ against the dense forward's).
//
// The residual stream stays full width, and so do LayerNorm's row statistics (its mean and
// variance mix every dimension): they cost O(C) a token where the dense products cost O(C^2).
// Each block then normalises only the columns it reads.
//
// The products worth it run a row (a token) at a time, memoised by the exact bits of the row's
// gathered input (runtime/row_memo.hpp): the inputs verification feeds share most of their
// tokens' states (a position, a symbol, the counts a head averaged), so most rows of an MLP or an
// unembedding are looked up rather than computed (96-99.9% for dyck2 at maximum length 16 and
// hist at 64, 74-99.9% for sort at 64). A row's product depends on that row alone (fused
// multiply-adds in a fixed order, no blocking across rows), so a looked-up result is bit for bit
// the one computing it would give, and the forward's result does not depend on what the backend
// (or another thread's backend sharing its memos) saw before. Products too small to
// repay a lookup run over the whole batch at once as Eigen products (which, as the dense
// forward's, depend on the batch only). Attention stays a product per sequence and head, through
// the dense forward's GEMM kernel (runtime/gemm.hpp).
#pragma once

#include <memory>
#include <vector>

#include "runtime/cpu_backend.hpp"

namespace raspc {

namespace verification_plan {
class RowMemo;
}

// The memos of one model's verification forward. A backend makes its own; the backends of the
// threads of one verification share the first one's (VerificationBackend::share_memos), and then
// their forwards may run at once, with prepare() between the rounds, while none runs.
class VerificationMemos {
 public:
  ~VerificationMemos();
  // Room in each memo for `rows` more rows (the tokens of the round's batches, BOS included).
  void prepare(size_t rows);

 private:
  friend class VerificationBackend;
  std::vector<std::unique_ptr<verification_plan::RowMemo>> memos_;  // by layer: q|k|v, projection, MLP; then the unembedding
  bool shared_ = false;  // prepared by whoever shares them, not by each forward
};

class VerificationBackend : public Backend {
 public:
  // `shared`: the memos of another backend of the same model (its share_memos()); none: its own.
  explicit VerificationBackend(const Model& model, std::shared_ptr<VerificationMemos> shared = nullptr);
  ~VerificationBackend() override;
  // With capture_attention or count_flops, runs the dense CPU forward (they are for inspecting a
  // model and for checking runtime/flops.hpp, not for verification).
  ForwardResult forward(const std::vector<std::vector<int>>& batch, const ForwardOptions& options = {}) override;
  std::unique_ptr<Decoder> decoder() override { return dense_.decoder(); }
  // The floating-point operations of this forward on one sequence of `tokens` (BOS included),
  // memos aside (each product computed): the nonzero blocks' products, LayerNorm's statistics
  // over the full width, and attention over the heads' live dimensions. What the compiler's
  // verification estimate counts (compiler/budget.cpp); a compiled model's dense count is 10-100
  // times more.
  double sequence_flops(int tokens) const;
  std::string name() const override { return "cpu"; }
  // This backend's memos, to give other threads' backends of the same model. From this call on,
  // its forward no longer prepares them: the caller does, between rounds.
  std::shared_ptr<VerificationMemos> share_memos();

 private:
  struct Plan;  // the nonzero blocks of every product (verification_backend.cpp)
  const Model& model_;
  CpuBackend dense_;
  // Also the buffers of every activation, reused by the next call: a backend serves one thread at
  // a time, as the dense one does.
  std::unique_ptr<Plan> plan_;
  std::shared_ptr<VerificationMemos> memos_;
};

}  // namespace raspc
