// An llm.c folder: model.bin, the version-3 checkpoint train_gpt2.c loads
// (gpt2_build_from_checkpoint), tokenizer.bin in llm.c's tokenizer format (version 2, BOS as its
// end-of-text token), and raspc.json with raspc's metadata, since llm.c's header has no slot for it.
//
// model.bin: 256 int32 (magic 20240326, version 3, maxT, V, L, NH, C, Vp, zeros), then float32
// tensors grouped by kind across layers: wte (Vp,C), wpe (maxT,C), ln1w (L,C), ln1b (L,C),
// qkvw (L,3C,C), qkvb (L,3C), attprojw (L,C,C), attprojb (L,C), ln2w (L,C), ln2b (L,C),
// fcw (L,4C,C), fcb (L,4C), fcprojw (L,C,4C), fcprojb (L,C), lnfw (C), lnfb (C). Matrices are
// PyTorch Linear's (out, in), the transpose of raspc's Conv1D layout. The vocabulary is padded
// with zero rows to a multiple of 128 (llm.c's Vp), and the MLP with zero units to exactly 4C,
// both exact: a zero row is never an input token and its logit is ignored by llm.c's sampler
// (it reads only the first V), a zero unit adds GELU(0) * 0 = 0.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/export/export.hpp"
#include "support/atomic_file.hpp"

namespace raspc {

namespace {

constexpr int32_t kLlmcModelMagic = 20240326, kLlmcModelVersion = 3;
constexpr uint32_t kLlmcTokenizerMagic = 20240328, kLlmcTokenizerVersion = 2;

void append_floats(std::string& out, const float* v, size_t n) {
  out.append(reinterpret_cast<const char*>(v), n * sizeof(float));
}
void append_floats(std::string& out, const std::vector<float>& v) { append_floats(out, v.data(), v.size()); }

}  // namespace

int llmc_padded_vocab(int vocab_size) { return (vocab_size + 127) / 128 * 128; }

void write_llmc_export(const Model& input, const std::string& folder) {
  const Model model = input.config.n_inner == 4 * input.config.n_embd ? input
                                                                      : with_mlp_width(input, 4 * input.config.n_embd);
  const ModelConfig& c = model.config;
  const size_t C = c.n_embd, V = c.vocab_size, Vp = llmc_padded_vocab(c.vocab_size), P = c.n_positions;
  const size_t I = 4 * C;

  std::vector<int32_t> header(256, 0);
  header[0] = kLlmcModelMagic;
  header[1] = kLlmcModelVersion;
  header[2] = int32_t(P);
  header[3] = int32_t(V);
  header[4] = c.n_layer;
  header[5] = c.n_head;
  header[6] = int32_t(C);
  header[7] = int32_t(Vp);
  std::string bin(reinterpret_cast<const char*>(header.data()), header.size() * sizeof(int32_t));
  append_floats(bin, model.w.wte, V * C);
  append_floats(bin, std::vector<float>((Vp - V) * C, 0.0f));
  append_floats(bin, model.w.wpe, P * C);
  // Each kind of tensor for every layer in turn.
  auto each_layer = [&](auto&& append) {
    for (const LayerWeights& L : model.w.layers) append(L);
  };
  each_layer([&](const LayerWeights& L) { append_floats(bin, L.ln_1_w, C); });
  each_layer([&](const LayerWeights& L) { append_floats(bin, L.ln_1_b, C); });
  each_layer([&](const LayerWeights& L) { append_floats(bin, transposed(L.attn_w, C, 3 * C)); });
  each_layer([&](const LayerWeights& L) { append_floats(bin, L.attn_b, 3 * C); });
  each_layer([&](const LayerWeights& L) { append_floats(bin, transposed(L.attn_proj_w, C, C)); });
  each_layer([&](const LayerWeights& L) { append_floats(bin, L.attn_proj_b, C); });
  each_layer([&](const LayerWeights& L) { append_floats(bin, L.ln_2_w, C); });
  each_layer([&](const LayerWeights& L) { append_floats(bin, L.ln_2_b, C); });
  each_layer([&](const LayerWeights& L) { append_floats(bin, transposed(L.fc_w, C, I)); });
  each_layer([&](const LayerWeights& L) { append_floats(bin, L.fc_b, I); });
  each_layer([&](const LayerWeights& L) { append_floats(bin, transposed(L.fc_proj_w, I, C)); });
  each_layer([&](const LayerWeights& L) { append_floats(bin, L.fc_proj_b, C); });
  append_floats(bin, model.w.ln_f_w, C);
  append_floats(bin, model.w.ln_f_b, C);

  std::vector<uint32_t> tokenizer_header(256, 0);
  tokenizer_header[0] = kLlmcTokenizerMagic;
  tokenizer_header[1] = kLlmcTokenizerVersion;
  tokenizer_header[2] = uint32_t(V);
  tokenizer_header[3] = uint32_t(model.bos_id >= 0 ? model.bos_id : 0);
  std::string tokenizer(reinterpret_cast<const char*>(tokenizer_header.data()), 256 * sizeof(uint32_t));
  for (const std::string& token : model.vocab) {  // lengths checked by export_refusal
    tokenizer += char(uint8_t(token.size()));
    tokenizer += token;
  }

  nlohmann::json sidecar = export_metadata(input);
  sidecar["llmc"] = {{"model", "model.bin"}, {"tokenizer", "tokenizer.bin"}, {"padded_vocab_size", Vp},
                     {"mlp_units_padded_to", I}};
  write_file_atomically(join_path(folder, "model.bin"), bin);
  write_file_atomically(join_path(folder, "tokenizer.bin"), tokenizer);
  write_file_atomically(join_path(folder, "raspc.json"), sidecar.dump(2) + "\n");
}

}  // namespace raspc
