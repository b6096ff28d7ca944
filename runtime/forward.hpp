// Running a model: the one interface over the CPU and CUDA backends, and the one dispatch point
// that chooses between them. No CUDA types here, so all of raspc builds without CUDA.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/model.hpp"

namespace raspc {

enum class Device { Cpu, Cuda };
Device parse_device(const std::string& name);  // "cpu" | "cuda"; anything else is a UserError

// Edits of a forward's activations, at the places TransformerLens users hook (raspc patch,
// verify-interventions, Python's Model.patch): applied to every sequence of the batch, at every
// position below its length. CPU only: the CUDA backend refuses them (a UserError).
struct ResidualPatch {  // the residual stream after `stage` (stage_name: blocks.L.hook_resid_*)
  int stage = 0;
  std::vector<int> dims;
  // (T, dims.size()) [position][k]: dims[k] set to it in every sequence; with per_sequence,
  // (B, T, dims.size()), one table a sequence of the batch (T the batch's padded length).
  std::vector<float> values;
  bool per_sequence = false;
};
enum class HeadEdit {
  Zero,     // blocks.L.attn.hook_z[:, :, head] = 0
  Replace,  // hook_z[:, :, head] = values (T, d_head): a mean ablation's means
  Bos,      // the head attends to BOS alone (position 0) at every query: hook_z = BOS's value
};
struct HeadPatch {
  int layer = 0, head = 0;
  HeadEdit edit = HeadEdit::Zero;
  std::vector<float> values;  // Replace: (T, d_head)
};
struct MlpPatch {  // blocks.L.hook_mlp_out, the MLP's output with c_proj's bias
  int layer = 0;
  std::vector<float> values;  // (T, C); empty: zero
};
struct Interventions {
  std::vector<ResidualPatch> residual;
  std::vector<HeadPatch> heads;
  std::vector<MlpPatch> mlps;
  bool empty() const { return residual.empty() && heads.empty() && mlps.empty(); }
};

struct ForwardOptions {
  bool capture_residual = false;   // the residual stream after every sub-layer
  bool capture_attention = false;  // every head's attention pattern
  // Every head's scores before the softmax (q.k / sqrt(d_head)), masked keys -infinity: what
  // Tracr's models return as attn_logits. CPU only: the CUDA backend refuses it (a UserError).
  bool capture_scores = false;
  bool capture_final = false;  // the stream the unembedding reads (after ln_f where there is one)
  // The stream before ln_f alone (capture_residual's last stage, blocks.{L-1}.hook_resid_post),
  // where a numerical output is read: what verification needs, at a (2L+1)-th of the copying.
  bool capture_last_resid = false;
  // CPU only: count the floating-point operations the forward performs (ForwardResult::flops),
  // to check the analytic count of runtime/flops.hpp. Padded positions cost as much as real ones.
  bool count_flops = false;
  // CPU only: every head's output before W_O (ForwardResult::z) and every MLP's output
  // (ForwardResult::mlp_out), what a mean ablation averages.
  bool capture_outputs = false;
  const Interventions* interventions = nullptr;  // CPU only; null or empty: none
};

// Results for a batch of B sequences padded to T = the longest length. Padded positions are
// masked out of attention and their outputs are zero.
struct ForwardResult {
  int batch = 0, time = 0, vocab = 0, n_embd = 0, n_layer = 0, n_head = 0;
  std::vector<int> lengths;      // (B)
  std::vector<float> logits;     // (B,T,V)
  // (B, 2L+1, T, C): index 0 the embeddings, 2l+1 after layer l's attention, 2l+2 after its MLP
  // (the stream before ln_f). Empty unless capture_residual.
  std::vector<float> residual;
  std::vector<float> attention;  // (B,L,H,T,T) [query][key]; empty unless capture_attention
  std::vector<float> scores;     // (B,L,H,T,T) [query][key]; empty unless capture_scores
  std::vector<float> final;      // (B,T,C); empty unless capture_final
  std::vector<float> last_resid; // (B,T,C); empty unless capture_last_resid
  // (B,L,T,C): blocks.l.attn.hook_z, heads side by side (d_head columns each); empty unless
  // capture_outputs.
  std::vector<float> z;
  std::vector<float> mlp_out;    // (B,L,T,C): blocks.l.hook_mlp_out; empty unless capture_outputs
  double flops = 0;              // with ForwardOptions::count_flops (CPU), else 0

  const float* logits_at(int b, int t) const { return logits.data() + (size_t(b) * time + t) * vocab; }
  const float* last_resid_at(int b, int t) const { return last_resid.data() + (size_t(b) * time + t) * n_embd; }
  const float* residual_at(int b, int stage, int t) const {
    return residual.data() + ((size_t(b) * (2 * n_layer + 1) + stage) * time + t) * n_embd;
  }
};

// Incremental decoding with a KV cache: feed one token at a time, get the logits for that
// position. Allocates at construction only. Only causal models have one (a bidirectional model's
// earlier positions change when a token is appended): Backend::decoder() on a bidirectional
// model is a UserError.
class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void reset() = 0;
  // Appends one token; returns the logits (V) at its position, valid until the next call.
  // More than n_positions tokens is a UserError.
  virtual const float* step(int token) = 0;
  virtual int position() const = 0;  // tokens fed so far
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual ForwardResult forward(const std::vector<std::vector<int>>& batch, const ForwardOptions& options = {}) = 0;
  virtual std::unique_ptr<Decoder> decoder() = 0;
  virtual std::string name() const = 0;
};

// Where every backend's forward starts: checks the batch against the model (token ids inside the
// vocabulary, no sequence longer than n_positions; UserErrors otherwise) and returns a result with
// its shape fields and lengths set and nothing computed yet.
ForwardResult begin_forward(const ModelConfig& config, const std::vector<std::vector<int>>& batch);
// A token id outside the vocabulary is a UserError (the decoders check each token they are fed).
void check_token(const ModelConfig& config, int token);

// The dispatch point. The model must outlive the backend. Device::Cuda in a build without CUDA,
// or on a machine without a GPU, is a UserError saying which. The CPU backend splits a batch's
// sequences over `threads` threads (0: every core) with the same bits for every count.
std::unique_ptr<Backend> make_backend(const Model& model, Device device = Device::Cpu, int threads = 0);

// Greedy generation: appends `count` tokens to `prompt` (token ids, without BOS), each the argmax
// of the logits over metadata["output"]["token_ids"] when the model lists them, else over the
// non-BOS tokens, and returns the appended ones. The context is BOS (when
// the model has one) plus the tokens so far; once it would exceed n_positions it keeps the last
// tokens that fit, and the window is recomputed from scratch each step (as the (aab)* post does
// with its 5 positions). Uses the backend's Decoder (KV cache) while the context grows.
std::vector<int> generate_greedy(Backend& backend, const Model& model, const std::vector<int>& prompt, int count);

}  // namespace raspc
